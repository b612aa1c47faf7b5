package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func trainedFileBytes(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/trained/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withSection returns the trained fixture with one top-level section replaced
// (or, when value is "", deleted); model.* keys edit the model object.
func withSection(t *testing.T, key, value string) []byte {
	t.Helper()
	var f map[string]json.RawMessage
	if err := json.Unmarshal(trainedFileBytes(t), &f); err != nil {
		t.Fatal(err)
	}
	target := f
	var model map[string]json.RawMessage
	if sub, ok := strings.CutPrefix(key, "model."); ok {
		if err := json.Unmarshal(f["model"], &model); err != nil {
			t.Fatal(err)
		}
		target, key = model, sub
	}
	if value == "" {
		delete(target, key)
	} else {
		target[key] = json.RawMessage(value)
	}
	if model != nil {
		b, err := json.Marshal(model)
		if err != nil {
			t.Fatal(err)
		}
		f["model"] = b
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		key, value, want string
	}{
		{"version", `"2.0"`, `version is "2.0"`},
		{"version", "", "version is missing"},
		{"model", "", "model: missing"},
		{"model.type", `"WordPiece"`, `model.type "WordPiece" is not supported`},
		{"model.vocab", "", "model.vocab: missing"},
		{"model.merges", "", "model.merges: missing"},
		{"model.merges", `["a b c"]`, `model.merges[0]: "a b c" is not two tokens`},
		{"model.merges", `[["a"]]`, "model.merges[0]: a pair needs 2 tokens"},
		{"model.merges", `[["Ā","ā"]]`, `model.merges[0]: the merged token "Āā" is not in model.vocab`},
		{"model.merges", `[["zz","b"]]`, `model.merges[0]: "zz" is not in model.vocab`},
		{"model.merges", `7`, "model.merges"},
		{"model.vocab", `{"a":0,"b":0}`, "model.vocab: id 0 is used by both"},
		{"model.vocab", `{"a":-1}`, `model.vocab: token "a" has id -1`},
		{"model.vocab", `{"a":99999999}`, "outside"},
		{"model.dropout", `0.1`, "model.dropout: 0.1 is not supported"},
		{"model.unk_token", `"<unk>"`, `model.unk_token "<unk>" is not in model.vocab`},
		{"model.continuing_subword_prefix", `"##"`, "continuing_subword_prefix"},
		{"normalizer", `{"type":"Lowercase"}`, `normalizer: type "Lowercase" is not supported`},
		{"normalizer", `{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Strip"}]}`, `normalizer.normalizers[1]: type "Strip"`},
		{"pre_tokenizer", "", "pre_tokenizer: missing"},
		{"pre_tokenizer", `{"type":"Whitespace"}`, `pre_tokenizer: type "Whitespace" is not supported`},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\s+(?!\\S)"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false}]}`,
			`pre_tokenizer.pretokenizers[0]: regex "\\s+(?!\\S)" is not supported`},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"a"},"behavior":"Removed","invert":false},{"type":"ByteLevel","add_prefix_space":false}]}`,
			`Split behavior "Removed"`},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[{"type":"ByteLevel","add_prefix_space":false},{"type":"Split","pattern":{"Regex":"a"},"behavior":"Isolated"}]}`,
			"ByteLevel must be the last"},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"[a\\S]+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false}]}`,
			`\S inside a character class has no RE2 equivalent`},
		{"pre_tokenizer", `{"type":"ByteLevel"}`, "lacks add_prefix_space"},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[]}`, "empty Sequence"},
		{"decoder", "", "decoder: missing"},
		{"decoder", `{"type":"WordPiece"}`, `decoder: type "WordPiece" is not supported`},
		{"added_tokens", `[{"id":0}]`, "added_tokens[0]: missing id or content"},
		{"added_tokens", `[{"id":5,"content":"<|endoftext|>"}]`, `added_tokens[0]: "<|endoftext|>" has id 5, but Hugging Face assigns it 0`},
		{"added_tokens", `[{"id":0,"content":"<|endoftext|>"},{"id":0,"content":"<|endoftext|>"}]`, "already added"},
		{"added_tokens", `[{"id":5000,"content":"<new>"}]`, `"<new>" has id 5000, but Hugging Face assigns it 1139 (the next free id)`},
		{"added_tokens", `[{"id":1139,"content":""}]`, "added_tokens[0]: empty content"},
	}
	for _, c := range cases {
		_, err := Parse(withSection(t, c.key, c.value))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %s: error %v, want one containing %q", c.key, c.value, err, c.want)
		}
	}
	if _, err := Parse([]byte("{")); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("truncated JSON: %v", err)
	}
	if _, err := Load("testdata/does-not-exist.json"); err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("missing file: %v", err)
	}
}

// TestParseAccepts covers the layouts other tools write that must load.
func TestParseAccepts(t *testing.T) {
	tok, err := Parse(trainedFileBytes(t))
	if err != nil {
		t.Fatal(err)
	}
	var legacy []string
	for _, m := range tok.merges {
		legacy = append(legacy, m[0]+" "+m[1])
	}
	lm, _ := json.Marshal(legacy)
	for _, c := range []struct{ key, value string }{
		{"model.merges", string(lm)},
		{"model.type", ""},
		{"model.dropout", "0"},
		{"normalizer", "null"},
		{"normalizer", `{"type":"Sequence","normalizers":[{"type":"NFKC"}]}`},
		{"pre_tokenizer", `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`},
		{"pre_tokenizer", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]}`},
		{"post_processor", `{"type":"TemplateProcessing","single":[]}`},
		{"truncation", `{"max_length":8}`},
	} {
		other, err := Parse(withSection(t, c.key, c.value))
		if err != nil {
			t.Errorf("%s = %s: %v", c.key, c.value, err)
			continue
		}
		text := "你好 world, it's 12 o'clock"
		got := other.Decode(other.EncodeWithSpecial(text))
		if strings.Contains(c.value, `"add_prefix_space":true`) {
			got = strings.TrimPrefix(got, " ") // the prefix space stays in the decoded text, as in Hugging Face
		}
		if got != text {
			t.Errorf("%s = %s: round trip gives %q", c.key, c.value, got)
		}
	}
}

