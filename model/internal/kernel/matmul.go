package kernel

import (
	"fmt"
	"math"
)

// linearKC is the column chunk of the small-batch kernels when several
// batch rows reuse the same weight rows: four rows of a 1024-column chunk
// (16 KiB in fp32) stay in L1 while every batch row passes over them.
const linearKC = 1024

// MatVec computes y[i] = dot(W[i,:], x) for a row-major rows×cols W (the
// Hugging Face Linear weight layout [out, in]); len(y) ≥ rows and
// len(x) ≥ cols. It panics if a slice is too short.
func (p *Pool) MatVec(y []float32, w []float32, rows, cols int, x []float32) {
	p.MatMul(y, w, rows, cols, x, 1)
}

// MatMul computes Y = X·Wᵀ for batch rows of X (batch×cols, row-major) and
// a rows×cols weight W, writing Y as batch×rows: the linear layer of several
// sequences decoding together. Small batches stream W once through
// multi-row mat-vec kernels; large ones use the packed GEMM driver.
func (p *Pool) MatMul(y []float32, w []float32, rows, cols int, x []float32, batch int) {
	checkLinear("MatMul", len(y), len(w), rows, cols, len(x), batch)
	p.matMul(rowsF32{w: w, ldw: cols}, y, rows, cols, x, batch)
}

// MatVecBF16 is MatVec for bf16 weights (the upper halves of float32 bit
// patterns), widened to fp32 in registers.
func (p *Pool) MatVecBF16(y []float32, w []uint16, rows, cols int, x []float32) {
	p.MatMulBF16(y, w, rows, cols, x, 1)
}

// MatMulBF16 is MatMul for bf16 weights.
func (p *Pool) MatMulBF16(y []float32, w []uint16, rows, cols int, x []float32, batch int) {
	checkLinear("MatMulBF16", len(y), len(w), rows, cols, len(x), batch)
	p.matMul(rowsBF16{w: w, ldw: cols}, y, rows, cols, x, batch)
}

// MatVecQ8 is MatVec for an 8-bit quantized weight.
func (p *Pool) MatVecQ8(y []float32, w Q8Matrix, x []float32) {
	p.MatMulQ8(y, w, x, 1)
}

// MatMulQ8 is MatMul for an 8-bit quantized weight of w.Rows×w.Cols.
func (p *Pool) MatMulQ8(y []float32, w Q8Matrix, x []float32, batch int) {
	if err := w.check(); err != nil {
		panic("kernel: MatMulQ8: " + err.Error())
	}
	checkLinear("MatMulQ8", len(y), len(w.Data), w.Rows, w.Cols, len(x), batch)
	p.matMul(rowsQ8{q: w}, y, w.Rows, w.Cols, x, batch)
}

func checkLinear(fn string, ny, nw, rows, cols, nx, batch int) {
	if rows < 0 || cols < 0 || batch < 0 {
		panic(fmt.Sprintf("kernel: %s: negative dimension rows=%d cols=%d batch=%d", fn, rows, cols, batch))
	}
	if nw < rows*cols {
		panic(fmt.Sprintf("kernel: %s: weight has %d elements, %d×%d needs %d", fn, nw, rows, cols, rows*cols))
	}
	if nx < batch*cols {
		panic(fmt.Sprintf("kernel: %s: x has %d elements, %d×%d needs %d", fn, nx, batch, cols, batch*cols))
	}
	if ny < batch*rows {
		panic(fmt.Sprintf("kernel: %s: y has %d elements, %d×%d needs %d", fn, ny, batch, rows, batch*rows))
	}
}

func (p *Pool) matMul(src weightRows, y []float32, rows, cols int, x []float32, batch int) {
	if batch == 0 || rows == 0 {
		return
	}
	if cols == 0 {
		clear(y[:batch*rows])
		return
	}
	nt := p.acquire()
	defer p.release()
	if prep, ok := src.(activationPreparer); ok {
		src, x = prep.prepare(p.scratchFor(0), x[:batch*cols], batch, cols)
	}
	if batch <= smallM {
		p.linearHeld(nt, src, y, rows, rows, cols, x, cols, batch, 1, 0)
		return
	}
	p.gemmHeld(nt, batch, rows, cols, 1, packerA{a: x, lda: cols}, src, 0, y, rows)
}

