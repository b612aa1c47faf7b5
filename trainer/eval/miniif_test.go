package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMiniIFUpToDate regenerates Mini-IF from its seed and compares it
// with the committed file (-update rewrites it).
func TestMiniIFUpToDate(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMiniIF(&buf, GenerateMiniIF()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("suites", SuiteMiniIF+".jsonl")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, buf.Bytes()) {
		t.Errorf("%s differs from its generator; run go test ./trainer/eval -run TestMiniIFUpToDate -update if the change is intended", path)
	}
	prompts, err := OpenMiniIF()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range prompts {
		kinds[miniIFCategory(p)]++
	}
	for _, k := range []string{"max_words", "keyword", "forbidden", "lowercase", "uppercase", "json", "bullets", "language", "chitchat", "question"} {
		if kinds[k] == 0 {
			t.Errorf("Mini-IF has no %s prompt: %v", k, kinds)
		}
	}
}

// TestMiniIFScoresReferencesFully: the rule-written reference replies pass
// every check, a fixed reply passes few, and failed generations fail.
func TestMiniIFScoresReferencesFully(t *testing.T) {
	prompts, err := OpenMiniIF()
	if err != nil {
		t.Fatal(err)
	}
	prompts = prompts[:60]
	ref := map[string]string{}
	for _, p := range prompts {
		ref[p.Text] = p.Reference
	}
	ctx := context.Background()
	rep, err := RunMiniIF(ctx, prompts, func(_ context.Context, prompt string, _ int) (string, error) { return ref[prompt], nil }, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Score != 100 || rep.Instructions != 100 || rep.N != 60 {
		t.Errorf("references: score %.1f, instructions %.1f, n %d; want 100, 100, 60", rep.Score, rep.Instructions, rep.N)
	}
	if rep.CI95[0] >= 100 || rep.CI95[1] != 100 {
		t.Errorf("a perfect run still shows its uncertainty, got %v", rep.CI95)
	}
	fixed, err := RunMiniIF(ctx, prompts, func(context.Context, string, int) (string, error) { return "Hello there.", nil }, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Score <= 0 || fixed.Score >= 60 {
		t.Errorf("a fixed reply scores %.1f; want a few prompts passed (short, no forbidden word), far from all", fixed.Score)
	}
	failed, err := RunMiniIF(ctx, prompts, func(context.Context, string, int) (string, error) { return "", errors.New("boom") }, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if failed.Errors != 60 || failed.Score != 0 {
		t.Errorf("failed generations: %d errors, score %.1f", failed.Errors, failed.Score)
	}
}

// TestMiniIFThroughEvaluate runs Mini-IF against a served model: the
// report carries the score, interval and categories, and is saved with its
// items; the expert, which answers no plain prompt, gets a note instead.
func TestMiniIFThroughEvaluate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"the answer is blue."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`)
	}))
	defer srv.Close()
	m, err := OpenModel(srv.URL, "m")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Evaluate(context.Background(), Config{Base: base(t)}, m, Options{Suites: []string{SuiteMiniIF}, Limit: 30, Parallel: 2, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MiniIF) != 1 || len(res.Others) != 1 || res.Others[0] != res.MiniIF[0] {
		t.Fatalf("results %+v", res)
	}
	s := res.MiniIF[0]
	if s.Name != SuiteMiniIF || s.N != 30 || s.Score <= 0 || s.Score >= 100 || s.CI95[0] > s.Score || s.CI95[1] < s.Score || len(s.Categories) < 4 {
		t.Errorf("report = %+v", s)
	}
	items, err := os.ReadFile(filepath.Join(dir, "miniif-items.jsonl"))
	if err != nil || strings.Count(string(items), "\n") != 30 {
		t.Errorf("saved items: %v, %d lines", err, strings.Count(string(items), "\n"))
	}
	expert, err := OpenModel("expert", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err = Evaluate(context.Background(), Config{Base: base(t)}, expert, Options{Suites: []string{SuiteMiniIF}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "miniif: the expert policy only plays the live room") || len(res.Others) != 0 {
		t.Errorf("the expert has no plain-prompt answers; got %+v", res)
	}
}

// FuzzReadMiniIF: any input gives prompts or an error, never a panic, and
// what it accepts has ids and texts.
func FuzzReadMiniIF(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteMiniIF(&buf, GenerateMiniIF()[:3]); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add(`{"id":"a","kind":"question","text":"x","answer":"y","reference":""}`)
	f.Add(`{"id":"a","kind":"instruction","text":"x"}`)
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ReadMiniIF(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.ID == "" || p.Text == "" {
				t.Fatalf("accepted %+v", p)
			}
		}
	})
}
