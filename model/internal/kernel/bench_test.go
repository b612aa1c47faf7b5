package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// cpuClock measures the CPU time a benchmark loop uses, next to b.Elapsed.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPUClock() cpuClock {
	t, ok := processCPUTime()
	return cpuClock{start: t, ok: ok}
}

// report adds "unit/cpu-s": amount per CPU-second of all threads.
func (c cpuClock) report(b *testing.B, amount float64, unit string) {
	t, ok := processCPUTime()
	if c.ok && ok && t > c.start {
		b.ReportMetric(amount/(t-c.start).Seconds(), unit+"/cpu-s")
	}
}

// Benchmarks report GFLOP/s (2·m·n·k per call) and, for the memory-bound
// kernels, GB/s of weight bytes streamed. See model/BENCHMARKS.md.

func benchThreads() []int {
	all := PhysicalCores()
	if all == 1 {
		return []int{1}
	}
	return []int{1, all}
}

// BenchmarkSgemm runs square Sgemm with the kernel set in use (it logs
// which; KernelsEnv chooses another).
func BenchmarkSgemm(b *testing.B) {
	b.Logf("kernel set: %s", Kernels())
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{256, 1024} {
		a, bb, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float32, n*n)
		for _, th := range benchThreads() {
			for _, tb := range []bool{false, true} {
				b.Run(fmt.Sprintf("n=%d/transB=%v/threads=%d", n, tb, th), func(b *testing.B) {
					p := NewPool(th)
					defer p.Close()
					p.Sgemm(false, tb, n, n, n, 1, a, n, bb, n, 0, c, n) // size the packing buffers
					clock := startCPUClock()
					for b.Loop() {
						p.Sgemm(false, tb, n, n, n, 1, a, n, bb, n, 0, c, n)
					}
					gflop := 2 * float64(n*n*n) * float64(b.N) / 1e9
					b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
					clock.report(b, gflop, "GFLOP")
				})
			}
		}
	}
}

// BenchmarkMatMul runs the decode shapes of a Qwen2.5-0.5B MLP: a 4864×896
// (gate/up) and an 896×4864 (down) weight against 1–16 sequences, and a
// 512×1024 weight that stays in a 2 MiB L2 in every format, where the
// kernels' arithmetic rather than memory sets the rate.
func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, shape := range [][2]int{{4864, 896}, {896, 4864}, {512, 1024}} {
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
						eachKernelSet(b, func(b *testing.B) {
							p := NewPool(th)
							defer p.Close()
							bytes := 4 * rows * cols
							clock := startCPUClock()
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
							gb := float64(bytes) * float64(b.N) / 1e9
							b.ReportMetric(gb/sec, "GB/s")
							b.ReportMetric(2*float64(rows*cols*batch)*float64(b.N)/sec/1e9, "GFLOP/s")
							clock.report(b, gb, "GB")
							clock.report(b, 2*float64(rows*cols*batch)*float64(b.N)/1e9, "GFLOP")
						})
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
	formats := []struct {
		name  string
		bytes int
		run   func(p *Pool)
	}{
		{"f32", 4 * rows * cols, func(p *Pool) { p.MatVec(y, w, rows, cols, x) }},
		{"bf16", 2 * rows * cols, func(p *Pool) { p.MatVecBF16(y, wb, rows, cols, x) }},
		{"q8", rows*cols + 4*len(q.Scales), func(p *Pool) { p.MatVecQ8(y, q, x) }},
	}
	for _, th := range benchThreads() {
		for _, f := range formats {
			b.Run(fmt.Sprintf("%s/threads=%d", f.name, th), func(b *testing.B) {
				p := NewPool(th)
				defer p.Close()
				clock := startCPUClock()
				for b.Loop() {
					f.run(p)
				}
				gb := float64(f.bytes) * float64(b.N) / 1e9
				b.ReportMetric(gb/b.Elapsed().Seconds(), "GB/s")
				clock.report(b, gb, "GB")
			})
		}
	}
}

