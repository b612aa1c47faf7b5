// Package rl is stage 3 of Harness-Aware Training, HSA-RL: group-relative
// policy optimisation (GRPO) in the simulated live room. Each step draws
// tasks — a viewer question in a generated room, under the original harness
// or a harness freshly augmented from the HSA training pool (the gold
// mapped through the transform), with tools served through the fault
// injector — and plays each several times with the current policy. The
// room's grader scores every rollout on Accuracy, Effectiveness, Tool
// Rationality and Skill Selection; each component is normalised within its
// group on its own, a reasoning-length penalty is added, and the policy
// takes clipped, token-averaged policy-gradient steps with an optional k3
// KL to a reference policy.
package rl

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/policy"
)

// Reward components, the keys of RewardWeights and of the logged means.
const (
	Accuracy        = "accuracy"
	Effectiveness   = "effectiveness"
	ToolRationality = "tool_rationality"
	SkillSelection  = "skill_selection"
	// ReasoningLength is the penalty on <think> tokens:
	// min(reasoning tokens / budget, 1).
	ReasoningLength = "reasoning_length"
)

// components lists the grader's components in a fixed order.
func components() []string {
	return []string{Accuracy, Effectiveness, ToolRationality, SkillSelection}
}

// RewardConfig weighs the grader's components and the reasoning-length
// penalty.
type RewardConfig struct {
	// Weights of Accuracy, Effectiveness, ToolRationality and
	// SkillSelection; a missing key weighs 0.
	Weights map[string]float64 `json:"weights"`
	// ReasoningPenalty weighs the penalty; ReasoningBudget is the number
	// of <think> tokens at which it is full.
	ReasoningPenalty float64 `json:"reasoning_penalty"`
	ReasoningBudget  int     `json:"reasoning_budget"`
}

// DefaultRewardConfig weighs the four grader components equally and the
// reasoning penalty half as much, full at 64 tokens.
func DefaultRewardConfig() RewardConfig {
	return RewardConfig{Weights: map[string]float64{Accuracy: 1, Effectiveness: 1, ToolRationality: 1, SkillSelection: 1},
		ReasoningPenalty: 0.5, ReasoningBudget: 64}
}

func (c RewardConfig) validate() error {
	total := 0.0
	for k, w := range c.Weights {
		if !isComponent(k) {
			return fmt.Errorf("rl: reward weight for unknown component %q (want accuracy, effectiveness, tool_rationality or skill_selection)", k)
		}
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("rl: reward weight %s = %g", k, w)
		}
		total += w
	}
	switch {
	case !(total > 0):
		return errors.New("rl: every reward weight is zero")
	case !(c.ReasoningPenalty >= 0) || c.ReasoningBudget <= 0:
		return fmt.Errorf("rl: reasoning penalty %g with budget %d", c.ReasoningPenalty, c.ReasoningBudget)
	}
	return nil
}

func isComponent(k string) bool {
	for _, c := range components() {
		if c == k {
			return true
		}
	}
	return false
}

// raw returns a rollout's components, the reasoning penalty last.
func (c RewardConfig) raw(r Rollout) []float64 {
	g := r.Grade
	return []float64{g.Accuracy, g.Effectiveness, g.ToolRationality, g.SkillSelection,
		min(float64(r.Reasoning)/float64(c.ReasoningBudget), 1)}
}

// Reward is the combined scalar of one rollout, for monitoring: the
// weighted mean of the grader's components less the weighted penalty.
func (c RewardConfig) Reward(r Rollout) float64 {
	v := c.raw(r)
	var s, w float64
	for i, k := range components() {
		s += c.Weights[k] * v[i]
		w += c.Weights[k]
	}
	return s/w - c.ReasoningPenalty*v[len(v)-1]
}

