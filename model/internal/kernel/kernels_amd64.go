//go:build !purego

package kernel

import "math"

// Assembly kernels: kernels_amd64.s (AVX2 and FMA) and
// kernels_avx512_amd64.s (AVX-512), used as the kernel set in use (isa)
// allows; otherwise the portable Go versions run.

//go:noescape
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv() (eax, edx uint32)

//go:noescape
func gemm6x16AVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm12x32AVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func rows4F32AVX512(k int, w *float32, ldw int, x *float32, ldx int, nb int, out *[8]float32)

//go:noescape
func rows4BF16AVX512(k int, w *uint16, ldw int, x *float32, ldx int, nb int, out *[8]float32)

//go:noescape
func rows2x4F32AVX512(k int, w *float32, ldw int, x *float32, ldx int, out *[8]float32)

//go:noescape
func rows2x4BF16AVX512(k int, w *uint16, ldw int, x *float32, ldx int, out *[8]float32)

//go:noescape
func rows4Q8AVX512(k int, w *int8, ldw int, x *float32, ldx int, nb int, out *[8]float32, scales *float32, lds int)

//go:noescape
func rows2x4Q8AVX512(k int, w *int8, ldw int, x *float32, ldx int, out *[8]float32, scales *float32, lds int)

//go:noescape
func rows4F32AVX2(k int, w *float32, ldw int, x *float32, ldx int, nb int, out *[8]float32)

//go:noescape
func rows4BF16AVX2(k int, w *uint16, ldw int, x *float32, ldx int, nb int, out *[8]float32)

//go:noescape
func rows4Q8AVX2(k int, w *int8, ldw int, x *float32, ldx int, nb int, out *[8]float32, scales *float32, lds int)

//go:noescape
func rows2x4F32AVX2(k int, w *float32, ldw int, x *float32, ldx int, out *[8]float32)

//go:noescape
func rows2x4BF16AVX2(k int, w *uint16, ldw int, x *float32, ldx int, out *[8]float32)

//go:noescape
func rows2x4Q8AVX2(k int, w *int8, ldw int, x *float32, ldx int, out *[8]float32, scales *float32, lds int)

//go:noescape
func pack8F32AVX2(k int, src *float32, lds int, dst *float32)

//go:noescape
func pack8BF16AVX2(k int, src *uint16, lds int, dst *float32)

//go:noescape
func pack8Q8AVX2(k int, src *int8, lds int, dst *float32, scales *float32, ldsc int)

//go:noescape
func packA6AVX2(k int, src *float32, lds int, dst *float32)

//go:noescape
func copyRows16AVX2(k int, src *float32, lds int, dst *float32)

//go:noescape
func gemvT64AVX2(rows int, w *float32, ldw int, x *float32, y *float32)

//go:noescape
func axpyAVX2(n int, alpha float32, x, y *float32)

//go:noescape
func rows4Q8X16AVX2(nblk int, w *int8, ldw int, xq *int16, xs *float32, scales *float32, lds int, out *[4]float32)

//go:noescape
func rows4Q8X16VNNI(nblk int, w *int8, ldw int, xv *byte, xs *float32, scales *float32, lds int, out *[4]float32)

//go:noescape
func quantX16AVX2(nblk int, x, xd *float32, xq *int16, xs *float32) (ok bool)

//go:noescape
func dotAVX2(n int, a, b *float32) float32

//go:noescape
func expAVX2(n int, src, dst *float32, shift float32, table *[15]float32) (sum float32)

//go:noescape
func scaleAVX2(n int, alpha float32, x *float32)

//go:noescape
func maxAVX2(n int, x *float32) (m float32, nan bool)

// isaLevel is an instruction set the amd64 kernels can use; a higher
// level includes the lower ones.
type isaLevel int8

const (
	isaGo     isaLevel = iota // portable Go
	isaAVX2                   // AVX2 and FMA
	isaAVX512                 // AVX-512 F, BW, DQ and VL, with AVX2 for what has no 512-bit kernel
)

