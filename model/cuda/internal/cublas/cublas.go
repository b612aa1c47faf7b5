// Package cublas binds the few cuBLAS calls the CUDA backend uses for large
// matrix products (cublasGemmEx and cublasGemmStridedBatchedEx, with
// bfloat16 or float32 inputs and float32 accumulation), loaded at run time
// through purego. cuBLAS ships with the CUDA toolkit, not the driver, so
// it is optional: without it the backend uses its own GEMM kernel.
package cublas

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/livehat/livehat/model/cuda/internal/dl"
)

// LibraryNames are the names libcublas is opened by, newest first.
func LibraryNames() []string {
	return []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}
}

// ErrNoLibrary is wrapped by Load when libcublas cannot be opened.
var ErrNoLibrary = errors.New("cuda: no cuBLAS (libcublas.so)")

const (
	fnCreate = iota
	fnDestroy
	fnSetStream
	fnSetMathMode
	fnGemmEx
	fnGemmStridedBatchedEx
	fnGetStatusName
	numFns
)

// symbols is the cuBLAS symbol table, in fn order. cublas_v2.h maps
// cublasCreate, cublasDestroy and cublasSetStream to their _v2 names; the
// Ex calls have no versioned names (the _64 forms take 64-bit sizes, which
// the backend's shapes never need). cublasGetStatusName exists from
// cuBLAS 11.4 and is optional.
func symbols() []dl.Symbol {
	one := func(n string) dl.Symbol { return dl.Symbol{Names: []string{n}} }
	return []dl.Symbol{
		fnCreate:               one("cublasCreate_v2"),
		fnDestroy:              one("cublasDestroy_v2"),
		fnSetStream:            one("cublasSetStream_v2"),
		fnSetMathMode:          one("cublasSetMathMode"),
		fnGemmEx:               one("cublasGemmEx"),
		fnGemmStridedBatchedEx: one("cublasGemmStridedBatchedEx"),
		fnGetStatusName:        {Names: []string{"cublasGetStatusName"}, Optional: true},
	}
}

// DataType is a cudaDataType_t.
type DataType int32

// Data types of GEMM operands.
const (
	R32F  DataType = 0  // CUDA_R_32F
	R16F  DataType = 2  // CUDA_R_16F
	R16BF DataType = 14 // CUDA_R_16BF
)

// computeType32F is CUBLAS_COMPUTE_32F: float32 accumulation without the
// TF32 shortcut, so float32 weights keep float32 accuracy.
const computeType32F = 68

// gemmDefault is CUBLAS_GEMM_DEFAULT (-1, a 32-bit int; the callee reads
// the low 4 bytes of the argument): cuBLAS's heuristic picks the algorithm
// (tensor cores for bf16 on sm_80+).
const gemmDefault = ^uint32(0)

// statusNames names the cublasStatus_t codes as cublas_api.h does.
func statusNames() map[int32]string {
	return map[int32]string{
		0:  "CUBLAS_STATUS_SUCCESS",
		1:  "CUBLAS_STATUS_NOT_INITIALIZED",
		3:  "CUBLAS_STATUS_ALLOC_FAILED",
		7:  "CUBLAS_STATUS_INVALID_VALUE",
		8:  "CUBLAS_STATUS_ARCH_MISMATCH",
		11: "CUBLAS_STATUS_MAPPING_ERROR",
		13: "CUBLAS_STATUS_EXECUTION_FAILED",
		14: "CUBLAS_STATUS_INTERNAL_ERROR",
		15: "CUBLAS_STATUS_NOT_SUPPORTED",
		16: "CUBLAS_STATUS_LICENSE_ERROR",
	}
}

// Error is a failed cuBLAS call.
type Error struct {
	Op   string
	Code int32
	Name string
}

func (e *Error) Error() string { return fmt.Sprintf("cublas: %s: %s", e.Op, e.Name) }

// StatusName names a cublasStatus_t code.
func StatusName(code int32) string {
	if n, ok := statusNames()[code]; ok {
		return n
	}
	return fmt.Sprintf("cublasStatus(%d)", code)
}

// Library is the loaded cuBLAS library.
type Library struct {
	lib   *dl.Library
	addrs []uintptr
}

// Load opens libcublas. The driver's primary context must be current on
// the calling thread before Create.
func Load() (*Library, error) {
	lib, err := dl.Open(LibraryNames()...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrary, err)
	}
	addrs, err := lib.Resolve(symbols())
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return &Library{lib: lib, addrs: addrs}, nil
}

// Path returns the name the library was opened by.
func (l *Library) Path() string { return l.lib.Path }

