package model

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// MaxMTPHeads bounds Config.MTPHeads: acceptance falls with every position
// drafted ahead, so heads past a handful cost more than they return.
const MaxMTPHeads = 8

// MTPHead is one multi-token-prediction head, in the NextN layout of
// DeepSeek-V3 and Qwen3-Next without the attention sub-layer. Head i reads
// the hidden state that predicted token t+i+1 (the trunk's last-layer
// output for head 0, head i-1's output otherwise) and the embedding of
// that token, and predicts token t+i+2:
//
//	u = EHProj·[RMSNorm(h)·HNorm ; RMSNorm(embed(token))·ENorm]
//	x = u + Down·(silu(Gate·n) ⊙ Up·n),  n = RMSNorm(u)·MLPNorm
//	logits = LMHead·(RMSNorm(x)·Norm)
//
// x is the head's hidden state, which the next head reads. The heads share
// the trunk's embedding and LM head (the largest matrices) and add
// 2·H² + 3·H·I parameters each, a few per cent of a decoder layer's
// cost for Qwen2.5-0.5B's shapes per drafted token.
//
// Why NextN rather than Medusa: a Medusa head sees only the hidden state,
// so its k-th guess cannot condition on the tokens drafted before it;
// NextN heads are chained through the previous draft token's embedding,
// which keeps the acceptance of later positions high. The attention
// sub-layer of DeepSeek's module is left out so that drafting needs no KV
// cache of its own: rolling back a rejected draft is then only the trunk's
// cache, and a head is one small MLP step per token.
type MTPHead struct {
	HNorm, ENorm []float32 // RMSNorm weights of the hidden state and of the embedding
	// EHProj maps the concatenation [hidden; embedding], HiddenSize×2·HiddenSize.
	EHProj         *Weight
	MLPNorm        []float32
	Gate, Up, Down *Weight
	// Norm is the head's own final RMSNorm before the shared LM head.
	Norm []float32
}

// mtpTensors lists the heads' tensors, named mtp.{i}.….
func (m *Model) mtpTensors() []tensorShape {
	c := m.Config
	var ts []tensorShape
	for i := range m.MTP {
		h := &m.MTP[i]
		p := fmt.Sprintf("mtp.%d.", i)
		ts = append(ts,
			tensorShape{p + "hnorm.weight", c.HiddenSize, 0, false, &h.HNorm},
			tensorShape{p + "enorm.weight", c.HiddenSize, 0, false, &h.ENorm},
			tensorShape{p + "eh_proj.weight", c.HiddenSize, 2 * c.HiddenSize, true, &h.EHProj},
			tensorShape{p + "mlp_norm.weight", c.HiddenSize, 0, false, &h.MLPNorm},
			tensorShape{p + "mlp.gate_proj.weight", c.IntermediateSize, c.HiddenSize, true, &h.Gate},
			tensorShape{p + "mlp.up_proj.weight", c.IntermediateSize, c.HiddenSize, true, &h.Up},
			tensorShape{p + "mlp.down_proj.weight", c.HiddenSize, c.IntermediateSize, true, &h.Down},
			tensorShape{p + "norm.weight", c.HiddenSize, 0, false, &h.Norm},
		)
	}
	return ts
}

// InitMTP replaces the model's MTP heads with k freshly initialised ones
// (random as NewRandom draws them, from seed), so that heads can be
// trained for a checkpoint that has none. k = 0 removes the heads. It must
// not run while the model is generating.
func (m *Model) InitMTP(k int, seed uint64) error {
	if k < 0 || k > MaxMTPHeads {
		return fmt.Errorf("model: %d MTP heads out of range [0, %d]", k, MaxMTPHeads)
	}
	m.Config.MTPHeads = k
	m.MTP = make([]MTPHead, k)
	return m.randomize(m.mtpTensors(), seed)
}

