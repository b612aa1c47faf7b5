package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks report GFLOP/s (2·m·n·k per call) and, for the memory-bound
// kernels, GB/s of weight bytes streamed. See model/BENCHMARKS.md.

func benchThreads() []int {
	all := PhysicalCores()
	if all == 1 {
		return []int{1}
	}
	return []int{1, all}
}

func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{256, 1024} {
		a, bb, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float32, n*n)
		for _, th := range benchThreads() {
			for _, tb := range []bool{false, true} {
				b.Run(fmt.Sprintf("n=%d/transB=%v/threads=%d", n, tb, th), func(b *testing.B) {
					p := NewPool(th)
					defer p.Close()
					for b.Loop() {
						p.Sgemm(false, tb, n, n, n, 1, a, n, bb, n, 0, c, n)
					}
					b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkMatMul runs the decode shapes of a Qwen2.5-0.5B MLP: a 4864×896
// (gate/up) and an 896×4864 (down) weight against 1–16 sequences.
func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, shape := range [][2]int{{4864, 896}, {896, 4864}} {
		rows, cols := shape[0], shape[1]
		w := randSlice(rng, rows*cols)
		wb := make([]uint16, len(w))
		F32ToBF16(wb, w)
		q, _ := QuantizeQ8(w, rows, cols)
		for _, batch := range []int{1, 4, 8, 16} {
			x := randSlice(rng, batch*cols)
			y := make([]float32, batch*rows)
			for _, th := range benchThreads() {
				for _, format := range []string{"f32", "bf16", "q8"} {
					name := fmt.Sprintf("w=%dx%d/%s/m=%d/threads=%d", rows, cols, format, batch, th)
					b.Run(name, func(b *testing.B) {
						p := NewPool(th)
						defer p.Close()
						bytes := 4 * rows * cols
						for b.Loop() {
							switch format {
							case "f32":
								p.MatMul(y, w, rows, cols, x, batch)
							case "bf16":
								bytes = 2 * rows * cols
								p.MatMulBF16(y, wb, rows, cols, x, batch)
							case "q8":
								bytes = rows*cols + 4*len(q.Scales)
								p.MatMulQ8(y, q, x, batch)
							}
						}
						sec := b.Elapsed().Seconds()
						b.ReportMetric(float64(bytes)*float64(b.N)/sec/1e9, "GB/s")
						b.ReportMetric(2*float64(rows*cols*batch)*float64(b.N)/sec/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// BenchmarkMatVec streams a 4096×8192 weight (128 MiB in fp32, well past
// the L3) to measure memory bandwidth per format.
func BenchmarkMatVec(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	const rows, cols = 4096, 8192
	w := randSlice(rng, rows*cols)
	wb := make([]uint16, len(w))
	F32ToBF16(wb, w)
	q, _ := QuantizeQ8(w, rows, cols)
	x := randSlice(rng, cols)
	y := make([]float32, rows)
	for _, th := range benchThreads() {
		b.Run(fmt.Sprintf("f32/threads=%d", th), func(b *testing.B) {
			p := NewPool(th)
			defer p.Close()
			for b.Loop() {
				p.MatVec(y, w, rows, cols, x)
			}
			b.ReportMetric(4*rows*cols*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(fmt.Sprintf("bf16/threads=%d", th), func(b *testing.B) {
			p := NewPool(th)
			defer p.Close()
			for b.Loop() {
				p.MatVecBF16(y, wb, rows, cols, x)
			}
			b.ReportMetric(2*rows*cols*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(fmt.Sprintf("q8/threads=%d", th), func(b *testing.B) {
			p := NewPool(th)
			defer p.Close()
			for b.Loop() {
				p.MatVecQ8(y, q, x)
			}
			b.ReportMetric(float64(rows*cols+4*len(q.Scales))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, c := randSlice(rng, 4096), randSlice(rng, 4096)
	var sink float32
	for b.Loop() {
		sink += Dot(a, c)
	}
	b.ReportMetric(2*4096*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	_ = sink
}
