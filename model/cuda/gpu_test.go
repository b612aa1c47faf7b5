package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// The tests and benchmarks in this file need a GPU; they skip with the
// reason where Open fails (no libcuda.so.1, no device, no NVRTC).
// model/cuda/devicecheck.sh runs them on a GPU machine.

func openGPU(tb testing.TB) *Device {
	tb.Helper()
	d, err := Open(Options{PTXCacheDir: tb.TempDir()})
	if err != nil {
		if os.Getenv("LIVEHAT_REQUIRE_GPU") != "" {
			tb.Fatalf("LIVEHAT_REQUIRE_GPU is set and the device does not open: %v", err)
		}
		tb.Skipf("GPU test skipped (no usable CUDA device): %v", err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("closing the device: %v", err)
		}
	})
	tb.Logf("device: %v", d.Info())
	return d
}

// kernelCase is one kernel launch on random inputs, run on the GPU and on
// the emulator and compared.
type kernelCase struct {
	name string
	// buffers are the device buffers: their initial contents, given the
	// addresses of all buffers (for pointer tables).
	buffers map[string]func(addr map[string]driver.Ptr) []byte
	// launch enqueues the kernels with the buffers' addresses.
	launch func(x executor, addr map[string]driver.Ptr) error
	// outputs are compared after the launch: name → element type.
	outputs map[string]string
}

func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func constBytes(b []byte) func(map[string]driver.Ptr) []byte {
	return func(map[string]driver.Ptr) []byte { return b }
}

// runCase runs c on x and returns the output buffers' bytes.
func runCase(x executor, c kernelCase) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := x.do(func() error {
		addr := map[string]driver.Ptr{}
		sizes := map[string]int{}
		for name, init := range c.buffers {
			n := len(init(map[string]driver.Ptr{}))
			p, err := x.alloc(int64(max(n, 8)))
			if err != nil {
				return err
			}
			defer x.free(p)
			addr[name], sizes[name] = p, n
		}
		for name, init := range c.buffers {
			if err := x.upload(addr[name], init(addr)); err != nil {
				return err
			}
		}
		if err := c.launch(x, addr); err != nil {
			return err
		}
		for name := range c.outputs {
			b := make([]byte, sizes[name])
			if err := x.download(b, addr[name]); err != nil {
				return err
			}
			out[name] = b
		}
		return x.sync()
	})
	return out, err
}

