// Package sample picks the next token from a model's logits (greedy,
// temperature, top-k, top-p, min-p, repetition and presence penalties, with a
// seeded generator so that a run can be reproduced) and finds stop strings in
// streamed text.
package sample

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Config chooses how a Sampler picks tokens. The zero value is greedy
// decoding without penalties.
type Config struct {
	// Temperature divides the logits before sampling; 0 means greedy (always
	// the most likely token, the lowest id on ties).
	Temperature float32
	// TopK keeps only the K most likely tokens; 0 keeps all.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probabilities
	// sum to at least TopP (nucleus sampling); 0 or 1 keeps all.
	TopP float32
	// MinP drops tokens whose probability is below MinP times the most likely
	// token's; 0 keeps all.
	MinP float32
	// RepetitionPenalty makes tokens already in the history less likely: a
	// positive logit is divided by it, a negative one multiplied (the CTRL
	// rule that Hugging Face and llama.cpp use); 0 or 1 is off.
	RepetitionPenalty float32
	// PresencePenalty is subtracted once from the logit of every token in
	// the history (OpenAI's presence_penalty).
	PresencePenalty float32
	// FrequencyPenalty is subtracted from a token's logit once per time it
	// occurs in the history (OpenAI's frequency_penalty).
	FrequencyPenalty float32
	// PenaltyWindow limits the penalties to the last PenaltyWindow tokens of
	// the history; 0 uses all of it.
	PenaltyWindow int
	// Seed seeds the sampler's own generator: equal seeds, configs and inputs
	// give equal tokens.
	Seed uint64
}

// Validate reports the first setting that is out of range.
func (c Config) Validate() error {
	switch {
	case !(c.Temperature >= 0) || math.IsInf(float64(c.Temperature), 0):
		return fmt.Errorf("sample: temperature %v: want a finite value >= 0", c.Temperature)
	case c.TopK < 0:
		return fmt.Errorf("sample: top-k %d: want >= 0", c.TopK)
	case !(c.TopP >= 0 && c.TopP <= 1):
		return fmt.Errorf("sample: top-p %v: want 0 <= top-p <= 1", c.TopP)
	case !(c.MinP >= 0 && c.MinP <= 1):
		return fmt.Errorf("sample: min-p %v: want 0 <= min-p <= 1", c.MinP)
	case !(c.RepetitionPenalty >= 0) || math.IsInf(float64(c.RepetitionPenalty), 0):
		return fmt.Errorf("sample: repetition penalty %v: want a finite value >= 0", c.RepetitionPenalty)
	case math.IsNaN(float64(c.PresencePenalty)) || math.IsInf(float64(c.PresencePenalty), 0):
		return fmt.Errorf("sample: presence penalty %v: want a finite value", c.PresencePenalty)
	case math.IsNaN(float64(c.FrequencyPenalty)) || math.IsInf(float64(c.FrequencyPenalty), 0):
		return fmt.Errorf("sample: frequency penalty %v: want a finite value", c.FrequencyPenalty)
	case c.PenaltyWindow < 0:
		return fmt.Errorf("sample: penalty window %d: want >= 0", c.PenaltyWindow)
	}
	return nil
}

// Sampler picks tokens for one sequence. It keeps its own random state and
// scratch buffers, so it is not safe for concurrent use; give each sequence
// its own.
type Sampler struct {
	cfg     Config
	rng     *rand.Rand
	logits  []float32
	ids     []int // allowed ids, when sampling among a few
	cands   []candidate
	counts  map[int]int
	buckets [64]float64
}

// candidate is an id that may be drawn, with its weight (relative to the
// best id, later normalised to a probability).
type candidate struct {
	id    int
	logit float32
	p     float64
}

// New returns a Sampler for cfg, or an error naming the invalid setting.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{
		cfg: cfg,
		// The second PCG word is a fixed odd constant so that one user-visible
		// seed determines the whole stream.
		rng:    rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		counts: make(map[int]int),
	}, nil
}

// Config returns the sampler's settings.
func (s *Sampler) Config() Config { return s.cfg }

