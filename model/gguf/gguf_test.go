package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/safetensors"
)

// writeTokenizer writes a small byte-level-BPE-shaped tokenizer.json for a
// vocabulary of size: size-10 regular tokens, merges in the pair form, and
// added tokens at size-10, size-9 and size-5 (the ids between unused).
func writeTokenizer(t *testing.T, dir string, size int) {
	t.Helper()
	vocab := map[string]int{}
	for i := range size - 10 {
		vocab[fmt.Sprintf("t%d", i)] = i
	}
	tj := map[string]any{
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"t1", "t2"}, {"t3", "t4"}}},
		"added_tokens": []map[string]any{
			{"id": size - 10, "content": "<|endoftext|>", "special": true},
			{"id": size - 9, "content": "<|im_start|>", "special": true},
			{"id": size - 5, "content": "<tool_call>", "special": false},
		},
	}
	b, _ := json.Marshal(tj)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"chat_template": "{{ messages }}"}`), 0o644)
}

func saveModel(t *testing.T, preset string, dt model.DType) (*model.Model, string) {
	t.Helper()
	cfg, err := model.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cpu := model.NewCPU(1)
	t.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, 5, model.Options{DType: dt, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	writeTokenizer(t, dir, cfg.VocabSize)
	return m, dir
}

func export(t *testing.T, dir string, opts ExportOptions) *File {
	t.Helper()
	var buf bytes.Buffer
	if err := Export(&buf, dir, opts); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func decode(t *testing.T, typ TensorType, raw []byte) []float32 {
	t.Helper()
	switch typ {
	case F32:
		v, _ := safetensors.DecodeFloat32(safetensors.F32, raw)
		return v
	case F16:
		v, _ := safetensors.DecodeFloat32(safetensors.F16, raw)
		return v
	case BF16:
		v, _ := safetensors.DecodeFloat32(safetensors.BF16, raw)
		return v
	case Q8_0:
		var out []float32
		for b := 0; b < len(raw); b += 2 + q8Block {
			d := safetensors.HalfToFloat32(binary.LittleEndian.Uint16(raw[b:]))
			for _, q := range raw[b+2 : b+2+q8Block] {
				out = append(out, d*float32(int8(q)))
			}
		}
		return out
	}
	t.Fatalf("no decoder for %s", typ)
	return nil
}

func TestExportQwen2(t *testing.T) {
	m, dir := saveModel(t, "tiny", model.F32)
	f := export(t, dir, ExportOptions{Name: "tiny"})
	if f.Version != 3 || f.Alignment != 32 || f.DataOffset%32 != 0 {
		t.Fatalf("version %d, alignment %d, data offset %d", f.Version, f.Alignment, f.DataOffset)
	}
	c := m.Config
	want := map[string]any{
		"general.architecture":                   "qwen2",
		"general.name":                           "tiny",
		"general.file_type":                      uint32(0),
		"qwen2.context_length":                   uint32(c.MaxPositionEmbeddings),
		"qwen2.embedding_length":                 uint32(c.HiddenSize),
		"qwen2.block_count":                      uint32(c.NumLayers),
		"qwen2.feed_forward_length":              uint32(c.IntermediateSize),
		"qwen2.attention.head_count":             uint32(c.NumHeads),
		"qwen2.attention.head_count_kv":          uint32(c.NumKVHeads),
		"qwen2.rope.freq_base":                   float32(c.RopeTheta),
		"qwen2.attention.layer_norm_rms_epsilon": float32(c.RMSNormEps),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "qwen2",
		"tokenizer.ggml.eos_token_id":            uint32(c.EOSTokenID),
		"tokenizer.ggml.padding_token_id":        uint32(290),
		"tokenizer.ggml.add_bos_token":           false,
		"tokenizer.chat_template":                "{{ messages }}",
		"general.alignment":                      uint32(32),
	}
	for k, v := range want {
		got, ok := f.Value(k)
		if !ok || got != v {
			t.Errorf("%s = %v (%T), want %v (%T)", k, got, got, v, v)
		}
	}
	toks, _ := f.Value("tokenizer.ggml.tokens")
	types, _ := f.Value("tokenizer.ggml.token_type")
	merges, _ := f.Value("tokenizer.ggml.merges")
	tl, tt := toks.([]string), types.([]int32)
	if len(tl) != c.VocabSize || len(tt) != c.VocabSize {
		t.Fatalf("%d tokens, %d types, want %d", len(tl), len(tt), c.VocabSize)
	}
	if tl[7] != "t7" || tt[7] != 1 || tl[291] != "<|im_start|>" || tt[291] != 3 || tl[295] != "<tool_call>" || tt[295] != 4 || tl[293] != "[PAD293]" || tt[293] != 5 {
		t.Errorf("tokens/types wrong: %q %d, %q %d, %q %d, %q %d", tl[7], tt[7], tl[291], tt[291], tl[295], tt[295], tl[293], tt[293])
	}
	if !slices.Equal(merges.([]string), []string{"t1 t2", "t3 t4"}) {
		t.Errorf("merges = %q", merges)
	}
	// Tied embeddings: no output.weight; every other tensor present with
	// GGML dimension order and the exact values.
	if _, ok := f.Tensor("output.weight"); ok {
		t.Error("tied model exported an output.weight")
	}
	checks := map[string]*model.Weight{
		"token_embd.weight":        m.Embed,
		"blk.1.attn_q.weight":      m.Layers[1].Q,
		"blk.0.attn_k.weight":      m.Layers[0].K,
		"blk.1.attn_output.weight": m.Layers[1].O,
		"blk.0.ffn_down.weight":    m.Layers[0].Down,
	}
	for name, w := range checks {
		info, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s missing", name)
		}
		if !slices.Equal(info.Dims, []uint64{uint64(w.Cols()), uint64(w.Rows())}) || info.Type != F32 {
			t.Errorf("%s: dims %v type %s", name, info.Dims, info.Type)
		}
		raw, err := f.ReadTensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(decode(t, F32, raw), w.Float32()) {
			t.Errorf("%s: data differs", name)
		}
	}
	raw, _ := f.ReadTensor("blk.0.attn_v.bias")
	if !slices.Equal(decode(t, F32, raw), m.Layers[0].VBias) {
		t.Error("blk.0.attn_v.bias differs")
	}
	if n := len(f.Tensors); n != 1+1+c.NumLayers*12 {
		t.Errorf("%d tensors, want %d", n, 2+c.NumLayers*12)
	}
}

func TestExportTypes(t *testing.T) {
	m, dir := saveModel(t, "tiny-qwen3", model.F32)
	for _, typ := range []TensorType{F16, BF16, Q8_0} {
		f := export(t, dir, ExportOptions{Type: &typ})
		for _, name := range []string{"output.weight", "blk.1.attn_q_norm.weight", "blk.0.ffn_up.weight"} {
			if _, ok := f.Tensor(name); !ok {
				t.Fatalf("%s: missing %s", typ, name)
			}
		}
		if v, _ := f.Value("qwen3.attention.key_length"); v != uint32(m.Config.HeadDim) {
			t.Errorf("qwen3.attention.key_length = %v", v)
		}
		info, _ := f.Tensor("blk.0.ffn_up.weight")
		norm, _ := f.Tensor("blk.0.attn_k_norm.weight")
		if norm.Type != F32 {
			t.Errorf("norm exported as %s, want F32", norm.Type)
		}
		wantType := typ
		if typ == Q8_0 && m.Config.HiddenSize%32 != 0 {
			wantType = F16
		}
		if info.Type != wantType {
			t.Fatalf("ffn_up exported as %s, want %s", info.Type, wantType)
		}
		raw, _ := f.ReadTensor("blk.0.ffn_up.weight")
		got, want := decode(t, info.Type, raw), m.Layers[0].Up.Float32()
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 0.01*math.Abs(float64(want[i]))+1e-3 {
				t.Fatalf("%s: element %d = %g, want %g", typ, i, got[i], want[i])
			}
		}
	}
}

// Our Q8 checkpoints become Q8_0 blocks with the same int8 weights.
func TestExportQ8Checkpoint(t *testing.T) {
	m, dir := saveModel(t, "tiny", model.Q8)
	f := export(t, dir, ExportOptions{})
	info, _ := f.Tensor("blk.0.ffn_gate.weight")
	if info.Type != Q8_0 {
		t.Fatalf("type %s, want Q8_0", info.Type)
	}
	if v, _ := f.Value("general.file_type"); v != uint32(7) {
		t.Errorf("general.file_type = %v, want 7 (MOSTLY_Q8_0)", v)
	}
	raw, _ := f.ReadTensor("blk.0.ffn_gate.weight")
	got, want := decode(t, Q8_0, raw), m.Layers[0].Gate.Float32()
	for i := range want {
		// The only change is the scale rounded to f16 (11 significant bits).
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-3*math.Abs(float64(want[i]))+1e-9 {
			t.Fatalf("element %d = %g, want %g", i, got[i], want[i])
		}
	}
}

func TestExportRealTokenizer(t *testing.T) {
	tok := filepath.Join("..", "..", "..", "shared", "data", "tokenizers", "qwen3", "tokenizer.json")
	if _, err := os.Stat(tok); err != nil {
		t.Skipf("shared Qwen3 tokenizer not available (%v)", err)
	}
	cfg, _ := model.Preset("qwen3-0.6b")
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim = 8, 8, 1, 2, 1, 4
	cpu := model.NewCPU(1)
	defer cpu.Close()
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.BF16, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	f := export(t, dir, ExportOptions{Tokenizer: tok})
	toks, _ := f.Value("tokenizer.ggml.tokens")
	types, _ := f.Value("tokenizer.ggml.token_type")
	merges, _ := f.Value("tokenizer.ggml.merges")
	tl, tt, ml := toks.([]string), types.([]int32), merges.([]string)
	if len(tl) != 151936 || len(ml) != 151387 {
		t.Fatalf("%d tokens and %d merges, want 151936 and 151387", len(tl), len(ml))
	}
	if tl[151644] != "<|im_start|>" || tt[151644] != 3 || tl[151936-1] != "[PAD151935]" || tt[151935] != 5 {
		t.Errorf("special tokens: %q %d, %q %d", tl[151644], tt[151644], tl[151935], tt[151935])
	}
	if ml[0] != "Ġ Ġ" {
		t.Errorf("first merge %q, want \"Ġ Ġ\"", ml[0])
	}
	if tmpl, _ := f.Value("tokenizer.chat_template"); !strings.Contains(fmt.Sprint(tmpl), "im_start") {
		t.Error("chat template not taken from tokenizer_config.json")
	}
	info, _ := f.Tensor("token_embd.weight")
	if info.Type != BF16 {
		t.Errorf("bf16 checkpoint exported as %s", info.Type)
	}
}

func TestExportErrors(t *testing.T) {
	_, dir := saveModel(t, "tiny", model.F32)
	os.Remove(filepath.Join(dir, "tokenizer.json"))
	if err := Export(&bytes.Buffer{}, dir, ExportOptions{}); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("missing tokenizer: err = %v", err)
	}
	_, dir = saveModel(t, "tiny", model.F32)
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"model":{"type":"BPE","vocab":{"a":5000},"merges":[]}}`), 0o644)
	if err := Export(&bytes.Buffer{}, dir, ExportOptions{}); err == nil || !strings.Contains(err.Error(), "5000") {
		t.Errorf("token id beyond the vocabulary: err = %v", err)
	}
}

