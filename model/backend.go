package model

import "github.com/livehat/livehat/model/internal/kernel"

// Backend runs the dense linear algebra of a forward pass; the model code
// around it (norms, RoPE, softmax, the KV cache) is plain Go. Slices passed in
// are sized by the caller, so an implementation may treat a short slice as a
// programming error.
type Backend interface {
	// Linear computes y = x·Wᵀ for n rows of x (n×w.Cols()), writing n×w.Rows().
	Linear(y, x []float32, n int, w *Weight)
	// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices,
	// as BLAS does.
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	// Parallel calls fn(i) for every i in [0, n), concurrently. fn must
	// not call the backend: the CPU backend runs it on the threads of the
	// call in progress.
	Parallel(n int, fn func(i int))
	// Threads reports how many threads the backend computes on.
	Threads() int
}

// CPU is the pure-Go CPU backend: assembly kernels on amd64 with AVX2 and
// FMA, portable loops elsewhere, on a worker pool sized to the physical cores.
type CPU struct {
	pool *kernel.Pool
}

// NewCPU returns a CPU backend on threads threads (<= 0: one per physical
// core, since hyper-threads only slow compute-bound kernels down).
func NewCPU(threads int) *CPU {
	return &CPU{pool: kernel.NewPool(threads)}
}

// Close stops the worker goroutines.
func (c *CPU) Close() { c.pool.Close() }

// Threads reports the number of worker threads.
func (c *CPU) Threads() int { return c.pool.Threads() }

// Kernels names the kernel set the matrix products run: "avx512", "avx2"
// or "purego" on amd64, "neon" on arm64 (LIVEHAT_KERNELS forces one), so
// that a benchmark can say what it measured.
func (c *CPU) Kernels() string { return kernel.Kernels() }

// Linear implements Backend.
func (c *CPU) Linear(y, x []float32, n int, w *Weight) {
	switch w.dtype {
	case F32:
		c.pool.MatMul(y, w.f32, w.rows, w.cols, x, n)
	case BF16:
		c.pool.MatMulBF16(y, w.bf16, w.rows, w.cols, x, n)
	case Q8:
		c.pool.MatMulQ8(y, w.q8, x, n)
	}
}

// Sgemm implements Backend.
func (c *CPU) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, cm []float32, ldc int) {
	c.pool.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
}

// Parallel implements Backend on the pool's threads: a call waits for the
// items, not for a worker that has not started yet.
func (c *CPU) Parallel(n int, fn func(i int)) { c.pool.Parallel(n, fn) }
