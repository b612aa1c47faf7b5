package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
)

// benchModel returns a random model on all physical cores: "tiny" is the
// test preset over the trained test vocabulary; "small" the trainer's
// 1.5M-parameter shape (128 wide, 4 layers, GQA 4/2) over it; "medium" is a
// 40M-parameter Qwen2 shape (512 wide, 8 layers, GQA 8/2, a 32k
// vocabulary).
func benchModel(b *testing.B, name string) (*model.Model, *tokenizer.Tokenizer) {
	b.Helper()
	tok := trainTokenizer(b, 600)
	cfg, err := model.Preset("tiny")
	if err != nil {
		b.Fatal(err)
	}
	cfg.VocabSize = tok.VocabSize()
	switch name {
	case "small":
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.HeadDim = 128, 384, 4, 32
	case "medium":
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers = 512, 1536, 8
		cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim = 8, 2, 64
		cfg.VocabSize = 32000
	}
	cfg.MaxPositionEmbeddings = 4096
	cfg.EOSTokenID, _ = tok.TokenID("<|im_end|>")
	cpu := model.NewCPU(0)
	b.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.F32, Backend: cpu})
	if err != nil {
		b.Fatal(err)
	}
	return m, tok
}

// BenchmarkGenerate measures generated tokens per second through the
// engine with 1, 4 and 8 concurrent requests of 64 tokens each. tok/s counts
// over the whole call (short prompts included); decode-tok/s over the decode
// phase only; tok/cpu-s per second of the process's CPU time.
func BenchmarkGenerate(b *testing.B) {
	const gen = 64
	for _, name := range []string{"tiny", "medium"} {
		m, tok := benchModel(b, name)
		e, err := New(m, tok, Options{MaxBatch: 8})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		b.Logf("%s: %.1fM parameters", name, float64(m.NumParams())/1e6)
		for _, conc := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("model=%s/concurrency=%d", name, conc), func(b *testing.B) {
				var tokens, decodeTokens int
				var wall, decode time.Duration
				cpu0 := cpuTime()
				for i := range b.N {
					start := time.Now()
					results := make([]Result, conc)
					var wg sync.WaitGroup
					for c := range conc {
						wg.Go(func() {
							req := Request{Messages: question("You are a live-stream host.", fmt.Sprintf("Question %d from viewer %d: how much is the jacket?", i, c)),
								MaxTokens: gen, IgnoreEOS: true, Sampling: greedy()}
							res, err := e.Generate(context.Background(), req, nil)
							if err != nil {
								b.Error(err)
							}
							results[c] = res
						})
					}
					wg.Wait()
					wall += time.Since(start)
					var slowest time.Duration
					for _, r := range results {
						tokens += r.Usage.CompletionTokens
						decodeTokens += r.Usage.CompletionTokens - 1
						slowest = max(slowest, r.Usage.Decode)
					}
					decode += slowest
				}
				b.ReportMetric(float64(tokens)/wall.Seconds(), "tok/s")
				b.ReportMetric(float64(decodeTokens)/decode.Seconds(), "decode-tok/s")
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(tokens)/cpu.Seconds(), "tok/cpu-s")
				}
			})
		}
	}
}

// harnessPrefix is a system prompt of at least n tokens.
func harnessPrefix(tok *tokenizer.Tokenizer, n int) string {
	system := "You are the host of a live room. Rules and catalog follow.\n"
	for i := 0; len(tok.EncodeWithSpecial(system)) < n; i++ {
		system += corpus()[i%len(corpus())] + "\n"
	}
	return system
}

// BenchmarkTimeToFirstToken measures the time from the call to the first
// generated token for a viewer question after a 1,000-token harness prefix,
// with the prefix cached (warmed by an earlier question) and without a
// prefix cache.
func BenchmarkTimeToFirstToken(b *testing.B) {
	for _, name := range []string{"tiny", "medium"} {
		m, tok := benchModel(b, name)
		system := harnessPrefix(tok, 1000)
		for _, cached := range []bool{false, true} {
			opts := Options{PrefixCacheBytes: -1}
			if cached {
				opts.PrefixCacheBytes = 0
			}
			e, err := New(m, tok, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close() })
			// Every question is new, also across -count runs, so that
			// only the harness prefix can come from the cache.
			asked := 0
			ask := func() Result {
				asked++
				msgs := []chat.Message{{Role: chat.RoleSystem, Content: system}, {Role: chat.RoleUser, Content: fmt.Sprintf("Viewer %d asks: is there a coupon for the red jacket?", asked)}}
				res, err := e.Generate(context.Background(), Request{Messages: msgs, MaxTokens: 1}, nil)
				if err != nil {
					b.Fatal(err)
				}
				return res
			}
			b.Run(fmt.Sprintf("model=%s/cached=%v", name, cached), func(b *testing.B) {
				ask()
				var ttft time.Duration
				var prompt, hit int
				b.ResetTimer()
				cpu0 := cpuTime()
				for range b.N {
					res := ask()
					ttft += res.Usage.Queued + res.Usage.Prefill
					prompt, hit = res.Usage.PromptTokens, res.Usage.CachedTokens
				}
				b.ReportMetric(float64(ttft.Microseconds())/1e3/float64(b.N), "ms-ttft")
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
				}
				b.ReportMetric(float64(prompt), "prompt-tokens")
				b.ReportMetric(float64(hit), "cached-tokens")
			})
		}
	}
}

// BenchmarkLoadedEngine plays a loaded live-room engine: 24 requests at
// once, each a 700-token harness prefix
// (shared, cached after the first op), its own 200-token stream context
// and question, and 32 generated tokens, on the "small" shape. req/s is the throughput; cores is
// CPU time over wall time, how much of the machine the engine's step loop
// keeps busy while it is the bottleneck.
func BenchmarkLoadedEngine(b *testing.B) {
	const conc, gen = 24, 32
	m, tok := benchModel(b, "small")
	e, err := New(m, tok, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	system := harnessPrefix(tok, 700)
	streamContext := func(i int) string {
		s := fmt.Sprintf("Stream %d. ", i)
		for j := 0; len(tok.Encode(s)) < 200; j++ {
			s += corpus()[(i*7+j)%len(corpus())] + " "
		}
		return s
	}
	asked := 0
	var wall, cpuUsed time.Duration
	b.ResetTimer()
	for range b.N {
		start, cpu0 := time.Now(), cpuTime()
		var wg sync.WaitGroup
		for c := range conc {
			asked++
			msgs := []chat.Message{{Role: chat.RoleSystem, Content: system + streamContext(asked)},
				{Role: chat.RoleUser, Content: fmt.Sprintf("Viewer %d asks: how much is the jacket?", c)}}
			wg.Go(func() {
				if _, err := e.Generate(context.Background(), Request{Messages: msgs, MaxTokens: gen, IgnoreEOS: true, Sampling: greedy()}, nil); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		wall += time.Since(start)
		cpuUsed += cpuTime() - cpu0
	}
	b.ReportMetric(float64(conc*b.N)/wall.Seconds(), "req/s")
	b.ReportMetric(float64(conc*gen*b.N)/wall.Seconds(), "tok/s")
	b.ReportMetric(cpuUsed.Seconds()/wall.Seconds(), "cores")
}
