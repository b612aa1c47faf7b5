package kernel

import "fmt"

// Gemv sets y[i] = Σ_j W[i*ldw+j]·x[j] for i < rows and j < cols, on the
// calling goroutine. It is meant for work that is already parallel, such as
// one attention head scoring its cached keys (W the keys, ldw the KV row
// width). It panics if a slice is too short.
func Gemv(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	checkGemv("Gemv", len(y), rows, len(w), rows, cols, ldw, len(x), cols)
	if rows == 0 {
		return
	}
	if cols == 0 {
		clear(y[:rows])
		return
	}
	var out [8]float32
	r := 0
	for ; r+4 <= rows; r += 4 {
		rows4F32(cols, w[r*ldw:], ldw, x, cols, 1, &out)
		copy(y[r:r+4], out[:4])
	}
	for ; r < rows; r++ {
		y[r] = dotF32(w[r*ldw:r*ldw+cols], x[:cols])
	}
}

// GemvT adds Σ_i x[i]·W[i*ldw+j] to y[j] for i < rows and j < cols (y +=
// Wᵀ·x) on the calling goroutine: one attention head's probability-weighted
// sum of its cached values. It panics if a slice is too short.
func GemvT(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	checkGemv("GemvT", len(y), cols, len(w), rows, cols, ldw, len(x), rows)
	if rows == 0 || cols == 0 {
		return
	}
	gemvT(y[:cols], w, rows, cols, ldw, x[:rows])
}

// Axpy adds alpha·x to y. It panics if the lengths differ.
func Axpy(y []float32, alpha float32, x []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel: Axpy: lengths %d and %d differ", len(x), len(y)))
	}
	axpy(y, alpha, x)
}

func checkGemv(fn string, ny, needY, nw, rows, cols, ldw, nx, needX int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernel: %s: negative shape %d×%d", fn, rows, cols))
	}
	checkMatrix(fn, "w", nw, rows, cols, ldw)
	if ny < needY || nx < needX {
		panic(fmt.Sprintf("kernel: %s: y has %d elements (needs %d), x has %d (needs %d)", fn, ny, needY, nx, needX))
	}
}

// gemvTGo is the portable GemvT: y[j] += Σ_i x[i]·w[i*ldw+j].
func gemvTGo(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	for i := range rows {
		axpyGo(y, x[i], w[i*ldw:i*ldw+cols])
	}
}

// axpyGo is the portable Axpy over equal-length slices.
func axpyGo(y []float32, alpha float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += alpha * x[i]
	}
}
