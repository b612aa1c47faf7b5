package model

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func tinyModel(t testing.TB, preset string, dt DType) *Model {
	t.Helper()
	cfg, err := Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cpu := NewCPU(2)
	t.Cleanup(cpu.Close)
	m, err := NewRandom(cfg, 21, Options{DType: dt, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Cached and uncached prefill give the same logits (within float32
// summation-order differences, 1e-5 of the largest logit) and the same
// continuation.
func TestPrefixCacheSameLogits(t *testing.T) {
	ctx := context.Background()
	for _, preset := range []string{"tiny", "tiny-qwen3"} {
		m := tinyModel(t, preset, F32)
		rng := rand.New(rand.NewPCG(3, 4))
		prefix := randomTokens(rng, 40, m.Config.VocabSize)
		cache := NewPrefixCache(m, 1<<30)
		// Warm the cache with one question.
		q1 := append(slices.Clone(prefix), randomTokens(rng, 7, m.Config.VocabSize)...)
		if _, err := m.Prefill(ctx, m.NewSequence(), q1, cache); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			q := append(slices.Clone(prefix), randomTokens(rng, 5+i, m.Config.VocabSize)...)
			cached := m.NewSequence()
			got, err := m.Prefill(ctx, cached, q, cache)
			if err != nil {
				t.Fatal(err)
			}
			plain := m.NewSequence()
			want, err := m.Prefill(ctx, plain, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			ref := referenceForward(m, q)
			if e := relErr(got, ref[len(q)-1]); e > 1e-4 {
				t.Fatalf("%s: cached prefill vs reference: relative error %.2e", preset, e)
			}
			if e := relErr(got, toF64(want)); e > 1e-5 {
				t.Fatalf("%s: cached vs uncached prefill: relative error %.2e", preset, e)
			}
			if !slices.Equal(cached.Tokens(), q) {
				t.Fatal("cached sequence does not hold the prompt")
			}
			// Decoding continues identically from both.
			a, _ := m.Decode(ctx, cached, 3)
			b, _ := m.Decode(ctx, plain, 3)
			if e := relErr(a, toF64(b)); e > 1e-5 {
				t.Fatalf("%s: decode after cached prefill: relative error %.2e", preset, e)
			}
		}
		st := cache.Stats()
		if st.HitTokens < 3*int64(len(prefix)) {
			t.Errorf("%s: %d tokens restored, want at least %d", preset, st.HitTokens, 3*len(prefix))
		}
	}
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestPrefixCacheRadix(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", F32)
	cache := NewPrefixCache(m, 1<<30)
	a := []int{1, 2, 3, 4, 5, 6}
	b := []int{1, 2, 3, 9, 9}
	c := []int{1, 2, 7}
	for _, p := range [][]int{a, b, c} {
		if _, err := m.Prefill(ctx, m.NewSequence(), p, cache); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := cache.Bytes(), int64(6+2+1)*m.kvBytesPerToken(); got != want {
		t.Errorf("cache holds %d bytes, want %d (9 distinct tokens)", got, want)
	}
	cases := []struct {
		prompt []int
		want   int
	}{
		{[]int{1, 2, 3, 4, 5, 6, 7}, 6},
		{[]int{1, 2, 3, 4, 5, 6}, 5}, // the last token is always recomputed
		{[]int{1, 2, 3, 9, 8}, 4},
		{[]int{1, 2, 8}, 2},
		{[]int{5, 1}, 0},
	}
	for _, tc := range cases {
		seq := m.NewSequence()
		n, err := cache.Restore(seq, tc.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want || seq.Len() != n {
			t.Errorf("Restore(%v) = %d (sequence %d), want %d", tc.prompt, n, seq.Len(), tc.want)
		}
	}
	seq := m.NewSequence()
	if _, err := m.Decode(ctx, seq, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Restore(seq, a); err == nil {
		t.Error("Restore into a non-empty sequence succeeded")
	}
}

func TestPrefixCacheEvictsLRU(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", F32)
	per := m.kvBytesPerToken()
	cache := NewPrefixCache(m, 10*per)
	old := []int{1, 2, 3, 4}
	mid := []int{5, 6, 7, 8}
	if _, err := m.Prefill(ctx, m.NewSequence(), old, cache); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Prefill(ctx, m.NewSequence(), mid, cache); err != nil {
		t.Fatal(err)
	}
	// Touch old so that mid becomes the least recently used.
	if n, _ := cache.Restore(m.NewSequence(), old); n != 3 {
		t.Fatalf("restored %d tokens of old, want 3", n)
	}
	if _, err := m.Prefill(ctx, m.NewSequence(), []int{9, 10, 11, 12}, cache); err != nil {
		t.Fatal(err)
	}
	if cache.Bytes() > 10*per {
		t.Errorf("cache holds %d bytes over its %d budget", cache.Bytes(), 10*per)
	}
	if n, _ := cache.Restore(m.NewSequence(), mid); n != 0 {
		t.Errorf("least recently used prompt still cached (%d tokens)", n)
	}
	if n, _ := cache.Restore(m.NewSequence(), old); n != 3 {
		t.Errorf("recently used prompt evicted (%d tokens restored)", n)
	}
	// A prompt larger than the whole budget stores the prefix that fits.
	long := randomTokens(rand.New(rand.NewPCG(1, 1)), 25, m.Config.VocabSize)
	if _, err := m.Prefill(ctx, m.NewSequence(), long, cache); err != nil {
		t.Fatal(err)
	}
	if cache.Bytes() > 10*per || cache.Stats().Evictions == 0 {
		t.Errorf("after a long prompt: %d bytes, %d evictions", cache.Bytes(), cache.Stats().Evictions)
	}
	if n, _ := cache.Restore(m.NewSequence(), long); n != 10 {
		t.Errorf("restored %d tokens of the long prompt, want the 10 that fit", n)
	}
}

// Many goroutines share one cache and one model; run with -race.
func TestPrefixCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", Q8)
	cache := NewPrefixCache(m, 40*m.kvBytesPerToken())
	prefix := randomTokens(rand.New(rand.NewPCG(8, 8)), 20, m.Config.VocabSize)
	want, err := m.Prefill(ctx, m.NewSequence(), append(slices.Clone(prefix), 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			for range 5 {
				seq := m.NewSequence()
				q := append(slices.Clone(prefix), randomTokens(rng, 1+rng.IntN(6), m.Config.VocabSize)...)
				if _, err := m.Prefill(ctx, seq, q, cache); err != nil {
					errs <- err
					return
				}
				got, err := m.Prefill(ctx, m.NewSequence(), append(slices.Clone(prefix), 1), cache)
				if err != nil {
					errs <- err
					return
				}
				if e := relErr(got, toF64(want)); e > 1e-5 {
					errs <- errors.New("concurrent cached prefill differs")
					return
				}
				go seq.Len() // concurrent readers of a sequence
				if _, err := m.Decode(ctx, seq, 2); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestStepErrors(t *testing.T) {
	m := tinyModel(t, "tiny", F32)
	seq := m.NewSequence()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Forward(ctx, seq, []int{1, 2, 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	if seq.Len() != 0 {
		t.Errorf("cancelled step left %d tokens", seq.Len())
	}
	bg := context.Background()
	if _, err := m.Forward(bg, seq, make([]int, m.MaxContext()+1)); !errors.Is(err, ErrContextTooLong) {
		t.Errorf("oversized context: err = %v", err)
	}
	if _, err := m.Forward(bg, seq, []int{m.Config.VocabSize}); err == nil {
		t.Error("token outside the vocabulary accepted")
	}
	if _, err := m.Batch(bg, []*Sequence{seq, seq}, []int{1, 2}); err == nil {
		t.Error("a sequence twice in one batch accepted")
	}
	other := tinyModel(t, "tiny", F32)
	if _, err := m.Decode(bg, other.NewSequence(), 1); err == nil {
		t.Error("a sequence of another model accepted")
	}
	if _, err := m.Batch(bg, nil, nil); err == nil {
		t.Error("empty batch accepted")
	}
	if _, err := m.Forward(bg, seq, nil); err == nil {
		t.Error("empty token list accepted")
	}
	if _, err := m.Forward(bg, seq, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := seq.Truncate(1); err != nil || seq.Len() != 1 || seq.KVBytes() != m.kvBytesPerToken() {
		t.Errorf("Truncate(1): %v, len %d, KV %d bytes", err, seq.Len(), seq.KVBytes())
	}
	if err := seq.Truncate(5); err == nil {
		t.Error("Truncate beyond the end accepted")
	}
}

// A cancellation in the middle of a step leaves the sequence untouched.
func TestStepCancelMidway(t *testing.T) {
	m := tinyModel(t, "tiny", F32)
	seq := m.NewSequence()
	bg := context.Background()
	if _, err := m.Forward(bg, seq, []int{4, 5}); err != nil {
		t.Fatal(err)
	}
	ctx := &cancelAfter{Context: bg, left: 2}
	if _, err := m.Forward(ctx, seq, []int{6, 7, 8}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !slices.Equal(seq.Tokens(), []int{4, 5}) || seq.KVBytes() != 2*m.kvBytesPerToken() {
		t.Fatalf("after cancellation the sequence holds %v", seq.Tokens())
	}
	for l := range seq.k {
		if len(seq.k[l]) != 2*m.kvDim() {
			t.Fatalf("layer %d keeps %d key values after cancellation", l, len(seq.k[l]))
		}
	}
}

// cancelAfter reports cancellation after its Err method was called left times.
type cancelAfter struct {
	context.Context
	left int
}

func (c *cancelAfter) Err() error {
	if c.left <= 0 {
		return context.Canceled
	}
	c.left--
	return nil
}

// A prompt longer than the prefill chunk runs in several steps with the
// same result as one step.
func TestPrefillChunked(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny-qwen3", F32)
	toks := randomTokens(rand.New(rand.NewPCG(2, 2)), 23, m.Config.VocabSize)
	want := referenceForward(m, toks)
	m.prefillChunk = 5
	cache := NewPrefixCache(m, 1<<20)
	seq := m.NewSequence()
	got, err := m.Prefill(ctx, seq, toks, cache)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got, want[len(toks)-1]); e > 1e-4 {
		t.Fatalf("chunked prefill: relative error %.2e", e)
	}
	if seq.Len() != len(toks) {
		t.Fatalf("sequence holds %d tokens, want %d", seq.Len(), len(toks))
	}
	// Cancelled after two chunks: the sequence is back to empty.
	seq = m.NewSequence()
	if _, err := m.Prefill(&cancelAfter{Context: ctx, left: 2*(m.Config.NumLayers+2) + 1}, seq, toks, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if seq.Len() != 0 {
		t.Errorf("cancelled chunked prefill left %d tokens", seq.Len())
	}
	if _, err := m.Prefill(ctx, m.NewSequence(), make([]int, m.MaxContext()+1), nil); !errors.Is(err, ErrContextTooLong) {
		t.Errorf("oversized prompt: err = %v", err)
	}
}

// A full cache frees a sixteenth of its budget at once, so that the stores
// after it do not each walk the tree to evict one leaf.
func TestPrefixCacheEvictsToLowMark(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", F32)
	per := m.kvBytesPerToken()
	cache := NewPrefixCache(m, 32*per)
	prompt := func(i int) []int { return []int{4*i + 1, 4*i + 2, 4*i + 3, 4*i + 4} }
	for i := range 8 {
		if _, err := m.Prefill(ctx, m.NewSequence(), prompt(i), cache); err != nil {
			t.Fatal(err)
		}
	}
	if got := cache.Stats().Evictions; got != 0 {
		t.Fatalf("%d evictions with the budget exactly full", got)
	}
	if _, err := m.Prefill(ctx, m.NewSequence(), prompt(8), cache); err != nil {
		t.Fatal(err)
	}
	// 36 tokens' worth is over the 32 budget; the low mark is 30, so the
	// two least recently used prompts go.
	if got, want := cache.Bytes(), 28*per; got != want {
		t.Errorf("after going over the budget: %d bytes, want %d", got, want)
	}
	for i, want := range []int{0, 0, 3, 3} {
		if n, _ := cache.Restore(m.NewSequence(), prompt(i)); n != want {
			t.Errorf("prompt %d: %d tokens restored, want %d", i, n, want)
		}
	}
	if _, err := m.Prefill(ctx, m.NewSequence(), prompt(9), cache); err != nil {
		t.Fatal(err)
	}
	if got := cache.Stats().Evictions; got != 2 {
		t.Errorf("%d evictions after a store that fits under the budget again, want the first 2", got)
	}
}
