package model

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Timing is the best of repeated runs of one benchmark phase: on a shared
// machine the fastest run is the one least disturbed, and CPU time is
// disturbed much less than wall time.
type Timing struct {
	// Wall is the shortest wall time of the runs.
	Wall time.Duration
	// CPU is the smallest process CPU time of the runs, all threads
	// together; 0 where the platform does not report it.
	CPU time.Duration
}

// ThroughputOptions says what BenchThroughput measures.
type ThroughputOptions struct {
	// Batch is the number of sequences advanced together.
	Batch int
	// Prompt is the prompt tokens per sequence; Gen the decode steps.
	Prompt, Gen int
	// Speculative, when positive, also decodes greedily with this many
	// tokens drafted per step by the model's MTP heads (it needs that many
	// heads; see InitMTP), against plain greedy decoding in the same run.
	Speculative int
	// Repeat is the runs per phase; the fastest is reported.
	Repeat int
	// Seed draws the random prompt tokens.
	Seed uint64
}

// Throughput is what BenchThroughput measured.
type Throughput struct {
	// Prefill read Batch×Prompt tokens; Decode wrote Batch×Gen.
	Prefill, Decode Timing
	// Speculative is nil unless ThroughputOptions.Speculative was set.
	Speculative *SpeculativeThroughput
}

// SpeculativeThroughput compares greedy decoding with and without drafts
// from the MTP heads, in the same GenerateGreedy loop, so that the ratio
// isolates speculation.
type SpeculativeThroughput struct {
	// Tokens is the tokens generated over all sequences, in either run.
	Tokens int
	// Plain and Drafted time the runs without and with drafts.
	Plain, Drafted Timing
	// Stats are the drafted run's acceptance counts.
	Stats SpecStats
	// Identical reports whether both runs generated the same tokens, as
	// greedy speculation must.
	Identical bool
}

