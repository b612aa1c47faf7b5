package gguf

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/safetensors"
)

// ExportOptions control Export.
type ExportOptions struct {
	// Type is the tensor type of the matrices (F32, F16, BF16 or Q8_0).
	// Zero keeps the checkpoint's own type (F32, F16 or BF16; our Q8
	// checkpoints become Q8_0). Vectors (norms, biases) are always F32, as
	// llama.cpp expects.
	Type *TensorType
	// Tokenizer is the tokenizer.json to embed; empty means the one in the
	// checkpoint directory. llama.cpp needs the vocabulary to load a model.
	Tokenizer string
	// Name is general.name; empty means the directory's base name.
	Name string
	// ChatTemplate is the Jinja chat template to write as
	// tokenizer.chat_template. Empty means the chat_template of the
	// tokenizer's tokenizer_config.json, or, without one, Qwen3's template:
	// the one the in-process engine renders (model/chat reproduces it byte
	// for byte), with tools, so a server such as llama-server --jinja
	// renders the same prompt and reports tool support.
	ChatTemplate string
}

// qwen3ChatTemplate is the chat_template of Qwen3's tokenizer_config.json.
//
//go:embed qwen3_chat_template.jinja
var qwen3ChatTemplate string

// ExportFile writes the checkpoint in dir as a GGUF file at path.
func ExportFile(path, dir string, opts ExportOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	err = Export(f, dir, opts)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gguf: %w", cerr)
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// Export writes the Hugging Face checkpoint in dir (config.json, safetensors
// weights, tokenizer.json) as GGUF v3 with llama.cpp's qwen2 or qwen3
// architecture metadata and tensor names.
func Export(w io.Writer, dir string, opts ExportOptions) error {
	cfg, err := model.ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	arch := "qwen2"
	if cfg.Architecture == model.Qwen3 {
		arch = "qwen3"
		if cfg.AttentionBias {
			// llama.cpp's qwen3 graph has no projection biases and rejects
			// files with tensors it does not load.
			return fmt.Errorf("gguf: %s: a Qwen3 with attention_bias cannot be expressed in llama.cpp's qwen3 architecture", dir)
		}
	}
	ck, err := safetensors.OpenCheckpoint(dir)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer ck.Close()

	tokPath := opts.Tokenizer
	if tokPath == "" {
		tokPath = filepath.Join(dir, "tokenizer.json")
	}
	vocab, err := readVocab(tokPath, cfg.VocabSize)
	if err != nil {
		return err
	}

	var tensors []Tensor
	var matrixType TensorType
	for _, name := range ck.Names() {
		if strings.HasSuffix(name, ".rotary_emb.inv_freq") || strings.HasSuffix(name, ".weight_scale") {
			continue
		}
		if name == "lm_head.weight" && cfg.TieWordEmbeddings {
			continue
		}
		gname, err := tensorName(name)
		if err != nil {
			f, _ := ck.Lookup(name)
			return fmt.Errorf("gguf: %s: %w", f.Path(), err)
		}
		t, err := exportTensor(ck, name, gname, opts.Type)
		if err != nil {
			return err
		}
		if len(t.Info.Dims) == 2 {
			matrixType = t.Info.Type
		}
		tensors = append(tensors, t)
	}

	name := opts.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(dir))
	}
	fileType := map[TensorType]uint32{F32: 0, F16: 1, Q8_0: 7, BF16: 32}[matrixType]
	kvs := []KV{
		{"general.architecture", arch},
		{"general.name", name},
		{"general.file_type", fileType},
		{arch + ".context_length", uint32(cfg.MaxPositionEmbeddings)},
		{arch + ".embedding_length", uint32(cfg.HiddenSize)},
		{arch + ".block_count", uint32(cfg.NumLayers)},
		{arch + ".feed_forward_length", uint32(cfg.IntermediateSize)},
		{arch + ".attention.head_count", uint32(cfg.NumHeads)},
		{arch + ".attention.head_count_kv", uint32(cfg.NumKVHeads)},
		{arch + ".rope.freq_base", float32(cfg.RopeTheta)},
		{arch + ".attention.layer_norm_rms_epsilon", float32(cfg.RMSNormEps)},
	}
	if arch == "qwen3" {
		kvs = append(kvs,
			KV{arch + ".attention.key_length", uint32(cfg.HeadDim)},
			KV{arch + ".attention.value_length", uint32(cfg.HeadDim)})
	}
	kvs = append(kvs,
		KV{"tokenizer.ggml.model", "gpt2"},
		KV{"tokenizer.ggml.pre", "qwen2"},
		KV{"tokenizer.ggml.tokens", vocab.tokens},
		KV{"tokenizer.ggml.token_type", vocab.types},
		KV{"tokenizer.ggml.merges", vocab.merges},
	)
	if cfg.EOSTokenID >= 0 {
		kvs = append(kvs, KV{"tokenizer.ggml.eos_token_id", uint32(cfg.EOSTokenID)})
	}
	if cfg.BOSTokenID >= 0 {
		kvs = append(kvs, KV{"tokenizer.ggml.bos_token_id", uint32(cfg.BOSTokenID)})
	}
	if vocab.pad >= 0 {
		kvs = append(kvs, KV{"tokenizer.ggml.padding_token_id", uint32(vocab.pad)})
	}
	kvs = append(kvs, KV{"tokenizer.ggml.add_bos_token", false})
	tmpl := opts.ChatTemplate
	if tmpl == "" {
		tmpl = chatTemplate(filepath.Join(filepath.Dir(tokPath), "tokenizer_config.json"))
	}
	if tmpl == "" {
		tmpl = qwen3ChatTemplate
	}
	kvs = append(kvs, KV{"tokenizer.chat_template", tmpl})
	return Write(w, kvs, tensors)
}

