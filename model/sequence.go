package model

import (
	"fmt"
	"slices"
	"sync"
)

// Sequence is one generation stream: the tokens it has consumed and their
// keys and values in every layer (its KV cache). A Sequence is safe for
// concurrent use; forward steps on it are serialised.
type Sequence struct {
	model *Model
	id    uint64 // orders locking when a step holds several sequences

	mu     sync.Mutex
	tokens []int
	// k[l] and v[l] hold layer l's keys and values, len(tokens)×kvDim each.
	k, v [][]float32
}

// NewSequence returns an empty sequence of the model.
func (m *Model) NewSequence() *Sequence {
	return &Sequence{
		model: m,
		id:    m.nextSeqID.Add(1),
		k:     make([][]float32, m.Config.NumLayers),
		v:     make([][]float32, m.Config.NumLayers),
	}
}

// Len returns the number of tokens in the sequence.
func (s *Sequence) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

// Tokens returns a copy of the tokens in the sequence.
func (s *Sequence) Tokens() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokens)
}

// Truncate drops every token from position n on, so that generation can
// resume from an earlier point (a rejected draft, an edited turn).
func (s *Sequence) Truncate(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n > len(s.tokens) {
		return fmt.Errorf("model: truncate to %d: sequence has %d tokens", n, len(s.tokens))
	}
	s.truncateLocked(n)
	return nil
}

func (s *Sequence) truncateLocked(n int) {
	kvDim := s.model.kvDim()
	s.tokens = s.tokens[:n]
	for l := range s.k {
		s.k[l] = s.k[l][:min(len(s.k[l]), n*kvDim)]
		s.v[l] = s.v[l][:min(len(s.v[l]), n*kvDim)]
	}
}

// KVBytes returns the memory the sequence's KV cache holds.
func (s *Sequence) KVBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.tokens)) * s.model.kvBytesPerToken()
}

func (m *Model) kvDim() int { return m.Config.NumKVHeads * m.Config.HeadDim }

// kvBytesPerToken is the KV memory of one token across all layers.
func (m *Model) kvBytesPerToken() int64 {
	return int64(m.Config.NumLayers) * 2 * int64(m.kvDim()) * 4
}