// Draft runs MTP head `head` over n rows: hidden holds n×HiddenSize hidden
// states (the trunk's, from StepOutputs, for head 0; head-1's, from a
// previous Draft, otherwise) and tokens the n tokens those states
// predicted. It returns the head's hidden states (n×HiddenSize, for the
// next head) and its logits (n×VocabSize) for the token after each; with
// Config.MTPDraftVocab the ids from it on get -Inf.
func (m *Model) Draft(head int, hidden []float32, tokens []int) (next, logits []float32, err error) {
	c := m.Config
	if head < 0 || head >= len(m.MTP) {
		return nil, nil, fmt.Errorf("model: MTP head %d of %d", head, len(m.MTP))
	}
	n, H := len(tokens), c.HiddenSize
	if n == 0 {
		return nil, nil, errors.New("model: draft without tokens")
	}
	if len(hidden) != n*H {
		return nil, nil, fmt.Errorf("model: draft with %d hidden values for %d rows of %d", len(hidden), n, H)
	}
	for j, t := range tokens {
		if t < 0 || t >= c.VocabSize {
			return nil, nil, fmt.Errorf("model: draft token %d at %d is outside the vocabulary of %d", t, j, c.VocabSize)
		}
	}
	hd := &m.MTP[head]
	b, eps := m.backend, c.RMSNormEps
	cat := make([]float32, n*2*H)
	emb := make([]float32, H)
	for r, t := range tokens {
		row := cat[r*2*H : (r+1)*2*H]
		rmsNormRows(b, row[:H], hidden[r*H:(r+1)*H], hd.HNorm, 1, H, eps)
		m.Embed.Row(emb, t)
		rmsNormRows(b, row[H:], emb, hd.ENorm, 1, H, eps)
	}
	x := make([]float32, n*H)
	b.Linear(x, cat, n, hd.EHProj)
	h := make([]float32, n*H)
	gate := make([]float32, n*c.IntermediateSize)
	up := make([]float32, n*c.IntermediateSize)
	rmsNormRows(b, h, x, hd.MLPNorm, n, H, eps)
	b.Linear(gate, h, n, hd.Gate)
	b.Linear(up, h, n, hd.Up)
	swiglu(b, gate, up, n, c.IntermediateSize)
	b.Linear(h, gate, n, hd.Down)
	addTo(x, h)
	rmsNormRows(b, h, x, hd.Norm, n, H, eps)
	V := c.VocabSize
	logits = make([]float32, n*V)
	if dv := c.MTPDraftVocab; dv > 0 && dv < V {
		part := make([]float32, n*dv)
		b.Linear(part, h, n, m.LMHead.firstRows(dv))
		negInf := float32(math.Inf(-1))
		for r := range n {
			row := logits[r*V : (r+1)*V]
			copy(row, part[r*dv:(r+1)*dv])
			for i := dv; i < V; i++ {
				row[i] = negInf
			}
		}
		return x, logits, nil
	}
	b.Linear(logits, h, n, m.LMHead)
	return x, logits, nil
}

// SpecStats counts the work of speculative decoding.
type SpecStats struct {
	// Steps is the number of verification passes that checked drafts.
	Steps int
	// Drafted and Accepted count the draft tokens proposed and accepted.
	Drafted, Accepted int
}

// Add returns the sum of two counts.
func (s SpecStats) Add(o SpecStats) SpecStats {
	return SpecStats{Steps: s.Steps + o.Steps, Drafted: s.Drafted + o.Drafted, Accepted: s.Accepted + o.Accepted}
}

// AcceptanceRate is the share of drafted tokens accepted (0 without drafts).
func (s SpecStats) AcceptanceRate() float64 {
	if s.Drafted == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Drafted)
}

// MeanAcceptedLength is the mean number of tokens a verification pass
// produced: the accepted drafts plus the one token the pass itself
// decides (the correction of the first rejected draft, or the token after
// the last accepted one). Plain decoding's value is 1.
func (s SpecStats) MeanAcceptedLength() float64 {
	if s.Steps == 0 {
		return 0
	}
	return float64(s.Accepted+s.Steps) / float64(s.Steps)
}

// GenerateGreedy feeds prompts[i] (at least one token each) into seqs[i]
// and continues every sequence by n greedy tokens (fewer when a sequence
// reaches the context), returning them. With k > 0 the MTP heads draft up
// to k tokens per step and one pass of the trunk over the k+1 positions
// verifies them: the drafts are accepted up to the first that differs from
// the trunk's own greedy choice, which replaces it, and the KV cache of the
// rejected positions is dropped. The tokens are plain greedy decoding's
// either way; only the number of trunk passes changes. Benchmarks and the
// head trainer measure acceptance with it; the engine does the same per
// request with sampling, constraints and batching.
func (m *Model) GenerateGreedy(ctx context.Context, seqs []*Sequence, prompts [][]int, n, k int) ([][]int, SpecStats, error) {
	return m.generateGreedy(ctx, seqs, prompts, n, k, m.draftGreedy)
}

