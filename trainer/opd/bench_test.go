package opd_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
	"github.com/livehat/livehat/trainer/opd"
	"github.com/livehat/livehat/trainer/sft"
)

// benchCheckpoints writes two models of a shape (student and teacher,
// different seeds) after one HSA-SFT step each on the same room data, so
// they share the stage's 2048-word BPE vocabulary.
func benchCheckpoints(b *testing.B, shape string) (student, teacher string) {
	b.Helper()
	h := testfixture.DemoHarness(b)
	var dirs []string
	for seed := range uint64(2) {
		c := sft.DefaultTrainConfig()
		c.Data.Rooms, c.Data.Questions, c.Model, c.Steps, c.EvalExamples, c.Seed = 4, 8, shape, 1, 0, seed+1
		dir := filepath.Join(b.TempDir(), "sft")
		var log bytes.Buffer
		if err := sft.Train(context.Background(), h, c, dir, false, &log); err != nil {
			b.Fatalf("%v\n%s", err, log.String())
		}
		dirs = append(dirs, filepath.Join(dir, runfolder.CheckpointDir))
	}
	return dirs[0], dirs[1]
}

// BenchmarkOPDStep runs b.N steps of an OPD run (8 prompts × 4 samples of
// up to 64 tokens a step, exact full-vocabulary KL): sampling on the
// inference engine, the teacher's forward pass, the student's forward and
// backward, AdamW. tokens/s counts the tokens through the training pass
// (prompt and sampled) over the whole step, sampling included.
func BenchmarkOPDStep(b *testing.B) {
	for _, shape := range []string{"tiny", "small"} {
		b.Run(shape, func(b *testing.B) {
			student, teacher := benchCheckpoints(b, shape)
			c := opd.DefaultConfig()
			c.Init, c.Teacher, c.EvalPrompts, c.SaveEvery = student, teacher, 0, 0
			c.Steps = b.N
			out := b.TempDir()
			var log bytes.Buffer
			runtest.MeasureRun(b, out, func() error { return opd.Train(context.Background(), c, out, false, &log) })
		})
	}
}
