package nn

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/livehat/livehat/model"
)

// microConfig is a decoder small enough to check every parameter by finite
// differences: two layers, grouped-query attention, odd vocabulary.
func microConfig(arch string) model.Config {
	c := model.Config{
		Architecture: arch, HiddenSize: 8, IntermediateSize: 12, NumLayers: 2,
		NumHeads: 2, NumKVHeads: 1, HeadDim: 4, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 11, TieWordEmbeddings: true, MaxPositionEmbeddings: 64,
		TorchDType: "float32", AttentionBias: true, BOSTokenID: -1, EOSTokenID: 2,
	}
	if arch == model.Qwen3 {
		// Untied head, q/k norms, head_dim ≠ hidden/heads and the o_proj bias
		// Qwen3's attention_bias adds.
		c.HeadDim, c.QKNorm, c.TieWordEmbeddings = 6, true, false
	}
	return c
}

func newRandom(t *testing.T, cfg model.Config, seed uint64) (*model.Model, *Model) {
	t.Helper()
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	base, err := model.NewRandom(cfg, seed, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(base, cpu)
	if err != nil {
		t.Fatal(err)
	}
	return base, m
}

func randomTokens(rng *rand.Rand, n, vocab int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = rng.IntN(vocab)
	}
	return out
}

// maskedExamples returns examples whose first part is context and the rest
// is trained, as in a chat example.
func maskedExamples(rng *rand.Rand, vocab int, lens ...int) []Example {
	var out []Example
	for _, L := range lens {
		e := Example{Tokens: randomTokens(rng, L, vocab), Train: make([]bool, L)}
		for i := L / 3; i < L; i++ {
			e.Train[i] = rng.IntN(4) != 0
		}
		out = append(out, e)
	}
	return out
}

func maxAbsDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

func TestLogitsMatchInferenceForward(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-qwen3"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := model.Preset(name)
			if err != nil {
				t.Fatal(err)
			}
			base, m := newRandom(t, cfg, 7)
			tokens := randomTokens(rand.New(rand.NewPCG(1, 2)), 300, cfg.VocabSize) // three attention blocks
			want, err := base.Forward(context.Background(), base.NewSequence(), tokens)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Logits(context.Background(), tokens)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d logits, want %d", len(got), len(want))
			}
			if d := maxAbsDiff(got, want); d > 2e-5 {
				t.Errorf("training logits differ from model.Forward by up to %g", d)
			}
		})
	}
}

// TestPackingKeepsExamplesApart checks that a packed batch has exactly the
// loss of its examples run one by one.
func TestPackingKeepsExamplesApart(t *testing.T) {
	cfg, _ := model.Preset("tiny-qwen3")
	_, m := newRandom(t, cfg, 3)
	exs := maskedExamples(rand.New(rand.NewPCG(5, 6)), cfg.VocabSize, 17, 9, 30)
	ctx := context.Background()
	packed, err := m.Evaluate(ctx, exs)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	tokens := 0
	for _, e := range exs {
		l, err := m.Evaluate(ctx, []Example{e})
		if err != nil {
			t.Fatal(err)
		}
		sum += l.Sum
		tokens += l.Tokens
	}
	if packed.Tokens != tokens || math.Abs(packed.Sum-sum) > 1e-4*math.Abs(sum) {
		t.Errorf("packed loss %g over %d tokens, one by one %g over %d", packed.Sum, packed.Tokens, sum, tokens)
	}
}

