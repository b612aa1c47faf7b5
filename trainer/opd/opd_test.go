package opd

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
)

// driftReply is what the drifted student learned to say to everything: a
// live-stream sales line, the kind of reply SFT on room data teaches.
const driftReply = "The price is 99 yuan, buy it now in the live room!"

// fixture holds a teacher (a tiny base model that learned general replies)
// and a student (the teacher after an SFT drift toward driftReply), as
// checkpoint folders with their tokenizer.
type fixture struct {
	teacher, student string
	tok              *tokenizer.Tokenizer
	err              error
}

var (
	fixtureOnce sync.Once
	fixtureDirs fixture
)

func conversation(p Prompt, reply string) string {
	text, _ := chat.Render([]chat.Message{{Role: chat.RoleUser, Content: p.Text}, {Role: chat.RoleAssistant, Content: reply}}, nil, chat.RenderOptions{})
	return text
}

// supervised returns reply-only examples of the prompts answered by reply.
func supervised(tok *tokenizer.Tokenizer, prompts []Prompt, reply func(Prompt) string) []nn.Example {
	var out []nn.Example
	for _, p := range prompts {
		pt, _ := promptTokens(tok, chat.Qwen3, p)
		full := tok.EncodeWithSpecial(conversation(p, reply(p)))
		full = full[:len(full)-1] // the template's final newline
		ex := nn.Example{Tokens: full, Train: make([]bool, len(full))}
		for i := len(pt); i < len(full); i++ {
			ex.Train[i] = true
		}
		out = append(out, ex)
	}
	return out
}

func trainSupervised(ctx context.Context, m *nn.Model, exs []nn.Example, steps int, lr float64, seed uint64) error {
	opt := nn.NewAdamW(nn.DefaultAdamW())
	for step := range steps {
		var batch []nn.Example
		total := 0
		for _, i := range runfolder.StepIndices(len(exs), seed, step, 16) {
			batch = append(batch, exs[i])
			total += exs[i].Trained()
		}
		m.ZeroGrad()
		if _, err := m.Backward(ctx, batch, 1/float32(total)); err != nil {
			return err
		}
		nn.ClipGradNorm(m.Params(), 1)
		if err := opt.Step(m.Params(), lr); err != nil {
			return err
		}
	}
	return nil
}

func buildFixture() fixture {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "livehat-opd-fixture-*")
	if err != nil {
		return fixture{err: err}
	}
	pool := Prompts(1, 96)
	corpus := func(yield func(string) bool) {
		for _, p := range append(pool, Prompts(1^evalSeed, 32)...) {
			if !yield(conversation(p, p.Reference)) || !yield(conversation(p, driftReply)) {
				return
			}
		}
	}
	tok, err := tokenizer.Train(ctx, iter.Seq[string](corpus), tokenizer.TrainConfig{VocabSize: 400, MinFrequency: 2,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}})
	if err != nil {
		return fixture{err: err}
	}
	cpu := model.NewCPU(2)
	defer cpu.Close()
	cfg := model.Config{
		Architecture: model.Qwen2, HiddenSize: 32, IntermediateSize: 64, NumLayers: 2, NumHeads: 2, NumKVHeads: 1, HeadDim: 16,
		RopeTheta: 10000, RMSNormEps: 1e-6, VocabSize: tok.VocabSize(), MaxPositionEmbeddings: 192, TieWordEmbeddings: true,
		TorchDType: "float32", AttentionBias: true, BOSTokenID: -1, EOSTokenID: -1,
	}
	base, err := model.NewRandom(cfg, 3, model.Options{Backend: cpu})
	if err != nil {
		return fixture{err: err}
	}
	m, err := nn.New(base, cpu)
	if err != nil {
		return fixture{err: err}
	}
	if err := trainSupervised(ctx, m, supervised(tok, pool, func(p Prompt) string { return p.Reference }), 60, 1e-2, 1); err != nil {
		return fixture{err: err}
	}
	f := fixture{teacher: filepath.Join(dir, "teacher"), student: filepath.Join(dir, "student"), tok: tok}
	save := func(to string) error {
		if err := m.Save(to); err != nil {
			return err
		}
		return tok.Save(filepath.Join(to, runfolder.TokenizerFile))
	}
	if err := save(f.teacher); err != nil {
		return fixture{err: err}
	}
	if err := trainSupervised(ctx, m, supervised(tok, pool[:48], func(Prompt) string { return driftReply }), 16, 1e-2, 2); err != nil {
		return fixture{err: err}
	}
	if err := save(f.student); err != nil {
		return fixture{err: err}
	}
	return f
}

