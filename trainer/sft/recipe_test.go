package sft

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/safetensors"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// TestRecipeRunsEveryStageAndResumes runs the smoke recipe end to end
// (tokenizer, base, two SFT phases, OPD with the base as teacher, RL, and
// two continuations of the second SFT phase, the first stopped early, and
// RL after them),
// checks that the exported model loads in the engine with the recipe's
// tokenizer, that running the command again trains nothing, and that
// --until sft --augment=false trains the Fixed-Harness SFT row in its own
// folders and stops there.
func TestRecipeRunsEveryStageAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains five small runs; skipped with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"--recipe", "smoke", "--out", dir, "--threads", "1"}
	if err := TrainMain(ctx, args, nil, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	times, err := os.ReadFile(filepath.Join(dir, recipeTimes))
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"tokenizer", "base", "sft1", "sft2", "opd", "rl", "sft3", "sft4", "rl4"} {
		if !strings.Contains(string(times), `"stage":"`+stage+`"`) {
			t.Errorf("no time logged for %s:\n%s", stage, times)
		}
	}
	for _, st := range Recipes()["smoke"].Stages {
		_, last := st.lastStep(1)
		if !stageDone(filepath.Join(dir, st.Name), last) {
			t.Errorf("stage %s did not reach its %d steps", st.Name, last)
		}
	}
	// sft3 starts from sft2 (not from rl, the stage before it) and stops
	// at step 2 of a 4-step schedule: its learning rate at step 2 is that
	// schedule's, not the end of a 2-step one.
	sft3, err := readRunConfig(filepath.Join(dir, "sft3"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "sft2", checkpointDir); sft3.Init != want || sft3.Steps != 4 || sft3.StopAt != 2 {
		t.Errorf("sft3 run: init %s, steps %d, stop at %d; want %s, 4, 2", sft3.Init, sft3.Steps, sft3.StopAt, want)
	}
	if st, err := runfolder.ReadState(filepath.Join(dir, "sft3")); err != nil || st.Step != 2 {
		t.Errorf("sft3 checkpoint: %+v, %v; want step 2", st, err)
	}
	metrics, _ := os.ReadFile(filepath.Join(dir, "sft3", runfolder.MetricsFile))
	if n := strings.Count(string(metrics), `"step":`); n != 2 {
		t.Errorf("sft3 logged %d steps, want 2:\n%s", n, metrics)
	}
	eng, err := engine.Load(filepath.Join(dir, "model"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	exported, err := safetensors.Open(filepath.Join(dir, "model", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer exported.Close()
	trained, err := safetensors.Open(filepath.Join(dir, "rl4", checkpointDir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer trained.Close()
	for _, info := range trained.Tensors() {
		got, ok := exported.Tensor(info.Name)
		if !ok || got.DType != safetensors.BF16 {
			t.Fatalf("exported %s: %+v, want a BF16 tensor", info.Name, got)
		}
		_, want, _ := trained.ReadFloat32(info.Name)
		_, have, err := exported.ReadFloat32(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(float64(have[i]-want[i])) > math.Abs(float64(want[i]))/128 {
				t.Fatalf("exported %s[%d] = %g, trained %g: more than bf16 rounding apart", info.Name, i, have[i], want[i])
			}
		}
	}
	recipeTok, _ := os.ReadFile(filepath.Join(dir, tokenizerFile))
	modelTok, _ := os.ReadFile(filepath.Join(dir, "model", tokenizerFile))
	if !bytes.Equal(recipeTok, modelTok) {
		t.Error("the exported model's tokenizer is not the recipe's")
	}

	out.Reset()
	if err := TrainMain(ctx, args, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "already trained"); n != 8 {
		t.Errorf("a second run trained again:\n%s", out.String())
	}
	again, _ := os.ReadFile(filepath.Join(dir, recipeTimes))
	if !bytes.Equal(times, again) {
		t.Error("a second run logged new stage times")
	}

	fixed := t.TempDir()
	out.Reset()
	if err := TrainMain(ctx, []string{"--recipe", "smoke", "--out", fixed, "--until", "sft", "--augment=false", "--threads", "1"}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(fixed, "sft2-fixed", checkpointDir)) || fileExists(filepath.Join(fixed, "opd")) || fileExists(filepath.Join(fixed, "opd-fixed")) ||
		!fileExists(filepath.Join(fixed, "model-fixed", "model.safetensors")) || fileExists(filepath.Join(fixed, "model")) {
		t.Errorf("--until sft --augment=false: %s", out.String())
	}
	if times, _ := os.ReadFile(filepath.Join(fixed, recipeTimes)); !strings.Contains(string(times), `"stage":"sft2-fixed"`) {
		t.Errorf("the fixed row's stage times are not logged under their folders:\n%s", times)
	}
	data, err := readTrajectories(filepath.Join(fixed, "sft2-fixed", dataFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range data {
		if tr.Record != nil {
			t.Fatalf("%s: Fixed-Harness SFT trained under an HSA variant", tr.ID)
		}
	}
}

func TestRecipeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--recipe", "nope", "--out", t.TempDir()},
		{"--recipe", "smoke"},
		{"--recipe", "smoke", "--out", t.TempDir(), "--until", "later"},
		{"--recipe", "smoke", "--out", t.TempDir(), "--steps-scale", "0"},
	} {
		var out, errOut bytes.Buffer
		if err := TrainMain(context.Background(), args, nil, &out, &errOut); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestRecipeValidate(t *testing.T) {
	for _, r := range Recipes() {
		if err := r.validate(); err != nil {
			t.Errorf("recipe %s: %v", r.Name, err)
		}
	}
	sft := func(name, from string, steps, stopAt int) RecipeStage {
		return RecipeStage{Name: name, Stage: "sft", From: from, Steps: steps, StopAt: stopAt}
	}
	for want, stages := range map[string][]RecipeStage{
		`starts from "c", which is not an earlier stage`: {sft("a", "", 2, 0), sft("b", "c", 2, 0), sft("c", "", 2, 0)},
		`stage "a" twice`:            {sft("a", "", 2, 0), sft("a", "", 2, 0)},
		"stops at step 5 of 4":       {sft("a", "", 4, 5)},
		"only SFT stages stop early": {{Name: "o", Stage: "opd", Steps: 4, StopAt: 2}},
	} {
		err := Recipe{Name: "r", Stages: stages}.validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: err %v, want %q", stages, err, want)
		}
	}
}
