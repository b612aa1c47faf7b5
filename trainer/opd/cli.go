package opd

import (
	"context"
	"flag"
	"io"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// registerFlags adds the configuration's flags to fs.
func registerFlags(cfg *Config, fs *flag.FlagSet) func() {
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
	return cfg.Flags(fs)
}

// TrainMain is `livehat train --stage opd`:
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
func TrainMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, cmd, err := runfolder.ParseCommand(args, "opd", DefaultConfig, registerFlags, stderr)
	if err != nil {
		return err
	}
	if !cmd.Resume && (cfg.Init == "" || cfg.Teacher == "") {
		return &harness.UsageError{Msg: "--init CHECKPOINT (the student) and --teacher CHECKPOINT are required"}
	}
	if cmd.Resume {
		cfg = Config{}
		cfg.Steps = cmd.Steps
	}
	return Train(ctx, cfg, cmd.Out, cmd.Resume, stdout)
}
