package rl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/policy"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// Config is a whole HSA-RL run; it is saved in the run folder as run.json.
type Config struct {
	// Stage is "rl"; it lets `livehat train --config` pick the stage.
	Stage string `json:"stage"`
	// Init is the policy's starting checkpoint (after SFT and OPD) with its
	// tokenizer.json; Reference the checkpoint the KL term is measured
	// against (empty: Init).
	Init      string `json:"init"`
	Reference string `json:"reference,omitempty"`
	// BaseHarness is the version of the harness the run started with; a
	// resumed run must be given the same one.
	BaseHarness string        `json:"base_harness_version,omitempty"`
	Template    chat.Template `json:"template"`
	// Tasks draws the environments; EvalTasks more, from another seed and
	// always the same, are played greedily by the evaluation schedule.
	Tasks     TaskConfig `json:"tasks"`
	EvalTasks int        `json:"eval_tasks"`
	// EvalSamples plays each held-out task so many times at Temperature
	// with fixed seeds (0: once, greedily).
	EvalSamples int `json:"eval_samples,omitempty"`
	// PromptsPerStep tasks a step, each played Group times (GRPO's G),
	// every turn at most TurnTokens tokens, at most MaxTurns turns, at
	// Temperature.
	PromptsPerStep int     `json:"prompts_per_step"`
	Group          int     `json:"group"`
	TurnTokens     int     `json:"turn_tokens"`
	MaxTurns       int     `json:"max_turns"`
	Temperature    float64 `json:"temperature"`
	// Epochs is the number of policy updates on each step's rollouts
	// (TRL's num_iterations μ); past the first the ratio moves and the
	// clip acts.
	Epochs int          `json:"epochs"`
	Reward RewardConfig `json:"reward"`
	Loss   LossConfig   `json:"loss"`
	runfolder.Optimization
}

// DefaultConfig returns the HSA-RL defaults: 4 tasks × 8 rollouts a step,
// clip [0.8, 1.28], token-mean loss, a small KL to the starting policy.
func DefaultConfig() Config {
	return Config{
		Stage: "rl", Tasks: DefaultTaskConfig(), EvalTasks: 16, PromptsPerStep: 4, Group: 8, TurnTokens: 96, MaxTurns: 5,
		Temperature: 1, Epochs: 1, Reward: DefaultRewardConfig(),
		Loss: LossConfig{ClipLow: 0.2, ClipHigh: 0.28, KLCoef: 0.01, Aggregation: TokenMean},
		Optimization: runfolder.Optimization{Seed: 1, Steps: 100, MicroTokens: 8192, LR: 1e-4, Warmup: 5, MinLRRatio: 0.1,
			AdamW: nn.DefaultAdamW(), ClipNorm: 1, SaveEvery: 25, EvalEvery: 25},
	}
}

func (c Config) validate() error {
	switch {
	case c.Stage != "" && c.Stage != "rl":
		return fmt.Errorf("rl: the configuration is for stage %q", c.Stage)
	case c.Init == "":
		return errors.New("rl: name the policy's starting checkpoint (init)")
	case c.PromptsPerStep <= 0 || c.Group < 2 || c.TurnTokens <= 0 || c.MaxTurns <= 0 || c.EvalTasks < 0 || c.EvalSamples < 0:
		return fmt.Errorf("rl: prompts per step %d, group %d (at least 2), turn tokens %d, max turns %d, eval tasks %d",
			c.PromptsPerStep, c.Group, c.TurnTokens, c.MaxTurns, c.EvalTasks)
	case !(c.Temperature > 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("rl: temperature %g: rollouts need a positive one", c.Temperature)
	case c.Epochs <= 0:
		return fmt.Errorf("rl: epochs %d must be positive", c.Epochs)
	}
	if err := c.Optimization.Validate(); err != nil {
		return fmt.Errorf("rl: %w", err)
	}
	if err := c.Tasks.validate(); err != nil {
		return err
	}
	if err := c.Reward.validate(); err != nil {
		return err
	}
	return c.Loss.validate()
}

// evalSeed separates the held-out tasks from the training draws.
const evalSeed = 0x6576616c // "eval"

// agent is what a run plays with: the tokenizer, the rollout bounds, the
// environments.
type agent struct {
	rc      rolloutConfig
	tasks   tasks
	backend model.Backend
}

// play runs every task group times with a snapshot of m; the rollouts of
// a task are consecutive.
func (a agent) play(ctx context.Context, m *nn.Model, ts []Task, group int, seed uint64) ([]Rollout, error) {
	sm, err := policy.Snapshot(m, a.backend, []int{a.rc.stop})
	if err != nil {
		return nil, err
	}
	var all []Task
	var seeds []uint64
	for ti, t := range ts {
		for g := range group {
			all = append(all, t)
			seeds = append(seeds, seed*1_000_003+uint64(ti*group+g))
		}
	}
	out, err := a.rc.runAll(ctx, sm, all, seeds)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Task = i / group
	}
	return out, nil
}