func getFixture(t *testing.T) fixture {
	t.Helper()
	fixtureOnce.Do(func() { fixtureDirs = buildFixture() })
	if fixtureDirs.err != nil {
		t.Fatal(fixtureDirs.err)
	}
	return fixtureDirs
}

func testConfig(f fixture, steps int) Config {
	c := DefaultConfig()
	c.Init, c.Teacher = f.student, f.teacher
	c.Prompts, c.EvalPrompts, c.PromptsPerStep, c.Samples, c.MaxNewTokens = 96, 16, 4, 2, 32
	c.Steps, c.LR, c.Warmup, c.SaveEvery, c.EvalEvery, c.Threads = steps, 3e-3, 1, 2, 0, 2
	return c
}

// measure returns the held-out evaluation of a student checkpoint.
func measure(t *testing.T, f fixture, studentDir string, c Config) (evalStats, int) {
	t.Helper()
	cpu := model.NewCPU(2)
	defer cpu.Close()
	student, err := nn.Load(studentDir, cpu)
	if err != nil {
		t.Fatal(err)
	}
	teacher, err := nn.Load(f.teacher, cpu)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := f.tok.TokenID("<|im_end|>")
	s := sampling{tok: f.tok, stop: []int{stop}, backend: cpu, samples: 1, maxTokens: c.MaxNewTokens, temperature: 1}
	held := Prompts(c.PromptSeed^evalSeed, c.EvalPrompts)
	ev, err := evaluate(context.Background(), s, student, teacher, held, 99)
	if err != nil {
		t.Fatal(err)
	}
	rolls, err := s.sample(context.Background(), student, held, 99)
	if err != nil {
		t.Fatal(err)
	}
	drifted := 0
	for _, r := range rolls {
		if strings.Contains(replyText(f.tok, r.reply, s.stop), "yuan") {
			drifted++
		}
	}
	return ev, drifted
}

