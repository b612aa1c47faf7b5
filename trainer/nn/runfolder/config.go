package runfolder

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/livehat/livehat/harness"

	"github.com/livehat/livehat/trainer/nn"
)

// Optimization holds the hyper-parameters the OPD and RL stages share.
// Embedded in a stage's configuration, its fields sit at the top level of
// run.json, as the SFT stage writes them.
type Optimization struct {
	// Seed seeds the data order, the samples and LoRA adapters.
	Seed uint64 `json:"seed"`
	// Steps is the number of optimizer steps; each step's batch runs in
	// micro-batches of at most MicroTokens tokens whose gradients
	// accumulate.
	Steps       int `json:"steps"`
	MicroTokens int `json:"micro_tokens"`
	// LR is the peak learning rate, reached after Warmup steps, then
	// decayed on a cosine to LR·MinLRRatio.
	LR         float64        `json:"lr"`
	Warmup     int            `json:"warmup"`
	MinLRRatio float64        `json:"min_lr_ratio"`
	AdamW      nn.AdamWConfig `json:"adamw"`
	// ClipNorm bounds the global gradient norm (0: no clipping).
	ClipNorm float64 `json:"clip_norm"`
	// SaveEvery writes a checkpoint every so many steps (and at the end);
	// EvalEvery runs the stage's evaluation (and at the end).
	SaveEvery int `json:"save_every"`
	EvalEvery int `json:"eval_every,omitempty"`
	// LoRA, when set, trains adapters on a frozen base.
	LoRA *nn.LoRAConfig `json:"lora,omitempty"`
	// Threads is the compute threads (0: one per physical core).
	Threads int `json:"threads"`
}

// Validate reports the first setting out of range.
func (o Optimization) Validate() error {
	switch {
	case o.Steps <= 0 || o.MicroTokens <= 0:
		return fmt.Errorf("steps %d and micro-tokens %d must be positive", o.Steps, o.MicroTokens)
	case !(o.LR > 0) || o.Warmup < 0 || o.MinLRRatio < 0 || o.MinLRRatio > 1:
		return fmt.Errorf("learning rate %g, warm-up %d, min ratio %g", o.LR, o.Warmup, o.MinLRRatio)
	case o.EvalEvery < 0 || o.SaveEvery < 0 || o.ClipNorm < 0 || o.Threads < 0:
		return fmt.Errorf("eval every %d, save every %d, clip %g and threads %d must not be negative", o.EvalEvery, o.SaveEvery, o.ClipNorm, o.Threads)
	}
	return nil
}

// Schedule returns the learning-rate schedule.
func (o Optimization) Schedule() nn.Schedule {
	return nn.Schedule{Peak: o.LR, Warmup: o.Warmup, Total: o.Steps, MinRatio: o.MinLRRatio}
}

// Saves reports whether step (counted from 1) writes a checkpoint.
func (o Optimization) Saves(step int) bool {
	return step == o.Steps || (o.SaveEvery > 0 && step%o.SaveEvery == 0)
}

// Evaluates reports whether step (counted from 1) runs the evaluation.
func (o Optimization) Evaluates(step int) bool {
	return step == o.Steps || (o.EvalEvery > 0 && step%o.EvalEvery == 0)
}

// Flags registers the hyper-parameters on fs over o's values. Call the
// returned function after parsing: it turns the LoRA flags into o.LoRA.
func (o *Optimization) Flags(fs *flag.FlagSet) (finish func()) {
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

// ReadConfig decodes a run configuration file into cfg strictly: an
// unknown field is an error naming it.
func ReadConfig(path string, cfg any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ConfigStage returns the "stage" field of a run configuration file
// ("" when it has none).
func ConfigStage(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var head struct {
		Stage string `json:"stage"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return head.Stage, nil
}

// Command is what every stage's `livehat train` command line holds
// besides the stage's configuration.
type Command struct {
	// Out is the run folder; Resume continues the run in it.
	Out    string
	Resume bool
	// Steps is the --steps value when the command line set it (0
	// otherwise): the one setting a resumed run may change.
	Steps int
}

// ParseCommand parses a stage's command line over defaults(): register
// adds the configuration's flags to a flag set (and returns a function to
// call after parsing, or nil). The common flags --stage (which must name
// stage), --out, --config and --resume are added here. When a config file
// is named it replaces the defaults and the command line is parsed again
// on top of it, so flags override the file.
func ParseCommand[C any](args []string, stage string, defaults func() C, register func(*C, *flag.FlagSet) func(), stderr io.Writer) (C, Command, error) {
	var cmd Command
	var stageFlag, configPath string
	parse := func(cfg *C) error {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.StringVar(&stageFlag, "stage", stage, "training stage: "+stage+" here")
		fs.StringVar(&cmd.Out, "out", "", "run folder (required)")
		fs.StringVar(&configPath, "config", "", "run configuration (JSON, the layout of a run folder's run.json); flags override it")
		fs.BoolVar(&cmd.Resume, "resume", false, "continue the run in --out from its last checkpoint")
		finish := register(cfg, fs)
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return &harness.UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
		}
		if finish != nil {
			finish()
		}
		cmd.Steps = StepsFlag(fs)
		return nil
	}
	cfg := defaults()
	if err := parse(&cfg); err != nil {
		return cfg, cmd, err
	}
	if configPath != "" {
		cfg = defaults()
		if err := ReadConfig(configPath, &cfg); err != nil {
			return cfg, cmd, fmt.Errorf("train: %w", err)
		}
		if err := parse(&cfg); err != nil {
			return cfg, cmd, err
		}
	}
	switch {
	case stageFlag != stage:
		return cfg, cmd, &harness.UsageError{Msg: fmt.Sprintf("--stage %q given to the %s stage", stageFlag, stage)}
	case cmd.Out == "":
		return cfg, cmd, &harness.UsageError{Msg: "--out DIR is required"}
	}
	return cfg, cmd, nil
}

// StepsFlag returns the --steps value when the command line set it, else
// 0: what a resumed run may change.
func StepsFlag(fs *flag.FlagSet) int {
	steps := 0
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "steps" {
			steps, _ = strconv.Atoi(fl.Value.String())
		}
	})
	return steps
}
