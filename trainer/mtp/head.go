package mtp

import (
	"fmt"
	"math"
	"slices"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/nn"
)

// head is the float32 training copy of one model.MTPHead, with gradients.
type head struct {
	hnorm, enorm, ehProj, mlpNorm, gate, up, down, norm nn.Param
}

// newHead copies head i of m.
func newHead(m *model.Model, i int) *head {
	c := m.Config
	H, I := c.HiddenSize, c.IntermediateSize
	src := &m.MTP[i]
	p := func(name string, v []float32, shape ...int) nn.Param {
		return nn.Param{Name: fmt.Sprintf("mtp.%d.%s", i, name), Shape: shape, Value: v, Grad: make([]float32, len(v)), Decay: len(shape) == 2}
	}
	return &head{
		hnorm:   p("hnorm.weight", slices.Clone(src.HNorm), H),
		enorm:   p("enorm.weight", slices.Clone(src.ENorm), H),
		ehProj:  p("eh_proj.weight", src.EHProj.Float32(), H, 2*H),
		mlpNorm: p("mlp_norm.weight", slices.Clone(src.MLPNorm), H),
		gate:    p("mlp.gate_proj.weight", src.Gate.Float32(), I, H),
		up:      p("mlp.up_proj.weight", src.Up.Float32(), I, H),
		down:    p("mlp.down_proj.weight", src.Down.Float32(), H, I),
		norm:    p("norm.weight", slices.Clone(src.Norm), H),
	}
}

func (h *head) params() []nn.Param {
	return []nn.Param{h.hnorm, h.enorm, h.ehProj, h.mlpNorm, h.gate, h.up, h.down, h.norm}
}

// store writes the trained values into head i of m, in m's storage type.
func (h *head) store(m *model.Model, i int) error {
	dst := &m.MTP[i]
	dst.HNorm = slices.Clone(h.hnorm.Value)
	dst.ENorm = slices.Clone(h.enorm.Value)
	dst.MLPNorm = slices.Clone(h.mlpNorm.Value)
	dst.Norm = slices.Clone(h.norm.Value)
	for _, w := range []struct {
		dst **model.Weight
		p   nn.Param
	}{{&dst.EHProj, h.ehProj}, {&dst.Gate, h.gate}, {&dst.Up, h.up}, {&dst.Down, h.down}} {
		v, err := model.NewWeight(m.DType, slices.Clone(w.p.Value), w.p.Shape[0], w.p.Shape[1])
		if err != nil {
			return fmt.Errorf("mtp: %s: %w", w.p.Name, err)
		}
		*w.dst = v
	}
	return nil
}

// net holds what every head's pass shares: the frozen embedding and LM
// head, the shapes and the backend that runs the products.
type net struct {
	b       model.Backend
	H, I, V int
	eps     float64
	embed   *model.Weight
	lmHead  []float32 // V×H, frozen
}

func newNet(m *model.Model) *net {
	c := m.Config
	return &net{b: m.Backend(), H: c.HiddenSize, I: c.IntermediateSize, V: c.VocabSize, eps: c.RMSNormEps,
		embed: m.Embed, lmHead: m.LMHead.Float32()}
}

// linear: y (n×out) = x (n×in) · Wᵀ.
func (t *net) linear(y, x, w []float32, n, out, in int) {
	t.b.Sgemm(false, true, n, out, in, 1, x, in, w, in, 0, y, out)
}

// gradW: dW (out×in) += dyᵀ · x.
func (t *net) gradW(dw, dy, x []float32, n, out, in int) {
	t.b.Sgemm(true, false, out, in, n, 1, dy, out, x, in, 1, dw, in)
}

// gradX: dx (n×in) = dy · W, or += with acc.
func (t *net) gradX(dx, dy, w []float32, n, out, in int, acc bool) {
	beta := float32(0)
	if acc {
		beta = 1
	}
	t.b.Sgemm(false, false, n, in, out, 1, dy, out, w, in, beta, dx, in)
}

// rms normalises n rows of x: hat = x·r per row (r = 1/rms), y = hat·w.
func rms(y, hat, r, x, w []float32, n, dim int, eps float64) {
	for i := range n {
		xr := x[i*dim : (i+1)*dim]
		var ss float64
		for _, v := range xr {
			ss += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(ss/float64(dim)+eps))
		r[i] = inv
		for j, v := range xr {
			hat[i*dim+j] = v * inv
			y[i*dim+j] = w[j] * (v * inv)
		}
	}
}

// rmsBack adds the gradient of w to dw and, when dx is not nil, the
// gradient of the input x to dx, given dy and the forward's hat and r:
// dx = r·(dy·w − hat·mean(dy·w·hat)).
func rmsBack(dx, dw, dy, hat, r, w []float32, n, dim int) {
	for i := range n {
		dyr, hr := dy[i*dim:(i+1)*dim], hat[i*dim:(i+1)*dim]
		var dot float64
		for j, g := range dyr {
			dw[j] += g * hr[j]
			dot += float64(g * w[j] * hr[j])
		}
		if dx == nil {
			continue
		}
		mean := float32(dot / float64(dim))
		for j, g := range dyr {
			dx[i*dim+j] += r[i] * (g*w[j] - hr[j]*mean)
		}
	}
}

