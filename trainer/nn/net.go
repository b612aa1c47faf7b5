package nn

import (
	"context"
	"fmt"
	"math"

	"github.com/livehat/livehat/model"
)

// float is the element type of a network: float32 for training, float64
// for the gradient check path of the tests.
type float interface{ ~float32 | ~float64 }

// tensor is one parameter: a rows×cols matrix in the Hugging Face Linear
// layout [out, in], or a vector (cols == 0) of length rows.
type tensor[F float] struct {
	name       string
	rows, cols int
	w          []F
	g          []F // nil when the tensor is frozen
	lora       *adapter[F]
}

func (t *tensor[F]) size() int { return t.rows * max(t.cols, 1) }

// adapter is a LoRA pair on a matrix: W' = W + scale·B·A.
type adapter[F float] struct {
	a, b  *tensor[F] // a: rank×cols, b: rows×rank
	rank  int
	scale F
}

// layer holds one decoder block's tensors; biases and q/k norms are nil
// where the architecture has none.
type layer[F float] struct {
	attnNorm, q, k, v, o       *tensor[F]
	qBias, kBias, vBias, oBias *tensor[F]
	qNorm, kNorm, mlpNorm      *tensor[F]
	gate, up, down             *tensor[F]
}

// net is the training-time decoder over elements of type F.
type net[F float] struct {
	cfg    model.Config
	embed  *tensor[F]
	layers []layer[F]
	norm   *tensor[F]
	head   *tensor[F] // the embedding itself when tied
	// backend runs float32 matrix products and parallel loops; nil runs
	// plain serial loops (the float64 check path).
	backend model.Backend
	// fastExp uses the float32 polynomial exp (set for float32 networks).
	fastExp bool
	// block overrides queryBlock when positive (tests use small
	// blocks to cross block edges with short sequences).
	block int
}

// tensors lists every tensor in the order of the Hugging Face checkpoint
// (a tied head once), LoRA adapters excluded.
func (n *net[F]) tensors() []*tensor[F] {
	ts := []*tensor[F]{n.embed}
	for i := range n.layers {
		l := &n.layers[i]
		for _, t := range []*tensor[F]{l.attnNorm, l.q, l.k, l.v, l.o, l.qBias, l.kBias, l.vBias, l.oBias, l.qNorm, l.kNorm, l.mlpNorm, l.gate, l.up, l.down} {
			if t != nil {
				ts = append(ts, t)
			}
		}
	}
	ts = append(ts, n.norm)
	if n.head != n.embed {
		ts = append(ts, n.head)
	}
	return ts
}

// adapters lists the LoRA tensors in checkpoint order.
func (n *net[F]) adapters() []*tensor[F] {
	var out []*tensor[F]
	for _, t := range n.tensors() {
		if t.lora != nil {
			out = append(out, t.lora.a, t.lora.b)
		}
	}
	return out
}

// batch is a packed micro-batch: examples concatenated without padding.
// Attention stays within each example and positions restart at each.
type batch struct {
	tokens []int
	pos    []int
	segs   [][2]int // [start, end) of each example
	labels []int    // the token position i predicts, -1 when untrained
	owner  []int    // the example each token belongs to
	// loss, when set, replaces the cross-entropy at every trained position
	// (float32 networks only).
	loss TokenLoss
}

// layerActs keeps what a layer's backward pass needs from its forward pass.
type layerActs[F float] struct {
	x, h1, x2, h2 []F // block input, normed input, mid residual, normed mid
	r1, r2        []F // inverse RMS of x and x2
	qRaw, kRaw    []F // q and k before the q/k norm (Qwen3)
	rq, rk        []F // their inverse RMS per head
	q, k, v, o    []F // rotated q and k, v, attention output
	lse           []F // log-sum-exp of each position's attention scores, per head
	g, u, a       []F // gate and up projections, silu(g)·u
	xa            map[*tensor[F]][]F
}

