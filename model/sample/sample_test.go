package sample

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func mustNew(t testing.TB, cfg Config) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func logitsOf(probs ...float64) []float32 {
	l := make([]float32, len(probs))
	for i, p := range probs {
		l[i] = float32(math.Log(p))
	}
	return l
}

func bitset(n int, ids ...int) []uint64 {
	b := make([]uint64, (n+63)/64)
	for _, id := range ids {
		b[id/64] |= 1 << (id % 64)
	}
	return b
}

func TestGreedy(t *testing.T) {
	s := mustNew(t, Config{})
	logits := []float32{1, 3, 2, 3}
	if id, err := s.Sample(logits, nil, nil); err != nil || id != 1 {
		t.Errorf("greedy = %d, %v; want 1 (lowest id among the tied best)", id, err)
	}
	if id, err := s.Sample(logits, nil, bitset(4, 0, 2, 3)); err != nil || id != 3 {
		t.Errorf("greedy with id 1 masked = %d, %v; want 3", id, err)
	}
	if id, err := s.Sample(logits, nil, bitset(4, 0)); err != nil || id != 0 {
		t.Errorf("greedy with only id 0 allowed = %d, %v; want 0", id, err)
	}
	if logits[1] != 3 {
		t.Error("Sample modified the caller's logits")
	}
}

func TestTopKOneIsGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	greedy := mustNew(t, Config{})
	topk := mustNew(t, Config{Temperature: 1.5, TopK: 1, Seed: 7})
	for range 200 {
		logits := make([]float32, 300)
		for i := range logits {
			logits[i] = float32(r.NormFloat64())
		}
		a, _ := greedy.Sample(logits, nil, nil)
		b, _ := topk.Sample(logits, nil, nil)
		if a != b {
			t.Fatalf("top-k=1 picked %d, greedy %d", b, a)
		}
	}
}

