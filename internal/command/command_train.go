package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/sft"
)

// teacherKeyEnv names the environment variable holding the teacher
// server's API key, kept out of flags and run files.
const teacherKeyEnv = "LIVEHAT_TEACHER_API_KEY"

// Train is "livehat train". --recipe runs a whole pipeline (see
// trainRecipe). Otherwise --stage (or the "stage" of the --config file, or
// of the run folder's run.json with --resume) picks the stage: sft,
// opd, rl or mtp, each with flags of its own. The SFT stage:
//
//	livehat train --stage sft --out DIR [--config run.json] [--augment=true|false] [--steps N] [--stop-at N] [--resume]
//	    [--model tiny|small|5m | --init CHECKPOINT] [--batch 8] [--micro-tokens 8192]
//	    [--lr 2e-3] [--warmup 20] [--min-lr-ratio 0.1] [--weight-decay 0.1] [--clip 1]
//	    [--save-every 50] [--eval-examples 16 --eval-every 25] [--vocab 2048] [--max-len 2048] [--seed 1] [--threads N]
//	    [--lora-rank R --lora-alpha A --lora-targets q_proj,v_proj]
//	    [--rooms 40 --questions 12 --data-seed 1 --variant-share 0.75 --transforms 3 --retry-share 0.2 --context-share 0.5 --memory-share 0.5]
//	    [--shop-share 0 --long-share 0 --strategy-share 0 --fault-share 0 --persistent-share 0 --operator-share 0]
//	    [--teacher URL --teacher-model NAME] [--dump-data N]
//
// --dump-data N builds the data and writes N of its trajectories instead
// of training (see sft.DumpData). With --resume the run folder's run.json
// is used and only --steps (the cosine schedule follows the new total) and
// --stop-at may change.
func Train(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if _, ok := flagValue(args, "recipe"); ok {
		return trainRecipe(ctx, args, stdout, stderr)
	}
	stage, err := stageOf(args)
	if err != nil {
		return err
	}
	return trainStage(ctx, stage, args, stdin, stdout, stderr)
}

// trainStage runs one stage's command line.
func trainStage(ctx context.Context, stage string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch stage {
	case "opd":
		return trainOPD(ctx, args, stdout, stderr)
	case "rl":
		return trainRL(ctx, args, stdout, stderr)
	case "mtp":
		return trainMTP(ctx, args, stdout, stderr)
	case "", "sft":
		return trainSFT(ctx, args, stdout, stderr)
	}
	return usagef("--stage %q: want sft, opd, rl or mtp", stage)
}

// sftCommand is what an SFT command line holds besides sft.TrainConfig.
type sftCommand struct {
	stage, out, config, harness *string
	resume                      *bool
	dump                        *int
	loraRank                    *int
	loraAlpha                   *float64
	loraTargets                 *string
}

// newSFTFlags registers the SFT stage's flags over cfg, so the flags the
// command line names override what cfg already holds.
func newSFTFlags(cfg *sft.TrainConfig, stderr io.Writer) (*flag.FlagSet, sftCommand) {
	fs := newFlags("train", "[--stage sft|opd|rl|mtp | --recipe NAME] --out DIR [flags]", stderr)
	var c sftCommand
	c.stage = fs.String("stage", "sft", "training stage: sft, opd or rl")
	c.out = fs.String("out", "", "run folder (required)")
	c.config = fs.String("config", "", "run configuration (JSON, the layout of a run folder's run.json); flags override it")
	c.resume = fs.Bool("resume", false, "continue the run in --out from its last checkpoint")
	c.harness = sftDataFlags(fs, &cfg.Data)
	fs.StringVar(&cfg.Model, "model", cfg.Model, "model shape trained from scratch: tiny, small or 5m")
	fs.StringVar(&cfg.Init, "init", cfg.Init, "start from this checkpoint folder (with its tokenizer.json) instead")
	fs.IntVar(&cfg.VocabSize, "vocab", cfg.VocabSize, "BPE vocabulary trained on the room corpus")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", cfg.Tokenizer, "use this tokenizer.json instead of training one")
	fs.IntVar(&cfg.Phrases, "phrases", cfg.Phrases, "compact tokenizer: add up to N repeated phrases of the corpus as single tokens (0: plain BPE)")
	fs.IntVar(&cfg.MaxLen, "max-len", cfg.MaxLen, "context length; longer trajectories are dropped")
	fs.IntVar(&cfg.Context, "context", 0, "with --init: raise the checkpoint's context to this many positions first (RoPE has no learned positions)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the weights and the example order")
	fs.IntVar(&cfg.Steps, "steps", cfg.Steps, "optimizer steps")
	fs.IntVar(&cfg.StopAt, "stop-at", cfg.StopAt, "stop after this step, keeping the learning-rate schedule of --steps (0: run them all)")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "examples per optimizer step")
	fs.IntVar(&cfg.MicroTokens, "micro-tokens", cfg.MicroTokens, "tokens per forward pass; gradients of larger batches accumulate")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "peak learning rate")
	fs.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "warm-up steps")
	fs.Float64Var(&cfg.MinLRRatio, "min-lr-ratio", cfg.MinLRRatio, "final learning rate as a share of the peak")
	fs.Float64Var(&cfg.AdamW.WeightDecay, "weight-decay", cfg.AdamW.WeightDecay, "AdamW decoupled weight decay")
	fs.Float64Var(&cfg.ClipNorm, "clip", cfg.ClipNorm, "global gradient-norm clip (0: none)")
	fs.IntVar(&cfg.SaveEvery, "save-every", cfg.SaveEvery, "checkpoint every N steps")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "compute threads (0: one per physical core)")
	fs.IntVar(&cfg.EvalExamples, "eval-examples", cfg.EvalExamples, "trajectories held out of training for the eval loss")
	fs.IntVar(&cfg.EvalEvery, "eval-every", cfg.EvalEvery, "measure the held-out loss every N steps (and at the end)")
	c.dump = fs.Int("dump-data", 0, "build the data the flags choose, write N of its trajectories (spread over it) as JSONL to standard output with a summary on standard error, and train nothing")
	c.loraRank = fs.Int("lora-rank", 0, "train LoRA adapters of this rank on a frozen base (0: full fine-tuning)")
	c.loraAlpha = fs.Float64("lora-alpha", 16, "LoRA alpha")
	c.loraTargets = fs.String("lora-targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "LoRA target modules")
	return fs, c
}

