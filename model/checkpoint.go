package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/livehat/livehat/model/internal/kernel"
	"github.com/livehat/livehat/model/safetensors"
)

// Load reads a Hugging Face checkpoint directory: config.json plus
// model.safetensors or the shards named by model.safetensors.index.json,
// with Hugging Face tensor names. A missing, unexpected or misshapen tensor
// is an error naming the file and the tensor, except that a config naming
// MTP heads for a checkpoint without any mtp.* tensor loads without heads.
func Load(dir string, opts Options) (*Model, error) {
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	cfg, quant, err := parseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", cfgPath, err)
	}
	m, err := newEmpty(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, cfgPath)
	}
	if m.DType == "" {
		switch {
		case quant != nil:
			m.DType = Q8
		case cfg.TorchDType == "bfloat16":
			m.DType = BF16
		default:
			m.DType = F32
		}
	}
	ck, err := safetensors.OpenCheckpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer ck.Close()
	if !slices.ContainsFunc(ck.Names(), func(n string) bool { return strings.HasPrefix(n, "mtp.") }) {
		// Heads are an accessory of the trunk: a checkpoint written by a
		// trainer that kept the config but not the heads (training the
		// trunk makes them stale anyway) loads without them.
		m.Config.MTPHeads, m.Config.MTPDraftVocab, m.MTP = 0, 0, nil
	}

	expected := make(map[string]bool)
	for _, t := range m.tensors() {
		expected[t.name] = true
		if t.matrix && quant != nil {
			expected[t.name+"_scale"] = true
		}
	}
	for _, name := range ck.Names() {
		if expected[name] || strings.HasSuffix(name, ".rotary_emb.inv_freq") {
			continue
		}
		if name == "lm_head.weight" && cfg.TieWordEmbeddings {
			continue // some tied checkpoints store the head anyway
		}
		f, _ := ck.Lookup(name)
		return nil, fmt.Errorf("model: %s: unexpected tensor %q for a %s with this config", f.Path(), name, cfg.Architecture)
	}
	for _, t := range m.tensors() {
		if err := m.loadTensor(ck, t, quant != nil); err != nil {
			return nil, err
		}
	}
	m.finish(opts)
	return m, nil
}

func (m *Model) loadTensor(ck *safetensors.Checkpoint, t tensorShape, quantized bool) error {
	f, ok := ck.Lookup(t.name)
	if !ok {
		return fmt.Errorf("model: checkpoint lacks tensor %q", t.name)
	}
	info, _ := f.Tensor(t.name)
	want := []int{t.rows}
	if t.matrix {
		want = append(want, t.cols)
	}
	if !slices.Equal(info.Shape, want) {
		return fmt.Errorf("model: %s: tensor %q has shape %v, want %v", f.Path(), t.name, info.Shape, want)
	}
	if t.matrix && quantized {
		w, err := loadQ8(ck, f, info, t)
		if err != nil {
			return err
		}
		if m.DType != Q8 {
			if w, err = newWeight(m.DType, w.Float32(), t.rows, t.cols); err != nil {
				return fmt.Errorf("model: %s: tensor %q: %w", f.Path(), t.name, err)
			}
		}
		*t.dst.(**Weight) = w
		return nil
	}
	switch info.DType {
	case safetensors.F32, safetensors.BF16, safetensors.F16:
	default:
		return fmt.Errorf("model: %s: tensor %q has dtype %s, want F32, BF16 or F16", f.Path(), t.name, info.DType)
	}
	_, v, err := f.ReadFloat32(t.name)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if !finite(v) {
		return fmt.Errorf("model: %s: tensor %q holds NaN or infinite values", f.Path(), t.name)
	}
	if !t.matrix {
		*t.dst.(*[]float32) = v
		return nil
	}
	w, err := newWeight(m.DType, v, t.rows, t.cols)
	if err != nil {
		return fmt.Errorf("model: %s: tensor %q: %w", f.Path(), t.name, err)
	}
	*t.dst.(**Weight) = w
	return nil
}

