package runfolder

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
)

func TestStepIndicesCoverEachEpoch(t *testing.T) {
	const n, batch = 10, 4
	var seen []int
	for step := range 5 { // 20 draws: two epochs
		got := StepIndices(n, 7, step, batch)
		if !slices.Equal(got, StepIndices(n, 7, step, batch)) {
			t.Fatal("the same step drew different indices")
		}
		seen = append(seen, got...)
	}
	for e := range 2 {
		epoch := slices.Clone(seen[e*n : (e+1)*n])
		slices.Sort(epoch)
		for i, v := range epoch {
			if v != i {
				t.Fatalf("epoch %d draws %v, not a permutation", e, seen[e*n:(e+1)*n])
			}
		}
	}
}

func TestCheckpointRoundTripAndMetricsTrim(t *testing.T) {
	out := t.TempDir()
	cpu := model.NewCPU(1)
	defer cpu.Close()
	cfg, _ := model.Preset("tiny")
	base, err := model.NewRandom(cfg, 1, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := nn.New(base, cpu)
	opt := nn.NewAdamW(nn.DefaultAdamW())
	m.ZeroGrad()
	if _, err := m.Backward(context.Background(), []nn.Example{{Tokens: []int{1, 2, 3, 4}}}, 1); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := opt.Step(m.Params(), 1e-3); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Train(context.Background(), slices.Values([]string{"hello world", "hello there"}), tokenizer.TrainConfig{VocabSize: 270})
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveCheckpoint(out, m, opt, tok, 1); err != nil {
		t.Fatal(err)
	}
	// One step with two updates each.
	got, gotOpt, step, err := LoadCheckpoint(out, cpu, 2)
	if err != nil || step != 1 || gotOpt.Steps() != 2 {
		t.Fatalf("load: step %d, %v", step, err)
	}
	if !slices.Equal(got.Params()[0].Value, m.Params()[0].Value) {
		t.Error("weights changed through the checkpoint")
	}
	if _, _, _, err := LoadCheckpoint(out, cpu, 1); err == nil {
		t.Error("a step of one update accepted an optimizer at update 2")
	}
	// Saving again replaces the checkpoint and leaves no temporary folder.
	if err := SaveCheckpoint(out, m, opt, tok, 1); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != CheckpointDir {
		t.Errorf("run folder holds %v", entries)
	}
	lines := "{\"step\":1}\n{\"step\":2}\n{\"step\":3}\n{\"ste"
	os.WriteFile(filepath.Join(out, MetricsFile), []byte(lines), 0o644)
	var progress bytes.Buffer
	l, err := OpenLog(out, 2, 3, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Step(Metrics{Step: 3, Loss: 1}, "loss 1"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(filepath.Join(out, MetricsFile))
	if !strings.HasPrefix(string(data), "{\"step\":1}\n{\"step\":2}\n{\"step\":3,") || strings.Count(string(data), "\n") != 3 || !strings.Contains(progress.String(), "step 3/3  loss 1") {
		t.Errorf("trimmed metrics: %q", data)
	}
}

func TestConfigHelpers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	type cfg struct {
		Stage string `json:"stage"`
		Optimization
	}
	os.WriteFile(path, []byte(`{"stage": "rl", "steps": 3, "lr": 0.1}`), 0o644)
	var c cfg
	if err := ReadConfig(path, &c); err != nil || c.Steps != 3 || c.LR != 0.1 {
		t.Fatalf("read: %+v, %v", c, err)
	}
	if s, err := ConfigStage(path); err != nil || s != "rl" {
		t.Errorf("stage %q, %v", s, err)
	}
	os.WriteFile(path, []byte(`{"stepz": 3}`), 0o644)
	if err := ReadConfig(path, &c); err == nil || !strings.Contains(err.Error(), "stepz") {
		t.Errorf("unknown field: %v", err)
	}
	if err := StartConfig(dir, c, false); err == nil {
		t.Error("a new run started in a folder that holds one")
	}
	o := Optimization{Steps: 4, MicroTokens: 8, LR: 1e-3, SaveEvery: 3, EvalEvery: 2}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !o.Saves(3) || o.Saves(2) || !o.Saves(4) || !o.Evaluates(2) || o.Evaluates(3) {
		t.Error("save and eval schedule")
	}
	for _, bad := range []Optimization{{Steps: 0, MicroTokens: 8, LR: 1}, {Steps: 1, MicroTokens: 8, LR: 0}, {Steps: 1, MicroTokens: 8, LR: 1, MinLRRatio: 2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 2, 4)
	p.Step(3, "loss 1.5")
	p.Note("eval %d", 7)
	p.Step(4, "loss 1.2")
	want := []string{"step 3/4  loss 1.5  ETA", "eval 7", "step 4/4  loss 1.2  ETA 0s"}
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("progress %q lacks %q", b.String(), w)
		}
	}
}