// result is the outcome of one pass over a batch.
type result[F float] struct {
	lossSum float64
	tokens  int
	logits  []F // only when all logits were asked for
}

// run computes the forward pass over b and, when scale is non-zero,
// accumulates scale·∂(summed loss)/∂θ into the gradients. With allLogits the
// logits of every position are returned (and no loss is needed). It runs
// the blocks model.Model's forward pass and the CUDA runner run — embed,
// each decoder layer (attention block, then MLP block), the output head —
// then the loss and, backwards, the same blocks' gradients.
func (n *net[F]) run(ctx context.Context, b *batch, scale F, allLogits bool) (result[F], error) {
	backward := scale != 0
	if backward && allLogits {
		return result[F]{}, fmt.Errorf("nn: a pass cannot both return logits and train")
	}
	x, err := n.embedTokens(b)
	if err != nil {
		return result[F]{}, err
	}
	cos, sin := ropeTable[F](b.pos, n.cfg.HeadDim, n.cfg.RopeTheta)
	acts := make([]layerActs[F], len(n.layers))
	for li := range n.layers {
		if err := ctx.Err(); err != nil {
			return result[F]{}, err
		}
		x = n.decoderLayer(li, &acts[li], x, b, cos, sin)
	}
	h := n.outputHead(x, b, allLogits)
	res, err := n.loss(h, b, scale, allLogits)
	if err != nil || !backward {
		return res, err
	}

	dx := n.outputHeadBackward(h, len(b.tokens))
	for li := len(n.layers) - 1; li >= 0; li-- {
		if err := ctx.Err(); err != nil {
			return result[F]{}, err
		}
		n.decoderLayerBackward(li, &acts[li], dx, b, cos, sin)
	}
	n.embedBackward(b, dx)
	return res, nil
}

// embedTokens returns the batch's residual stream: the embeddings of its
// tokens (N×HiddenSize).
func (n *net[F]) embedTokens(b *batch) ([]F, error) {
	c := n.cfg
	D := c.HiddenSize
	x := make([]F, len(b.tokens)*D)
	for i, t := range b.tokens {
		if t < 0 || t >= c.VocabSize {
			return nil, fmt.Errorf("nn: token %d at %d is outside the vocabulary of %d", t, i, c.VocabSize)
		}
		copy(x[i*D:(i+1)*D], n.embed.w[t*D:(t+1)*D])
	}
	return x, nil
}

// embedBackward adds the gradient at the residual stream's input to the
// embedding rows of the batch's tokens.
func (n *net[F]) embedBackward(b *batch, dx []F) {
	if n.embed.g == nil {
		return
	}
	D := n.cfg.HiddenSize
	for i, t := range b.tokens {
		g, d := n.embed.g[t*D:(t+1)*D], dx[i*D:(i+1)*D]
		for j := range g {
			g[j] += d[j]
		}
	}
}

// decoderLayer runs layer li over the residual stream x and returns the
// layer's output, x + Attn(x) + MLP(x + Attn(x)), keeping in a what the
// backward pass needs.
func (n *net[F]) decoderLayer(li int, a *layerActs[F], x []F, b *batch, cos, sin []F) []F {
	a.xa = map[*tensor[F]][]F{}
	n.attentionBlock(li, a, x, b, cos, sin)
	return n.mlpBlock(li, a)
}

