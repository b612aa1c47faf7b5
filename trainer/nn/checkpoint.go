package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/safetensors"
)

// Files of a checkpoint directory besides config.json and model.safetensors.
const (
	adapterWeightsFile = "adapter_model.safetensors"
	adapterConfigFile  = "adapter_config.json"
)

// Save writes the model as a Hugging Face checkpoint directory that
// model.Load reads: config.json and float32 model.safetensors. With LoRA
// adapters the base weights are written unmerged and the adapters go to
// adapter_model.safetensors and adapter_config.json in PEFT's layout, so
// training can resume; SaveMerged writes the folded weights instead.
func (m *Model) Save(dir string) error {
	if err := m.saveBase(dir, false); err != nil {
		return err
	}
	if m.lora == nil {
		return nil
	}
	cfg, err := json.MarshalIndent(struct {
		PeftType string `json:"peft_type"`
		*LoRAConfig
	}{"LORA", m.lora}, "", "  ")
	if err != nil {
		return fmt.Errorf("nn: adapter config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, adapterConfigFile), append(cfg, '\n'), 0o644); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return writeTensors(filepath.Join(dir, adapterWeightsFile), m.net.adapters(), false)
}

// SaveMerged writes the model with every LoRA adapter folded into its
// matrix: a plain checkpoint for inference or for another engine.
func (m *Model) SaveMerged(dir string) error { return m.saveBase(dir, true) }

func (m *Model) saveBase(dir string, merged bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	c := m.Config
	c.TorchDType = "float32"
	cfg, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("nn: config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(cfg, '\n'), 0o644); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return writeTensors(filepath.Join(dir, "model.safetensors"), m.net.tensors(), merged)
}

// writeTensors writes float32 tensors to a safetensors file, folding
// adapters into their matrices when merged is set.
func writeTensors(path string, ts []*tensor[float32], merged bool) error {
	var out []safetensors.Tensor
	for _, t := range ts {
		w := t.w
		if ad := t.lora; merged && ad != nil {
			w = slices.Clone(t.w)
			gemmLoops(false, false, t.rows, t.cols, ad.rank, ad.scale, ad.b.w, ad.rank, ad.a.w, t.cols, 1, w, t.cols)
		}
		shape := []int{t.rows}
		if t.cols > 0 {
			shape = append(shape, t.cols)
		}
		data, err := safetensors.EncodeFloat32(safetensors.F32, w)
		if err != nil {
			return fmt.Errorf("nn: %s: %w", t.name, err)
		}
		out = append(out, safetensors.Tensor{Name: t.name, DType: safetensors.F32, Shape: shape, Data: data})
	}
	if err := safetensors.WriteFile(path, out, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return nil
}

// Load reads a checkpoint directory written by Save (or any Hugging Face
// Qwen2-family checkpoint), with its LoRA adapters when it has them.
func Load(dir string, backend model.Backend) (*Model, error) {
	base, err := model.Load(dir, model.Options{DType: model.F32, Backend: backend})
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	m, err := New(base, backend)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, adapterConfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	var cfg LoRAConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", adapterConfigFile, err)
	}
	if err := m.AddLoRA(cfg, 0); err != nil {
		return nil, err
	}
	f, err := safetensors.Open(filepath.Join(dir, adapterWeightsFile))
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	defer f.Close()
	for _, t := range m.net.adapters() {
		info, v, err := f.ReadFloat32(t.name)
		if err != nil {
			return nil, fmt.Errorf("nn: %s: %w", adapterWeightsFile, err)
		}
		if len(v) != len(t.w) {
			return nil, fmt.Errorf("nn: %s: %s has shape %v, want [%d %d]", adapterWeightsFile, t.name, info.Shape, t.rows, t.cols)
		}
		copy(t.w, v)
	}
	return m, nil
}

// ToModel returns an inference model holding the current weights (adapters
// folded in). Package model builds weights only from checkpoints, so this
// goes through a temporary checkpoint directory.
func (m *Model) ToModel(opts model.Options) (*model.Model, error) {
	dir, err := os.MkdirTemp("", "livehat-nn-*")
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := m.SaveMerged(dir); err != nil {
		return nil, err
	}
	out, err := model.Load(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	return out, nil
}
