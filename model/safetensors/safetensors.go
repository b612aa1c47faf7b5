// Package safetensors reads and writes the safetensors tensor format used by
// Hugging Face checkpoints.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON naming
// every tensor (dtype, shape, byte range in the data section) plus an optional
// "__metadata__" string map, and then the data section. Open validates the
// whole header against the file size before any tensor is read, so a
// truncated or inconsistent file is reported by name instead of surfacing as
// a short read later.
package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// MaxHeaderSize bounds the JSON header, as the reference implementation does,
// so that a corrupt length prefix cannot make us allocate gigabytes.
const MaxHeaderSize = 100 << 20

// DType names an element type as it is spelled in the header.
type DType string

// The element types this package knows. Size reports their width.
const (
	F64  DType = "F64"
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	Bool DType = "BOOL"
)

// Size returns the width of one element in bytes, or 0 for an unknown type.
func (d DType) Size() int {
	switch d {
	case F64, I64:
		return 8
	case F32, I32:
		return 4
	case F16, BF16, I16:
		return 2
	case I8, U8, Bool:
		return 1
	}
	return 0
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End are byte offsets into the data section.
	Begin, End int64
}

// NumElements returns the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Header is the parsed and validated header of a file.
type Header struct {
	// Tensors are in data-offset order.
	Tensors  []TensorInfo
	Metadata map[string]string
	// DataOffset is where the data section starts in the file.
	DataOffset int64
}

// File is an open safetensors file. Tensor data is read on demand.
type File struct {
	path   string
	f      *os.File
	header Header
	index  map[string]int
}

// Open opens path and validates its header against the file size.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	h, err := ReadHeader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	idx := make(map[string]int, len(h.Tensors))
	for i, t := range h.Tensors {
		idx[t.Name] = i
	}
	return &File{path: path, f: f, header: h, index: idx}, nil
}

// Close releases the file.
func (f *File) Close() error { return f.f.Close() }

// Path returns the path the file was opened from.
func (f *File) Path() string { return f.path }

// Metadata returns the "__metadata__" map (nil when absent).
func (f *File) Metadata() map[string]string { return f.header.Metadata }

// Tensors returns the tensors in data-offset order.
func (f *File) Tensors() []TensorInfo { return f.header.Tensors }

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.header.Tensors[i], true
}

// ReadRaw returns the bytes of the named tensor.
func (f *File) ReadRaw(name string) (TensorInfo, []byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return TensorInfo{}, nil, fmt.Errorf("safetensors: %s: tensor %q not found", f.path, name)
	}
	buf := make([]byte, t.End-t.Begin)
	if _, err := f.f.ReadAt(buf, f.header.DataOffset+t.Begin); err != nil {
		return t, nil, fmt.Errorf("safetensors: %s: tensor %q: %w", f.path, name, err)
	}
	return t, buf, nil
}

// ReadFloat32 reads a floating-point tensor (F32, F16, BF16 or F64) widened to
// float32. F32, F16 and BF16 convert exactly.
func (f *File) ReadFloat32(name string) (TensorInfo, []float32, error) {
	t, raw, err := f.ReadRaw(name)
	if err != nil {
		return t, nil, err
	}
	out, err := DecodeFloat32(t.DType, raw)
	if err != nil {
		return t, nil, fmt.Errorf("safetensors: %s: tensor %q: %w", f.path, name, err)
	}
	return t, out, nil
}