// attentionBlock sets a.x2 to x plus layer li's self-attention: RMSNorm,
// the q, k and v projections (with their biases and Qwen3's per-head
// norms), RoPE, causal attention within each example, and the o
// projection.
func (n *net[F]) attentionBlock(li int, a *layerActs[F], x []F, b *batch, cos, sin []F) {
	c, l := n.cfg, &n.layers[li]
	N, D := len(b.tokens), c.HiddenSize
	qd, kvd, hd := c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim, c.HeadDim
	a.x = x
	a.h1, a.r1 = make([]F, N*D), make([]F, N)
	n.rmsNorm(a.h1, a.r1, x, l.attnNorm.w, N, D)
	a.q, a.k, a.v = make([]F, N*qd), make([]F, N*kvd), make([]F, N*kvd)
	n.linear(a, a.q, a.h1, N, l.q, l.qBias)
	n.linear(a, a.k, a.h1, N, l.k, l.kBias)
	n.linear(a, a.v, a.h1, N, l.v, l.vBias)
	if c.QKNorm {
		a.qRaw, a.kRaw = a.q, a.k
		a.q, a.k = make([]F, N*qd), make([]F, N*kvd)
		a.rq, a.rk = make([]F, N*c.NumHeads), make([]F, N*c.NumKVHeads)
		n.rmsNorm(a.q, a.rq, a.qRaw, l.qNorm.w, N*c.NumHeads, hd)
		n.rmsNorm(a.k, a.rk, a.kRaw, l.kNorm.w, N*c.NumKVHeads, hd)
	}
	rope(a.q, cos, sin, N, c.NumHeads, hd, false)
	rope(a.k, cos, sin, N, c.NumKVHeads, hd, false)
	a.o, a.lse = make([]F, N*qd), make([]F, N*c.NumHeads)
	n.attention(a, b)
	a.x2 = make([]F, N*D)
	n.linear(a, a.x2, a.o, N, l.o, l.oBias)
	for i := range a.x2 {
		a.x2[i] += x[i]
	}
}

// mlpBlock returns a.x2 plus layer li's SwiGLU MLP: RMSNorm, the gate and
// up projections, silu(gate)·up, and the down projection.
func (n *net[F]) mlpBlock(li int, a *layerActs[F]) []F {
	c, l := n.cfg, &n.layers[li]
	D, I := c.HiddenSize, c.IntermediateSize
	N := len(a.x2) / D
	a.h2, a.r2 = make([]F, N*D), make([]F, N)
	n.rmsNorm(a.h2, a.r2, a.x2, l.mlpNorm.w, N, D)
	a.g, a.u, a.a = make([]F, N*I), make([]F, N*I), make([]F, N*I)
	n.linear(a, a.g, a.h2, N, l.gate, nil)
	n.linear(a, a.u, a.h2, N, l.up, nil)
	n.par(N, func(r int) {
		g, u, out := a.g[r*I:(r+1)*I], a.u[r*I:(r+1)*I], a.a[r*I:(r+1)*I]
		for i, v := range g {
			out[i] = -v
		}
		n.expShift(out, 0) // e^-g
		for i, v := range g {
			out[i] = v / (1 + out[i]) * u[i]
		}
	})
	next := make([]F, N*D)
	n.linear(a, next, a.a, N, l.down, nil)
	for i := range next {
		next[i] += a.x2[i]
	}
	return next
}

// headActs keeps what the output head's backward pass needs.
type headActs[F float] struct {
	rows       []int // the batch rows the head ran on
	xf, hf, rf []F   // their residual stream, its final norm, the inverse RMS
	// logits are M×V; the loss turns them into their gradient in place.
	logits []F
}

// outputHead computes the logits of the rows that are trained (or of all
// rows when the logits are wanted): the final RMSNorm and the LM head, the
// widest matrix product.
func (n *net[F]) outputHead(x []F, b *batch, allLogits bool) *headActs[F] {
	c := n.cfg
	D := c.HiddenSize
	h := &headActs[F]{}
	for i, lab := range b.labels {
		if allLogits || lab >= 0 {
			h.rows = append(h.rows, i)
		}
	}
	M, V := len(h.rows), c.VocabSize
	h.xf = make([]F, M*D)
	for j, r := range h.rows {
		copy(h.xf[j*D:(j+1)*D], x[r*D:(r+1)*D])
	}
	h.hf, h.rf = make([]F, M*D), make([]F, M)
	n.rmsNorm(h.hf, h.rf, h.xf, n.norm.w, M, D)
	h.logits = make([]F, M*V)
	n.gemm(false, true, M, V, D, 1, h.hf, D, n.head.w, D, 0, h.logits, V)
	return h
}

