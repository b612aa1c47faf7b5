package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Architecture names, as Hugging Face writes them in config.json.
const (
	Qwen2 = "Qwen2ForCausalLM"
	Qwen3 = "Qwen3ForCausalLM"
)

// Config holds the hyperparameters of a Qwen2-family decoder.
type Config struct {
	Architecture          string  // Qwen2 or Qwen3
	HiddenSize            int     // model width
	IntermediateSize      int     // SwiGLU width
	NumLayers             int     // decoder layers
	NumHeads              int     // query heads
	NumKVHeads            int     // key/value heads (grouped-query attention)
	HeadDim               int     // width of one head
	RopeTheta             float64 // RoPE base
	RMSNormEps            float64 // RMSNorm epsilon
	VocabSize             int     // rows of the embedding and LM head
	TieWordEmbeddings     bool    // LM head shares the embedding matrix
	MaxPositionEmbeddings int     // longest context a sequence may reach
	TorchDType            string  // dtype of the checkpoint ("bfloat16", "float32")
	// AttentionBias is true when the q/k/v projections carry biases (always
	// for Qwen2; Qwen3's attention_bias, which also adds an o_proj bias).
	AttentionBias bool
	// QKNorm is true when queries and keys are RMS-normalised per head before
	// RoPE (Qwen3).
	QKNorm bool
	// MTPHeads is the number of multi-token-prediction heads
	// (num_nextn_predict_layers, as DeepSeek-V3 names it); head i drafts
	// the token i+2 positions ahead for speculative decoding. 0: none.
	MTPHeads int
	// MTPDraftVocab, when positive, restricts the heads' drafts to the
	// token ids below it (mtp_draft_vocab_size), so that a draft multiplies
	// by that many rows of the LM head rather than by all of them: with
	// Qwen's 152k vocabulary the LM head is over a quarter of a 0.5B
	// model's weights. Byte-level BPE numbers tokens in merge order, most
	// frequent first, so the low ids cover most of what a model writes.
	// 0: the whole vocabulary.
	MTPDraftVocab int
	BOSTokenID    int // -1 when the config names none
	EOSTokenID    int // -1 when the config names none
}

// hfConfig mirrors the fields of a Hugging Face config.json we read; pointers
// tell a missing field from a zero one.
type hfConfig struct {
	Architectures         []string        `json:"architectures"`
	ModelType             string          `json:"model_type,omitempty"`
	HiddenSize            *int            `json:"hidden_size"`
	IntermediateSize      *int            `json:"intermediate_size"`
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim,omitempty"`
	RopeTheta             *float64        `json:"rope_theta"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	VocabSize             *int            `json:"vocab_size"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	TorchDType            string          `json:"torch_dtype,omitempty"`
	AttentionBias         *bool           `json:"attention_bias,omitempty"`
	HiddenAct             string          `json:"hidden_act,omitempty"`
	RopeScaling           json.RawMessage `json:"rope_scaling,omitempty"`
	UseSlidingWindow      bool            `json:"use_sliding_window,omitempty"`
	BOSTokenID            json.RawMessage `json:"bos_token_id,omitempty"`
	EOSTokenID            json.RawMessage `json:"eos_token_id,omitempty"`
	QuantizationConfig    *quantConfig    `json:"quantization_config,omitempty"`
	NumNextNPredictLayers *int            `json:"num_nextn_predict_layers,omitempty"`
	MTPDraftVocabSize     *int            `json:"mtp_draft_vocab_size,omitempty"`
}

// quantConfig records how a checkpoint of ours stores Q8 weights.
type quantConfig struct {
	QuantMethod string `json:"quant_method"`
	GroupSize   int    `json:"group_size"`
}

// q8QuantMethod marks checkpoints whose linear weights are int8 with one
// float32 scale per block of 32 along a row ("<name>.weight_scale").
const q8QuantMethod = "livehat_q8"