// kernelCases covers every kernel at shapes that exercise partial tiles,
// grouped heads and strided loops.
func kernelCases() []kernelCase {
	rng := rand.New(rand.NewPCG(11, 12))
	f := func(n int) func(map[string]driver.Ptr) []byte { return constBytes(bytesOf(randF32(rng, n))) }
	bf := func(n int) func(map[string]driver.Ptr) []byte {
		h := make([]uint16, n)
		for i, v := range randF32(rng, n) {
			h[i] = toBF16(v)
		}
		return constBytes(bytesOf(h))
	}
	ints := func(v ...int32) func(map[string]driver.Ptr) []byte { return constBytes(bytesOf(v)) }
	zero := func(n int) func(map[string]driver.Ptr) []byte { return constBytes(make([]byte, n)) }
	one := func(x executor, id kernels.ID, g kernels.Geometry, err error, args ...arg) error {
		if err != nil {
			return err
		}
		return x.launch(id, g, args)
	}
	var cases []kernelCase
	for _, bf16 := range []bool{false, true} {
		for _, s := range []struct{ n, rows, cols int }{{1, 37, 70}, {8, 64, 896}, {9, 130, 72}, {70, 200, 33}} {
			s, bf16 := s, bf16
			w := f(s.rows * s.cols)
			if bf16 {
				w = bf(s.rows * s.cols)
			}
			cases = append(cases, kernelCase{
				name:    fmt.Sprintf("linear n=%d %dx%d bf16=%v", s.n, s.rows, s.cols, bf16),
				buffers: map[string]func(map[string]driver.Ptr) []byte{"y": zero(4 * s.n * s.rows), "x": f(s.n * s.cols), "w": w},
				launch: func(x executor, a map[string]driver.Ptr) error {
					id, g, err := kernels.Linear(s.n, s.rows, s.cols, bf16)
					return one(x, id, g, err, ptrArg(a["y"]), ptrArg(a["x"]), ptrArg(a["w"]), i32Arg(s.n), i32Arg(s.rows), i32Arg(s.cols))
				},
				outputs: map[string]string{"y": "f32"},
			})
		}
	}
	cases = append(cases,
		kernelCase{
			name:    "rms_norm",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"x": f(5 * 1000), "w": f(1000), "o": zero(4 * 5 * 1000)},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.Norm(5, 1000)
				return one(x, kernels.RMSNorm, g, err, ptrArg(a["o"]), ptrArg(a["x"]), ptrArg(a["w"]), i32Arg(1000), f32Arg(1e-6))
			},
			outputs: map[string]string{"o": "f32"},
		},
		kernelCase{
			name:    "rope",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"x": f(3 * 14 * 64), "pos": ints(0, 1, 30000)},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.Rope(3, 14, 64)
				return one(x, kernels.RoPE, g, err, ptrArg(a["x"]), ptrArg(a["pos"]), i32Arg(14), i32Arg(64), f64Arg(1e6))
			},
			outputs: map[string]string{"x": "f32"},
		},
		kernelCase{
			name:    "embed_bf16 + gather_rows",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"t": bf(50 * 96), "tok": ints(3, 49, 0, 3), "o": zero(4 * 4 * 96), "g": zero(4 * 2 * 96), "rows": ints(3, 1)},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.PerRow(4, 96)
				if err := one(x, kernels.EmbedBF16, g, err, ptrArg(a["o"]), ptrArg(a["t"]), ptrArg(a["tok"]), i32Arg(96)); err != nil {
					return err
				}
				g, err = kernels.PerRow(2, 96)
				return one(x, kernels.GatherRows, g, err, ptrArg(a["g"]), ptrArg(a["o"]), ptrArg(a["rows"]), i32Arg(96))
			},
			outputs: map[string]string{"o": "f32", "g": "f32"},
		},
		kernelCase{
			name: "element-wise",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"a": f(3 * 70), "b": f(70), "c": f(3 * 70), "d": f(3 * 70),
				"h": zero(2 * 3 * 70)},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.Elementwise(210)
				if err != nil {
					return err
				}
				for _, l := range []struct {
					id   kernels.ID
					args []arg
				}{
					{kernels.AddBias, []arg{ptrArg(a["a"]), ptrArg(a["b"]), i64Arg(210), i32Arg(70)}},
					{kernels.SwiGLU, []arg{ptrArg(a["c"]), ptrArg(a["d"]), i64Arg(210)}},
					{kernels.ResidualAdd, []arg{ptrArg(a["a"]), ptrArg(a["c"]), i64Arg(210)}},
					{kernels.ToBF16, []arg{ptrArg(a["h"]), ptrArg(a["a"]), i64Arg(210)}},
				} {
					if err := x.launch(l.id, g, l.args); err != nil {
						return err
					}
				}
				return nil
			},
			outputs: map[string]string{"a": "f32", "c": "f32", "h": "u16"},
		},
		kernelCase{
			name:    "sgemm",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"a": f(40 * 40), "b": f(40 * 40), "c": f(40 * 40)},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.SgemmLaunch(17, 33, 21)
				return one(x, kernels.Sgemm, g, err, i32Arg(1), i32Arg(0), i32Arg(17), i32Arg(33), i32Arg(21), f32Arg(0.5),
					ptrArg(a["a"]), i32Arg(40), ptrArg(a["b"]), i32Arg(40), f32Arg(2), ptrArg(a["c"]), i32Arg(40))
			},
			outputs: map[string]string{"c": "f32"},
		},
		kernelCase{
			name:    "argmax and sample_gumbel",
			buffers: map[string]func(map[string]driver.Ptr) []byte{"l": f(3 * 5000), "o": zero(12), "s": zero(12), "cnt": constBytes(bytesOf([]uint64{1, 2, 3}))},
			launch: func(x executor, a map[string]driver.Ptr) error {
				g, err := kernels.Sample(3, 5000)
				if err := one(x, kernels.Argmax, g, err, ptrArg(a["o"]), ptrArg(a["l"]), i32Arg(5000)); err != nil {
					return err
				}
				return one(x, kernels.SampleGumbel, g, err, ptrArg(a["s"]), ptrArg(a["l"]), i32Arg(5000), f32Arg(1), u64Arg(99), ptrArg(a["cnt"]))
			},
			outputs: map[string]string{"o": "i32", "s": "i32"},
		},
	)
	// Ties: the lowest index of the largest logit wins, as on the CPU.
	ties := make([]float32, 2*3000)
	for _, i := range []int{2999, 700, 1500} {
		ties[i] = 5
	}
	for _, i := range []int{3000 + 2047, 3000 + 1024, 3000 + 1} {
		ties[i] = -0.5
	}
	for i := 3000; i < 6000; i++ {
		if ties[i] == 0 {
			ties[i] = -1
		}
	}
	cases = append(cases, kernelCase{
		name:    "argmax ties",
		buffers: map[string]func(map[string]driver.Ptr) []byte{"l": constBytes(bytesOf(ties)), "o": zero(8)},
		launch: func(x executor, a map[string]driver.Ptr) error {
			g, err := kernels.Sample(2, 3000)
			return one(x, kernels.Argmax, g, err, ptrArg(a["o"]), ptrArg(a["l"]), i32Arg(3000))
		},
		outputs: map[string]string{"o": "i32"},
	})
	// Attention: three rows of two sequences (one row at position 0, two
	// of a chunk at positions 4 and 5), 4 query heads over 2 KV heads,
	// layer 1 of a 2-layer cache with capacity 8.
	const heads, kvHeads, d, capacity = 4, 2, 48, 8
	kvDim := kvHeads * d
	layerStride := capacity * kvDim
	cache := 2 * layerStride
	cases = append(cases, kernelCase{
		name: "kv_store + attention",
		buffers: map[string]func(map[string]driver.Ptr) []byte{
			"q": f(3 * heads * d), "k": f(3 * kvDim), "v": f(3 * kvDim), "out": zero(4 * 3 * heads * d),
			"split": zero(4 * 3 * heads * d), "part": zero(4 * 3 * heads * 5 * (d + 2)),
			"k0": f(cache), "v0": f(cache), "k1": f(cache), "v1": f(cache),
			"pos": ints(0, 4, 5),
			"kc": func(a map[string]driver.Ptr) []byte {
				return bytesOf([]uint64{uint64(a["k0"]), uint64(a["k1"]), uint64(a["k1"])})
			},
			"vc": func(a map[string]driver.Ptr) []byte {
				return bytesOf([]uint64{uint64(a["v0"]), uint64(a["v1"]), uint64(a["v1"])})
			},
			"stride": constBytes(bytesOf([]int64{int64(layerStride), int64(layerStride), int64(layerStride)})),
		},
		launch: func(x executor, a map[string]driver.Ptr) error {
			g, err := kernels.PerRow(3, kvDim)
			if err := one(x, kernels.KVStore, g, err, ptrArg(a["k"]), ptrArg(a["v"]), ptrArg(a["pos"]), ptrArg(a["kc"]), ptrArg(a["vc"]),
				ptrArg(a["stride"]), i32Arg(1), i32Arg(kvDim)); err != nil {
				return err
			}
			g, err = kernels.AttentionLaunch(3, heads, kvHeads, d)
			if err := one(x, kernels.Attention, g, err, ptrArg(a["out"]), ptrArg(a["q"]), ptrArg(a["pos"]), ptrArg(a["kc"]), ptrArg(a["vc"]),
				ptrArg(a["stride"]), i32Arg(1), i32Arg(heads), i32Arg(kvHeads), i32Arg(d), f32Arg(float32(1/math.Sqrt(d)))); err != nil {
				return err
			}
			// The split form, with more shares (5) than the first row
			// has keys (1), must give the same attention.
			g, err = kernels.AttentionPartialLaunch(3, heads, kvHeads, d, 5)
			if err := one(x, kernels.AttentionPartial, g, err, ptrArg(a["part"]), ptrArg(a["q"]), ptrArg(a["pos"]), ptrArg(a["kc"]), ptrArg(a["vc"]),
				ptrArg(a["stride"]), i32Arg(1), i32Arg(heads), i32Arg(kvHeads), i32Arg(d), f32Arg(float32(1/math.Sqrt(d)))); err != nil {
				return err
			}
			g, err = kernels.AttentionCombineLaunch(3, heads, d)
			return one(x, kernels.AttentionCombine, g, err, ptrArg(a["split"]), ptrArg(a["part"]), i32Arg(heads), i32Arg(d), i32Arg(5))
		},
		outputs: map[string]string{"out": "f32", "k1": "f32", "v1": "f32", "split": "f32"},
	})
	return cases
}