func TestExportRejectsQwen3Bias(t *testing.T) {
	cfg, _ := model.Preset("tiny-qwen3")
	cfg.AttentionBias = true
	cpu := model.NewCPU(1)
	defer cpu.Close()
	m, err := model.NewRandom(cfg, 1, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	writeTokenizer(t, dir, cfg.VocabSize)
	if err := Export(&bytes.Buffer{}, dir, ExportOptions{}); err == nil || !strings.Contains(err.Error(), "attention_bias") {
		t.Errorf("Qwen3 with biases: err = %v", err)
	}
}

func TestReadRejectsTruncated(t *testing.T) {
	_, dir := saveModel(t, "tiny", model.F32)
	var buf bytes.Buffer
	if err := Export(&buf, dir, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, n := range []int{0, 3, 10, 100, len(b) / 2, len(b) - 1} {
		if _, err := Read(bytes.NewReader(b[:n]), int64(n)); err == nil {
			t.Errorf("Read accepted a file truncated to %d of %d bytes", n, len(b))
		}
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, []KV{{"a", uint32(1)}, {"b", []string{"x", "y"}}, {"c", "s"}}, []Tensor{{
		Info:  TensorInfo{Name: "t", Dims: []uint64{4, 2}, Type: F32},
		Write: func(w io.Writer) error { _, err := w.Write(make([]byte, 32)); return err },
	}})
	f.Add(buf.Bytes())
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, ti := range file.Tensors {
			if _, err := file.ReadTensor(ti.Name); err != nil {
				t.Fatalf("accepted tensor %q that cannot be read: %v", ti.Name, err)
			}
		}
	})
}

