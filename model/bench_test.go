package model

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchModel builds a preset with random weights; layers > 0 overrides the
// depth (a few layers of a real shape keep setup short while the per-layer
// work is real).
func benchModel(b testing.TB, preset string, dt DType, layers int) *Model {
	b.Helper()
	cfg, err := Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	if layers > 0 {
		cfg.NumLayers = layers
	}
	cpu := NewCPU(0)
	b.Cleanup(cpu.Close)
	m, err := NewRandom(cfg, 1, Options{DType: dt, Backend: cpu})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkTinyPrefill measures a 64-token forward pass of the tiny model.
func BenchmarkTinyPrefill(b *testing.B) {
	m := benchModel(b, "tiny", F32, 0)
	toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 64, m.Config.VocabSize)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Prefill(ctx, m.NewSequence(), toks, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkTinyDecode measures one decode step of the tiny model after a
// 64-token prompt.
func BenchmarkTinyDecode(b *testing.B) {
	for _, dt := range []DType{F32, BF16, Q8} {
		b.Run(string(dt), func(b *testing.B) {
			m := benchModel(b, "tiny", dt, 0)
			ctx := context.Background()
			toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 64, m.Config.VocabSize)
			seq := m.NewSequence()
			if _, err := m.Prefill(ctx, seq, toks, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Decode(ctx, seq, 7); err != nil {
					b.Fatal(err)
				}
				seq.Truncate(len(toks))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkTinyBatchDecode measures a batched decode step of 8 sequences.
func BenchmarkTinyBatchDecode(b *testing.B) {
	m := benchModel(b, "tiny", F32, 0)
	ctx := context.Background()
	seqs := make([]*Sequence, 8)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range seqs {
		seqs[i] = m.NewSequence()
		if _, err := m.Prefill(ctx, seqs[i], randomTokens(rng, 32+i, m.Config.VocabSize), nil); err != nil {
			b.Fatal(err)
		}
	}
	next := []int{1, 2, 3, 4, 5, 6, 7, 8}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Batch(ctx, seqs, next); err != nil {
			b.Fatal(err)
		}
		for i, s := range seqs {
			s.Truncate(32 + i)
		}
	}
	b.ReportMetric(float64(b.N*len(seqs))/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkQwen25Layers runs two layers of the Qwen2.5-0.5B shape (plus its
// 151936-row LM head), bf16 weights: decode and a 128-token prefill.
func BenchmarkQwen25Layers(b *testing.B) {
	m := benchModel(b, "qwen2.5-0.5b", BF16, 2)
	ctx := context.Background()
	toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 128, m.Config.VocabSize)
	b.Run("prefill128", func(b *testing.B) {
		var times []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := m.Prefill(ctx, m.NewSequence(), toks, nil); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
		b.ReportMetric(float64(len(toks))/p10(times).Seconds(), "p10-tokens/s")
	})
	b.Run("decode", func(b *testing.B) {
		seq := m.NewSequence()
		if _, err := m.Prefill(ctx, seq, toks, nil); err != nil {
			b.Fatal(err)
		}
		var times []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := m.Decode(ctx, seq, 7); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
			seq.Truncate(len(toks))
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		b.ReportMetric(1/p10(times).Seconds(), "p10-tokens/s")
	})
}

// p10 returns the tenth percentile of times (sorting them): on a shared
// machine, the time of a run that was hardly disturbed.
func p10(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/10]
}

func TestBenchThroughput(t *testing.T) {
	ctx := context.Background()
	m := benchModel(t, "tiny", Q8, 0)
	res, err := BenchThroughput(ctx, m, ThroughputOptions{Batch: 3, Prompt: 8, Gen: 2, Repeat: 2, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if res.Prefill.Wall <= 0 || res.Decode.Wall <= 0 || res.Speculative != nil {
		t.Errorf("plain run: %+v", res)
	}
	if err := m.InitMTP(2, 1); err != nil {
		t.Fatal(err)
	}
	res, err = BenchThroughput(ctx, m, ThroughputOptions{Batch: 2, Prompt: 6, Gen: 5, Speculative: 2, Repeat: 1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	spec := res.Speculative
	if spec == nil || !spec.Identical || spec.Tokens != 2*5 || spec.Plain.Wall <= 0 || spec.Drafted.Wall <= 0 || spec.Stats.Steps == 0 {
		t.Errorf("speculative run: %+v", spec)
	}

	for _, tt := range []struct {
		name string
		opts ThroughputOptions
		want string
	}{
		{"no batch", ThroughputOptions{Prompt: 8, Gen: 2, Repeat: 1}, "must be positive"},
		{"no repeat", ThroughputOptions{Batch: 1, Prompt: 8, Gen: 2}, "must be positive"},
		{"past the context", ThroughputOptions{Batch: 1, Prompt: m.MaxContext(), Gen: 1, Repeat: 1}, "exceed the model's context"},
		{"more drafts than heads", ThroughputOptions{Batch: 1, Prompt: 4, Gen: 1, Repeat: 1, Speculative: 3}, "2 MTP heads"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := BenchThroughput(ctx, m, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestBenchPrefixCache(t *testing.T) {
	ctx := context.Background()
	m := benchModel(t, "tiny", F32, 0)
	res, err := BenchPrefixCache(ctx, m, PrefixCacheOptions{Prefix: 64, Question: 4, Repeat: 2, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if res.Uncached.Wall <= 0 || res.Cached.Wall <= 0 {
		t.Errorf("timings %+v", res)
	}
	for _, opts := range []PrefixCacheOptions{{Question: 4, Repeat: 1}, {Prefix: 8, Question: 4}, {Prefix: m.MaxContext(), Question: 4, Repeat: 1}} {
		if _, err := BenchPrefixCache(ctx, m, opts); err == nil {
			t.Errorf("%+v accepted", opts)
		}
	}
}

// BenchmarkDecodeAttention compares the two decode attention paths (dot
// products, GEMMs) in batched decode steps of two Qwen2.5-0.5B-shaped layers
// after a 2,000-token context; a small LM head keeps the attention visible.
func BenchmarkDecodeAttention(b *testing.B) {
	m := benchModel(b, "qwen2.5-0.5b", BF16, 2)
	m.Config.VocabSize = 1024
	var err error
	if m.LMHead, err = NewWeight(BF16, make([]float32, 1024*896), 1024, 896); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 2000, m.Config.VocabSize)
	for _, bs := range []int{1, 8} {
		seqs := make([]*Sequence, bs)
		for i := range seqs {
			seqs[i] = m.NewSequence()
			if _, err := m.Prefill(ctx, seqs[i], toks, nil); err != nil {
				b.Fatal(err)
			}
		}
		next := make([]int, bs)
		for _, path := range []string{"dot", "gemm"} {
			b.Run(fmt.Sprintf("batch%d/%s", bs, path), func(b *testing.B) {
				m.gemmAttentionKeys = 0
				if path == "dot" {
					m.gemmAttentionKeys = len(toks) + 2
				}
				for b.Loop() {
					if _, err := m.Batch(ctx, seqs, next); err != nil {
						b.Fatal(err)
					}
					for _, s := range seqs {
						s.Truncate(len(toks))
					}
				}
			})
		}
	}
}

// bundledShape is the shape of the bundled model in examples/model (1.5 M
// parameters: hidden 128, 4 layers, 4 query / 2 KV heads of 32, SwiGLU 384,
// tied 5,724-token vocabulary).
func bundledShape() Config {
	return Config{
		Architecture: Qwen2, HiddenSize: 128, IntermediateSize: 384, NumLayers: 4,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 32, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 5724, TieWordEmbeddings: true, MaxPositionEmbeddings: 1024,
		TorchDType: "bfloat16", AttentionBias: true, BOSTokenID: -1, EOSTokenID: 2,
	}
}

// BenchmarkBundledDecode decodes with the bundled model's shape (bf16,
// random weights) on one thread and on two, alternating between the two
// every 32 tokens so that both see the same load, 256 tokens after a
// 64-token prompt per op and thread count (as `livehat bench model
// --checkpoint examples/model --gen 256`). It reports, per thread count,
// the rate of the tenth percentile of per-token times (p10-tokens/s): on a
// shared, oversubscribed machine most tokens wait for a CPU at some point,
// while the fastest tenth ran undisturbed, which is what a quiet machine
// shows; and the ratios of two threads over one at the tenth percentile,
// the median and the mean.
func BenchmarkBundledDecode(b *testing.B) {
	const gen, block = 256, 32
	type run struct {
		m     *Model
		seq   *Sequence
		times []time.Duration
	}
	ctx := context.Background()
	toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 64, bundledShape().VocabSize)
	var runs [2]*run
	for i, threads := range []int{1, 2} {
		cpu := NewCPU(threads)
		b.Cleanup(cpu.Close)
		m, err := NewRandom(bundledShape(), 1, Options{DType: BF16, Backend: cpu})
		if err != nil {
			b.Fatal(err)
		}
		seq := m.NewSequence()
		if _, err := m.Prefill(ctx, seq, toks, nil); err != nil {
			b.Fatal(err)
		}
		runs[i] = &run{m: m, seq: seq}
	}
	for b.Loop() {
		for i0 := 0; i0 < gen; i0 += block {
			for _, r := range runs {
				for i := i0; i < i0+block; i++ {
					t0 := time.Now()
					if _, err := r.m.Decode(ctx, r.seq, (7*i)%r.m.Config.VocabSize); err != nil {
						b.Fatal(err)
					}
					r.times = append(r.times, time.Since(t0))
				}
			}
		}
		for _, r := range runs {
			r.seq.Truncate(len(toks))
		}
	}
	var q10, p50, mean [2]float64
	for i, r := range runs {
		var sum time.Duration
		for _, t := range r.times {
			sum += t
		}
		mean[i] = float64(len(r.times)) / sum.Seconds()
		q10[i] = 1 / p10(r.times).Seconds()
		p50[i] = 1 / r.times[len(r.times)/2].Seconds()
		b.ReportMetric(q10[i], fmt.Sprintf("p10-tokens/s-%dthread", i+1))
	}
	b.ReportMetric(q10[1]/q10[0], "p10-2thread/1thread")
	b.ReportMetric(p50[1]/p50[0], "p50-2thread/1thread")
	b.ReportMetric(mean[1]/mean[0], "mean-2thread/1thread")
}
