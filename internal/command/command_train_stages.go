package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/mtp"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/opd"
	"github.com/livehat/livehat/trainer/rl"
)

// stageRun is what every stage's "livehat train" command line holds
// besides the stage's configuration.
type stageRun struct {
	// out is the run folder; resume continues the run in it.
	out    string
	resume bool
	// steps is the --steps value when the command line set it (0
	// otherwise): the one setting a resumed run may change.
	steps int
}

// parseStage parses a stage's command line over defaults(): register
// adds the configuration's flags to a flag set (and returns a function to
// call after parsing, or nil). The common flags --stage (which must name
// stage), --out, --config and --resume are added here. When a config file
// is named it replaces the defaults and the command line is parsed again
// on top of it, so flags override the file.
func parseStage[C any](args []string, stage string, defaults func() C, register func(*C, *flag.FlagSet) func(), stderr io.Writer) (C, stageRun, error) {
	var run stageRun
	var stageFlag, configPath string
	parse := func(cfg *C) error {
		fs := newFlags("train", "--stage "+stage+" --out DIR [flags]", stderr)
		fs.StringVar(&stageFlag, "stage", stage, "training stage: "+stage+" here")
		fs.StringVar(&run.out, "out", "", "run folder (required)")
		fs.StringVar(&configPath, "config", "", "run configuration (JSON, the layout of a run folder's run.json); flags override it")
		fs.BoolVar(&run.resume, "resume", false, "continue the run in --out from its last checkpoint")
		finish := register(cfg, fs)
		if err := parseNoArgs(fs, args); err != nil {
			return err
		}
		if finish != nil {
			finish()
		}
		run.steps = stepsFlag(fs)
		return nil
	}
	cfg := defaults()
	if err := parse(&cfg); err != nil {
		return cfg, run, err
	}
	if configPath != "" {
		cfg = defaults()
		if err := runfolder.ReadConfig(configPath, &cfg); err != nil {
			return cfg, run, fmt.Errorf("train: %w", err)
		}
		if err := parse(&cfg); err != nil {
			return cfg, run, err
		}
	}
	switch {
	case stageFlag != stage:
		return cfg, run, usagef("--stage %q given to the %s stage", stageFlag, stage)
	case run.out == "":
		return cfg, run, usagef("--out DIR is required")
	}
	return cfg, run, nil
}