// TestUnknownAndByteFallback pins Hugging Face's behaviour (checked with the
// library) for vocabularies that lack byte characters: byte fallback, the
// unknown token with and without fusing, dropping, and ignore_merges.
func TestUnknownAndByteFallback(t *testing.T) {
	const base = `{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,
"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":true},
"post_processor":null,"decoder":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":true},
"model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":true,"ignore_merges":false,
"vocab":{"a":0,"b":1,"ab":2,"<unk>":3,"<0x63>":4,"Ġ":5,"Ġab":6,"Ġa":7},"merges":["a b","Ġ a","Ġa b"]}}`
	const text = "ab cab ddab  dcd a"
	for _, c := range []struct {
		edit [2]string
		want []int
	}{
		{[2]string{"", ""}, []int{2, 5, 4, 2, 5, 3, 2, 5, 5, 4, 3, 7}},
		{[2]string{`"fuse_unk":true,"byte_fallback":true`, `"fuse_unk":false,"byte_fallback":false`}, []int{2, 5, 3, 2, 5, 3, 3, 2, 5, 5, 3, 3, 3, 7}},
		{[2]string{`"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":true`,
			`"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false`}, []int{2, 5, 2, 5, 2, 5, 5, 7}},
		// Only "a b" is a merge: " a" becomes Ġa (7) through ignore_merges alone.
		{[2]string{`"ignore_merges":false,
"vocab":{"a":0,"b":1,"ab":2,"<unk>":3,"<0x63>":4,"Ġ":5,"Ġab":6,"Ġa":7},"merges":["a b","Ġ a","Ġa b"]`, `"ignore_merges":true,
"vocab":{"a":0,"b":1,"ab":2,"<unk>":3,"<0x63>":4,"Ġ":5,"Ġab":6,"Ġa":7},"merges":["a b"]`}, []int{2, 5, 4, 2, 5, 3, 2, 5, 5, 4, 3, 7}},
	} {
		data := base
		if c.edit[0] != "" {
			data = strings.Replace(base, c.edit[0], c.edit[1], 1)
		}
		tok, err := Parse([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.EncodeWithSpecial(text); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.edit[1], got, c.want)
		}
	}
}