// loss sums the loss of the trained rows: the batch's own token loss, or
// the cross-entropy. When training (scale non-zero) it leaves
// scale·∂loss/∂logits in h.logits; with allLogits the logits stay and are
// returned.
func (n *net[F]) loss(h *headActs[F], b *batch, scale F, allLogits bool) (result[F], error) {
	backward := scale != 0
	rows, logits := h.rows, h.logits
	M, V := len(rows), n.cfg.VocabSize
	res := result[F]{}
	if allLogits {
		res.logits = logits
	}
	losses := make([]float64, M)
	if b.loss != nil {
		if err := n.customLoss(b, rows, logits, losses, scale); err != nil {
			return result[F]{}, err
		}
	}
	// Cross-entropy; logits become scale·(softmax − onehot) in place.
	n.par(M, func(j int) {
		if b.loss != nil {
			return
		}
		lab := b.labels[rows[j]]
		if lab < 0 { // only when all logits are wanted, so nothing trains
			return
		}
		row := logits[j*V : (j+1)*V]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		target := float64(row[lab])
		if allLogits { // the logits are returned, so they stay
			var sum float64
			for _, v := range row {
				sum += float64(n.exp(float64(v) - mx))
			}
			losses[j] = mx + math.Log(sum) - target
			return
		}
		sum := n.expShift(row, mx)
		losses[j] = mx + math.Log(sum) - target
		if !backward {
			return
		}
		f := scale / F(sum)
		for i := range row {
			row[i] *= f
		}
		row[lab] -= scale
	})
	for j, l := range losses {
		if b.labels[rows[j]] >= 0 {
			res.lossSum += l
			res.tokens++
		}
	}
	return res, nil
}

// outputHeadBackward takes the gradient at the logits (h.logits, after
// the loss) back through the LM head and the final norm, and returns the
// gradient at the residual stream of all N rows (zero on rows the head
// did not run on).
func (n *net[F]) outputHeadBackward(h *headActs[F], N int) []F {
	D, V, M := n.cfg.HiddenSize, n.cfg.VocabSize, len(h.rows)
	dl := h.logits
	if n.head.g != nil {
		n.gemm(true, false, V, D, M, 1, dl, V, h.hf, D, 1, n.head.g, D)
	}
	dhf := make([]F, M*D)
	n.gemm(false, false, M, D, V, 1, dl, V, n.head.w, D, 0, dhf, D)
	dxf := make([]F, M*D)
	n.rmsNormBackward(dxf, dhf, h.xf, h.rf, n.norm, M, D)
	dx := make([]F, N*D)
	for j, r := range h.rows {
		copy(dx[r*D:(r+1)*D], dxf[j*D:(j+1)*D])
	}
	return dx
}

// decoderLayerBackward takes dx, the gradient at layer li's output, back
// to the gradient at its input, in place, accumulating the gradients of
// the layer's tensors.
func (n *net[F]) decoderLayerBackward(li int, a *layerActs[F], dx []F, b *batch, cos, sin []F) {
	n.mlpBlockBackward(li, a, dx)
	n.attentionBlockBackward(li, a, dx, b, cos, sin)
}

// mlpBlockBackward: dx is the gradient at the block output, which is also
// the gradient at x2 through the residual; the MLP's share is added.
func (n *net[F]) mlpBlockBackward(li int, a *layerActs[F], dx []F) {
	c, l := n.cfg, &n.layers[li]
	D, I := c.HiddenSize, c.IntermediateSize
	N := len(dx) / D
	da := make([]F, N*I)
	n.linearBackward(a, da, dx, a.a, N, l.down, nil)
	dg, du := make([]F, N*I), make([]F, N*I)
	n.par(N, func(r int) {
		g, u, d := a.g[r*I:(r+1)*I], a.u[r*I:(r+1)*I], da[r*I:(r+1)*I]
		sg := dg[r*I : (r+1)*I]
		for i, v := range g {
			sg[i] = -v
		}
		n.expShift(sg, 0) // e^-g, then σ(g) in place
		for i, v := range g {
			s := 1 / (1 + sg[i])
			du[r*I+i] = d[i] * v * s
			sg[i] = d[i] * u[i] * s * (1 + v*(1-s))
		}
	})
	dh2 := make([]F, N*D)
	n.linearBackward(a, dh2, dg, a.h2, N, l.gate, nil)
	n.linearBackward(a, dh2, du, a.h2, N, l.up, nil)
	n.rmsNormBackwardAdd(dx, dh2, a.x2, a.r2, l.mlpNorm, N, D)
}