// BenchmarkMatVecPastL3 streams 1 GiB weights of the Qwen2.5-0.5B decode
// shapes through the mat-vec kernels: 896 columns (the q, k, v, o, gate
// and up projections and the LM head) and 4,864 (the down projection).
// That is four times an L3 of 260 MiB, so every call reads the whole
// weight from memory as a decode step does, and the GB/s say how close the
// kernels come to the machine's read bandwidth (bench/stream_read.c
// measures that). Each weight repeats one random 512-row block; the values
// do not change the time. bestGB/s is the fastest call's rate, the figure a
// shared machine's load disturbs least.
func BenchmarkMatVecPastL3(b *testing.B) {
	const blockRows, size = 512, 1 << 30
	rng := rand.New(rand.NewPCG(6, 6))
	for _, cols := range []int{896, 4864} {
		block := randSlice(rng, blockRows*cols)
		x := randSlice(rng, cols)
		for _, format := range []string{"bf16", "q8"} {
			var run func(p *Pool)
			var bytes int
			switch format {
			case "bf16":
				blockBF16 := make([]uint16, len(block))
				F32ToBF16(blockBF16, block)
				rows := size / (2 * cols) / blockRows * blockRows
				w := make([]uint16, rows*cols)
				for i := 0; i < len(w); i += len(blockBF16) {
					copy(w[i:], blockBF16)
				}
				y := make([]float32, rows)
				bytes = 2 * len(w)
				run = func(p *Pool) { p.MatVecBF16(y, w, rows, cols, x) }
			case "q8":
				blockQ8, err := QuantizeQ8(block, blockRows, cols)
				if err != nil {
					b.Fatal(err)
				}
				bpr := blockQ8.BlocksPerRow()
				rows := size / (cols + 4*bpr) / blockRows * blockRows
				q := Q8Matrix{Rows: rows, Cols: cols, Data: make([]int8, rows*cols), Scales: make([]float32, rows*bpr)}
				for i := 0; i < len(q.Data); i += len(blockQ8.Data) {
					copy(q.Data[i:], blockQ8.Data)
				}
				for i := 0; i < len(q.Scales); i += len(blockQ8.Scales) {
					copy(q.Scales[i:], blockQ8.Scales)
				}
				y := make([]float32, rows)
				bytes = len(q.Data) + 4*len(q.Scales)
				run = func(p *Pool) { p.MatVecQ8(y, q, x) }
			}
			for _, th := range benchThreads() {
				b.Run(fmt.Sprintf("cols=%d/%s/threads=%d", cols, format, th), func(b *testing.B) {
					p := NewPool(th)
					defer p.Close()
					var fastest time.Duration
					clock := startCPUClock()
					for b.Loop() {
						start := time.Now()
						run(p)
						if d := time.Since(start); fastest == 0 || d < fastest {
							fastest = d
						}
					}
					gb := float64(bytes) * float64(b.N) / 1e9
					b.ReportMetric(gb/b.Elapsed().Seconds(), "GB/s")
					b.ReportMetric(float64(bytes)/fastest.Seconds()/1e9, "bestGB/s")
					clock.report(b, gb, "GB")
				})
			}
		}
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

// BenchmarkAttentionHead is one decode attention head over 1024 cached
// positions (head dim 64, KV rows of 128 floats as with 2 KV heads):
// scores with Gemv, the weighted value sum with GemvT, against the same
// work done one position at a time with Dot and a scalar axpy.
func BenchmarkAttentionHead(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n, d, ld = 1024, 64, 128
	keys, vals := randSlice(rng, n*ld), randSlice(rng, n*ld)
	q, p := randSlice(rng, d), randSlice(rng, n)
	scores, out := make([]float32, n), make([]float32, d)
	b.Run("Gemv+GemvT", func(b *testing.B) {
		for b.Loop() {
			Gemv(scores, keys, n, d, ld, q)
			clear(out)
			GemvT(out, vals, n, d, ld, p)
		}
	})
	b.Run("Dot+axpy", func(b *testing.B) {
		for b.Loop() {
			for j := range n {
				scores[j] = Dot(q, keys[j*ld:j*ld+d])
			}
			clear(out)
			for j := range n {
				axpyGo(out, p[j], vals[j*ld:j*ld+d])
			}
		}
	})
}

// BenchmarkGemmKernel runs the GEMM micro-kernels alone on L1-resident
// packed panels (k = gemmKC): the 6×16 tile every set has and, where the
// kernel set has one, the 12×32 tile. Their rate is the ceiling of Sgemm.
func BenchmarkGemmKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const k = gemmKC
	a, bp := randSlice(rng, 2*k*gemmMR), randSlice(rng, 2*k*gemmNR)
	c := make([]float32, 2*gemmMR*2*gemmNR)
	eachKernelSet(b, func(b *testing.B) {
		b.Run("6x16", func(b *testing.B) {
			clock := startCPUClock()
			for b.Loop() {
				gemmKernel(k, a, bp, c, 2*gemmNR, 1, 0)
			}
			gflop := 2 * float64(gemmMR*gemmNR*k) * float64(b.N) / 1e9
			b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
			clock.report(b, gflop, "GFLOP")
		})
		wide := gemmWideKernel()
		if wide == nil {
			return
		}
		b.Run("12x32", func(b *testing.B) {
			clock := startCPUClock()
			for b.Loop() {
				wide(k, a, bp, c, 2*gemmNR, 1, 0)
			}
			gflop := 2 * float64(4*gemmMR*gemmNR*k) * float64(b.N) / 1e9
			b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
			clock.report(b, gflop, "GFLOP")
		})
	})
}