// sftDataFlags registers the flags that choose the SFT data.
func sftDataFlags(fs *flag.FlagSet, c *sft.DataConfig) (harnessPath *string) {
	harnessPath = fs.String("harness", "", "base harness file (default: the embedded demo harness)")
	fs.Uint64Var(&c.Seed, "data-seed", c.Seed, "seed of the rooms, questions and variants")
	fs.IntVar(&c.Rooms, "rooms", c.Rooms, "live rooms to generate")
	fs.IntVar(&c.Questions, "questions", c.Questions, "viewer questions per room")
	fs.IntVar(&c.Room.MinItems, "min-items", c.Room.MinItems, "fewest items in a room's catalog (0: the room's default)")
	fs.IntVar(&c.Room.MaxItems, "max-items", c.Room.MaxItems, "most items in a room's catalog (0: the room's default)")
	fs.IntVar(&c.Room.Variety, "variety", c.Room.Variety, "rooms as a wider range of merchants and viewers make them, 0-5 (liveroom.RoomConfig.Variety): 1 names and size charts, 2 wordings, 3 and 4 slug ids, 5 open product kinds; -1 the rooms the recipe's first stages were trained on")
	fs.IntVar(&c.General, "general", c.General, "general-corpus conversations (chit-chat, questions, checkable instructions) mixed in")
	fs.IntVar(&c.Retrieval, "retrieval", c.Retrieval, "copy and retrieval warm-up conversations mixed in")
	fs.IntVar(&c.SkillPicks, "skill-picks", c.SkillPicks, "skill-choice warm-up conversations mixed in: renamed, reworded skills and a viewer's message, answered with the skill to load")
	fs.BoolVar(&c.Augment, "augment", c.Augment, "harness-state augmentation (false: Fixed-Harness SFT)")
	fs.Float64Var(&c.VariantShare, "variant-share", c.VariantShare, "share of trajectories rendered under an HSA variant")
	fs.IntVar(&c.Transforms, "transforms", c.Transforms, "training-pool families per variant")
	fs.Float64Var(&c.RetryShare, "retry-share", c.RetryShare, "share of planned hook corrections kept as full retries")
	fs.Float64Var(&c.ContextShare, "context-share", c.ContextShare, "share of live-room trajectories rendered with the stream context a console session shows (featured item, items on sale)")
	fs.Float64Var(&c.MemoryShare, "memory-share", c.MemoryShare, "share of live-room trajectories that begin with earlier questions and replies of the room, as a session's memory shows them")
	fs.Float64Var(&c.ShopShare, "shop-share", c.ShopShare, "share of rooms that are shop catalogs: every field of the catalog schema, the shop phrasing grammars, facts left unstated")
	fs.Float64Var(&c.LongShare, "long-share", c.LongShare, "share of shop rooms with 20-30 items and the stream context: the longest live prompts")
	fs.Float64Var(&c.StrategyShare, "strategy-share", c.StrategyShare, "share of the other rooms played as a strategy episode: narration turns and viewer questions in one session")
	fs.Float64Var(&c.FaultShare, "fault-share", c.FaultShare, "share of tool-using questions answered while one of their tools fails")
	fs.Float64Var(&c.PersistentShare, "persistent-share", c.PersistentShare, "share of tool faults that fail every call (the right reply: the information is unavailable)")
	fs.Float64Var(&c.OperatorShare, "operator-share", c.OperatorShare, "share of variant trajectories with an operator's edit on top (hsa pool operator)")
	fs.Float64Var(&c.SkillRenameShare, "skill-rename-share", c.SkillRenameShare, "share of variant trajectories whose skills are renamed once more on top (hsa family skill-rename, mostly coined ids)")
	fs.Float64Var(&c.FeedbackShare, "feedback-share", c.FeedbackShare, "share of live-room questions shown with a flawed first reply, the feedback the harness's hooks (the example plugins, run from the repository root) send it back with, and the right reply")
	fs.StringVar(&c.Teacher, "teacher", c.Teacher, "OpenAI-compatible server whose model answers instead of the room's expert (API key from $"+teacherKeyEnv+")")
	fs.StringVar(&c.TeacherModel, "teacher-model", c.TeacherModel, "model name to ask the teacher server for")
	return harnessPath
}

