package sample

import (
	"math"
	"testing"
)

// Speculative sampling returns tokens distributed exactly as the target:
// drafts drawn from a different distribution q over a toy vocabulary,
// accepted or corrected by Verify, come out with frequencies within 5
// standard errors of p, and the share accepted is Σ min(p, q), as the
// rule's analysis says.
func TestVerifyPreservesTarget(t *testing.T) {
	s, err := New(Config{Temperature: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	target := []float32{2, 1, 0.5, -1, 0}
	draft := []float32{0, 1.5, 2, 0, -3}
	p, err := s.Dist(target, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := s.Dist(draft, nil, nil)
	const trials = 200000
	counts := make([]int, len(target))
	acc := 0
	for range trials {
		d := s.Draw(q)
		id, ok := s.Verify(p, q, d)
		counts[id]++
		if ok {
			acc++
			if id != d {
				t.Fatalf("accepted draft %d returned as %d", d, id)
			}
		}
	}
	var overlap float64
	for id := range target {
		want := p.Prob(id)
		overlap += math.Min(want, q.Prob(id))
		got := float64(counts[id]) / trials
		if se := math.Sqrt(want * (1 - want) / trials); math.Abs(got-want) > 5*se+1e-9 {
			t.Errorf("token %d: frequency %.4f, target probability %.4f", id, got, want)
		}
	}
	if got := float64(acc) / trials; math.Abs(got-overlap) > 0.01 {
		t.Errorf("acceptance %.4f, want Σ min(p, q) = %.4f", got, overlap)
	}
}

// The distribution Dist reports is the one Sample draws from: masks,
// penalties and cuts included, and one id for greedy sampling.
func TestDistMatchesSample(t *testing.T) {
	logits := []float32{3, 2.9, 1, 0.5, 2.95, -1}
	history := []int{0}
	allowed := []uint64{0b011111}
	cfg := Config{Temperature: 0.8, TopK: 3, RepetitionPenalty: 1.3, Seed: 3}
	a, _ := New(cfg)
	b, _ := New(cfg)
	d, err := a.Dist(logits, history, allowed)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.IDs) != 3 || d.Prob(5) != 0 {
		t.Fatalf("top-3 distribution %+v", d)
	}
	for range 200 {
		id, err := b.Sample(logits, history, allowed)
		if err != nil {
			t.Fatal(err)
		}
		if d.Prob(id) == 0 {
			t.Fatalf("Sample drew %d, outside Dist %+v", id, d)
		}
	}
	g, _ := New(Config{RepetitionPenalty: 1.3})
	gd, _ := g.Dist(logits, history, nil)
	if len(gd.IDs) != 1 || gd.IDs[0] != 4 { // the penalty moves 0 below 4
		t.Fatalf("greedy Dist %+v", gd)
	}
	// Greedy verification accepts exactly a matching draft.
	other := Dist{IDs: []int{1}, P: []float64{1}}
	if id, ok := g.Verify(gd, gd, 4); !ok || id != 4 {
		t.Fatalf("matching greedy draft: %d %v", id, ok)
	}
	if id, ok := g.Verify(gd, other, 1); ok || id != 4 {
		t.Fatalf("wrong greedy draft: %d %v", id, ok)
	}
	if _, err := g.Dist(nil, nil, nil); err == nil {
		t.Fatal("Dist of empty logits")
	}
}