//go:uintptrescapes
func (l *Library) call(f int, args ...uintptr) error {
	r := int32(dl.Call(l.addrs[f], args...))
	if r == 0 {
		return nil
	}
	name := StatusName(r)
	if p := l.addrs[fnGetStatusName]; p != 0 {
		if s := dl.GoString(dl.Call(p, uintptr(r)), 128); s != "" {
			name = s
		}
	}
	return &Error{Op: symbols()[f].Names[0], Code: r, Name: name}
}

// Handle is a cublasHandle_t bound to the context current at Create.
type Handle struct {
	l *Library
	h uintptr
}

// mathModeDefault is CUBLAS_DEFAULT_MATH: tensor cores where the data
// types allow them, no TF32 for float32 (which would drop precision).
const mathModeDefault = 0

// Create makes a handle on the current context and binds it to stream.
func (l *Library) Create(stream uintptr) (*Handle, error) {
	var h uintptr
	if err := l.call(fnCreate, uintptr(unsafe.Pointer(&h))); err != nil {
		return nil, err
	}
	hd := &Handle{l: l, h: h}
	if err := l.call(fnSetStream, h, stream); err != nil {
		hd.Destroy()
		return nil, err
	}
	if err := l.call(fnSetMathMode, h, mathModeDefault); err != nil {
		hd.Destroy()
		return nil, err
	}
	return hd, nil
}

// Destroy releases the handle.
func (h *Handle) Destroy() error { return h.l.call(fnDestroy, h.h) }

// Operand is one matrix operand of a row-major GEMM: its device address,
// element type, leading dimension (elements between rows) and whether it
// is used transposed.
type Operand struct {
	Ptr   uint64
	Type  DataType
	LD    int
	Trans bool
}

// colMajor is a cuBLAS (column-major) GEMM call's shape and operands.
type colMajor struct {
	transA, transB int32
	m, n, k        int
	a, b           Operand
}

// toColMajor maps the row-major product C[m×n] = op(A)·op(B) onto
// cuBLAS's column-major convention: a row-major matrix is its transpose in
// column-major, so cuBLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ, swapping the
// operands and the roles of m and n while keeping each operand's
// transposition flag and leading dimension.
func toColMajor(m, n, k int, a, b Operand) colMajor {
	op := func(t bool) int32 {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0 // CUBLAS_OP_N
	}
	return colMajor{transA: op(b.Trans), transB: op(a.Trans), m: n, n: m, k: k, a: b, b: a}
}

// Gemm computes the row-major C[m×n] = alpha·op(A)·op(B) + beta·C with
// float32 accumulation; C is float32 with leading dimension ldc.
func (h *Handle) Gemm(m, n, k int, alpha float32, a, b Operand, beta float32, c uint64, ldc int) error {
	cm := toColMajor(m, n, k, a, b)
	return h.l.call(fnGemmEx, h.h, uintptr(cm.transA), uintptr(cm.transB),
		uintptr(cm.m), uintptr(cm.n), uintptr(cm.k),
		uintptr(unsafe.Pointer(&alpha)),
		uintptr(cm.a.Ptr), uintptr(cm.a.Type), uintptr(cm.a.LD),
		uintptr(cm.b.Ptr), uintptr(cm.b.Type), uintptr(cm.b.LD),
		uintptr(unsafe.Pointer(&beta)),
		uintptr(c), uintptr(R32F), uintptr(ldc),
		computeType32F, uintptr(gemmDefault))
}

// GemmStridedBatched runs batch row-major GEMMs whose operands lie strideA,
// strideB and strideC elements apart.
func (h *Handle) GemmStridedBatched(m, n, k int, alpha float32, a Operand, strideA int64, b Operand, strideB int64, beta float32, c uint64, ldc int, strideC int64, batch int) error {
	cm := toColMajor(m, n, k, a, b)
	sa, sb := strideB, strideA // the operands swap with the layout
	return h.l.call(fnGemmStridedBatchedEx, h.h, uintptr(cm.transA), uintptr(cm.transB),
		uintptr(cm.m), uintptr(cm.n), uintptr(cm.k),
		uintptr(unsafe.Pointer(&alpha)),
		uintptr(cm.a.Ptr), uintptr(cm.a.Type), uintptr(cm.a.LD), uintptr(sa),
		uintptr(cm.b.Ptr), uintptr(cm.b.Type), uintptr(cm.b.LD), uintptr(sb),
		uintptr(unsafe.Pointer(&beta)),
		uintptr(c), uintptr(R32F), uintptr(ldc), uintptr(strideC),
		uintptr(batch), computeType32F, uintptr(gemmDefault))
}