// TestOPDPullsDriftedStudentBack: after an SFT drift the student answers
// general prompts with a sales line; OPD against the pre-SFT teacher
// lowers the reverse KL on held-out prompts and the drifted replies give
// way.
func TestOPDPullsDriftedStudentBack(t *testing.T) {
	f := getFixture(t)
	c := testConfig(f, 16)
	out := t.TempDir()
	var log bytes.Buffer
	if err := Train(context.Background(), c, out, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	before, driftBefore := measure(t, f, f.student, c)
	after, driftAfter := measure(t, f, filepath.Join(out, runfolder.CheckpointDir), c)
	teacherSelf, _ := measure(t, f, f.teacher, c)
	t.Logf("held-out reverse KL %.3f → %.3f (teacher itself %.3f); drifted replies %d → %d of %d; checks passed %.2f → %.2f",
		before.KL, after.KL, teacherSelf.KL, driftBefore, driftAfter, c.EvalPrompts, before.Followed, after.Followed)
	if !(after.KL < 0.6*before.KL) {
		t.Errorf("held-out reverse KL fell only from %.3f to %.3f\n%s", before.KL, after.KL, log.String())
	}
	if driftBefore < c.EvalPrompts/2 || driftAfter > driftBefore/2 {
		t.Errorf("drifted replies %d → %d of %d", driftBefore, driftAfter, c.EvalPrompts)
	}
	// The training KL (on the step's own samples) falls too, and every
	// line carries the shared metrics layout.
	data, _ := os.ReadFile(filepath.Join(out, runfolder.MetricsFile))
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != c.Steps {
		t.Fatalf("%d metric lines, want %d", len(lines), c.Steps)
	}
	var ms []runfolder.Metrics
	for _, l := range lines {
		var m runfolder.Metrics
		if err := json.Unmarshal(l, &m); err != nil || m.KL == nil || !(m.TokensPerSec > 0) || !(m.LR > 0) {
			t.Fatalf("metrics line %s: %v", l, err)
		}
		ms = append(ms, m)
	}
	first := (*ms[0].KL + *ms[1].KL + *ms[2].KL) / 3
	last := (*ms[len(ms)-1].KL + *ms[len(ms)-2].KL + *ms[len(ms)-3].KL) / 3
	if !(last < 0.6*first) {
		t.Errorf("training KL %.3f over the first steps, %.3f over the last", first, last)
	}
	if ms[len(ms)-1].Eval == nil {
		t.Error("no evaluation at the last step")
	}
}

// TestSampledEstimatorReducesKL runs the sampled-token estimator, whose
// gradient is noisier, on the same drift.
func TestSampledEstimatorReducesKL(t *testing.T) {
	f := getFixture(t)
	c := testConfig(f, 12)
	c.Estimator = Sampled
	out := t.TempDir()
	var log bytes.Buffer
	if err := Train(context.Background(), c, out, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	before, _ := measure(t, f, f.student, c)
	after, _ := measure(t, f, filepath.Join(out, runfolder.CheckpointDir), c)
	t.Logf("sampled estimator: held-out reverse KL %.3f → %.3f", before.KL, after.KL)
	if !(after.KL < 0.8*before.KL) {
		t.Errorf("held-out reverse KL fell only from %.3f to %.3f\n%s", before.KL, after.KL, log.String())
	}
}

// TestKLGradients checks both estimators' logit gradients: the exact KL's
// against finite differences, the sampled one's expectation against the
// exact gradient.
func TestKLGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const V = 7
	logits, teacher := make([]float32, V), make([]float32, V)
	for i := range logits {
		logits[i], teacher[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	logq := nn.LogSoftmax(make([]float32, V), teacher)
	grad := make([]float32, V)
	kl := reverseKL(logits, logq, grad)
	if !(kl > 0) {
		t.Fatalf("KL %g", kl)
	}
	const h = 1e-2
	for i := range logits {
		up, down := append([]float32(nil), logits...), append([]float32(nil), logits...)
		up[i] += h
		down[i] -= h
		fd := (reverseKL(up, logq, nil) - reverseKL(down, logq, nil)) / (2 * h)
		if math.Abs(fd-float64(grad[i])) > 1e-3 {
			t.Errorf("∂KL/∂z_%d = %g, finite differences %g", i, grad[i], fd)
		}
	}
	// E_y[k(y)·(onehot(y) − p)] = ∇KL (the score-function identity).
	p := nn.LogSoftmax(make([]float32, V), logits)
	want := make([]float64, V)
	var ek float64
	for y := range V {
		g := make([]float32, V)
		k := sampledKL(logits, y, logq[y], g)
		py := math.Exp(float64(p[y]))
		ek += py * k
		for i := range g {
			want[i] += py * float64(g[i])
		}
	}
	if math.Abs(ek-kl) > 1e-5 {
		t.Errorf("E[k] = %g, KL = %g", ek, kl)
	}
	for i := range want {
		if math.Abs(want[i]-float64(grad[i])) > 1e-5 {
			t.Errorf("E[sampled gradient]_%d = %g, exact %g", i, want[i], grad[i])
		}
	}
}

func TestPromptsAndChecks(t *testing.T) {
	a, b := Prompts(7, 200), Prompts(7, 200)
	kinds := map[PromptKind]int{}
	constraints := map[ConstraintKind]int{}
	for i, p := range a {
		if p.Text != b[i].Text || p.Reference != b[i].Reference {
			t.Fatalf("prompt %d differs between equal seeds", i)
		}
		kinds[p.Kind]++
		for _, c := range p.Constraints {
			constraints[c.Kind]++
		}
		// Every reference follows its own prompt.
		if passed, total := p.Check(p.Reference); passed != total {
			t.Errorf("%s %q: reference %q passes %d of %d checks", p.ID, p.Text, p.Reference, passed, total)
		}
	}
	if kinds[KindInstruction] == 0 || kinds[KindChitchat] == 0 || kinds[KindQuestion] == 0 {
		t.Errorf("kinds %v", kinds)
	}
	for _, k := range []ConstraintKind{MaxWords, Keyword, Forbidden, Lowercase, Uppercase, JSON, Bullets, Language, EndWith} {
		if constraints[k] == 0 {
			t.Errorf("no %s constraint in 200 prompts", k)
		}
	}
	cases := []struct {
		c     Constraint
		reply string
		want  bool
	}{
		{Constraint{Kind: MaxWords, N: 3}, "one two three", true},
		{Constraint{Kind: MaxWords, N: 3}, "one two three four", false},
		{Constraint{Kind: MinWords, N: 2}, "你好", true},
		{Constraint{Kind: Keyword, Word: "calm"}, "Stay CALM.", true},
		{Constraint{Kind: Forbidden, Word: "tea"}, "I like tea", false},
		{Constraint{Kind: Lowercase}, "all small", true},
		{Constraint{Kind: Lowercase}, "Not all", false},
		{Constraint{Kind: Uppercase}, "LOUD!", true},
		{Constraint{Kind: JSON}, `{"answer": "x"}`, true},
		{Constraint{Kind: JSON}, `answer: x`, false},
		{Constraint{Kind: Bullets, N: 2}, "- a\n- b", true},
		{Constraint{Kind: Bullets, N: 2}, "- a", false},
		{Constraint{Kind: Language, Lang: "zh"}, "绿茶口感清新。", true},
		{Constraint{Kind: Language, Lang: "zh"}, "green tea", false},
		{Constraint{Kind: Language, Lang: "en"}, "green tea", true},
		{Constraint{Kind: EndWith, Word: "Thanks!"}, "ok. Thanks!", true},
		{Constraint{Kind: "unknown"}, "x", false},
	}
	for _, tc := range cases {
		if got := tc.c.Check(tc.reply); got != tc.want {
			t.Errorf("%+v on %q: %v, want %v", tc.c, tc.reply, got, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	good := DefaultConfig()
	good.Init, good.Teacher = "a", "b"
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Config){
		"no teacher":  func(c *Config) { c.Teacher = "" },
		"estimator":   func(c *Config) { c.Estimator = "forward" },
		"temperature": func(c *Config) { c.Temperature = 0 },
		"samples":     func(c *Config) { c.Samples = 0 },
		"stage":       func(c *Config) { c.Stage = "rl" },
		"lr":          func(c *Config) { c.LR = -1 },
	} {
		c := good
		edit(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestHelperOPDProcess is the run TestResumeAfterKill kills.
func TestHelperOPDProcess(t *testing.T) {
	out := os.Getenv("LIVEHAT_OPD_KILL_RUN")
	if out == "" {
		t.Skip("started by TestResumeAfterKill only")
	}
	var c Config
	if err := json.Unmarshal([]byte(os.Getenv("LIVEHAT_OPD_KILL_CONFIG")), &c); err != nil {
		t.Fatal(err)
	}
	if err := Train(context.Background(), c, out, false, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterKill kills an OPD process with SIGKILL after a
// checkpoint, resumes it, and compares with an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three short runs")
	}
	f := getFixture(t)
	c := testConfig(f, 8)
	raw, _ := json.Marshal(c)
	killed := filepath.Join(t.TempDir(), "killed")
	runtest.KillAfterCheckpoint(t, killed, c.Steps, "TestHelperOPDProcess", "LIVEHAT_OPD_KILL_RUN="+killed, "LIVEHAT_OPD_KILL_CONFIG="+string(raw))
	var log bytes.Buffer
	if err := Train(context.Background(), Config{}, killed, true, &log); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if err := Train(context.Background(), c, whole, false, &log); err != nil {
		t.Fatal(err)
	}
	runtest.SameRun(t, killed, whole, c.Steps)
}

// TestTrainResumesLonger runs one step, then resumes the run to a
// longer schedule, as `livehat train --resume --steps 2` does.
func TestTrainResumesLonger(t *testing.T) {
	f := getFixture(t)
	c := testConfig(f, 1)
	c.Samples = 1
	run := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	ctx := context.Background()
	if err := Train(ctx, c, run, false, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var saved Config
	if err := runfolder.ReadJSON(filepath.Join(run, runfolder.ConfigFile), &saved); err != nil {
		t.Fatal(err)
	}
	if saved.Steps != 1 || saved.Samples != 1 || saved.Teacher != f.teacher || saved.Stage != "opd" {
		t.Errorf("run.json: steps %d, samples %d, teacher %q, stage %q; want 1, 1, %q, opd", saved.Steps, saved.Samples, saved.Teacher, saved.Stage, f.teacher)
	}
	longer := Config{}
	longer.Steps = 2
	if err := Train(ctx, longer, run, true, &out); err != nil {
		t.Fatalf("resume: %v\n%s", err, out.String())
	}
	metrics, _ := os.ReadFile(filepath.Join(run, runfolder.MetricsFile))
	if n := bytes.Count(metrics, []byte("\n")); n != 2 {
		t.Errorf("%d metric lines after resuming to 2 steps", n)
	}
	if !strings.Contains(out.String(), "step 2/2") || !strings.Contains(out.String(), "ETA") {
		t.Errorf("progress: %s", out.String())
	}
}