// sftRun is an SFT command line parsed: the configuration, the run
// folder and what to do with them.
type sftRun struct {
	cfg     sft.TrainConfig
	out     string
	resume  bool
	harness string
	// dump, when positive, asks for that many trajectories of the data
	// instead of a run.
	dump int
}

// parseSFT parses an SFT command line. A --config file replaces the
// defaults and the flags are parsed again on top of it.
func parseSFT(args []string, stderr io.Writer) (sftRun, error) {
	cfg := sft.DefaultTrainConfig()
	fs, c := newSFTFlags(&cfg, stderr)
	if err := parseNoArgs(fs, args); err != nil {
		return sftRun{}, err
	}
	if *c.config != "" {
		cfg = sft.DefaultTrainConfig()
		if err := runfolder.ReadConfig(*c.config, &cfg); err != nil {
			return sftRun{}, fmt.Errorf("train: %w", err)
		}
		fs, c = newSFTFlags(&cfg, stderr)
		if err := parseNoArgs(fs, args); err != nil {
			return sftRun{}, err
		}
	}
	run := sftRun{out: *c.out, resume: *c.resume, harness: *c.harness, dump: *c.dump}
	if run.dump > 0 {
		run.cfg = cfg
		return run, nil
	}
	if run.out == "" {
		return sftRun{}, usagef("--out DIR is required")
	}
	if *c.loraRank > 0 {
		cfg.LoRA = &nn.LoRAConfig{Rank: *c.loraRank, Alpha: *c.loraAlpha, Targets: strings.Split(*c.loraTargets, ",")}
	}
	if cfg.Init != "" {
		cfg.Model = ""
	}
	if run.resume {
		// A resumed run reads run.json; only the schedule's length and
		// where it stops may change.
		cfg = sft.TrainConfig{StopAt: cfg.StopAt, Steps: stepsFlag(fs)}
	}
	run.cfg = cfg
	return run, nil
}

// trainSFT runs "livehat train --stage sft".
func trainSFT(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	run, err := parseSFT(args, stderr)
	if err != nil {
		return err
	}
	run.cfg.Data.TeacherAPIKey = os.Getenv(teacherKeyEnv)
	base, err := loadHarness(run.harness)
	if err != nil {
		return err
	}
	release, err := withHookCritic(ctx, &run.cfg.Data)
	if err != nil {
		return err
	}
	defer release()
	if run.dump > 0 {
		return sft.DumpData(ctx, base, run.cfg.Data, run.dump, stdout, stderr)
	}
	return sft.Train(ctx, base, run.cfg, run.out, run.resume, stdout)
}

// parseNoArgs parses a command line that takes flags only.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// loadHarness reads the harness file at path, or the embedded demo
// harness when path is empty.
func loadHarness(path string) (*harness.Harness, error) {
	if path == "" {
		return harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	}
	return harness.Load(path)
}

// stageOf finds the stage a "livehat train" command line asks for: the
// --stage flag, else the "stage" of the --config file, else, with
// --resume, the "stage" of the run folder's run.json ("" when none names
// one: SFT, whose older run files have no stage).
func stageOf(args []string) (string, error) {
	if s, ok := flagValue(args, "stage"); ok {
		return s, nil
	}
	if path, ok := flagValue(args, "config"); ok {
		s, err := runfolder.ConfigStage(path)
		if err != nil {
			return "", fmt.Errorf("train: %w", err)
		}
		return s, nil
	}
	resume := false
	for _, a := range args {
		if a == "-resume" || a == "--resume" || a == "-resume=true" || a == "--resume=true" {
			resume = true
		}
	}
	if out, ok := flagValue(args, "out"); ok && resume {
		s, err := runfolder.ConfigStage(filepath.Join(out, runfolder.ConfigFile))
		if err != nil {
			return "", fmt.Errorf("train: resume: %w", err)
		}
		return s, nil
	}
	return "", nil
}

// flagValue returns the value a command line gives flag name (-name v,
// --name v, -name=v or --name=v), looking no further than "--". The
// train and export commands read their dispatching flag with it before
// the flag set of the chosen stage or format parses the whole line.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// stepsFlag returns the --steps value when the command line set it, else
// 0: what a resumed run may change.
func stepsFlag(fs *flag.FlagSet) int {
	steps := 0
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "steps" {
			steps, _ = strconv.Atoi(fl.Value.String())
		}
	})
	return steps
}
