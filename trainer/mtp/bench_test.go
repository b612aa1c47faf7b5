package mtp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/sample"
)

// BenchmarkSpeculativeDecode trains a toy policy (progressions, see
// trainedPolicy) and its two MTP heads, then decodes 64 greedy tokens for
// 1 and 4 held-out prompts at once, plain and with 2 drafts per step,
// alternating within each iteration so that both see the same machine
// load, and keeps the fastest run of each (the least disturbed on a shared
// machine). It reports both rates, their ratio, the acceptance rate and
// the mean accepted length. Shapes: the "tiny" preset (H 64, 2 layers) and a
// "small" one (H 256, 4 layers), where the weights outweigh the per-row
// overheads more.
func BenchmarkSpeculativeDecode(b *testing.B) {
	tiny, _ := model.Preset("tiny")
	small := tiny
	small.HiddenSize, small.IntermediateSize, small.NumLayers, small.HeadDim = 256, 704, 4, 64
	for _, shape := range []struct {
		name    string
		cfg     model.Config
		threads int
	}{{"tiny", tiny, 1}, {"tiny", tiny, 2}, {"small", small, 1}, {"small", small, 2}} {
		b.Run(fmt.Sprintf("%s/threads=%d", shape.name, shape.threads), func(b *testing.B) {
			ctx := context.Background()
			m, prompts := trainedPolicyOf(b, shape.cfg, 2, 150, shape.threads, 11)
			rolls, err := SampleRollouts(ctx, m, prompts[:48], 32, sample.Config{})
			if err != nil {
				b.Fatal(err)
			}
			if err := Train(ctx, m, rolls, DefaultOptions(), nil); err != nil {
				b.Fatal(err)
			}
			held := prompts[48:]
			for _, conc := range []int{1, 4} {
				b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
					var plain, spec time.Duration
					var st model.SpecStats
					tokens := 0
					run := func(k int) (time.Duration, model.SpecStats, int) {
						seqs := make([]*model.Sequence, conc)
						for i := range seqs {
							seqs[i] = m.NewSequence()
						}
						t0 := time.Now()
						out, s, err := m.GenerateGreedy(ctx, seqs, held[:conc], 64, k)
						if err != nil {
							b.Fatal(err)
						}
						n := 0
						for _, o := range out {
							n += len(o)
						}
						return time.Since(t0), s, n
					}
					for b.Loop() {
						d, _, n := run(0)
						d2, s, _ := run(2)
						if plain == 0 || d < plain {
							plain = d
						}
						if spec == 0 || d2 < spec {
							spec = d2
						}
						st, tokens = s, n
					}
					b.ReportMetric(float64(tokens)/plain.Seconds(), "plain-tok/s")
					b.ReportMetric(float64(tokens)/spec.Seconds(), "spec-tok/s")
					b.ReportMetric(plain.Seconds()/spec.Seconds(), "speedup")
					b.ReportMetric(st.AcceptanceRate(), "acceptance")
					b.ReportMetric(st.MeanAcceptedLength(), "mean-accepted")
				})
			}
		})
	}
}
