package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteOpenRoundTrip(t *testing.T) {
	f32, _ := EncodeFloat32(F32, []float32{1, -2.5, 3e-8, float32(math.Inf(1))})
	bf, _ := EncodeFloat32(BF16, []float32{1, -2.5})
	h, _ := EncodeFloat32(F16, []float32{0.5, 65504})
	tensors := []Tensor{
		{Name: "z.weight", DType: F32, Shape: []int{2, 2}, Data: f32},
		{Name: "a.bf16", DType: BF16, Shape: []int{2}, Data: bf},
		{Name: "m.f16", DType: F16, Shape: []int{1, 2}, Data: h},
		{Name: "q.int8", DType: I8, Shape: []int{3}, Data: []byte{0xff, 0, 7}},
		{Name: "scalar", DType: F32, Shape: []int{}, Data: f32[:4]},
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteFile(path, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	if (8+n)%8 != 0 {
		t.Errorf("data section starts at %d, not 8-byte aligned", 8+n)
	}
	hdr := string(raw[8 : 8+n])
	if strings.Index(hdr, `"a.bf16"`) > strings.Index(hdr, `"z.weight"`) {
		t.Errorf("tensors are not written in name order: %s", hdr)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.Metadata()["format"]; got != "pt" {
		t.Errorf("metadata format = %q, want pt", got)
	}
	for _, want := range tensors {
		info, data, err := f.ReadRaw(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if info.DType != want.DType || len(info.Shape) != len(want.Shape) || !bytes.Equal(data, want.Data) {
			t.Errorf("tensor %s: got %v %v %x, want %v %v %x", want.Name, info.DType, info.Shape, data, want.DType, want.Shape, want.Data)
		}
	}
	_, v, err := f.ReadFloat32("m.f16")
	if err != nil || v[0] != 0.5 || v[1] != 65504 {
		t.Errorf("ReadFloat32(m.f16) = %v, %v", v, err)
	}
	_, v, err = f.ReadFloat32("a.bf16")
	if err != nil || v[0] != 1 || v[1] != -2.5 {
		t.Errorf("ReadFloat32(a.bf16) = %v, %v", v, err)
	}
	if _, _, err := f.ReadFloat32("q.int8"); err == nil || !strings.Contains(err.Error(), "q.int8") {
		t.Errorf("ReadFloat32 of an int8 tensor: err = %v, want an error naming it", err)
	}
	if _, _, err := f.ReadRaw("missing"); err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadRaw(missing): err = %v, want an error naming file and tensor", err)
	}
}

func TestWriteRejects(t *testing.T) {
	var buf bytes.Buffer
	cases := map[string][]Tensor{
		"size":      {{Name: "a", DType: F32, Shape: []int{2}, Data: make([]byte, 4)}},
		"dtype":     {{Name: "a", DType: "F8", Shape: []int{1}, Data: make([]byte, 1)}},
		"duplicate": {{Name: "a", DType: U8, Shape: []int{1}, Data: []byte{1}}, {Name: "a", DType: U8, Shape: []int{1}, Data: []byte{1}}},
		"reserved":  {{Name: "__metadata__", DType: U8, Shape: []int{1}, Data: []byte{1}}},
	}
	for name, ts := range cases {
		if err := Write(&buf, ts, nil); err == nil {
			t.Errorf("%s: Write accepted invalid input", name)
		}
	}
}

func file(header string, data int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(make([]byte, data))
	return b.Bytes()
}

func TestOpenRejects(t *testing.T) {
	cases := []struct {
		name, header string
		data         int
		want         string
	}{
		{"truncated", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 8, "truncated"},
		{"extra bytes", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8, "cover 4"},
		{"overlap", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8, "overlap"},
		{"gap", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8, "gap"},
		{"shape mismatch", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8, `"a"`},
		{"unknown dtype", `{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}}`, 1, "unknown dtype"},
		{"duplicate", `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2, "duplicate"},
		{"missing field", `{"a":{"dtype":"U8","shape":[1]}}`, 1, "lacks"},
		{"negative dim", `{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}`, 1, "dimension"},
		{"not object", `[1,2]`, 0, "not a JSON object"},
		{"bad metadata", `{"__metadata__":{"a":1}}`, 0, "__metadata__"},
		{"trailing", `{}{}`, 0, "trailing"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "bad.safetensors")
		if err := os.WriteFile(path, file(c.header, c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err == nil {
			f.Close()
			t.Errorf("%s: Open accepted %s", c.name, c.header)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not mention %q and the file", c.name, err, c.want)
		}
	}
	// A length prefix larger than the file.
	path := filepath.Join(t.TempDir(), "short.safetensors")
	b := file(`{}`, 0)
	binary.LittleEndian.PutUint64(b, 1<<40)
	os.WriteFile(path, b, 0o644)
	if _, err := Open(path); err == nil {
		t.Error("Open accepted a header length beyond the limit")
	}
	os.WriteFile(path, []byte{1, 2, 3}, 0o644)
	if _, err := Open(path); err == nil {
		t.Error("Open accepted a 3-byte file")
	}
}

func TestHalfConversions(t *testing.T) {
	cases := []struct {
		h uint16
		f float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.9604645e-8}, {0x0400, 6.1035156e-5},
		{0x3555, 0.33325195}, {0x7c00, float32(math.Inf(1))}, {0x8000, float32(math.Copysign(0, -1))},
	}
	for _, c := range cases {
		if got := HalfToFloat32(c.h); got != c.f {
			t.Errorf("HalfToFloat32(%#x) = %g, want %g", c.h, got, c.f)
		}
		if got := Float32ToHalf(c.f); got != c.h {
			t.Errorf("Float32ToHalf(%g) = %#x, want %#x", c.f, got, c.h)
		}
	}
	// Every finite half survives a round trip through float32.
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue
		}
		if got := Float32ToHalf(HalfToFloat32(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#x round-trips to %#x", h, got)
		}
	}
	if got := Float32ToHalf(1e6); got != 0x7c00 {
		t.Errorf("overflow: got %#x", got)
	}
	// Ties round to even: 1 + 2^-11 lies halfway between 1 and 1+2^-10.
	if got := Float32ToHalf(1 + 1.0/2048); got != 0x3c00 {
		t.Errorf("tie: got %#x, want 0x3c00", got)
	}
	if got := Float32ToBF16(1 + 1.0/256); got != 0x3f80 {
		t.Errorf("bf16 tie: got %#x, want 0x3f80", got)
	}
	if got := Float32ToBF16(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Errorf("bf16 NaN: got %#x", got)
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`), int64(8))
	f.Add([]byte(`{"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[1,3],"data_offsets":[0,6]}}  `), int64(6))
	f.Add([]byte(`{"a":{"dtype":"I8","shape":[],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}}`), int64(1))
	f.Fuzz(func(t *testing.T, js []byte, dataSize int64) {
		h, err := ParseHeader(js, dataSize)
		if err != nil {
			return
		}
		var end int64
		for _, ti := range h.Tensors {
			if ti.Begin != end || ti.End-ti.Begin != ti.NumElements()*int64(ti.DType.Size()) {
				t.Fatalf("accepted inconsistent tensor %+v", ti)
			}
			end = ti.End
		}
		if end != dataSize {
			t.Fatalf("accepted header covering %d of %d bytes", end, dataSize)
		}
	})
}
