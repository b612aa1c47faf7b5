// Package mtp trains a policy's multi-token-prediction heads (the NextN
// heads of package model) for speculative decoding, on the policy's own
// outputs: the report behind LiveHAT found that heads not trained with the
// policy they serve drop to zero acceptance, while heads trained on its
// samples gave 1.69× decode speed.
//
// The trunk is frozen. Rollouts are sampled from the checkpoint with the
// model's own inference path, which yields the trunk's last-layer hidden
// state at every position at no extra cost; the heads then learn, by
// teacher forcing, to predict token t+i+2 from head i-1's hidden state (the
// trunk's for head 0) and the embedding of token t+i+1, exactly the inputs
// they get when drafting. Each head's input from the head before it is
// treated as a constant (no gradient flows between heads), which keeps
// every head's update independent and cheap; the embedding and LM head
// are shared with the trunk and stay frozen.
package mtp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/trainer/nn"
)

// Rollout is one sampled sequence with the trunk's hidden states.
type Rollout struct {
	// Tokens are the prompt followed by the sampled tokens.
	Tokens []int
	// First is the position of the first hidden state: the prompt's last
	// token, whose state predicted the first sampled token.
	First int
	// Hidden holds HiddenSize values per position from First to
	// len(Tokens)-2: the state at position p predicted token p+1.
	Hidden []float32
}

// SampleRollouts continues every prompt by up to gen tokens drawn by
// sampler configs cfg (seeded cfg.Seed+i for prompt i), all prompts in one
// batch, and records the trunk's hidden states. A rollout ends early at
// the model's end-of-sequence token.
func SampleRollouts(ctx context.Context, m *model.Model, prompts [][]int, gen int, cfg sample.Config) ([]Rollout, error) {
	if len(prompts) == 0 || gen <= 0 {
		return nil, fmt.Errorf("mtp: %d prompts and %d tokens to sample", len(prompts), gen)
	}
	seqs := make([]*model.Sequence, len(prompts))
	samplers := make([]*sample.Sampler, len(prompts))
	rolls := make([]Rollout, len(prompts))
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, fmt.Errorf("mtp: prompt %d is empty", i)
		}
		seqs[i] = m.NewSequence()
		c := cfg
		c.Seed += uint64(i)
		s, err := sample.New(c)
		if err != nil {
			return nil, fmt.Errorf("mtp: %w", err)
		}
		samplers[i] = s
		rolls[i] = Rollout{Tokens: append([]int(nil), p...), First: len(p) - 1}
	}
	act := make([]int, len(prompts))
	feed := make([][]int, len(prompts))
	for i := range act {
		act[i] = i
		feed[i] = prompts[i]
	}
	for range gen {
		stepSeqs := make([]*model.Sequence, len(act))
		for a, i := range act {
			stepSeqs[a] = seqs[i]
		}
		out, err := m.StepOutputs(ctx, stepSeqs, feed, nil)
		if err != nil {
			return nil, fmt.Errorf("mtp: sample: %w", err)
		}
		var next []int
		var nextFeed [][]int
		for a, i := range act {
			r := &rolls[i]
			id, err := samplers[i].Sample(out[a].Logits, r.Tokens, nil)
			if err != nil {
				return nil, fmt.Errorf("mtp: sample: %w", err)
			}
			r.Hidden = append(r.Hidden, out[a].Hidden...)
			r.Tokens = append(r.Tokens, id)
			if id == m.Config.EOSTokenID || seqs[i].Len()+1 >= m.MaxContext() {
				continue
			}
			next = append(next, i)
			nextFeed = append(nextFeed, []int{id})
		}
		act, feed = next, nextFeed
		if len(act) == 0 {
			break
		}
	}
	return rolls, nil
}

// Options configure Train.
type Options struct {
	// Steps is the number of optimizer steps; Batch the positions per step.
	Steps, Batch int
	// LR is AdamW's learning rate, held after a linear warm-up over the
	// first tenth of the steps; MaxGradNorm clips the global gradient norm
	// (0: no clipping).
	LR, MaxGradNorm float64
	// Seed draws the batches.
	Seed uint64
}

// DefaultOptions are settings that train the heads of a small model in a
// few hundred steps.
func DefaultOptions() Options {
	return Options{Steps: 300, Batch: 128, LR: 2e-3, MaxGradNorm: 1, Seed: 1}
}

