package sft

import (
	"context"
	"io"
	"strings"
	"testing"
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
