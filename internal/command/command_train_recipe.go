package command

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/livehat/livehat/trainer/sft"
)

// trainRecipe is "livehat train --recipe NAME": it runs the recipe's
// stages in order, each in its own run folder under --out, and copies the
// last stage's model to --out/model (see sft.RunRecipe). Running the same
// command again continues a killed recipe. --until stops after a row
// (base, sft, opd or hat of the table; bundled, the default, runs every
// stage); --augment=false trains the SFT stages on the fixed harness
// instead (Fixed-Harness SFT); --seed changes the weights and example
// order of every stage, not the data, for the table's second seed;
// --steps-scale multiplies every stage's steps.
//
//	livehat train --recipe bundled|job|smoke --out DIR [--until base|sft|opd|hat|bundled] [--augment=false]
//	    [--seed 1] [--threads 1] [--steps-scale 1] [--harness FILE]
func trainRecipe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train --recipe", "NAME --out DIR [flags]", stderr)
	name := fs.String("recipe", "bundled", "recipe: bundled, job (the second generation's data, issue #19) or smoke")
	out := fs.String("out", "", "the recipe's folder (required)")
	until := fs.String("until", "bundled", "last row to train: base, sft, opd, hat (the table) or bundled (every stage)")
	augment := fs.Bool("augment", true, "harness-state augmentation in the SFT stages (false: Fixed-Harness SFT)")
	seed := fs.Uint64("seed", 1, "seed of the weights and the example order of every stage that does not name its own")
	threads := fs.Int("threads", 0, "compute threads (0: one per physical core)")
	scale := fs.Float64("steps-scale", 1, "multiply every stage's steps")
	harnessPath := fs.String("harness", "", "base harness file (default: the embedded demo harness)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	r, ok := sft.Recipes()[*name]
	if !ok {
		return usagef("--recipe %q: want bundled, job or smoke", *name)
	}
	switch {
	case *out == "":
		return usagef("--out DIR is required")
	case !slices.Contains(sft.RecipeRows(), *until):
		return usagef("--until %q: want base, sft, opd, hat or bundled", *until)
	case !(*scale > 0):
		return usagef("--steps-scale %g must be positive", *scale)
	}
	// The recipe's tokenizer is trained on the data its flags choose, over
	// the SFT defaults.
	tokCfg := sft.DefaultTrainConfig()
	tfs, _ := newSFTFlags(&tokCfg, io.Discard)
	if err := tfs.Parse(r.Tokenizer); err != nil {
		return fmt.Errorf("recipe %s: tokenizer flags: %w", r.Name, err)
	}
	base, err := loadHarness(*harnessPath)
	if err != nil {
		return err
	}
	o := sft.RecipeOptions{Out: *out, Until: *until, Augment: *augment, Seed: *seed, Threads: *threads,
		StepsScale: *scale, Harness: *harnessPath, Tokenizer: tokCfg}
	run := func(ctx context.Context, stage string, args []string) error {
		return trainStage(ctx, stage, args, nil, stdout, stderr)
	}
	return sft.RunRecipe(ctx, base, r, o, run, stdout)
}