// Advantages computes group-relative advantages for rollouts in groups of
// size g (consecutive rollouts share a prompt). Each component — the four
// grader scores and the reasoning penalty — is normalised within its group
// on its own, (r − mean) / (std + ε), before the weighted sum, so a
// component with a small spread (Accuracy, often all 1) is not drowned by
// one with a large spread and the penalty cannot dominate through its
// scale. A component that is constant in a group contributes 0; so a
// group whose rollouts all score alike has zero advantage and gives no
// gradient (as in GRPO).
func (c RewardConfig) Advantages(rolls []Rollout, g int) ([]float64, error) {
	if g <= 0 || len(rolls)%g != 0 {
		return nil, fmt.Errorf("rl: %d rollouts do not split into groups of %d", len(rolls), g)
	}
	weights := make([]float64, 0, 5)
	var w float64
	for _, k := range components() {
		weights = append(weights, c.Weights[k])
		w += c.Weights[k]
	}
	for i := range weights {
		weights[i] /= w
	}
	weights = append(weights, -c.ReasoningPenalty)
	out := make([]float64, len(rolls))
	for start := 0; start < len(rolls); start += g {
		group := rolls[start : start+g]
		vals := make([][]float64, len(group))
		for i, r := range group {
			vals[i] = c.raw(r)
		}
		for k, wk := range weights {
			if wk == 0 {
				continue
			}
			var mean, sq float64
			for i := range group {
				mean += vals[i][k]
			}
			mean /= float64(g)
			for i := range group {
				sq += (vals[i][k] - mean) * (vals[i][k] - mean)
			}
			std := math.Sqrt(sq / float64(g))
			if std < 1e-9 {
				continue
			}
			for i := range group {
				out[start+i] += wk * (vals[i][k] - mean) / (std + 1e-6)
			}
		}
	}
	return out, nil
}

// LossConfig is the clipped policy-gradient objective.
type LossConfig struct {
	// ClipLow and ClipHigh bound the ratio to [1 − ClipLow, 1 + ClipHigh]
	// (DAPO's clip-higher when ClipHigh > ClipLow).
	ClipLow  float64 `json:"clip_low"`
	ClipHigh float64 `json:"clip_high"`
	// KLCoef weighs the k3 estimate of KL(π ‖ π_ref) per token (0: no
	// reference model is loaded).
	KLCoef float64 `json:"kl_coef"`
	// Aggregation is "token-mean" (every token of the batch weighs the
	// same: DAPO, TRL's default) or "seq-mean-token-mean" (each rollout
	// weighs the same: the original GRPO).
	Aggregation string `json:"aggregation"`
}

// Aggregations.
const (
	TokenMean        = "token-mean"
	SeqMeanTokenMean = "seq-mean-token-mean"
)

func (c LossConfig) validate() error {
	switch {
	case !(c.ClipLow > 0 && c.ClipLow < 1) || !(c.ClipHigh > 0):
		return fmt.Errorf("rl: clip range [1−%g, 1+%g]", c.ClipLow, c.ClipHigh)
	case !(c.KLCoef >= 0) || math.IsInf(c.KLCoef, 0):
		return fmt.Errorf("rl: KL coefficient %g", c.KLCoef)
	case c.Aggregation != TokenMean && c.Aggregation != SeqMeanTokenMean:
		return fmt.Errorf("rl: aggregation %q: want %s or %s", c.Aggregation, TokenMean, SeqMeanTokenMean)
	}
	return nil
}