// TestGPUKernelsMatchEmulator runs every kernel on the GPU and on the
// emulator the host-side tests trust, so a kernel that disagrees is named.
func TestGPUKernelsMatchEmulator(t *testing.T) {
	checkKernelCases(t, openGPU(t), "GPU")
}

// checkKernelCases runs the kernel battery on x and on the emulator and
// compares the outputs: floats within 1e-5 of the largest magnitude,
// integers and bfloat16 exactly.
func checkKernelCases(t *testing.T, x executor, what string) {
	for _, c := range kernelCases() {
		t.Run(c.name, func(t *testing.T) {
			want, err := runCase(newEmulator(), c)
			if err != nil {
				t.Fatalf("emulator: %v", err)
			}
			got, err := runCase(x, c)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for name, typ := range c.outputs {
				g, w := got[name], want[name]
				if typ != "f32" {
					if string(g) != string(w) {
						t.Errorf("%s: %s and the emulator differ", name, what)
					}
					continue
				}
				gf, wf := make([]float32, len(g)/4), make([]float32, len(w)/4)
				copy(bytesOf(gf), g)
				copy(bytesOf(wf), w)
				closeLogits(t, name, gf, wf, 1e-5)
			}
		})
	}
}

// TestGPURunnerMatchesCPU compares the Runner on the GPU with the CPU
// backend for the tiny presets and a Qwen2.5-0.5B-shaped model with random
// weights, and the model.Backend path for a tiny model.
func TestGPURunnerMatchesCPU(t *testing.T) {
	d := openGPU(t)
	ctx := context.Background()
	for _, tc := range []struct {
		preset string
		dt     model.DType
		layers int
	}{{"tiny", model.F32, 0}, {"tiny-qwen3", model.BF16, 0}, {"qwen2.5-0.5b", model.BF16, 4}, {"qwen3-0.6b", model.F32, 2}} {
		t.Run(fmt.Sprintf("%s-%s", tc.preset, tc.dt), func(t *testing.T) {
			cfg, _ := model.Preset(tc.preset)
			if tc.layers > 0 {
				cfg.NumLayers = tc.layers // the real widths and vocabulary, fewer layers to keep the CPU side quick
			}
			cpu := model.NewCPU(0)
			defer cpu.Close()
			m, err := model.NewRandom(cfg, 5, model.Options{DType: tc.dt, Backend: cpu, MaxContext: 2048})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRunner(d, m, RunnerOptions{MaxRows: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			tol := 1e-3
			if d.Info().CUBLAS != "" && tc.dt == model.BF16 {
				tol = 3e-2 // bf16 activations in cuBLAS prompt products
			}
			prompt := make([]int, 100) // two chunks of 64
			for i := range prompt {
				prompt[i] = (i*131 + 7) % cfg.VocabSize
			}
			checkParity(t, m, r, prompt, 4, tol, max(tol/10, 1e-3))
		})
	}

	cfg, _ := model.Preset("tiny")
	b := NewBackend(d, 0)
	defer b.Close()
	cpu := model.NewCPU(0)
	defer cpu.Close()
	want, _ := model.NewRandom(cfg, 9, model.Options{Backend: cpu})
	got, _ := model.NewRandom(cfg, 9, model.Options{Backend: b})
	prompt := make([]int, 300)
	for i := range prompt {
		prompt[i] = i % cfg.VocabSize
	}
	wl, _ := want.Forward(ctx, want.NewSequence(), prompt)
	gl, err := got.Forward(ctx, got.NewSequence(), prompt)
	if err != nil || b.Err() != nil {
		t.Fatalf("Backend: %v, %v", err, b.Err())
	}
	closeLogits(t, "Backend prompt", gl, wl, 1e-3)
}

// TestGPURunnerDecoder drives the Runner on the GPU through model.Decoder,
// the interface model/engine serves with under LIVEHAT_BACKEND=cuda.
func TestGPURunnerDecoder(t *testing.T) {
	d := openGPU(t)
	m := tinyModel(t, "tiny-qwen3", model.F32)
	if err := m.InitMTP(2, 3); err != nil {
		t.Fatal(err)
	}
	checkDecoder(t, d, m, 1e-3)
}

// BenchmarkGPU measures a Qwen2.5-0.5B-shaped model (random bf16 weights)
// on the GPU: prefill of a 512-token prompt and decode steps at batch 1
// and 8 (graph replays, greedy selection on the device), reporting tokens/s.
func BenchmarkGPU(b *testing.B) {
	d := openGPU(b)
	ctx := context.Background()
	cfg, _ := model.Preset("qwen2.5-0.5b")
	cpu := model.NewCPU(0)
	defer cpu.Close()
	start := time.Now()
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.BF16, Backend: cpu, MaxContext: 4096})
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewRunner(d, m, RunnerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	free, total, err := d.MemInfo()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("model built and uploaded in %v (%.2f GiB of weights; %.1f of %.1f GiB device memory in use)", time.Since(start).Round(time.Millisecond),
		float64(r.WeightBytes())/(1<<30), float64(total-free)/(1<<30), float64(total)/(1<<30))
	prompt := make([]int, 512)
	for i := range prompt {
		prompt[i] = (i*7919 + 13) % cfg.VocabSize
	}
	b.Run("prefill512", func(b *testing.B) {
		for b.Loop() {
			s := r.NewSequence()
			if _, err := r.Next(ctx, []*Sequence{s}, [][]int{prompt}, Sampling{}); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(len(prompt)*b.N)/b.Elapsed().Seconds(), "tok/s")
	})
	for _, batch := range []int{1, 8} {
		for _, graphs := range []bool{true, false} {
			name := fmt.Sprintf("decode-batch%d", batch)
			if !graphs {
				name += "-nographs"
			}
			b.Run(name, func(b *testing.B) {
				rr := r
				if !graphs {
					rr.useGraphs = false
					defer func() { rr.useGraphs = true }()
				}
				seqs := make([]*Sequence, batch)
				toks := make([][]int, batch)
				for i := range seqs {
					seqs[i] = rr.NewSequence()
					defer seqs[i].Close()
					toks[i] = prompt[:128]
				}
				next, err := rr.Next(ctx, seqs, toks, Sampling{})
				if err != nil {
					b.Fatal(err)
				}
				steps := 0
				for b.Loop() {
					for i := range toks {
						toks[i] = []int{next[i]}
					}
					if next, err = rr.Next(ctx, seqs, toks, Sampling{}); err != nil {
						b.Fatal(err)
					}
					steps++
					if seqs[0].Len() >= 4000 { // stay inside MaxContext
						for _, s := range seqs {
							s.Truncate(128)
						}
					}
				}
				b.ReportMetric(float64(batch*steps)/b.Elapsed().Seconds(), "tok/s")
				// The device's share of one more step shows how much of
				// the step is host overhead.
				for i := range toks {
					toks[i] = []int{next[i]}
				}
				gpu, err := d.Time(func() error {
					_, err := rr.Next(ctx, seqs, toks, Sampling{})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(gpu.Microseconds()), "gpu-µs/step")
			})
		}
	}
}