// Sample picks the next token id. logits holds one score per vocabulary id
// and is not modified. history is the sequence so far (prompt and generated
// tokens) for the penalties. allowed, when not nil, is a bitset (bit i of
// allowed[i/64] set means id i may be chosen) from a constrained decoder;
// masked ids are never picked, and ids past the end of allowed count as
// masked, so a set sized to the tokenizer's vocabulary fits a model whose
// logits are padded beyond it. It fails when logits is empty, when an
// allowed logit is NaN, or when no id is allowed.
func (s *Sampler) Sample(logits []float32, history []int, allowed []uint64) (int, error) {
	n := len(logits)
	if n == 0 {
		return 0, errors.New("sample: empty logits")
	}
	if allowed != nil && len(allowed) > (n+63)/64 {
		allowed = allowed[:(n+63)/64]
	}
	if allowed != nil && sparse(allowed, n) {
		return s.sampleAllowed(logits, history, allowed)
	}
	return s.sampleDense(logits, history, allowed)
}

// sampleDense masks and penalises a copy of the whole vocabulary's logits.
func (s *Sampler) sampleDense(logits []float32, history []int, allowed []uint64) (int, error) {
	n := len(logits)
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
		return 0, err
	}
	if s.cfg.Temperature == 0 || s.cfg.TopK == 1 {
		return best, nil
	}
	return s.draw(s.distribution(l, l[best])), nil
}

// sparse reports whether few enough ids are allowed that gathering them
// beats masking the whole vocabulary, as in a constrained tool call.
func sparse(allowed []uint64, n int) bool {
	count := 0
	for _, w := range allowed {
		count += bits.OnesCount64(w)
	}
	return count*16 < n
}

// sampleAllowed samples among the allowed ids only, gathered into a compact
// slice in increasing id order. The candidates, their order and hence the
// draws are the same as masking the whole vocabulary would give.
func (s *Sampler) sampleAllowed(logits []float32, history []int, allowed []uint64) (int, error) {
	n := len(logits)
	s.ids, s.logits = s.ids[:0], s.logits[:0]
	for w, word := range allowed {
		for ; word != 0; word &= word - 1 {
			id := w*64 + bits.TrailingZeros64(word)
			if id >= n {
				break
			}
			s.ids = append(s.ids, id)
			s.logits = append(s.logits, logits[id])
		}
	}
	if s.countHistory(history, n) {
		for j, id := range s.ids {
			if count := s.counts[id]; count > 0 {
				s.logits[j] = s.penalize(s.logits[j], count)
			}
		}
	}
	best, err := bestOf(s.logits, func(j int) int { return s.ids[j] })
	if err != nil {
		return 0, err
	}
	if s.cfg.Temperature == 0 || s.cfg.TopK == 1 {
		return s.ids[best], nil
	}
	return s.ids[s.draw(s.distribution(s.logits, s.logits[best]))], nil
}

// bestOf is the index of the largest finite-or-infinite logit above -Inf,
// the lowest on ties; id maps an index to the token id for error messages.
func bestOf(l []float32, id func(int) int) (int, error) {
	best, bestV := -1, float32(math.Inf(-1))
	for i, v := range l {
		if v > bestV { // false for NaN, and for -Inf, which is never picked
			best, bestV = i, v
		} else if v != v {
			return 0, fmt.Errorf("sample: logit of id %d is NaN", id(i))
		}
	}
	if best < 0 {
		return 0, errors.New("sample: no token is allowed")
	}
	return best, nil
}

// countHistory counts the ids of the penalty window into s.counts and
// reports whether any penalty applies.
func (s *Sampler) countHistory(history []int, n int) bool {
	c := s.cfg
	rep := c.RepetitionPenalty != 0 && c.RepetitionPenalty != 1
	if !rep && c.PresencePenalty == 0 && c.FrequencyPenalty == 0 {
		return false
	}
	if c.PenaltyWindow > 0 && len(history) > c.PenaltyWindow {
		history = history[len(history)-c.PenaltyWindow:]
	}
	clear(s.counts)
	for _, id := range history {
		if id >= 0 && id < n {
			s.counts[id]++
		}
	}
	return len(s.counts) > 0
}

// penalize applies the penalties to the logit v of an id seen count times in
// the history.
func (s *Sampler) penalize(v float32, count int) float32 {
	c := s.cfg
	if c.RepetitionPenalty != 0 && c.RepetitionPenalty != 1 {
		if v > 0 {
			v /= c.RepetitionPenalty
		} else {
			v *= c.RepetitionPenalty
		}
	}
	return v - c.PresencePenalty - float32(count)*c.FrequencyPenalty
}