// TestExportWritesQwen3ChatTemplate: a checkpoint without a
// tokenizer_config.json (the bundled model's) is exported with Qwen3's
// template, the one the in-process engine renders, so that llama-server
// --jinja renders the harness's tools as the engine does; ChatTemplate
// overrides it.
func TestExportWritesQwen3ChatTemplate(t *testing.T) {
	_, dir := saveModel(t, "tiny", model.F32)
	if err := os.Remove(filepath.Join(dir, "tokenizer_config.json")); err != nil {
		t.Fatal(err)
	}
	tmpl, _ := export(t, dir, ExportOptions{}).Value("tokenizer.chat_template")
	if tmpl != qwen3ChatTemplate {
		t.Fatalf("chat template = %.80q…, want Qwen3's", tmpl)
	}
	// The bytes are Qwen3's (tokenizer_config.json of Qwen/Qwen3-*,
	// the template model/chat's golden cases were rendered through).
	if sum := fmt.Sprintf("%x", sha256.Sum256([]byte(qwen3ChatTemplate))); sum != "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5" {
		t.Errorf("embedded template's sha256 %s is not Qwen3's", sum)
	}
	for _, part := range []string{"{%- if tools %}", "tool | tojson", "<tool_call>\\n{\\\"name\\\": <function-name>", "message.role == \"tool\"",
		"<tool_response>", "tool_call.arguments | tojson", "enable_thinking is defined and enable_thinking is false"} {
		if !strings.Contains(qwen3ChatTemplate, part) {
			t.Errorf("template lacks %q", part)
		}
	}
	cfgPath := filepath.Join("..", "..", "..", "shared", "data", "tokenizers", "qwen3", "tokenizer_config.json")
	if b, err := os.ReadFile(cfgPath); err == nil {
		var tc struct {
			ChatTemplate string `json:"chat_template"`
		}
		if err := json.Unmarshal(b, &tc); err != nil || tc.ChatTemplate != qwen3ChatTemplate {
			t.Errorf("embedded template differs from %s (%v)", cfgPath, err)
		}
	}

	// An operator's own template replaces it.
	if got, _ := export(t, dir, ExportOptions{ChatTemplate: "{{ bos_token }}"}).Value("tokenizer.chat_template"); got != "{{ bos_token }}" {
		t.Errorf("ChatTemplate option gave %q", got)
	}
}