// Evaluation is the mean of each reward component over the held-out
// tasks, with the combined reward ("reward"), the grader's score
// ("score") and the rate of unparseable tool-call turns
// ("format_errors").
type Evaluation map[string]float64

// evaluate plays n held-out tasks samples times each (0: once,
// greedily) with fixed seeds.
func (a agent) evaluate(ctx context.Context, m *nn.Model, rw RewardConfig, n, samples int) (Evaluation, error) {
	held := tasks{base: a.tasks.base, cfg: a.tasks.cfg}
	held.cfg.Seed ^= evalSeed
	ts := make([]Task, n)
	for i := range ts {
		var err error
		if ts[i], err = held.at(0, i); err != nil {
			return nil, err
		}
	}
	play := a
	if samples == 0 {
		play.rc.temperature, samples = 0, 1
	}
	rolls, err := play.play(ctx, m, ts, samples, evalSeed)
	if err != nil {
		return nil, err
	}
	ev := Evaluation{}
	k := float64(len(rolls))
	for _, r := range rolls {
		v := rw.raw(r)
		for i, name := range append(components(), ReasoningLength) {
			ev[name] += v[i] / k
		}
		ev["reward"] += rw.Reward(r) / k
		ev["score"] += r.Grade.Score / k
		ev["format_errors"] += float64(r.FormatErrors) / k
	}
	return ev, nil
}

// logProbs reads a model's per-token log-probabilities of the rollouts in
// micro-batches.
func logProbs(ctx context.Context, m *nn.Model, rolls []Rollout, microTokens int) ([][]float32, error) {
	exs := make([]nn.Example, len(rolls))
	for i, r := range rolls {
		exs[i] = r.Example
	}
	var out [][]float32
	for _, mb := range nn.Pack(exs, microTokens) {
		lp, err := policy.LogProbs(ctx, m, mb)
		if err != nil {
			return nil, err
		}
		out = append(out, lp...)
	}
	return out, nil
}