// weightRows is a rows×cols weight matrix in some storage format, read
// either by the streaming small-batch kernels (dot4, dot1) or by the GEMM
// driver as op(B) = Wᵀ (packB).
type weightRows interface {
	bPacker
	// dot4 sets out[b*4+r] = Σ_{i<kb} W[r0+r, p0+i]·x[b*ldx+i] for r < 4
	// and b < nb, nb being 1 or 2.
	dot4(r0, p0, kb int, x []float32, ldx, nb int, out *[8]float32)
	// dot2x4 sets out[b*2+r] = Σ_{i<kb} W[r0+r, p0+i]·x[b*ldx+i] for
	// r < 2 and b < 4.
	dot2x4(r0, p0, kb int, x []float32, ldx int, out *[8]float32)
	// dot1 returns Σ_{i<kb} W[r, p0+i]·x[i].
	dot1(r, p0, kb int, x []float32) float32
}

// activationPreparer is a weight format that transforms the batch×cols
// activations once per call (into the scratch buffers) before any kernel
// reads them; it returns the weight and activations to use.
type activationPreparer interface {
	prepare(s *threadScratch, x []float32, batch, cols int) (weightRows, []float32)
}

// linear computes Y = alpha·X·Wᵀ + beta·Y for batch ≤ smallM rows of X,
// splitting the rows of W across threads in groups of four.
func (p *Pool) linear(src weightRows, y []float32, ldy, rows, cols int, x []float32, ldx, batch int, alpha, beta float32) {
	nt := p.acquire()
	defer p.release()
	p.linearHeld(nt, src, y, ldy, rows, cols, x, ldx, batch, alpha, beta)
}

// linearHeld is linear for a caller that holds the pool with nt threads.
func (p *Pool) linearHeld(nt int, src weightRows, y []float32, ldy, rows, cols int, x []float32, ldx, batch int, alpha, beta float32) {
	if work := 2 * rows * cols * batch; work < nt*minParallelFlops/4 {
		nt = max(1, min(nt, work/(minParallelFlops/4)))
	}
	// Four tasks per thread: a thread that starts late, or is descheduled
	// by another process, holds up the call by one small task at most,
	// while the others claim the rest.
	tasks := nt
	if nt > 1 {
		tasks = 4 * nt
	}
	step := roundUp(ceilDiv(rows, tasks), 4)
	tasks = ceilDiv(rows, step)
	p.run(nt, tasks, func(_, task int) {
		r0 := task * step
		linearRows(src, y, ldy, r0, min(r0+step, rows), cols, x, ldx, batch, alpha, beta)
	})
}

func linearRows(src weightRows, y []float32, ldy, r0, r1, cols int, x []float32, ldx, batch int, alpha, beta float32) {
	var acc [smallM * 4]float32
	var out [8]float32
	kc := cols
	if batch > 2 {
		kc = linearKC
	}
	r := r0
	for ; r+4 <= r1; r += 4 {
		clear(acc[:batch*4])
		for p0 := 0; p0 < cols; p0 += kc {
			kb := min(kc, cols-p0)
			// Groups of four batch rows take two rows of W at a time,
			// so each weight is loaded once per four sequences; the
			// remaining one to three batch rows take four rows of W.
			b := 0
			for ; b+4 <= batch; b += 4 {
				for rr := 0; rr < 4; rr += 2 {
					src.dot2x4(r+rr, p0, kb, x[b*ldx+p0:], ldx, &out)
					for bb := range 4 {
						acc[(b+bb)*4+rr] += out[bb*2]
						acc[(b+bb)*4+rr+1] += out[bb*2+1]
					}
				}
			}
			for ; b < batch; b += 2 {
				nb := min(2, batch-b)
				src.dot4(r, p0, kb, x[b*ldx+p0:], ldx, nb, &out)
				for i := range nb * 4 {
					acc[b*4+i] += out[i]
				}
			}
		}
		for b := range batch {
			dst := y[b*ldy+r : b*ldy+r+4]
			a := acc[b*4 : b*4+4]
			if beta == 0 {
				for i := range dst {
					dst[i] = alpha * a[i]
				}
				continue
			}
			for i := range dst {
				dst[i] = alpha*a[i] + beta*dst[i]
			}
		}
	}
	for ; r < r1; r++ {
		for b := range batch {
			d := alpha * src.dot1(r, 0, cols, x[b*ldx:])
			if beta != 0 {
				d += beta * y[b*ldy+r]
			}
			y[b*ldy+r] = d
		}
	}
}

