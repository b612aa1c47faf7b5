// Package opd is stage 2 of Harness-Aware Training, General On-Policy
// Distillation: the student (the model after HSA-SFT) samples replies to
// general prompts — instructions with checkable constraints, chit-chat,
// simple questions — and a teacher (the base checkpoint before SFT) scores
// the student's own tokens. The loss is the per-token reverse KL,
// KL(π_student ‖ π_teacher), at the student's sampled prefixes, which
// pulls the student's general behaviour back to the teacher's where SFT
// moved it, without touching what the teacher never saw.
//
// Two estimators of the per-token KL are built (see Estimator): the exact
// sum over the vocabulary (the default: the teacher runs in the same
// process, so its whole distribution costs one forward pass) and the
// sampled-token estimate used as a policy-gradient advantage (what a
// remote teacher that returns only prompt log-probs allows).
package opd

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/policy"
)

// Estimator names how the per-token reverse KL and its gradient are
// computed.
type Estimator string

const (
	// Full is the exact KL_t = Σ_v p(v)·(log p(v) − log q(v)) over the
	// whole vocabulary at each sampled prefix, differentiated through p
	// (GKD with β = 1, MiniLLM's single-step term, Qwen3's logit
	// alignment). Zero variance over the token at each position, so it
	// is the default whenever the teacher's logits are at hand.
	Full Estimator = "full"
	// Sampled is the single-sample estimate k_t = log p(y_t) − log q(y_t)
	// at the sampled token, used as the advantage −k_t of an on-policy
	// policy-gradient step (Thinking Machines' on-policy distillation,
	// discount 0). It needs only the teacher's log-prob of each sampled
	// token — what an OpenAI-compatible server's prompt log-probs give —
	// at the cost of variance.
	Sampled Estimator = "sampled"
)

// rollout is one sampled reply to one prompt, as a training example whose
// trained tokens are the reply (its end-of-turn token included).
type rollout struct {
	prompt int
	ex     nn.Example
	reply  []int
}

// promptTokens renders a general prompt as a user turn and the opening of
// the assistant's.
func promptTokens(tok *tokenizer.Tokenizer, tmpl chat.Template, p Prompt) ([]int, error) {
	text, err := chat.Render([]chat.Message{{Role: chat.RoleUser, Content: p.Text}}, nil,
		chat.RenderOptions{Template: tmpl, AddGenerationPrompt: true})
	if err != nil {
		return nil, fmt.Errorf("opd: render %s: %w", p.ID, err)
	}
	return tok.EncodeWithSpecial(text), nil
}

// sampling is how the student draws its replies.
type sampling struct {
	tok         *tokenizer.Tokenizer
	tmpl        chat.Template
	stop        []int
	backend     model.Backend
	samples     int
	maxTokens   int
	temperature float64
}

// sample draws s.samples replies from the student to every prompt, the
// i-th draw seeded by (seed, i), all in one batch.
func (s sampling) sample(ctx context.Context, student *nn.Model, prompts []Prompt, seed uint64) ([]rollout, error) {
	sm, err := policy.Snapshot(student, s.backend, s.stop)
	if err != nil {
		return nil, err
	}
	var out []rollout
	var seqs []*policy.Sequence
	var contexts [][]int
	var opts []policy.Options
	for pi, p := range prompts {
		pt, err := promptTokens(s.tok, s.tmpl, p)
		if err != nil {
			return nil, err
		}
		if len(pt) >= student.Config.MaxPositionEmbeddings {
			return nil, fmt.Errorf("opd: prompt %s has %d tokens, the model's context is %d", p.ID, len(pt), student.Config.MaxPositionEmbeddings)
		}
		for range s.samples {
			opts = append(opts, policy.Options{MaxTokens: s.maxTokens, Temperature: s.temperature, Seed: seed*1_000_003 + uint64(len(out))})
			seqs = append(seqs, sm.NewSequence())
			contexts = append(contexts, pt)
			out = append(out, rollout{prompt: pi})
		}
	}
	replies, err := policy.ExtendAll(ctx, seqs, contexts, opts)
	if err != nil {
		return nil, fmt.Errorf("opd: sample: %w", err)
	}
	for i, reply := range replies {
		pt := contexts[i]
		ex := nn.Example{Tokens: append(append([]int(nil), pt...), reply...), Train: make([]bool, len(pt)+len(reply))}
		for k := len(pt); k < len(ex.Tokens); k++ {
			ex.Train[k] = true
		}
		out[i].ex, out[i].reply = ex, reply
	}
	return out, nil
}

// reverseKL returns KL(p ‖ q) for the student's logits and the teacher's
// log-probabilities at one position and, when grad is not nil, writes its
// gradient with respect to the logits: p_k·(log p_k − log q_k − KL).
func reverseKL(logits, logq, grad []float32) float64 {
	lse := nn.LogSumExp(logits)
	// p and log p − log q are kept so each element's exp is taken once.
	p := make([]float64, len(logits))
	d := make([]float64, len(logits))
	var kl float64
	for i, z := range logits {
		l := float64(z) - lse
		p[i], d[i] = math.Exp(l), l-float64(logq[i])
		kl += p[i] * d[i]
	}
	if grad != nil {
		for i := range grad {
			grad[i] = float32(p[i] * (d[i] - kl))
		}
	}
	return kl
}