// distribution is the tempered distribution after the top-k, top-p and
// min-p cuts, with probabilities summing to 1, in a deterministic order. Only
// ids whose probability is not negligible next to the best one (a ratio above
// e^-40, below float32 resolution) become candidates.
//
// Each cut keeps a prefix of the ids ranked by probability (ties by id), so
// the result is the shortest of the three prefixes, with top-p measured on the
// top-k distribution as in Hugging Face's warper order. That lets the cuts
// work on unsorted candidates and sort only the few a nucleus needs, instead
// of sorting the whole vocabulary on every step.
func (s *Sampler) distribution(l []float32, maxLogit float32) []candidate {
	c := s.cfg
	invT := 1 / float64(c.Temperature)
	floor := float64(maxLogit) - 40/invT
	cands := s.cands[:0]
	if c.TopK > 0 {
		cands = topK(cands, c.TopK, l, float32(floor))
	} else {
		for i, v := range l {
			if float64(v) >= floor {
				cands = append(cands, candidate{id: i, logit: v})
			}
		}
	}
	for i := range cands {
		cands[i].p = math.Exp((float64(cands[i].logit) - float64(maxLogit)) * invT)
	}
	var sum float64
	for _, cd := range cands {
		sum += cd.p
	}
	if c.MinP > 0 {
		// The best candidate has weight 1, so the threshold is MinP itself.
		cands = slices.DeleteFunc(cands, func(cd candidate) bool { return cd.p < float64(c.MinP) })
	}
	if c.TopP > 0 && c.TopP < 1 {
		cands = nucleus(cands, float64(c.TopP)*sum, s.buckets[:])
	}
	sum = 0
	for _, cd := range cands {
		sum += cd.p
	}
	for i := range cands {
		cands[i].p /= sum
	}
	s.cands = cands
	return cands
}

// ranksBefore orders candidates by logit, then by id.
func ranksBefore(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

// topK appends to dst the k best ids of l at or above floor, using a
// min-heap of size k so that the cost is O(n log k) with no pass over a
// full candidate list.
func topK(dst []candidate, k int, l []float32, floor float32) []candidate {
	heap := dst[:0]
	down := func(i int) {
		for {
			worst, a, b := i, 2*i+1, 2*i+2
			if a < len(heap) && ranksBefore(heap[worst], heap[a]) {
				worst = a
			}
			if b < len(heap) && ranksBefore(heap[worst], heap[b]) {
				worst = b
			}
			if worst == i {
				return
			}
			heap[i], heap[worst] = heap[worst], heap[i]
			i = worst
		}
	}
	for i, v := range l {
		if v < floor || v != v {
			continue
		}
		cd := candidate{id: i, logit: v}
		if len(heap) < k {
			heap = append(heap, cd)
			if len(heap) == k {
				for j := k/2 - 1; j >= 0; j-- {
					down(j)
				}
			}
			continue
		}
		if ranksBefore(cd, heap[0]) {
			heap[0] = cd
			down(0)
		}
	}
	return heap
}

// nucleus keeps the shortest run of best candidates whose weights sum to at
// least target, or all of them when they sum to less. It sums the weights in
// power-of-two buckets: the buckets above the one where the running mass
// reaches target are kept whole, and only that boundary bucket is sorted.
func nucleus(cands []candidate, target float64, buckets []float64) []candidate {
	clear(buckets)
	bucket := func(p float64) int {
		// p in (0, 1] is a normal float: its unbiased exponent, negated,
		// numbers the power-of-two bucket [2^-b, 2^-b+1).
		return min(1023-int(math.Float64bits(p)>>52&0x7ff), len(buckets)-1)
	}
	for _, cd := range cands {
		buckets[bucket(cd.p)] += cd.p
	}
	last, mass := len(buckets)-1, 0.0
	for b, m := range buckets {
		if mass+m >= target {
			last = b
			break
		}
		mass += m
	}
	// Partition: whole buckets first (in id order), then the boundary bucket.
	kept := cands[:0]
	var boundary []candidate
	for _, cd := range cands {
		switch b := bucket(cd.p); {
		case b < last:
			kept = append(kept, cd)
		case b == last:
			boundary = append(boundary, cd)
		}
	}
	slices.SortFunc(boundary, func(a, b candidate) int {
		if ranksBefore(a, b) {
			return -1
		}
		if ranksBefore(b, a) {
			return 1
		}
		return 0
	})
	for _, cd := range boundary {
		kept = append(kept, cd)
		if mass += cd.p; mass >= target {
			break
		}
	}
	return kept
}

// draw picks one candidate with its probability.
func (s *Sampler) draw(cands []candidate) int {
	u := s.rng.Float64()
	for _, cd := range cands {
		u -= cd.p
		if u < 0 {
			return cd.id
		}
	}
	return cands[len(cands)-1].id
}
