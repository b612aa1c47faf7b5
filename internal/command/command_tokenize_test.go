package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/tokenizer"
)

// trainedTokenizer is a small tokenizer the tokenizer package's tests keep.
const trainedTokenizer = "../../model/tokenizer/testdata/trained"

// trainCorpus is live-room text in both scripts, special tokens included.
var trainCorpus = []string{
	"这个口红多少钱？适合敏感肌吗",
	"What size should I buy if I'm 170cm and 60kg?",
	"主播好美！今天有什么优惠吗？",
	"Does it ship to Shanghai? 包邮吗",
	"<|im_start|>user\nhow much is the red lipstick?<|im_end|>",
	"保质期多久？能退换吗？七天无理由吗。",
}

func runCommand(t *testing.T, cmd Func, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := cmd(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func TestTokenize(t *testing.T) {
	tok, err := tokenizer.Load(trainedTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"text": "<|im_start|>user\n这个口红多少钱？"}` + "\n\n" + `{"text": "I'm 170cm"}` + "\n"
	out, err := runCommand(t, Tokenize, in, "--tokenizer", trainedTokenizer)
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
	out, err = runCommand(t, Tokenize, `{"text":"<|im_start|>"}`, "--tokenizer", trainedTokenizer+"/tokenizer.json", "--special=false")
	if err != nil || strings.Contains(out, `"ids":[1]`) {
		t.Fatalf("--special=false: %q, %v", out, err)
	}

	// --decode turns the ids back into text.
	idsJSON, _ := json.Marshal(first.IDs)
	out, err = runCommand(t, Tokenize, `{"ids":`+string(idsJSON)+`}`, "--tokenizer", trainedTokenizer, "--decode")
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

	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"text not a string", `{"text":"ok"}` + "\n" + `{"text": 5}`, nil, "stdin line 2"},
		{"not JSON", `{"text":"ok"}` + "\n\n" + `not json`, nil, "stdin line 3"},
		{"no text", `{"ids":[1]}`, nil, `stdin line 1: no "text" string`},
		{"no ids", `{"text":"x"}`, []string{"--decode"}, `stdin line 1: no "ids" array`},
		{"id out of vocabulary", `{"ids":[99999]}`, []string{"--decode"}, "stdin line 1: id 99999 is not in the vocabulary"},
		{"ids not numbers", `{"ids":["a"]}`, []string{"--decode"}, "stdin line 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, Tokenize, tt.stdin, append([]string{"--tokenizer", trainedTokenizer}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := runCommand(t, Tokenize, "", "--decode"); err == nil || !strings.Contains(err.Error(), "--tokenizer is required") {
		t.Errorf("missing --tokenizer: %v", err)
	}
	if _, err := runCommand(t, Tokenize, "", "--tokenizer", "testdata/nope"); err == nil {
		t.Error("missing tokenizer file accepted")
	}
}

func TestTokenizerTrain(t *testing.T) {
	dir := t.TempDir()
	var plain, jsonl strings.Builder
	for range 10 {
		for _, s := range trainCorpus {
			plain.WriteString(strings.ReplaceAll(s, "\n", " ") + "\n")
			b, _ := json.Marshal(map[string]string{"text": s})
			jsonl.Write(b)
			jsonl.WriteByte('\n')
		}
	}
	for name, corpus := range map[string]string{"plain.txt": plain.String(), "corpus.jsonl": jsonl.String()} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(corpus), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+".tok")
			msg, err := runCommand(t, Tokenizer, "", "train", "--corpus", path, "--vocab-size", "400", "--out", out)
			if err != nil {
				t.Fatal(err)
			}
			want := "from 60 texts: " + filepath.Join(out, "tokenizer.json") + "\n"
			if !strings.HasPrefix(msg, "trained 400 tokens (") || !strings.HasSuffix(msg, want) {
				t.Fatalf("output %q, want trained 400 tokens … %q", msg, want)
			}
			tok, err := tokenizer.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if tok.VocabSize() != 400 {
				t.Fatalf("vocab %d, want 400", tok.VocabSize())
			}
			for _, s := range trainCorpus {
				if got := tok.Decode(tok.EncodeWithSpecial(s)); got != s {
					t.Fatalf("round trip of %q gives %q", s, got)
				}
			}
		})
	}
	// --corpus - reads standard input.
	if _, err := runCommand(t, Tokenizer, plain.String(), "train", "--corpus", "-", "--vocab-size", "300", "--out", filepath.Join(dir, "stdin")); err != nil {
		t.Fatalf("--corpus -: %v", err)
	}
	if _, err := tokenizer.Load(filepath.Join(dir, "stdin")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"text":"a"}`+"\n"+`{"txt":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		args      []string
		want      string
		wantUsage bool
	}{
		{"bad JSONL line", []string{"train", "--corpus", bad, "--vocab-size", "300", "--out", dir}, "tokenizer train: " + bad + " line 2", false},
		{"missing flags", []string{"train", "--corpus", bad}, "--corpus, --vocab-size and --out are required", false},
		{"vocabulary too small", []string{"train", "--corpus", bad, "--vocab-size", "10", "--out", dir}, "vocab size 10", false},
		{"no subcommand", nil, "livehat tokenizer train", true},
		{"unknown subcommand", []string{"grow"}, "livehat tokenizer train", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, Tokenizer, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || IsUsage(err) != tt.wantUsage {
				t.Errorf("err = %v, want one naming %q (usage error: %v)", err, tt.want, tt.wantUsage)
			}
		})
	}
}