// sampledKL returns the single-sample estimate k = log p(y) − log q(y) at
// the sampled token y and, when grad is not nil, the gradient of the
// on-policy surrogate ρ·sg(k) (ρ = p/p_old = 1 at the sampling weights):
// k·(onehot(y) − p), whose expectation over y is the exact KL's gradient
// at this position less the terms of later positions (discount 0).
func sampledKL(logits []float32, y int, logqY float32, grad []float32) float64 {
	lp := nn.LogSoftmax(make([]float32, len(logits)), logits)
	k := float64(lp[y]) - float64(logqY)
	if grad != nil {
		for i, l := range lp {
			grad[i] = float32(-k * math.Exp(float64(l)))
		}
		grad[y] += float32(k)
	}
	return k
}

// stepStats are the numbers of one distillation step.
type stepStats struct {
	// KL is the exact mean per-token reverse KL on the step's samples
	// before the update, whatever the estimator.
	KL            float64
	GradNorm      float64
	Tokens        int // tokens through the training pass
	TrainedTokens int // sampled tokens
	Generated     int
}

// distill runs the loss of one step over the rollouts: it accumulates the
// gradient of the mean per-token estimator into the student (zeroed
// first) and returns the exact mean KL.
func distill(ctx context.Context, student, teacher *nn.Model, rolls []rollout, est Estimator, microTokens int) (stepStats, error) {
	var st stepStats
	if len(rolls) == 0 {
		return st, errors.New("opd: no rollouts")
	}
	exs := make([]nn.Example, len(rolls))
	for i, r := range rolls {
		exs[i] = r.ex
		st.TrainedTokens += r.ex.Trained()
		st.Generated += len(r.reply)
	}
	if st.TrainedTokens == 0 {
		return st, errors.New("opd: the rollouts have no sampled token")
	}
	V := student.Config.VocabSize
	if teacher.Config.VocabSize != V {
		return st, fmt.Errorf("opd: the teacher has a vocabulary of %d, the student %d", teacher.Config.VocabSize, V)
	}
	student.ZeroGrad()
	scale := 1 / float32(st.TrainedTokens)
	for _, mb := range nn.Pack(exs, microTokens) {
		logq, err := policy.Distributions(ctx, teacher, mb)
		if err != nil {
			return st, fmt.Errorf("opd: teacher: %w", err)
		}
		slots := make([][]int, len(mb))
		for i, e := range mb {
			slots[i] = policy.Slots(e)
		}
		exact := make([][]float64, len(mb))
		for i, e := range mb {
			exact[i] = make([]float64, e.Trained())
		}
		_, err = student.BackwardTokens(ctx, mb, func(p nn.Position, logits, grad []float32) float64 {
			k := slots[p.Example][p.Index]
			q := logq[p.Example][k*V : (k+1)*V]
			if est == Sampled {
				exact[p.Example][k] = reverseKL(logits, q, nil)
				return sampledKL(logits, p.Target, q[p.Target], grad)
			}
			kl := reverseKL(logits, q, grad)
			exact[p.Example][k] = kl
			return kl
		}, scale)
		if err != nil {
			return st, fmt.Errorf("opd: student: %w", err)
		}
		for i := range mb {
			st.Tokens += len(mb[i].Tokens)
			for _, v := range exact[i] {
				st.KL += v
			}
		}
	}
	st.KL /= float64(st.TrainedTokens)
	return st, nil
}

// evalStats measure the student on held-out general prompts.
type evalStats struct {
	// KL is the exact mean per-token reverse KL to the teacher on the
	// student's samples.
	KL float64
	// Followed is the share of constraint and answer checks the
	// student's replies pass; Prompts the share of prompts passing all.
	Followed, Prompts float64
}

// evaluate samples one reply per held-out prompt (seeded, so every
// evaluation reads the same random stream) and measures it.
func evaluate(ctx context.Context, s sampling, student, teacher *nn.Model, prompts []Prompt, seed uint64) (evalStats, error) {
	s.samples = 1
	rolls, err := s.sample(ctx, student, prompts, seed)
	if err != nil {
		return evalStats{}, err
	}
	var ev evalStats
	var kl float64
	var tokens int
	V := student.Config.VocabSize
	exs := make([]nn.Example, len(rolls))
	for i, r := range rolls {
		exs[i] = r.ex
	}
	logq, err := policy.Distributions(ctx, teacher, exs)
	if err != nil {
		return ev, err
	}
	logp, err := policy.Distributions(ctx, student, exs)
	if err != nil {
		return ev, err
	}
	for i := range exs {
		n := len(logp[i]) / V
		for k := range n {
			p, q := logp[i][k*V:(k+1)*V], logq[i][k*V:(k+1)*V]
			for v := range V {
				kl += math.Exp(float64(p[v])) * (float64(p[v]) - float64(q[v]))
			}
		}
		tokens += n
	}
	passed, total, whole := 0, 0, 0
	for _, r := range rolls {
		reply := replyText(s.tok, r.reply, s.stop)
		ps, tt := prompts[r.prompt].Check(reply)
		passed += ps
		total += tt
		if ps == tt {
			whole++
		}
	}
	if tokens > 0 {
		ev.KL = kl / float64(tokens)
	}
	if total > 0 {
		ev.Followed = float64(passed) / float64(total)
	}
	ev.Prompts = float64(whole) / float64(len(rolls))
	return ev, nil
}

// replyText decodes a sampled reply without its stop token.
func replyText(tok *tokenizer.Tokenizer, reply, stop []int) string {
	if n := len(reply); n > 0 {
		for _, s := range stop {
			if reply[n-1] == s {
				reply = reply[:n-1]
				break
			}
		}
	}
	return tok.Decode(reply)
}
