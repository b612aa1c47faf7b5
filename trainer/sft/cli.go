package sft

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/mtp"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/opd"
	"github.com/livehat/livehat/trainer/rl"
)

// teacherKeyEnv names the environment variable holding the teacher
// server's API key, kept out of flags and run files.
const teacherKeyEnv = "LIVEHAT_TEACHER_API_KEY"

// dataFlags registers the flags that choose the SFT data.
func dataFlags(fs *flag.FlagSet, c *DataConfig) (harnessPath *string) {
	harnessPath = fs.String("harness", "", "base harness file (default: the embedded demo harness)")
	fs.Uint64Var(&c.Seed, "data-seed", c.Seed, "seed of the rooms, questions and variants")
	fs.IntVar(&c.Rooms, "rooms", c.Rooms, "live rooms to generate")
	fs.IntVar(&c.Questions, "questions", c.Questions, "viewer questions per room")
	fs.IntVar(&c.Room.MinItems, "min-items", c.Room.MinItems, "fewest items in a room's catalog (0: the room's default)")
	fs.IntVar(&c.Room.MaxItems, "max-items", c.Room.MaxItems, "most items in a room's catalog (0: the room's default)")
	fs.IntVar(&c.Room.Variety, "variety", c.Room.Variety, "rooms as a wider range of merchants and viewers make them, 0-4 (liveroom.RoomConfig.Variety): 1 names and size charts, 2 wordings, 3 and 4 slug ids; -1 the rooms the recipe's first stages were trained on")
	fs.IntVar(&c.General, "general", c.General, "general-corpus conversations (chit-chat, questions, checkable instructions) mixed in")
	fs.IntVar(&c.Retrieval, "retrieval", c.Retrieval, "copy and retrieval warm-up conversations mixed in")
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
	fs.StringVar(&c.Teacher, "teacher", c.Teacher, "OpenAI-compatible server whose model answers instead of the room's expert (API key from $"+teacherKeyEnv+")")
	fs.StringVar(&c.TeacherModel, "teacher-model", c.TeacherModel, "model name to ask the teacher server for")
	return harnessPath
}

func loadBase(path string) (*harness.Harness, error) {
	if path == "" {
		return harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	}
	return harness.Load(path)
}

// trainFlags are TrainMain's flags that are not fields of TrainConfig.
type trainFlags struct {
	stage, out, config, harness *string
	resume                      *bool
	dump                        *int
	loraRank                    *int
	loraAlpha                   *float64
	loraTargets                 *string
}

// newTrainFlagSet registers TrainMain's flags over cfg, so the flags the
// command line names override what cfg already holds.
func newTrainFlagSet(cfg *TrainConfig, stderr io.Writer) (*flag.FlagSet, trainFlags) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f trainFlags
	f.stage = fs.String("stage", "sft", "training stage: sft, opd or rl")
	f.out = fs.String("out", "", "run folder (required)")
	f.config = fs.String("config", "", "run configuration (JSON, the layout of a run folder's run.json); flags override it")
	f.resume = fs.Bool("resume", false, "continue the run in --out from its last checkpoint")
	f.harness = dataFlags(fs, &cfg.Data)
	fs.StringVar(&cfg.Model, "model", cfg.Model, "model shape trained from scratch: tiny, small or 5m")
	fs.StringVar(&cfg.Init, "init", cfg.Init, "start from this checkpoint folder (with its tokenizer.json) instead")
	fs.IntVar(&cfg.VocabSize, "vocab", cfg.VocabSize, "BPE vocabulary trained on the room corpus")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", cfg.Tokenizer, "use this tokenizer.json instead of training one")
	fs.IntVar(&cfg.Phrases, "phrases", cfg.Phrases, "compact tokenizer: add up to N repeated phrases of the corpus as single tokens (0: plain BPE)")
	fs.IntVar(&cfg.MaxLen, "max-len", cfg.MaxLen, "context length; longer trajectories are dropped")
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
	f.dump = fs.Int("dump-data", 0, "build the data the flags choose, write N of its trajectories (spread over it) as JSONL to standard output with a summary on standard error, and train nothing")
	f.loraRank = fs.Int("lora-rank", 0, "train LoRA adapters of this rank on a frozen base (0: full fine-tuning)")
	f.loraAlpha = fs.Float64("lora-alpha", 16, "LoRA alpha")
	f.loraTargets = fs.String("lora-targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "LoRA target modules")
	return fs, f
}