// loadQ8 reads an int8 weight and its float32 block scales.
func loadQ8(ck *safetensors.Checkpoint, f *safetensors.File, info safetensors.TensorInfo, t tensorShape) (*Weight, error) {
	if info.DType != safetensors.I8 {
		return nil, fmt.Errorf("model: %s: tensor %q has dtype %s, want I8 in a q8 checkpoint", f.Path(), t.name, info.DType)
	}
	_, raw, err := f.ReadRaw(t.name)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	scaleName := t.name + "_scale"
	sf, ok := ck.Lookup(scaleName)
	if !ok {
		return nil, fmt.Errorf("model: checkpoint lacks tensor %q", scaleName)
	}
	q := kernel.Q8Matrix{Rows: t.rows, Cols: t.cols, Data: make([]int8, len(raw))}
	si, _ := sf.Tensor(scaleName)
	if want := []int{t.rows, q.BlocksPerRow()}; si.DType != safetensors.F32 || !slices.Equal(si.Shape, want) {
		return nil, fmt.Errorf("model: %s: tensor %q is %s%v, want F32%v", sf.Path(), scaleName, si.DType, si.Shape, want)
	}
	_, scales, err := sf.ReadFloat32(scaleName)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if !finite(scales) {
		return nil, fmt.Errorf("model: %s: tensor %q holds NaN or infinite values", sf.Path(), scaleName)
	}
	for i, b := range raw {
		q.Data[i] = int8(b)
	}
	q.Scales = scales
	return &Weight{rows: t.rows, cols: t.cols, dtype: Q8, q8: q}, nil
}

// Save writes the model as a Hugging Face checkpoint directory (config.json
// and model.safetensors), creating dir if needed. Matrices keep their
// storage type (F32, BF16; Q8 as I8 plus "<name>_scale" F32 block scales,
// recorded in config.json's quantization_config); norms and biases are F32.
// Loading the directory back gives bit-identical weights.
func (m *Model) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	var quant *quantConfig
	if m.DType == Q8 {
		quant = &quantConfig{QuantMethod: q8QuantMethod, GroupSize: q8Block}
	}
	cfg, err := m.Config.marshal(quant)
	if err != nil {
		return fmt.Errorf("model: config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(cfg, '\n'), 0o644); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	var tensors []safetensors.Tensor
	for _, t := range m.tensors() {
		if !t.matrix {
			data, _ := safetensors.EncodeFloat32(safetensors.F32, *t.dst.(*[]float32))
			tensors = append(tensors, safetensors.Tensor{Name: t.name, DType: safetensors.F32, Shape: []int{t.rows}, Data: data})
			continue
		}
		tensors = append(tensors, encodeWeight(t.name, *t.dst.(**Weight))...)
	}
	return safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"})
}

func encodeWeight(name string, w *Weight) []safetensors.Tensor {
	shape := []int{w.rows, w.cols}
	switch w.dtype {
	case F32:
		data, _ := safetensors.EncodeFloat32(safetensors.F32, w.f32)
		return []safetensors.Tensor{{Name: name, DType: safetensors.F32, Shape: shape, Data: data}}
	case BF16:
		data := make([]byte, 2*len(w.bf16))
		for i, v := range w.bf16 {
			binary.LittleEndian.PutUint16(data[2*i:], v)
		}
		return []safetensors.Tensor{{Name: name, DType: safetensors.BF16, Shape: shape, Data: data}}
	}
	data := make([]byte, len(w.q8.Data))
	for i, v := range w.q8.Data {
		data[i] = byte(v)
	}
	scales := make([]byte, 4*len(w.q8.Scales))
	for i, v := range w.q8.Scales {
		binary.LittleEndian.PutUint32(scales[4*i:], math.Float32bits(v))
	}
	return []safetensors.Tensor{
		{Name: name, DType: safetensors.I8, Shape: shape, Data: data},
		{Name: name + "_scale", DType: safetensors.F32, Shape: []int{w.rows, w.q8.BlocksPerRow()}, Data: scales},
	}
}