func TestDistribution(t *testing.T) {
	base := logitsOf(0.5, 0.25, 0.15, 0.1)
	sq := []float64{math.Sqrt(.5), math.Sqrt(.25), math.Sqrt(.15), math.Sqrt(.1)}
	sqSum := sq[0] + sq[1] + sq[2] + sq[3]
	tests := []struct {
		name string
		cfg  Config
		want []float64 // probability by id
	}{
		{"temperature 1", Config{Temperature: 1}, []float64{.5, .25, .15, .1}},
		{"temperature 2 flattens", Config{Temperature: 2}, []float64{sq[0] / sqSum, sq[1] / sqSum, sq[2] / sqSum, sq[3] / sqSum}},
		{"top-k 2", Config{Temperature: 1, TopK: 2}, []float64{2. / 3, 1. / 3, 0, 0}},
		{"top-p 0.7 keeps two", Config{Temperature: 1, TopP: 0.7}, []float64{2. / 3, 1. / 3, 0, 0}},
		{"top-p 0.76 keeps three", Config{Temperature: 1, TopP: 0.76}, []float64{.5 / .9, .25 / .9, .15 / .9, 0}},
		{"top-p 0.4 keeps one", Config{Temperature: 1, TopP: 0.4}, []float64{1, 0, 0, 0}},
		{"min-p 0.25 drops below 0.125", Config{Temperature: 1, MinP: 0.25}, []float64{.5 / .9, .25 / .9, .15 / .9, 0}},
		{"min-p 0.4 drops below 0.2", Config{Temperature: 1, MinP: 0.4}, []float64{2. / 3, 1. / 3, 0, 0}},
		{"top-k 3 then top-p 0.8", Config{Temperature: 1, TopK: 3, TopP: 0.8}, []float64{2. / 3, 1. / 3, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, tt.cfg)
			l := append([]float32(nil), base...)
			got := make([]float64, len(l))
			for _, c := range s.distribution(l, l[0]) {
				got[c.id] = c.p
			}
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-6 {
					t.Fatalf("p = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestDrawFrequencies checks that draws follow the distribution: with 200k
// draws the standard error of each frequency is about 0.001.
func TestDrawFrequencies(t *testing.T) {
	s := mustNew(t, Config{Temperature: 1, TopK: 3, Seed: 42})
	logits := logitsOf(0.5, 0.25, 0.15, 0.1)
	want := []float64{.5 / .9, .25 / .9, .15 / .9, 0}
	counts := make([]int, 4)
	const n = 200000
	for range n {
		id, err := s.Sample(logits, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts[id]++
	}
	for i, c := range counts {
		if f := float64(c) / n; math.Abs(f-want[i]) > 0.005 {
			t.Errorf("id %d drawn with frequency %.4f, want %.4f", i, f, want[i])
		}
	}
}

func TestPenalties(t *testing.T) {
	logits := []float32{2, -1, 0.5, 3}
	history := []int{0, 1, 1, 99, -5} // out-of-range ids are ignored
	tests := []struct {
		name string
		cfg  Config
		want []float32
	}{
		{"repetition", Config{RepetitionPenalty: 2}, []float32{1, -2, 0.5, 3}},
		{"presence and frequency", Config{PresencePenalty: 0.5, FrequencyPenalty: 0.25}, []float32{1.25, -2, 0.5, 3}},
		{"all three", Config{RepetitionPenalty: 2, PresencePenalty: 0.5, FrequencyPenalty: 0.25}, []float32{0.25, -3, 0.5, 3}},
		{"window of the last 3", Config{RepetitionPenalty: 2, PenaltyWindow: 3}, []float32{2, -2, 0.5, 3}},
		{"penalty 1 is off", Config{RepetitionPenalty: 1}, []float32{2, -1, 0.5, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustNew(t, tt.cfg)
			l := append([]float32(nil), logits...)
			if s.countHistory(history, len(l)) {
				for id, count := range s.counts {
					l[id] = s.penalize(l[id], count)
				}
			}
			for i := range l {
				if math.Abs(float64(l[i]-tt.want[i])) > 1e-6 {
					t.Fatalf("penalised logits = %v, want %v", l, tt.want)
				}
			}
		})
	}
	// The penalty changes the greedy choice: 5/1.1 = 4.545 < 4.9.
	s := mustNew(t, Config{RepetitionPenalty: 1.1})
	if id, _ := s.Sample([]float32{5, 4.9}, []int{0}, nil); id != 1 {
		t.Errorf("with id 0 penalised greedy picked %d, want 1", id)
	}
}

func TestSeedReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 2)
	}
	cfg := Config{Temperature: 0.9, TopP: 0.95, MinP: 0.01, RepetitionPenalty: 1.1, Seed: 1234}
	run := func(cfg Config) []int {
		s := mustNew(t, cfg)
		var out []int
		for range 300 {
			id, err := s.Sample(logits, out, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	a, b := run(cfg), run(cfg)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed diverged at step %d: %d vs %d", i, a[i], b[i])
		}
	}
	cfg.Seed = 1235
	c := run(cfg)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("different seeds gave identical sequences")
	}
}

func TestMaskedSampling(t *testing.T) {
	s := mustNew(t, Config{Temperature: 1, Seed: 9})
	logits := make([]float32, 200)
	logits[5] = 10 // by far the most likely, but masked
	allowed := bitset(200, 7, 130, 199)
	for range 500 {
		id, err := s.Sample(logits, nil, allowed)
		if err != nil {
			t.Fatal(err)
		}
		if id != 7 && id != 130 && id != 199 {
			t.Fatalf("sampled masked id %d", id)
		}
	}
}

func TestSampleErrors(t *testing.T) {
	s := mustNew(t, Config{Temperature: 1})
	tests := []struct {
		name    string
		logits  []float32
		allowed []uint64
		want    string
	}{
		{"empty", nil, nil, "empty logits"},
		{"nan", []float32{0, float32(math.NaN())}, nil, "id 1 is NaN"},
		{"nothing allowed", make([]float32, 3), []uint64{0}, "no token is allowed"},
		{"all -inf", []float32{float32(math.Inf(-1))}, nil, "no token is allowed"},
	}
	for _, tt := range tests {
		if _, err := s.Sample(tt.logits, nil, tt.allowed); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	// A set shorter than the logits masks the ids past its end.
	padded := make([]float32, 200)
	padded[150] = 100
	if id, err := s.Sample(padded, nil, bitset(64, 3)); err != nil || id != 3 {
		t.Errorf("short allowed set: got %d, %v; want 3", id, err)
	}
	if id, err := s.Sample(padded, nil, []uint64{^uint64(0), ^uint64(0)}); err != nil || id >= 128 {
		t.Errorf("allowed set of 128 ids picked %d, %v", id, err)
	}
	for _, cfg := range []Config{{Temperature: -1}, {TopP: 1.5}, {MinP: -0.1}, {TopK: -2},
		{RepetitionPenalty: float32(math.NaN())}, {PresencePenalty: float32(math.Inf(1))}, {PenaltyWindow: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted an invalid config", cfg)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	const vocab = 151936
	r := rand.New(rand.NewPCG(5, 6))
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	history := make([]int, 1000)
	for i := range history {
		history[i] = r.IntN(vocab)
	}
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"greedy", Config{}},
		{"qwen3_defaults", Config{Temperature: 0.6, TopK: 20, TopP: 0.95, RepetitionPenalty: 1.05}},
		{"top_p_only", Config{Temperature: 1, TopP: 0.9}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := mustNew(b, bc.cfg)
			start, ok := processCPU()
			for b.Loop() {
				if _, err := s.Sample(logits, history, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start, ok)
		})
	}
	// A constrained step: a handful of ids allowed, as in a tool call.
	allowed := bitset(vocab, 10, 500, 151000)
	b.Run("qwen3_defaults_3_allowed", func(b *testing.B) {
		s := mustNew(b, Config{Temperature: 0.6, TopK: 20, TopP: 0.95, RepetitionPenalty: 1.05})
		start, ok := processCPU()
		for b.Loop() {
			if _, err := s.Sample(logits, history, allowed); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start, ok)
	})
}

// reportCPU adds the process CPU microseconds per iteration since start,
// steadier than wall time on a shared machine.
func reportCPU(b *testing.B, start time.Duration, ok bool) {
	end, ok2 := processCPU()
	if ok && ok2 && b.N > 0 {
		b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
	}
}

// TestSparseMaskMatchesDense checks that sampling among a few allowed ids
// gives exactly the tokens that masking the whole vocabulary gives.
func TestSparseMaskMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 5000
	logits := make([]float32, n)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 2)
	}
	var ids []int
	for range 40 {
		ids = append(ids, r.IntN(n))
	}
	ids = append(ids, n-1)
	allowed := bitset(n, ids...)
	if !sparse(allowed, n) {
		t.Fatal("test mask is not sparse")
	}
	history := []int{ids[0], ids[1], ids[1], 7}
	for _, cfg := range []Config{{}, {Temperature: 0.8, Seed: 3}, {Temperature: 1.2, TopK: 5, TopP: 0.9, MinP: 0.05, RepetitionPenalty: 1.3, PresencePenalty: 0.2, Seed: 4}} {
		a, b := mustNew(t, cfg), mustNew(t, cfg)
		for step := range 300 {
			got, err := a.sampleAllowed(logits, history, allowed)
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.sampleDense(logits, history, allowed)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("config %+v step %d: sparse picked %d, dense %d", cfg, step, got, want)
			}
		}
	}
}
