package sample

import (
	"errors"
	"math"
)

// Dist is a sparse probability distribution over token ids: the one a
// Sampler draws from after masking, penalties, temperature and the top-k,
// top-p and min-p cuts. Greedy sampling gives all the mass to one id.
type Dist struct {
	IDs []int
	P   []float64
}

// Prob returns the probability of id (0 when it is not a candidate).
func (d Dist) Prob(id int) float64 {
	for i, x := range d.IDs {
		if x == id {
			return d.P[i]
		}
	}
	return 0
}

// Dist returns the distribution Sample would draw the next token from, for
// speculative sampling: the drafter's and the verifier's distributions at
// a position decide whether a drafted token stands. The arguments are
// those of Sample.
func (s *Sampler) Dist(logits []float32, history []int, allowed []uint64) (Dist, error) {
	n := len(logits)
	if n == 0 {
		return Dist{}, errors.New("sample: empty logits")
	}
	if allowed != nil && len(allowed) > (n+63)/64 {
		allowed = allowed[:(n+63)/64]
	}
	s.logits = append(s.logits[:0], logits...)
	l := s.logits
	negInf := float32(math.Inf(-1))
	if allowed != nil {
		for i := range l {
			if i>>6 >= len(allowed) || allowed[i>>6]&(1<<(i&63)) == 0 {
				l[i] = negInf
			}
		}
	}
	if s.countHistory(history, n) {
		for id, count := range s.counts {
			l[id] = s.penalize(l[id], count)
		}
	}
	best, err := bestOf(l, func(i int) int { return i })
	if err != nil {
		return Dist{}, err
	}
	if s.cfg.Temperature == 0 || s.cfg.TopK == 1 {
		return Dist{IDs: []int{best}, P: []float64{1}}, nil
	}
	cands := s.distribution(l, l[best])
	d := Dist{IDs: make([]int, len(cands)), P: make([]float64, len(cands))}
	for i, c := range cands {
		d.IDs[i], d.P[i] = c.id, c.p
	}
	return d, nil
}

// Draw picks a token from d with the sampler's generator.
func (s *Sampler) Draw(d Dist) int {
	u := s.rng.Float64()
	for i, p := range d.P {
		if u -= p; u < 0 {
			return d.IDs[i]
		}
	}
	return d.IDs[len(d.IDs)-1]
}

// Verify applies the speculative-sampling rule (Leviathan et al. and Chen
// et al., 2023) to a draft token drawn from q where the target model's
// distribution is p: the draft stands with probability min(1, p/q) at the
// draft; otherwise a token is drawn from the residual max(0, p−q),
// normalised, and accepted is false. Either way the returned token is
// distributed exactly as p. For greedy p and q (one id each) it accepts
// the draft exactly when both pick it and otherwise returns p's pick.
func (s *Sampler) Verify(p, q Dist, draft int) (id int, accepted bool) {
	pd, qd := p.Prob(draft), q.Prob(draft)
	if qd > 0 && pd > 0 && (pd >= qd || s.rng.Float64() < pd/qd) {
		return draft, true
	}
	qp := make(map[int]float64, len(q.IDs))
	for i, x := range q.IDs {
		qp[x] = q.P[i]
	}
	res := Dist{IDs: make([]int, 0, len(p.IDs)), P: make([]float64, 0, len(p.IDs))}
	var sum float64
	for i, x := range p.IDs {
		if w := p.P[i] - qp[x]; w > 0 {
			res.IDs = append(res.IDs, x)
			res.P = append(res.P, w)
			sum += w
		}
	}
	if sum <= 0 {
		// p and q agree to rounding: the residual is empty, and p itself
		// is the right distribution.
		return s.Draw(p), false
	}
	for i := range res.P {
		res.P[i] /= sum
	}
	return s.Draw(res), false
}
