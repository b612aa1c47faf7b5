package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCorpus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"plain lines", "你好\n\nhello world\n", []string{"你好", "hello world"}, ""},
		{"JSONL", `{"text":"a\nb"}` + "\n  \n" + `{"text":"<|im_start|>"}`, []string{"a\nb", "<|im_start|>"}, ""},
		{"a JSON line in a plain corpus is text", "plain first\n" + `{"text":"x"}`, []string{"plain first", `{"text":"x"}`}, ""},
		{"JSONL without text", `{"text":"a"}` + "\n" + `{"txt":"b"}`, []string{"a"}, `corpus.jsonl line 2: no "text" field`},
		{"JSONL broken line", `{"text":"a"}` + "\n\n" + `{"text":`, []string{"a"}, "corpus.jsonl line 3: "},
		{"empty", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCorpus(strings.NewReader(tt.in), "corpus.jsonl")
			got := slices.Collect(c.Texts())
			if !slices.Equal(got, tt.want) || c.Count() != len(tt.want) {
				t.Errorf("texts %q (count %d), want %q", got, c.Count(), tt.want)
			}
			switch err := c.Err(); {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCorpusReadError(t *testing.T) {
	boom := errors.New("disk gone")
	c := NewCorpus(iotest.ErrReader(boom), "-")
	for range c.Texts() {
		t.Fatal("a text from a reader that fails")
	}
	if err := c.Err(); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "- line 1: ") {
		t.Errorf("err = %v, want the read error at line 1 of -", err)
	}
}

// TestCorpusStops: a consumer that stops early reads no further and gets
// no error.
func TestCorpusStops(t *testing.T) {
	c := NewCorpus(strings.NewReader("a\nb\nc\n"), "x")
	for text := range c.Texts() {
		if text != "a" {
			t.Fatalf("first text %q", text)
		}
		break
	}
	if c.Count() != 1 || c.Err() != nil {
		t.Errorf("count %d, err %v; want 1, nil", c.Count(), c.Err())
	}
}

// FuzzCorpus: any input yields texts or one error naming a line, never a
// panic, and a plain corpus yields exactly its non-blank lines.
func FuzzCorpus(f *testing.F) {
	f.Add("你好\nhello\n")
	f.Add(`{"text":"a"}` + "\n" + `{"text":5}`)
	f.Add("\n\n{\n")
	f.Fuzz(func(t *testing.T, in string) {
		c := NewCorpus(strings.NewReader(in), "f")
		texts := slices.Collect(c.Texts())
		if c.Count() != len(texts) {
			t.Fatalf("count %d for %d texts", c.Count(), len(texts))
		}
		if err := c.Err(); err != nil {
			if !strings.HasPrefix(err.Error(), "f line ") {
				t.Fatalf("error %q names no line", err)
			}
			return
		}
		var lines []string
		for line := range strings.Lines(in) {
			if line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"); strings.TrimSpace(line) != "" {
				lines = append(lines, line)
			}
		}
		if len(lines) > 0 && !looksLikeJSONL(lines[0]) && !slices.Equal(texts, lines) {
			t.Fatalf("plain corpus %q gave %q, want %q", in, texts, lines)
		}
	})
}
