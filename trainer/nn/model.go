// Package nn is the learning machinery of Harness-Aware Training: a training
// forward and backward pass for the Qwen2-family decoder of package model
// (embedding, RMSNorm, RoPE, causal grouped-query attention, SwiGLU, tied or
// untied LM head, Qwen2 q/k/v biases, Qwen3 q/k norms), masked
// cross-entropy, LoRA adapters, AdamW with decoupled weight decay,
// global-norm gradient clipping and a warm-up + cosine schedule.
//
// Parameters are float32 copies of a model.Model's weights. Matrix products
// run on a model.Backend's Sgemm (the CPU backend's assembly kernels);
// everything else is plain Go. Batches are packed: examples are concatenated
// without padding, attention stays inside each example and positions
// restart at each, which gives exactly the loss of running them one by one.
// Checkpoints are Hugging Face directories that model.Load reads.
package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/livehat/livehat/model"
)

// Model is a decoder being trained: float32 parameters with gradients.
// A Model is not safe for concurrent use.
type Model struct {
	// Config is the shape of the decoder.
	Config model.Config
	net    *net[float32]
	lora   *LoRAConfig
}

// Param is one trainable tensor. Value and Grad share the model's storage,
// so an optimizer updates the model by writing Value.
type Param struct {
	// Name is the tensor's Hugging Face name (PEFT's name for an adapter).
	Name string
	// Shape is [rows, cols] for a matrix, [n] for a vector.
	Shape []int
	// Value holds the parameter, Grad its accumulated gradient.
	Value, Grad []float32
	// Decay reports whether weight decay applies: matrices yes, norm
	// weights and biases no, as Hugging Face trainers do.
	Decay bool
}

// New copies the weights of m (any storage type, widened to float32) into a
// trainable model whose matrix products run on backend (nil: m's own).
// Every parameter is trainable until AddLoRA freezes the base.
func New(m *model.Model, backend model.Backend) (*Model, error) {
	if m == nil {
		return nil, errors.New("nn: nil model")
	}
	if err := m.Config.Validate(); err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	if backend == nil {
		backend = m.Backend()
	}
	c := m.Config
	// The net trains the trunk only and saves no MTP heads; retraining the
	// trunk makes old heads useless anyway (train them again with
	// --stage mtp), so the config must not promise them.
	c.MTPHeads, c.MTPDraftVocab = 0, 0
	mat := func(name string, w *model.Weight) *tensor[float32] {
		return &tensor[float32]{name: name, rows: w.Rows(), cols: w.Cols(), w: w.Float32()}
	}
	vec := func(name string, v []float32) *tensor[float32] {
		if v == nil {
			return nil
		}
		return &tensor[float32]{name: name, rows: len(v), w: slices.Clone(v)}
	}
	n := &net[float32]{cfg: c, backend: backend, fastExp: true, layers: make([]layer[float32], len(m.Layers))}
	n.embed = mat("model.embed_tokens.weight", m.Embed)
	for i, l := range m.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		n.layers[i] = layer[float32]{
			attnNorm: vec(p+"input_layernorm.weight", l.AttnNorm),
			q:        mat(p+"self_attn.q_proj.weight", l.Q),
			k:        mat(p+"self_attn.k_proj.weight", l.K),
			v:        mat(p+"self_attn.v_proj.weight", l.V),
			o:        mat(p+"self_attn.o_proj.weight", l.O),
			qBias:    vec(p+"self_attn.q_proj.bias", l.QBias),
			kBias:    vec(p+"self_attn.k_proj.bias", l.KBias),
			vBias:    vec(p+"self_attn.v_proj.bias", l.VBias),
			oBias:    vec(p+"self_attn.o_proj.bias", l.OBias),
			qNorm:    vec(p+"self_attn.q_norm.weight", l.QNorm),
			kNorm:    vec(p+"self_attn.k_norm.weight", l.KNorm),
			mlpNorm:  vec(p+"post_attention_layernorm.weight", l.MLPNorm),
			gate:     mat(p+"mlp.gate_proj.weight", l.Gate),
			up:       mat(p+"mlp.up_proj.weight", l.Up),
			down:     mat(p+"mlp.down_proj.weight", l.Down),
		}
	}
	n.norm = vec("model.norm.weight", m.Norm)
	n.head = n.embed
	if !c.TieWordEmbeddings {
		n.head = mat("lm_head.weight", m.LMHead)
	}
	for _, t := range n.tensors() {
		t.g = make([]float32, t.size())
	}
	return &Model{Config: c, net: n}, nil
}

