package console

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/opd"
	"github.com/livehat/livehat/trainer/rl"
	"github.com/livehat/livehat/trainer/sft"
)

// Training stages the console starts. Fixed-harness SFT is HSA-SFT with
// augmentation off, the report's baseline.
const (
	stageSFT      = "sft"
	stageFixedSFT = "fixed-sft"
	stageOPD      = "opd"
	stageRL       = "rl"
)

func trainingStages() []string { return []string{stageSFT, stageFixedSFT, stageOPD, stageRL} }

// loraModules are the projections LoRA adapters may target.
var loraModules = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// runRequest is the form that starts a training run. Zero values take the
// stage's defaults (runOptions lists them). It is stored with the run as
// its config, with the defaults filled in.
type runRequest struct {
	Name  string `json:"name"`
	Stage string `json:"stage"`
	// Model is the preset shape an SFT run trains from scratch; InitRun
	// instead starts from another run's checkpoint (required for opd and
	// rl). TeacherRun is OPD's teacher (the model before SFT).
	Model      string `json:"model,omitempty"`
	InitRun    string `json:"init_run,omitempty"`
	TeacherRun string `json:"teacher_run,omitempty"`
	// Harness is the base harness version (default: the console's first,
	// the demo harness the suites are built on).
	Harness string  `json:"harness,omitempty"`
	Steps   int     `json:"steps"`
	LR      float64 `json:"lr"`
	// Batch is examples per step (sft) or prompts per step (opd, rl).
	Batch int    `json:"batch"`
	Seed  uint64 `json:"seed"`
	// Group is GRPO's G, the rollouts of each RL prompt (at least 2).
	Group int `json:"group,omitempty"`
	// Augment is harness-state augmentation: SFT trajectories under HSA
	// variants, RL rollouts in freshly augmented environments.
	Augment *bool `json:"augment,omitempty"`
	// Rooms and Questions size the SFT data (rooms × questions) and RL's
	// task pool (rooms); MaxItems caps each room's catalog.
	Rooms     int `json:"rooms,omitempty"`
	Questions int `json:"questions,omitempty"`
	MaxItems  int `json:"max_items,omitempty"`
	VocabSize int `json:"vocab_size,omitempty"`
	SaveEvery int `json:"save_every,omitempty"`
	EvalEvery int `json:"eval_every,omitempty"`
	// EvalSize is how many held-out items the evaluation schedule
	// measures: SFT examples, OPD prompts, RL tasks (nil: the stage's
	// default; 0: no evaluation).
	EvalSize *int `json:"eval_size,omitempty"`
	// LoRARank > 0 trains adapters on a frozen base.
	LoRARank    int      `json:"lora_rank,omitempty"`
	LoRAAlpha   float64  `json:"lora_alpha,omitempty"`
	LoRATargets []string `json:"lora_targets,omitempty"`
	// Threads is compute threads (default: half the cores, so the live
	// console keeps the rest).
	Threads int `json:"threads,omitempty"`
}

// Bounds of the form's numbers.
const (
	maxRunSteps = 100000
	maxRunBatch = 1024
)

