package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// File is a parsed GGUF file: its metadata, tensor descriptions, and where
// the data section starts.
type File struct {
	Version    uint32
	KV         []KV
	Tensors    []TensorInfo
	Alignment  int64
	DataOffset int64

	r io.ReaderAt
}

// Value returns the metadata value of key.
func (f *File) Value(key string) (any, bool) {
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// ReadTensor returns the raw bytes of the named tensor.
func (f *File) ReadTensor(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor %q", name)
	}
	n, _ := t.Bytes()
	buf := make([]byte, n)
	if _, err := f.r.ReadAt(buf, f.DataOffset+int64(t.Offset)); err != nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return buf, nil
}

// reader reads GGUF primitives, never beyond the file's size.
type reader struct {
	r    *bufio.Reader
	off  int64
	size int64
}

var errShort = errors.New("unexpected end of file")

func (r *reader) take(n int64) ([]byte, error) {
	if n < 0 || n > r.size-r.off {
		return nil, errShort
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, err
	}
	r.off += n
	return b, nil
}

func (r *reader) u32() (uint32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64() (uint64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.size-r.off) {
		return "", fmt.Errorf("string of %d bytes exceeds the file", n)
	}
	b, err := r.take(int64(n))
	return string(b), err
}

// scalarSize is the encoded width of the fixed-size value types.
func scalarSize(t ValueType) int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

func (r *reader) value(t ValueType, depth int) (any, error) {
	if t == TypeString {
		return r.str()
	}
	if t == TypeArray {
		if depth > 2 {
			return nil, errors.New("arrays nested too deeply")
		}
		et, err := r.u32()
		if err != nil {
			return nil, err
		}
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		// Every element takes at least one byte (a string its 8-byte length).
		minSize := max(scalarSize(ValueType(et)), 1)
		if ValueType(et) == TypeString || ValueType(et) == TypeArray {
			minSize = 8
		}
		if n > uint64((r.size-r.off)/minSize) {
			return nil, fmt.Errorf("array of %d elements exceeds the file", n)
		}
		return r.array(ValueType(et), int(n), depth)
	}
	size := scalarSize(t)
	if size == 0 {
		return nil, fmt.Errorf("unknown value type %d", t)
	}
	b, err := r.take(size)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeBool:
		if b[0] > 1 {
			return nil, fmt.Errorf("bool value %d", b[0])
		}
		return b[0] == 1, nil
	case TypeUint16:
		return le.Uint16(b), nil
	case TypeInt16:
		return int16(le.Uint16(b)), nil
	case TypeUint32:
		return le.Uint32(b), nil
	case TypeInt32:
		return int32(le.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case TypeUint64:
		return le.Uint64(b), nil
	case TypeInt64:
		return int64(le.Uint64(b)), nil
	}
	return math.Float64frombits(le.Uint64(b)), nil
}

// array reads n elements of type t into a typed slice ([]any for arrays of
// arrays).
func (r *reader) array(t ValueType, n, depth int) (any, error) {
	switch t {
	case TypeUint8:
		return readTyped[uint8](r, t, n, depth)
	case TypeInt8:
		return readTyped[int8](r, t, n, depth)
	case TypeUint16:
		return readTyped[uint16](r, t, n, depth)
	case TypeInt16:
		return readTyped[int16](r, t, n, depth)
	case TypeUint32:
		return readTyped[uint32](r, t, n, depth)
	case TypeInt32:
		return readTyped[int32](r, t, n, depth)
	case TypeFloat32:
		return readTyped[float32](r, t, n, depth)
	case TypeBool:
		return readTyped[bool](r, t, n, depth)
	case TypeString:
		return readTyped[string](r, t, n, depth)
	case TypeUint64:
		return readTyped[uint64](r, t, n, depth)
	case TypeInt64:
		return readTyped[int64](r, t, n, depth)
	case TypeFloat64:
		return readTyped[float64](r, t, n, depth)
	case TypeArray:
		return readTyped[any](r, t, n, depth)
	}
	return nil, fmt.Errorf("unknown array element type %d", t)
}

func readTyped[T any](r *reader, t ValueType, n, depth int) ([]T, error) {
	out := make([]T, 0, min(n, 1<<16))
	for range n {
		v, err := r.value(t, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v.(T))
	}
	return out, nil
}

// Read parses the GGUF file in r of the given size: header, metadata and
// tensor descriptions, checking that every tensor lies inside the file.
func Read(r io.ReaderAt, size int64) (*File, error) {
	rd := &reader{r: bufio.NewReader(io.NewSectionReader(r, 0, size)), size: size}
	magic, err := rd.take(4)
	if err != nil || string(magic) != Magic {
		return nil, errors.New("gguf: not a GGUF file (bad magic)")
	}
	f := &File{r: r, Alignment: DefaultAlignment}
	if f.Version, err = rd.u32(); err != nil {
		return nil, fmt.Errorf("gguf: header: %w", err)
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("gguf: unsupported version %d", f.Version)
	}
	nt, err := rd.u64()
	if err != nil {
		return nil, fmt.Errorf("gguf: header: %w", err)
	}
	nkv, err := rd.u64()
	if err != nil {
		return nil, fmt.Errorf("gguf: header: %w", err)
	}
	// Each entry needs at least 12 bytes (key length and type tag).
	if nkv > uint64(size/12) || nt > uint64(size/24) {
		return nil, fmt.Errorf("gguf: %d metadata entries and %d tensors cannot fit in %d bytes", nkv, nt, size)
	}
	for range nkv {
		key, err := rd.str()
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata key: %w", err)
		}
		t, err := rd.u32()
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		v, err := rd.value(ValueType(t), 0)
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		if key == "general.alignment" {
			a, ok := v.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, fmt.Errorf("gguf: general.alignment %v is not a power-of-two uint32", v)
			}
			f.Alignment = int64(a)
		}
		f.KV = append(f.KV, KV{key, v})
	}
	for range nt {
		var t TensorInfo
		if t.Name, err = rd.str(); err != nil {
			return nil, fmt.Errorf("gguf: tensor name: %w", err)
		}
		nd, err := rd.u32()
		if err != nil || nd > 4 {
			return nil, fmt.Errorf("gguf: tensor %q: bad dimension count %d (%v)", t.Name, nd, err)
		}
		for range nd {
			d, err := rd.u64()
			if err != nil {
				return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
			}
			t.Dims = append(t.Dims, d)
		}
		typ, err := rd.u32()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		t.Type = TensorType(typ)
		if t.Offset, err = rd.u64(); err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if t.Offset%uint64(f.Alignment) != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: offset %d is not aligned to %d", t.Name, t.Offset, f.Alignment)
		}
		f.Tensors = append(f.Tensors, t)
	}
	f.DataOffset = (rd.off + f.Alignment - 1) / f.Alignment * f.Alignment
	for _, t := range f.Tensors {
		n, err := t.Bytes()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if t.Offset > uint64(size) || f.DataOffset+int64(t.Offset) > size-n {
			return nil, fmt.Errorf("gguf: tensor %q: %d bytes at offset %d run past the end of the file (truncated?)", t.Name, n, t.Offset)
		}
	}
	return f, nil
}
