package opd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// Config is a whole OPD run; it is saved in the run folder as run.json.
type Config struct {
	// Stage is "opd"; it lets `livehat train --config` pick the stage.
	Stage string `json:"stage"`
	// Init is the student's starting checkpoint (the HSA-SFT model) with
	// its tokenizer.json; Teacher the teacher's checkpoint (the base
	// before SFT), which must share the tokenizer.
	Init    string `json:"init"`
	Teacher string `json:"teacher"`
	// Template renders the prompts (the engine's default, Qwen3, is the
	// zero value).
	Template chat.Template `json:"template"`
	// PromptSeed and Prompts make the training pool of general prompts;
	// EvalPrompts more, from another seed, are the held-out set.
	PromptSeed  uint64 `json:"prompt_seed"`
	Prompts     int    `json:"prompts"`
	EvalPrompts int    `json:"eval_prompts"`
	// PromptsPerStep prompts are drawn each step and Samples replies
	// sampled for each, at most MaxNewTokens tokens long, at Temperature
	// (1 samples the student itself, which the loss assumes).
	PromptsPerStep int     `json:"prompts_per_step"`
	Samples        int     `json:"samples"`
	MaxNewTokens   int     `json:"max_new_tokens"`
	Temperature    float64 `json:"temperature"`
	// Estimator is Full or Sampled.
	Estimator Estimator `json:"estimator"`
	runfolder.Optimization
}

// DefaultConfig returns the OPD defaults: 8 prompts × 4 samples of up to 64
// tokens a step, the exact full-vocabulary KL.
func DefaultConfig() Config {
	return Config{
		Stage: "opd", PromptSeed: 1, Prompts: 512, EvalPrompts: 32, PromptsPerStep: 8, Samples: 4,
		MaxNewTokens: 64, Temperature: 1, Estimator: Full,
		Optimization: runfolder.Optimization{Seed: 1, Steps: 100, MicroTokens: 8192, LR: 5e-4, Warmup: 5, MinLRRatio: 0.1,
			AdamW: nn.DefaultAdamW(), ClipNorm: 1, SaveEvery: 25, EvalEvery: 25},
	}
}

