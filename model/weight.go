package model

import (
	"fmt"
	"math"

	"github.com/livehat/livehat/model/internal/kernel"
)

// DType is the storage type of a model's matrices.
type DType string

// Weight storage types. Norm weights and biases are always float32.
const (
	F32  DType = "f32"  // 32-bit floats
	BF16 DType = "bf16" // bfloat16, widened to float32 inside the kernels
	Q8   DType = "q8"   // int8 with one float32 scale per block of 32 along a row
)

// q8Block is the block of weights along a row that shares one Q8 scale.
const q8Block = kernel.Q8Block

// ParseDType parses "f32", "bf16" or "q8".
func ParseDType(s string) (DType, error) {
	switch d := DType(s); d {
	case F32, BF16, Q8:
		return d, nil
	}
	return "", fmt.Errorf("model: unknown weight dtype %q (want f32, bf16 or q8)", s)
}

// Weight is a rows×cols matrix in the Hugging Face Linear layout [out, in].
type Weight struct {
	rows, cols int
	dtype      DType
	f32        []float32
	bf16       []uint16
	q8         kernel.Q8Matrix
}

// NewWeight stores a row-major rows×cols float32 matrix as dtype. An f32
// weight keeps w itself; bf16 rounds to nearest even; q8 quantizes blocks of
// 32 along each row and rejects NaN and infinite values.
func NewWeight(dtype DType, w []float32, rows, cols int) (*Weight, error) {
	return newWeight(dtype, w, rows, cols)
}

func newWeight(dtype DType, w []float32, rows, cols int) (*Weight, error) {
	if rows < 0 || cols < 0 || len(w) != rows*cols {
		return nil, fmt.Errorf("%d values for a %d×%d matrix", len(w), rows, cols)
	}
	out := &Weight{rows: rows, cols: cols, dtype: dtype}
	switch dtype {
	case F32:
		out.f32 = w
	case BF16:
		out.bf16 = make([]uint16, len(w))
		kernel.F32ToBF16(out.bf16, w)
	case Q8:
		q, err := kernel.QuantizeQ8(w, rows, cols)
		if err != nil {
			return nil, err
		}
		out.q8 = q
	default:
		return nil, fmt.Errorf("unknown weight dtype %q", dtype)
	}
	return out, nil
}

// Rows returns the number of output features.
func (w *Weight) Rows() int { return w.rows }

// Cols returns the number of input features.
func (w *Weight) Cols() int { return w.cols }

// DType returns the storage type.
func (w *Weight) DType() DType { return w.dtype }

// Bytes returns the memory the matrix occupies.
func (w *Weight) Bytes() int64 {
	switch w.dtype {
	case F32:
		return 4 * int64(len(w.f32))
	case BF16:
		return 2 * int64(len(w.bf16))
	}
	return int64(len(w.q8.Data)) + 4*int64(len(w.q8.Scales))
}

// Row writes row r, widened to float32, into dst (len ≥ cols).
func (w *Weight) Row(dst []float32, r int) {
	dst = dst[:w.cols]
	switch w.dtype {
	case F32:
		copy(dst, w.f32[r*w.cols:])
	case BF16:
		kernel.BF16ToF32(dst, w.bf16[r*w.cols:(r+1)*w.cols])
	case Q8:
		data := w.q8.Data[r*w.cols:]
		scales := w.q8.Scales[r*w.q8.BlocksPerRow():]
		for c := range dst {
			dst[c] = float32(data[c]) * scales[c/q8Block]
		}
	}
}

// firstRows returns a view of the matrix's first n rows, sharing its
// storage.
func (w *Weight) firstRows(n int) *Weight {
	v := &Weight{rows: n, cols: w.cols, dtype: w.dtype}
	switch w.dtype {
	case F32:
		v.f32 = w.f32[:n*w.cols]
	case BF16:
		v.bf16 = w.bf16[:n*w.cols]
	case Q8:
		v.q8 = kernel.Q8Matrix{Rows: n, Cols: w.cols, Data: w.q8.Data[:n*w.cols], Scales: w.q8.Scales[:n*w.q8.BlocksPerRow()]}
	}
	return v
}

// Float32 returns the matrix widened to float32 (a copy).
func (w *Weight) Float32() []float32 {
	out := make([]float32, w.rows*w.cols)
	for r := range w.rows {
		w.Row(out[r*w.cols:], r)
	}
	return out
}

// finite reports whether every value is finite (Q8 quantization rejects NaN).
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}
