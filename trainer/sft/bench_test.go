package sft

import (
	"context"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
)

// BenchmarkSFTStep measures the optimizer step of the SFT loop on real
// HSA-SFT batches (8 trajectories of the demo harness's live rooms, packed,
// assistant-only loss) for the tiny and 5m shapes, and reports the tokens
// read per second (context and trained tokens alike).
func BenchmarkSFTStep(b *testing.B) {
	h := demo(b)
	data := DefaultDataConfig()
	data.Rooms, data.Questions = 4, 8
	trajs, _, err := Build(context.Background(), h, data)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		shape string
		vocab int
	}{{"tiny", 2048}, {"small", 2048}, {"5m", 4096}} {
		b.Run(c.shape, func(b *testing.B) {
			tok, err := TrainTokenizer(context.Background(), trajs, chat.Qwen3, c.vocab)
			if err != nil {
				b.Fatal(err)
			}
			var exs []nn.Example
			for _, t := range trajs {
				ex, err := Tokenize(tok, t, chat.Qwen3)
				if err != nil {
					b.Fatal(err)
				}
				exs = append(exs, ex)
			}
			mc, err := ModelPreset(c.shape, tok.VocabSize(), 4096)
			if err != nil {
				b.Fatal(err)
			}
			cpu := model.NewCPU(0)
			defer cpu.Close()
			base, err := model.NewRandom(mc, 1, model.Options{Backend: cpu})
			if err != nil {
				b.Fatal(err)
			}
			m, err := nn.New(base, cpu)
			if err != nil {
				b.Fatal(err)
			}
			opt := nn.NewAdamW(nn.DefaultAdamW())
			ctx := context.Background()
			seen, step := 0, 0
			b.ResetTimer()
			cpu0, _ := runtest.CPUTime()
			for b.Loop() {
				batch := stepExamples(exs, 1, step, 8)
				step++
				total := 0
				for _, e := range batch {
					total += e.Trained()
					seen += len(e.Tokens)
				}
				m.ZeroGrad()
				for _, mb := range nn.Pack(batch, 8192) {
					if _, err := m.Backward(ctx, mb, 1/float32(total)); err != nil {
						b.Fatal(err)
					}
				}
				nn.ClipGradNorm(m.Params(), 1)
				if err := opt.Step(m.Params(), 1e-3); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(seen)/b.Elapsed().Seconds(), "tokens/s")
			if cpu1, ok := runtest.CPUTime(); ok {
				b.ReportMetric(float64(seen)/(cpu1-cpu0).Seconds(), "tokens/cpu-s")
			}
			b.ReportMetric(float64(seen)/float64(b.N)/8, "tokens/example")
			b.ReportMetric(float64(m.NumParams())/1e6, "Mparams")
		})
	}
}
