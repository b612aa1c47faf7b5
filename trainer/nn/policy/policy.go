// Package policy is what the on-policy stages (General OPD, HSA-RL) need
// around a model being trained: sampling its own responses fast — the
// float32 weights are exported to the inference engine of package model,
// which decodes with a KV cache — and reading the log-probabilities or
// whole next-token distributions of a model at the sampled tokens through
// the training pass.
package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/trainer/nn"
)

// Sampler generates from a snapshot of a model's weights. It is safe for
// concurrent use: each call has its own sequence and random stream.
type Sampler struct {
	model *model.Model
	stop  []int
	// cache holds the KV entries of prompts already prefilled, so the
	// several responses drawn to one prompt (a GRPO group, OPD's samples)
	// and the harness prefix that tasks share are computed once.
	cache *model.PrefixCache
}

// prefixCacheBytes bounds a snapshot's prefix cache; it lives for one
// step's sampling.
const prefixCacheBytes = 256 << 20

// Snapshot exports the current weights of m (adapters folded in) to the
// inference engine on backend. Generation stops after any of the stop
// tokens (the chat template's end of turn).
func Snapshot(m *nn.Model, backend model.Backend, stop []int) (*Sampler, error) {
	if len(stop) == 0 {
		return nil, errors.New("policy: no stop token")
	}
	im, err := m.ToModel(model.Options{DType: model.F32, Backend: backend})
	if err != nil {
		return nil, fmt.Errorf("policy: snapshot: %w", err)
	}
	return &Sampler{model: im, stop: slices.Clone(stop), cache: model.NewPrefixCache(im, prefixCacheBytes)}, nil
}

// Options choose how a Sampler draws a response.
type Options struct {
	// MaxTokens bounds the response; a response cut there has no stop
	// token.
	MaxTokens int
	// Temperature 1 samples the policy itself (what the on-policy losses
	// assume); 0 decodes greedily.
	Temperature float64
	// Seed makes the draw reproducible.
	Seed uint64
}

// Sequence is a conversation being generated: the tokens so far and the
// engine's KV cache over them, so a multi-turn rollout (reply, tool
// result, reply) never recomputes its past.
type Sequence struct {
	s   *Sampler
	seq *model.Sequence
}

// NewSequence starts an empty conversation.
func (s *Sampler) NewSequence() *Sequence {
	return &Sequence{s: s, seq: s.model.NewSequence()}
}

// Len returns the number of tokens in the conversation.
func (q *Sequence) Len() int { return q.seq.Len() }

