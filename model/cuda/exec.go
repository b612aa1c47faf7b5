package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/livehat/livehat/model/cuda/internal/cublas"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// executor is where the Runner's and Backend's device work goes: the GPU
// (Device), or in tests a recorder that checks every launch against its
// kernel's signature and every pointer against the allocations, so the
// host-side logic is exercised on machines without a GPU. All methods but
// do run inside do.
type executor interface {
	do(fn func() error) error
	alloc(n int64) (driver.Ptr, error)
	free(p driver.Ptr) error
	upload(dst driver.Ptr, src []byte) error
	download(dst []byte, src driver.Ptr) error
	copyDevice(dst, src driver.Ptr, n int64) error
	launch(id kernels.ID, g kernels.Geometry, args []arg) error
	hasGemm() bool
	gemm(m, n, k int, a, b cublas.Operand, c driver.Ptr, ldc int) error
	capture(fn func() error) (graph, error)
	replay(g graph) error
	destroy(g graph) error
	sync() error
}

// graph is an instantiated CUDA graph.
type graph struct {
	g    driver.Graph
	exec driver.GraphExec
}

// arg is one kernel argument tagged with its C type.
type arg struct {
	kind kernels.Param
	bits uint64
}

func ptrArg(p driver.Ptr) arg { return arg{kernels.Ptr, uint64(p)} }
func i32Arg(v int) arg        { return arg{kernels.I32, uint64(uint32(int32(v)))} }
func i64Arg(v int64) arg      { return arg{kernels.I64, uint64(v)} }
func u64Arg(v uint64) arg     { return arg{kernels.U64, v} }
func f32Arg(v float32) arg    { return arg{kernels.F32, uint64(math.Float32bits(v))} }
func f64Arg(v float64) arg    { return arg{kernels.F64, math.Float64bits(v)} }

// checkArgs verifies that args match kernel id's parameter list, so that a
// launch can never hand a kernel a value of the wrong size or kind, and
// that int arguments fit.
func checkArgs(id kernels.ID, args []arg) error {
	if id < 0 || id >= kernels.NumKernels {
		return fmt.Errorf("cuda: unknown kernel %d", id)
	}
	spec := kernels.Table()[id]
	if len(args) != len(spec.Params) {
		return fmt.Errorf("cuda: kernel %s takes %d arguments, launched with %d", spec.Name, len(spec.Params), len(args))
	}
	for i, a := range args {
		if a.kind != spec.Params[i] {
			return fmt.Errorf("cuda: kernel %s argument %d is a %v, launched with a %v", spec.Name, i, spec.Params[i], a.kind)
		}
		if a.kind == kernels.Ptr && a.bits == 0 {
			return fmt.Errorf("cuda: kernel %s argument %d is a null pointer", spec.Name, i)
		}
	}
	return nil
}

// bytesOf views a slice of plain numbers as bytes, for copies.
func bytesOf[T int32 | uint16 | float32 | uint64 | int64 | byte](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// checkedInt converts a size to the int32 a kernel takes, or fails.
func checkedInt(name string, v int) error {
	if v < 0 || v > math.MaxInt32 {
		return fmt.Errorf("cuda: %s %d does not fit a kernel's int", name, v)
	}
	return nil
}