// BenchThroughput times prefill and decode of opts.Batch random prompts
// on m, and speculative decoding when asked.
func BenchThroughput(ctx context.Context, m *Model, opts ThroughputOptions) (Throughput, error) {
	switch {
	case opts.Batch <= 0 || opts.Prompt <= 0 || opts.Gen <= 0 || opts.Repeat <= 0:
		return Throughput{}, fmt.Errorf("model: bench: batch %d, prompt %d, gen %d and repeat %d must be positive", opts.Batch, opts.Prompt, opts.Gen, opts.Repeat)
	case opts.Prompt+opts.Gen > m.MaxContext():
		return Throughput{}, fmt.Errorf("model: bench: %d tokens exceed the model's context of %d", opts.Prompt+opts.Gen, m.MaxContext())
	case opts.Speculative < 0 || opts.Speculative > len(m.MTP):
		return Throughput{}, fmt.Errorf("model: bench: %d drafts per step, but the model has %d MTP heads", opts.Speculative, len(m.MTP))
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0))
	seqs := make([]*Sequence, opts.Batch)
	prompts := make([][]int, opts.Batch)
	for i := range seqs {
		seqs[i] = m.NewSequence()
		prompts[i] = randomTokens(rng, opts.Prompt, m.Config.VocabSize)
	}
	var res Throughput
	var first [][]float32
	var err error
	res.Prefill, err = bestOf(opts.Repeat, func() error {
		for _, s := range seqs {
			s.Truncate(0)
		}
		var err error
		first, err = m.Step(ctx, seqs, prompts)
		return err
	})
	if err != nil {
		return Throughput{}, err
	}
	next := make([]int, opts.Batch)
	res.Decode, err = bestOf(opts.Repeat, func() error {
		for _, s := range seqs {
			s.Truncate(opts.Prompt)
		}
		last := first
		for range opts.Gen {
			for i := range next {
				next[i] = argmax(last[i])
			}
			var err error
			if last, err = m.Batch(ctx, seqs, next); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Throughput{}, err
	}
	if opts.Speculative > 0 {
		spec, err := benchSpeculative(ctx, m, seqs, prompts, opts.Gen, opts.Speculative, opts.Repeat)
		if err != nil {
			return Throughput{}, err
		}
		res.Speculative = &spec
	}
	return res, nil
}

// benchSpeculative times greedy decoding of gen tokens per sequence from
// the end of its prompt, plain and with k drafts per step.
func benchSpeculative(ctx context.Context, m *Model, seqs []*Sequence, prompts [][]int, gen, k, repeat int) (SpeculativeThroughput, error) {
	tails := make([][]int, len(seqs))
	for i, p := range prompts {
		tails[i] = p[len(p)-1:]
	}
	var plainOut, specOut [][]int
	var res SpeculativeThroughput
	run := func(draft int, out *[][]int, stats *SpecStats) func() error {
		return func() error {
			for i, s := range seqs {
				if err := s.Truncate(len(prompts[i]) - 1); err != nil {
					return err
				}
			}
			var err error
			*out, *stats, err = m.GenerateGreedy(ctx, seqs, tails, gen, draft)
			return err
		}
	}
	var none SpecStats
	var err error
	if res.Plain, err = bestOf(repeat, run(0, &plainOut, &none)); err != nil {
		return SpeculativeThroughput{}, err
	}
	if res.Drafted, err = bestOf(repeat, run(k, &specOut, &res.Stats)); err != nil {
		return SpeculativeThroughput{}, err
	}
	res.Identical = true
	for i := range plainOut {
		if !slices.Equal(plainOut[i], specOut[i]) {
			res.Identical = false
		}
	}
	for _, o := range specOut {
		res.Tokens += len(o)
	}
	return res, nil
}

// PrefixCacheOptions says what BenchPrefixCache measures.
type PrefixCacheOptions struct {
	// Prefix is the shared prefix tokens; Question the tokens after it.
	Prefix, Question int
	// Repeat is the runs per phase; the fastest is reported.
	Repeat int
	// Seed draws the random tokens.
	Seed uint64
}

// PrefixCacheTiming is what BenchPrefixCache measured: the time to first
// token of a request, without and with its prefix in the cache.
type PrefixCacheTiming struct {
	Uncached, Cached Timing
}

// BenchPrefixCache times the prefill of a question after a long shared
// prefix, first without the prefix cache and then with the cache warmed
// by one such request, as the first viewer question of a room warms it.
func BenchPrefixCache(ctx context.Context, m *Model, opts PrefixCacheOptions) (PrefixCacheTiming, error) {
	switch {
	case opts.Prefix <= 0 || opts.Question <= 0 || opts.Repeat <= 0:
		return PrefixCacheTiming{}, fmt.Errorf("model: bench: prefix %d, question %d and repeat %d must be positive", opts.Prefix, opts.Question, opts.Repeat)
	case opts.Prefix+opts.Question > m.MaxContext():
		return PrefixCacheTiming{}, fmt.Errorf("model: bench: %d tokens exceed the model's context of %d", opts.Prefix+opts.Question, m.MaxContext())
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0))
	shared := randomTokens(rng, opts.Prefix, m.Config.VocabSize)
	ask := func() []int {
		return append(slices.Clone(shared), randomTokens(rng, opts.Question, m.Config.VocabSize)...)
	}
	var res PrefixCacheTiming
	var seq *Sequence
	var err error
	res.Uncached, err = bestOf(opts.Repeat, func() error {
		seq = m.NewSequence()
		_, err := m.Prefill(ctx, seq, ask(), nil)
		return err
	})
	if err != nil {
		return PrefixCacheTiming{}, err
	}
	cache := NewPrefixCache(m, 4<<30)
	cache.Store(seq)
	res.Cached, err = bestOf(opts.Repeat, func() error {
		_, err := m.Prefill(ctx, m.NewSequence(), ask(), cache)
		return err
	})
	if err != nil {
		return PrefixCacheTiming{}, err
	}
	return res, nil
}

// bestOf runs f repeat times and returns its shortest wall time and its
// smallest process CPU time.
func bestOf(repeat int, f func() error) (Timing, error) {
	var best Timing
	_, haveCPU := processCPUTime()
	for i := range repeat {
		c0, _ := processCPUTime()
		t0 := time.Now()
		if err := f(); err != nil {
			return Timing{}, err
		}
		wall := time.Since(t0)
		c1, _ := processCPUTime()
		if i == 0 || wall < best.Wall {
			best.Wall = wall
		}
		if haveCPU && (i == 0 || c1-c0 < best.CPU) {
			best.CPU = c1 - c0
		}
	}
	return best, nil
}

// randomTokens draws n token ids below vocab.
func randomTokens(rng *rand.Rand, n, vocab int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = rng.IntN(vocab)
	}
	return out
}

// argmax returns the index of the largest logit (greedy decoding).
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
