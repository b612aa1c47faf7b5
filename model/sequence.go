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

// ReadKV returns copies of the keys and values of positions [from, to),
// layer-major (see DecoderSequence).
func (s *Sequence) ReadKV(from, to int) (k, v [][]float32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from < 0 || from > to || to > len(s.tokens) {
		return nil, nil, fmt.Errorf("model: read keys and values of positions [%d, %d): sequence has %d tokens", from, to, len(s.tokens))
	}
	kvDim := s.model.kvDim()
	k, v = make([][]float32, len(s.k)), make([][]float32, len(s.v))
	for l := range s.k {
		k[l] = slices.Clone(s.k[l][from*kvDim : to*kvDim])
		v[l] = slices.Clone(s.v[l][from*kvDim : to*kvDim])
	}
	return k, v, nil
}

// WriteKV fills the empty sequence with tokens and their keys and values,
// layer-major (see DecoderSequence).
func (s *Sequence) WriteKV(tokens []int, k, v [][]float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tokens) != 0 {
		return fmt.Errorf("model: write keys and values into a sequence of %d tokens, want an empty one", len(s.tokens))
	}
	if err := s.model.checkKV(len(tokens), k, v); err != nil {
		return err
	}
	for l := range s.k {
		s.k[l] = slices.Clone(k[l])
		s.v[l] = slices.Clone(v[l])
	}
	s.tokens = slices.Clone(tokens)
	return nil
}

// checkKV verifies that k and v hold n positions of every layer.
func (m *Model) checkKV(n int, k, v [][]float32) error {
	L, want := m.Config.NumLayers, n*m.kvDim()
	if len(k) != L || len(v) != L {
		return fmt.Errorf("model: keys and values of %d and %d layers for a model of %d", len(k), len(v), L)
	}
	for l := range L {
		if len(k[l]) != want || len(v[l]) != want {
			return fmt.Errorf("model: layer %d: %d keys and %d values for %d positions of %d", l, len(k[l]), len(v[l]), n, m.kvDim())
		}
	}
	return nil
}