// Extend appends context tokens (a prompt, a tool result and the next turn's
// header) and samples a response after them, which is appended too. It
// returns the response's tokens, ending with a stop token unless cut at
// MaxTokens or at the model's context.
func (q *Sequence) Extend(ctx context.Context, context []int, opts Options) ([]int, error) {
	out, err := ExtendAll(ctx, []*Sequence{q}, [][]int{context}, []Options{opts})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Sample draws one response to a prompt.
func (s *Sampler) Sample(ctx context.Context, prompt []int, opts Options) ([]int, error) {
	return s.NewSequence().Extend(ctx, prompt, opts)
}

// ExtendAll is Extend for several conversations at once: each appends its
// own context, then every decode step advances all unfinished responses
// in one batched forward pass (one matrix product per weight for all of
// them instead of one per response), which is where sampling spends its
// time. opts[i] chooses sequence i's draw; the draws depend only on the
// options and the batch, so a batch replayed gives the same tokens.
func ExtendAll(ctx context.Context, seqs []*Sequence, contexts [][]int, opts []Options) ([][]int, error) {
	n := len(seqs)
	if len(contexts) != n || len(opts) != n {
		return nil, fmt.Errorf("policy: %d sequences with %d contexts and %d options", n, len(contexts), len(opts))
	}
	if n == 0 {
		return nil, nil
	}
	m := seqs[0].s.model
	samplers := make([]*sample.Sampler, n)
	logits := make([][]float32, n)
	for i, q := range seqs {
		if q.s.model != m {
			return nil, fmt.Errorf("policy: sequence %d belongs to another snapshot", i)
		}
		if opts[i].MaxTokens <= 0 || !(opts[i].Temperature >= 0) {
			return nil, fmt.Errorf("policy: sequence %d: max tokens %d, temperature %g", i, opts[i].MaxTokens, opts[i].Temperature)
		}
		var err error
		if samplers[i], err = sample.New(sample.Config{Temperature: float32(opts[i].Temperature), Seed: opts[i].Seed}); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		// Only a conversation's opening is worth caching: later turns
		// (tool results) are its own.
		cache := q.s.cache
		if q.seq.Len() > 0 {
			cache = nil
		}
		if logits[i], err = m.Prefill(ctx, q.seq, contexts[i], cache); err != nil {
			return nil, fmt.Errorf("policy: sequence %d: %w", i, err)
		}
	}
	out := make([][]int, n)
	active := make([]int, n)
	for i := range active {
		active[i] = i
	}
	limit := m.MaxContext()
	for len(active) > 0 {
		var next []int
		var stepSeqs []*model.Sequence
		var stepTokens []int
		for _, i := range active {
			id, err := samplers[i].Sample(logits[i], nil, nil)
			if err != nil {
				return nil, fmt.Errorf("policy: %w", err)
			}
			out[i] = append(out[i], id)
			done := slices.Contains(seqs[i].s.stop, id) || seqs[i].seq.Len()+1 >= limit || len(out[i]) >= opts[i].MaxTokens
			// A finished response's last token is fed too, so the
			// sequence keeps the whole conversation, unless the context
			// is full.
			if !done || seqs[i].seq.Len() < limit {
				stepSeqs = append(stepSeqs, seqs[i].seq)
				stepTokens = append(stepTokens, id)
			}
			if !done {
				next = append(next, i)
			}
		}
		if len(stepSeqs) > 0 {
			res, err := m.Batch(ctx, stepSeqs, stepTokens)
			if err != nil {
				return nil, fmt.Errorf("policy: %w", err)
			}
			k := 0
			for _, i := range active {
				if k < len(stepSeqs) && stepSeqs[k] == seqs[i].seq {
					logits[i] = res[k]
					k++
				}
			}
		}
		active = next
	}
	return out, nil
}

// Slots maps each position of an example to the index of the token it
// predicts among the example's trained tokens (-1 where the next token is
// not trained): the layout of LogProbs' and Distributions' results.
func Slots(e nn.Example) []int {
	out := make([]int, len(e.Tokens))
	k := 0
	for i := range e.Tokens {
		out[i] = -1
		if i+1 < len(e.Tokens) && (e.Train == nil || e.Train[i+1]) {
			out[i] = k
			k++
		}
	}
	return out
}

// LogProbs returns, for every example, the log-probability m gives each
// trained token, in order.
func LogProbs(ctx context.Context, m *nn.Model, examples []nn.Example) ([][]float32, error) {
	slots := make([][]int, len(examples))
	out := make([][]float32, len(examples))
	for i, e := range examples {
		slots[i] = Slots(e)
		out[i] = make([]float32, e.Trained())
	}
	_, err := m.ForwardTokens(ctx, examples, func(p nn.Position, logits, _ []float32) float64 {
		out[p.Example][slots[p.Example][p.Index]] = float32(LogProb(logits, p.Target))
		return 0
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Distributions returns, for every example, the log-softmax of m's logits
// at each trained position: Trained()×VocabSize values, in order.
func Distributions(ctx context.Context, m *nn.Model, examples []nn.Example) ([][]float32, error) {
	V := m.Config.VocabSize
	slots := make([][]int, len(examples))
	out := make([][]float32, len(examples))
	for i, e := range examples {
		slots[i] = Slots(e)
		out[i] = make([]float32, e.Trained()*V)
	}
	_, err := m.ForwardTokens(ctx, examples, func(p nn.Position, logits, _ []float32) float64 {
		k := slots[p.Example][p.Index]
		nn.LogSoftmax(out[p.Example][k*V:(k+1)*V], logits)
		return 0
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LogProb is the log-probability of target under logits.
func LogProb(logits []float32, target int) float64 {
	return float64(logits[target]) - nn.LogSumExp(logits)
}

// MaxContext returns the longest sequence the sampler's model accepts.
func (s *Sampler) MaxContext() int { return s.model.MaxContext() }