// attentionBlockBackward: dx is the gradient at x2, which is also the
// gradient at the block input x through the residual; the attention's
// share is added.
func (n *net[F]) attentionBlockBackward(li int, a *layerActs[F], dx []F, b *batch, cos, sin []F) {
	c, l := n.cfg, &n.layers[li]
	N, D := len(b.tokens), c.HiddenSize
	qd, kvd, hd := c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim, c.HeadDim
	do := make([]F, N*qd)
	n.linearBackward(a, do, dx, a.o, N, l.o, l.oBias)
	dq, dk, dv := make([]F, N*qd), make([]F, N*kvd), make([]F, N*kvd)
	n.attentionBackward(a, b, do, dq, dk, dv)
	rope(dq, cos, sin, N, c.NumHeads, hd, true)
	rope(dk, cos, sin, N, c.NumKVHeads, hd, true)
	if c.QKNorm {
		dqr, dkr := make([]F, N*qd), make([]F, N*kvd)
		n.rmsNormBackward(dqr, dq, a.qRaw, a.rq, l.qNorm, N*c.NumHeads, hd)
		n.rmsNormBackward(dkr, dk, a.kRaw, a.rk, l.kNorm, N*c.NumKVHeads, hd)
		dq, dk = dqr, dkr
	}
	dh1 := make([]F, N*D)
	n.linearBackward(a, dh1, dq, a.h1, N, l.q, l.qBias)
	n.linearBackward(a, dh1, dk, a.h1, N, l.k, l.kBias)
	n.linearBackward(a, dh1, dv, a.h1, N, l.v, l.vBias)
	n.rmsNormBackwardAdd(dx, dh1, a.x, a.r1, l.attnNorm, N, D)
}

// queryBlock is the number of query rows whose scores are computed
// at once: each block sees only the keys up to its last row, which skips
// most of the masked upper triangle, and the score buffer stays small.
const queryBlock = 128

// attention computes causal grouped-query attention within each example.
// It keeps only the log-sum-exp of every row's scores; the backward pass
// recomputes the probabilities (as FlashAttention does) instead of storing
// an L×L matrix per head and layer.
func (n *net[F]) attention(a *layerActs[F], b *batch) {
	c := n.cfg
	H, qd, kvd, hd := c.NumHeads, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim, c.HeadDim
	group := H / c.NumKVHeads
	inv, blk := F(1/math.Sqrt(float64(hd))), n.attentionRows()
	var buf []F
	for _, sg := range b.segs {
		s, L := sg[0], sg[1]-sg[0]
		for h := range H {
			g := h / group
			for r0 := 0; r0 < L; r0 += blk {
				r1 := min(L, r0+blk)
				R := r1 - r0
				buf = grow(buf, R*r1)
				n.gemm(false, true, R, r1, hd, inv, a.q[(s+r0)*qd+h*hd:], qd, a.k[s*kvd+g*hd:], kvd, 0, buf, r1)
				n.par(R, func(ri int) {
					i := r0 + ri
					row := buf[ri*r1 : (ri+1)*r1]
					mx := math.Inf(-1)
					for _, v := range row[:i+1] {
						mx = max(mx, float64(v))
					}
					sum := n.expShift(row[:i+1], mx)
					a.lse[(s+i)*H+h] = F(mx + math.Log(sum))
					is := F(1 / sum)
					for j := range row[:i+1] {
						row[j] *= is
					}
					clear(row[i+1:])
				})
				n.gemm(false, false, R, hd, r1, 1, buf, r1, a.v[s*kvd+g*hd:], kvd, 0, a.o[(s+r0)*qd+h*hd:], qd)
			}
		}
	}
}

