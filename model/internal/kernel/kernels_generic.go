package kernel

import "encoding/binary"

// Portable Go versions of the inner kernels. They are the fallback where
// the assembly is unavailable and the reference the assembly is tested
// against; the assembly wrappers also use them for ragged tails.

// gemmKernelGo computes the 6×16 tile C = alpha·A·B + beta·C from packed
// panels (A: k columns of gemmMR, B: k rows of gemmNR). With beta zero, C
// is not read. It works in 2×4 sub-tiles whose eight sums stay in
// registers, since a whole 6×16 tile would spill on every step.
func gemmKernelGo(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	var acc [gemmMR][gemmNR]float32
	a = a[:k*gemmMR]
	b = b[:k*gemmNR]
	for i0 := 0; i0 < gemmMR; i0 += 2 {
		for j0 := 0; j0 < gemmNR; j0 += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			for p := range k {
				ap := (*[2]float32)(a[p*gemmMR+i0:])
				bp := (*[4]float32)(b[p*gemmNR+j0:])
				a0, a1 := ap[0], ap[1]
				b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
			}
			acc[i0][j0], acc[i0][j0+1], acc[i0][j0+2], acc[i0][j0+3] = c00, c01, c02, c03
			acc[i0+1][j0], acc[i0+1][j0+1], acc[i0+1][j0+2], acc[i0+1][j0+3] = c10, c11, c12, c13
		}
	}
	for i := range gemmMR {
		row := c[i*ldc : i*ldc+gemmNR]
		if beta == 0 {
			for j := range row {
				row[j] = alpha * acc[i][j]
			}
			continue
		}
		for j := range row {
			row[j] = alpha*acc[i][j] + beta*row[j]
		}
	}
}

// dotGo is a four-way unrolled dot product of equal-length slices.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// rows4F32Go sets out[b*4+r] = Σ_{i<k} w[r*ldw+i]·x[b*ldx+i], r < 4, b < nb.
func rows4F32Go(k int, w []float32, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	for b := range nb {
		xb := x[b*ldx : b*ldx+k]
		for r := range 4 {
			out[b*4+r] = dotGo(w[r*ldw:r*ldw+k], xb)
		}
	}
}

// rows4BF16Go is rows4F32Go for bf16 weights.
func rows4BF16Go(k int, w []uint16, ldw int, x []float32, ldx, nb int, out *[8]float32) {
	for b := range nb {
		xb := x[b*ldx : b*ldx+k]
		for r := range 4 {
			wr := w[r*ldw : r*ldw+k]
			var s0, s1 float32
			i := 0
			for ; i+2 <= k; i += 2 {
				s0 += bf16(wr[i]) * xb[i]
				s1 += bf16(wr[i+1]) * xb[i+1]
			}
			for ; i < k; i++ {
				s0 += bf16(wr[i]) * xb[i]
			}
			out[b*4+r] = s0 + s1
		}
	}
}

// dotQ8Go returns Σ_{i<k} scales[i/Q8Block]·w[i]·x[i], summing each block
// before scaling it.
func dotQ8Go(k int, w []int8, scales []float32, x []float32) float32 {
	w = w[:k]
	x = x[:k]
	var sum float32
	for c0 := 0; c0 < k; c0 += Q8Block {
		wb := w[c0:min(c0+Q8Block, k)]
		xb := x[c0:]
		var s0, s1 float32
		i := 0
		for ; i+2 <= len(wb); i += 2 {
			s0 += float32(wb[i]) * xb[i]
			s1 += float32(wb[i+1]) * xb[i+1]
		}
		for ; i < len(wb); i++ {
			s0 += float32(wb[i]) * xb[i]
		}
		sum += scales[c0/Q8Block] * (s0 + s1)
	}
	return sum
}

// rows4Q8Go is rows4F32Go for Q8 weights; w rows are ldw bytes apart and
// their scales lds apart.
func rows4Q8Go(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx, nb int, out *[8]float32) {
	for b := range nb {
		xb := x[b*ldx : b*ldx+k]
		for r := range 4 {
			out[b*4+r] = dotQ8Go(k, w[r*ldw:], scales[r*lds:], xb)
		}
	}
}

// rows2x4F32Go sets out[b*2+r] = Σ_{i<k} w[r*ldw+i]·x[b*ldx+i], r < 2, b < 4.
func rows2x4F32Go(k int, w []float32, ldw int, x []float32, ldx int, out *[8]float32) {
	for b := range 4 {
		for r := range 2 {
			out[b*2+r] = dotGo(w[r*ldw:r*ldw+k], x[b*ldx:b*ldx+k])
		}
	}
}

// rows2x4BF16Go is rows2x4F32Go for bf16 weights.
func rows2x4BF16Go(k int, w []uint16, ldw int, x []float32, ldx int, out *[8]float32) {
	var wide [linearKC]float32
	for r := range 2 {
		for i0 := 0; i0 < k; i0 += linearKC {
			n := min(linearKC, k-i0)
			BF16ToF32(wide[:n], w[r*ldw+i0:r*ldw+i0+n])
			for b := range 4 {
				if i0 == 0 {
					out[b*2+r] = 0
				}
				out[b*2+r] += dotGo(wide[:n], x[b*ldx+i0:b*ldx+i0+n])
			}
		}
	}
}

