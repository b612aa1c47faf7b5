package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/livehat/livehat/model/internal/kernel"
)

// Forward runs tokens through the model after the sequence's cached context
// and returns the logits of every token, len(tokens)×VocabSize (for
// verifying drafted tokens and for tests; a long prompt's logits take
// len(tokens)×VocabSize floats, so prompts go through Prefill). The tokens
// are appended to the sequence.
func (m *Model) Forward(ctx context.Context, seq *Sequence, tokens []int) ([]float32, error) {
	out, err := m.step(ctx, []*Sequence{seq}, [][]int{tokens}, []bool{true})
	if err != nil {
		return nil, err
	}
	return out[0].Logits, nil
}

// Decode appends one token to the sequence and returns the logits that
// predict the next one.
func (m *Model) Decode(ctx context.Context, seq *Sequence, token int) ([]float32, error) {
	out, err := m.step(ctx, []*Sequence{seq}, [][]int{{token}}, nil)
	if err != nil {
		return nil, err
	}
	return out[0].Logits, nil
}

// Batch advances several sequences by one token each in a single step, the
// decode step of continuous batching: the weights are streamed once for all
// sequences (a matrix-matrix product), while each sequence attends over its
// own KV cache at its own position. It returns each sequence's next-token
// logits.
func (m *Model) Batch(ctx context.Context, seqs []*Sequence, tokens []int) ([][]float32, error) {
	if len(seqs) != len(tokens) {
		return nil, fmt.Errorf("model: batch of %d sequences with %d tokens", len(seqs), len(tokens))
	}
	in := make([][]int, len(tokens))
	for i := range tokens {
		in[i] = tokens[i : i+1]
	}
	return logitsOf(m.step(ctx, seqs, in, nil))
}

// Step is the general continuous-batching step: each sequence appends its
// own tokens (a prompt chunk for a joining request, one token for a decoding
// one), all rows share the matrix products, and the logits of each
// sequence's last token are returned.
func (m *Model) Step(ctx context.Context, seqs []*Sequence, tokens [][]int) ([][]float32, error) {
	if len(seqs) != len(tokens) {
		return nil, fmt.Errorf("model: step of %d sequences with %d token lists", len(seqs), len(tokens))
	}
	return logitsOf(m.step(ctx, seqs, tokens, nil))
}

// StepOutput is one sequence's result of StepOutputs.
type StepOutput struct {
	// Logits holds rows×VocabSize scores: one row per token of the step
	// when the sequence's all flag was set, else one for its last token.
	Logits []float32
	// Hidden holds the same rows' hidden states (rows×HiddenSize): the
	// last layer's output before the final norm, which the MTP heads read.
	Hidden []float32
}

// StepOutputs is Step returning hidden states too, and the logits of every
// token of the sequences whose all flag is set (nil: none), as verifying a
// speculative draft needs: the k drafted tokens and the token before them
// go through the model in one pass, and the logits at each position say
// whether the next draft is accepted.
func (m *Model) StepOutputs(ctx context.Context, seqs []*Sequence, tokens [][]int, all []bool) ([]StepOutput, error) {
	if len(seqs) != len(tokens) || (all != nil && len(all) != len(seqs)) {
		return nil, fmt.Errorf("model: step of %d sequences with %d token lists and %d flags", len(seqs), len(tokens), len(all))
	}
	return m.step(ctx, seqs, tokens, all)
}

func logitsOf(out []StepOutput, err error) ([][]float32, error) {
	if err != nil {
		return nil, err
	}
	logits := make([][]float32, len(out))
	for i, o := range out {
		logits[i] = o.Logits
	}
	return logits, nil
}

// item is one sequence's part of a step.
type item struct {
	seq    *Sequence
	tokens []int
	start  int // sequence length before the step
	row    int // first row of the step's activations
}

// activations are the scratch buffers of one step, rows high.
type activations struct {
	rows     int
	h        []float32 // normed input of a block, then its output
	q, k, v  []float32 // projections (q and k rotated in place)
	att      []float32 // attention output before the o projection
	gate, up []float32 // MLP projections; gate becomes silu(gate)·up
	cos, sin []float32 // RoPE angles of each row's position
	items    []item    // the sequences' parts of the step
}