// drafter proposes the draft tokens at depth d for the rows (indices into
// the sequences) whose hidden states and last tokens are given, returning
// the hidden states for the next depth and one draft token per row.
type drafter func(d int, rows []int, hidden []float32, tokens []int) (next []float32, drafts []int, err error)

// draftGreedy drafts each row's most likely token under MTP head d.
func (m *Model) draftGreedy(d int, _ []int, hidden []float32, tokens []int) ([]float32, []int, error) {
	next, logits, err := m.Draft(d, hidden, tokens)
	if err != nil {
		return nil, nil, err
	}
	V := m.Config.VocabSize
	drafts := make([]int, len(tokens))
	for r := range drafts {
		drafts[r] = argmax(logits[r*V : (r+1)*V])
	}
	return next, drafts, nil
}

func (m *Model) generateGreedy(ctx context.Context, seqs []*Sequence, prompts [][]int, n, k int, draft drafter) ([][]int, SpecStats, error) {
	var st SpecStats
	if k < 0 || k > len(m.MTP) {
		return nil, st, fmt.Errorf("model: %d draft tokens per step with %d MTP heads", k, len(m.MTP))
	}
	if n <= 0 {
		return nil, st, fmt.Errorf("model: generate %d tokens", n)
	}
	out, err := m.StepOutputs(ctx, seqs, prompts, nil)
	if err != nil {
		return nil, st, err
	}
	H := m.Config.HiddenSize
	gen := make([][]int, len(seqs))
	hidden := make([][]float32, len(seqs))
	for i, o := range out {
		gen[i] = []int{argmax(o.Logits)}
		hidden[i] = o.Hidden
	}
	for {
		var act []int
		var draftLen []int
		for i, s := range seqs {
			room := m.maxContext - s.Len() - 1
			if len(gen[i]) < n && room >= 0 {
				act = append(act, i)
				draftLen = append(draftLen, max(0, min(k, n-len(gen[i])-1, room)))
			}
		}
		if len(act) == 0 {
			return gen, st, nil
		}
		feed := make([][]int, len(act))
		for a, i := range act {
			feed[a] = []int{gen[i][len(gen[i])-1]}
		}
		// Drafting runs head by head over the sequences still drafting, so
		// each head's matrices are read once per step.
		h := make([][]float32, len(act))
		for a, i := range act {
			h[a] = hidden[i]
		}
		for d := range k {
			var rows []int
			for a := range act {
				if draftLen[a] > d {
					rows = append(rows, a)
				}
			}
			if len(rows) == 0 {
				break
			}
			hin := make([]float32, 0, len(rows)*H)
			toks := make([]int, len(rows))
			seqRows := make([]int, len(rows))
			for r, a := range rows {
				hin = append(hin, h[a]...)
				toks[r] = feed[a][len(feed[a])-1]
				seqRows[r] = act[a]
			}
			hout, drafts, err := draft(d, seqRows, hin, toks)
			if err != nil {
				return nil, st, err
			}
			for r, a := range rows {
				h[a] = hout[r*H : (r+1)*H]
				feed[a] = append(feed[a], drafts[r])
			}
		}
		stepSeqs := make([]*Sequence, len(act))
		all := make([]bool, len(act))
		for a, i := range act {
			stepSeqs[a] = seqs[i]
			all[a] = true
		}
		starts := make([]int, len(act))
		for a := range act {
			starts[a] = stepSeqs[a].Len()
		}
		out, err := m.StepOutputs(ctx, stepSeqs, feed, all)
		if err != nil {
			return nil, st, err
		}
		V := m.Config.VocabSize
		for a, i := range act {
			drafts := feed[a][1:]
			if len(drafts) > 0 {
				st.Steps++
				st.Drafted += len(drafts)
			}
			accepted := 0
			for j := range feed[a] {
				y := argmax(out[a].Logits[j*V : (j+1)*V])
				gen[i] = append(gen[i], y)
				if j < len(drafts) && y == drafts[j] {
					accepted++
					continue
				}
				break
			}
			st.Accepted += accepted
			if err := stepSeqs[a].Truncate(starts[a] + 1 + accepted); err != nil {
				return nil, st, err
			}
			hidden[i] = out[a].Hidden[accepted*H : (accepted+1)*H]
		}
	}
}
