package nn

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/livehat/livehat/model"
)

// crossEntropy is the built-in loss written as a TokenLoss.
func crossEntropy(p Position, logits, grad []float32) float64 {
	lp := LogSoftmax(make([]float32, len(logits)), logits)
	if grad != nil {
		for i, v := range lp {
			grad[i] = float32(math.Exp(float64(v)))
		}
		grad[p.Target]--
	}
	return -float64(lp[p.Target])
}

func TestTokenLossMatchesBuiltInCrossEntropy(t *testing.T) {
	for _, arch := range []string{model.Qwen2, model.Qwen3} {
		cfg := microConfig(arch)
		_, m := newRandom(t, cfg, 9)
		exs := maskedExamples(rand.New(rand.NewPCG(4, 4)), cfg.VocabSize, 13, 22, 7)
		ctx := context.Background()
		want, err := m.Backward(ctx, exs, 0.25)
		if err != nil {
			t.Fatal(err)
		}
		var ref [][]float32
		for _, p := range m.Params() {
			ref = append(ref, slices.Clone(p.Grad))
		}
		m.ZeroGrad()
		var mu sync.Mutex
		seen := map[Position]bool{}
		got, err := m.BackwardTokens(ctx, exs, func(p Position, logits, grad []float32) float64 {
			mu.Lock()
			seen[p] = true
			mu.Unlock()
			return crossEntropy(p, logits, grad)
		}, 0.25)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tokens != want.Tokens || math.Abs(got.Sum-want.Sum) > 1e-4*math.Abs(want.Sum) {
			t.Errorf("%s: token loss %+v, built-in %+v", arch, got, want)
		}
		for i, p := range m.Params() {
			if d := maxAbsDiff(p.Grad, ref[i]); d > 1e-5 {
				t.Errorf("%s: %s: gradient differs by %g", arch, p.Name, d)
			}
		}
		// Every trained position was visited once, with its example,
		// index and target.
		n := 0
		for ei, e := range exs {
			for i := 1; i < len(e.Tokens); i++ {
				if e.Train[i] {
					n++
					if !seen[Position{Example: ei, Index: i - 1, Target: e.Tokens[i]}] {
						t.Errorf("%s: position %d of example %d not visited", arch, i-1, ei)
					}
				}
			}
		}
		if len(seen) != n {
			t.Errorf("%s: %d positions visited, %d trained", arch, len(seen), n)
		}
		// ForwardTokens leaves the gradients alone.
		before := slices.Clone(m.Params()[0].Grad)
		fl, err := m.ForwardTokens(ctx, exs, crossEntropy)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fl.Sum-want.Sum) > 1e-4*math.Abs(want.Sum) || !slices.Equal(before, m.Params()[0].Grad) {
			t.Errorf("%s: forward tokens: loss %g (want %g), gradients touched: %v", arch, fl.Sum, want.Sum, !slices.Equal(before, m.Params()[0].Grad))
		}
	}
}

func TestTokenLossRejectsBadInput(t *testing.T) {
	cfg := microConfig(model.Qwen2)
	_, m := newRandom(t, cfg, 1)
	exs := []Example{{Tokens: []int{1, 2, 3}}}
	if _, err := m.BackwardTokens(context.Background(), exs, nil, 1); err == nil {
		t.Error("nil loss accepted")
	}
	if _, err := m.BackwardTokens(context.Background(), exs, crossEntropy, 0); err == nil {
		t.Error("zero scale accepted")
	}
	if _, err := m.ForwardTokens(context.Background(), exs, nil); err == nil {
		t.Error("nil loss accepted by ForwardTokens")
	}
}

func TestClipAndStepRefusesNonFiniteGradients(t *testing.T) {
	_, m := newRandom(t, microConfig(model.Qwen2), 2)
	opt := NewAdamW(DefaultAdamW())
	before := slices.Clone(m.Params()[0].Value)
	m.Params()[0].Grad[0] = float32(math.NaN())
	if _, err := opt.ClipAndStep(m, 1, 1e-3); err == nil {
		t.Error("a NaN gradient was stepped")
	}
	if !slices.Equal(before, m.Params()[0].Value) || opt.Steps() != 0 {
		t.Error("the refused step changed the weights or counted")
	}
	m.ZeroGrad()
	m.Params()[0].Grad[0] = 10
	norm, err := opt.ClipAndStep(m, 1, 1e-3)
	if err != nil || norm != 10 || opt.Steps() != 1 || slices.Equal(before, m.Params()[0].Value) {
		t.Errorf("step: norm %g, %v, %d steps", norm, err, opt.Steps())
	}
}