var layerName = regexp.MustCompile(`^model\.layers\.(\d+)\.(.+)$`)

// tensorName maps a Hugging Face tensor name to llama.cpp's.
func tensorName(hf string) (string, error) {
	switch hf {
	case "model.embed_tokens.weight":
		return "token_embd.weight", nil
	case "model.norm.weight":
		return "output_norm.weight", nil
	case "lm_head.weight":
		return "output.weight", nil
	}
	m := layerName.FindStringSubmatch(hf)
	if m == nil {
		return "", fmt.Errorf("tensor %q has no GGUF name", hf)
	}
	layer, _ := strconv.Atoi(m[1])
	parts := map[string]string{
		"input_layernorm.weight":          "attn_norm.weight",
		"self_attn.q_proj.weight":         "attn_q.weight",
		"self_attn.q_proj.bias":           "attn_q.bias",
		"self_attn.k_proj.weight":         "attn_k.weight",
		"self_attn.k_proj.bias":           "attn_k.bias",
		"self_attn.v_proj.weight":         "attn_v.weight",
		"self_attn.v_proj.bias":           "attn_v.bias",
		"self_attn.o_proj.weight":         "attn_output.weight",
		"self_attn.o_proj.bias":           "attn_output.bias",
		"self_attn.q_norm.weight":         "attn_q_norm.weight",
		"self_attn.k_norm.weight":         "attn_k_norm.weight",
		"post_attention_layernorm.weight": "ffn_norm.weight",
		"mlp.gate_proj.weight":            "ffn_gate.weight",
		"mlp.up_proj.weight":              "ffn_up.weight",
		"mlp.down_proj.weight":            "ffn_down.weight",
	}
	suffix, ok := parts[m[2]]
	if !ok {
		return "", fmt.Errorf("tensor %q has no GGUF name", hf)
	}
	return fmt.Sprintf("blk.%d.%s", layer, suffix), nil
}