// step runs head h forward over n rows (input hidden states, the tokens
// they predicted, and the targets two positions on), accumulates the
// gradients of the mean cross-entropy into h, and returns the head's
// hidden states (the next head's input, treated as a constant there), the
// summed loss and the number of rows whose most likely token is the
// target.
func (t *net) step(h *head, hin []float32, tokens, targets []int) (out []float32, loss float64, correct int) {
	n, H, I, V := len(tokens), t.H, t.I, t.V
	// Forward, keeping what the backward pass reads.
	cat := make([]float32, n*2*H)
	hatA, hatB := make([]float32, n*H), make([]float32, n*H)
	rA, rB := make([]float32, n), make([]float32, n)
	emb := make([]float32, n*H)
	for i, tok := range tokens {
		t.embed.Row(emb[i*H:], tok)
	}
	a, b := make([]float32, n*H), make([]float32, n*H)
	rms(a, hatA, rA, hin, h.hnorm.Value, n, H, t.eps)
	rms(b, hatB, rB, emb, h.enorm.Value, n, H, t.eps)
	for i := range n {
		copy(cat[i*2*H:], a[i*H:(i+1)*H])
		copy(cat[i*2*H+H:], b[i*H:(i+1)*H])
	}
	u := make([]float32, n*H)
	t.linear(u, cat, h.ehProj.Value, n, H, 2*H)
	nrm, hatU, rU := make([]float32, n*H), make([]float32, n*H), make([]float32, n)
	rms(nrm, hatU, rU, u, h.mlpNorm.Value, n, H, t.eps)
	g, up := make([]float32, n*I), make([]float32, n*I)
	t.linear(g, nrm, h.gate.Value, n, I, H)
	t.linear(up, nrm, h.up.Value, n, I, H)
	s := make([]float32, n*I)
	sig := make([]float32, n*I)
	for j, v := range g {
		sig[j] = 1 / (1 + model.Exp32(-v))
		s[j] = v * sig[j] * up[j]
	}
	x := slices.Clone(u)
	d := make([]float32, n*H)
	t.linear(d, s, h.down.Value, n, H, I)
	for j := range x {
		x[j] += d[j]
	}
	f, hatX, rX := make([]float32, n*H), make([]float32, n*H), make([]float32, n)
	rms(f, hatX, rX, x, h.norm.Value, n, H, t.eps)
	logits := make([]float32, n*V)
	t.linear(logits, f, t.lmHead, n, V, H)

	// Cross-entropy and its gradient, averaged over the rows.
	dl := logits // overwritten in place by softmax − onehot
	for i, tgt := range targets {
		row := dl[i*V : (i+1)*V]
		best, mx := 0, row[0]
		for j, v := range row {
			if v > mx {
				best, mx = j, v
			}
		}
		if best == tgt {
			correct++
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - mx))
		}
		loss += math.Log(sum) - float64(row[tgt]-mx)
		for j, v := range row {
			row[j] = float32(math.Exp(float64(v-mx))/sum) / float32(n)
		}
		row[tgt] -= 1 / float32(n)
	}

	// Backward.
	df := make([]float32, n*H)
	t.gradX(df, dl, t.lmHead, n, V, H, false)
	dx := make([]float32, n*H)
	rmsBack(dx, h.norm.Grad, df, hatX, rX, h.norm.Value, n, H)
	t.gradW(h.down.Grad, dx, s, n, H, I)
	ds := make([]float32, n*I)
	t.gradX(ds, dx, h.down.Value, n, H, I, false)
	dg, dup := make([]float32, n*I), make([]float32, n*I)
	for j := range ds {
		silu := g[j] * sig[j]
		dup[j] = ds[j] * silu
		dg[j] = ds[j] * up[j] * sig[j] * (1 + g[j]*(1-sig[j]))
	}
	t.gradW(h.gate.Grad, dg, nrm, n, I, H)
	t.gradW(h.up.Grad, dup, nrm, n, I, H)
	dn := make([]float32, n*H)
	t.gradX(dn, dg, h.gate.Value, n, I, H, false)
	t.gradX(dn, dup, h.up.Value, n, I, H, true)
	du := dx // the residual carries dx to u
	rmsBack(du, h.mlpNorm.Grad, dn, hatU, rU, h.mlpNorm.Value, n, H)
	t.gradW(h.ehProj.Grad, du, cat, n, H, 2*H)
	dc := make([]float32, n*2*H)
	t.gradX(dc, du, h.ehProj.Value, n, H, 2*H, false)
	da, db := make([]float32, n*H), make([]float32, n*H)
	for i := range n {
		copy(da[i*H:(i+1)*H], dc[i*2*H:])
		copy(db[i*H:(i+1)*H], dc[i*2*H+H:])
	}
	rmsBack(nil, h.hnorm.Grad, da, hatA, rA, h.hnorm.Value, n, H)
	rmsBack(nil, h.enorm.Grad, db, hatB, rB, h.enorm.Value, n, H)
	return x, loss, correct
}
