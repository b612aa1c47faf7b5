package kernel

import "fmt"

// Blocking of the GEMM driver (Goto/BLIS loop order jc → pc → ic → jr → ir).
// A gemmKC×gemmNR micro-panel of packed B (16 KiB; two of them, 32 KiB, for
// the AVX-512 12×32 tile) stays in L1 (32–48 KiB) while the micro-kernel
// sweeps the gemmMC×gemmKC packed block of A (144 KiB), which stays in L2
// (512 KiB–2 MiB). The packed gemmKC×gemmNC block of B lives in L3. The
// buffers are contiguous, so the power-of-two leading dimensions of the
// caller's matrices never reach the inner loops. MC and NC are multiples of
// both tiles (6×16 and 12×32).
const (
	gemmMR = 6  // rows of the micro-tile (the wide tile has two panels of them)
	gemmNR = 16 // columns of the micro-tile (the wide tile has two panels of them)
	gemmMC = 144
	gemmKC = 256
	gemmNC = 4064

	// smallM is the largest m for which Sgemm with transB (and MatMul)
	// uses the streaming multi-row kernels instead of packing: the weight
	// is read once, straight from memory, which is what decode needs, and
	// up to here that beats packing B for only a few rows of A.
	smallM = 64

	// minParallelFlops is the least work (2·m·n·k) worth waking the pool for.
	minParallelFlops = 1 << 21
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(X) is X or Xᵀ, op(A) is m×k, op(B) is k×n and C is m×n, like BLAS
// sgemm with row-major storage. When beta is zero C is not read, so it may
// hold NaNs. Sgemm panics if a slice is too short for its shape and leading
// dimension, as an out-of-range index would.
func (p *Pool) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernel: Sgemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("Sgemm", "a", len(a), ar, ac, lda)
	checkMatrix("Sgemm", "b", len(b), br, bc, ldb)
	checkMatrix("Sgemm", "c", len(c), m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleMatrix(c, m, n, ldc, beta)
		return
	}
	if transB && !transA && m <= smallM {
		p.linear(rowsF32{w: b, ldw: ldb}, c, ldc, n, k, a, lda, m, alpha, beta)
		return
	}
	p.gemm(m, n, k, alpha, packerA{a: a, lda: lda, trans: transA}, packerF32{b: b, ldb: ldb, trans: transB}, beta, c, ldc)
}

// checkMatrix panics unless a slice of length n holds a rows×cols matrix
// with leading dimension ld.
func checkMatrix(fn, name string, n, rows, cols, ld int) {
	if ld < max(cols, 1) {
		panic(fmt.Sprintf("kernel: %s: leading dimension of %s is %d, below its %d columns", fn, name, ld, cols))
	}
	if rows > 0 && cols > 0 && n < (rows-1)*ld+cols {
		panic(fmt.Sprintf("kernel: %s: %s has %d elements, a %d×%d matrix with leading dimension %d needs %d", fn, name, n, rows, cols, ld, (rows-1)*ld+cols))
	}
}

// scaleMatrix sets C = beta·C, writing zeros (not NaN·0) when beta is zero.
func scaleMatrix(c []float32, m, n, ldc int, beta float32) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// bPacker packs a kb×nb block of op(B), starting at row p0 and column j0,
// into dst as ⌈nb/gemmNR⌉ column panels of gemmNR, each kb rows of gemmNR
// consecutive values, zero-padded past nb. The weight formats (fp32, bf16,
// Q8) implement it, so one driver serves them all.
type bPacker interface {
	packB(dst []float32, p0, j0, kb, nb int)
}

// gemm is the blocked, packed, multi-threaded driver. The C matrix is split
// into one rectangle per thread; each thread packs its own blocks, so there
// is no synchronisation inside the loops.
func (p *Pool) gemm(m, n, k int, alpha float32, a packerA, b bPacker, beta float32, c []float32, ldc int) {
	nt := p.acquire()
	defer p.release()
	p.gemmHeld(nt, m, n, k, alpha, a, b, beta, c, ldc)
}