// step runs the forward pass in the blocks the CUDA runner's pass has too:
// embed the tokens, run each decoder layer (attention block, then MLP
// block), then the output head. It returns the logits and hidden states of every token
// of sequence i when all[i] is set (all may be nil), else only of its last
// token. On error or cancellation the sequences are left as they were.
func (m *Model) step(ctx context.Context, seqs []*Sequence, tokens [][]int, all []bool) ([]StepOutput, error) {
	items, rows, err := m.stepItems(seqs, tokens)
	if err != nil {
		return nil, err
	}
	unlock, err := lockSequences(seqs)
	if err != nil {
		return nil, err
	}
	defer unlock()
	for i := range items {
		it := &items[i]
		it.start = len(it.seq.tokens)
		if n := it.start + len(it.tokens); n > m.maxContext {
			return nil, fmt.Errorf("%w: sequence %d would hold %d tokens, the model accepts %d", ErrContextTooLong, i, n, m.maxContext)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	x, a := m.embed(items, rows)
	ok := false
	defer func() {
		if !ok {
			for _, it := range items {
				it.seq.truncateLocked(it.start)
			}
		}
	}()
	for li := range m.Layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.decoderLayer(li, x, a)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := m.outputHead(x, items, all)
	for _, it := range items {
		it.seq.tokens = append(it.seq.tokens, it.tokens...)
	}
	ok = true
	return out, nil
}

// stepItems validates a step's sequences and tokens and lays their rows
// out one after another.
func (m *Model) stepItems(seqs []*Sequence, tokens [][]int) ([]item, int, error) {
	if len(seqs) == 0 {
		return nil, 0, errors.New("model: step without sequences")
	}
	items := make([]item, len(seqs))
	rows := 0
	for i, s := range seqs {
		if s == nil || s.model != m {
			return nil, 0, fmt.Errorf("model: sequence %d does not belong to this model", i)
		}
		if len(tokens[i]) == 0 {
			return nil, 0, fmt.Errorf("model: sequence %d: no tokens", i)
		}
		for j, t := range tokens[i] {
			if t < 0 || t >= m.Config.VocabSize {
				return nil, 0, fmt.Errorf("model: sequence %d: token %d at %d is outside the vocabulary of %d", i, t, j, m.Config.VocabSize)
			}
		}
		items[i] = item{seq: s, tokens: tokens[i], row: rows}
		rows += len(tokens[i])
	}
	return items, rows, nil
}

// lockSequences locks every sequence of a step and returns the function
// that unlocks them. It locks in id order, so that concurrent steps over
// overlapping sets of sequences cannot deadlock.
func lockSequences(seqs []*Sequence) (unlock func(), err error) {
	order := slices.Clone(seqs)
	slices.SortFunc(order, func(a, b *Sequence) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			return nil, errors.New("model: a sequence appears twice in one step")
		}
	}
	for _, s := range order {
		s.mu.Lock()
	}
	return func() {
		for _, s := range order {
			s.mu.Unlock()
		}
	}, nil
}

// embed returns the step's residual stream, the embeddings of its tokens
// (rows×HiddenSize), and its scratch buffers with each row's RoPE angles.
func (m *Model) embed(items []item, rows int) ([]float32, *activations) {
	c := m.Config
	H, qDim, kvDim := c.HiddenSize, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	x := make([]float32, rows*H)
	positions := make([]int, rows)
	for _, it := range items {
		for j, t := range it.tokens {
			m.Embed.Row(x[(it.row+j)*H:], t)
			positions[it.row+j] = it.start + j
		}
	}
	a := &activations{
		rows:  rows,
		items: items,
		h:     make([]float32, rows*H),
		q:     make([]float32, rows*qDim),
		k:     make([]float32, rows*kvDim),
		v:     make([]float32, rows*kvDim),
		att:   make([]float32, rows*qDim),
		gate:  make([]float32, rows*c.IntermediateSize),
		up:    make([]float32, rows*c.IntermediateSize),
	}
	a.cos, a.sin = ropeTable(positions, c.HeadDim, c.RopeTheta)
	return x, a
}

// decoderLayer runs layer li over the residual stream x: x += Attn(x),
// then x += MLP(x).
func (m *Model) decoderLayer(li int, x []float32, a *activations) {
	m.attentionBlock(li, x, a)
	m.mlpBlock(li, x, a)
}

// attentionBlock adds layer li's self-attention to x: RMSNorm, the q, k
// and v projections (with their biases and Qwen3's per-head norms), RoPE,
// the new keys and values appended to each sequence's cache, causal
// attention over the cache, and the o projection.
func (m *Model) attentionBlock(li int, x []float32, a *activations) {
	c, l, b, rows := m.Config, &m.Layers[li], m.backend, a.rows
	kvDim := c.NumKVHeads * c.HeadDim
	rmsNormRows(b, a.h, x, l.AttnNorm, rows, c.HiddenSize, c.RMSNormEps)
	b.Linear(a.q, a.h, rows, l.Q)
	b.Linear(a.k, a.h, rows, l.K)
	b.Linear(a.v, a.h, rows, l.V)
	addBias(a.q, l.QBias, rows)
	addBias(a.k, l.KBias, rows)
	addBias(a.v, l.VBias, rows)
	if c.QKNorm {
		rmsNormRows(b, a.q, a.q, l.QNorm, rows*c.NumHeads, c.HeadDim, c.RMSNormEps)
		rmsNormRows(b, a.k, a.k, l.KNorm, rows*c.NumKVHeads, c.HeadDim, c.RMSNormEps)
	}
	rope(a.q, a.cos, a.sin, rows, c.NumHeads, c.HeadDim)
	rope(a.k, a.cos, a.sin, rows, c.NumKVHeads, c.HeadDim)
	for _, it := range a.items {
		s := it.seq
		s.k[li] = append(s.k[li], a.k[it.row*kvDim:(it.row+len(it.tokens))*kvDim]...)
		s.v[li] = append(s.v[li], a.v[it.row*kvDim:(it.row+len(it.tokens))*kvDim]...)
	}
	m.attention(a.att, a.q, li, a.items)
	b.Linear(a.h, a.att, rows, l.O)
	addBias(a.h, l.OBias, rows)
	addTo(x, a.h)
}

// mlpBlock adds layer li's SwiGLU MLP to x: RMSNorm, the gate and up
// projections, silu(gate)·up, and the down projection.
func (m *Model) mlpBlock(li int, x []float32, a *activations) {
	c, l, b, rows := m.Config, &m.Layers[li], m.backend, a.rows
	rmsNormRows(b, a.h, x, l.MLPNorm, rows, c.HiddenSize, c.RMSNormEps)
	b.Linear(a.gate, a.h, rows, l.Gate)
	b.Linear(a.up, a.h, rows, l.Up)
	swiglu(b, a.gate, a.up, rows, c.IntermediateSize)
	b.Linear(a.h, a.gate, rows, l.Down)
	addTo(x, a.h)
}

// outputHead gathers the rows whose results the step returns (every row of
// sequence i when all[i] is set, else its last), keeps their hidden states
// and computes their logits: the final RMSNorm and the LM head.
func (m *Model) outputHead(x []float32, items []item, all []bool) []StepOutput {
	c, b := m.Config, m.backend
	H := c.HiddenSize
	// The LM head is the largest matrix; without the all flag only each
	// sequence's last row goes through it.
	every := func(i int) bool { return all != nil && all[i] }
	var outRows []int
	for i, it := range items {
		if every(i) {
			for j := range it.tokens {
				outRows = append(outRows, it.row+j)
			}
		} else {
			outRows = append(outRows, it.row+len(it.tokens)-1)
		}
	}
	final := make([]float32, len(outRows)*H)
	for i, r := range outRows {
		copy(final[i*H:(i+1)*H], x[r*H:(r+1)*H])
	}
	hidden := slices.Clone(final)
	rmsNormRows(b, final, final, m.Norm, len(outRows), H, c.RMSNormEps)
	logits := make([]float32, len(outRows)*c.VocabSize)
	b.Linear(logits, final, len(outRows), m.LMHead)

	out := make([]StepOutput, len(items))
	next := 0
	for i, it := range items {
		n := 1
		if every(i) {
			n = len(it.tokens)
		}
		out[i] = StepOutput{
			Logits: logits[next*c.VocabSize : (next+n)*c.VocabSize : (next+n)*c.VocabSize],
			Hidden: hidden[next*H : (next+n)*H : (next+n)*H],
		}
		next += n
	}
	return out
}

// attention computes causal grouped-query attention for every item of the
// step, reading keys and values from each sequence's cache for layer li.
func (m *Model) attention(out, q []float32, li int, items []item) {
	c := m.Config
	// A decoding row over a short context is cheapest as dot products;
	// prompt chunks and long contexts go through GEMMs, which run the
	// query heads of a KV head against the keys at the kernel's speed
	// (BenchmarkDecodeAttention, 2,000 keys: decode steps 1.2× faster at
	// batch 1 and 1.8× at batch 8; no clear difference up to 512 keys).
	type row struct {
		it item
		j  int // token of the item
	}
	var dots []row
	for _, it := range items {
		// A verification step of speculative decoding feeds a few tokens;
		// they go through the dot products too, so that they compute
		// exactly as the one-token steps they stand for.
		if len(it.tokens) <= maxDotRows && it.start+len(it.tokens) < m.gemmAttentionKeys {
			for j := range it.tokens {
				dots = append(dots, row{it, j})
			}
		} else {
			m.attentionGEMM(out, q, li, it)
		}
	}
	if len(dots) == 0 {
		return
	}
	// Decoding rows: one task per (row, query head), dot products against
	// the cached keys the row may see.
	d, qDim, kvDim := c.HeadDim, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	group := c.NumHeads / c.NumKVHeads
	scale := 1 / math.Sqrt(float64(d))
	m.backend.Parallel(len(dots)*c.NumHeads, func(task int) {
		rw := dots[task/c.NumHeads]
		it := rw.it
		head := task % c.NumHeads
		kvh := head / group
		keys, vals := it.seq.k[li], it.seq.v[li]
		n := it.start + rw.j + 1
		r := it.row + rw.j
		qh := q[r*qDim+head*d : r*qDim+(head+1)*d]
		scores := make([]float32, n)
		for j := range n {
			scores[j] = kernel.Dot(qh, keys[j*kvDim+kvh*d:j*kvDim+(kvh+1)*d]) * float32(scale)
		}
		softmax(scores)
		o := out[r*qDim+head*d : r*qDim+(head+1)*d]
		clear(o)
		for j, p := range scores {
			axpy(o, p, vals[j*kvDim+kvh*d:j*kvDim+(kvh+1)*d])
		}
	})
}

// maxDotRows is the most tokens of one sequence whose attention runs as dot
// products (the drafts of a speculative step and the token before them).
const maxDotRows = MaxMTPHeads + 1

// attentionScoreBudget bounds the score matrix of one GEMM attention chunk
// (in floats) so that long prompts do not need quadratic memory.
const attentionScoreBudget = 4 << 20

// attentionGEMM computes attention for a multi-token item with two GEMMs per
// KV head and query chunk: S = Q·Kᵀ over the visible keys, a causal softmax,
// then O = P·V. The query heads that share a KV head are stacked as rows so
// that each GEMM is as tall as possible.
func (m *Model) attentionGEMM(out, q []float32, li int, it item) {
	c := m.Config
	d, qDim, kvDim := c.HeadDim, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	group := c.NumHeads / c.NumKVHeads
	n := len(it.tokens)
	total := it.start + n
	chunk := max(1, min(n, attentionScoreBudget/(group*total)))
	keys, vals := it.seq.k[li], it.seq.v[li]
	scale := float32(1 / math.Sqrt(float64(d)))
	qs := make([]float32, chunk*group*d)
	os := make([]float32, chunk*group*d)
	scores := make([]float32, chunk*group*total)
	for kvh := range c.NumKVHeads {
		kh, vh := keys[kvh*d:], vals[kvh*d:]
		for q0 := 0; q0 < n; q0 += chunk {
			q1 := min(n, q0+chunk)
			rowsQ := (q1 - q0) * group
			visible := it.start + q1
			for i := q0; i < q1; i++ {
				src := q[(it.row+i)*qDim+kvh*group*d:]
				copy(qs[(i-q0)*group*d:(i-q0+1)*group*d], src[:group*d])
			}
			m.backend.Sgemm(false, true, rowsQ, visible, d, scale, qs, d, kh, kvDim, 0, scores, visible)
			m.backend.Parallel(rowsQ, func(r int) {
				row := scores[r*visible : (r+1)*visible]
				limit := it.start + q0 + r/group + 1 // keys a query at this position may see
				softmax(row[:limit])
				clear(row[limit:])
			})
			m.backend.Sgemm(false, false, rowsQ, d, visible, 1, scores, visible, vh, kvDim, 0, os, d)
			for i := q0; i < q1; i++ {
				dst := out[(it.row+i)*qDim+kvh*group*d:]
				copy(dst[:group*d], os[(i-q0)*group*d:(i-q0+1)*group*d])
			}
		}
	}
}

// rmsNormRows writes RMSNorm(x)·w for n rows of width dim into dst (which
// may alias x).
func rmsNormRows(b Backend, dst, x, w []float32, n, dim int, eps float64) {
	norm := func(r int) {
		xr, dr := x[r*dim:(r+1)*dim], dst[r*dim:(r+1)*dim]
		var ss float64
		for _, v := range xr {
			ss += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(ss/float64(dim)+eps))
		for i, v := range xr {
			dr[i] = w[i] * (v * inv)
		}
	}
	if n*dim < 1<<14 {
		for r := range n {
			norm(r)
		}
		return
	}
	b.Parallel(n, norm)
}

// rope rotates each head of n rows by its position's angles, in Hugging
// Face's rotate_half convention: the first and second halves of a head form
// the (real, imaginary) pairs.
func rope(x, cos, sin []float32, n, heads, dim int) {
	half := dim / 2
	for r := range n {
		cr, sr := cos[r*half:(r+1)*half], sin[r*half:(r+1)*half]
		for h := range heads {
			v := x[(r*heads+h)*dim : (r*heads+h+1)*dim]
			for i := range half {
				a, b := v[i], v[i+half]
				v[i] = a*cr[i] - b*sr[i]
				v[i+half] = b*cr[i] + a*sr[i]
			}
		}
	}
}

func addBias(x, bias []float32, n int) {
	if bias == nil {
		return
	}
	dim := len(bias)
	for r := range n {
		row := x[r*dim : (r+1)*dim]
		for i, b := range bias {
			row[i] += b
		}
	}
}

func addTo(dst, src []float32) {
	for i, v := range src[:len(dst)] {
		dst[i] += v
	}
}

// swiglu sets gate = silu(gate)·up.
func swiglu(b Backend, gate, up []float32, n, dim int) {
	act := func(r int) {
		g, u := gate[r*dim:(r+1)*dim], up[r*dim:(r+1)*dim]
		// e^(-v) in vector blocks (bit for bit Exp32's), the rest as
		// the scalar expression v / (1 + Exp32(-v)) * u.
		var e [64]float32
		for i0 := 0; i0 < dim; i0 += len(e) {
			blk := g[i0:min(i0+len(e), dim)]
			neg := e[:len(blk)]
			for j, v := range blk {
				neg[j] = -v
			}
			kernel.Exp(neg, neg)
			for j, v := range blk {
				blk[j] = v / (1 + neg[j]) * u[i0+j]
			}
		}
	}
	if n*dim < 1<<14 {
		for r := range n {
			act(r)
		}
		return
	}
	b.Parallel(n, act)
}

// softmax normalises x in place, with the vector kernel: its results are
// bit for bit those of the scalar loop over [Exp32].
func softmax(x []float32) { kernel.Softmax(x) }

func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

// Exp32 is exp in float32 precision, a few times faster than math.Exp,
// which matters because softmax and SiLU call it for every score and every
// MLP activation. It reduces x = n·ln2 + r with |r| ≤ ln2/2 and evaluates a
// degree-7 Taylor polynomial of e^r (truncation error below 1e-8
// relative), then scales by 2^n through the exponent bits. The trainer's
// forward pass uses it too, so training and inference round alike, and the
// vector softmax of inference matches it bit for bit.
func Exp32(x float32) float32 { return kernel.Exp32(x) }

// Exp sets dst[i] = Exp32(src[i]) for every i, bit for bit, with the
// vector kernel where the CPU has one. dst may be src itself but must not
// overlap it otherwise; it panics if the lengths differ.
func Exp(dst, src []float32) { kernel.Exp(dst, src) }
