//go:build !(amd64 || arm64) || purego

package kernel

// Without assembly every kernel is its portable Go version.

func gemmKernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	gemmKernelGo(k, a, b, c, ldc, alpha, beta)
}

func dotF32(a, b []float32) float32 { return dotGo(a, b) }

func rows4F32(k int, w []float32, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	rows4F32Go(k, w, ldw, x, ldx, nb, out)
}

func rows4BF16(k int, w []uint16, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	rows4BF16Go(k, w, ldw, x, ldx, nb, out)
}

func rows4Q8(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx, nb int, out *[8]float32) {
	rows4Q8Go(k, w, ldw, scales, lds, x, ldx, nb, out)
}

// kernelSet is the one kernel set of this build, checked against
// KernelsEnv at start-up (forcing another one is an error).
var kernelSet = mustChooseKernels([]string{"purego"})

// Kernels names the kernel set in use: "purego".
func Kernels() string { return kernelSet }

// Accelerated reports whether the assembly kernels are in use.
func Accelerated() bool { return false }

func rows2x4F32(k int, w []float32, ldw int, x []float32, ldx int, out *[8]float32) {
	rows2x4F32Go(k, w, ldw, x, ldx, out)
}

func rows2x4BF16(k int, w []uint16, ldw int, x []float32, ldx int, out *[8]float32) {
	rows2x4BF16Go(k, w, ldw, x, ldx, out)
}

func rows2x4Q8(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx int, out *[8]float32) {
	rows2x4Q8Go(k, w, ldw, scales, lds, x, ldx, out)
}

func packPanelF32(dst []float32, w []float32, ldw, kb int) {
	packPanelGo(dst, w, ldw, 0, kb, identity)
}

func packPanelBF16(dst []float32, w []uint16, ldw, kb int) {
	packPanelGo(dst, w, ldw, 0, kb, bf16)
}

func packPanelQ8(dst []float32, w []int8, ldw int, scales []float32, ldsc, kb int) {
	packPanelQ8Go(dst, w, ldw, scales, ldsc, 0, kb)
}

func gemvT(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	gemvTGo(y, w, rows, cols, ldw, x)
}

func axpy(y []float32, alpha float32, x []float32) { axpyGo(y, alpha, x) }

// q8Int16Kernels reports whether rows4Q8X16 is worth preparing for.
func q8Int16Kernels() bool { return false }

// q8ByteKernels reports whether rows4Q8X16 reads the activation split
// into bytes: never in this build.
func q8ByteKernels() bool { return false }

func rows4Q8X16(k int, w []int8, ldw int, xr q8Row, x []float32, scales []float32, lds int, out *[4]float32) {
	rows4Q8X16Go(k, w, ldw, xr, x, scales, lds, out)
}

func quantizeActivation(xd []float32, xq []int16, xs []float32, x []float32) bool {
	return quantizeActivationGo(xd, xq, xs, x)
}

func expSlice(dst, src []float32) { expGo(dst, src) }

func softmax(x []float32) { softmaxGo(x) }

// gemmWideKernel returns nil: this build has no 12×32 GEMM kernel.
func gemmWideKernel() func(k int, a, b, c []float32, ldc int, alpha, beta float32) { return nil }

func packPanelA(dst, a []float32, lda, kb int) { packPanelAGo(dst, a, lda, 0, kb) }

func copyPanelB(dst, b []float32, ldb, kb int) { copyPanelBGo(dst, b, ldb, kb) }
