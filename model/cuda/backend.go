package cuda

import (
	"fmt"
	"sync"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// Backend implements model.Backend on a GPU: Linear runs against device
// copies of the weights, uploaded the first time each weight is used;
// Sgemm (attention over long contexts) runs on the device too; Parallel
// runs on the CPU's goroutines for the element-wise work the model keeps
// in Go. Activations cross the bus on every call, so this is the simple
// way to put an existing model on a GPU; Runner keeps everything on the
// device and is much faster.
//
// model.Backend's methods return no error. If the device fails (out of
// memory, a lost device), Backend computes that call and every later one
// on its CPU fallback, so the results stay correct, and Err reports the
// device error.
type Backend struct {
	x   executor
	cpu *model.CPU

	mu      sync.Mutex
	weights map[*model.Weight]matrix
	owned   []driver.Ptr
	scratch [5]scratch // Linear's x and y, Sgemm's a, b and c
	err     error
}

// scratch is a growable device buffer.
type scratch struct {
	ptr   driver.Ptr
	bytes int64
}

// NewBackend returns a model.Backend on d. cpuThreads sizes the CPU
// fallback and Parallel (<= 0: one per physical core).
func NewBackend(d *Device, cpuThreads int) *Backend {
	return newBackend(d, cpuThreads)
}

func newBackend(x executor, cpuThreads int) *Backend {
	return &Backend{x: x, cpu: model.NewCPU(cpuThreads), weights: map[*model.Weight]matrix{}}
}

// Err returns the device error that moved the backend onto the CPU, or
// nil.
func (b *Backend) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Threads implements model.Backend: the CPU threads of Parallel.
func (b *Backend) Threads() int { return b.cpu.Threads() }

// Parallel implements model.Backend on the CPU.
func (b *Backend) Parallel(n int, fn func(i int)) { b.cpu.Parallel(n, fn) }

// Close frees the device copies of the weights and the scratch buffers
// and stops the CPU workers.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.cpu.Close()
	if len(b.owned) == 0 {
		return nil
	}
	err := b.x.do(func() error {
		var first error
		for _, p := range b.owned {
			if err := b.x.free(p); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
	b.owned, b.weights, b.scratch = nil, map[*model.Weight]matrix{}, [5]scratch{}
	return err
}

// fail records a device error; later calls go to the CPU.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// buffer returns scratch buffer i with room for n bytes.
func (b *Backend) buffer(i int, n int64) (driver.Ptr, error) {
	s := &b.scratch[i]
	if s.bytes >= n {
		return s.ptr, nil
	}
	size := max(n, 2*s.bytes, 1<<16)
	p, err := b.x.alloc(size)
	if err != nil {
		return 0, err
	}
	if s.ptr != 0 {
		if err := b.x.free(s.ptr); err != nil {
			return 0, err
		}
		b.owned = removePtr(b.owned, s.ptr)
	}
	b.owned = append(b.owned, p)
	*s = scratch{p, size}
	return p, nil
}

func removePtr(ps []driver.Ptr, p driver.Ptr) []driver.Ptr {
	for i, q := range ps {
		if q == p {
			return append(ps[:i], ps[i+1:]...)
		}
	}
	return ps
}

// matrixOf returns w's device copy, uploading it on first use.
func (b *Backend) matrixOf(w *model.Weight) (matrix, error) {
	if m, ok := b.weights[w]; ok {
		return m, nil
	}
	m, data, err := hostMatrix(w)
	if err != nil {
		return matrix{}, err
	}
	if m.ptr, err = b.x.alloc(int64(len(data))); err != nil {
		return matrix{}, err
	}
	b.owned = append(b.owned, m.ptr)
	if err := b.x.upload(m.ptr, data); err != nil {
		return matrix{}, err
	}
	if err := b.x.sync(); err != nil {
		return matrix{}, err
	}
	b.weights[w] = m
	return m, nil
}

// Linear implements model.Backend.
func (b *Backend) Linear(y, x []float32, n int, w *model.Weight) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		err := b.x.do(func() error { return b.linear(y, x, n, w) })
		if err == nil {
			return
		}
		b.fail(fmt.Errorf("cuda: Linear %d×%d by %d×%d: %w", n, w.Cols(), w.Rows(), w.Cols(), err))
	}
	b.cpu.Linear(y, x, n, w)
}

func (b *Backend) linear(y, x []float32, n int, w *model.Weight) error {
	if n == 0 || w.Rows() == 0 {
		return nil
	}
	m, err := b.matrixOf(w)
	if err != nil {
		return err
	}
	xin := x[:n*m.cols]
	yout := y[:n*m.rows]
	dx, err := b.buffer(0, int64(4*len(xin)))
	if err != nil {
		return err
	}
	dy, err := b.buffer(1, int64(4*len(yout)))
	if err != nil {
		return err
	}
	if err := b.x.upload(dx, bytesOf(xin)); err != nil {
		return err
	}
	id, g, err := kernels.Linear(n, m.rows, m.cols, m.bf16)
	if err != nil {
		return err
	}
	if err := b.x.launch(id, g, []arg{ptrArg(dy), ptrArg(dx), ptrArg(m.ptr), i32Arg(n), i32Arg(m.rows), i32Arg(m.cols)}); err != nil {
		return err
	}
	return b.x.download(bytesOf(yout), dy)
}

// sgemmExtent is the number of elements a row-major operand with r×c
// logical rows and columns (before transposition) and leading dimension
// ld spans.
func sgemmExtent(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// Sgemm implements model.Backend.
func (b *Backend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		err := b.x.do(func() error {
			return b.sgemm(transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
		})
		if err == nil {
			return
		}
		b.fail(fmt.Errorf("cuda: Sgemm %d×%d×%d: %w", m, n, k, err))
	}
	b.cpu.Sgemm(transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

func (b *Backend) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) error {
	if m == 0 || n == 0 {
		return nil
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	na, nb, nc := sgemmExtent(ar, ac, lda), sgemmExtent(br, bc, ldb), sgemmExtent(m, n, ldc)
	if k == 0 {
		na, nb = 0, 0
	}
	if na > len(a) || nb > len(bm) || nc > len(c) {
		return fmt.Errorf("operands of %d, %d, %d floats for extents %d, %d, %d", len(a), len(bm), len(c), na, nb, nc)
	}
	var dev [3]driver.Ptr
	for i, s := range [][]float32{a[:na], bm[:nb], c[:nc]} {
		p, err := b.buffer(2+i, int64(4*max(len(s), 1)))
		if err != nil {
			return err
		}
		dev[i] = p
		// C goes up even when beta is 0 (the kernel then does not read
		// it): the copy back covers the padding between rows, which must
		// come back unchanged.
		if len(s) > 0 {
			if err := b.x.upload(p, bytesOf(s)); err != nil {
				return err
			}
		}
	}
	g, err := kernels.SgemmLaunch(m, n, max(k, 1))
	if err != nil {
		return err
	}
	flag := func(t bool) int {
		if t {
			return 1
		}
		return 0
	}
	if err := b.x.launch(kernels.Sgemm, g, []arg{i32Arg(flag(transA)), i32Arg(flag(transB)), i32Arg(m), i32Arg(n), i32Arg(k),
		f32Arg(alpha), ptrArg(dev[0]), i32Arg(lda), ptrArg(dev[1]), i32Arg(ldb), f32Arg(beta), ptrArg(dev[2]), i32Arg(ldc)}); err != nil {
		return err
	}
	return b.x.download(bytesOf(c[:nc]), dev[2])
}

// Backend is a model.Backend.
var _ model.Backend = (*Backend)(nil)