// exportTensor describes one tensor and how to write it in its GGUF type.
func exportTensor(ck *safetensors.Checkpoint, name, gname string, want *TensorType) (Tensor, error) {
	f, _ := ck.Lookup(name)
	info, _ := f.Tensor(name)
	fail := func(err error) (Tensor, error) {
		return Tensor{}, fmt.Errorf("gguf: %s: tensor %q: %w", f.Path(), name, err)
	}
	if len(info.Shape) != 1 && len(info.Shape) != 2 {
		return fail(fmt.Errorf("shape %v is neither a vector nor a matrix", info.Shape))
	}
	dims := make([]uint64, len(info.Shape))
	for i, d := range info.Shape {
		dims[len(dims)-1-i] = uint64(d) // GGML lists the innermost dimension first
	}
	cols := info.Shape[len(info.Shape)-1]

	var src TensorType
	switch info.DType {
	case safetensors.F32:
		src = F32
	case safetensors.F16:
		src = F16
	case safetensors.BF16:
		src = BF16
	case safetensors.I8:
		src = Q8_0
	default:
		return fail(fmt.Errorf("dtype %s cannot be exported", info.DType))
	}
	dst := src
	switch {
	case len(dims) == 1:
		dst = F32
	case want != nil:
		dst = *want
	}
	if dst == Q8_0 && cols%q8Block != 0 {
		dst = F16 // Q8_0 rows must be whole blocks
	}
	if _, err := dst.Size(int64(cols)); err != nil {
		return fail(err)
	}

	t := Tensor{Info: TensorInfo{Name: gname, Dims: dims, Type: dst}}
	if dst == src && src != Q8_0 {
		t.Write = func(w io.Writer) error {
			_, raw, err := f.ReadRaw(name)
			if err != nil {
				return err
			}
			_, err = w.Write(raw)
			return err
		}
		return t, nil
	}
	if src == Q8_0 && dst == Q8_0 {
		t.Write = func(w io.Writer) error {
			q, scales, err := readQ8(ck, f, name)
			if err != nil {
				return err
			}
			return writeQ8Blocks(w, q, scales)
		}
		return t, nil
	}
	t.Write = func(w io.Writer) error {
		var v []float32
		var err error
		if src == Q8_0 {
			q, scales, err := readQ8(ck, f, name)
			if err != nil {
				return err
			}
			v = make([]float32, len(q))
			bpr := (cols + q8Block - 1) / q8Block
			for i, x := range q {
				r, c := i/cols, i%cols
				v[i] = float32(x) * scales[r*bpr+c/q8Block]
			}
		} else if _, v, err = f.ReadFloat32(name); err != nil {
			return err
		}
		return writeFloats(w, dst, v)
	}
	return t, nil
}

// readQ8 reads an int8 weight and its block scales (our Q8 checkpoints).
func readQ8(ck *safetensors.Checkpoint, f *safetensors.File, name string) ([]int8, []float32, error) {
	_, raw, err := f.ReadRaw(name)
	if err != nil {
		return nil, nil, err
	}
	info, _ := f.Tensor(name)
	scaleName := name + "_scale"
	sf, ok := ck.Lookup(scaleName)
	if !ok {
		return nil, nil, fmt.Errorf("int8 tensor %q lacks its scales %q", name, scaleName)
	}
	_, scales, err := sf.ReadFloat32(scaleName)
	if err != nil {
		return nil, nil, err
	}
	rows, cols := info.Shape[0], info.Shape[1]
	if len(scales) != rows*((cols+q8Block-1)/q8Block) {
		return nil, nil, fmt.Errorf("tensor %q has %d scales for a %d×%d matrix", scaleName, len(scales), rows, cols)
	}
	q := make([]int8, len(raw))
	for i, b := range raw {
		q[i] = int8(b)
	}
	return q, scales, nil
}

// writeQ8Blocks writes Q8_0 blocks: an f16 scale, then 32 int8 weights.
func writeQ8Blocks(w io.Writer, q []int8, scales []float32) error {
	buf := make([]byte, 0, len(scales)*(2+q8Block))
	for b, s := range scales {
		buf = binary.LittleEndian.AppendUint16(buf, safetensors.Float32ToHalf(s))
		for _, x := range q[b*q8Block : (b+1)*q8Block] {
			buf = append(buf, byte(x))
		}
	}
	_, err := w.Write(buf)
	return err
}

