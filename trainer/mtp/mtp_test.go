package mtp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/sample"
)

func tinyModel(t *testing.T, heads int, seed uint64) *model.Model {
	t.Helper()
	cfg, err := model.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, seed, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.InitMTP(heads, seed+1); err != nil {
		t.Fatal(err)
	}
	return m
}

// The head's backward pass matches central finite differences of its loss
// for entries of every parameter.
func TestHeadGradients(t *testing.T) {
	m := tinyModel(t, 1, 3)
	n := newNet(m)
	h := newHead(m, 0)
	rng := rand.New(rand.NewPCG(1, 1))
	const rows = 3
	hin := make([]float32, rows*n.H)
	for i := range hin {
		hin[i] = float32(rng.NormFloat64())
	}
	tokens, targets := []int{4, 90, 7}, []int{11, 3, 250}
	loss := func() float64 {
		_, l, _ := n.step(h, hin, tokens, targets)
		return l / rows
	}
	for _, p := range h.params() {
		clear(p.Grad)
	}
	loss() // fills the gradients of the mean loss
	grads := map[string][]float32{}
	for _, p := range h.params() {
		grads[p.Name] = append([]float32(nil), p.Grad...)
	}
	for _, p := range h.params() {
		for _, idx := range []int{0, len(p.Value) / 2, len(p.Value) - 1} {
			old := p.Value[idx]
			const eps = 1e-2
			p.Value[idx] = old + eps
			up := loss()
			p.Value[idx] = old - eps
			down := loss()
			p.Value[idx] = old
			num := (up - down) / (2 * eps)
			got := float64(grads[p.Name][idx])
			if math.Abs(num-got) > 2e-3*math.Max(1, math.Abs(num)) && math.Abs(num-got) > 1e-4 {
				t.Errorf("%s[%d]: backward %.6g, finite difference %.6g", p.Name, idx, got, num)
			}
		}
	}
}

// Heads trained on the policy's own outputs draft far better than the
// untrained ones, which is the report's point: on held-out prompts, greedy
// speculative decoding of a tiny trained model accepts almost none of the
// untrained heads' drafts and most of the trained ones'. The same heads
// on another policy of the same shape, which writes the same
// continuations but from other hidden states, fall back to almost no
// acceptance: heads must be trained with the policy they serve.
func TestTrainedHeadsAccepted(t *testing.T) {
	ctx := context.Background()
	m, prompts := trainedPolicy(t, 2)
	train, held := prompts[:48], prompts[48:]
	before, err := Acceptance(ctx, m, held, 32, 2)
	if err != nil {
		t.Fatal(err)
	}
	rolls, err := SampleRollouts(ctx, m, train, 32, sample.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a rollout: %v", rolls[0].Tokens)
	var last StepReport
	if err := Train(ctx, m, rolls, DefaultOptions(), func(r StepReport) error { last = r; return nil }); err != nil {
		t.Fatal(err)
	}
	after, err := Acceptance(ctx, m, held, 32, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("untrained: %+v acceptance %.2f, mean accepted length %.2f", before, before.AcceptanceRate(), before.MeanAcceptedLength())
	t.Logf("trained:   %+v acceptance %.2f, mean accepted length %.2f; last step %+v", after, after.AcceptanceRate(), after.MeanAcceptedLength(), last)
	if before.AcceptanceRate() > 0.1 || after.AcceptanceRate() < before.AcceptanceRate()+0.4 || after.MeanAcceptedLength() < 1.8 {
		t.Errorf("acceptance %.2f untrained, %.2f trained (mean accepted length %.2f)", before.AcceptanceRate(), after.AcceptanceRate(), after.MeanAcceptedLength())
	}
	trunk := m.Config
	trunk.MTPHeads = 0
	other, _ := trainedPolicyOf(t, trunk, 2, 150, 0, 12)
	other.MTP = m.MTP
	foreign, err := Acceptance(ctx, other, held, 32, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on another policy: %+v acceptance %.2f", foreign, foreign.AcceptanceRate())
	if foreign.AcceptanceRate() > after.AcceptanceRate()/2 {
		t.Errorf("heads trained for one policy kept acceptance %.2f on another (%.2f on their own)", foreign.AcceptanceRate(), after.AcceptanceRate())
	}
}
