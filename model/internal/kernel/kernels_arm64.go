//go:build !purego

package kernel

// NEON kernels in kernels_arm64.s (Advanced SIMD is part of every arm64
// CPU) for the GEMM micro-kernel, the fp32/bf16 mat-vec kernels, the
// single-row Q8 mat-vec, GemvT and Dot; the batched Q8 kernels, the B
// packers, Exp and Softmax run their portable Go versions.

//go:noescape
func gemm6x16NEON(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func rows4F32NEON(k int, w *float32, ldw int, x *float32, acc *[32]float32)

//go:noescape
func rows4BF16NEON(k int, w *uint16, ldw int, x *float32, acc *[32]float32)

//go:noescape
func rows2x4F32NEON(k int, w *float32, ldw int, x *float32, ldx int, acc *[64]float32)

//go:noescape
func rows2x4BF16NEON(k int, w *uint16, ldw int, x *float32, ldx int, acc *[64]float32)

//go:noescape
func gemvT64NEON(rows int, w *float32, ldw int, x *float32, y *float32)

//go:noescape
func rows4Q8X16NEON(nblk int, w *int8, ldw int, xq *int16, xs *float32, scales *float32, lds int, acc *[16]float32)

//go:noescape
func dotNEON(n int, a, b *float32, acc *[16]float32)

// kernelSet is the one kernel set of this build, checked against
// KernelsEnv at start-up (forcing another one is an error).
var kernelSet = mustChooseKernels([]string{"neon"})

// Kernels names the kernel set in use: "neon".
func Kernels() string { return kernelSet }

// Accelerated reports whether the assembly kernels are in use.
func Accelerated() bool { return true }

// q8Int16Kernels reports whether rows4Q8X16 is worth preparing for.
func q8Int16Kernels() bool { return true }

// q8ByteKernels reports whether rows4Q8X16 reads the activation split
// into bytes: never in this build.
func q8ByteKernels() bool { return false }

func gemmKernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	if k == 0 {
		gemmKernelGo(k, a, b, c, ldc, alpha, beta)
		return
	}
	_ = a[k*gemmMR-1]
	_ = b[k*gemmNR-1]
	_ = c[(gemmMR-1)*ldc+gemmNR-1]
	gemm6x16NEON(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

// rows4NEON runs a 4-row NEON kernel for each batch row and adds the
// lanes and the ragged tail in Go.
func rows4NEON[W any](k int, w []W, ldw int, x []float32, ldx, nb int, out *[8]float32, widen func(W) float32, kern func(k int, w *W, ldw int, x *float32, acc *[32]float32)) {
	k8 := k &^ 7
	if len(w) < 3*ldw+k || len(x) < (nb-1)*ldx+k {
		panic("kernel: internal error: mat-vec block out of range")
	}
	var acc [32]float32
	for b := range nb {
		xb := x[b*ldx : b*ldx+k]
		kern(k8, &w[0], ldw, &xb[0], &acc)
		for r := range 4 {
			l := acc[r*8 : r*8+8]
			s := ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]))
			wr := w[r*ldw : r*ldw+k]
			for i := k8; i < k; i++ {
				s += widen(wr[i]) * xb[i]
			}
			out[b*4+r] = s
		}
	}
}

func rows4F32(k int, w []float32, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	if k < 8 {
		rows4F32Go(k, w, ldw, x, ldx, nb, out)
		return
	}
	rows4NEON(k, w, ldw, x, ldx, nb, out, identity, rows4F32NEON)
}

func rows4BF16(k int, w []uint16, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	if k < 8 {
		rows4BF16Go(k, w, ldw, x, ldx, nb, out)
		return
	}
	rows4NEON(k, w, ldw, x, ldx, nb, out, bf16, rows4BF16NEON)
}

func dotF32(a, b []float32) float32 {
	n := len(a) &^ 15
	if n == 0 {
		return dotGo(a, b)
	}
	b = b[:len(a)]
	var acc [16]float32
	dotNEON(n, &a[0], &b[0], &acc)
	return sumLanes(acc[:]) + dotGo(a[n:], b[n:])
}

// sumLanes adds the partial sums of four-lane vectors pairwise.
func sumLanes(l []float32) float32 {
	for len(l) > 1 {
		h := len(l) / 2
		for i := range h {
			l[i] += l[h+i]
		}
		l = l[:h]
	}
	return l[0]
}