// StepReport describes one optimizer step.
type StepReport struct {
	Step int
	// Loss is the mean cross-entropy over the heads and the batch.
	Loss float64
	// Accuracy holds each head's share of batch positions where its most
	// likely token is the target (teacher-forced): the acceptance a
	// drafted token at that depth would have, given the earlier ones.
	Accuracy []float64
	LR       float64
	GradNorm float64
}

// position is one training row: a rollout and a hidden-state index.
type position struct{ roll, row int }

// Train fits m's MTP heads to the rollouts, with the trunk frozen, and
// writes the trained heads back into m. report, when not nil, sees every
// step.
func Train(ctx context.Context, m *model.Model, rolls []Rollout, opts Options, report func(StepReport) error) error {
	k := len(m.MTP)
	if k == 0 {
		return errors.New("mtp: the model has no MTP heads to train (model.InitMTP adds them)")
	}
	if opts.Steps <= 0 || opts.Batch <= 0 || !(opts.LR > 0) || opts.MaxGradNorm < 0 {
		return fmt.Errorf("mtp: bad options %+v: steps, batch and lr must be positive", opts)
	}
	H := m.Config.HiddenSize
	var pos []position
	for ri, r := range rolls {
		if r.First < 0 || len(r.Hidden)%H != 0 || r.First+len(r.Hidden)/H > len(r.Tokens)-1 {
			return fmt.Errorf("mtp: rollout %d: %d hidden values from position %d do not fit %d tokens", ri, len(r.Hidden), r.First, len(r.Tokens))
		}
		for row := range len(r.Hidden) / H {
			// Every head needs its target: position+k+1 must exist.
			if r.First+row+k+1 < len(r.Tokens) {
				pos = append(pos, position{ri, row})
			}
		}
	}
	if len(pos) == 0 {
		return fmt.Errorf("mtp: the rollouts hold no position with %d tokens after it", k+1)
	}
	t := newNet(m)
	heads := make([]*head, k)
	var params []nn.Param
	for i := range heads {
		heads[i] = newHead(m, i)
		params = append(params, heads[i].params()...)
	}
	opt := nn.NewAdamW(nn.DefaultAdamW())
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6d7470))
	warm := max(1, opts.Steps/10)
	n := min(opts.Batch, len(pos))
	for step := 1; step <= opts.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := make([]position, n)
		for i := range batch {
			batch[i] = pos[rng.IntN(len(pos))]
		}
		hin := make([]float32, 0, n*H)
		for _, p := range batch {
			r := rolls[p.roll]
			hin = append(hin, r.Hidden[p.row*H:(p.row+1)*H]...)
		}
		rep := StepReport{Step: step, Accuracy: make([]float64, k)}
		for i, h := range heads {
			tokens, targets := make([]int, n), make([]int, n)
			for j, p := range batch {
				r := rolls[p.roll]
				at := r.First + p.row
				tokens[j], targets[j] = r.Tokens[at+i+1], r.Tokens[at+i+2]
			}
			out, loss, correct := t.step(h, hin, tokens, targets)
			rep.Loss += loss / float64(n*k)
			rep.Accuracy[i] = float64(correct) / float64(n)
			hin = out
		}
		if opts.MaxGradNorm > 0 {
			rep.GradNorm = nn.ClipGradNorm(params, opts.MaxGradNorm)
		}
		rep.LR = opts.LR * min(1, float64(step)/float64(warm))
		if err := opt.Step(params, rep.LR); err != nil {
			return fmt.Errorf("mtp: step %d: %w", step, err)
		}
		for _, p := range params {
			clear(p.Grad)
		}
		if report != nil {
			if err := report(rep); err != nil {
				return err
			}
		}
	}
	for i, h := range heads {
		if err := h.store(m, i); err != nil {
			return err
		}
	}
	return nil
}

// Acceptance decodes every prompt greedily for gen tokens with k drafts
// per step and returns the speculation counts: how often the heads' drafts
// match what the model itself writes.
func Acceptance(ctx context.Context, m *model.Model, prompts [][]int, gen, k int) (model.SpecStats, error) {
	seqs := make([]*model.Sequence, len(prompts))
	for i := range seqs {
		seqs[i] = m.NewSequence()
	}
	_, st, err := m.GenerateGreedy(ctx, seqs, prompts, gen, k)
	if err != nil {
		return st, fmt.Errorf("mtp: acceptance: %w", err)
	}
	return st, nil
}
