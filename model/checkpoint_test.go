package model

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/safetensors"
)

// weightsEqual compares every tensor bit for bit, in its storage type.
func weightsEqual(t *testing.T, a, b *Model) {
	t.Helper()
	if a.Config != b.Config || a.DType != b.DType {
		t.Fatalf("config or dtype differ:\n%+v %s\n%+v %s", a.Config, a.DType, b.Config, b.DType)
	}
	ta, tb := a.tensors(), b.tensors()
	for i := range ta {
		if !ta[i].matrix {
			if !slices.Equal(*ta[i].dst.(*[]float32), *tb[i].dst.(*[]float32)) {
				t.Fatalf("tensor %s differs", ta[i].name)
			}
			continue
		}
		wa, wb := *ta[i].dst.(**Weight), *tb[i].dst.(**Weight)
		if wa.dtype != wb.dtype || !slices.Equal(wa.f32, wb.f32) || !slices.Equal(wa.bf16, wb.bf16) ||
			!slices.Equal(wa.q8.Data, wb.q8.Data) || !slices.Equal(wa.q8.Scales, wb.q8.Scales) {
			t.Fatalf("tensor %s differs", ta[i].name)
		}
	}
	if b.Config.TieWordEmbeddings != (b.LMHead == b.Embed) {
		t.Fatal("loaded LM head tying does not follow the config")
	}
}

func TestSaveLoadBitIdentical(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	for name, cfg := range testConfigs(t) {
		for _, dt := range []DType{F32, BF16, Q8} {
			m, err := NewRandom(cfg, 11, Options{DType: dt, Backend: cpu})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := m.Save(dir); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir, Options{Backend: cpu})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, dt, err)
			}
			weightsEqual(t, m, got)
			toks := []int{1, 5, 9, 2}
			l1, _ := m.Forward(context.Background(), m.NewSequence(), toks)
			l2, _ := got.Forward(context.Background(), got.NewSequence(), toks)
			if !slices.Equal(l1, l2) {
				t.Fatalf("%s/%s: logits of the reloaded model differ", name, dt)
			}
		}
	}
}

