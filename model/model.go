// Package model is the compact-model core of LiveHAT: the Qwen2-family
// decoder (Qwen2, Qwen2.5 and Qwen3 shapes), its weights I/O in Hugging Face
// layout, and inference with per-sequence KV caches, continuous batching and
// a prefix cache shared across requests.
//
// A Model is a plain struct of layers over a small Backend interface that
// runs the matrix products; everything else (RMSNorm, RoPE, softmax, SwiGLU)
// is ordinary Go. Weights are held as float32, bfloat16, or 8-bit
// weight-only quantized (Q8) matrices.
package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Model is a Qwen2-family decoder-only transformer.
type Model struct {
	Config Config
	// DType is the storage type of the matrices.
	DType DType
	// Embed is the token embedding, VocabSize×HiddenSize.
	Embed  *Weight
	Layers []Layer
	// Norm is the final RMSNorm weight.
	Norm []float32
	// LMHead maps hidden states to logits; it is Embed itself when the
	// config ties the embeddings.
	LMHead *Weight
	// MTP holds the multi-token-prediction heads (Config.MTPHeads of them)
	// that draft tokens for speculative decoding.
	MTP []MTPHead

	backend    Backend
	maxContext int
	// prefillChunk is the most prompt tokens one Prefill step computes.
	prefillChunk int
	// gemmAttentionKeys is the context length from which a decoding row's
	// attention runs as GEMMs rather than dot products.
	gemmAttentionKeys int
	nextSeqID         atomic.Uint64
}

// Layer is one decoder block.
type Layer struct {
	AttnNorm   []float32
	Q, K, V, O *Weight
	// Biases of the projections; nil when the architecture has none.
	QBias, KBias, VBias, OBias []float32
	// QNorm and KNorm are the per-head RMSNorm weights of Qwen3 (nil for Qwen2).
	QNorm, KNorm   []float32
	MLPNorm        []float32
	Gate, Up, Down *Weight
}

// Options control how a model is built or loaded.
type Options struct {
	// DType is the storage type of the matrices. Empty means the
	// checkpoint's own type: bf16 for a bfloat16 checkpoint, q8 for our
	// quantized checkpoints, f32 otherwise.
	DType DType
	// Backend runs the matrix products; nil means NewCPU(0).
	Backend Backend
	// MaxContext caps the length of a sequence; 0 means the config's
	// max_position_embeddings.
	MaxContext int
}

func (o Options) backend() Backend {
	if o.Backend != nil {
		return o.Backend
	}
	return NewCPU(0)
}

// ErrContextTooLong is wrapped by errors for sequences that would outgrow
// the model's context.
var ErrContextTooLong = errors.New("model: context too long")

// shape is the expected shape of every tensor, by Hugging Face name.
type tensorShape struct {
	name       string
	rows, cols int // cols == 0 for a vector
	matrix     bool
	dst        any // **Weight or *[]float32
}

// tensors lists the model's tensors with their HF names and shapes, pointing
// at the fields they fill. The embedding comes first; a tied LM head is not
// listed.
func (m *Model) tensors() []tensorShape {
	c := m.Config
	qDim, kvDim := c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	ts := []tensorShape{{"model.embed_tokens.weight", c.VocabSize, c.HiddenSize, true, &m.Embed}}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("model.layers.%d.", i)
		ts = append(ts,
			tensorShape{p + "input_layernorm.weight", c.HiddenSize, 0, false, &l.AttnNorm},
			tensorShape{p + "self_attn.q_proj.weight", qDim, c.HiddenSize, true, &l.Q},
			tensorShape{p + "self_attn.k_proj.weight", kvDim, c.HiddenSize, true, &l.K},
			tensorShape{p + "self_attn.v_proj.weight", kvDim, c.HiddenSize, true, &l.V},
			tensorShape{p + "self_attn.o_proj.weight", c.HiddenSize, qDim, true, &l.O},
		)
		if c.AttentionBias {
			ts = append(ts,
				tensorShape{p + "self_attn.q_proj.bias", qDim, 0, false, &l.QBias},
				tensorShape{p + "self_attn.k_proj.bias", kvDim, 0, false, &l.KBias},
				tensorShape{p + "self_attn.v_proj.bias", kvDim, 0, false, &l.VBias},
			)
			if c.Architecture == Qwen3 {
				ts = append(ts, tensorShape{p + "self_attn.o_proj.bias", c.HiddenSize, 0, false, &l.OBias})
			}
		}
		if c.QKNorm {
			ts = append(ts,
				tensorShape{p + "self_attn.q_norm.weight", c.HeadDim, 0, false, &l.QNorm},
				tensorShape{p + "self_attn.k_norm.weight", c.HeadDim, 0, false, &l.KNorm},
			)
		}
		ts = append(ts,
			tensorShape{p + "post_attention_layernorm.weight", c.HiddenSize, 0, false, &l.MLPNorm},
			tensorShape{p + "mlp.gate_proj.weight", c.IntermediateSize, c.HiddenSize, true, &l.Gate},
			tensorShape{p + "mlp.up_proj.weight", c.IntermediateSize, c.HiddenSize, true, &l.Up},
			tensorShape{p + "mlp.down_proj.weight", c.HiddenSize, c.IntermediateSize, true, &l.Down},
		)
	}
	ts = append(ts, tensorShape{"model.norm.weight", c.HiddenSize, 0, false, &m.Norm})
	if !c.TieWordEmbeddings {
		ts = append(ts, tensorShape{"lm_head.weight", c.VocabSize, c.HiddenSize, true, &m.LMHead})
	}
	return append(ts, m.mtpTensors()...)
}