// Params returns the trainable parameters in checkpoint order: every
// tensor, or only the LoRA adapters once AddLoRA has frozen the base.
func (m *Model) Params() []Param {
	ts := m.net.tensors()
	if m.lora != nil {
		ts = m.net.adapters()
	}
	var out []Param
	for _, t := range ts {
		if t.g == nil {
			continue
		}
		shape := []int{t.rows}
		if t.cols > 0 {
			shape = append(shape, t.cols)
		}
		out = append(out, Param{Name: t.name, Shape: shape, Value: t.w, Grad: t.g, Decay: t.cols > 0})
	}
	return out
}

// NumParams counts the model's parameters (a tied head once, adapters
// excluded).
func (m *Model) NumParams() int64 {
	var s int64
	for _, t := range m.net.tensors() {
		s += int64(t.size())
	}
	return s
}

// NumTrainable counts the parameters Params returns: all of them, or the
// adapters' under LoRA.
func (m *Model) NumTrainable() int {
	n := 0
	for _, p := range m.Params() {
		n += len(p.Value)
	}
	return n
}

// ZeroGrad sets every gradient to zero.
func (m *Model) ZeroGrad() {
	for _, p := range m.Params() {
		clear(p.Grad)
	}
}

// Loss is the summed cross-entropy over the trained tokens of a batch.
type Loss struct {
	// Sum is the summed negative log-likelihood in nats.
	Sum float64
	// Tokens is the number of trained tokens.
	Tokens int
	// Seen is the number of tokens the model read, trained or not.
	Seen int
}

// Mean returns the loss per trained token (0 for none).
func (l Loss) Mean() float64 {
	if l.Tokens == 0 {
		return 0
	}
	return l.Sum / float64(l.Tokens)
}

// Backward runs the examples through the model and adds scale times the
// gradient of the summed loss to the gradients. For the mean loss of an
// accumulated step, pass scale = 1 / (trained tokens of all micro-batches):
// the step then equals one pass over the whole batch.
func (m *Model) Backward(ctx context.Context, examples []Example, scale float32) (Loss, error) {
	if scale == 0 || math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return Loss{}, fmt.Errorf("nn: backward with scale %g", scale)
	}
	b, err := pack(examples, m.net.cfg.MaxPositionEmbeddings)
	if err != nil {
		return Loss{}, err
	}
	r, err := m.net.run(ctx, b, scale, false)
	if err != nil {
		return Loss{}, err
	}
	return Loss{Sum: r.lossSum, Tokens: r.tokens, Seen: len(b.tokens)}, nil
}

// Evaluate returns the loss of the examples without touching gradients.
func (m *Model) Evaluate(ctx context.Context, examples []Example) (Loss, error) {
	b, err := pack(examples, m.net.cfg.MaxPositionEmbeddings)
	if err != nil {
		return Loss{}, err
	}
	r, err := m.net.run(ctx, b, 0, false)
	if err != nil {
		return Loss{}, err
	}
	return Loss{Sum: r.lossSum, Tokens: r.tokens, Seen: len(b.tokens)}, nil
}

// Logits returns the logits at every position of one sequence,
// len(tokens)×VocabSize, as model.Model.Forward does from an empty
// sequence.
func (m *Model) Logits(ctx context.Context, tokens []int) ([]float32, error) {
	b, err := pack([]Example{{Tokens: tokens}}, m.net.cfg.MaxPositionEmbeddings)
	if err != nil {
		return nil, err
	}
	r, err := m.net.run(ctx, b, 0, true)
	if err != nil {
		return nil, err
	}
	return r.logits, nil
}

