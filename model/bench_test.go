package model

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
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
		for b.Loop() {
			if _, err := m.Prefill(ctx, m.NewSequence(), toks, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
	})
	b.Run("decode", func(b *testing.B) {
		seq := m.NewSequence()
		if _, err := m.Prefill(ctx, seq, toks, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := m.Decode(ctx, seq, 7); err != nil {
				b.Fatal(err)
			}
			seq.Truncate(len(toks))
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}

func TestBenchModelMain(t *testing.T) {
	var out, errOut strings.Builder
	args := []string{"--random", "tiny", "--dtype", "q8", "--batch", "1,3", "--prompt", "8", "--gen", "2", "--prefix", "20", "--question", "4", "--threads", "1"}
	if err := BenchModelMain(context.Background(), args, nil, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	for _, want := range []string{"q8 weights", "1      prefill", "3      decode", "uncached", "cached"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	dir := t.TempDir()
	m := benchModel(t, "tiny-qwen3", BF16, 0)
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := BenchModelMain(context.Background(), []string{"--checkpoint", dir, "--batch", "2", "--prompt", "4", "--gen", "1", "--prefix", "0"}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	bad := [][]string{
		{"--random", "tiny", "--checkpoint", dir},
		{"--random", "nope"},
		{"--random", "tiny", "--dtype", "f8"},
		{"--random", "tiny", "--batch", "0"},
		{"--random", "tiny", "--prefix", "600"},
		{"--random", "tiny", "extra"},
	}
	for _, args := range bad {
		if err := BenchModelMain(context.Background(), args, nil, &out, &errOut); err == nil {
			t.Errorf("BenchModelMain(%q) succeeded", args)
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
