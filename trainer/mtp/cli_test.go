package mtp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
)

// A whole `livehat train --stage mtp` run on a tiny checkpoint writes a
// checkpoint whose heads load, the metrics and the acceptance report.
func TestTrainMain(t *testing.T) {
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
	args := []string{"--stage", "mtp", "--init", init, "--prompts", promptsPath, "--out", out,
		"--heads", "2", "--rollouts", "6", "--gen", "10", "--eval", "1", "--steps", "4", "--batch", "16"}
	if err := TrainMain(ctx, args, nil, &stdout, &stdout); err != nil {
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

	for _, bad := range [][]string{
		{"--stage", "mtp", "--out", filepath.Join(dir, "x")},
		{"--stage", "mtp", "--out", out, "--resume"},
		{"--stage", "mtp", "--init", init, "--prompts", promptsPath, "--out", filepath.Join(dir, "y"), "--heads", "0"},
	} {
		var ue *harness.UsageError
		if err := TrainMain(ctx, bad, nil, &stdout, &stdout); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
	os.WriteFile(promptsPath, []byte("{not json\n"), 0o644)
	err = TrainMain(ctx, []string{"--stage", "mtp", "--init", init, "--prompts", promptsPath, "--out", filepath.Join(dir, "z")}, nil, &stdout, &stdout)
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
