package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Position names one trained position of a batch: the logits computed
// after Tokens[:Index+1] of example Example, which predict Target =
// Tokens[Index+1].
type Position struct {
	Example, Index, Target int
}

// TokenLoss is a loss on the next-token logits of one trained position,
// the hook through which objectives other than cross-entropy train the
// model: on-policy distillation's reverse KL, the clipped policy-gradient
// loss of GRPO. It returns the loss at p and, when grad is not nil, writes
// ∂loss/∂logits into grad (VocabSize values, zero on entry). It is called
// concurrently for different positions and must not keep logits or grad.
type TokenLoss func(p Position, logits, grad []float32) float64

// BackwardTokens runs the examples through the model and adds scale times
// the gradient of Σ loss over the trained positions to the gradients.
// The returned Loss sums loss's values.
func (m *Model) BackwardTokens(ctx context.Context, examples []Example, loss TokenLoss, scale float32) (Loss, error) {
	if loss == nil {
		return Loss{}, errors.New("nn: backward with a nil token loss")
	}
	if scale == 0 || math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return Loss{}, fmt.Errorf("nn: backward with scale %g", scale)
	}
	return m.passTokens(ctx, examples, loss, scale)
}

// ForwardTokens runs the examples through the model and calls loss with a
// nil gradient at every trained position, leaving the gradients alone:
// the way to read log-probabilities or whole distributions (a teacher's,
// a reference policy's) at chosen positions without materialising every
// position's logits.
func (m *Model) ForwardTokens(ctx context.Context, examples []Example, loss TokenLoss) (Loss, error) {
	if loss == nil {
		return Loss{}, errors.New("nn: forward with a nil token loss")
	}
	return m.passTokens(ctx, examples, loss, 0)
}

func (m *Model) passTokens(ctx context.Context, examples []Example, loss TokenLoss, scale float32) (Loss, error) {
	b, err := pack(examples, m.net.cfg.MaxPositionEmbeddings)
	if err != nil {
		return Loss{}, err
	}
	b.loss = loss
	r, err := m.net.run(ctx, b, scale, false)
	if err != nil {
		return Loss{}, err
	}
	return Loss{Sum: r.lossSum, Tokens: r.tokens, Seen: len(b.tokens)}, nil
}

// customLoss evaluates b.loss at every trained row and, when training,
// replaces each row of logits with scale times the loss's gradient.
func (n *net[F]) customLoss(b *batch, rows []int, logits []F, losses []float64, scale F) error {
	all, ok := any(logits).([]float32)
	if !ok {
		return errors.New("nn: token losses run on float32 networks only")
	}
	V := n.cfg.VocabSize
	n.par(len(rows), func(j int) {
		r := rows[j]
		lab := b.labels[r]
		if lab < 0 {
			return
		}
		row := all[j*V : (j+1)*V]
		p := Position{Example: b.owner[r], Index: b.pos[r], Target: lab}
		if scale == 0 {
			losses[j] = b.loss(p, row, nil)
			return
		}
		g := make([]float32, V)
		losses[j] = b.loss(p, row, g)
		s := float32(scale)
		for i, v := range g {
			row[i] = v * s
		}
	})
	return nil
}

// LogSumExp returns log Σ e^logits, computed in float64.
func LogSumExp(logits []float32) float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(sum)
}

// LogSoftmax writes the log-probabilities of logits into dst (same
// length) and returns dst.
func LogSoftmax(dst, logits []float32) []float32 {
	lse := LogSumExp(logits)
	for i, v := range logits {
		dst[i] = float32(float64(v) - lse)
	}
	return dst
}