// attentionBackward turns the gradient at the attention output into the
// gradients at the rotated queries, keys and values. Heads run one after
// another, so the key and value gradients of a shared KV head are summed
// in a fixed order.
func (n *net[F]) attentionBackward(a *layerActs[F], b *batch, do, dq, dk, dv []F) {
	c := n.cfg
	H, qd, kvd, hd := c.NumHeads, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim, c.HeadDim
	group := H / c.NumKVHeads
	inv, blk := F(1/math.Sqrt(float64(hd))), n.attentionRows()
	// Σ_j P_ij·dP_ij equals dO_i·O_i, which needs no probabilities.
	N := len(b.tokens)
	dot := make([]F, N*H)
	n.par(N, func(i int) {
		for h := range H {
			var s float64
			for d := range hd {
				s += float64(do[i*qd+h*hd+d]) * float64(a.o[i*qd+h*hd+d])
			}
			dot[i*H+h] = F(s)
		}
	})
	var p, dp []F
	for _, sg := range b.segs {
		s, L := sg[0], sg[1]-sg[0]
		for h := range H {
			g := h / group
			for r0 := 0; r0 < L; r0 += blk {
				r1 := min(L, r0+blk)
				R := r1 - r0
				p, dp = grow(p, R*r1), grow(dp, R*r1)
				dO := do[(s+r0)*qd+h*hd:]
				n.gemm(false, true, R, r1, hd, inv, a.q[(s+r0)*qd+h*hd:], qd, a.k[s*kvd+g*hd:], kvd, 0, p, r1)
				n.gemm(false, true, R, r1, hd, 1, dO, qd, a.v[s*kvd+g*hd:], kvd, 0, dp, r1)
				n.par(R, func(ri int) {
					i := r0 + ri
					pr, dr := p[ri*r1:(ri+1)*r1], dp[ri*r1:(ri+1)*r1]
					lse, di := float64(a.lse[(s+i)*H+h]), dot[(s+i)*H+h]
					n.expShift(pr[:i+1], lse)
					for j, pj := range pr[:i+1] {
						dr[j] = pj * (dr[j] - di)
					}
					clear(pr[i+1:])
					clear(dr[i+1:])
				})
				n.gemm(true, false, r1, hd, R, 1, p, r1, dO, qd, 1, dv[s*kvd+g*hd:], kvd)
				n.gemm(false, false, R, hd, r1, inv, dp, r1, a.k[s*kvd+g*hd:], kvd, 0, dq[(s+r0)*qd+h*hd:], qd)
				n.gemm(true, false, r1, hd, R, inv, dp, r1, a.q[(s+r0)*qd+h*hd:], qd, 1, dk[s*kvd+g*hd:], kvd)
			}
		}
	}
}

// attentionRows returns the query rows computed at once.
func (n *net[F]) attentionRows() int {
	if n.block > 0 {
		return n.block
	}
	return queryBlock
}

// grow returns buf with length n, reallocated only when too small.
func grow[F float](buf []F, n int) []F {
	if cap(buf) < n {
		return make([]F, n)
	}
	return buf[:n]
}

// exp is e^x in the network's precision: a fast float32 polynomial for
// training, math.Exp on the float64 check path.
func (n *net[F]) exp(x float64) F {
	if n.fastExp {
		return F(model.Exp32(float32(x)))
	}
	return F(math.Exp(x))
}