// widen copies a float32 network (with its adapters) to float64.
func widen(src *net[float32]) *net[float64] {
	conv := func(t *tensor[float32]) *tensor[float64] {
		if t == nil {
			return nil
		}
		out := &tensor[float64]{name: t.name, rows: t.rows, cols: t.cols, w: make([]float64, len(t.w))}
		for i, v := range t.w {
			out.w[i] = float64(v)
		}
		if t.g != nil {
			out.g = make([]float64, len(t.g))
		}
		return out
	}
	seen := map[*tensor[float32]]*tensor[float64]{}
	get := func(t *tensor[float32]) *tensor[float64] {
		if t == nil {
			return nil
		}
		if d, ok := seen[t]; ok {
			return d
		}
		d := conv(t)
		if ad := t.lora; ad != nil {
			d.lora = &adapter[float64]{a: conv(ad.a), b: conv(ad.b), rank: ad.rank, scale: float64(ad.scale)}
		}
		seen[t] = d
		return d
	}
	n := &net[float64]{cfg: src.cfg, embed: get(src.embed), norm: get(src.norm), head: get(src.head)}
	for _, l := range src.layers {
		n.layers = append(n.layers, layer[float64]{
			attnNorm: get(l.attnNorm), q: get(l.q), k: get(l.k), v: get(l.v), o: get(l.o),
			qBias: get(l.qBias), kBias: get(l.kBias), vBias: get(l.vBias), oBias: get(l.oBias),
			qNorm: get(l.qNorm), kNorm: get(l.kNorm), mlpNorm: get(l.mlpNorm),
			gate: get(l.gate), up: get(l.up), down: get(l.down),
		})
	}
	return n
}

// checkGradients compares every trainable element's analytic gradient of
// the mean loss with a central finite difference, in float64.
func checkGradients(t *testing.T, n *net[float64], trainable []*tensor[float64], b *batch) {
	t.Helper()
	ctx := context.Background()
	probe, err := n.run(ctx, b, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	scale := 1 / float64(probe.tokens)
	if _, err := n.run(ctx, b, scale, false); err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		r, err := n.run(ctx, b, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return r.lossSum * scale
	}
	const h = 1e-5
	checked := 0
	for _, tn := range trainable {
		bad := 0
		for i := range tn.w {
			orig := tn.w[i]
			tn.w[i] = orig + h
			up := loss()
			tn.w[i] = orig - h
			down := loss()
			tn.w[i] = orig
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - tn.g[i]); d > 1e-7+1e-5*math.Abs(fd) {
				if bad < 3 {
					t.Errorf("%s[%d]: gradient %.10g, finite difference %.10g", tn.name, i, tn.g[i], fd)
				}
				bad++
			}
			checked++
		}
	}
	t.Logf("%d gradient elements checked", checked)
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, arch := range []string{model.Qwen2, model.Qwen3} {
		t.Run(arch, func(t *testing.T) {
			cfg := microConfig(arch)
			_, m := newRandom(t, cfg, 11)
			n := widen(m.net)
			n.block = 5 // the 12-token example spans three blocks
			b, err := pack(maskedExamples(rand.New(rand.NewPCG(9, 9)), cfg.VocabSize, 7, 12), cfg.MaxPositionEmbeddings)
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, n, n.tensors(), b)
		})
	}
}

func TestLoRAGradientsMatchFiniteDifferences(t *testing.T) {
	cfg := microConfig(model.Qwen3)
	_, m := newRandom(t, cfg, 12)
	if err := m.AddLoRA(LoRAConfig{Rank: 2, Alpha: 4, Targets: []string{"q_proj", "v_proj", "o_proj", "gate_proj", "down_proj"}}, 1); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, p := range m.Params() { // B starts at zero; move it so every path is exercised
		for i := range p.Value {
			p.Value[i] += float32(rng.NormFloat64() * 0.1)
		}
	}
	n := widen(m.net)
	for _, tn := range n.tensors() {
		if tn.g != nil {
			t.Fatalf("%s is trainable under LoRA", tn.name)
		}
	}
	b, err := pack(maskedExamples(rng, cfg.VocabSize, 10, 6), cfg.MaxPositionEmbeddings)
	if err != nil {
		t.Fatal(err)
	}
	checkGradients(t, n, n.adapters(), b)
}

