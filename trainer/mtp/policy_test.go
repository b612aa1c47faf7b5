package mtp

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/nn"
)

// Progressions are the toy policy's language: runs of token ids going up
// by a step (1 to 7) that the first tokens reveal, wrapping within
// [progBase, progBase+progSpan). A model that has learnt them writes a
// continuation that depends on the whole prompt, so a head can predict it
// two tokens ahead only from what the trunk's hidden state carries.
const (
	progBase = 10
	progSpan = 50
)

func progression(rng *rand.Rand, n int) []int {
	step, x := 1+rng.IntN(7), rng.IntN(progSpan)
	out := make([]int, n)
	for i := range out {
		out[i] = progBase + x
		x = (x + step) % progSpan
	}
	return out
}

// trainedPolicy fits a tiny model to progressions with the trainer's own
// backward pass and AdamW, and returns the inference model with k fresh
// heads, and prompts (the first 4 tokens of new progressions).
func trainedPolicy(t testing.TB, k int) (*model.Model, [][]int) {
	t.Helper()
	cfg, err := model.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return trainedPolicyOf(t, cfg, k, 150, 0, 11)
}

// trainedPolicyOf is trainedPolicy for a model of shape cfg trained for
// steps steps from random weights drawn from seed, computing on threads
// threads (0: one per core).
func trainedPolicyOf(t testing.TB, cfg model.Config, k, steps, threads int, seed uint64) (*model.Model, [][]int) {
	t.Helper()
	ctx := context.Background()
	cpu := model.NewCPU(threads)
	t.Cleanup(cpu.Close)
	base, err := model.NewRandom(cfg, seed, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(base, base.Backend())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	opt := nn.NewAdamW(nn.DefaultAdamW())
	var loss nn.Loss
	for range steps {
		batch := make([]nn.Example, 16)
		n := 0
		for i := range batch {
			batch[i] = nn.Example{Tokens: progression(rng, 24)}
			n += batch[i].Trained()
		}
		if loss, err = net.Backward(ctx, batch, 1/float32(n)); err != nil {
			t.Fatal(err)
		}
		if err := opt.Step(net.Params(), 3e-3); err != nil {
			t.Fatal(err)
		}
		net.ZeroGrad()
	}
	t.Logf("policy loss %.3f", loss.Mean())
	m, err := net.ToModel(model.Options{Backend: base.Backend()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.InitMTP(k, 5); err != nil {
		t.Fatal(err)
	}
	prompts := make([][]int, 64)
	for i := range prompts {
		prompts[i] = progression(rng, 4)
	}
	return m, prompts
}