// optimizationFlags registers the hyper-parameters the OPD and RL stages
// share on fs over o's values. Call the returned function after parsing:
// it turns the LoRA flags into o.LoRA.
func optimizationFlags(o *runfolder.Optimization, fs *flag.FlagSet) (finish func()) {
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the data order, the samples and LoRA adapters")
	fs.IntVar(&o.Steps, "steps", o.Steps, "optimizer steps")
	fs.IntVar(&o.MicroTokens, "micro-tokens", o.MicroTokens, "tokens per forward pass; gradients of larger batches accumulate")
	fs.Float64Var(&o.LR, "lr", o.LR, "peak learning rate")
	fs.IntVar(&o.Warmup, "warmup", o.Warmup, "warm-up steps")
	fs.Float64Var(&o.MinLRRatio, "min-lr-ratio", o.MinLRRatio, "final learning rate as a share of the peak")
	fs.Float64Var(&o.AdamW.WeightDecay, "weight-decay", o.AdamW.WeightDecay, "AdamW decoupled weight decay")
	fs.Float64Var(&o.ClipNorm, "clip", o.ClipNorm, "global gradient-norm clip (0: none)")
	fs.IntVar(&o.SaveEvery, "save-every", o.SaveEvery, "checkpoint every N steps")
	fs.IntVar(&o.EvalEvery, "eval-every", o.EvalEvery, "evaluate every N steps (and at the end)")
	fs.IntVar(&o.Threads, "threads", o.Threads, "compute threads (0: one per physical core)")
	rank := fs.Int("lora-rank", 0, "train LoRA adapters of this rank on a frozen base (0: full fine-tuning)")
	alpha := fs.Float64("lora-alpha", 16, "LoRA alpha")
	targets := fs.String("lora-targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "LoRA target modules")
	return func() {
		if *rank > 0 {
			o.LoRA = &nn.LoRAConfig{Rank: *rank, Alpha: *alpha, Targets: strings.Split(*targets, ",")}
		}
	}
}

// opdFlags adds the OPD configuration's flags to fs.
func opdFlags(cfg *opd.Config, fs *flag.FlagSet) func() {
	fs.StringVar(&cfg.Init, "init", cfg.Init, "student checkpoint to start from (with tokenizer.json), e.g. the HSA-SFT run's checkpoint")
	fs.StringVar(&cfg.Teacher, "teacher", cfg.Teacher, "teacher checkpoint (the base before SFT), same tokenizer")
	fs.Uint64Var(&cfg.PromptSeed, "prompt-seed", cfg.PromptSeed, "seed of the general prompts")
	fs.IntVar(&cfg.Prompts, "prompts", cfg.Prompts, "general prompts in the training pool")
	fs.IntVar(&cfg.EvalPrompts, "eval-prompts", cfg.EvalPrompts, "held-out general prompts for the evaluation")
	fs.IntVar(&cfg.PromptsPerStep, "prompts-per-step", cfg.PromptsPerStep, "prompts per step")
	fs.IntVar(&cfg.Samples, "samples", cfg.Samples, "student samples per prompt")
	fs.IntVar(&cfg.MaxNewTokens, "max-new-tokens", cfg.MaxNewTokens, "longest sampled reply")
	fs.Float64Var(&cfg.Temperature, "temperature", cfg.Temperature, "sampling temperature (1: the student itself)")
	fs.StringVar((*string)(&cfg.Estimator), "estimator", string(cfg.Estimator), "per-token reverse-KL estimator: full or sampled")
	return optimizationFlags(&cfg.Optimization, fs)
}

// parseOPD parses "livehat train --stage opd":
//
//	livehat train --stage opd --out DIR --init SFT_CHECKPOINT --teacher BASE_CHECKPOINT [--config run.json] [--resume]
//	    [--estimator full|sampled] [--prompts 512 --eval-prompts 32 --prompt-seed 1]
//	    [--prompts-per-step 8 --samples 4 --max-new-tokens 64 --temperature 1]
//	    [--steps 100] [--lr 5e-4] [--warmup 5] [--min-lr-ratio 0.1] [--weight-decay 0.1] [--clip 1]
//	    [--micro-tokens 8192] [--save-every 25] [--eval-every 25] [--seed 1] [--threads N]
//	    [--lora-rank R --lora-alpha A --lora-targets q_proj,v_proj]
//
// With --resume the run folder's run.json is used and only --steps may
// change.
func parseOPD(args []string, stderr io.Writer) (opd.Config, stageRun, error) {
	cfg, run, err := parseStage(args, "opd", opd.DefaultConfig, opdFlags, stderr)
	if err != nil {
		return cfg, run, err
	}
	if !run.resume && (cfg.Init == "" || cfg.Teacher == "") {
		return cfg, run, usagef("--init CHECKPOINT (the student) and --teacher CHECKPOINT are required")
	}
	if run.resume {
		cfg = opd.Config{}
		cfg.Steps = run.steps
	}
	return cfg, run, nil
}

// trainOPD runs "livehat train --stage opd".
func trainOPD(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, run, err := parseOPD(args, stderr)
	if err != nil {
		return err
	}
	return opd.Train(ctx, cfg, run.out, run.resume, stdout)
}

// rlFlags adds the RL configuration's flags to fs.
func rlFlags(cfg *rl.Config, fs *flag.FlagSet) func() {
	fs.StringVar(&cfg.Init, "init", cfg.Init, "policy checkpoint to start from (with tokenizer.json), e.g. the OPD run's checkpoint")
	fs.StringVar(&cfg.Reference, "reference", cfg.Reference, "reference checkpoint of the KL term (default: --init)")
	t := &cfg.Tasks
	fs.Uint64Var(&t.Seed, "data-seed", t.Seed, "seed of the rooms, questions, variants and faults")
	fs.IntVar(&t.Rooms, "rooms", t.Rooms, "live rooms the tasks are drawn from")
	fs.IntVar(&t.Room.MinItems, "min-items", t.Room.MinItems, "fewest items in a room's catalog (0: the room's default)")
	fs.IntVar(&t.Room.MaxItems, "max-items", t.Room.MaxItems, "most items in a room's catalog (0: the room's default)")
	fs.IntVar(&t.Room.Variety, "variety", t.Room.Variety, "rooms as a wider range of merchants and viewers make them, -1 to 5 (liveroom.RoomConfig.Variety), as in the SFT stages")
	fs.Float64Var(&t.VariantShare, "variant-share", t.VariantShare, "share of rollouts under a freshly augmented harness")
	fs.IntVar(&t.Transforms, "transforms", t.Transforms, "training-pool families per variant")
	fs.Float64Var(&t.FaultShare, "fault-share", t.FaultShare, "share of tasks with a faulty tool")
	fs.IntVar(&cfg.PromptsPerStep, "prompts-per-step", cfg.PromptsPerStep, "tasks per step")
	fs.IntVar(&cfg.Group, "group", cfg.Group, "rollouts per task (GRPO's G)")
	fs.IntVar(&cfg.TurnTokens, "turn-tokens", cfg.TurnTokens, "longest agent turn")
	fs.IntVar(&cfg.MaxTurns, "max-turns", cfg.MaxTurns, "most agent turns per rollout")
	fs.Float64Var(&cfg.Temperature, "temperature", cfg.Temperature, "sampling temperature")
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "policy updates per step's rollouts (num_iterations)")
	fs.Float64Var(&cfg.Loss.ClipLow, "clip-low", cfg.Loss.ClipLow, "ratio clip below 1")
	fs.Float64Var(&cfg.Loss.ClipHigh, "clip-high", cfg.Loss.ClipHigh, "ratio clip above 1")
	fs.Float64Var(&cfg.Loss.KLCoef, "kl-coef", cfg.Loss.KLCoef, "weight of the k3 KL to the reference (0: none)")
	fs.StringVar(&cfg.Loss.Aggregation, "aggregation", cfg.Loss.Aggregation, "loss aggregation: token-mean or seq-mean-token-mean")
	fs.Float64Var(&cfg.Reward.ReasoningPenalty, "reasoning-penalty", cfg.Reward.ReasoningPenalty, "weight of the reasoning-length penalty")
	fs.IntVar(&cfg.Reward.ReasoningBudget, "reasoning-budget", cfg.Reward.ReasoningBudget, "reasoning tokens at which the penalty is full")
	fs.IntVar(&cfg.EvalTasks, "eval-tasks", cfg.EvalTasks, "held-out tasks of the evaluation")
	fs.IntVar(&cfg.EvalSamples, "eval-samples", cfg.EvalSamples, "seeded samples per held-out task (0: one greedy)")
	return optimizationFlags(&cfg.Optimization, fs)
}