// defaults fills the zero fields with the stage's defaults.
func (r *runRequest) defaults() {
	var steps, batch, save, eval int
	var lr float64
	switch r.Stage {
	case stageSFT, stageFixedSFT:
		d := sft.DefaultTrainConfig()
		steps, batch, lr, save, eval = d.Steps, d.Batch, d.LR, d.SaveEvery, d.EvalEvery
		if r.Rooms == 0 {
			r.Rooms = d.Data.Rooms
		}
		if r.Questions == 0 {
			r.Questions = d.Data.Questions
		}
		if r.VocabSize == 0 {
			r.VocabSize = d.VocabSize
		}
		if r.Model == "" && r.InitRun == "" {
			r.Model = d.Model
		}
	case stageOPD:
		d := opd.DefaultConfig()
		steps, batch, lr, save, eval = d.Steps, d.PromptsPerStep, d.LR, d.SaveEvery, d.EvalEvery
	case stageRL:
		d := rl.DefaultConfig()
		steps, batch, lr, save, eval = d.Steps, d.PromptsPerStep, d.LR, d.SaveEvery, d.EvalEvery
		if r.Rooms == 0 {
			r.Rooms = d.Tasks.Rooms
		}
		if r.Group == 0 {
			r.Group = d.Group
		}
	}
	if r.Stage == stageFixedSFT && r.Augment == nil {
		r.Augment = new(bool)
	}
	if r.Augment == nil {
		on := true
		r.Augment = &on
	}
	if r.Steps == 0 {
		r.Steps = steps
	}
	if r.Batch == 0 {
		r.Batch = batch
	}
	if r.LR == 0 {
		r.LR = lr
	}
	if r.SaveEvery == 0 {
		r.SaveEvery = min(save, max(1, r.Steps/4))
	}
	if r.EvalEvery == 0 {
		// Evaluate at least at the middle and the end of a short run.
		r.EvalEvery = min(eval, max(1, r.Steps/2))
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if r.LoRARank > 0 {
		if r.LoRAAlpha == 0 {
			r.LoRAAlpha = 16
		}
		if len(r.LoRATargets) == 0 {
			r.LoRATargets = append([]string(nil), loraModules...)
		}
	}
	if r.Threads == 0 {
		r.Threads = max(1, goruntime.NumCPU()/2)
	}
	if strings.TrimSpace(r.Name) == "" {
		r.Name = fmt.Sprintf("%s %d steps", r.Stage, r.Steps)
	}
	r.Name = strings.TrimSpace(r.Name)
}

// check validates the request after defaults, naming the field at fault.
func (r *runRequest) check() error {
	switch {
	case !slices.Contains(trainingStages(), r.Stage):
		return badRequest("stage", fmt.Sprintf("unknown stage %q: want one of %s", r.Stage, strings.Join(trainingStages(), ", ")))
	case len(r.Name) > 200:
		return badRequest("name", "at most 200 characters")
	case r.Steps < 1 || r.Steps > maxRunSteps:
		return badRequest("steps", fmt.Sprintf("want 1 to %d steps, got %d", maxRunSteps, r.Steps))
	case !(r.LR > 0 && r.LR <= 1):
		return badRequest("lr", fmt.Sprintf("the learning rate must lie in (0, 1], got %g", r.LR))
	case r.Batch < 1 || r.Batch > maxRunBatch:
		return badRequest("batch", fmt.Sprintf("want 1 to %d, got %d", maxRunBatch, r.Batch))
	case r.Rooms < 0 || r.Rooms > 10000:
		return badRequest("rooms", fmt.Sprintf("want 1 to 10000 rooms, got %d", r.Rooms))
	case r.Questions < 0 || r.Questions > 1000:
		return badRequest("questions", fmt.Sprintf("want 1 to 1000 questions per room, got %d", r.Questions))
	case r.MaxItems < 0 || r.MaxItems > 100:
		return badRequest("max_items", fmt.Sprintf("want 0 (the room's default) to 100 items, got %d", r.MaxItems))
	case r.SaveEvery < 0:
		return badRequest("save_every", fmt.Sprintf("must not be negative, got %d", r.SaveEvery))
	case r.EvalEvery < 0:
		return badRequest("eval_every", fmt.Sprintf("must not be negative, got %d", r.EvalEvery))
	case r.EvalSize != nil && (*r.EvalSize < 0 || *r.EvalSize > 1000):
		return badRequest("eval_size", fmt.Sprintf("want 0 (no evaluation) to 1000 held-out items, got %d", *r.EvalSize))
	case r.LoRARank < 0 || r.LoRARank > 1024:
		return badRequest("lora_rank", fmt.Sprintf("want 0 (full fine-tuning) to 1024, got %d", r.LoRARank))
	case r.LoRARank > 0 && !(r.LoRAAlpha > 0):
		return badRequest("lora_alpha", fmt.Sprintf("must be positive, got %g", r.LoRAAlpha))
	case r.Threads < 0 || r.Threads > 4*goruntime.NumCPU():
		return badRequest("threads", fmt.Sprintf("want 0 to %d threads, got %d", 4*goruntime.NumCPU(), r.Threads))
	}
	for _, t := range r.LoRATargets {
		if !slices.Contains(loraModules, t) {
			return badRequest("lora_targets", fmt.Sprintf("unknown module %q: want some of %s", t, strings.Join(loraModules, ", ")))
		}
	}
	switch r.Stage {
	case stageSFT, stageFixedSFT:
		if r.InitRun == "" && !slices.Contains(sft.ModelPresets(), r.Model) {
			return badRequest("model", fmt.Sprintf("unknown model preset %q: want one of %s, or start from a run (init_run)",
				r.Model, strings.Join(sft.ModelPresets(), ", ")))
		}
		if r.InitRun != "" && r.Model != "" {
			return badRequest("model", "name a preset or a run to start from (init_run), not both")
		}
		if r.Rooms < 1 || r.Questions < 1 {
			return badRequest("rooms", "SFT data needs at least one room and one question per room")
		}
		if r.VocabSize < 256 || r.VocabSize > 65536 {
			return badRequest("vocab_size", fmt.Sprintf("want 256 to 65536, got %d", r.VocabSize))
		}
		if r.Stage == stageFixedSFT && *r.Augment {
			return badRequest("augment", "fixed-harness SFT is SFT without augmentation")
		}
	case stageOPD:
		if r.InitRun == "" {
			return badRequest("init_run", "OPD distils into a trained student: name the run whose checkpoint starts it")
		}
		if r.TeacherRun == "" {
			return badRequest("teacher_run", "OPD needs a teacher: name the run whose checkpoint scores the student (the model before SFT)")
		}
	case stageRL:
		if r.InitRun == "" {
			return badRequest("init_run", "RL improves a trained policy: name the run whose checkpoint starts it")
		}
		if r.Rooms < 1 {
			return badRequest("rooms", "RL tasks need at least one room")
		}
		if r.Group < 2 || r.Group > 256 {
			return badRequest("group", fmt.Sprintf("GRPO compares 2 to 256 rollouts of each prompt, got %d", r.Group))
		}
	}
	if r.Stage != stageRL && r.Group != 0 {
		return badRequest("group", "only RL samples groups of rollouts")
	}
	if r.Stage != stageOPD && r.TeacherRun != "" {
		return badRequest("teacher_run", "only OPD has a teacher")
	}
	if r.Model != "" && r.Stage != stageSFT && r.Stage != stageFixedSFT {
		return badRequest("model", "only SFT trains a preset from scratch; opd and rl start from init_run")
	}
	return nil
}

func (r *runRequest) lora() *nn.LoRAConfig {
	if r.LoRARank <= 0 {
		return nil
	}
	return &nn.LoRAConfig{Rank: r.LoRARank, Alpha: r.LoRAAlpha, Targets: r.LoRATargets}
}

// Folders a run's inputs are copied to inside its run folder, so that a
// later change to the run they came from cannot change this one (OPD and
// RL read them again when they resume).
const (
	initDir    = "init"
	teacherDir = "teacher"
)

// train runs the request's stage in dir, fresh or resumed; steps > 0
// replaces the total on resume.
func (r *runRequest) train(ctx context.Context, base *harness.Harness, dir string, resume bool, steps int, log io.Writer) error {
	// On resume the trainers read the saved configuration; only the
	// total of steps may change.
	switch r.Stage {
	case stageSFT, stageFixedSFT:
		if resume {
			var c sft.TrainConfig
			c.Steps = steps
			return sft.Train(ctx, base, c, dir, true, log)
		}
		return sft.Train(ctx, base, r.sftConfig(dir), dir, false, log)
	case stageOPD:
		if resume {
			var c opd.Config
			c.Steps = steps
			return opd.Train(ctx, c, dir, true, log)
		}
		return opd.Train(ctx, r.opdConfig(dir), dir, false, log)
	case stageRL:
		if resume {
			var c rl.Config
			c.Steps = steps
			return rl.Train(ctx, base, c, dir, true, log)
		}
		return rl.Train(ctx, base, r.rlConfig(dir), dir, false, log)
	}
	return fmt.Errorf("training run: unknown stage %q", r.Stage)
}

func (r *runRequest) sftConfig(dir string) sft.TrainConfig {
	c := sft.DefaultTrainConfig()
	c.Model, c.Steps, c.Batch, c.LR, c.Seed, c.SaveEvery, c.EvalEvery = r.Model, r.Steps, r.Batch, r.LR, r.Seed, r.SaveEvery, r.EvalEvery
	c.VocabSize, c.Threads, c.LoRA = r.VocabSize, r.Threads, r.lora()
	c.Warmup = min(c.Warmup, r.Steps/10)
	if r.InitRun != "" {
		c.Init = filepath.Join(dir, initDir)
	}
	c.Data.Seed, c.Data.Rooms, c.Data.Questions, c.Data.Augment = r.Seed, r.Rooms, r.Questions, *r.Augment
	if r.MaxItems > 0 {
		c.Data.Room.MinItems, c.Data.Room.MaxItems = 1, r.MaxItems
	}
	// Hold out about one trajectory in ten for the eval loss, at most the
	// default's count (a few are silent and give no example).
	c.EvalExamples = max(1, min(c.EvalExamples, r.Rooms*r.Questions/10))
	if r.EvalSize != nil {
		c.EvalExamples = *r.EvalSize
	}
	return c
}

func (r *runRequest) opdConfig(dir string) opd.Config {
	c := opd.DefaultConfig()
	c.Init, c.Teacher = filepath.Join(dir, initDir), filepath.Join(dir, teacherDir)
	c.Steps, c.PromptsPerStep, c.LR, c.Seed, c.SaveEvery, c.EvalEvery = r.Steps, r.Batch, r.LR, r.Seed, r.SaveEvery, r.EvalEvery
	c.Warmup, c.Threads, c.LoRA = min(c.Warmup, r.Steps/10), r.Threads, r.lora()
	if r.EvalSize != nil {
		c.EvalPrompts = *r.EvalSize
	}
	return c
}

func (r *runRequest) rlConfig(dir string) rl.Config {
	c := rl.DefaultConfig()
	c.Init = filepath.Join(dir, initDir)
	c.Steps, c.PromptsPerStep, c.LR, c.Seed, c.SaveEvery, c.EvalEvery = r.Steps, r.Batch, r.LR, r.Seed, r.SaveEvery, r.EvalEvery
	c.Warmup, c.Threads, c.LoRA = min(c.Warmup, r.Steps/10), r.Threads, r.lora()
	c.Tasks.Seed, c.Tasks.Rooms, c.Group = r.Seed, r.Rooms, r.Group
	if !*r.Augment {
		c.Tasks.VariantShare = 0
	}
	if r.MaxItems > 0 {
		c.Tasks.Room.MinItems, c.Tasks.Room.MaxItems = 1, r.MaxItems
	}
	if r.EvalSize != nil {
		c.EvalTasks = *r.EvalSize
	}
	return c
}