// DecodeFloat32 converts little-endian raw data of type d to float32.
func DecodeFloat32(d DType, raw []byte) ([]float32, error) {
	switch d {
	case F32:
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, nil
	case BF16:
		out := make([]float32, len(raw)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
		return out, nil
	case F16:
		out := make([]float32, len(raw)/2)
		for i := range out {
			out[i] = HalfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		return out, nil
	case F64:
		out := make([]float32, len(raw)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not a floating-point type", d)
}

// ReadHeader reads and validates the header of a safetensors stream of the
// given total size.
func ReadHeader(r io.ReaderAt, size int64) (Header, error) {
	if size < 8 {
		return Header{}, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return Header{}, fmt.Errorf("reading header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderSize {
		return Header{}, fmt.Errorf("header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if int64(n) > size-8 {
		return Header{}, fmt.Errorf("header length %d exceeds the file size %d (truncated file?)", n, size)
	}
	js := make([]byte, n)
	if _, err := r.ReadAt(js, 8); err != nil {
		return Header{}, fmt.Errorf("reading header: %w", err)
	}
	return ParseHeader(js, size-8-int64(n))
}

// ParseHeader parses the JSON header and checks it against the size of the
// data section: known dtypes, non-negative shapes, byte ranges that match the
// shape, lie inside the data, do not overlap and leave no gap, as the
// reference implementation requires.
func ParseHeader(js []byte, dataSize int64) (Header, error) {
	trimmed := bytes.TrimRight(js, " ")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Header{}, errors.New("header is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Header{}, errors.New("header is not a JSON object")
	}
	h := Header{DataOffset: 8 + int64(len(js))}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Header{}, fmt.Errorf("header JSON: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return Header{}, errors.New("header JSON: key is not a string")
		}
		if seen[name] {
			return Header{}, fmt.Errorf("header: duplicate entry %q", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			var md map[string]string
			if err := dec.Decode(&md); err != nil {
				return Header{}, fmt.Errorf("header: __metadata__ must map strings to strings: %w", err)
			}
			h.Metadata = md
			continue
		}
		var e struct {
			DType       *string  `json:"dtype"`
			Shape       *[]int64 `json:"shape"`
			DataOffsets *[]int64 `json:"data_offsets"`
		}
		if err := dec.Decode(&e); err != nil {
			return Header{}, fmt.Errorf("header: tensor %q: %w", name, err)
		}
		t, err := checkEntry(name, e.DType, e.Shape, e.DataOffsets)
		if err != nil {
			return Header{}, err
		}
		h.Tensors = append(h.Tensors, t)
	}
	if _, err := dec.Token(); err != nil {
		return Header{}, fmt.Errorf("header JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Header{}, errors.New("header JSON: trailing data after the object")
	}
	slices.SortStableFunc(h.Tensors, func(a, b TensorInfo) int {
		if a.Begin != b.Begin {
			return cmpInt64(a.Begin, b.Begin)
		}
		return cmpInt64(a.End, b.End)
	})
	var next int64
	for _, t := range h.Tensors {
		if t.Begin != next {
			if t.Begin < next {
				return Header{}, fmt.Errorf("header: tensor %q bytes [%d,%d) overlap the previous tensor", t.Name, t.Begin, t.End)
			}
			return Header{}, fmt.Errorf("header: gap of %d bytes before tensor %q", t.Begin-next, t.Name)
		}
		next = t.End
	}
	if next != dataSize {
		if next > dataSize {
			return Header{}, fmt.Errorf("header: tensors need %d data bytes but the file has %d (truncated file?)", next, dataSize)
		}
		return Header{}, fmt.Errorf("header: tensors cover %d data bytes but the file has %d", next, dataSize)
	}
	return h, nil
}

func checkEntry(name string, dtype *string, shape, offsets *[]int64) (TensorInfo, error) {
	if dtype == nil || shape == nil || offsets == nil {
		return TensorInfo{}, fmt.Errorf("header: tensor %q lacks dtype, shape or data_offsets", name)
	}
	t := TensorInfo{Name: name, DType: DType(*dtype)}
	if t.DType.Size() == 0 {
		return t, fmt.Errorf("header: tensor %q has unknown dtype %q", name, *dtype)
	}
	if len(*offsets) != 2 {
		return t, fmt.Errorf("header: tensor %q: data_offsets must have 2 entries, got %d", name, len(*offsets))
	}
	t.Begin, t.End = (*offsets)[0], (*offsets)[1]
	if t.Begin < 0 || t.End < t.Begin {
		return t, fmt.Errorf("header: tensor %q: bad data_offsets [%d,%d]", name, t.Begin, t.End)
	}
	elems := int64(1)
	for _, d := range *shape {
		if d < 0 || d > math.MaxInt32 {
			return t, fmt.Errorf("header: tensor %q: bad dimension %d", name, d)
		}
		t.Shape = append(t.Shape, int(d))
		if d != 0 && elems > math.MaxInt64/8/d {
			return t, fmt.Errorf("header: tensor %q: shape %v overflows", name, *shape)
		}
		elems *= d
	}
	if want := elems * int64(t.DType.Size()); t.End-t.Begin != want {
		return t, fmt.Errorf("header: tensor %q: %s%v needs %d bytes, data_offsets give %d", name, t.DType, t.Shape, want, t.End-t.Begin)
	}
	return t, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Tensor is one tensor to write.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	// Data holds the little-endian elements.
	Data []byte
}

// Write writes tensors (in name order, as Hugging Face does) and metadata to
// w. The header is padded with spaces so that the data section starts at a
// multiple of 8 bytes.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	sorted := slices.Clone(tensors)
	slices.SortFunc(sorted, func(a, b Tensor) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	if len(metadata) > 0 {
		md, err := json.Marshal(metadata)
		if err != nil {
			return fmt.Errorf("safetensors: metadata: %w", err)
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(md)
		first = false
	}
	var off int64
	for i, t := range sorted {
		if t.Name == "__metadata__" || t.Name == "" {
			return fmt.Errorf("safetensors: invalid tensor name %q", t.Name)
		}
		if i > 0 && sorted[i-1].Name == t.Name {
			return fmt.Errorf("safetensors: duplicate tensor %q", t.Name)
		}
		if t.DType.Size() == 0 {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		n := int64(t.DType.Size())
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("safetensors: tensor %q: negative dimension in %v", t.Name, t.Shape)
			}
			n *= int64(d)
		}
		if n != int64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %q: %s%v needs %d bytes, got %d", t.Name, t.DType, t.Shape, n, len(t.Data))
		}
		if !first {
			hdr.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(t.Name)
		hdr.Write(name)
		hdr.WriteString(`:{"dtype":"` + string(t.DType) + `","shape":[`)
		for j, d := range t.Shape {
			if j > 0 {
				hdr.WriteByte(',')
			}
			hdr.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&hdr, `],"data_offsets":[%d,%d]}`, off, off+n)
		off += n
	}
	hdr.WriteByte('}')
	for (8+hdr.Len())%8 != 0 {
		hdr.WriteByte(' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(hdr.Len()))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	for _, t := range sorted {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
	}
	return nil
}

// WriteFile writes a safetensors file at path; see Write.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = Write(bw, tensors, metadata)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("safetensors: %s: %w", path, cerr)
	}
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	return nil
}

// EncodeFloat32 returns the little-endian encoding of v as dtype d (F32, BF16
// with round-to-nearest-even, or F16).
func EncodeFloat32(d DType, v []float32) ([]byte, error) {
	switch d {
	case F32:
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out, nil
	case BF16:
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToBF16(x))
		}
		return out, nil
	case F16:
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToHalf(x))
		}
		return out, nil
	}
	return nil, fmt.Errorf("safetensors: cannot encode float32 as %s", d)
}

// Float32ToBF16 rounds x to bfloat16 (round to nearest even; NaN stays NaN).
func Float32ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// HalfToFloat32 widens an IEEE 754 half-precision value.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: value = mant × 2⁻²⁴.
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// Float32ToHalf rounds x to IEEE 754 half precision (round to nearest even,
// overflow to infinity).
func Float32ToHalf(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is the correct rounding
	}
	return sign | uint16(half)
}

// Checkpoint is the set of safetensors files of a Hugging Face checkpoint
// directory: either one model.safetensors or the shards listed in
// model.safetensors.index.json.
type Checkpoint struct {
	files  []*File
	byName map[string]*File
}

// OpenCheckpoint opens the safetensors files of a checkpoint directory and
// checks that the shard index, when there is one, agrees with the shards.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	ck := &Checkpoint{byName: make(map[string]*File)}
	indexPath := filepath.Join(dir, "model.safetensors.index.json")
	b, err := os.ReadFile(indexPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := Open(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			return nil, err
		}
		ck.files = append(ck.files, f)
		for _, t := range f.Tensors() {
			ck.byName[t.Name] = f
		}
		return ck, nil
	case err != nil:
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &index); err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", indexPath, err)
	}
	if len(index.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors: %s: empty weight_map", indexPath)
	}
	shards := make(map[string]*File)
	for name, shard := range index.WeightMap {
		if shard != filepath.Base(shard) || shard == "." || shard == ".." {
			ck.Close()
			return nil, fmt.Errorf("safetensors: %s: tensor %q: shard %q is not a file name in the checkpoint directory", indexPath, name, shard)
		}
		f, ok := shards[shard]
		if !ok {
			f, err = Open(filepath.Join(dir, shard))
			if err != nil {
				ck.Close()
				return nil, err
			}
			shards[shard] = f
			ck.files = append(ck.files, f)
		}
		if _, ok := f.Tensor(name); !ok {
			ck.Close()
			return nil, fmt.Errorf("safetensors: %s: tensor %q is listed in %s but not stored there", f.Path(), name, indexPath)
		}
		ck.byName[name] = f
	}
	for _, f := range ck.files {
		for _, t := range f.Tensors() {
			if ck.byName[t.Name] != f {
				ck.Close()
				return nil, fmt.Errorf("safetensors: %s: tensor %q is not listed in %s", f.Path(), t.Name, indexPath)
			}
		}
	}
	return ck, nil
}

// Lookup returns the file holding the named tensor.
func (c *Checkpoint) Lookup(name string) (*File, bool) {
	f, ok := c.byName[name]
	return f, ok
}

// Names returns every tensor name, sorted.
func (c *Checkpoint) Names() []string {
	names := make([]string, 0, len(c.byName))
	for n := range c.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Close closes every file.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