// rows2x4Q8Go is rows2x4F32Go for Q8 weights.
func rows2x4Q8Go(k int, w []int8, ldw int, scales []float32, lds int, x []float32, ldx int, out *[8]float32) {
	for b := range 4 {
		for r := range 2 {
			out[b*2+r] = dotQ8Go(k, w[r*ldw:], scales[r*lds:], x[b*ldx:b*ldx+k])
		}
	}
}

// packPanelGo writes dst[p*gemmNR+j] = widen(w[j*ldw+p]) for j < gemmNR and
// p in [p0, kb): a full panel of op(B) = Wᵀ from 16 weight rows, from
// column p0 on (the assembly packs the columns before p0).
func packPanelGo[W any](dst []float32, w []W, ldw, p0, kb int, widen func(W) float32) {
	for j := range gemmNR {
		src := w[j*ldw : j*ldw+kb]
		for p := p0; p < kb; p++ {
			dst[p*gemmNR+j] = widen(src[p])
		}
	}
}

// packPanelQ8Go is packPanelGo for Q8 weights whose scales start at a
// block boundary (scales[j*ldsc] belongs to column 0 of row j).
func packPanelQ8Go(dst []float32, w []int8, ldw int, scales []float32, ldsc, p0, kb int) {
	for j := range gemmNR {
		src := w[j*ldw : j*ldw+kb]
		sc := scales[j*ldsc:]
		for p := p0; p < kb; p++ {
			dst[p*gemmNR+j] = sc[p/Q8Block] * float32(src[p])
		}
	}
}

func identity(v float32) float32 { return v }

// rows4Q8X16Go is the portable rows4Q8X16: exact int32 sums per block of
// Q8 weights times int16 activations, scaled in float32; the last partial
// block uses the float activation x.
func rows4Q8X16Go(k int, w []int8, ldw int, xr q8Row, x []float32, scales []float32, lds int, out *[4]float32) {
	xq, xs := xr.xq, xr.xs
	nblk := k / Q8Block
	for r := range 4 {
		wr := w[r*ldw : r*ldw+k]
		sr := scales[r*lds:]
		var sum float32
		for blk := range nblk {
			var isum int32
			for i := blk * Q8Block; i < (blk+1)*Q8Block; i++ {
				isum += int32(wr[i]) * int32(xq[i])
			}
			sum += float32(isum) * (sr[blk] * xs[blk])
		}
		if k32 := nblk * Q8Block; k32 < k {
			sum += dotQ8Go(k-k32, wr[k32:], sr[nblk:], x[k32:])
		}
		out[r] = sum
	}
}

// packPanelAGo writes dst[p*gemmMR+i] = a[i*lda+p] for i < gemmMR and p in
// [p0, kb): a full packed A panel from six rows of a row-major op(A), from
// column p0 on (the assembly packs the columns before p0).
func packPanelAGo(dst, a []float32, lda, p0, kb int) {
	row := func(i int) []float32 { return a[i*lda : i*lda+kb] }
	r0, r1, r2, r3, r4, r5 := row(0), row(1), row(2), row(3), row(4), row(5)
	for p := p0; p < kb; p++ {
		d := (*[gemmMR]float32)(dst[p*gemmMR:])
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// copyPanelBGo writes dst[p*gemmNR+j] = b[p*ldb+j] for j < gemmNR and
// p < kb: a full packed B panel from a row-major op(B).
func copyPanelBGo(dst, b []float32, ldb, kb int) {
	for p := range kb {
		copy(dst[p*gemmNR:(p+1)*gemmNR], b[p*ldb:p*ldb+gemmNR])
	}
}

// q8SplitChunk is the number of columns per chunk of a split activation
// (two blocks: one 512-bit register of bytes), and q8SplitBytes its size:
// the low bytes, the high bytes and one int32 correction per four columns.
const (
	q8SplitChunk = 2 * Q8Block
	q8SplitBytes = 3 * q8SplitChunk
)

// splitQ8Bytes lays out the first nblk blocks of an int16 activation xq
// for the VPDPBUSD kernel, in dst (reallocated when short): per chunk of
// q8SplitChunk columns, the low byte of each value (to multiply as
// unsigned), then its high byte (signed), then per four columns the int32
// -128·Σ(high bytes), little-endian. Columns past the last block are zero.
func splitQ8Bytes(dst []byte, xq []int16, nblk int) []byte {
	chunks := ceilDiv(nblk, 2)
	dst = grow(dst, chunks*q8SplitBytes)[:chunks*q8SplitBytes]
	n := nblk * Q8Block
	for c := range chunks {
		d := dst[c*q8SplitBytes : (c+1)*q8SplitBytes]
		for g := range q8SplitChunk / 4 {
			var corr int32
			for i := 4 * g; i < 4*g+4; i++ {
				var v int16
				if col := c*q8SplitChunk + i; col < n {
					v = xq[col]
				}
				d[i] = byte(v)
				d[q8SplitChunk+i] = byte(v >> 8)
				corr -= 128 * int32(v>>8)
			}
			binary.LittleEndian.PutUint32(d[2*q8SplitChunk+4*g:], uint32(corr))
		}
	}
	return dst
}
