package constrain

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/sample"
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

// TestQwen3VocabCalls runs the constraint over the real Qwen3 vocabulary:
// the allowed sets agree with feeding every token in a range of states, and
// calls sampled from random logits under the masks are valid.
func TestQwen3VocabCalls(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads the 11 MB Qwen3 tokenizer and runs no concurrent code: skipped in -short and -race runs")
	}
	toks := qwen3Vocab(t)
	vocab := NewVocabulary(toks)
	g, err := Compile(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range benchStates {
		c := NewToolCallConstraint(vocab, g)
		if err := c.AcceptText(s.prefix); err != nil {
			t.Fatal(err)
		}
		checkAgainstFeeding(t, c, c.Allowed(nil), s.prefix)
	}

	schemas := validators(t)
	r := rand.New(rand.NewPCG(31, 32))
	logits := make([]float32, len(toks))
	// A model that tends to close what it opens.
	var closing []int
	for id, b := range toks {
		switch string(b) {
		case `"`, `",`, `"}`, `}`, `}}`, `]`, "</tool_call>", ` "`, `":`:
			closing = append(closing, id)
		}
	}
	for i := range 12 {
		smp, err := sample.New(sample.Config{Temperature: 1, TopK: 50, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		c := NewToolCallConstraint(vocab, g)
		var text []byte
		var allowed TokenSet
		for steps := 0; !c.Done(); steps++ {
			if steps > 2000 {
				t.Fatalf("call %d did not finish: %q", i, text)
			}
			for j := range logits {
				logits[j] = float32(r.NormFloat64())
			}
			for _, id := range closing {
				logits[id] += 4
			}
			allowed = c.Allowed(allowed)
			id, err := smp.Sample(logits, nil, allowed)
			if err != nil {
				t.Fatalf("call %d after %q: %v", i, text, err)
			}
			if err := c.Accept(id); err != nil {
				t.Fatal(err)
			}
			text = append(text, toks[id]...)
		}
		checkCall(t, strings.TrimLeft(string(text), " \n"), schemas)
	}
}
