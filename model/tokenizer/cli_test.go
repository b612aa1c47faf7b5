package tokenizer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func runCLI(t *testing.T, main func(context.Context, []string, io.Reader, io.Writer, io.Writer) error, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func TestTokenizeMain(t *testing.T) {
	tok, err := Load("testdata/trained")
	if err != nil {
		t.Fatal(err)
	}
	in := `{"text": "<|im_start|>user\n这个口红多少钱？"}` + "\n\n" + `{"text": "I'm 170cm"}` + "\n"
	out, err := runCLI(t, TokenizeMain, in, "--tokenizer", "testdata/trained")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d output lines: %q", len(lines), out)
	}
	var first struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Text != "<|im_start|>user\n这个口红多少钱？" || !slices.Equal(first.IDs, tok.EncodeWithSpecial(first.Text)) || first.IDs[0] != 1 {
		t.Fatalf("first line: %s", lines[0])
	}
	if !strings.HasPrefix(lines[0], `{"text":"<|im_start|>`) {
		t.Fatalf("want the text field first and unescaped: %s", lines[0])
	}

	// --special=false leaves special tokens as text.
	out, err = runCLI(t, TokenizeMain, `{"text":"<|im_start|>"}`, "--tokenizer", "testdata/trained/tokenizer.json", "--special=false")
	if err != nil || strings.Contains(out, `"ids":[1]`) {
		t.Fatalf("--special=false: %q, %v", out, err)
	}

	// --decode turns the ids back into text.
	idsJSON, _ := json.Marshal(first.IDs)
	out, err = runCLI(t, TokenizeMain, `{"ids":`+string(idsJSON)+`}`, "--tokenizer", "testdata/trained", "--decode")
	if err != nil {
		t.Fatal(err)
	}
	var dec struct {
		IDs  []int  `json:"ids"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(out), &dec); err != nil || dec.Text != first.Text || !strings.HasPrefix(out, `{"ids":`) {
		t.Fatalf("decode output %q (%v)", out, err)
	}

	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{`{"text":"ok"}` + "\n" + `{"text": 5}`, nil, "stdin line 2"},
		{`{"text":"ok"}` + "\n\n" + `not json`, nil, "stdin line 3"},
		{`{"ids":[1]}`, nil, `stdin line 1: no "text" string`},
		{`{"text":"x"}`, []string{"--decode"}, `stdin line 1: no "ids" array`},
		{`{"ids":[99999]}`, []string{"--decode"}, "stdin line 1: id 99999 is not in the vocabulary"},
		{`{"ids":["a"]}`, []string{"--decode"}, "stdin line 1"},
	} {
		_, err := runCLI(t, TokenizeMain, c.stdin, append([]string{"--tokenizer", "testdata/trained"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("stdin %q: error %v, want %q", c.stdin, err, c.want)
		}
	}
	if _, err := runCLI(t, TokenizeMain, "", "--decode"); err == nil || !strings.Contains(err.Error(), "--tokenizer is required") {
		t.Errorf("missing --tokenizer: %v", err)
	}
	if _, err := runCLI(t, TokenizeMain, "", "--tokenizer", "testdata/nope"); err == nil {
		t.Error("missing tokenizer file accepted")
	}
}

func TestTrainTokenizerMain(t *testing.T) {
	dir := t.TempDir()
	var plain, jsonl strings.Builder
	for range 10 {
		for _, s := range smallCorpus {
			plain.WriteString(strings.ReplaceAll(s, "\n", " ") + "\n")
			b, _ := json.Marshal(map[string]string{"text": s})
			jsonl.Write(b)
			jsonl.WriteByte('\n')
		}
	}
	for name, corpus := range map[string]string{"plain.txt": plain.String(), "corpus.jsonl": jsonl.String()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(corpus), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".tok")
		msg, err := runCLI(t, TrainTokenizerMain, "", "--corpus", path, "--vocab-size", "400", "--out", out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(msg, "tokenizer.json") {
			t.Fatalf("%s: output %q", name, msg)
		}
		tok, err := Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if tok.VocabSize() != 400 {
			t.Fatalf("%s: vocab %d, want 400", name, tok.VocabSize())
		}
		for _, s := range smallCorpus {
			if got := tok.Decode(tok.EncodeWithSpecial(s)); got != s {
				t.Fatalf("%s: round trip of %q gives %q", name, s, got)
			}
		}
	}
	// --corpus - reads standard input.
	if _, err := runCLI(t, TrainTokenizerMain, plain.String(), "--corpus", "-", "--vocab-size", "300", "--out", filepath.Join(dir, "stdin")); err != nil {
		t.Fatalf("--corpus -: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "stdin")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"text":"a"}`+"\n"+`{"txt":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, TrainTokenizerMain, "", "--corpus", bad, "--vocab-size", "300", "--out", dir); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad JSONL corpus: %v", err)
	}
	if _, err := runCLI(t, TrainTokenizerMain, "", "--corpus", bad); err == nil {
		t.Error("missing --vocab-size and --out accepted")
	}
	if _, err := runCLI(t, TrainTokenizerMain, "", "--corpus", bad, "--vocab-size", "10", "--out", dir); err == nil {
		t.Error("vocab size 10 accepted")
	}
}
