package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
)

// corpus is mixed English and Chinese live-stream text, so the trained
// vocabulary has multi-byte characters split across byte tokens.
func corpus() []string {
	lines := []string{
		"Welcome to the live room! Today we have a great deal on the red jacket.",
		"How much is the coupon for the blue sneakers? Is there free shipping?",
		"欢迎来到直播间！今天的红色外套有优惠。",
		"这双蓝色运动鞋多少钱？包邮吗？",
		"The price is 199 yuan, and you can use a 20 yuan coupon.",
		"尺码有S、M、L和XL，库存充足。",
		`{"name": "get_price", "arguments": {"item": "jacket", "size": "M"}}`,
		"You are a helpful live-stream host. Answer briefly and call tools when needed.",
	}
	var out []string
	for i := range 20 {
		for _, l := range lines {
			out = append(out, fmt.Sprintf("%s %d", l, i))
		}
	}
	return out
}

// addedTokens are the added tokens of the test vocabulary; like Qwen's,
// the ChatML markers are special and the tags are not.
func addedTokens() []string {
	return []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"}
}

// trainTokenizer trains a small byte-level BPE with Qwen's added tokens.
func trainTokenizer(t testing.TB, vocab int) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus()), tokenizer.TrainConfig{VocabSize: vocab, SpecialTokens: addedTokens()})
	if err != nil {
		t.Fatal(err)
	}
	// Train marks every added token special; Qwen's tags are not.
	data, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	for _, a := range file["added_tokens"].([]any) {
		a := a.(map[string]any)
		if !strings.HasPrefix(a["content"].(string), "<|") {
			a["special"] = false
		}
	}
	data, err = json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	tok, err = tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// randomModel builds a random-weight model of the preset's shape over the
// tokenizer's vocabulary, on its own two-thread backend.
func randomModel(t testing.TB, preset string, tok *tokenizer.Tokenizer, seed uint64) *model.Model {
	t.Helper()
	cfg, err := model.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.VocabSize = tok.VocabSize()
	cfg.MaxPositionEmbeddings = 4096
	if id, ok := tok.TokenID("<|im_end|>"); ok {
		cfg.EOSTokenID = id
	}
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, seed, model.Options{DType: model.F32, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func startEngine(t testing.TB, m *model.Model, tok *tokenizer.Tokenizer, opts Options) *Engine {
	t.Helper()
	e, err := New(m, tok, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