// isaNames maps levels to the kernel set names of KernelsEnv.
var isaNames = map[isaLevel]string{isaGo: "purego", isaAVX2: "avx2", isaAVX512: "avx512"}

// cpuHas is what this CPU and OS support, read once at start-up.
var cpuHas = detectCPU()

// isa is the kernel set in use, chosen once at start-up from cpuHas and
// KernelsEnv; only the tests switch it (useKernels), to run every set the
// machine has against the reference.
var isa = levelOf(mustChooseKernels(availableKernelSets()))

// cpuFeatures lists what the kernels may use.
type cpuFeatures struct {
	avx2FMA bool // AVX, AVX2, FMA, and the OS saves YMM
	avx512  bool // AVX-512 F, BW, DQ, VL, and the OS saves ZMM and the mask registers
	vnni    bool // AVX512_VNNI (VPDPBUSD)
}

// detectCPU reads CPUID and XCR0 (the registers the OS saves on a context
// switch: without that, AVX instructions fault).
func detectCPU() cpuFeatures {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return cpuFeatures{}
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return cpuFeatures{}
	}
	xcr0, _ := xgetbv()
	if xcr0&6 != 6 {
		return cpuFeatures{}
	}
	_, ebx7, ecx7, _ := cpuid(7, 0)
	var f cpuFeatures
	f.avx2FMA = ebx7&(1<<5) != 0
	const avx512f, avx512dq, avx512bw, avx512vl = 1 << 16, 1 << 17, 1 << 30, 1 << 31
	const zmmState = 0xe0 // opmask, upper halves of ZMM0–15, ZMM16–31
	f.avx512 = f.avx2FMA && ebx7&(avx512f|avx512dq|avx512bw|avx512vl) == avx512f|avx512dq|avx512bw|avx512vl &&
		xcr0&zmmState == zmmState
	f.vnni = f.avx512 && ecx7&(1<<11) != 0
	return f
}

// availableKernelSets lists the kernel sets this CPU runs, best first.
func availableKernelSets() []string {
	var sets []string
	if cpuHas.avx512 {
		sets = append(sets, isaNames[isaAVX512])
	}
	if cpuHas.avx2FMA {
		sets = append(sets, isaNames[isaAVX2])
	}
	return append(sets, isaNames[isaGo])
}

// levelOf is the level of a kernel set name that availableKernelSets gave.
func levelOf(name string) isaLevel {
	for l, n := range isaNames {
		if n == name {
			return l
		}
	}
	panic("kernel: internal error: unknown kernel set " + name)
}

// Kernels names the kernel set in use: "avx512", "avx2" or "purego".
func Kernels() string { return isaNames[isa] }

// Accelerated reports whether the assembly kernels are in use.
func Accelerated() bool { return isa >= isaAVX2 }

// q8Int16Kernels reports whether rows4Q8X16 is worth preparing for.
func q8Int16Kernels() bool { return isa >= isaAVX2 }

// q8ByteKernels reports whether rows4Q8X16 reads the activation split
// into bytes (q8Row.xv), for VPDPBUSD.
func q8ByteKernels() bool { return isa >= isaAVX512 && cpuHas.vnni }

func gemmKernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	if isa < isaAVX2 || k == 0 {
		gemmKernelGo(k, a, b, c, ldc, alpha, beta)
		return
	}
	// The kernel reads k·gemmMR values of a, k·gemmNR of b and writes a
	// 6×16 tile of c: check the lengths once here.
	_ = a[k*gemmMR-1]
	_ = b[k*gemmNR-1]
	_ = c[(gemmMR-1)*ldc+gemmNR-1]
	gemm6x16AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

// gemmWideKernel returns the 12×32 GEMM kernel, or nil where the CPU
// has none: the driver then computes 6×16 tiles only.
func gemmWideKernel() func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	if isa >= isaAVX512 {
		return gemmKernel12x32
	}
	return nil
}