// TrainMain is `livehat train`. --recipe runs a whole pipeline (see
// RecipeMain). Otherwise --stage (or the "stage" of the --config
// file, or of the run folder's run.json with --resume) picks the stage:
// sft here, opd and rl in packages opd and rl (see their TrainMain for
// their flags). The SFT stage:
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
// of training (see DumpData). With --resume the run folder's run.json is used and only --steps (the
// cosine schedule follows the new total) and --stop-at may change.
func TrainMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if _, ok := flagValue(args, "recipe"); ok {
		return RecipeMain(ctx, args, stdout, stderr)
	}
	stage, err := stageOf(args)
	if err != nil {
		return err
	}
	switch stage {
	case "opd":
		return opd.TrainMain(ctx, args, stdin, stdout, stderr)
	case "rl":
		return rl.TrainMain(ctx, args, stdin, stdout, stderr)
	case "mtp":
		return mtp.TrainMain(ctx, args, stdin, stdout, stderr)
	case "", "sft":
	default:
		return &harness.UsageError{Msg: fmt.Sprintf("--stage %q: want sft, opd, rl or mtp", stage)}
	}
	cfg := DefaultTrainConfig()
	fs, f := newTrainFlagSet(&cfg, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &harness.UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *f.config != "" {
		// The file replaces the defaults; the flags are parsed again on top.
		cfg = DefaultTrainConfig()
		if err := runfolder.ReadConfig(*f.config, &cfg); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		fs, f = newTrainFlagSet(&cfg, stderr)
		if err := fs.Parse(args); err != nil {
			return err
		}
	}
	if *f.dump > 0 {
		cfg.Data.TeacherAPIKey = os.Getenv(teacherKeyEnv)
		base, err := loadBase(*f.harness)
		if err != nil {
			return err
		}
		return DumpData(ctx, base, cfg.Data, *f.dump, stdout, stderr)
	}
	if *f.out == "" {
		return &harness.UsageError{Msg: "--out DIR is required"}
	}
	if *f.loraRank > 0 {
		cfg.LoRA = &nn.LoRAConfig{Rank: *f.loraRank, Alpha: *f.loraAlpha, Targets: strings.Split(*f.loraTargets, ",")}
	}
	if cfg.Init != "" {
		cfg.Model = ""
	}
	if *f.resume {
		steps, stopAt := cfg.Steps, cfg.StopAt
		cfg = TrainConfig{StopAt: stopAt}
		fs.Visit(func(fl *flag.Flag) {
			if fl.Name == "steps" {
				cfg.Steps = steps
			}
		})
	}
	cfg.Data.TeacherAPIKey = os.Getenv(teacherKeyEnv)
	base, err := loadBase(*f.harness)
	if err != nil {
		return err
	}
	return Train(ctx, base, cfg, *f.out, *f.resume, stdout)
}

// ExportMain is `livehat export`: it writes the SFT trajectories as JSONL
// for TRL or verl, each line with its harness version and HSA record; the
// formats trl-rl and verl-rl write RL prompts instead (rl.ExportMain).
//
//	livehat export --format trl|verl --out FILE [--augment=true|false]
//	    [--rooms 40 --questions 12 --data-seed 1 --variant-share 0.75 --transforms 3 --retry-share 0.2 --context-share 0.5 --memory-share 0.5]
//	    [--teacher URL --teacher-model NAME]
//
// --out - writes to standard output.
func ExportMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if f, _ := flagValue(args, "format"); f == rl.FormatTRL || f == rl.FormatVerl {
		return rl.ExportMain(ctx, args, stdin, stdout, stderr)
	}
	cfg := DefaultDataConfig()
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", FormatTRL, "dataset layout: trl or verl (trl-rl and verl-rl: RL prompts)")
	out := fs.String("out", "", "output JSONL file, - for standard output (required)")
	harnessPath := dataFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &harness.UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *format != FormatTRL && *format != FormatVerl {
		return &harness.UsageError{Msg: fmt.Sprintf("--format %q: want trl, verl, trl-rl or verl-rl", *format)}
	}
	if *out == "" {
		return &harness.UsageError{Msg: "--out FILE is required"}
	}
	cfg.TeacherAPIKey = os.Getenv(teacherKeyEnv)
	base, err := loadBase(*harnessPath)
	if err != nil {
		return err
	}
	trajs, st, err := Build(ctx, base, cfg)
	if err != nil {
		return err
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		if err := WriteJSONL(bw, trajs, *format); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		fmt.Fprintf(stderr, "export: %d examples (%d under HSA variants, %d with a kept retry) to %s\n", st.Kept, st.Variants, st.Retries, *out)
		return nil
	}
	return WriteJSONL(w, trajs, *format)
}

// stageOf finds the stage a `livehat train` command line asks for: the
// --stage flag, else the "stage" of the --config file, else, with
// --resume, the "stage" of the run folder's run.json ("" when none names
// one: SFT, whose older run files have no stage).
func stageOf(args []string) (string, error) {
	value := func(name string) (string, bool) { return flagValue(args, name) }
	if s, ok := value("stage"); ok {
		return s, nil
	}
	if path, ok := value("config"); ok {
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
	if out, ok := value("out"); ok && resume {
		s, err := runfolder.ConfigStage(filepath.Join(out, runfolder.ConfigFile))
		if err != nil {
			return "", fmt.Errorf("train: resume: %w", err)
		}
		return s, nil
	}
	return "", nil
}

// flagValue returns the value a command line gives flag name (-name v,
// --name v, -name=v or --name=v), looking no further than "--".
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