// expShift sets x[j] = e^(x[j]−shift) and returns their sum. It is the
// inner loop of every softmax, so the float32 case goes through the
// model's vector exp (bit for bit model.Exp32).
func (n *net[F]) expShift(x []F, shift float64) float64 {
	if x32, ok := any(x).([]float32); ok && n.fastExp {
		return expShift32(x32, float32(shift))
	}
	var sum float64
	for j, v := range x {
		e := math.Exp(float64(v) - shift)
		x[j] = F(e)
		sum += e
	}
	return sum
}

func expShift32(x []float32, shift float32) float64 {
	for j, v := range x {
		x[j] = v - shift
	}
	model.Exp(x, x)
	var sum float64
	for _, e := range x {
		sum += float64(e)
	}
	return sum
}

// linear computes y = x·Wᵀ (+ bias) (+ scale·(x·Aᵀ)·Bᵀ for a LoRA adapter)
// for N rows.
func (n *net[F]) linear(a *layerActs[F], y, x []F, N int, t, bias *tensor[F]) {
	n.gemm(false, true, N, t.rows, t.cols, 1, x, t.cols, t.w, t.cols, 0, y, t.rows)
	if bias != nil {
		for r := range N {
			row := y[r*t.rows : (r+1)*t.rows]
			for i, v := range bias.w {
				row[i] += v
			}
		}
	}
	if ad := t.lora; ad != nil {
		xa := make([]F, N*ad.rank)
		n.gemm(false, true, N, ad.rank, t.cols, 1, x, t.cols, ad.a.w, t.cols, 0, xa, ad.rank)
		n.gemm(false, true, N, t.rows, ad.rank, ad.scale, xa, ad.rank, ad.b.w, ad.rank, 1, y, t.rows)
		a.xa[t] = xa
	}
}

// linearBackward adds dy·W to dx and accumulates the gradients of the
// trainable weight, bias and adapter.
func (n *net[F]) linearBackward(a *layerActs[F], dx, dy, x []F, N int, t, bias *tensor[F]) {
	if t.g != nil {
		n.gemm(true, false, t.rows, t.cols, N, 1, dy, t.rows, x, t.cols, 1, t.g, t.cols)
	}
	if bias != nil && bias.g != nil {
		for r := range N {
			row := dy[r*t.rows : (r+1)*t.rows]
			for i, v := range row {
				bias.g[i] += v
			}
		}
	}
	n.gemm(false, false, N, t.cols, t.rows, 1, dy, t.rows, t.w, t.cols, 1, dx, t.cols)
	if ad := t.lora; ad != nil {
		r, xa := ad.rank, a.xa[t]
		n.gemm(true, false, t.rows, r, N, ad.scale, dy, t.rows, xa, r, 1, ad.b.g, r)
		dxa := make([]F, N*r)
		n.gemm(false, false, N, r, t.rows, ad.scale, dy, t.rows, ad.b.w, r, 0, dxa, r)
		n.gemm(true, false, r, t.cols, N, 1, dxa, r, x, t.cols, 1, ad.a.g, t.cols)
		n.gemm(false, false, N, t.cols, r, 1, dxa, r, ad.a.w, t.cols, 1, dx, t.cols)
	}
}

// rmsNorm writes RMSNorm(x)·w for rows rows of width dim into y and the
// inverse RMS of each row into inv.
func (n *net[F]) rmsNorm(y, inv, x, w []F, rows, dim int) {
	eps := n.cfg.RMSNormEps
	n.par(rows, func(r int) {
		xr, yr := x[r*dim:(r+1)*dim], y[r*dim:(r+1)*dim]
		var ss float64
		for _, v := range xr {
			ss += float64(v) * float64(v)
		}
		iv := F(1 / math.Sqrt(ss/float64(dim)+eps))
		inv[r] = iv
		for i, v := range xr {
			yr[i] = w[i] * (v * iv)
		}
	})
}

// rmsNormBackward writes the gradient at x into dx (overwriting it) and
// accumulates the weight gradient.
func (n *net[F]) rmsNormBackward(dx, dy, x, inv []F, w *tensor[F], rows, dim int) {
	clear(dx)
	n.rmsNormBackwardAdd(dx, dy, x, inv, w, rows, dim)
}

