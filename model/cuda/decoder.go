package cuda

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/livehat/livehat/model"
)

// Decoder returns the runner as a model.Decoder, the seam a generation
// engine (model/engine) drives: steps and KV caches on the device; the
// multi-token-prediction heads, small MLPs, on the model the runner was
// built from (on that model's backend); and a prefix cache that keeps
// shared prompts' keys and values in host memory, copied to and from the
// device (Sequence.ReadKV and WriteKV). Its sequences are *Sequence
// values; close each when done with it to free its device cache.
func (r *Runner) Decoder() model.Decoder { return runnerDecoder{r} }

type runnerDecoder struct{ r *Runner }

func (d runnerDecoder) Config() model.Config               { return d.r.cfg }
func (d runnerDecoder) MaxContext() int                    { return d.r.maxContext }
func (d runnerDecoder) NewSequence() model.DecoderSequence { return d.r.NewSequence() }
func (d runnerDecoder) MTPHeads() int                      { return len(d.r.host.MTP) }

func (d runnerDecoder) NewPrefixCache(maxBytes int64) *model.PrefixCache {
	return model.NewPrefixCache(d.r.host, maxBytes)
}

func (d runnerDecoder) Draft(head int, hidden []float32, tokens []int) (next, logits []float32, err error) {
	return d.r.host.Draft(head, hidden, tokens)
}

func (d runnerDecoder) StepOutputs(ctx context.Context, seqs []model.DecoderSequence, tokens [][]int, all []bool) ([]model.StepOutput, error) {
	own := make([]*Sequence, len(seqs))
	for i, s := range seqs {
		cs, ok := s.(*Sequence)
		if !ok {
			return nil, fmt.Errorf("cuda: sequence %d is a %T, not a sequence of this runner", i, s)
		}
		own[i] = cs
	}
	return d.r.StepOutputs(ctx, own, tokens, all)
}

// ReadKV copies the keys and values of positions [from, to) from the
// device, layer-major (see model.DecoderSequence).
func (s *Sequence) ReadKV(from, to int) (k, v [][]float32, err error) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case s.closed:
		return nil, nil, errors.New("cuda: read keys and values of a closed sequence")
	case from < 0 || from > to || to > len(s.tokens):
		return nil, nil, fmt.Errorf("cuda: read keys and values of positions [%d, %d): sequence has %d tokens", from, to, len(s.tokens))
	}
	L, kv := r.cfg.NumLayers, r.kvDim()
	k, v = make([][]float32, L), make([][]float32, L)
	if from == to {
		for l := range L {
			k[l], v[l] = []float32{}, []float32{}
		}
		return k, v, nil
	}
	err = r.x.do(func() error {
		for l := range L {
			k[l], v[l] = make([]float32, (to-from)*kv), make([]float32, (to-from)*kv)
			at := 4 * (int64(l)*int64(s.capacity) + int64(from)) * int64(kv)
			if err := errors.Join(r.x.download(bytesOf(k[l]), s.k.Add(at)), r.x.download(bytesOf(v[l]), s.v.Add(at))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: read keys and values: %w", err)
	}
	return k, v, nil
}

// WriteKV fills the empty sequence with tokens and their keys and values,
// layer-major (see model.DecoderSequence), copied to the device.
func (s *Sequence) WriteKV(tokens []int, k, v [][]float32) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	L, kv, n := r.cfg.NumLayers, r.kvDim(), len(tokens)
	switch {
	case s.closed:
		return errors.New("cuda: write keys and values into a closed sequence")
	case len(s.tokens) != 0:
		return fmt.Errorf("cuda: write keys and values into a sequence of %d tokens, want an empty one", len(s.tokens))
	case n > r.maxContext:
		return fmt.Errorf("%w: %d tokens written, the model accepts %d", model.ErrContextTooLong, n, r.maxContext)
	case len(k) != L || len(v) != L:
		return fmt.Errorf("cuda: keys and values of %d and %d layers for a model of %d", len(k), len(v), L)
	}
	for l := range L {
		if len(k[l]) != n*kv || len(v[l]) != n*kv {
			return fmt.Errorf("cuda: layer %d: %d keys and %d values for %d positions of %d", l, len(k[l]), len(v[l]), n, kv)
		}
	}
	if n == 0 {
		return nil
	}
	err := r.x.do(func() error {
		if err := r.reserve(s, n); err != nil {
			return err
		}
		for l := range L {
			at := 4 * int64(l) * int64(s.capacity) * int64(kv)
			if err := errors.Join(r.x.upload(s.k.Add(at), bytesOf(k[l])), r.x.upload(s.v.Add(at), bytesOf(v[l]))); err != nil {
				return err
			}
		}
		// The uploads read k and v asynchronously; wait before they can go.
		return r.x.sync()
	})
	if err != nil {
		return fmt.Errorf("cuda: write keys and values: %w", err)
	}
	s.tokens = slices.Clone(tokens)
	return nil
}