// Train runs (or, with resume, continues) an HSA-RL run over the base
// harness in the folder out, in the layout of package runfolder:
// run.json, tokenizer.json, metrics.jsonl (loss, lr, grad norm, tokens/s,
// reward mean and std, each component's mean, KL to the reference, clip
// fraction, evaluations) and checkpoint/. Tasks, variants, faults and
// samples depend only on the seeds and the step, so a resumed run
// reproduces an uninterrupted one bit for bit. With resume, cfg.Steps > 0
// replaces the saved total.
func Train(ctx context.Context, base *harness.Harness, cfg Config, out string, resume bool, log io.Writer) error {
	if base == nil {
		return errors.New("rl: no base harness")
	}
	if resume {
		steps := cfg.Steps
		if err := runfolder.StartConfig(out, &cfg, true); err != nil {
			return fmt.Errorf("rl: %w", err)
		}
		if steps > 0 {
			cfg.Steps = steps
		}
		if cfg.BaseHarness != base.Version() {
			return fmt.Errorf("rl: the run started from harness version %s, resumed with %s", cfg.BaseHarness, base.Version())
		}
	}
	cfg.BaseHarness = base.Version()
	if err := cfg.validate(); err != nil {
		return err
	}
	if !resume {
		if err := runfolder.StartConfig(out, cfg, false); err != nil {
			return fmt.Errorf("rl: %w", err)
		}
	}
	cpu := model.NewCPU(cfg.Threads)
	defer cpu.Close()
	begin, err := runfolder.Begin(out, cfg.Init, resume, cfg.Optimization, cpu, cfg.Epochs)
	if err != nil {
		return fmt.Errorf("rl: %w", err)
	}
	tok, m, opt, start := begin.Tokenizer, begin.Model, begin.Optimizer, begin.Step
	var ref *nn.Model
	if cfg.Loss.KLCoef > 0 {
		refDir := cfg.Reference
		if refDir == "" {
			refDir = cfg.Init
		}
		if ref, err = nn.Load(refDir, cpu); err != nil {
			return fmt.Errorf("rl: reference: %w", err)
		}
	}
	a := agent{
		rc: rolloutConfig{tok: tok, tmpl: cfg.Template, stop: begin.Stop, turnTokens: cfg.TurnTokens, maxTurns: cfg.MaxTurns,
			temperature: cfg.Temperature},
		tasks:   tasks{base: base, cfg: cfg.Tasks},
		backend: cpu,
	}
	fmt.Fprintf(log, "rl: policy %s (%d parameters, %d trainable), %d tasks × %d rollouts a step, %.0f%% under fresh HSA variants, %.0f%% with tool faults, starting at step %d of %d\n",
		cfg.Init, m.NumParams(), m.NumTrainable(), cfg.PromptsPerStep, cfg.Group, 100*cfg.Tasks.VariantShare, 100*cfg.Tasks.FaultShare, start, cfg.Steps)

	steps, err := runfolder.OpenLog(out, start, cfg.Steps, log)
	if err != nil {
		return fmt.Errorf("rl: %w", err)
	}
	defer steps.Close()
	sched := cfg.Schedule()
	for step := start; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mt, err := a.step(ctx, cfg, m, ref, opt, sched, step)
		if err != nil {
			return fmt.Errorf("rl: step %d: %w", step+1, err)
		}
		if cfg.EvalTasks > 0 && cfg.Evaluates(mt.Step) {
			ev, err := a.evaluate(ctx, m, cfg.Reward, cfg.EvalTasks, cfg.EvalSamples)
			if err != nil {
				return fmt.Errorf("rl: evaluate at step %d: %w", mt.Step, err)
			}
			mt.Eval = ev
			steps.Note("eval at step %d: reward %.3f, score %.3f, accuracy %.3f, effectiveness %.3f, tool rationality %.3f, skill selection %.3f",
				mt.Step, ev["reward"], ev["score"], ev[Accuracy], ev[Effectiveness], ev[ToolRationality], ev[SkillSelection])
		}
		if err := steps.Step(mt, fmt.Sprintf("reward %.3f±%.3f  loss %.4f  kl %.4f  clip %.3f  lr %.2e  %.0f tokens/s",
			*mt.RewardMean, *mt.RewardStd, mt.Loss, valueOr(mt.KL), *mt.ClipFrac, mt.LR, mt.TokensPerSec)); err != nil {
			return fmt.Errorf("rl: %w", err)
		}
		if cfg.Saves(mt.Step) {
			if err := runfolder.SaveCheckpoint(out, m, opt, tok, mt.Step); err != nil {
				return fmt.Errorf("rl: %w", err)
			}
		}
	}
	return nil
}

