package mtp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
)

// A whole MTP run on a tiny checkpoint writes a checkpoint whose heads
// load, the metrics and the acceptance report.
func TestTrainRun(t *testing.T) {
	ctx := context.Background()
	lines := []string{"How much is the red jacket?", "Is there free shipping?", "Welcome to the live room!", "The price is 199 yuan."}
	tok, err := tokenizer.Train(ctx, slices.Values(lines), tokenizer.TrainConfig{VocabSize: 300,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := model.Preset("tiny")
	cfg.VocabSize = tok.VocabSize()
	cpu := model.NewCPU(1)
	defer cpu.Close()
	m, err := model.NewRandom(cfg, 1, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	init := filepath.Join(dir, "policy")
	if err := m.Save(init); err != nil {
		t.Fatal(err)
	}
	if err := tok.Save(init); err != nil {
		t.Fatal(err)
	}
	var prompts bytes.Buffer
	for _, l := range lines {
		b, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": l}, {"role": "assistant", "content": "ok"}}})
		prompts.Write(append(b, '\n'))
	}
	promptsPath := filepath.Join(dir, "prompts.jsonl")
	os.WriteFile(promptsPath, prompts.Bytes(), 0o644)
	out := filepath.Join(dir, "run")
	var stdout bytes.Buffer
	run := DefaultConfig()
	run.Init, run.Prompts = init, promptsPath
	run.Heads, run.Rollouts, run.Gen, run.Eval, run.Steps, run.Batch = 2, 6, 10, 1, 4, 16
	if err := TrainRun(ctx, run, out, &stdout); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "held-out greedy acceptance with 2 heads") {
		t.Errorf("output:\n%s", stdout.String())
	}
	got, err := model.Load(filepath.Join(out, "checkpoint"), model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if got.Config.MTPHeads != 2 || len(got.MTP) != 2 {
		t.Fatalf("checkpoint has %d heads", len(got.MTP))
	}
	var sum Summary
	b, err := os.ReadFile(filepath.Join(out, "acceptance.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil || sum.After.Steps == 0 {
		t.Fatalf("acceptance.json: %v %s", err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl")); bytes.Count(b, []byte("\n")) != 4 {
		t.Errorf("metrics.jsonl:\n%s", b)
	}

	if err := TrainRun(ctx, run, out, &stdout); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("a second run in the same folder: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no init", func(c *Config) { c.Init = "" }, "(init)"},
		{"no heads", func(c *Config) { c.Heads = 0 }, "heads 0"},
		{"negative draft vocabulary", func(c *Config) { c.DraftVocab = -1 }, "draft_vocab -1"},
		{"no rollouts", func(c *Config) { c.Rollouts = 0 }, "rollouts 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := run
			tt.edit(&bad)
			if err := TrainRun(ctx, bad, filepath.Join(dir, "bad"), &stdout); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to name %q", err, tt.want)
			}
		})
	}
	os.WriteFile(promptsPath, []byte("{not json\n"), 0o644)
	err = TrainRun(ctx, run, filepath.Join(dir, "z"), &stdout)
	if err == nil || !strings.Contains(err.Error(), "prompts.jsonl:1") {
		t.Errorf("bad prompts: %v", err)
	}
}

// readPrompts never panics, and every prompt it returns is non-empty.
func FuzzReadPrompts(f *testing.F) {
	f.Add([]byte(`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}` + "\n"))
	f.Add([]byte(`{"messages": [{"role": "assistant", "content": "x"}]}`))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "p.jsonl")
		os.WriteFile(path, data, 0o644)
		prompts, err := readPrompts(path, func(s string) []int { return make([]int, len(s)) })
		if err == nil && len(prompts) == 0 {
			t.Fatal("no prompts and no error")
		}
		for _, p := range prompts {
			if len(p) == 0 {
				t.Fatal("empty prompt")
			}
		}
	})
}