func rows4Q8(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx, nb int, out *[8]float32) {
	rows4Q8Go(k, w, ldw, scales, lds, x, ldx, nb, out)
}

func rows4Q8X16(k int, w []int8, ldw int, xr q8Row, x []float32, scales []float32, lds int, out *[4]float32) {
	nblk := k / Q8Block
	k32 := nblk * Q8Block
	if nblk == 0 {
		rows4Q8X16Go(k, w, ldw, xr, x, scales, lds, out)
		return
	}
	xq, xs := xr.xq, xr.xs
	if len(w) < 3*ldw+k || len(xq) < k32 || len(xs) < nblk || len(scales) < 3*lds+nblk || len(x) < k {
		panic("kernel: internal error: Q8 mat-vec block out of range")
	}
	var acc [16]float32
	rows4Q8X16NEON(nblk, &w[0], ldw, &xq[0], &xs[0], &scales[0], lds, &acc)
	for r := range 4 {
		l := acc[r*4 : r*4+4]
		out[r] = (l[0] + l[1]) + (l[2] + l[3])
		if k32 < k {
			out[r] += dotQ8Go(k-k32, w[r*ldw+k32:], scales[r*lds+nblk:], x[k32:])
		}
	}
}

// rows2x4NEON runs a 2-row×4-batch NEON kernel and adds the lanes and the
// ragged tail in Go.
func rows2x4NEON[W any](k int, w []W, ldw int, x []float32, ldx int, out *[8]float32, widen func(W) float32, kern func(k int, w *W, ldw int, x *float32, ldx int, acc *[64]float32)) {
	k8 := k &^ 7
	if len(w) < ldw+k || len(x) < 3*ldx+k {
		panic("kernel: internal error: mat-vec block out of range")
	}
	var acc [64]float32
	kern(k8, &w[0], ldw, &x[0], ldx, &acc)
	for o := range 8 {
		l0, l1 := acc[o*4:o*4+4], acc[32+o*4:32+o*4+4]
		s := ((l0[0] + l1[0]) + (l0[1] + l1[1])) + ((l0[2] + l1[2]) + (l0[3] + l1[3]))
		b, r := o/2, o%2
		wr, xb := w[r*ldw:r*ldw+k], x[b*ldx:b*ldx+k]
		for i := k8; i < k; i++ {
			s += widen(wr[i]) * xb[i]
		}
		out[o] = s
	}
}

func rows2x4F32(k int, w []float32, ldw int, x []float32, ldx int, out *[8]float32) {
	if k < 8 {
		rows2x4F32Go(k, w, ldw, x, ldx, out)
		return
	}
	rows2x4NEON(k, w, ldw, x, ldx, out, identity, rows2x4F32NEON)
}

func rows2x4BF16(k int, w []uint16, ldw int, x []float32, ldx int, out *[8]float32) {
	if k < 8 {
		rows2x4BF16Go(k, w, ldw, x, ldx, out)
		return
	}
	rows2x4NEON(k, w, ldw, x, ldx, out, bf16, rows2x4BF16NEON)
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

// gemvT runs the assembly on 64-column strips and the portable loop on
// the last cols%64 columns.
func gemvT(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	c64 := cols &^ 63
	if c64 == 0 {
		gemvTGo(y, w, rows, cols, ldw, x)
		return
	}
	_ = w[(rows-1)*ldw+cols-1]
	_ = x[rows-1]
	for c := 0; c < c64; c += 64 {
		_ = y[c+63]
		gemvT64NEON(rows, &w[c], ldw, &x[0], &y[c])
	}
	if c64 < cols {
		for i := range rows {
			axpyGo(y[c64:cols], x[i], w[i*ldw+c64:i*ldw+cols])
		}
	}
}

func axpy(y []float32, alpha float32, x []float32) { axpyGo(y, alpha, x) }

func quantizeActivation(xd []float32, xq []int16, xs []float32, x []float32) bool {
	return quantizeActivationGo(xd, xq, xs, x)
}

func expSlice(dst, src []float32) { expGo(dst, src) }

func softmax(x []float32) { softmaxGo(x) }

// gemmWideKernel returns nil: this build has no 12×32 GEMM kernel.
func gemmWideKernel() func(k int, a, b, c []float32, ldc int, alpha, beta float32) { return nil }

func packPanelA(dst, a []float32, lda, kb int) { packPanelAGo(dst, a, lda, 0, kb) }

func copyPanelB(dst, b []float32, ldb, kb int) { copyPanelBGo(dst, b, ldb, kb) }
