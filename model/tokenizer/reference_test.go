package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// qwen3Dir returns ../shared/data/tokenizers/qwen3 relative to the module
// root and whether the shared folder exists.
func qwen3Dir() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		return shared, false
	}
	return filepath.Join(shared, "data", "tokenizers", "qwen3"), true
}

// sharedQwen3 returns the Qwen3 data folder or skips the test when the shared
// folder is absent.
func sharedQwen3(t testing.TB) string {
	t.Helper()
	dir, ok := qwen3Dir()
	if !ok {
		t.Skipf("shared data folder %s is absent; the Qwen3 reference tests need it", dir)
	}
	return dir
}

var qwen3 struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// loadQwen3 loads the real Qwen3 tokenizer once per test binary.
func loadQwen3(t testing.TB) *Tokenizer {
	t.Helper()
	dir := sharedQwen3(t)
	qwen3.once.Do(func() { qwen3.tok, qwen3.err = Load(dir) })
	if qwen3.err != nil {
		t.Fatal(qwen3.err)
	}
	return qwen3.tok
}

type referenceLine struct {
	Text    string `json:"text"`
	IDs     []int  `json:"ids"`
	Decoded string `json:"decoded"`
}

func readReference(t testing.TB) []referenceLine {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedQwen3(t), "reference.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []referenceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r referenceLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reference.jsonl line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestQwen3Reference(t *testing.T) {
	tok := loadQwen3(t)
	lines := readReference(t)
	if len(lines) != 400 {
		t.Fatalf("reference.jsonl has %d lines, want 400", len(lines))
	}
	for i, r := range lines {
		got := tok.EncodeWithSpecial(r.Text)
		if !slices.Equal(got, r.IDs) {
			t.Errorf("line %d %q:\n got  %v\n want %v", i+1, r.Text, got, r.IDs)
			continue
		}
		if dec := tok.Decode(r.IDs); dec != r.Decoded {
			t.Errorf("line %d: Decode = %q, want %q", i+1, dec, r.Decoded)
		}
	}
}