// gemmKernel12x32 is gemmKernel on a 12×32 tile: a holds two packed A
// panels (2·k·gemmMR values), b two packed B panels (2·k·gemmNR values).
func gemmKernel12x32(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	_ = a[2*k*gemmMR-1]
	_ = b[2*k*gemmNR-1]
	_ = c[(2*gemmMR-1)*ldc+2*gemmNR-1]
	gemm12x32AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

func dotF32(a, b []float32) float32 {
	n := len(a) &^ 31
	if isa < isaAVX2 || n == 0 {
		return dotGo(a, b)
	}
	b = b[:len(a)]
	return dotAVX2(n, &a[0], &b[0]) + dotGo(a[n:], b[n:])
}

// rowsTail adds the columns [k8, k) that the assembly left to out.
func rowsTail[W any](k8, k int, w []W, ldw int, x []float32, ldx, nb int, out *[8]float32, widen func(W) float32) {
	for b := range nb {
		xb := x[b*ldx : b*ldx+k]
		for r := range 4 {
			wr := w[r*ldw : r*ldw+k]
			var s float32
			for i := k8; i < k; i++ {
				s += widen(wr[i]) * xb[i]
			}
			out[b*4+r] += s
		}
	}
}

// checkRows panics unless w holds nw rows and x holds nx rows of k values,
// since the assembly reads them unchecked.
func checkRows(nw, nx, k, lenW, ldw, lenX, ldx int) {
	if lenW < (nw-1)*ldw+k || lenX < (nx-1)*ldx+k {
		panic("kernel: internal error: mat-vec block out of range")
	}
}

func rows4F32(k int, w []float32, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	if isa >= isaAVX512 && k > 0 {
		checkRows(4, nb, k, len(w), ldw, len(x), ldx)
		rows4F32AVX512(k, &w[0], ldw, &x[0], ldx, nb, out)
		return
	}
	k8 := k &^ 7
	if isa < isaAVX2 || k8 == 0 {
		rows4F32Go(k, w, ldw, x, ldx, nb, out)
		return
	}
	checkRows(4, nb, k, len(w), ldw, len(x), ldx)
	rows4F32AVX2(k8, &w[0], ldw, &x[0], ldx, nb, out)
	if k8 < k {
		rowsTail(k8, k, w, ldw, x, ldx, nb, out, identity)
	}
}

func rows4BF16(k int, w []uint16, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	if isa >= isaAVX512 && k > 0 {
		checkRows(4, nb, k, len(w), ldw, len(x), ldx)
		rows4BF16AVX512(k, &w[0], ldw, &x[0], ldx, nb, out)
		return
	}
	k8 := k &^ 7
	if isa < isaAVX2 || k8 == 0 {
		rows4BF16Go(k, w, ldw, x, ldx, nb, out)
		return
	}
	checkRows(4, nb, k, len(w), ldw, len(x), ldx)
	rows4BF16AVX2(k8, &w[0], ldw, &x[0], ldx, nb, out)
	if k8 < k {
		rowsTail(k8, k, w, ldw, x, ldx, nb, out, bf16)
	}
}

func rows4Q8(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx, nb int, out *[8]float32) {
	nblk := k / Q8Block
	k32 := nblk * Q8Block
	if isa < isaAVX2 || nblk == 0 {
		rows4Q8Go(k, w, ldw, scales, lds, x, ldx, nb, out)
		return
	}
	checkRows(4, nb, k, len(w), ldw, len(x), ldx)
	_ = scales[3*lds+nblk-1]
	if isa >= isaAVX512 {
		rows4Q8AVX512(k32, &w[0], ldw, &x[0], ldx, nb, out, &scales[0], lds)
	} else {
		rows4Q8AVX2(k32, &w[0], ldw, &x[0], ldx, nb, out, &scales[0], lds)
	}
	if k32 < k {
		for b := range nb {
			for r := range 4 {
				out[b*4+r] += dotQ8Go(k-k32, w[r*ldw+k32:], scales[r*lds+nblk:], x[b*ldx+k32:])
			}
		}
	}
}

// rows2x4Tail adds the columns [k0, k) that the assembly left to out.
func rows2x4Tail[W any](k0, k int, w []W, ldw int, x []float32, ldx int, out *[8]float32, widen func(W) float32) {
	for b := range 4 {
		xb := x[b*ldx : b*ldx+k]
		for r := range 2 {
			wr := w[r*ldw : r*ldw+k]
			var s float32
			for i := k0; i < k; i++ {
				s += widen(wr[i]) * xb[i]
			}
			out[b*2+r] += s
		}
	}
}

func rows2x4F32(k int, w []float32, ldw int, x []float32, ldx int, out *[8]float32) {
	if isa >= isaAVX512 && k > 0 {
		checkRows(2, 4, k, len(w), ldw, len(x), ldx)
		rows2x4F32AVX512(k, &w[0], ldw, &x[0], ldx, out)
		return
	}
	k8 := k &^ 7
	if isa < isaAVX2 || k8 == 0 {
		rows2x4F32Go(k, w, ldw, x, ldx, out)
		return
	}
	checkRows(2, 4, k, len(w), ldw, len(x), ldx)
	rows2x4F32AVX2(k8, &w[0], ldw, &x[0], ldx, out)
	if k8 < k {
		rows2x4Tail(k8, k, w, ldw, x, ldx, out, identity)
	}
}

func rows2x4BF16(k int, w []uint16, ldw int, x []float32, ldx int, out *[8]float32) {
	if isa >= isaAVX512 && k > 0 {
		checkRows(2, 4, k, len(w), ldw, len(x), ldx)
		rows2x4BF16AVX512(k, &w[0], ldw, &x[0], ldx, out)
		return
	}
	k8 := k &^ 7
	if isa < isaAVX2 || k8 == 0 {
		rows2x4BF16Go(k, w, ldw, x, ldx, out)
		return
	}
	checkRows(2, 4, k, len(w), ldw, len(x), ldx)
	rows2x4BF16AVX2(k8, &w[0], ldw, &x[0], ldx, out)
	if k8 < k {
		rows2x4Tail(k8, k, w, ldw, x, ldx, out, bf16)
	}
}

func rows2x4Q8(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx int, out *[8]float32) {
	nblk := k / Q8Block
	k32 := nblk * Q8Block
	if isa < isaAVX2 || nblk == 0 {
		rows2x4Q8Go(k, w, ldw, scales, lds, x, ldx, out)
		return
	}
	checkRows(2, 4, k, len(w), ldw, len(x), ldx)
	_ = scales[lds+nblk-1]
	if isa >= isaAVX512 {
		rows2x4Q8AVX512(k32, &w[0], ldw, &x[0], ldx, out, &scales[0], lds)
	} else {
		rows2x4Q8AVX2(k32, &w[0], ldw, &x[0], ldx, out, &scales[0], lds)
	}
	if k32 < k {
		for b := range 4 {
			for r := range 2 {
				out[b*2+r] += dotQ8Go(k-k32, w[r*ldw+k32:], scales[r*lds+nblk:], x[b*ldx+k32:])
			}
		}
	}
}

// checkPanel panics unless w holds gemmNR rows of kb values and dst a full
// packed panel, since the assembly reads and writes them unchecked.
func checkPanel(lenDst, lenW, ldw, kb int) {
	if lenDst < kb*gemmNR || lenW < (gemmNR-1)*ldw+kb {
		panic("kernel: internal error: packed panel out of range")
	}
}

func packPanelF32(dst []float32, w []float32, ldw, kb int) {
	k8 := kb &^ 7
	if isa < isaAVX2 || k8 == 0 {
		packPanelGo(dst, w, ldw, 0, kb, identity)
		return
	}
	checkPanel(len(dst), len(w), ldw, kb)
	pack8F32AVX2(k8, &w[0], ldw, &dst[0])
	pack8F32AVX2(k8, &w[8*ldw], ldw, &dst[8])
	packPanelGo(dst, w, ldw, k8, kb, identity)
}

func packPanelBF16(dst []float32, w []uint16, ldw, kb int) {
	k8 := kb &^ 7
	if isa < isaAVX2 || k8 == 0 {
		packPanelGo(dst, w, ldw, 0, kb, bf16)
		return
	}
	checkPanel(len(dst), len(w), ldw, kb)
	pack8BF16AVX2(k8, &w[0], ldw, &dst[0])
	pack8BF16AVX2(k8, &w[8*ldw], ldw, &dst[8])
	packPanelGo(dst, w, ldw, k8, kb, bf16)
}

func packPanelQ8(dst []float32, w []int8, ldw int, scales []float32, ldsc, kb int) {
	k32 := kb &^ (Q8Block - 1)
	if isa < isaAVX2 || k32 == 0 {
		packPanelQ8Go(dst, w, ldw, scales, ldsc, 0, kb)
		return
	}
	checkPanel(len(dst), len(w), ldw, kb)
	if len(scales) < (gemmNR-1)*ldsc+k32/Q8Block {
		panic("kernel: internal error: packed panel scales out of range")
	}
	pack8Q8AVX2(k32, &w[0], ldw, &dst[0], &scales[0], ldsc)
	pack8Q8AVX2(k32, &w[8*ldw], ldw, &dst[8], &scales[8*ldsc], ldsc)
	packPanelQ8Go(dst, w, ldw, scales, ldsc, k32, kb)
}

// packPanelA packs a full A panel (gemmMR rows of a row-major op(A)), the
// assembly taking the columns in groups of four.
func packPanelA(dst, a []float32, lda, kb int) {
	k4 := kb &^ 3
	if isa < isaAVX2 || k4 == 0 {
		packPanelAGo(dst, a, lda, 0, kb)
		return
	}
	if len(dst) < kb*gemmMR || len(a) < (gemmMR-1)*lda+kb {
		panic("kernel: internal error: packed A panel out of range")
	}
	packA6AVX2(k4, &a[0], lda, &dst[0])
	packPanelAGo(dst, a, lda, k4, kb)
}

// copyPanelB packs a full B panel from a row-major op(B).
func copyPanelB(dst, b []float32, ldb, kb int) {
	if isa < isaAVX2 || kb == 0 {
		copyPanelBGo(dst, b, ldb, kb)
		return
	}
	if len(dst) < kb*gemmNR || len(b) < (kb-1)*ldb+gemmNR {
		panic("kernel: internal error: packed B panel out of range")
	}
	copyRows16AVX2(kb, &b[0], ldb, &dst[0])
}

// gemvT runs the assembly on 64-column strips (the sums stay in registers
// for the whole strip) and the portable loop on the last cols%64 columns.
func gemvT(y []float32, w []float32, rows, cols, ldw int, x []float32) {
	c64 := cols &^ 63
	if isa < isaAVX2 || c64 == 0 {
		gemvTGo(y, w, rows, cols, ldw, x)
		return
	}
	_ = w[(rows-1)*ldw+cols-1] // the assembly reads rows×c64 of w unchecked
	_ = x[rows-1]
	for c := 0; c < c64; c += 64 {
		_ = y[c+63]
		gemvT64AVX2(rows, &w[c], ldw, &x[0], &y[c])
	}
	if c64 < cols {
		for i := range rows {
			axpyGo(y[c64:cols], x[i], w[i*ldw+c64:i*ldw+cols])
		}
	}
}

func axpy(y []float32, alpha float32, x []float32) {
	n := len(y) &^ 7
	if isa < isaAVX2 || n == 0 {
		axpyGo(y, alpha, x)
		return
	}
	x = x[:len(y)]
	axpyAVX2(n, alpha, &x[0], &y[0])
	axpyGo(y[n:], alpha, x[n:])
}

// rows4Q8X16 sets out[r] = Σ_{i<k} W[r,i]·x[i] for four Q8 rows against an
// activation quantized to int16 per block (xq, xs, covering the full
// blocks of x); the last partial block uses x itself.
func rows4Q8X16(k int, w []int8, ldw int, xr q8Row, x []float32, scales []float32, lds int, out *[4]float32) {
	nblk := k / Q8Block
	k32 := nblk * Q8Block
	if isa < isaAVX2 || nblk == 0 {
		rows4Q8X16Go(k, w, ldw, xr, x, scales, lds, out)
		return
	}
	xq, xs := xr.xq, xr.xs
	if len(w) < 3*ldw+k || len(xq) < k32 || len(xs) < nblk || len(scales) < 3*lds+nblk || len(x) < k {
		panic("kernel: internal error: Q8 mat-vec block out of range")
	}
	if xr.xv != nil && q8ByteKernels() {
		if len(xr.xv) < ceilDiv(nblk, 2)*q8SplitBytes {
			panic("kernel: internal error: split Q8 activation too short")
		}
		rows4Q8X16VNNI(nblk, &w[0], ldw, &xr.xv[0], &xs[0], &scales[0], lds, out)
	} else {
		rows4Q8X16AVX2(nblk, &w[0], ldw, &xq[0], &xs[0], &scales[0], lds, out)
	}
	if k32 < k {
		for r := range 4 {
			out[r] += dotQ8Go(k-k32, w[r*ldw+k32:], scales[r*lds+nblk:], x[k32:])
		}
	}
}

// quantizeActivation runs the assembly on the full blocks and the portable
// loop on a last partial one. The two round ties differently (to even, and
// away from zero); every kernel of a build sees the output of the same one.
func quantizeActivation(xd []float32, xq []int16, xs []float32, x []float32) bool {
	nblk := len(x) / Q8Block
	k32 := nblk * Q8Block
	if isa < isaAVX2 || nblk == 0 {
		return quantizeActivationGo(xd, xq, xs, x)
	}
	if len(xd) < len(x) || len(xq) < len(x) || len(xs) < ceilDiv(len(x), Q8Block) {
		panic("kernel: internal error: activation buffers too short")
	}
	if !quantX16AVX2(nblk, &x[0], &xd[0], &xq[0], &xs[0]) {
		return false
	}
	if k32 == len(x) {
		return true
	}
	return quantizeActivationGo(xd[k32:], xq[k32:], xs[nblk:], x[k32:])
}

// expTable lists Exp32's constants in the order expAVX2 reads them; the
// sign mask and the exponent bias are bit patterns.
func expTable() [15]float32 {
	return [15]float32{
		expLog2e, math.Float32frombits(1 << 31), 0.5, expLn2hi, expLn2lo,
		expC7, expC6, expC5, expC4, expC3, 1,
		expMin, expMax, float32(math.Inf(1)), math.Float32frombits(127),
	}
}

// expSlice runs the assembly on blocks of 8 (its sum is not needed here)
// and Exp32 on the rest.
func expSlice(dst, src []float32) {
	n := len(src) &^ 7
	if isa < isaAVX2 || n == 0 {
		expGo(dst, src)
		return
	}
	dst = dst[:len(src)]
	table := expTable()
	expAVX2(n, &src[0], &dst[0], 0, &table)
	expGo(dst[n:], src[n:])
}

// softmax runs softmaxGo's steps in assembly: the maximum, the
// exponentials with their left-to-right sum, and the scaling, with the
// last len(x)%8 values in Go. Rows with a NaN or an infinite maximum,
// which end all NaN, take softmaxGo itself, so that even the NaN payloads
// agree. VMAXPS may give -0 where max gives +0, which changes nothing:
// x-(-0) and x-(+0) differ at most in the sign of a zero, and
// Exp32(-0) = Exp32(+0) = 1.
func softmax(x []float32) {
	n := len(x) &^ 7
	if isa < isaAVX2 || n == 0 {
		softmaxGo(x)
		return
	}
	mx, nan := maxAVX2(n, &x[0])
	for _, v := range x[n:] {
		mx = max(mx, v)
	}
	if nan || mx != mx || math.IsInf(float64(mx), 0) {
		softmaxGo(x)
		return
	}
	table := expTable()
	sum := expAVX2(n, &x[0], &x[0], mx, &table)
	for i, v := range x[n:] {
		e := Exp32(v - mx)
		x[n+i] = e
		sum += e
	}
	inv := 1 / sum
	scaleAVX2(n, inv, &x[0])
	for i := n; i < len(x); i++ {
		x[i] *= inv
	}
}