// parseRL parses "livehat train --stage rl" and returns the --harness
// file too:
//
//	livehat train --stage rl --out DIR --init CHECKPOINT [--config run.json] [--resume] [--harness FILE]
//	    [--reference CHECKPOINT] [--prompts-per-step 4 --group 8 --turn-tokens 96 --max-turns 5 --temperature 1]
//	    [--epochs 1 --clip-low 0.2 --clip-high 0.28 --kl-coef 0.01 --aggregation token-mean]
//	    [--reasoning-penalty 0.5 --reasoning-budget 64]
//	    [--rooms 32 --min-items 0 --max-items 0 --data-seed 1 --variant-share 0.5 --transforms 2 --fault-share 0.2]
//	    [--eval-tasks 16 --eval-samples 0 --eval-every 25]
//	    [--steps 100] [--lr 1e-4] [--warmup 5] [--min-lr-ratio 0.1] [--weight-decay 0.1] [--clip 1]
//	    [--micro-tokens 8192] [--save-every 25] [--seed 1] [--threads N]
//	    [--lora-rank R --lora-alpha A --lora-targets q_proj,v_proj]
//
// With --resume the run folder's run.json is used, only --steps may
// change, and --harness must name the harness the run started with.
func parseRL(args []string, stderr io.Writer) (rl.Config, stageRun, string, error) {
	var harnessPath string
	cfg, run, err := parseStage(args, "rl", rl.DefaultConfig, func(c *rl.Config, fs *flag.FlagSet) func() {
		fs.StringVar(&harnessPath, "harness", "", "base harness file (default: the embedded demo harness)")
		return rlFlags(c, fs)
	}, stderr)
	if err != nil {
		return cfg, run, "", err
	}
	if !run.resume && cfg.Init == "" {
		return cfg, run, "", usagef("--init CHECKPOINT (the policy to start from) is required")
	}
	if run.resume {
		cfg = rl.Config{}
		cfg.Steps = run.steps
	}
	return cfg, run, harnessPath, nil
}

