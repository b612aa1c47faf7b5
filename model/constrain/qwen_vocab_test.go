package constrain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// qwen3Vocab reads the token byte strings of the real Qwen3 vocabulary from
// ../shared/data/tokenizers/qwen3/tokenizer.json (relative to the repository
// root), undoing the byte-level BPE's byte-to-character mapping. Special added
// tokens get no bytes, as a decoder would pass them; <tool_call> and
// </tool_call> are ordinary added tokens in Qwen3 and keep their text.
func qwen3Vocab(tb testing.TB) [][]byte {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.mod above the package directory")
		}
		dir = parent
	}
	path := filepath.Join(dir, "..", "shared", "data", "tokenizers", "qwen3", "tokenizer.json")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		tb.Skipf("Qwen3 tokenizer not present at %s", path)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var file struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	// GPT-2's bytes_to_unicode: printable bytes map to themselves, the
	// others to code points from 256 up, in byte order.
	var charToByte = map[rune]byte{}
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			charToByte[rune(b)] = byte(b)
		} else {
			charToByte[rune(256+n)] = byte(b)
			n++
		}
	}
	size := 0
	for _, id := range file.Model.Vocab {
		size = max(size, id+1)
	}
	for _, t := range file.AddedTokens {
		size = max(size, t.ID+1)
	}
	toks := make([][]byte, size)
	for s, id := range file.Model.Vocab {
		var b []byte
		for _, r := range s {
			c, ok := charToByte[r]
			if !ok {
				tb.Fatalf("%s: token %q has character %q outside the byte mapping", path, s, r)
			}
			b = append(b, c)
		}
		toks[id] = b
	}
	for _, t := range file.AddedTokens {
		if t.Special {
			toks[t.ID] = nil
		} else {
			toks[t.ID] = []byte(t.Content)
		}
	}
	return toks
}

// BenchmarkAllowedQwen3 measures the masking step over the real Qwen3
// vocabulary (151,669 ids) in the same states as BenchmarkAllowed, without
// the cache, and a whole call step by step with it.
func BenchmarkAllowedQwen3(b *testing.B) {
	toks := qwen3Vocab(b)
	vocab := NewVocabulary(toks)
	g, err := Compile(testTools)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range benchStates {
		b.Run(s.name, func(b *testing.B) {
			c := NewToolCallConstraint(vocab, g)
			if err := c.AcceptText(s.prefix); err != nil {
				b.Fatal(err)
			}
			var set TokenSet
			cpu := startCPU()
			for b.Loop() {
				c.cache = nil
				set = c.Allowed(set)
			}
			cpu.report(b, b.N, "cpu-µs/op")
			b.ReportMetric(float64(set.Len()), "allowed")
		})
	}
	b.Run("call_steps", func(b *testing.B) { benchCallSteps(b, toks, vocab, g) })
}