// rowsF32 is an fp32 weight.
type rowsF32 struct {
	w   []float32
	ldw int
}

func (s rowsF32) dot4(r0, p0, kb int, x []float32, ldx, nb int, out *[8]float32) {
	rows4F32(kb, s.w[r0*s.ldw+p0:], s.ldw, x, ldx, nb, out)
}

func (s rowsF32) dot2x4(r0, p0, kb int, x []float32, ldx int, out *[8]float32) {
	rows2x4F32(kb, s.w[r0*s.ldw+p0:], s.ldw, x, ldx, out)
}

func (s rowsF32) dot1(r, p0, kb int, x []float32) float32 {
	return Dot(s.w[r*s.ldw+p0:][:kb], x[:kb])
}

func (s rowsF32) packB(dst []float32, p0, j0, kb, nb int) {
	packerF32{b: s.w, ldb: s.ldw, trans: true}.packB(dst, p0, j0, kb, nb)
}

// rowsBF16 is a bf16 weight.
type rowsBF16 struct {
	w   []uint16
	ldw int
}

func (s rowsBF16) dot4(r0, p0, kb int, x []float32, ldx, nb int, out *[8]float32) {
	rows4BF16(kb, s.w[r0*s.ldw+p0:], s.ldw, x, ldx, nb, out)
}

func (s rowsBF16) dot2x4(r0, p0, kb int, x []float32, ldx int, out *[8]float32) {
	rows2x4BF16(kb, s.w[r0*s.ldw+p0:], s.ldw, x, ldx, out)
}

func (s rowsBF16) dot1(r, p0, kb int, x []float32) float32 {
	w := s.w[r*s.ldw+p0:][:kb]
	var sum float32
	for i, v := range w {
		sum += bf16(v) * x[i]
	}
	return sum
}

func (s rowsBF16) packB(dst []float32, p0, j0, kb, nb int) {
	for jr := 0; jr < nb; jr += gemmNR {
		panel := dst[jr*kb : (jr+gemmNR)*kb]
		w := min(gemmNR, nb-jr)
		src := s.w[(j0+jr)*s.ldw+p0:]
		if w == gemmNR {
			packPanelBF16(panel, src, s.ldw, kb)
			continue
		}
		clear(panel)
		for j := range w {
			for p, v := range src[j*s.ldw : j*s.ldw+kb] {
				panel[p*gemmNR+j] = bf16(v)
			}
		}
	}
}

// rowsQ8 is an 8-bit quantized weight. For a single activation row, xr
// may hold that row as int16 per block (see prepare).
type rowsQ8 struct {
	q  Q8Matrix
	xr q8Row
}

// q8Row is one activation row quantized to int16 per block of Q8Block,
// as the integer Q8 mat-vec kernels read it: xq, with the block scales xs
// (covering the full blocks), and, where the kernel set reads it so, xq
// split into bytes for VPDPBUSD (xv, see splitQ8Bytes; else nil).
type q8Row struct {
	xq []int16
	xs []float32
	xv []byte
}

// prepare quantizes every activation row to int16 with one scale per block
// of Q8Block (its largest magnitude ↦ 32767) and hands the kernels the
// values that stands for, as float32. Every Q8 path — the integer mat-vec
// kernel for a single row, the float kernels for small batches, the packed
// GEMM for large ones — then multiplies the same numbers, so a sequence's
// result does not depend on what it is batched with beyond float32
// rounding. The quantization adds at most |w|·scale/2 per product, a
// relative 2⁻¹⁶ of the block's largest activation, far below the weight's
// own 8-bit rounding. A row holding NaN or Inf is used as it is, so those
// propagate into the result.
func (s rowsQ8) prepare(sc *threadScratch, x []float32, batch, cols int) (weightRows, []float32) {
	bpr := ceilDiv(cols, Q8Block)
	sc.xd = grow(sc.xd, batch*cols)
	sc.xq = grow(sc.xq, cols)
	sc.xs = grow(sc.xs, bpr)
	xd, xq, xs := sc.xd[:batch*cols], sc.xq[:cols], sc.xs[:bpr]
	ok := true
	for b := range batch {
		row := x[b*cols : (b+1)*cols]
		if !quantizeActivation(xd[b*cols:(b+1)*cols], xq, xs, row) {
			copy(xd[b*cols:], row)
			ok = false
		}
	}
	if batch == 1 && ok && q8Int16Kernels() {
		s.xr = q8Row{xq: xq, xs: xs}
		if q8ByteKernels() {
			sc.xv = splitQ8Bytes(sc.xv, xq, cols/Q8Block)
			s.xr.xv = sc.xv
		}
	}
	return s, xd
}

