package rl_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
	"github.com/livehat/livehat/trainer/rl"
	"github.com/livehat/livehat/trainer/sft"
)

// BenchmarkRLStep runs b.N steps of an HSA-RL run on the demo harness
// (2 tasks × 4 rollouts a step, half under fresh variants, a fifth with
// tool faults, turns of up to 96 tokens, k3 KL to the starting policy)
// from a policy after one HSA-SFT step: rollouts on the inference engine,
// the grader, the reference's forward pass, the policy's forward and
// backward, AdamW. tokens/s counts the tokens through the training pass
// over the whole step, rollouts included.
func BenchmarkRLStep(b *testing.B) {
	for _, shape := range []string{"tiny", "small"} {
		b.Run(shape, func(b *testing.B) {
			base := testfixture.DemoHarness(b)
			c := sft.DefaultTrainConfig()
			c.Data.Rooms, c.Data.Questions, c.Model, c.Steps, c.EvalExamples = 4, 8, shape, 1, 0
			warm := filepath.Join(b.TempDir(), "sft")
			var log bytes.Buffer
			if err := sft.Train(context.Background(), base, c, warm, false, &log); err != nil {
				b.Fatalf("%v\n%s", err, log.String())
			}
			rc := rl.DefaultConfig()
			rc.Init, rc.PromptsPerStep, rc.Group, rc.EvalTasks, rc.SaveEvery = filepath.Join(warm, runfolder.CheckpointDir), 2, 4, 0, 0
			rc.Steps = b.N
			out := b.TempDir()
			runtest.MeasureRun(b, out, func() error { return rl.Train(context.Background(), base, rc, out, false, &log) })
		})
	}
}