// ReadConfig reads a Hugging Face config.json.
func ReadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("model: %w", err)
	}
	c, _, err := parseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("model: %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses the contents of a Hugging Face config.json.
func ParseConfig(data []byte) (Config, error) {
	c, _, err := parseConfig(data)
	return c, err
}

func parseConfig(data []byte) (Config, *quantConfig, error) {
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, nil, fmt.Errorf("config: %w", err)
	}
	if len(h.Architectures) != 1 {
		return Config{}, nil, fmt.Errorf("config: architectures must name one architecture, got %q", h.Architectures)
	}
	c := Config{Architecture: h.Architectures[0], TorchDType: h.TorchDType, BOSTokenID: -1, EOSTokenID: -1}
	switch c.Architecture {
	case Qwen2:
		c.AttentionBias = true
	case Qwen3:
		c.QKNorm = true
		if h.AttentionBias != nil {
			c.AttentionBias = *h.AttentionBias
		}
	default:
		return Config{}, nil, fmt.Errorf("config: unsupported architecture %q (want %s or %s)", c.Architecture, Qwen2, Qwen3)
	}
	required := []struct {
		name string
		src  *int
		dst  *int
	}{
		{"hidden_size", h.HiddenSize, &c.HiddenSize},
		{"intermediate_size", h.IntermediateSize, &c.IntermediateSize},
		{"num_hidden_layers", h.NumHiddenLayers, &c.NumLayers},
		{"num_attention_heads", h.NumAttentionHeads, &c.NumHeads},
		{"vocab_size", h.VocabSize, &c.VocabSize},
		{"max_position_embeddings", h.MaxPositionEmbeddings, &c.MaxPositionEmbeddings},
	}
	for _, r := range required {
		if r.src == nil {
			return Config{}, nil, fmt.Errorf("config: missing %s", r.name)
		}
		*r.dst = *r.src
	}
	c.NumKVHeads = c.NumHeads
	if h.NumKeyValueHeads != nil {
		c.NumKVHeads = *h.NumKeyValueHeads
	}
	if h.HeadDim != nil && c.Architecture == Qwen3 {
		c.HeadDim = *h.HeadDim
	} else if c.NumHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumHeads
	}
	c.RopeTheta = 10000
	if h.RopeTheta != nil {
		c.RopeTheta = *h.RopeTheta
	}
	if h.NumNextNPredictLayers != nil {
		c.MTPHeads = *h.NumNextNPredictLayers
	}
	if h.MTPDraftVocabSize != nil {
		c.MTPDraftVocab = *h.MTPDraftVocabSize
	}
	c.RMSNormEps = 1e-6
	if h.RMSNormEps != nil {
		c.RMSNormEps = *h.RMSNormEps
	}
	if h.TieWordEmbeddings != nil {
		c.TieWordEmbeddings = *h.TieWordEmbeddings
	}
	if h.HiddenAct != "" && h.HiddenAct != "silu" {
		return Config{}, nil, fmt.Errorf("config: unsupported hidden_act %q (want silu)", h.HiddenAct)
	}
	if rs := bytes.TrimSpace(h.RopeScaling); len(rs) > 0 && string(rs) != "null" {
		var s struct {
			Type     string `json:"type"`
			RopeType string `json:"rope_type"`
		}
		if err := json.Unmarshal(rs, &s); err != nil || (s.Type != "default" && s.RopeType != "default") {
			return Config{}, nil, fmt.Errorf("config: unsupported rope_scaling %s", rs)
		}
	}
	if h.UseSlidingWindow {
		return Config{}, nil, errors.New("config: use_sliding_window is not supported")
	}
	var err error
	if c.BOSTokenID, err = tokenID(h.BOSTokenID); err != nil {
		return Config{}, nil, fmt.Errorf("config: bos_token_id: %w", err)
	}
	if c.EOSTokenID, err = tokenID(h.EOSTokenID); err != nil {
		return Config{}, nil, fmt.Errorf("config: eos_token_id: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, nil, err
	}
	if q := h.QuantizationConfig; q != nil && (q.QuantMethod != q8QuantMethod || q.GroupSize != q8Block) {
		return Config{}, nil, fmt.Errorf("config: unsupported quantization_config %+v", *q)
	}
	return c, h.QuantizationConfig, nil
}

