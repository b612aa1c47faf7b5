package rl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/policy"
)

func microPolicy(t *testing.T) (*nn.Model, *model.CPU) {
	t.Helper()
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	cfg := model.Config{
		Architecture: model.Qwen2, HiddenSize: 16, IntermediateSize: 32, NumLayers: 1,
		NumHeads: 2, NumKVHeads: 1, HeadDim: 8, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 12, TieWordEmbeddings: true, MaxPositionEmbeddings: 32,
		TorchDType: "float32", AttentionBias: true, BOSTokenID: -1, EOSTokenID: 1,
	}
	base, err := model.NewRandom(cfg, 11, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.New(base, cpu)
	if err != nil {
		t.Fatal(err)
	}
	return m, cpu
}

// TestGRPORaisesRuleReward: the policy samples 6-token replies; the
// "grader" gives Skill Selection 1 to a reply holding token 5 and Tool
// Rationality for every token 7. A few GRPO steps raise the mean reward.
func TestGRPORaisesRuleReward(t *testing.T) {
	m, cpu := microPolicy(t)
	ctx := context.Background()
	rw := DefaultRewardConfig()
	loss := LossConfig{ClipLow: 0.2, ClipHigh: 0.28, Aggregation: TokenMean}
	opt := nn.NewAdamW(nn.DefaultAdamW())
	prompts := [][]int{{2, 3}, {4, 3}, {6, 3}, {8, 3}}
	const G = 8
	play := func(step int) ([]Rollout, float64) {
		sm, err := policy.Snapshot(m, cpu, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		var rolls []Rollout
		var mean float64
		for pi, p := range prompts {
			for g := range G {
				reply, err := sm.Sample(ctx, p, policy.Options{MaxTokens: 6, Temperature: 1, Seed: uint64(step*1000 + pi*G + g)})
				if err != nil {
					t.Fatal(err)
				}
				r := Rollout{Task: pi}
				r.add(p, false)
				r.add(reply, true)
				r.Grade = liveroom.Grade{Accuracy: 1, Effectiveness: 1}
				if slices.Contains(reply, 5) {
					r.Grade.SkillSelection = 1
				}
				for _, tok := range reply {
					if tok == 7 {
						r.Grade.ToolRationality += 1.0 / 6
					}
				}
				mean += rw.Reward(r)
				rolls = append(rolls, r)
			}
		}
		return rolls, mean / float64(len(rolls))
	}
	var first, last float64
	const steps = 30
	for step := range steps {
		rolls, mean := play(step)
		if step < 3 {
			first += mean / 3
		}
		if step >= steps-3 {
			last += mean / 3
		}
		adv, err := rw.Advantages(rolls, G)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := loss.update(ctx, m, rolls, adv, nil, nil, 4096); err != nil {
			t.Fatal(err)
		}
		nn.ClipGradNorm(m.Params(), 1)
		if err := opt.Step(m.Params(), 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("mean reward %.3f over the first steps, %.3f over the last", first, last)
	if !(last > first+0.1) {
		t.Errorf("mean reward %.3f → %.3f", first, last)
	}
}

// TestTokenTermsGradient checks the clipped objective's logit gradient
// against finite differences, inside and outside the clip range, with and
// without the KL term.
func TestTokenTermsGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const V = 6
	logits := make([]float32, V)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64())
	}
	lp := nn.LogSoftmax(make([]float32, V), logits)
	y := 2
	for _, tc := range []struct {
		name        string
		old, adv    float64
		kl          float64
		wantClipped bool
	}{
		{"on-policy, positive advantage", float64(lp[y]), 1.5, 0, false},
		{"on-policy, negative advantage, KL", float64(lp[y]), -0.7, 0.1, false},
		{"ratio above the range, positive advantage", float64(lp[y]) - 0.5, 1, 0, true},
		{"ratio above the range, negative advantage", float64(lp[y]) - 0.5, -1, 0.05, false},
		{"ratio below the range, negative advantage", float64(lp[y]) + 0.5, -1, 0, true},
	} {
		c := LossConfig{ClipLow: 0.2, ClipHigh: 0.28, KLCoef: tc.kl, Aggregation: TokenMean}
		ref := float64(lp[y]) + 0.3
		grad := make([]float32, V)
		_, clipped, _ := c.tokenTerms(logits, y, tc.old, ref, tc.adv, grad)
		if clipped != tc.wantClipped {
			t.Errorf("%s: clipped %v, want %v", tc.name, clipped, tc.wantClipped)
		}
		const h = 1e-3
		for i := range logits {
			up, down := slices.Clone(logits), slices.Clone(logits)
			up[i] += h
			down[i] -= h
			lu, _, _ := c.tokenTerms(up, y, tc.old, ref, tc.adv, nil)
			ld, _, _ := c.tokenTerms(down, y, tc.old, ref, tc.adv, nil)
			if fd := (lu - ld) / (2 * h); math.Abs(fd-float64(grad[i])) > 2e-3 {
				t.Errorf("%s: ∂loss/∂z_%d = %g, finite differences %g", tc.name, i, grad[i], fd)
			}
		}
	}
}

func TestAdvantagesNormaliseEachComponent(t *testing.T) {
	rw := DefaultRewardConfig()
	mk := func(acc, eff, tool, skill float64, reasoning int) Rollout {
		return Rollout{Grade: liveroom.Grade{Accuracy: acc, Effectiveness: eff, ToolRationality: tool, SkillSelection: skill}, Reasoning: reasoning}
	}
	// Group 1: only Tool Rationality varies, on a tiny scale; group 2:
	// everything equal.
	rolls := []Rollout{mk(1, 1, 0.01, 1, 0), mk(1, 1, 0, 1, 0), mk(1, 1, 0, 1, 0), mk(1, 1, 0, 1, 0),
		mk(1, 0.5, 1, 0, 10), mk(1, 0.5, 1, 0, 10), mk(1, 0.5, 1, 0, 10), mk(1, 0.5, 1, 0, 10)}
	adv, err := rw.Advantages(rolls, 4)
	if err != nil {
		t.Fatal(err)
	}
	// The tiny spread is normalised to the same size as any other.
	if !(adv[0] > 0.4) || !(adv[1] < 0) {
		t.Errorf("group 1 advantages %v: the tool-rationality winner should stand out", adv[:4])
	}
	for _, a := range adv[4:] {
		if a != 0 {
			t.Errorf("a group whose rollouts score alike has advantages %v", adv[4:])
			break
		}
	}
	var sum float64
	for _, a := range adv[:4] {
		sum += a
	}
	if math.Abs(sum) > 1e-9 {
		t.Errorf("group advantages sum to %g", sum)
	}
	// The reasoning penalty pushes down the longer thinker.
	adv, _ = rw.Advantages([]Rollout{mk(1, 1, 1, 1, 0), mk(1, 1, 1, 1, 64)}, 2)
	if !(adv[0] > 0 && adv[1] < 0) {
		t.Errorf("reasoning penalty advantages %v", adv)
	}
	if _, err := rw.Advantages(rolls, 3); err == nil {
		t.Error("8 rollouts in groups of 3 accepted")
	}
}

// TestUpdateClipsStaleRatios: when the policy has moved far from the one
// that sampled (old log-probs 0.5 lower, positive advantages), every token
// is clipped and no gradient flows; the KL term still pulls.
func TestUpdateClipsStaleRatios(t *testing.T) {
	m, _ := microPolicy(t)
	ctx := context.Background()
	r := Rollout{}
	r.add([]int{2, 3}, false)
	r.add([]int{4, 5, 6, 1}, true)
	rolls := []Rollout{r, r}
	cur, err := policy.LogProbs(ctx, m, []nn.Example{r.Example})
	if err != nil {
		t.Fatal(err)
	}
	stale := make([]float32, len(cur[0]))
	for i, v := range cur[0] {
		stale[i] = v - 0.5
	}
	old := [][]float32{stale, stale}
	loss := LossConfig{ClipLow: 0.2, ClipHigh: 0.28, Aggregation: SeqMeanTokenMean}
	st, err := loss.update(ctx, m, rolls, []float64{1, 1}, old, nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if st.ClipFrac != 1 || nn.ClipGradNorm(m.Params(), 0) != 0 {
		t.Errorf("clip fraction %g, gradient norm %g; want 1 and 0", st.ClipFrac, nn.ClipGradNorm(m.Params(), 0))
	}
	loss.KLCoef = 0.1
	ref := [][]float32{cur[0], cur[0]}
	for i := range ref[0] {
		ref[0][i] -= 1
	}
	st, err = loss.update(ctx, m, rolls, []float64{1, 1}, old, ref, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if !(st.KL > 0) || !(nn.ClipGradNorm(m.Params(), 0) > 0) {
		t.Errorf("KL %g and gradient norm %g with a reference: want both positive", st.KL, nn.ClipGradNorm(m.Params(), 0))
	}
}
