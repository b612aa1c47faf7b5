package kernel

import (
	"errors"
	"fmt"
	"math"
)

// Q8Block is the number of consecutive weights along a row that share one
// scale in a Q8Matrix (as in llama.cpp's Q8_0).
const Q8Block = 32

// Q8Matrix is a rows×cols weight quantized to 8 bits: W[r,c] ≈
// Scales[r*BlocksPerRow()+c/Q8Block] · Data[r*Cols+c]. Each block of
// Q8Block weights along a row has its own scale, its largest magnitude
// mapping to ±127. The last block of a row is short when Cols is not a
// multiple of Q8Block.
type Q8Matrix struct {
	Rows, Cols int
	Data       []int8    // Rows×Cols quantized weights, row-major
	Scales     []float32 // Rows×BlocksPerRow() scales, row-major
}

// BlocksPerRow reports how many scales each row has.
func (q Q8Matrix) BlocksPerRow() int { return ceilDiv(q.Cols, Q8Block) }

// check reports whether the slices fit the shape.
func (q Q8Matrix) check() error {
	if q.Rows < 0 || q.Cols < 0 {
		return fmt.Errorf("negative shape %d×%d", q.Rows, q.Cols)
	}
	if len(q.Data) < q.Rows*q.Cols {
		return fmt.Errorf("Data has %d elements, %d×%d needs %d", len(q.Data), q.Rows, q.Cols, q.Rows*q.Cols)
	}
	if need := q.Rows * q.BlocksPerRow(); len(q.Scales) < need {
		return fmt.Errorf("Scales has %d elements, %d×%d needs %d", len(q.Scales), q.Rows, q.Cols, need)
	}
	return nil
}

// QuantizeQ8 quantizes a row-major rows×cols fp32 matrix with one scale per
// block of Q8Block weights along a row (round to nearest, ties away from
// zero). It fails on a shape that does not match len(w) and on NaN or
// infinite weights.
func QuantizeQ8(w []float32, rows, cols int) (Q8Matrix, error) {
	if rows < 0 || cols < 0 {
		return Q8Matrix{}, fmt.Errorf("kernel: QuantizeQ8: negative shape %d×%d", rows, cols)
	}
	if len(w) != rows*cols {
		return Q8Matrix{}, fmt.Errorf("kernel: QuantizeQ8: %d weights for a %d×%d matrix", len(w), rows, cols)
	}
	q := Q8Matrix{Rows: rows, Cols: cols, Data: make([]int8, rows*cols)}
	bpr := q.BlocksPerRow()
	q.Scales = make([]float32, rows*bpr)
	for r := range rows {
		for blk := range bpr {
			c0 := blk * Q8Block
			src := w[r*cols+c0 : r*cols+min(c0+Q8Block, cols)]
			var amax float32
			for i, v := range src {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return Q8Matrix{}, fmt.Errorf("kernel: QuantizeQ8: weight [%d,%d] is %v", r, c0+i, v)
				}
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			scale := amax / 127
			q.Scales[r*bpr+blk] = scale
			if scale == 0 {
				continue
			}
			inv := 1 / scale
			dst := q.Data[r*cols+c0:]
			for i, v := range src {
				dst[i] = int8(max(-127, min(127, math.Round(float64(v*inv)))))
			}
		}
	}
	return q, nil
}

// Dequantize returns the fp32 weights a Q8Matrix stands for.
func (q Q8Matrix) Dequantize() ([]float32, error) {
	if err := q.check(); err != nil {
		return nil, errors.New("kernel: Dequantize: " + err.Error())
	}
	out := make([]float32, q.Rows*q.Cols)
	bpr := q.BlocksPerRow()
	for r := range q.Rows {
		for c := range q.Cols {
			out[r*q.Cols+c] = q.Scales[r*bpr+c/Q8Block] * float32(q.Data[r*q.Cols+c])
		}
	}
	return out, nil
}
