package command

import (
	"io"
	"strconv"
	"testing"

	"github.com/livehat/livehat/trainer/sft"
)

// TestRecipeStagesParse: every stage of every recipe is a command line
// `livehat train` accepts, so a recipe fails on a typo here and not hours
// into a run.
func TestRecipeStagesParse(t *testing.T) {
	for name, r := range sft.Recipes() {
		for _, st := range r.Stages {
			t.Run(name+"/"+st.Name, func(t *testing.T) {
				args := append([]string{"--out", t.TempDir(), "--init", "prev", "--steps", strconv.Itoa(st.Steps)}, st.Args...)
				var err error
				switch st.Stage {
				case "sft":
					_, err = parseSFT(args, io.Discard)
				case "opd":
					_, _, err = parseOPD(append(args, "--teacher", "base"), io.Discard)
				case "rl":
					_, _, _, err = parseRL(args, io.Discard)
				case "average":
					if len(st.Args) > 0 {
						t.Fatalf("an average stage has flags %v", st.Args)
					}
				default:
					t.Fatalf("stage kind %q", st.Stage)
				}
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
			})
		}
	}
}

// TestBundledRecipeSecondGeneration: the bundled recipe ends with the
// second generation's runs as they were made — job1 raises the context to
// 2,048 and stops at step 2,200 of its schedule, job5 at 300, each names
// its own seed, job7 has five times the general conversations, and job10,
// on nine shop catalogs in ten, is the shipped model.
func TestBundledRecipeSecondGeneration(t *testing.T) {
	stages := map[string]sft.RecipeStage{}
	var last sft.RecipeStage
	for _, st := range sft.Recipes()["bundled"].Stages {
		stages[st.Name] = st
		last = st
	}
	if last.Name != "job10" || last.Row != "bundled" {
		t.Fatalf("the last stage is %s (row %q), want job10 completing the bundled row", last.Name, last.Row)
	}
	for name, want := range map[string]struct {
		stopAt  int
		seed    uint64
		context int
		general int
		shop    float64
	}{
		"job1":  {2200, 1, 2048, 3000, 0.4},
		"job5":  {300, 5, 0, 1500, 0.4},
		"job7":  {0, 7, 0, 15000, 0.4},
		"job10": {0, 10, 0, 10000, 0.9},
	} {
		st, ok := stages[name]
		if !ok {
			t.Fatalf("no stage %s", name)
		}
		run, err := parseSFT(append([]string{"--out", t.TempDir(), "--init", "prev", "--seed", "99"}, st.Args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if st.StopAt != want.stopAt || run.cfg.Seed != want.seed || run.cfg.Context != want.context || run.cfg.Data.General != want.general ||
			run.cfg.Data.ShopShare != want.shop {
			t.Errorf("%s: stop at %d, seed %d, context %d, general %d, shop share %v; want %+v", name, st.StopAt, run.cfg.Seed, run.cfg.Context,
				run.cfg.Data.General, run.cfg.Data.ShopShare, want)
		}
	}
}