// tokenID accepts null, an integer, or a list of integers (the first counts).
func tokenID(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return -1, nil
	}
	var ids []int
	var id int
	if err := json.Unmarshal(raw, &id); err == nil {
		ids = []int{id}
	} else if err := json.Unmarshal(raw, &ids); err != nil || len(ids) == 0 {
		return -1, fmt.Errorf("want an integer or a list of integers, got %s", raw)
	}
	if ids[0] < 0 {
		return -1, fmt.Errorf("negative token id %d", ids[0])
	}
	return ids[0], nil
}

// Validate checks that the hyperparameters describe a model we can build.
func (c Config) Validate() error {
	if c.Architecture != Qwen2 && c.Architecture != Qwen3 {
		return fmt.Errorf("config: unsupported architecture %q (want %s or %s)", c.Architecture, Qwen2, Qwen3)
	}
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumLayers}, {"num_attention_heads", c.NumHeads},
		{"num_key_value_heads", c.NumKVHeads}, {"head_dim", c.HeadDim},
		{"vocab_size", c.VocabSize}, {"max_position_embeddings", c.MaxPositionEmbeddings},
	}
	for _, p := range pos {
		// The bound keeps products of two dimensions far from overflow.
		if p.v <= 0 || p.v > 1<<24 {
			return fmt.Errorf("config: %s = %d out of range", p.name, p.v)
		}
	}
	if c.MTPHeads < 0 || c.MTPHeads > MaxMTPHeads {
		return fmt.Errorf("config: num_nextn_predict_layers = %d out of range [0, %d]", c.MTPHeads, MaxMTPHeads)
	}
	if c.MTPDraftVocab < 0 || c.MTPDraftVocab > c.VocabSize {
		return fmt.Errorf("config: mtp_draft_vocab_size = %d out of range [0, vocab_size %d]", c.MTPDraftVocab, c.VocabSize)
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return fmt.Errorf("config: num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumHeads, c.NumKVHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("config: head_dim %d must be even for RoPE", c.HeadDim)
	}
	if c.Architecture == Qwen2 && c.HeadDim*c.NumHeads != c.HiddenSize {
		return fmt.Errorf("config: hidden_size %d is not num_attention_heads %d × head_dim %d", c.HiddenSize, c.NumHeads, c.HeadDim)
	}
	if !(c.RopeTheta > 0) || !(c.RMSNormEps > 0) {
		return fmt.Errorf("config: rope_theta %g and rms_norm_eps %g must be positive", c.RopeTheta, c.RMSNormEps)
	}
	for _, id := range []struct {
		name string
		v    int
	}{{"bos_token_id", c.BOSTokenID}, {"eos_token_id", c.EOSTokenID}} {
		if id.v < -1 || id.v >= c.VocabSize {
			return fmt.Errorf("config: %s %d is outside the vocabulary of %d", id.name, id.v, c.VocabSize)
		}
	}
	if c.Architecture == Qwen2 && !c.AttentionBias {
		return errors.New("config: Qwen2 always has q/k/v biases")
	}
	if (c.Architecture == Qwen3) != c.QKNorm {
		return errors.New("config: q/k norm is used by Qwen3 and only by it")
	}
	return nil
}

// MarshalJSON writes the config in Hugging Face's config.json layout.
func (c Config) MarshalJSON() ([]byte, error) {
	return c.marshal(nil)
}

