package nn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/livehat/livehat/model"
)

// benchShape is a decoder shape of the training benchmarks.
type benchShape struct {
	name                  string
	hidden, layers, heads int
	kvHeads, inter, vocab int
}

var benchShapes = []benchShape{
	{"tiny", 64, 2, 4, 2, 192, 2048},
	{"small", 128, 4, 4, 2, 384, 2048}, // the calibration run's S2 size
	{"5m", 256, 6, 8, 4, 704, 4096},
}

func (s benchShape) config(maxLen int) model.Config {
	return model.Config{
		Architecture: model.Qwen2, HiddenSize: s.hidden, IntermediateSize: s.inter, NumLayers: s.layers,
		NumHeads: s.heads, NumKVHeads: s.kvHeads, HeadDim: s.hidden / s.heads, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: s.vocab, TieWordEmbeddings: true, MaxPositionEmbeddings: maxLen, TorchDType: "float32",
		AttentionBias: true, BOSTokenID: -1, EOSTokenID: -1,
	}
}

// trainFLOPs estimates the floating-point work of one trained token: six
// per weight of every matrix product (forward, input and weight gradients,
// the LM head included) plus the causal attention products, QKᵀ and PV
// forward and three times that backward, over L/2 keys on average.
func trainFLOPs(c model.Config, L int) float64 {
	D, qd, kvd := c.HiddenSize, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	perLayer := D*qd + 2*D*kvd + qd*D + 3*D*c.IntermediateSize
	matmul := float64(c.NumLayers*perLayer + c.VocabSize*D)
	attn := float64(c.NumLayers) * 4 * float64(qd) * float64(L) / 2
	return 6*matmul + 3*attn
}

// BenchmarkTrainStep measures a full optimizer step (forward, backward,
// clipping, AdamW) on a batch of 8 examples of L tokens, all trained, and
// reports tokens/s and the achieved GFLOP/s.
func BenchmarkTrainStep(b *testing.B) {
	for _, s := range benchShapes {
		for _, L := range []int{136, 487, 1400} {
			b.Run(fmt.Sprintf("%s/L%d", s.name, L), func(b *testing.B) {
				cfg := s.config(2048)
				cpu := model.NewCPU(0)
				defer cpu.Close()
				base, err := model.NewRandom(cfg, 1, model.Options{Backend: cpu})
				if err != nil {
					b.Fatal(err)
				}
				m, err := New(base, cpu)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 1))
				var exs []Example
				total := 0
				for range 8 {
					e := Example{Tokens: randomTokens(rng, L, cfg.VocabSize)}
					exs = append(exs, e)
					total += e.Trained()
				}
				opt := NewAdamW(DefaultAdamW())
				ctx := context.Background()
				b.ResetTimer()
				cpu0, _ := processCPUTime()
				for b.Loop() {
					m.ZeroGrad()
					if _, err := m.Backward(ctx, exs, 1/float32(total)); err != nil {
						b.Fatal(err)
					}
					ClipGradNorm(m.Params(), 1)
					if err := opt.Step(m.Params(), 1e-3); err != nil {
						b.Fatal(err)
					}
				}
				sec := b.Elapsed().Seconds()
				tokens := float64(8*L) * float64(b.N)
				b.ReportMetric(tokens/sec, "tokens/s")
				if cpu1, ok := processCPUTime(); ok {
					b.ReportMetric(tokens/(cpu1-cpu0).Seconds(), "tokens/cpu-s")
					b.ReportMetric(tokens*trainFLOPs(cfg, L)/(cpu1-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
				}
				b.ReportMetric(tokens*trainFLOPs(cfg, L)/sec/1e9, "GFLOP/s")
				b.ReportMetric(float64(m.NumParams())/1e6, "Mparams")
			})
		}
	}
}

// BenchmarkSgemmPeak is the reference the training throughput is compared
// to: one 4096×512×512 float32 product on the CPU backend's kernels, the
// shape the calibration notes measured PyTorch's peak with.
func BenchmarkSgemmPeak(b *testing.B) {
	const m, n, k = 4096, 512, 512
	cpu := model.NewCPU(0)
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(2, 2))
	a, w, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	cpu0, _ := processCPUTime()
	for b.Loop() {
		cpu.Sgemm(false, true, m, n, k, 1, a, k, w, k, 0, c, n)
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu1, ok := processCPUTime(); ok {
		b.ReportMetric(2*m*n*k*float64(b.N)/(cpu1-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
	}
}