// LoRAConfig configures low-rank adapters, as PEFT's LoraConfig does.
type LoRAConfig struct {
	// Rank is the adapters' inner dimension r.
	Rank int `json:"r"`
	// Alpha scales the update by Alpha/Rank.
	Alpha float64 `json:"lora_alpha"`
	// Targets name the adapted projections among q_proj, k_proj, v_proj,
	// o_proj, gate_proj, up_proj and down_proj.
	Targets []string `json:"target_modules"`
}

// loraTargets maps PEFT's module names to a layer's matrices.
func loraTargets[F float](l *layer[F]) map[string]*tensor[F] {
	return map[string]*tensor[F]{"q_proj": l.q, "k_proj": l.k, "v_proj": l.v, "o_proj": l.o,
		"gate_proj": l.gate, "up_proj": l.up, "down_proj": l.down}
}

// AddLoRA freezes every base parameter and adds adapters to the target
// projections of every layer: A drawn from N(0, 1/rank) with the seed,
// B zero, so the model's function is unchanged until training moves B.
func (m *Model) AddLoRA(cfg LoRAConfig, seed uint64) error {
	if m.lora != nil {
		return errors.New("nn: the model already has LoRA adapters")
	}
	if cfg.Rank <= 0 || !(cfg.Alpha > 0) || len(cfg.Targets) == 0 {
		return fmt.Errorf("nn: LoRA needs a positive rank and alpha and a target, got r=%d alpha=%g targets=%v", cfg.Rank, cfg.Alpha, cfg.Targets)
	}
	for _, name := range cfg.Targets {
		if _, ok := loraTargets(&m.net.layers[0])[name]; !ok {
			return fmt.Errorf("nn: unknown LoRA target %q (want q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj or down_proj)", name)
		}
	}
	for _, t := range m.net.tensors() {
		t.g = nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x10a))
	std := 1 / math.Sqrt(float64(cfg.Rank))
	for i := range m.net.layers {
		targets := loraTargets(&m.net.layers[i])
		for _, name := range cfg.Targets {
			t := targets[name]
			base := t.name[:len(t.name)-len(".weight")]
			a := &tensor[float32]{name: "base_model.model." + base + ".lora_A.weight", rows: cfg.Rank, cols: t.cols,
				w: make([]float32, cfg.Rank*t.cols), g: make([]float32, cfg.Rank*t.cols)}
			for j := range a.w {
				a.w[j] = float32(rng.NormFloat64() * std)
			}
			b := &tensor[float32]{name: "base_model.model." + base + ".lora_B.weight", rows: t.rows, cols: cfg.Rank,
				w: make([]float32, t.rows*cfg.Rank), g: make([]float32, t.rows*cfg.Rank)}
			t.lora = &adapter[float32]{a: a, b: b, rank: cfg.Rank, scale: float32(cfg.Alpha / float64(cfg.Rank))}
		}
	}
	c := cfg
	c.Targets = slices.Clone(cfg.Targets)
	m.lora = &c
	return nil
}

// LoRA returns the adapter configuration, or nil when there are none.
func (m *Model) LoRA() *LoRAConfig { return m.lora }

// SetContext raises the longest context the model trains on and saves
// (max_position_embeddings) to n positions. RoPE has no learned
// positions, so no weight changes; a smaller n is refused, since the
// checkpoint may already use those positions.
func (m *Model) SetContext(n int) error {
	if n < m.Config.MaxPositionEmbeddings {
		return fmt.Errorf("nn: context %d is below the model's %d", n, m.Config.MaxPositionEmbeddings)
	}
	m.Config.MaxPositionEmbeddings, m.net.cfg.MaxPositionEmbeddings = n, n
	return nil
}

// MergeLoRA folds every adapter into its matrix (W += Alpha/Rank·B·A),
// removes the adapters and makes every parameter trainable again.
func (m *Model) MergeLoRA() {
	if m.lora == nil {
		return
	}
	for _, t := range m.net.tensors() {
		if ad := t.lora; ad != nil {
			m.net.gemm(false, false, t.rows, t.cols, ad.rank, ad.scale, ad.b.w, ad.rank, ad.a.w, t.cols, 1, t.w, t.cols)
			t.lora = nil
		}
		t.g = make([]float32, t.size())
	}
	m.lora = nil
}