// tokenTerms is the per-token objective at the sampled token y:
// −min(ρA, clip(ρ)A) + β·k3(π_ref/π), with ρ = π(y)/π_old(y). It returns
// the loss, whether the clipped branch was taken, the k3 value, and
// writes ∂loss/∂logits into grad when grad is not nil.
func (c LossConfig) tokenTerms(logits []float32, y int, oldLogp, refLogp float64, adv float64, grad []float32) (loss float64, clipped bool, k3 float64) {
	lp := nn.LogSoftmax(make([]float32, len(logits)), logits)
	logp := float64(lp[y])
	ratio := math.Exp(logp - oldLogp)
	lo, hi := 1-c.ClipLow, 1+c.ClipHigh
	surr := ratio * adv
	clippedSurr := math.Min(math.Max(ratio, lo), hi) * adv
	// d loss / d logp: the unclipped branch's −ρA, or 0 when the clipped
	// branch is the minimum and the ratio is outside the range.
	var dlogp float64
	if clippedSurr < surr {
		loss, clipped = -clippedSurr, true
	} else {
		loss = -surr
		dlogp = -surr
	}
	if c.KLCoef > 0 {
		r := math.Exp(refLogp - logp)
		k3 = r - (refLogp - logp) - 1
		loss += c.KLCoef * k3
		dlogp += c.KLCoef * (1 - r)
	}
	if grad != nil && dlogp != 0 {
		// d logp / d z = onehot(y) − p.
		for i, l := range lp {
			grad[i] = float32(-dlogp * math.Exp(float64(l)))
		}
		grad[y] += float32(dlogp)
	}
	return loss, clipped, k3
}

// updateStats are the numbers of one policy update.
type updateStats struct {
	Loss, KL, ClipFrac float64
	Tokens, Trained    int
}

// update accumulates the gradient of the clipped objective over the
// rollouts into m (zeroed first). old and ref hold each rollout's
// per-token log-probabilities under the sampling policy and the reference
// (ref nil when KLCoef is 0; old nil means the current weights sampled, so
// the ratio is exactly 1 and its value is read off the logits).
func (c LossConfig) update(ctx context.Context, m *nn.Model, rolls []Rollout, adv []float64, old, ref [][]float32, microTokens int) (updateStats, error) {
	var st updateStats
	exs := make([]nn.Example, len(rolls))
	for i, r := range rolls {
		exs[i] = r.Example
		st.Trained += r.Example.Trained()
	}
	if st.Trained == 0 {
		return st, errors.New("rl: the rollouts have no sampled token")
	}
	// Per-rollout token weights: the aggregation's normaliser.
	weight := make([]float64, len(rolls))
	for i, e := range exs {
		switch {
		case c.Aggregation == SeqMeanTokenMean && e.Trained() > 0:
			weight[i] = 1 / (float64(e.Trained()) * float64(len(exs)))
		default:
			weight[i] = 1 / float64(st.Trained)
		}
	}
	m.ZeroGrad()
	var clippedTokens int
	first := 0
	for _, mb := range nn.Pack(exs, microTokens) {
		slots := make([][]int, len(mb))
		for i, e := range mb {
			slots[i] = policy.Slots(e)
		}
		type tokenOut struct {
			loss, k3 float64
			clipped  bool
		}
		outs := make([][]tokenOut, len(mb))
		for i, e := range mb {
			outs[i] = make([]tokenOut, e.Trained())
		}
		base := first
		_, err := m.BackwardTokens(ctx, mb, func(p nn.Position, logits, grad []float32) float64 {
			ri := base + p.Example
			k := slots[p.Example][p.Index]
			oldLogp := math.NaN()
			if old != nil {
				oldLogp = float64(old[ri][k])
			} else {
				oldLogp = policy.LogProb(logits, p.Target)
			}
			var refLogp float64
			if ref != nil {
				refLogp = float64(ref[ri][k])
			}
			loss, clipped, k3 := c.tokenTerms(logits, p.Target, oldLogp, refLogp, adv[ri], grad)
			w := float32(weight[ri])
			for i := range grad {
				grad[i] *= w
			}
			outs[p.Example][k] = tokenOut{loss: loss, k3: k3, clipped: clipped}
			return loss * weight[ri]
		}, 1)
		if err != nil {
			return st, err
		}
		for i := range mb {
			st.Tokens += len(mb[i].Tokens)
			for _, o := range outs[i] {
				st.Loss += o.loss * weight[base+i]
				st.KL += o.k3
				if o.clipped {
					clippedTokens++
				}
			}
		}
		first += len(mb)
	}
	st.KL /= float64(st.Trained)
	st.ClipFrac = float64(clippedTokens) / float64(st.Trained)
	return st, nil
}