// rmsNormBackwardAdd adds the gradient at x to dx. With y_i = w_i·x_i·r
// and r = (mean(x²)+ε)^-½: ∂L/∂x_i = r·w_i·dy_i − x_i·r³·Σ_j dy_j·w_j·x_j / dim.
func (n *net[F]) rmsNormBackwardAdd(dx, dy, x, inv []F, w *tensor[F], rows, dim int) {
	n.par(rows, func(r int) {
		xr, dyr, dxr := x[r*dim:(r+1)*dim], dy[r*dim:(r+1)*dim], dx[r*dim:(r+1)*dim]
		iv := float64(inv[r])
		var dot float64
		for i := range xr {
			dot += float64(dyr[i]) * float64(w.w[i]) * float64(xr[i])
		}
		k := iv * iv * iv * dot / float64(dim)
		for i := range xr {
			dxr[i] += F(iv*float64(w.w[i])*float64(dyr[i]) - float64(xr[i])*k)
		}
	})
	if w.g == nil {
		return
	}
	// The weight gradient sums over rows; done serially so the order of
	// additions is fixed.
	for r := range rows {
		xr, dyr := x[r*dim:(r+1)*dim], dy[r*dim:(r+1)*dim]
		iv := inv[r]
		for i := range xr {
			w.g[i] += dyr[i] * xr[i] * iv
		}
	}
}

// ropeTable returns cos and sin per position and frequency, computed as the
// inference model does (float32 inverse frequencies and angles).
func ropeTable[F float](positions []int, headDim int, theta float64) (cos, sin []F) {
	half := headDim / 2
	inv := make([]float32, half)
	for i := range inv {
		inv[i] = 1 / float32(math.Pow(theta, float64(float32(2*i)/float32(headDim))))
	}
	cos, sin = make([]F, len(positions)*half), make([]F, len(positions)*half)
	for p, pos := range positions {
		for i, f := range inv {
			s, c := math.Sincos(float64(float32(pos) * f))
			cos[p*half+i], sin[p*half+i] = F(c), F(s)
		}
	}
	return cos, sin
}

// rope rotates each head in Hugging Face's rotate_half convention; with
// transpose it applies the inverse rotation, which is the backward pass.
func rope[F float](x, cos, sin []F, rows, heads, dim int, transpose bool) {
	half := dim / 2
	for r := range rows {
		cr, sr := cos[r*half:(r+1)*half], sin[r*half:(r+1)*half]
		for h := range heads {
			v := x[(r*heads+h)*dim : (r*heads+h+1)*dim]
			for i := range half {
				a, b, s := v[i], v[i+half], sr[i]
				if transpose {
					s = -s
				}
				v[i] = a*cr[i] - b*s
				v[i+half] = b*cr[i] + a*s
			}
		}
	}
}

// par calls fn for every i in [0, count), on the backend's threads when
// there is one.
func (n *net[F]) par(count int, fn func(i int)) {
	if n.backend == nil || count < 2 {
		for i := range count {
			fn(i)
		}
		return
	}
	n.backend.Parallel(count, fn)
}

// gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices: the
// backend's kernels for float32, plain loops otherwise.
func (n *net[F]) gemm(transA, transB bool, m, nn, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	if n.backend != nil {
		if a32, ok := any(a).([]float32); ok {
			n.backend.Sgemm(transA, transB, m, nn, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
			return
		}
	}
	gemmLoops(transA, transB, m, nn, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmLoops is the reference matrix product.
func gemmLoops[F float](transA, transB bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	for i := range m {
		cr := c[i*ldc : i*ldc+n]
		for j := range cr {
			var s F
			for p := range k {
				var av, bv F
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				cr[j] = alpha * s
			} else {
				cr[j] = alpha*s + beta*cr[j]
			}
		}
	}
}