// TestFloat32GradientsMatchFloat64 checks the training path (float32 on the
// backend's kernels) against the float64 reference on a preset shape.
func TestFloat32GradientsMatchFloat64(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-qwen3"} {
		t.Run(name, func(t *testing.T) {
			cfg, _ := model.Preset(name)
			_, m := newRandom(t, cfg, 4)
			n := widen(m.net)
			exs := maskedExamples(rand.New(rand.NewPCG(8, 1)), cfg.VocabSize, 140, 25)
			l, err := m.Backward(context.Background(), exs, 1)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := pack(exs, cfg.MaxPositionEmbeddings)
			if _, err := n.run(context.Background(), b, 1, false); err != nil {
				t.Fatal(err)
			}
			params, ref := m.Params(), n.tensors()
			for i, p := range params {
				var diff, norm float64
				for j, g := range p.Grad {
					d := float64(g) - ref[i].g[j]
					diff += d * d
					norm += ref[i].g[j] * ref[i].g[j]
				}
				if math.Sqrt(diff) > 1e-4*math.Sqrt(norm)+1e-7 {
					t.Errorf("%s: float32 gradient off by %g (norm %g)", p.Name, math.Sqrt(diff), math.Sqrt(norm))
				}
			}
			if l.Tokens == 0 {
				t.Fatal("no trained tokens")
			}
		})
	}
}

