package model

import (
	"context"
	"fmt"
)

// Decoder is the model as a generation engine drives it: sequences that
// keep their own KV caches, advanced together one step at a time, with
// the multi-token-prediction heads that draft ahead and a prefix cache
// for their shared prompts. Model.Decoder computes on the model's
// backend; a device runner (model/cuda's Runner.Decoder) keeps the
// weights and the caches on a GPU.
type Decoder interface {
	// Config returns the model's configuration.
	Config() Config
	// MaxContext returns the longest sequence the decoder accepts.
	MaxContext() int
	// NewSequence returns an empty sequence of the decoder.
	NewSequence() DecoderSequence
	// StepOutputs is Model.StepOutputs over the decoder's sequences.
	StepOutputs(ctx context.Context, seqs []DecoderSequence, tokens [][]int, all []bool) ([]StepOutput, error)
	// MTPHeads returns how many heads Draft can run.
	MTPHeads() int
	// Draft is Model.Draft.
	Draft(head int, hidden []float32, tokens []int) (next, logits []float32, err error)
	// NewPrefixCache returns an empty prefix cache for the decoder's
	// sequences holding at most maxBytes of keys and values.
	NewPrefixCache(maxBytes int64) *PrefixCache
}

// DecoderSequence is one sequence of a Decoder: its tokens and the keys
// and values of every layer. ReadKV and WriteKV move the keys and values
// to and from the host, which is how a PrefixCache shares them between
// sequences. Key and value slices are layer-major: k[l] holds layer l's
// keys, one row of NumKVHeads·HeadDim floats per position.
type DecoderSequence interface {
	// Len returns the number of tokens in the sequence.
	Len() int
	// Tokens returns a copy of the sequence's tokens.
	Tokens() []int
	// Truncate drops every token from position n on.
	Truncate(n int) error
	// ReadKV returns copies of the keys and values of positions
	// [from, to).
	ReadKV(from, to int) (k, v [][]float32, err error)
	// WriteKV fills an empty sequence with tokens and their keys and
	// values, len(tokens) rows in every layer.
	WriteKV(tokens []int, k, v [][]float32) error
}

// Decoder returns the model as a Decoder computing on its backend. Its
// sequences are *Sequence values.
func (m *Model) Decoder() Decoder { return modelDecoder{m} }

// modelDecoder adapts Model, whose methods take its concrete Sequence, to
// Decoder.
type modelDecoder struct{ m *Model }

func (d modelDecoder) Config() Config                      { return d.m.Config }
func (d modelDecoder) MaxContext() int                     { return d.m.maxContext }
func (d modelDecoder) NewSequence() DecoderSequence        { return d.m.NewSequence() }
func (d modelDecoder) MTPHeads() int                       { return len(d.m.MTP) }
func (d modelDecoder) NewPrefixCache(n int64) *PrefixCache { return NewPrefixCache(d.m, n) }

func (d modelDecoder) Draft(head int, hidden []float32, tokens []int) (next, logits []float32, err error) {
	return d.m.Draft(head, hidden, tokens)
}

func (d modelDecoder) StepOutputs(ctx context.Context, seqs []DecoderSequence, tokens [][]int, all []bool) ([]StepOutput, error) {
	own := make([]*Sequence, len(seqs))
	for i, s := range seqs {
		ms, ok := s.(*Sequence)
		if !ok {
			return nil, fmt.Errorf("model: sequence %d is a %T, not a sequence of this model", i, s)
		}
		own[i] = ms
	}
	return d.m.StepOutputs(ctx, own, tokens, all)
}
