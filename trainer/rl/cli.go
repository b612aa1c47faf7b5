package rl

import (
	"context"
	"flag"
	"io"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// registerFlags adds the configuration's flags to fs.
func registerFlags(cfg *Config, fs *flag.FlagSet) func() {
	fs.StringVar(&cfg.Init, "init", cfg.Init, "policy checkpoint to start from (with tokenizer.json), e.g. the OPD run's checkpoint")
	fs.StringVar(&cfg.Reference, "reference", cfg.Reference, "reference checkpoint of the KL term (default: --init)")
	t := &cfg.Tasks
	fs.Uint64Var(&t.Seed, "data-seed", t.Seed, "seed of the rooms, questions, variants and faults")
	fs.IntVar(&t.Rooms, "rooms", t.Rooms, "live rooms the tasks are drawn from")
	fs.IntVar(&t.Room.MinItems, "min-items", t.Room.MinItems, "fewest items in a room's catalog (0: the room's default)")
	fs.IntVar(&t.Room.MaxItems, "max-items", t.Room.MaxItems, "most items in a room's catalog (0: the room's default)")
	fs.IntVar(&t.Room.Variety, "variety", t.Room.Variety, "rooms as a wider range of merchants and viewers make them, -1 to 4 (liveroom.RoomConfig.Variety), as in the SFT stages")
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
	return cfg.Flags(fs)
}

// LoadHarness reads the harness file at path, or the embedded demo
// harness when path is empty.
func LoadHarness(path string) (*harness.Harness, error) {
	if path == "" {
		return harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	}
	return harness.Load(path)
}

// TrainMain is `livehat train --stage rl`:
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
func TrainMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var harnessPath string
	cfg, cmd, err := runfolder.ParseCommand(args, "rl", DefaultConfig, func(c *Config, fs *flag.FlagSet) func() {
		fs.StringVar(&harnessPath, "harness", "", "base harness file (default: the embedded demo harness)")
		return registerFlags(c, fs)
	}, stderr)
	if err != nil {
		return err
	}
	if !cmd.Resume && cfg.Init == "" {
		return &harness.UsageError{Msg: "--init CHECKPOINT (the policy to start from) is required"}
	}
	if cmd.Resume {
		cfg = Config{}
		cfg.Steps = cmd.Steps
	}
	base, err := LoadHarness(harnessPath)
	if err != nil {
		return err
	}
	return Train(ctx, base, cfg, cmd.Out, cmd.Resume, stdout)
}
