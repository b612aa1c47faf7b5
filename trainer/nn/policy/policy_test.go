package policy

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/nn"
)

func tinyModel(t *testing.T) (*nn.Model, *model.CPU) {
	t.Helper()
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	cfg := model.Config{
		Architecture: model.Qwen2, HiddenSize: 16, IntermediateSize: 24, NumLayers: 2,
		NumHeads: 2, NumKVHeads: 1, HeadDim: 8, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 23, TieWordEmbeddings: true, MaxPositionEmbeddings: 64,
		TorchDType: "float32", AttentionBias: true, BOSTokenID: -1, EOSTokenID: 3,
	}
	base, err := model.NewRandom(cfg, 7, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.New(base, cpu)
	if err != nil {
		t.Fatal(err)
	}
	return m, cpu
}

func TestGreedySampleFollowsTrainingLogits(t *testing.T) {
	m, cpu := tinyModel(t)
	s, err := Snapshot(m, cpu, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prompt := []int{5, 9, 1, 14}
	out, err := s.Sample(ctx, prompt, Options{MaxTokens: 12})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 || len(out) > 12 || (len(out) < 12 && out[len(out)-1] != 3) {
		t.Fatalf("response %v: want up to 12 tokens ending at the stop token", out)
	}
	// Each greedy token is the argmax of the training pass's logits.
	seq := append(slices.Clone(prompt), out...)
	logits, err := m.Logits(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	for i, tok := range out {
		row := logits[(len(prompt)+i-1)*V : (len(prompt)+i)*V]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best != tok {
			t.Fatalf("token %d: sampled %d, training logits argmax %d", i, tok, best)
		}
	}
	// Seeded sampling at temperature 1 is reproducible.
	a, _ := s.Sample(ctx, prompt, Options{MaxTokens: 12, Temperature: 1, Seed: 4})
	b, _ := s.Sample(ctx, prompt, Options{MaxTokens: 12, Temperature: 1, Seed: 4})
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different samples: %v and %v", a, b)
	}
	if _, err := s.Sample(ctx, prompt, Options{}); err == nil {
		t.Error("zero max tokens accepted")
	}
}

func TestLogProbsAndDistributions(t *testing.T) {
	m, _ := tinyModel(t)
	ctx := context.Background()
	exs := []nn.Example{
		{Tokens: []int{1, 2, 3, 4, 5}, Train: []bool{false, false, true, false, true}},
		{Tokens: []int{7, 8, 9}},
	}
	lps, err := LogProbs(ctx, m, exs)
	if err != nil {
		t.Fatal(err)
	}
	dists, err := Distributions(ctx, m, exs)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	for ei, e := range exs {
		slots := Slots(e)
		if len(lps[ei]) != e.Trained() || len(dists[ei]) != e.Trained()*V {
			t.Fatalf("example %d: %d log-probs and %d distribution values for %d trained tokens", ei, len(lps[ei]), len(dists[ei]), e.Trained())
		}
		logits, err := m.Logits(ctx, e.Tokens)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range slots {
			if k < 0 {
				continue
			}
			want := LogProb(logits[i*V:(i+1)*V], e.Tokens[i+1])
			if math.Abs(float64(lps[ei][k])-want) > 1e-4 || math.Abs(float64(dists[ei][k*V+e.Tokens[i+1]])-want) > 1e-4 {
				t.Errorf("example %d position %d: log-prob %g, distribution %g, want %g", ei, i, lps[ei][k], dists[ei][k*V+e.Tokens[i+1]], want)
			}
			var sum float64
			for _, v := range dists[ei][k*V : (k+1)*V] {
				sum += math.Exp(float64(v))
			}
			if math.Abs(sum-1) > 1e-4 {
				t.Errorf("example %d position %d: distribution sums to %g", ei, i, sum)
			}
		}
	}
}

func TestExtendAllMatchesOneByOne(t *testing.T) {
	m, cpu := tinyModel(t)
	s, err := Snapshot(m, cpu, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prompts := [][]int{{5, 9, 1, 14}, {2}, {7, 7, 8}}
	opts := []Options{{MaxTokens: 10}, {MaxTokens: 4}, {MaxTokens: 12}}
	seqs := []*Sequence{s.NewSequence(), s.NewSequence(), s.NewSequence()}
	all, err := ExtendAll(ctx, seqs, prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		one, err := s.Sample(ctx, p, opts[i])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(all[i], one) {
			t.Errorf("prompt %d: batched %v, alone %v", i, all[i], one)
		}
		if seqs[i].Len() != len(p)+len(all[i]) {
			t.Errorf("prompt %d: sequence holds %d tokens, want %d", i, seqs[i].Len(), len(p)+len(all[i]))
		}
	}
	if _, err := ExtendAll(ctx, seqs[:1], prompts, opts); err == nil {
		t.Error("one sequence with three contexts accepted")
	}
}
