// Package gguf writes and reads GGUF v3, the file format of llama.cpp, so
// that a checkpoint of ours runs in llama.cpp, Ollama and other GGML-based
// engines.
//
// A GGUF file is a header (magic "GGUF", version, tensor and key-value
// counts), typed key-value metadata, tensor descriptions (name, dimensions
// innermost first, type, offset), padding to the alignment, and the tensor
// data, each tensor starting at a multiple of the alignment.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Magic is the first four bytes of a GGUF file.
const Magic = "GGUF"

// Version is the format version this package writes.
const Version = 3

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// Metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

// TensorType is a GGML tensor element type.
type TensorType uint32

// The tensor types this package writes and reads.
const (
	F32  TensorType = 0
	F16  TensorType = 1
	Q8_0 TensorType = 8
	BF16 TensorType = 30
)

// String returns the GGML name of the type.
func (t TensorType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q8_0:
		return "Q8_0"
	case BF16:
		return "BF16"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// q8Block is the number of weights in a Q8_0 block (an f16 scale then 32 int8).
const q8Block = 32

// Size returns the bytes of n elements along the innermost dimension, or
// an error when n does not fit the type's block.
func (t TensorType) Size(n int64) (int64, error) {
	switch t {
	case F32:
		return 4 * n, nil
	case F16, BF16:
		return 2 * n, nil
	case Q8_0:
		if n%q8Block != 0 {
			return 0, fmt.Errorf("Q8_0 needs a multiple of %d elements per row, got %d", q8Block, n)
		}
		return n / q8Block * (2 + q8Block), nil
	}
	return 0, fmt.Errorf("unsupported tensor type %d", uint32(t))
}

// KV is one metadata entry. Value holds uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64, or a slice of one
// of them for an array.
type KV struct {
	Key   string
	Value any
}

// TensorInfo describes one tensor. Dims are innermost first, as GGML
// orders them: a row-major rows×cols matrix has Dims [cols, rows].
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   TensorType
	Offset uint64 // from the start of the data section
}

// Bytes returns the size of the tensor's data.
func (t TensorInfo) Bytes() (int64, error) {
	if len(t.Dims) == 0 {
		return t.Type.Size(1)
	}
	rows := int64(1)
	for _, d := range t.Dims[1:] {
		if d > math.MaxInt32 {
			return 0, fmt.Errorf("dimension %d too large", d)
		}
		rows *= int64(d)
	}
	if t.Dims[0] > math.MaxInt32 {
		return 0, fmt.Errorf("dimension %d too large", t.Dims[0])
	}
	row, err := t.Type.Size(int64(t.Dims[0]))
	if err != nil {
		return 0, err
	}
	if rows != 0 && row > math.MaxInt64/rows {
		return 0, errors.New("tensor size overflows")
	}
	return row * rows, nil
}

// writer writes little-endian GGUF primitives and remembers the first error.
type writer struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (w *writer) bytes(b []byte) {
	if w.err != nil {
		return
	}
	var n int
	n, w.err = w.w.Write(b)
	w.n += int64(n)
}