// trainRL runs "livehat train --stage rl".
func trainRL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, run, harnessPath, err := parseRL(args, stderr)
	if err != nil {
		return err
	}
	base, err := loadHarness(harnessPath)
	if err != nil {
		return err
	}
	return rl.Train(ctx, base, cfg, run.out, run.resume, stdout)
}

// mtpFlags adds the MTP configuration's flags to fs.
func mtpFlags(c *mtp.Config, fs *flag.FlagSet) func() {
	fs.StringVar(&c.Init, "init", c.Init, "the policy's checkpoint directory (required)")
	fs.StringVar(&c.Prompts, "prompts", c.Prompts, "JSONL conversations whose opening turns are the prompts (required)")
	fs.IntVar(&c.Heads, "heads", c.Heads, "MTP heads to train (tokens drafted per step)")
	fs.IntVar(&c.DraftVocab, "draft-vocab", c.DraftVocab, "heads draft among the token ids below N (0: all)")
	fs.IntVar(&c.Rollouts, "rollouts", c.Rollouts, "sampled replies to train on")
	fs.IntVar(&c.Gen, "gen", c.Gen, "tokens per sampled reply at most")
	fs.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature of the rollouts (0: greedy)")
	fs.Float64Var(&c.TopP, "top-p", c.TopP, "nucleus cut of the rollouts (0 or 1: none)")
	fs.IntVar(&c.Eval, "eval", c.Eval, "held-out prompts for the acceptance report")
	fs.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps")
	fs.IntVar(&c.Batch, "batch", c.Batch, "positions per step")
	fs.Float64Var(&c.LR, "lr", c.LR, "AdamW learning rate")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the rollouts and batches")
	return nil
}

// parseMTP parses "livehat train --stage mtp":
//
//	livehat train --stage mtp --init CHECKPOINT --prompts FILE.jsonl --out RUN
//	    [--heads 2] [--draft-vocab N] [--rollouts 256] [--gen 64] [--temperature 0] [--top-p 0]
//	    [--eval 16] [--steps 300] [--batch 128] [--lr 0.002] [--seed 1] [--config run.json]
//
// A run is a few minutes at most, so --resume is refused: run it again.
func parseMTP(args []string, stderr io.Writer) (mtp.Config, stageRun, error) {
	cfg, run, err := parseStage(args, "mtp", mtp.DefaultConfig, mtpFlags, stderr)
	if err != nil {
		return cfg, run, err
	}
	switch {
	case run.resume:
		return cfg, run, usagef("--resume: an mtp run is short and is not resumed; start it again in a new --out")
	case cfg.Init == "" || cfg.Prompts == "":
		return cfg, run, usagef("--init CHECKPOINT and --prompts FILE.jsonl are required")
	case cfg.Heads < 1 || cfg.Heads > model.MaxMTPHeads:
		return cfg, run, usagef("--heads %d: want 1 to %d", cfg.Heads, model.MaxMTPHeads)
	case cfg.DraftVocab < 0:
		return cfg, run, usagef("--draft-vocab %d is negative", cfg.DraftVocab)
	case cfg.Rollouts <= 0 || cfg.Gen <= 0 || cfg.Eval < 0:
		return cfg, run, usagef("--rollouts and --gen must be positive, --eval not negative")
	}
	return cfg, run, nil
}

// trainMTP runs "livehat train --stage mtp": it trains the policy's MTP
// heads on its own replies (see mtp.TrainRun).
func trainMTP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, run, err := parseMTP(args, stderr)
	if err != nil {
		return err
	}
	return mtp.TrainRun(ctx, cfg, run.out, stdout)
}