func (c Config) marshal(q *quantConfig) ([]byte, error) {
	h := hfConfig{
		Architectures:         []string{c.Architecture},
		ModelType:             strings.ToLower(strings.TrimSuffix(c.Architecture, "ForCausalLM")),
		HiddenSize:            &c.HiddenSize,
		IntermediateSize:      &c.IntermediateSize,
		NumHiddenLayers:       &c.NumLayers,
		NumAttentionHeads:     &c.NumHeads,
		NumKeyValueHeads:      &c.NumKVHeads,
		RopeTheta:             &c.RopeTheta,
		RMSNormEps:            &c.RMSNormEps,
		VocabSize:             &c.VocabSize,
		TieWordEmbeddings:     &c.TieWordEmbeddings,
		MaxPositionEmbeddings: &c.MaxPositionEmbeddings,
		TorchDType:            c.TorchDType,
		HiddenAct:             "silu",
		QuantizationConfig:    q,
	}
	if c.Architecture == Qwen3 {
		h.HeadDim = &c.HeadDim
		h.AttentionBias = &c.AttentionBias
	}
	if c.MTPHeads > 0 {
		h.NumNextNPredictLayers = &c.MTPHeads
	}
	if c.MTPDraftVocab > 0 {
		h.MTPDraftVocabSize = &c.MTPDraftVocab
	}
	if c.BOSTokenID >= 0 {
		h.BOSTokenID, _ = json.Marshal(c.BOSTokenID)
	}
	if c.EOSTokenID >= 0 {
		h.EOSTokenID, _ = json.Marshal(c.EOSTokenID)
	}
	return json.MarshalIndent(h, "", "  ")
}

// presets returns the named model shapes (random weights for benchmarks and
// tests); a function, not a variable, so that callers cannot alter them.
func presets() map[string]Config {
	return map[string]Config{
		// Qwen2.5-0.5B: 494 M parameters, 358 M outside the tied embedding.
		"qwen2.5-0.5b": {
			Architecture: Qwen2, HiddenSize: 896, IntermediateSize: 4864, NumLayers: 24,
			NumHeads: 14, NumKVHeads: 2, HeadDim: 64, RopeTheta: 1e6, RMSNormEps: 1e-6,
			VocabSize: 151936, TieWordEmbeddings: true, MaxPositionEmbeddings: 32768,
			TorchDType: "bfloat16", AttentionBias: true, BOSTokenID: 151643, EOSTokenID: 151645,
		},
		// Qwen3-0.6B.
		"qwen3-0.6b": {
			Architecture: Qwen3, HiddenSize: 1024, IntermediateSize: 3072, NumLayers: 28,
			NumHeads: 16, NumKVHeads: 8, HeadDim: 128, RopeTheta: 1e6, RMSNormEps: 1e-6,
			VocabSize: 151936, TieWordEmbeddings: true, MaxPositionEmbeddings: 40960,
			TorchDType: "bfloat16", QKNorm: true, BOSTokenID: 151643, EOSTokenID: 151645,
		},
		// tiny is a two-layer Qwen2 for tests.
		"tiny": {
			Architecture: Qwen2, HiddenSize: 64, IntermediateSize: 96, NumLayers: 2,
			NumHeads: 4, NumKVHeads: 2, HeadDim: 16, RopeTheta: 10000, RMSNormEps: 1e-6,
			VocabSize: 300, TieWordEmbeddings: true, MaxPositionEmbeddings: 512,
			TorchDType: "float32", AttentionBias: true, BOSTokenID: -1, EOSTokenID: 2,
		},
		// tiny-qwen3 is a two-layer Qwen3 with an untied head and head_dim ≠
		// hidden/heads, for tests.
		"tiny-qwen3": {
			Architecture: Qwen3, HiddenSize: 48, IntermediateSize: 80, NumLayers: 2,
			NumHeads: 4, NumKVHeads: 1, HeadDim: 24, RopeTheta: 1e6, RMSNormEps: 1e-6,
			VocabSize: 270, TieWordEmbeddings: false, MaxPositionEmbeddings: 512,
			TorchDType: "float32", QKNorm: true, BOSTokenID: -1, EOSTokenID: 2,
		},
	}
}

// Preset returns a named model shape: "qwen2.5-0.5b", "qwen3-0.6b", "tiny"
// or "tiny-qwen3".
func Preset(name string) (Config, error) {
	c, ok := presets()[name]
	if !ok {
		return Config{}, fmt.Errorf("model: unknown preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	return c, nil
}

// PresetNames lists the preset names in sorted order.
func PresetNames() []string {
	var names []string
	for n := range presets() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
