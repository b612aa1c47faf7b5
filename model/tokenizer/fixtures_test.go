package tokenizer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

func readJSONL(t *testing.T, path string, fn func(line []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func checkReference(t *testing.T, tok *Tokenizer, name string, r referenceLine) {
	t.Helper()
	if got := tok.EncodeWithSpecial(r.Text); !slices.Equal(got, r.IDs) {
		t.Errorf("%s: %q:\n got  %v\n want %v", name, r.Text, got, r.IDs)
	} else if dec := tok.Decode(r.IDs); dec != r.Decoded {
		t.Errorf("%s: Decode = %q, want %q", name, dec, r.Decoded)
	}
}

// TestTrainedFixture needs no shared data: Hugging Face's encodings of our
// trained tokenizer.json.
func TestTrainedFixture(t *testing.T) {
	tok, err := Load("testdata/trained")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	readJSONL(t, "testdata/trained-reference.jsonl", func(line []byte) {
		var r referenceLine
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		checkReference(t, tok, "trained", r)
		n++
	})
	if n != 400 {
		t.Fatalf("%d reference lines, want 400", n)
	}
}

func TestTrainReproducesFixture(t *testing.T) {
	var texts []string
	for _, r := range readReference(t) {
		texts = append(texts, r.Text)
	}
	tok, err := Train(context.Background(), slices.Values(texts), TrainConfig{VocabSize: 1200, MinFrequency: 2,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/trained/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("training on the reference texts no longer reproduces testdata/trained/tokenizer.json")
	}
}

// TestHFVariants runs Hugging Face's encodings of modified Qwen3 files: the
// GPT-2 and Llama-3 splits, the added-token flags, and Split patterns without
// look-ahead (re1–re5) that go through Go's regexp with \s, \d, \w rewritten.
func TestHFVariants(t *testing.T) {
	qwen := loadQwen3(t)
	var tok *Tokenizer
	variant := ""
	counts := map[string]int{}
	readJSONL(t, "testdata/hf_variants.jsonl", func(line []byte) {
		var head struct {
			Variant      *string          `json:"variant"`
			PreTokenizer json.RawMessage  `json:"pre_tokenizer"`
			Normalizer   json.RawMessage  `json:"normalizer"`
			AddedTokens  []addedTokenJSON `json:"added_tokens"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			t.Fatal(err)
		}
		if head.Variant != nil {
			// Same vocabulary and merges as Qwen3, other sections replaced.
			variant = *head.Variant
			fs, added := qwen.file, qwen.added
			if head.PreTokenizer != nil {
				fs.preTokenizer = compact(head.PreTokenizer)
			}
			if head.Normalizer != nil {
				fs.normalizer = compact(head.Normalizer)
			}
			if head.AddedTokens != nil {
				var err error
				if added, err = addedFromJSON(head.AddedTokens); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if tok, err = build(qwen.vocab, qwen.merges, added, fs); err != nil {
				t.Fatalf("variant %s: %v", variant, err)
			}
			return
		}
		var r referenceLine
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		checkReference(t, tok, variant, r)
		counts[variant]++
	})
	want := map[string]int{"gpt2": 250, "gpt2p": 250, "llama3": 250, "flags": 250,
		"re1": 120, "re2": 120, "re3": 120, "re4": 120, "re5": 120}
	for v, n := range want {
		if counts[v] != n {
			t.Errorf("variant %s: %d lines, want %d", v, counts[v], n)
		}
	}
}