// grow returns s with room for n elements, reallocating when it is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s
}

// quantizeActivationGo rounds one activation row x to int16 per block of
// Q8Block and writes the values it stands for to xd, the integers to xq
// and the block scales to xs. It reports false, leaving the outputs partly
// written, if x holds NaN or Inf.
func quantizeActivationGo(xd []float32, xq []int16, xs []float32, x []float32) bool {
	xd = xd[:len(x)]
	xq = xq[:len(x)]
	for c0 := 0; c0 < len(x); c0 += Q8Block {
		src := x[c0:min(c0+Q8Block, len(x))]
		dst := xd[c0 : c0+len(src)]
		var amax uint32 // of the magnitudes' bit patterns, which order like the values
		for _, v := range src {
			amax = max(amax, math.Float32bits(v)&0x7fffffff)
		}
		if amax >= 0x7f800000 {
			return false // Inf or NaN
		}
		var scale, inv float32
		if amax > 0 {
			m := math.Float32frombits(amax)
			scale, inv = m/32767, 32767/m
		}
		xs[c0/Q8Block] = scale
		for i, v := range src {
			// Round half away from zero; |v·inv| ≤ 32767 fits int32 and int16.
			r := v * inv
			if r >= 0 {
				r += 0.5
			} else {
				r -= 0.5
			}
			q := int32(r)
			dst[i] = float32(q) * scale
			xq[c0+i] = int16(q)
		}
	}
	return true
}

func (s rowsQ8) dot4(r0, p0, kb int, x []float32, ldx, nb int, out *[8]float32) {
	bpr := s.q.BlocksPerRow()
	if s.xr.xq != nil && nb == 1 && p0 == 0 && kb == s.q.Cols {
		var o [4]float32
		rows4Q8X16(kb, s.q.Data[r0*s.q.Cols:], s.q.Cols, s.xr, x, s.q.Scales[r0*bpr:], bpr, &o)
		copy(out[:4], o[:])
		return
	}
	rows4Q8(kb, s.q.Data[r0*s.q.Cols+p0:], s.q.Cols, s.q.Scales[r0*bpr+p0/Q8Block:], bpr, x, ldx, nb, out)
}

func (s rowsQ8) dot2x4(r0, p0, kb int, x []float32, ldx int, out *[8]float32) {
	bpr := s.q.BlocksPerRow()
	rows2x4Q8(kb, s.q.Data[r0*s.q.Cols+p0:], s.q.Cols, s.q.Scales[r0*bpr+p0/Q8Block:], bpr, x, ldx, out)
}

func (s rowsQ8) dot1(r, p0, kb int, x []float32) float32 {
	bpr := s.q.BlocksPerRow()
	return dotQ8Go(kb, s.q.Data[r*s.q.Cols+p0:], s.q.Scales[r*bpr+p0/Q8Block:], x)
}

func (s rowsQ8) packB(dst []float32, p0, j0, kb, nb int) {
	bpr := s.q.BlocksPerRow()
	for jr := 0; jr < nb; jr += gemmNR {
		panel := dst[jr*kb : (jr+gemmNR)*kb]
		w := min(gemmNR, nb-jr)
		// p0 is a multiple of gemmKC, so blocks start at column 0 here.
		src := s.q.Data[(j0+jr)*s.q.Cols+p0:]
		scales := s.q.Scales[(j0+jr)*bpr+p0/Q8Block:]
		if w == gemmNR {
			packPanelQ8(panel, src, s.q.Cols, scales, bpr, kb)
			continue
		}
		clear(panel)
		for j := range w {
			for p, v := range src[j*s.q.Cols : j*s.q.Cols+kb] {
				panel[p*gemmNR+j] = scales[j*bpr+p/Q8Block] * float32(v)
			}
		}
	}
}