// A checkpoint saved in one dtype loads into another as the conversion
// says: bf16 → f32 is exact, f32 → q8 quantizes.
func TestLoadConvertsDType(t *testing.T) {
	cfg, _ := Preset("tiny")
	cpu := NewCPU(1)
	defer cpu.Close()
	m, _ := NewRandom(cfg, 1, Options{DType: BF16, Backend: cpu})
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	f32, err := Load(dir, Options{DType: F32, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if f32.DType != F32 || !slices.Equal(f32.Layers[0].Q.Float32(), m.Layers[0].Q.Float32()) {
		t.Fatal("bf16 → f32 conversion is not exact")
	}
	q8, err := Load(dir, Options{DType: Q8, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if q8.Layers[1].Down.DType() != Q8 {
		t.Fatal("q8 load did not quantize")
	}
}

func TestLoadSharded(t *testing.T) {
	cfg, _ := Preset("tiny-qwen3")
	cpu := NewCPU(1)
	defer cpu.Close()
	m, _ := NewRandom(cfg, 2, Options{DType: BF16, Backend: cpu})
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	// Re-split model.safetensors into two shards with an index, as HF does.
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var shards [2][]safetensors.Tensor
	weightMap := map[string]string{}
	for i, info := range f.Tensors() {
		_, raw, err := f.ReadRaw(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		shards[i%2] = append(shards[i%2], safetensors.Tensor{Name: info.Name, DType: info.DType, Shape: info.Shape, Data: raw})
		weightMap[info.Name] = []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i%2]
	}
	f.Close()
	os.Remove(filepath.Join(dir, "model.safetensors"))
	for i, s := range shards {
		name := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i]
		if err := safetensors.WriteFile(filepath.Join(dir, name), s, map[string]string{"format": "pt"}); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 0}, "weight_map": weightMap})
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
	got, err := Load(dir, Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	weightsEqual(t, m, got)

	// An index naming a tensor that its shard does not hold.
	const moved = "model.norm.weight"
	if weightMap[moved] == "model-00001-of-00002.safetensors" {
		weightMap[moved] = "model-00002-of-00002.safetensors"
	} else {
		weightMap[moved] = "model-00001-of-00002.safetensors"
	}
	idx, _ = json.Marshal(map[string]any{"weight_map": weightMap})
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
	if _, err := Load(dir, Options{Backend: cpu}); err == nil || !strings.Contains(err.Error(), moved) {
		t.Errorf("index disagreeing with its shards: err = %v, want an error naming %s", err, moved)
	}
}

// Corrupt checkpoints fail with errors that name the file and the tensor.
func TestLoadRejects(t *testing.T) {
	cfg, _ := Preset("tiny")
	cpu := NewCPU(1)
	defer cpu.Close()
	m, _ := NewRandom(cfg, 4, Options{Backend: cpu})
	base := t.TempDir()
	if err := m.Save(base); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) []safetensors.Tensor {
		f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []safetensors.Tensor
		for _, info := range f.Tensors() {
			_, raw, _ := f.ReadRaw(info.Name)
			out = append(out, safetensors.Tensor{Name: info.Name, DType: info.DType, Shape: info.Shape, Data: raw})
		}
		return out
	}
	clone := func(edit func([]safetensors.Tensor) []safetensors.Tensor) string {
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(base, "config.json"))
		os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
		if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), edit(read(base)), nil); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const victim = "model.layers.1.self_attn.k_proj.weight"
	cases := []struct {
		name string
		dir  string
		want []string
	}{
		{"missing", clone(func(ts []safetensors.Tensor) []safetensors.Tensor {
			return slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == victim })
		}), []string{victim, "lacks"}},
		{"shape", clone(func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == victim {
					ts[i].Shape = []int{ts[i].Shape[1], ts[i].Shape[0]}
				}
			}
			return ts
		}), []string{victim, "shape", "model.safetensors"}},
		{"dtype", clone(func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == victim {
					ts[i].DType = safetensors.I32
				}
			}
			return ts
		}), []string{victim, "I32", "model.safetensors"}},
		{"unexpected", clone(func(ts []safetensors.Tensor) []safetensors.Tensor {
			return append(ts, safetensors.Tensor{Name: "model.layers.0.self_attn.q_norm.weight", DType: safetensors.F32, Shape: []int{16}, Data: make([]byte, 64)})
		}), []string{"q_norm", "unexpected"}},
		{"nan", clone(func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == victim {
					copy(ts[i].Data, []byte{0, 0, 0xc0, 0x7f})
				}
			}
			return ts
		}), []string{victim, "NaN"}},
	}
	// A truncated file.
	trunc := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(base, "config.json"))
	os.WriteFile(filepath.Join(trunc, "config.json"), b, 0o644)
	st, _ := os.ReadFile(filepath.Join(base, "model.safetensors"))
	os.WriteFile(filepath.Join(trunc, "model.safetensors"), st[:len(st)-100], 0o644)
	cases = append(cases, struct {
		name string
		dir  string
		want []string
	}{"truncated", trunc, []string{"truncated", "model.safetensors"}})
	// An unknown architecture.
	arch := t.TempDir()
	os.WriteFile(filepath.Join(arch, "config.json"), []byte(strings.Replace(string(b), Qwen2, "LlamaForCausalLM", 1)), 0o644)
	os.WriteFile(filepath.Join(arch, "model.safetensors"), st, 0o644)
	cases = append(cases, struct {
		name string
		dir  string
		want []string
	}{"architecture", arch, []string{"LlamaForCausalLM", "config.json"}})

	for _, c := range cases {
		_, err := Load(c.dir, Options{Backend: cpu})
		if err == nil {
			t.Errorf("%s: Load accepted a bad checkpoint", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}

// A q8 checkpoint whose scales are missing or misshapen fails by name.
func TestLoadRejectsQ8Scales(t *testing.T) {
	cfg, _ := Preset("tiny")
	cpu := NewCPU(1)
	defer cpu.Close()
	m, _ := NewRandom(cfg, 4, Options{DType: Q8, Backend: cpu})
	base := t.TempDir()
	if err := m.Save(base); err != nil {
		t.Fatal(err)
	}
	const scale = "model.layers.0.mlp.up_proj.weight_scale"
	for name, edit := range map[string]func([]safetensors.Tensor) []safetensors.Tensor{
		"missing": func(ts []safetensors.Tensor) []safetensors.Tensor {
			return slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == scale })
		},
		"shape": func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == scale {
					ts[i].Shape = []int{ts[i].Shape[1], ts[i].Shape[0]}
				}
			}
			return ts
		},
	} {
		f, err := safetensors.Open(filepath.Join(base, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		var ts []safetensors.Tensor
		for _, info := range f.Tensors() {
			_, raw, _ := f.ReadRaw(info.Name)
			ts = append(ts, safetensors.Tensor{Name: info.Name, DType: info.DType, Shape: info.Shape, Data: raw})
		}
		f.Close()
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(base, "config.json"))
		os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
		if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), edit(ts), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir, Options{Backend: cpu}); err == nil || !strings.Contains(err.Error(), scale) {
			t.Errorf("%s scale: err = %v, want one naming %s", name, err, scale)
		}
	}
}
