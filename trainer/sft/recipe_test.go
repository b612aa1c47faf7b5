package sft

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/safetensors"
)

func TestRecipeValidate(t *testing.T) {
	for _, r := range Recipes() {
		if err := r.Validate(); err != nil {
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
		`averages "c", which is not an earlier stage`: {sft("a", "", 2, 0), sft("b", "", 2, 0), {Name: "m", Stage: "average", Average: []string{"a", "c"}},
			sft("c", "", 2, 0)},
		"needs two or more stages to average": {sft("a", "", 2, 0), {Name: "m", Stage: "average", Average: []string{"a"}}},
		"only an average stage averages":      {sft("a", "", 2, 0), {Name: "b", Stage: "sft", Steps: 2, Average: []string{"a"}}},
	} {
		err := Recipe{Name: "r", Stages: stages}.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: err %v, want %q", stages, err, want)
		}
	}
}

// TestRunRecipeRejectsOptions: options a recipe cannot run with are named
// before any stage runs.
func TestRunRecipeRejectsOptions(t *testing.T) {
	good := RecipeOptions{Out: t.TempDir(), Until: "bundled", Augment: true, StepsScale: 1}
	for _, tt := range []struct {
		name string
		edit func(*RecipeOptions)
		want string
	}{
		{"unknown row", func(o *RecipeOptions) { o.Until = "later" }, `until "later"`},
		{"zero scale", func(o *RecipeOptions) { o.StepsScale = 0 }, "steps scale 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			ran := false
			run := func(context.Context, string, []string) error { ran = true; return nil }
			err := RunRecipe(context.Background(), demo(t), Recipes()["smoke"], o, run, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || ran {
				t.Errorf("err %v (a stage ran: %v), want it to name %q", err, ran, tt.want)
			}
		})
	}
}

// TestAverageCheckpoints: every weight of the average is the mean of the
// checkpoints', the first's config and tokenizer come with it, and
// checkpoints of other shapes are refused without leaving a checkpoint.
func TestAverageCheckpoints(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, w []float32, shape []int) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := safetensors.EncodeFloat32(safetensors.F32, w)
		if err != nil {
			t.Fatal(err)
		}
		if err := safetensors.WriteFile(filepath.Join(p, "model.safetensors"), []safetensors.Tensor{{Name: "w", DType: safetensors.F32, Shape: shape, Data: data}}, nil); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"config.json", tokenizerFile} {
			if err := os.WriteFile(filepath.Join(p, f), []byte(`{"from":"`+name+`"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	a, b := write("a", []float32{1, 2, 3, 4}, []int{2, 2}), write("b", []float32{3, 2, -3, 0.5}, []int{2, 2})
	out := filepath.Join(dir, "avg", "checkpoint")
	if err := averageCheckpoints([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(out, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, got, err := f.ReadFloat32("w"); err != nil || !slices.Equal(got, []float32{2, 2, 0, 2.25}) {
		t.Errorf("average = %v (%v), want [2 2 0 2.25]", got, err)
	}
	if cfg, _ := os.ReadFile(filepath.Join(out, "config.json")); string(cfg) != `{"from":"a"}` {
		t.Errorf("config %s, want the first checkpoint's", cfg)
	}
	c := write("c", []float32{1, 2, 3}, []int{3})
	bad := filepath.Join(dir, "bad", "checkpoint")
	if err := averageCheckpoints([]string{a, c}, bad); err == nil || !strings.Contains(err.Error(), "no tensor w of shape [2 2]") {
		t.Errorf("shapes that differ: err %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused average left %s: %v", bad, err)
	}
}