// gemmHeld is gemm for a caller that holds the pool with nt threads.
func (p *Pool) gemmHeld(nt, m, n, k int, alpha float32, a packerA, b bPacker, beta float32, c []float32, ldc int) {
	if flops := 2 * m * n * k; flops < nt*minParallelFlops {
		nt = max(1, min(nt, flops/minParallelFlops))
	}
	tm, tn := splitGrid(nt, m, n)
	// Each thread's rectangle holds whole tiles of the widest kernel, so
	// that only the matrix's own edges take the small one.
	mr, nr := gemmMR, gemmNR
	if gemmWideKernel() != nil {
		mr, nr = 2*gemmMR, 2*gemmNR
	}
	mStep := roundUp(ceilDiv(m, tm), mr)
	nStep := roundUp(ceilDiv(n, tn), nr)
	tm, tn = ceilDiv(m, mStep), ceilDiv(n, nStep)
	p.run(tm*tn, tm*tn, func(tid, task int) {
		i0 := (task / tn) * mStep
		j0 := (task % tn) * nStep
		s := p.scratchFor(tid)
		gemmBlock(s, i0, min(i0+mStep, m), j0, min(j0+nStep, n), k, alpha, a, b, beta, c, ldc)
	})
}

// splitGrid chooses tm×tn ≤ nt threads over an m×n output so that each
// thread's rectangle has the smallest perimeter, which minimises the panels
// it has to pack.
func splitGrid(nt, m, n int) (tm, tn int) {
	tm, tn = 1, 1
	best := -1.0
	for d := 1; d <= nt; d++ {
		if nt%d != 0 {
			continue
		}
		rm, rn := ceilDiv(m, d), ceilDiv(n, nt/d)
		if d > 1 && rm < gemmMR || nt/d > 1 && rn < gemmNR {
			continue
		}
		if cost := float64(rm + rn); best < 0 || cost < best {
			best, tm, tn = cost, d, nt/d
		}
	}
	return tm, tn
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// gemmBlock computes rows [i0,i1) × columns [j0,j1) of C on one thread.
func gemmBlock(s *threadScratch, i0, i1, j0, j1, k int, alpha float32, a packerA, b bPacker, beta float32, c []float32, ldc int) {
	if i0 >= i1 || j0 >= j1 {
		return
	}
	nbMax := min(gemmNC, roundUp(j1-j0, gemmNR))
	kbMax := min(gemmKC, k)
	mbMax := min(gemmMC, roundUp(i1-i0, gemmMR))
	if need := nbMax * kbMax; len(s.packB) < need {
		s.packB = make([]float32, need)
	}
	if need := mbMax * kbMax; len(s.packA) < need {
		s.packA = make([]float32, need)
	}
	wide := gemmWideKernel()
	var edge [gemmMR * gemmNR]float32
	// tile computes the 6×16 tile at (ir, jr) of the packed blocks.
	tile := func(ic, jc, ir, jr, mb, nb, kb int, betaBlock float32) {
		bp := s.packB[jr*kb : (jr+gemmNR)*kb]
		ap := s.packA[ir*kb : (ir+gemmMR)*kb]
		h, w := min(gemmMR, mb-ir), min(gemmNR, nb-jr)
		off := (ic+ir)*ldc + jc + jr
		if h == gemmMR && w == gemmNR {
			gemmKernel(kb, ap, bp, c[off:off+(gemmMR-1)*ldc+gemmNR], ldc, alpha, betaBlock)
			return
		}
		gemmKernel(kb, ap, bp, edge[:], gemmNR, 1, 0)
		storeEdge(edge[:], c[off:], ldc, h, w, alpha, betaBlock)
	}
	for jc := j0; jc < j1; jc += gemmNC {
		nb := min(gemmNC, j1-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			b.packB(s.packB, pc, jc, kb, nb)
			betaBlock := beta
			if pc > 0 {
				betaBlock = 1
			}
			for ic := i0; ic < i1; ic += gemmMC {
				mb := min(gemmMC, i1-ic)
				a.pack(s.packA, ic, pc, mb, kb)
				jr := 0
				if wide != nil {
					// 12×32 tiles where two full panels of each meet,
					// 6×16 ones on the edges.
					for ; jr+2*gemmNR <= nb; jr += 2 * gemmNR {
						bp := s.packB[jr*kb : (jr+2*gemmNR)*kb]
						ir := 0
						for ; ir+2*gemmMR <= mb; ir += 2 * gemmMR {
							ap := s.packA[ir*kb : (ir+2*gemmMR)*kb]
							off := (ic+ir)*ldc + jc + jr
							wide(kb, ap, bp, c[off:off+(2*gemmMR-1)*ldc+2*gemmNR], ldc, alpha, betaBlock)
						}
						for ; ir < mb; ir += gemmMR {
							tile(ic, jc, ir, jr, mb, nb, kb, betaBlock)
							tile(ic, jc, ir, jr+gemmNR, mb, nb, kb, betaBlock)
						}
					}
				}
				for ; jr < nb; jr += gemmNR {
					for ir := 0; ir < mb; ir += gemmMR {
						tile(ic, jc, ir, jr, mb, nb, kb, betaBlock)
					}
				}
			}
		}
	}
}

// storeEdge writes the h×w corner of a full micro-tile into C.
func storeEdge(tile, c []float32, ldc, h, w int, alpha, beta float32) {
	for i := range h {
		t := tile[i*gemmNR : i*gemmNR+w]
		row := c[i*ldc : i*ldc+w]
		if beta == 0 {
			for j := range row {
				row[j] = alpha * t[j]
			}
			continue
		}
		for j := range row {
			row[j] = alpha*t[j] + beta*row[j]
		}
	}
}

// packerA packs blocks of op(A) for the driver.
type packerA struct {
	a     []float32
	lda   int
	trans bool
}

// pack writes the mb×kb block of op(A) at (i0, p0) into dst as ⌈mb/gemmMR⌉
// row panels, each kb columns of gemmMR consecutive values, zero-padded.
func (pa packerA) pack(dst []float32, i0, p0, mb, kb int) {
	for ir := 0; ir < mb; ir += gemmMR {
		panel := dst[ir*kb : (ir+gemmMR)*kb]
		h := min(gemmMR, mb-ir)
		if pa.trans {
			for p := range kb {
				src := pa.a[(p0+p)*pa.lda+i0+ir:]
				d := panel[p*gemmMR : p*gemmMR+gemmMR]
				copy(d, src[:h])
				clear(d[h:])
			}
			continue
		}
		if h < gemmMR {
			clear(panel)
			for i := range h {
				src := pa.a[(i0+ir+i)*pa.lda+p0:]
				for p, v := range src[:kb] {
					panel[p*gemmMR+i] = v
				}
			}
			continue
		}
		packPanelA(panel, pa.a[(i0+ir)*pa.lda+p0:], pa.lda, kb)
	}
}

// packerF32 packs blocks of op(B) for an fp32 B.
type packerF32 struct {
	b     []float32
	ldb   int
	trans bool
}

func (pb packerF32) packB(dst []float32, p0, j0, kb, nb int) {
	for jr := 0; jr < nb; jr += gemmNR {
		panel := dst[jr*kb : (jr+gemmNR)*kb]
		w := min(gemmNR, nb-jr)
		if !pb.trans {
			if w == gemmNR {
				copyPanelB(panel, pb.b[p0*pb.ldb+j0+jr:], pb.ldb, kb)
				continue
			}
			for p := range kb {
				d := panel[p*gemmNR : p*gemmNR+gemmNR]
				copy(d, pb.b[(p0+p)*pb.ldb+j0+jr:][:w])
				clear(d[w:])
			}
			continue
		}
		src := pb.b[(j0+jr)*pb.ldb+p0:]
		if w == gemmNR {
			packPanelF32(panel, src, pb.ldb, kb)
			continue
		}
		clear(panel)
		for j := range w {
			for p, v := range src[j*pb.ldb : j*pb.ldb+kb] {
				panel[p*gemmNR+j] = v
			}
		}
	}
}