func (w *writer) u32(v uint32) { w.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (w *writer) u64(v uint64) { w.bytes(binary.LittleEndian.AppendUint64(nil, v)) }

func (w *writer) str(s string) {
	w.u64(uint64(len(s)))
	w.bytes([]byte(s))
}

func (w *writer) pad(align int64) {
	if r := w.n % align; r != 0 {
		w.bytes(make([]byte, align-r))
	}
}

// value writes a typed value, with its type tag when tagged.
func (w *writer) value(v any, tagged bool) error {
	tag := func(t ValueType) {
		if tagged {
			w.u32(uint32(t))
		}
	}
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		tag(TypeUint8)
		w.bytes([]byte{x})
	case int8:
		tag(TypeInt8)
		w.bytes([]byte{byte(x)})
	case uint16:
		tag(TypeUint16)
		w.bytes(le.AppendUint16(nil, x))
	case int16:
		tag(TypeInt16)
		w.bytes(le.AppendUint16(nil, uint16(x)))
	case uint32:
		tag(TypeUint32)
		w.u32(x)
	case int32:
		tag(TypeInt32)
		w.u32(uint32(x))
	case float32:
		tag(TypeFloat32)
		w.u32(math.Float32bits(x))
	case bool:
		tag(TypeBool)
		b := byte(0)
		if x {
			b = 1
		}
		w.bytes([]byte{b})
	case string:
		tag(TypeString)
		w.str(x)
	case uint64:
		tag(TypeUint64)
		w.u64(x)
	case int64:
		tag(TypeInt64)
		w.u64(uint64(x))
	case float64:
		tag(TypeFloat64)
		w.u64(math.Float64bits(x))
	case []string:
		return writeArray(w, TypeString, x, tagged)
	case []int32:
		return writeArray(w, TypeInt32, x, tagged)
	case []uint32:
		return writeArray(w, TypeUint32, x, tagged)
	case []float32:
		return writeArray(w, TypeFloat32, x, tagged)
	case []int64:
		return writeArray(w, TypeInt64, x, tagged)
	case []uint8:
		return writeArray(w, TypeUint8, x, tagged)
	case []bool:
		return writeArray(w, TypeBool, x, tagged)
	default:
		return fmt.Errorf("unsupported metadata value type %T", v)
	}
	return nil
}

func writeArray[T any](w *writer, t ValueType, xs []T, tagged bool) error {
	if tagged {
		w.u32(uint32(TypeArray))
	}
	w.u32(uint32(t))
	w.u64(uint64(len(xs)))
	for _, x := range xs {
		if err := w.value(x, false); err != nil {
			return err
		}
	}
	return nil
}

// Tensor is a tensor to write: its description (Offset is computed) and a
// function that writes exactly its bytes.
type Tensor struct {
	Info  TensorInfo
	Write func(w io.Writer) error
}

// Write writes a GGUF v3 file: the metadata in the order given (with
// general.alignment added when absent), then the tensors, each aligned.
func Write(out io.Writer, kvs []KV, tensors []Tensor) error {
	align := int64(DefaultAlignment)
	seen := make(map[string]bool)
	for _, kv := range kvs {
		if seen[kv.Key] {
			return fmt.Errorf("gguf: duplicate metadata key %q", kv.Key)
		}
		seen[kv.Key] = true
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: general.alignment must be a power-of-two uint32, got %v", kv.Value)
			}
			align = int64(a)
		}
	}
	if !seen["general.alignment"] {
		kvs = append(kvs, KV{"general.alignment", uint32(align)})
	}
	sizes := make([]int64, len(tensors))
	var off int64
	names := make(map[string]bool)
	for i := range tensors {
		t := &tensors[i].Info
		if names[t.Name] {
			return fmt.Errorf("gguf: duplicate tensor %q", t.Name)
		}
		names[t.Name] = true
		n, err := t.Bytes()
		if err != nil {
			return fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		sizes[i] = n
		t.Offset = uint64(off)
		off += (n + align - 1) / align * align
	}
	w := &writer{w: bufio.NewWriterSize(out, 1<<20)}
	w.bytes([]byte(Magic))
	w.u32(Version)
	w.u64(uint64(len(tensors)))
	w.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		w.str(kv.Key)
		if err := w.value(kv.Value, true); err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	for _, t := range tensors {
		w.str(t.Info.Name)
		w.u32(uint32(len(t.Info.Dims)))
		for _, d := range t.Info.Dims {
			w.u64(d)
		}
		w.u32(uint32(t.Info.Type))
		w.u64(t.Info.Offset)
	}
	w.pad(align)
	for i, t := range tensors {
		if w.err != nil {
			break
		}
		cw := &countingWriter{w: w}
		if err := t.Write(cw); err != nil {
			return fmt.Errorf("gguf: tensor %q: %w", t.Info.Name, err)
		}
		if cw.n != sizes[i] {
			return fmt.Errorf("gguf: tensor %q: wrote %d bytes, want %d", t.Info.Name, cw.n, sizes[i])
		}
		w.pad(align)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("gguf: %w", w.err)
	}
	return nil
}

type countingWriter struct {
	w *writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.w.bytes(p)
	if c.w.err != nil {
		return 0, c.w.err
	}
	c.n += int64(len(p))
	return len(p), nil
}