// newEmpty validates cfg and opts and returns a model without weights.
func newEmpty(cfg Config, opts Options) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if opts.DType != "" {
		if _, err := ParseDType(string(opts.DType)); err != nil {
			return nil, err
		}
	}
	if opts.MaxContext < 0 {
		return nil, fmt.Errorf("model: negative MaxContext %d", opts.MaxContext)
	}
	m := &Model{Config: cfg, DType: opts.DType, Layers: make([]Layer, cfg.NumLayers), MTP: make([]MTPHead, cfg.MTPHeads), prefillChunk: 512, gemmAttentionKeys: 256}
	m.maxContext = cfg.MaxPositionEmbeddings
	if opts.MaxContext > 0 {
		m.maxContext = min(opts.MaxContext, m.maxContext)
	}
	return m, nil
}

// NewRandom builds a model with random weights: matrices N(0, 0.02) as
// Hugging Face initialises them, norm weights 1 + N(0, 0.1) and biases
// N(0, 0.02) (not the usual 1 and 0, so that tests exercise them). The same
// seed gives the same weights.
func NewRandom(cfg Config, seed uint64, opts Options) (*Model, error) {
	m, err := newEmpty(cfg, opts)
	if err != nil {
		return nil, err
	}
	if m.DType == "" {
		m.DType = F32
	}
	if err := m.randomize(m.tensors(), seed); err != nil {
		return nil, err
	}
	m.finish(opts)
	return m, nil
}

// randomize fills the tensors ts with random values as NewRandom describes.
func (m *Model) randomize(ts []tensorShape, seed uint64) error {
	// Each tensor draws from its own stream, so tensors can be generated in
	// parallel and the weights do not depend on the scheduling.
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, t := range ts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			if !t.matrix {
				v := make([]float32, t.rows)
				mean, std := float32(0), 0.02
				if isNorm(t.name) {
					mean, std = 1, 0.1
				}
				for i := range v {
					v[i] = mean + float32(rng.NormFloat64()*std)
				}
				*t.dst.(*[]float32) = v
				return
			}
			v := make([]float32, t.rows*t.cols)
			for i := range v {
				v[i] = float32(rng.NormFloat64() * 0.02)
			}
			w, err := newWeight(m.DType, v, t.rows, t.cols)
			if err != nil {
				errs[i] = fmt.Errorf("model: %s: %w", t.name, err)
				return
			}
			*t.dst.(**Weight) = w
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func isNorm(name string) bool { return strings.HasSuffix(name, "norm.weight") }

// finish ties the LM head and attaches the backend.
func (m *Model) finish(opts Options) {
	if m.Config.TieWordEmbeddings {
		m.LMHead = m.Embed
	}
	m.backend = opts.backend()
	m.Config.TorchDType = map[DType]string{F32: "float32", BF16: "bfloat16", Q8: "float32"}[m.DType]
}

// Backend returns the backend the model computes on.
func (m *Model) Backend() Backend { return m.backend }

// MaxContext returns the longest sequence the model accepts.
func (m *Model) MaxContext() int { return m.maxContext }

// NumParams counts the parameters (a tied LM head once).
func (m *Model) NumParams() int64 {
	var n int64
	for _, t := range m.tensors() {
		if t.matrix {
			n += int64(t.rows) * int64(t.cols)
		} else {
			n += int64(t.rows)
		}
	}
	return n
}

// WeightBytes returns the memory the weights occupy.
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, t := range m.tensors() {
		if t.matrix {
			n += (*t.dst.(**Weight)).Bytes()
		} else {
			n += 4 * int64(t.rows)
		}
	}
	return n
}

// ropeTable returns cos and sin for each position and frequency, computed
// as Hugging Face does (float32 inverse frequencies and angles), so that
// positions far into the context rotate exactly as in training.
func ropeTable(positions []int, headDim int, theta float64) (cos, sin []float32) {
	half := headDim / 2
	inv := make([]float32, half)
	for i := range inv {
		exp := float32(2*i) / float32(headDim)
		inv[i] = 1 / float32(math.Pow(theta, float64(exp)))
	}
	cos = make([]float32, len(positions)*half)
	sin = make([]float32, len(positions)*half)
	for p, pos := range positions {
		for i, f := range inv {
			s, c := math.Sincos(float64(float32(pos) * f))
			cos[p*half+i], sin[p*half+i] = float32(c), float32(s)
		}
	}
	return cos, sin
}