// writeFloats encodes v as t (F32, F16, BF16 or Q8_0, the last as llama.cpp
// quantizes: scale = max|x|/127 per block, weights rounded to nearest).
func writeFloats(w io.Writer, t TensorType, v []float32) error {
	var buf []byte
	switch t {
	case F32:
		buf, _ = safetensors.EncodeFloat32(safetensors.F32, v)
	case F16:
		buf, _ = safetensors.EncodeFloat32(safetensors.F16, v)
	case BF16:
		buf, _ = safetensors.EncodeFloat32(safetensors.BF16, v)
	case Q8_0:
		q := make([]int8, len(v))
		scales := make([]float32, len(v)/q8Block)
		for b := range scales {
			blk := v[b*q8Block : (b+1)*q8Block]
			var amax float32
			for _, x := range blk {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			d := amax / 127
			scales[b] = d
			if d == 0 {
				continue
			}
			for i, x := range blk {
				q[b*q8Block+i] = int8(math.Round(float64(x / d)))
			}
		}
		return writeQ8Blocks(w, q, scales)
	default:
		return fmt.Errorf("cannot encode %s", t)
	}
	_, err := w.Write(buf)
	return err
}

// vocab is the tokenizer metadata llama.cpp reads for a byte-level BPE.
type vocab struct {
	tokens []string
	types  []int32
	merges []string
	pad    int
}

// Token types of tokenizer.ggml.token_type.
const (
	tokenNormal      = 1
	tokenControl     = 3
	tokenUserDefined = 4
	tokenUnused      = 5
)

// readVocab reads the vocabulary and merges of a Hugging Face byte-level BPE
// tokenizer.json, padded to the model's vocabulary size.
func readVocab(path string, size int) (vocab, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return vocab{}, fmt.Errorf("gguf: %s not found: llama.cpp needs the tokenizer to load a model", path)
	}
	if err != nil {
		return vocab{}, fmt.Errorf("gguf: %w", err)
	}
	var tj struct {
		Model struct {
			Type   string          `json:"type"`
			Vocab  map[string]int  `json:"vocab"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		return vocab{}, fmt.Errorf("gguf: %s: %w", path, err)
	}
	if tj.Model.Type != "BPE" {
		return vocab{}, fmt.Errorf("gguf: %s: model.type %q, want BPE", path, tj.Model.Type)
	}
	v := vocab{tokens: make([]string, size), types: make([]int32, size), pad: -1}
	set := make([]bool, size)
	put := func(tok string, id int, typ int32) error {
		if id < 0 || id >= size {
			return fmt.Errorf("gguf: %s: token %q has id %d outside the model's vocabulary of %d", path, tok, id, size)
		}
		v.tokens[id], v.types[id], set[id] = tok, typ, true
		return nil
	}
	for tok, id := range tj.Model.Vocab {
		if err := put(tok, id, tokenNormal); err != nil {
			return vocab{}, err
		}
	}
	for _, at := range tj.AddedTokens {
		typ := int32(tokenUserDefined)
		if at.Special {
			typ = tokenControl
		}
		if err := put(at.Content, at.ID, typ); err != nil {
			return vocab{}, err
		}
		if at.Content == "<|endoftext|>" {
			v.pad = at.ID
		}
	}
	for id := range v.tokens {
		if !set[id] {
			v.tokens[id], v.types[id] = fmt.Sprintf("[PAD%d]", id), tokenUnused
		}
	}
	// Merges are "a b" strings in older files and ["a", "b"] pairs in newer ones.
	var merges []string
	if err := json.Unmarshal(tj.Model.Merges, &merges); err != nil {
		var pairs [][]string
		if err := json.Unmarshal(tj.Model.Merges, &pairs); err != nil {
			return vocab{}, fmt.Errorf("gguf: %s: model.merges is neither strings nor pairs", path)
		}
		merges = make([]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return vocab{}, fmt.Errorf("gguf: %s: merge %d has %d parts", path, i, len(p))
			}
			merges[i] = p[0] + " " + p[1]
		}
	}
	v.merges = merges
	return v, nil
}

// chatTemplate returns the chat_template of a tokenizer_config.json, or ""
// when the file or the field is absent.
func chatTemplate(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var tc struct {
		ChatTemplate string `json:"chat_template"`
	}
	if json.Unmarshal(b, &tc) != nil {
		return ""
	}
	return tc.ChatTemplate
}