// step plays a step's tasks and makes cfg.Epochs policy updates on them.
func (a agent) step(ctx context.Context, cfg Config, m, ref *nn.Model, opt *nn.AdamW, sched nn.Schedule, step int) (runfolder.Metrics, error) {
	t0 := time.Now()
	ts := make([]Task, cfg.PromptsPerStep)
	for j := range ts {
		var err error
		if ts[j], err = a.tasks.at(uint64(step)+1, j); err != nil {
			return runfolder.Metrics{}, err
		}
	}
	rolls, err := a.play(ctx, m, ts, cfg.Group, cfg.Seed<<20+uint64(step))
	if err != nil {
		return runfolder.Metrics{}, err
	}
	adv, err := cfg.Reward.Advantages(rolls, cfg.Group)
	if err != nil {
		return runfolder.Metrics{}, err
	}
	var old, refLP [][]float32
	if cfg.Epochs > 1 {
		if old, err = logProbs(ctx, m, rolls, cfg.MicroTokens); err != nil {
			return runfolder.Metrics{}, err
		}
	}
	if ref != nil {
		if refLP, err = logProbs(ctx, ref, rolls, cfg.MicroTokens); err != nil {
			return runfolder.Metrics{}, err
		}
	}
	lr := sched.LR(step)
	var st updateStats
	var norm float64
	tokens := 0
	for range cfg.Epochs {
		if st, err = cfg.Loss.update(ctx, m, rolls, adv, old, refLP, cfg.MicroTokens); err != nil {
			return runfolder.Metrics{}, err
		}
		if norm, err = opt.ClipAndStep(m, cfg.ClipNorm, lr); err != nil {
			return runfolder.Metrics{}, err
		}
		tokens += st.Tokens
	}
	dt := time.Since(t0).Seconds()
	var mean, sq float64
	comps := map[string]float64{}
	for _, r := range rolls {
		rw := cfg.Reward.Reward(r)
		mean += rw
		sq += rw * rw
		v := cfg.Reward.raw(r)
		for k, name := range append(components(), ReasoningLength) {
			comps[name] += v[k]
		}
		comps["reasoning_tokens"] += float64(r.Reasoning)
		comps["generated_tokens"] += float64(r.Generated)
		comps["format_errors"] += float64(r.FormatErrors)
	}
	n := float64(len(rolls))
	mean /= n
	for k := range comps {
		comps[k] /= n
	}
	mt := runfolder.Metrics{Step: step + 1, Loss: st.Loss, LR: lr, GradNorm: norm, Tokens: tokens, TrainedTokens: st.Trained * cfg.Epochs,
		TokensPerSec: float64(tokens) / dt, StepSeconds: dt, RewardMean: runfolder.Value(mean),
		RewardStd: runfolder.Value(math.Sqrt(max(sq/n-mean*mean, 0))), Rewards: comps, ClipFrac: runfolder.Value(st.ClipFrac)}
	if ref != nil {
		mt.KL = runfolder.Value(st.KL)
	}
	return mt, nil
}

func valueOr(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// Evaluate plays the run's held-out tasks (cfg.EvalTasks of them, the set
// the evaluation schedule uses) samples times each with the checkpoint in
// dir, at cfg.Temperature with fixed seeds (0 samples: once, greedily), and
// returns the mean of each reward component, the combined reward and the
// grader's score.
func Evaluate(ctx context.Context, base *harness.Harness, cfg Config, dir string, samples int) (Evaluation, error) {
	if base == nil {
		return nil, errors.New("rl: no base harness")
	}
	if err := cfg.Tasks.validate(); err != nil {
		return nil, err
	}
	if err := cfg.Reward.validate(); err != nil {
		return nil, err
	}
	if cfg.EvalTasks <= 0 || samples < 0 || cfg.TurnTokens <= 0 || cfg.MaxTurns <= 0 {
		return nil, fmt.Errorf("rl: evaluate %d tasks × %d samples with %d tokens a turn and %d turns", cfg.EvalTasks, samples, cfg.TurnTokens, cfg.MaxTurns)
	}
	tok, err := runfolder.LoadTokenizer(filepath.Join(dir, runfolder.TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("rl: %w", err)
	}
	stop, ok := tok.TokenID("<|im_end|>")
	if !ok {
		return nil, errors.New("rl: the tokenizer has no <|im_end|> token to end a turn")
	}
	cpu := model.NewCPU(cfg.Threads)
	defer cpu.Close()
	m, err := nn.Load(dir, cpu)
	if err != nil {
		return nil, fmt.Errorf("rl: %w", err)
	}
	a := agent{
		rc: rolloutConfig{tok: tok, tmpl: cfg.Template, stop: stop, turnTokens: cfg.TurnTokens, maxTurns: cfg.MaxTurns,
			temperature: cfg.Temperature},
		tasks:   tasks{base: base, cfg: cfg.Tasks},
		backend: cpu,
	}
	return a.evaluate(ctx, m, cfg.Reward, cfg.EvalTasks, samples)
}