func TestGradientAccumulationEqualsOneBatch(t *testing.T) {
	cfg, _ := model.Preset("tiny")
	_, m := newRandom(t, cfg, 5)
	exs := maskedExamples(rand.New(rand.NewPCG(3, 3)), cfg.VocabSize, 20, 31, 14, 9)
	total := 0
	for _, e := range exs {
		total += e.Trained()
	}
	ctx := context.Background()
	if _, err := m.Backward(ctx, exs, 1/float32(total)); err != nil {
		t.Fatal(err)
	}
	var whole [][]float32
	for _, p := range m.Params() {
		whole = append(whole, slices.Clone(p.Grad))
	}
	m.ZeroGrad()
	for _, mb := range Pack(exs, 40) {
		if _, err := m.Backward(ctx, mb, 1/float32(total)); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range m.Params() {
		if d := maxAbsDiff(p.Grad, whole[i]); d > 1e-6 {
			t.Errorf("%s: accumulated gradient differs by %g", p.Name, d)
		}
	}
}

func TestLoRAMergeEqualsAdapterForward(t *testing.T) {
	cfg, _ := model.Preset("tiny")
	_, m := newRandom(t, cfg, 6)
	if err := m.AddLoRA(LoRAConfig{Rank: 4, Alpha: 8, Targets: []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}}, 3); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for _, p := range m.Params() {
		for i := range p.Value {
			p.Value[i] = float32(rng.NormFloat64() * 0.05)
		}
	}
	ctx := context.Background()
	tokens := randomTokens(rng, 30, cfg.VocabSize)
	adapted, err := m.Logits(ctx, tokens)
	if err != nil {
		t.Fatal(err)
	}
	// Save and load keep the adapters apart from the base.
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if back.LoRA() == nil {
		t.Fatal("loaded model lost its adapters")
	}
	reloaded, _ := back.Logits(ctx, tokens)
	if !slices.Equal(reloaded, adapted) {
		t.Errorf("logits after save and load differ by %g", maxAbsDiff(reloaded, adapted))
	}
	// The merged inference model computes what the adapters do.
	inf, err := m.ToModel(model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	viaModel, err := inf.Forward(ctx, inf.NewSequence(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(viaModel, adapted); d > 2e-5 {
		t.Errorf("merged model.Model differs from the adapter forward by %g", d)
	}
	m.MergeLoRA()
	merged, _ := m.Logits(ctx, tokens)
	if d := maxAbsDiff(merged, adapted); d > 1e-5 {
		t.Errorf("merged logits differ from the adapter forward by %g", d)
	}
	if m.LoRA() != nil || len(m.Params()) != len(m.net.tensors()) {
		t.Error("merging left adapters or frozen tensors behind")
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	cfg, _ := model.Preset("tiny-qwen3")
	_, m := newRandom(t, cfg, 8)
	dir := filepath.Join(t.TempDir(), "ck")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Params(), back.Params()
	if len(a) != len(b) {
		t.Fatalf("%d parameters after load, want %d", len(b), len(a))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !slices.Equal(a[i].Value, b[i].Value) {
			t.Errorf("%s did not survive save and load", a[i].Name)
		}
	}
}

// TestOverfitsSmallBatch trains the tiny preset on four sequences until it
// has memorised them.
func TestOverfitsSmallBatch(t *testing.T) {
	cfg, _ := model.Preset("tiny")
	_, m := newRandom(t, cfg, 9)
	exs := maskedExamples(rand.New(rand.NewPCG(1, 1)), cfg.VocabSize, 24, 24, 24, 24)
	total := 0
	for _, e := range exs {
		total += e.Trained()
	}
	opt := NewAdamW(AdamWConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0})
	sched := Schedule{Peak: 1e-2, Warmup: 10, Total: 150, MinRatio: 0.1}
	ctx := context.Background()
	first, err := m.Evaluate(ctx, exs)
	if err != nil {
		t.Fatal(err)
	}
	for step := range sched.Total {
		m.ZeroGrad()
		if _, err := m.Backward(ctx, exs, 1/float32(total)); err != nil {
			t.Fatal(err)
		}
		ClipGradNorm(m.Params(), 1)
		if err := opt.Step(m.Params(), sched.LR(step)); err != nil {
			t.Fatal(err)
		}
	}
	last, _ := m.Evaluate(ctx, exs)
	t.Logf("loss %.3f → %.4f", first.Mean(), last.Mean())
	if last.Mean() > 0.05 {
		t.Errorf("loss %.4f after %d steps on one batch (from %.3f), want near 0", last.Mean(), sched.Total, first.Mean())
	}
}

func TestAdamWStep(t *testing.T) {
	p := []Param{
		{Name: "w", Value: []float32{1, -2}, Grad: []float32{0.5, 0}, Decay: true},
		{Name: "b", Value: []float32{3}, Grad: []float32{0}, Decay: false},
	}
	o := NewAdamW(AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1})
	if err := o.Step(p, 0.01); err != nil {
		t.Fatal(err)
	}
	// First step: m̂ = g, v̂ = g², so the Adam step is lr·sign(g); decay
	// shrinks matrices by lr·wd first and leaves vectors alone.
	want := []float64{1*(1-0.001) - 0.01, -2 * (1 - 0.001), 3}
	got := []float32{p[0].Value[0], p[0].Value[1], p[1].Value[0]}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6 {
			t.Errorf("value %d = %v, want %v", i, got[i], want[i])
		}
	}
	path := filepath.Join(t.TempDir(), "opt.safetensors")
	if err := o.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadAdamW(path)
	if err != nil {
		t.Fatal(err)
	}
	q := []Param{{Name: "w", Value: slices.Clone(p[0].Value), Grad: []float32{0.1, -0.3}, Decay: true}}
	p[0].Grad = []float32{0.1, -0.3}
	o.Step(p[:1], 0.01)
	back.Step(q, 0.01)
	if back.Steps() != 2 || !slices.Equal(p[0].Value, q[0].Value) {
		t.Errorf("reloaded optimizer diverges: %v vs %v (steps %d)", q[0].Value, p[0].Value, back.Steps())
	}
}

func TestClipGradNormAndSchedule(t *testing.T) {
	p := []Param{{Name: "a", Grad: []float32{3, 4}}, {Name: "b", Grad: []float32{0}}}
	if n := ClipGradNorm(p, 1); n != 5 {
		t.Errorf("norm %g, want 5", n)
	}
	if n := ClipGradNorm(p, 0); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm after clipping %g, want 1", n)
	}
	s := Schedule{Peak: 1, Warmup: 4, Total: 14, MinRatio: 0.1}
	for _, c := range []struct {
		step int
		want float64
	}{{0, 0.25}, {3, 1}, {4, 1}, {9, 0.55}, {14, 0.1}, {99, 0.1}} {
		if got := s.LR(c.step); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("LR(%d) = %g, want %g", c.step, got, c.want)
		}
	}
}