func (c Config) validate() error {
	switch {
	case c.Stage != "" && c.Stage != "opd":
		return fmt.Errorf("opd: the configuration is for stage %q", c.Stage)
	case c.Init == "" || c.Teacher == "":
		return errors.New("opd: name the student's starting checkpoint (init) and the teacher's")
	case c.Prompts <= 0 || c.PromptsPerStep <= 0 || c.Samples <= 0 || c.MaxNewTokens <= 0 || c.EvalPrompts < 0:
		return fmt.Errorf("opd: prompts %d, prompts per step %d, samples %d, max new tokens %d, eval prompts %d",
			c.Prompts, c.PromptsPerStep, c.Samples, c.MaxNewTokens, c.EvalPrompts)
	case !(c.Temperature > 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("opd: temperature %g: sampling needs a positive one", c.Temperature)
	case c.Estimator != Full && c.Estimator != Sampled:
		return fmt.Errorf("opd: estimator %q: want full or sampled", c.Estimator)
	}
	if err := c.Optimization.Validate(); err != nil {
		return fmt.Errorf("opd: %w", err)
	}
	return nil
}

// evalSeed separates the held-out prompts from the training pool.
const evalSeed = 0x6576616c // "eval"

// Train runs (or, with resume, continues) an OPD run in the folder out,
// in the layout of package runfolder: run.json, tokenizer.json,
// metrics.jsonl (loss = the estimator's mean, kl = the exact reverse KL,
// eval = held-out KL and instruction following) and checkpoint/. Prompts
// and samples depend only on the seeds and the step, so a resumed run
// reproduces an uninterrupted one bit for bit. With resume, cfg.Steps > 0
// replaces the saved total.
func Train(ctx context.Context, cfg Config, out string, resume bool, log io.Writer) error {
	if resume {
		steps := cfg.Steps
		if err := runfolder.StartConfig(out, &cfg, true); err != nil {
			return fmt.Errorf("opd: %w", err)
		}
		if steps > 0 {
			cfg.Steps = steps
		}
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if !resume {
		if err := runfolder.StartConfig(out, cfg, false); err != nil {
			return fmt.Errorf("opd: %w", err)
		}
	}
	cpu := model.NewCPU(cfg.Threads)
	defer cpu.Close()
	begin, err := runfolder.Begin(out, cfg.Init, resume, cfg.Optimization, cpu, 1)
	if err != nil {
		return fmt.Errorf("opd: %w", err)
	}
	tok, student, opt, start := begin.Tokenizer, begin.Model, begin.Optimizer, begin.Step
	teacher, err := nn.Load(cfg.Teacher, cpu)
	if err != nil {
		return fmt.Errorf("opd: teacher: %w", err)
	}
	pool := Prompts(cfg.PromptSeed, cfg.Prompts)
	held := Prompts(cfg.PromptSeed^evalSeed, cfg.EvalPrompts)
	s := sampling{tok: tok, tmpl: cfg.Template, stop: []int{begin.Stop}, backend: cpu, samples: cfg.Samples,
		maxTokens: cfg.MaxNewTokens, temperature: cfg.Temperature}
	fmt.Fprintf(log, "opd: student %s (%d parameters, %d trainable), teacher %s, %d prompts (%d held out), %s estimator, starting at step %d of %d\n",
		cfg.Init, student.NumParams(), student.NumTrainable(), cfg.Teacher, len(pool), len(held), cfg.Estimator, start, cfg.Steps)

	steps, err := runfolder.OpenLog(out, start, cfg.Steps, log)
	if err != nil {
		return fmt.Errorf("opd: %w", err)
	}
	defer steps.Close()
	sched := cfg.Schedule()
	for step := start; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		prompts := make([]Prompt, cfg.PromptsPerStep)
		for j, i := range runfolder.StepIndices(len(pool), cfg.Seed, step, cfg.PromptsPerStep) {
			prompts[j] = pool[i]
		}
		rolls, err := s.sample(ctx, student, prompts, cfg.Seed<<20+uint64(step))
		if err != nil {
			return fmt.Errorf("opd: step %d: %w", step+1, err)
		}
		st, err := distill(ctx, student, teacher, rolls, cfg.Estimator, cfg.MicroTokens)
		if err != nil {
			return fmt.Errorf("opd: step %d: %w", step+1, err)
		}
		lr := sched.LR(step)
		norm, err := opt.ClipAndStep(student, cfg.ClipNorm, lr)
		if err != nil {
			return fmt.Errorf("opd: step %d: %w", step+1, err)
		}
		dt := time.Since(t0).Seconds()
		mt := runfolder.Metrics{Step: step + 1, Loss: st.KL, LR: lr, GradNorm: norm, Tokens: st.Tokens, TrainedTokens: st.TrainedTokens,
			TokensPerSec: float64(st.Tokens) / dt, StepSeconds: dt, KL: runfolder.Value(st.KL)}
		if len(held) > 0 && cfg.Evaluates(mt.Step) {
			ev, err := evaluate(ctx, s, student, teacher, held, cfg.Seed^evalSeed)
			if err != nil {
				return fmt.Errorf("opd: evaluate at step %d: %w", mt.Step, err)
			}
			mt.Eval = map[string]float64{"kl": ev.KL, "if_checks": ev.Followed, "if_prompts": ev.Prompts}
			steps.Note("eval at step %d: reverse KL %.4f, checks passed %.3f, prompts fully followed %.3f", mt.Step, ev.KL, ev.Followed, ev.Prompts)
		}
		if err := steps.Step(mt, fmt.Sprintf("kl %.4f  lr %.2e  grad-norm %.3f  %.0f tokens/s", st.KL, lr, norm, mt.TokensPerSec)); err != nil {
			return fmt.Errorf("opd: %w", err)
		}
		if cfg.Saves(mt.Step) {
			if err := runfolder.SaveCheckpoint(out, student, opt, tok, mt.Step); err != nil {
				return fmt.Errorf("opd: %w", err)
			}
		}
	}
	return nil
}
