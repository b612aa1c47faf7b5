package sft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/opd"
)

// Files and folders of a run directory: the layout of package runfolder,
// plus the trajectories.
const (
	runConfigFile = runfolder.ConfigFile
	dataFile      = "data.jsonl"
	metricsFile   = runfolder.MetricsFile
	checkpointDir = runfolder.CheckpointDir
	optimizerFile = runfolder.OptimizerFile
	stateFile     = runfolder.StateFile
	tokenizerFile = runfolder.TokenizerFile
)

// TrainConfig is a whole SFT run; it is saved in the run folder as run.json.
type TrainConfig struct {
	// Stage is "sft"; it lets `livehat train --config` pick the stage.
	Stage string     `json:"stage,omitempty"`
	Data  DataConfig `json:"data"`
	// Template is the chat template the text is rendered with (the
	// engine's default, Qwen3, is the zero value).
	Template chat.Template `json:"template"`
	// Model names a shape from ModelPresets for a model trained from
	// scratch; Init instead starts from a checkpoint directory holding a
	// tokenizer.json.
	Model string `json:"model,omitempty"`
	Init  string `json:"init,omitempty"`
	// VocabSize is the size of the BPE vocabulary trained on the room
	// corpus when starting from scratch.
	VocabSize int `json:"vocab_size"`
	// Phrases, when positive, makes that tokenizer compact: up to this
	// many repeated phrases of the corpus become single tokens (see
	// TrainCompactTokenizer), and the general prompts join its corpus.
	Phrases int `json:"phrases,omitempty"`
	// Tokenizer, when set, is a tokenizer.json used as it is instead of
	// training one (a recipe trains one for all its stages).
	Tokenizer string `json:"tokenizer,omitempty"`
	// MaxLen is the model context; longer trajectories are dropped.
	MaxLen int `json:"max_len"`
	// Context, when set, raises an Init checkpoint's context to this many
	// positions before training (nn.Model.SetContext): the shipped model
	// was trained at 1,024 and the job's longest live prompts need 2,048.
	Context int `json:"context,omitempty"`
	// Seed seeds the initial weights, adapters and the example order.
	Seed uint64 `json:"seed"`
	// Steps is the number of optimizer steps; Batch the examples per step,
	// run in micro-batches of at most MicroTokens tokens whose gradients
	// accumulate.
	Steps       int `json:"steps"`
	Batch       int `json:"batch"`
	MicroTokens int `json:"micro_tokens"`
	// StopAt, when set, ends the run after that step, with a checkpoint,
	// while the learning rate follows the schedule of all Steps: a later
	// run can start from an earlier step of a longer run, as it was.
	StopAt int `json:"stop_at,omitempty"`
	// LR is the peak learning rate, reached after Warmup steps, then
	// decayed on a cosine to LR·MinLRRatio.
	LR         float64        `json:"lr"`
	Warmup     int            `json:"warmup"`
	MinLRRatio float64        `json:"min_lr_ratio"`
	AdamW      nn.AdamWConfig `json:"adamw"`
	// ClipNorm bounds the global gradient norm (0: no clipping).
	ClipNorm float64 `json:"clip_norm"`
	// SaveEvery writes a checkpoint every so many steps (and at the end).
	SaveEvery int `json:"save_every"`
	// EvalExamples trajectories (the last ones built) are held out of
	// training; their loss is measured every EvalEvery steps and at the end.
	EvalExamples int `json:"eval_examples,omitempty"`
	EvalEvery    int `json:"eval_every,omitempty"`
	// LoRA, when set, trains adapters on a frozen base.
	LoRA *nn.LoRAConfig `json:"lora,omitempty"`
	// Threads is the compute threads (0: one per physical core).
	Threads int `json:"threads"`
}

// DefaultTrainConfig returns an HSA-SFT run of the "tiny" shape.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{
		Stage: "sft", Data: DefaultDataConfig(), Model: "tiny", VocabSize: 2048, MaxLen: 2048, Seed: 1,
		Steps: 200, Batch: 8, MicroTokens: 8192, LR: 2e-3, Warmup: 20, MinLRRatio: 0.1,
		AdamW: nn.DefaultAdamW(), ClipNorm: 1, SaveEvery: 50, EvalExamples: 16, EvalEvery: 25,
	}
}

func (c TrainConfig) validate() error {
	switch {
	case c.Stage != "" && c.Stage != "sft":
		return fmt.Errorf("sft: the configuration is for stage %q", c.Stage)
	case c.Steps <= 0 || c.Batch <= 0 || c.MicroTokens <= 0:
		return fmt.Errorf("sft: steps, batch and micro-tokens must be positive, got %d, %d, %d", c.Steps, c.Batch, c.MicroTokens)
	case c.StopAt < 0 || c.StopAt > c.Steps:
		return fmt.Errorf("sft: stop at step %d: want 0 (the end) to the %d steps of the schedule", c.StopAt, c.Steps)
	case !(c.LR > 0) || c.Warmup < 0 || c.MinLRRatio < 0 || c.MinLRRatio > 1:
		return fmt.Errorf("sft: learning rate %g, warm-up %d, min ratio %g", c.LR, c.Warmup, c.MinLRRatio)
	case c.EvalExamples < 0 || c.EvalEvery < 0:
		return fmt.Errorf("sft: eval examples %d and eval every %d must not be negative", c.EvalExamples, c.EvalEvery)
	case c.MaxLen <= 1:
		return fmt.Errorf("sft: max length %d", c.MaxLen)
	case c.Model == "" && c.Init == "":
		return errors.New("sft: name a model shape or an initial checkpoint")
	case c.Context < 0 || c.Context > 0 && c.Init == "":
		return fmt.Errorf("sft: context %d raises an initial checkpoint's context: give --init (a model from scratch takes --max-len)", c.Context)
	}
	return c.Data.validate()
}

// ModelPresets are the shapes Train builds from scratch (a Qwen2 decoder
// with tied embeddings; the vocabulary comes from the trained tokenizer):
// "tiny" (d64, 2 layers), "small" (d128, 4 layers, the calibration run's
// size) and "5m" (d256, 6 layers, about 5M parameters with a 4k vocabulary).
func ModelPresets() []string { return []string{"tiny", "small", "5m"} }

// ModelPreset returns the named shape for a vocabulary and context.
func ModelPreset(name string, vocab, maxLen int) (model.Config, error) {
	c := model.Config{
		Architecture: model.Qwen2, AttentionBias: true, TieWordEmbeddings: true,
		RopeTheta: 10000, RMSNormEps: 1e-6, VocabSize: vocab, MaxPositionEmbeddings: maxLen,
		TorchDType: "float32", BOSTokenID: -1, EOSTokenID: -1,
	}
	switch name {
	case "tiny":
		c.HiddenSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.IntermediateSize = 64, 2, 4, 2, 192
	case "small":
		c.HiddenSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.IntermediateSize = 128, 4, 4, 2, 384
	case "5m":
		c.HiddenSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.IntermediateSize = 256, 6, 8, 4, 704
	default:
		return model.Config{}, fmt.Errorf("sft: unknown model shape %q (want tiny, small or 5m)", name)
	}
	c.HeadDim = c.HiddenSize / c.NumHeads
	return c, c.Validate()
}

// Metrics is one line of metrics.jsonl, in the layout every stage shares.
type Metrics = runfolder.Metrics

// trainerState is trainer_state.json of a checkpoint.
type trainerState = runfolder.State

// Train runs (or, with resume, continues) an SFT run in the folder out:
// run.json, data.jsonl (the trajectories, which a resumed run reads back
// instead of asking the teacher again), tokenizer.json, metrics.jsonl and
// checkpoint/ (the model as a Hugging Face directory with its tokenizer,
// the optimizer state and the step). Checkpoints replace each other atomically (written aside, then
// renamed), and the example order depends only on the seed and the step,
// so a resumed run reproduces an uninterrupted one bit for bit. Progress
// goes to log.
func Train(ctx context.Context, base *harness.Harness, cfg TrainConfig, out string, resume bool, log io.Writer) error {
	cfg, err := startRun(cfg, out, resume)
	if err != nil {
		return err
	}
	trajs, err := runData(ctx, base, cfg, out, resume, log)
	if err != nil {
		return err
	}
	tok, err := runTokenizer(ctx, cfg, out, trajs, resume)
	if err != nil {
		return err
	}
	cpu := model.NewCPU(cfg.Threads)
	defer cpu.Close()
	m, opt, start, err := startModel(cfg, out, tok, cpu, resume)
	if err != nil {
		return err
	}
	examples, held, err := splitExamples(trajs, tok, cfg, m, log)
	if err != nil {
		return err
	}

	fmt.Fprintf(log, "model: %d parameters (%d trainable), starting at step %d of %d\n", m.NumParams(), m.NumTrainable(), start, cfg.Steps)
	steps, err := runfolder.OpenLog(out, start, cfg.Steps, log)
	if err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	defer steps.Close()

	sched := nn.Schedule{Peak: cfg.LR, Warmup: cfg.Warmup, Total: cfg.Steps, MinRatio: cfg.MinLRRatio}
	end := cfg.Steps
	if cfg.StopAt > 0 {
		end = cfg.StopAt
	}
	for step := start; step < end; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mt, err := trainStep(ctx, m, opt, stepExamples(examples, cfg.Seed, step, cfg.Batch), cfg, sched.LR(step))
		if err != nil {
			return fmt.Errorf("sft: step %d: %w", step+1, err)
		}
		mt.Step = step + 1
		evalNote := ""
		if len(held) > 0 && (mt.Step == end || (cfg.EvalEvery > 0 && mt.Step%cfg.EvalEvery == 0)) {
			el, err := heldOutLoss(ctx, m, held, cfg.MicroTokens)
			if err != nil {
				return fmt.Errorf("sft: evaluate at step %d: %w", mt.Step, err)
			}
			mt.EvalLoss = &el
			evalNote = fmt.Sprintf("  eval-loss %.4f", el)
		}
		if err := steps.Step(mt, fmt.Sprintf("loss %.4f%s  lr %.2e  grad-norm %.3f  %.0f tokens/s", mt.Loss, evalNote, mt.LR, mt.GradNorm, mt.TokensPerSec)); err != nil {
			return fmt.Errorf("sft: %w", err)
		}
		if mt.Step == end || (cfg.SaveEvery > 0 && mt.Step%cfg.SaveEvery == 0) {
			if err := runfolder.SaveCheckpoint(out, m, opt, tok, mt.Step); err != nil {
				return err
			}
		}
	}
	return nil
}

// startRun returns the run's configuration: cfg for a new run, written as
// out/run.json (a folder that holds a run is refused), or, on resume, the
// saved one with cfg's Steps (when set), StopAt and teacher key on top.
func startRun(cfg TrainConfig, out string, resume bool) (TrainConfig, error) {
	if resume {
		saved, err := readRunConfig(out)
		if err != nil {
			return cfg, err
		}
		if cfg.Steps > 0 {
			saved.Steps = cfg.Steps
		}
		saved.StopAt = cfg.StopAt
		saved.Data.TeacherAPIKey = cfg.Data.TeacherAPIKey
		cfg = saved
	}
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return cfg, fmt.Errorf("sft: %w", err)
	}
	if resume {
		return cfg, nil
	}
	if _, err := os.Stat(filepath.Join(out, runConfigFile)); err == nil {
		return cfg, fmt.Errorf("sft: %s already holds a run; pass --resume to continue it or choose another folder", out)
	}
	return cfg, writeJSON(filepath.Join(out, runConfigFile), cfg)
}

// runData returns the run's trajectories: built and written to
// out/data.jsonl for a new run, read back from it on resume (so a resumed
// run does not ask the teacher again).
func runData(ctx context.Context, base *harness.Harness, cfg TrainConfig, out string, resume bool, log io.Writer) ([]Trajectory, error) {
	if resume {
		trajs, err := readTrajectories(filepath.Join(out, dataFile))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "data: %d trajectories from %s\n", len(trajs), dataFile)
		return trajs, nil
	}
	trajs, st, err := Build(ctx, base, cfg.Data)
	if err != nil {
		return nil, err
	}
	if err := writeTrajectories(filepath.Join(out, dataFile), trajs); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "data: %d trajectories (%d under variants, %d with a kept retry, %d with the hooks' feedback; %d silent, %d rejected, %d variants not applicable)\n",
		st.Kept, st.Variants, st.Retries, st.Feedback, st.Silent, st.Rejected, st.NotApplicable)
	return trajs, nil
}

// splitExamples tokenizes the trajectories, drops those longer than the
// context (cfg.MaxLen, or the model's when shorter: a checkpoint to start
// from may have a shorter one) and holds the last cfg.EvalExamples out
// for the eval loss.
func splitExamples(trajs []Trajectory, tok *tokenizer.Tokenizer, cfg TrainConfig, m *nn.Model, log io.Writer) (train, held []nn.Example, err error) {
	maxLen := min(cfg.MaxLen, m.Config.MaxPositionEmbeddings)
	var examples []nn.Example
	tooLong := 0
	for _, t := range trajs {
		ex, err := Tokenize(tok, t, cfg.Template)
		if err != nil {
			return nil, nil, err
		}
		if len(ex.Tokens) > maxLen {
			tooLong++
			continue
		}
		examples = append(examples, ex)
	}
	if len(examples) <= cfg.EvalExamples {
		return nil, nil, fmt.Errorf("sft: %d examples fit the context of %d tokens, not more than the %d held out", len(examples), maxLen, cfg.EvalExamples)
	}
	held = examples[len(examples)-cfg.EvalExamples:]
	train = examples[:len(examples)-cfg.EvalExamples]
	fmt.Fprintf(log, "tokens: vocabulary %d, %d training examples and %d held out (%d longer than %d dropped), %.0f tokens each on average\n",
		tok.VocabSize(), len(train), len(held), tooLong, maxLen, meanLen(train))
	return train, held, nil
}

// trainStep makes one optimizer step on batch at learning rate lr: the
// gradients of its micro-batches accumulate, each token of the batch
// weighing the same, then the clipped AdamW update. The metrics it
// returns lack the step number and the eval loss.
func trainStep(ctx context.Context, m *nn.Model, opt *nn.AdamW, batch []nn.Example, cfg TrainConfig, lr float64) (Metrics, error) {
	t0 := time.Now()
	total := 0
	for _, e := range batch {
		total += e.Trained()
	}
	m.ZeroGrad()
	var loss nn.Loss
	for _, mb := range nn.Pack(batch, cfg.MicroTokens) {
		l, err := m.Backward(ctx, mb, 1/float32(total))
		if err != nil {
			return Metrics{}, err
		}
		loss.Sum += l.Sum
		loss.Tokens += l.Tokens
		loss.Seen += l.Seen
	}
	norm, err := opt.ClipAndStep(m, cfg.ClipNorm, lr)
	if err != nil {
		return Metrics{}, err
	}
	dt := time.Since(t0).Seconds()
	return Metrics{Loss: loss.Mean(), LR: lr, GradNorm: norm, Tokens: loss.Seen, TrainedTokens: loss.Tokens,
		TokensPerSec: float64(loss.Seen) / dt, StepSeconds: dt}, nil
}

// heldOutLoss returns the loss per trained token on the held-out examples.
func heldOutLoss(ctx context.Context, m *nn.Model, held []nn.Example, microTokens int) (float64, error) {
	var ev nn.Loss
	for _, mb := range nn.Pack(held, microTokens) {
		l, err := m.Evaluate(ctx, mb)
		if err != nil {
			return 0, err
		}
		ev.Sum += l.Sum
		ev.Tokens += l.Tokens
	}
	return ev.Mean(), nil
}

// stepExamples returns the examples of a step (see runfolder.StepIndices).
func stepExamples(examples []nn.Example, seed uint64, step, batch int) []nn.Example {
	out := make([]nn.Example, batch)
	for j, i := range runfolder.StepIndices(len(examples), seed, step, batch) {
		out[j] = examples[i]
	}
	return out
}

// runTokenizer trains the run's tokenizer, or reads the one the run or its
// initial checkpoint already has.
func runTokenizer(ctx context.Context, cfg TrainConfig, out string, trajs []Trajectory, resume bool) (*tokenizer.Tokenizer, error) {
	switch {
	case resume:
		return loadTokenizer(filepath.Join(out, tokenizerFile))
	case cfg.Init != "" || cfg.Tokenizer != "":
		path := cfg.Tokenizer
		if cfg.Init != "" {
			path = filepath.Join(cfg.Init, tokenizerFile)
		}
		tok, err := loadTokenizer(path)
		if err != nil {
			return nil, err
		}
		return tok, saveTokenizer(tok, filepath.Join(out, tokenizerFile))
	}
	var tok *tokenizer.Tokenizer
	var err error
	if cfg.Phrases > 0 {
		tok, err = trainRunCompact(ctx, trajs, cfg)
	} else {
		tok, err = TrainTokenizer(ctx, trajs, cfg.Template, cfg.VocabSize)
	}
	if err != nil {
		return nil, err
	}
	return tok, saveTokenizer(tok, filepath.Join(out, tokenizerFile))
}

// generalCorpusPrompts is how many general prompts (and their reference
// replies) join a compact tokenizer's corpus, so that general chat and
// the Mini-IF instructions are not spelled byte by byte.
const generalCorpusPrompts = 2000

// TrainRunTokenizer trains the tokenizer a run of cfg would train from
// scratch (compact when cfg.Phrases > 0), on the trajectories cfg.Data
// builds under base, and writes it to path.
func TrainRunTokenizer(ctx context.Context, base *harness.Harness, cfg TrainConfig, path string) (*tokenizer.Tokenizer, error) {
	trajs, _, err := Build(ctx, base, cfg.Data)
	if err != nil {
		return nil, err
	}
	var tok *tokenizer.Tokenizer
	if cfg.Phrases > 0 {
		tok, err = trainRunCompact(ctx, trajs, cfg)
	} else {
		tok, err = TrainTokenizer(ctx, trajs, cfg.Template, cfg.VocabSize)
	}
	if err != nil {
		return nil, err
	}
	return tok, saveTokenizer(tok, path)
}

// trainRunCompact trains a run's compact tokenizer on its rendered
// trajectories and the general prompts, keeping every tool identifier the
// trajectories list spelled out.
func trainRunCompact(ctx context.Context, trajs []Trajectory, cfg TrainConfig) (*tokenizer.Tokenizer, error) {
	texts := make([]string, 0, len(trajs)+generalCorpusPrompts)
	var tools []chat.Tool
	for _, t := range trajs {
		text, err := Render(t, cfg.Template)
		if err != nil {
			return nil, err
		}
		texts = append(texts, text)
		_, ts := t.ChatMessages()
		tools = append(tools, ts...)
	}
	for _, p := range opd.Prompts(cfg.Seed, generalCorpusPrompts) {
		text, err := chat.Render([]chat.Message{{Role: chat.RoleUser, Content: p.Text}, {Role: chat.RoleAssistant, Content: p.Reference}}, nil, chat.RenderOptions{Template: cfg.Template})
		if err != nil {
			return nil, fmt.Errorf("sft: render general prompt %s: %w", p.ID, err)
		}
		texts = append(texts, text)
	}
	return TrainCompactTokenizer(ctx, texts, ToolIdentifiers(tools), CompactConfig{VocabSize: cfg.VocabSize, Phrases: cfg.Phrases})
}

func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	tok, err := runfolder.LoadTokenizer(path)
	if err != nil {
		return nil, fmt.Errorf("sft: %w", err)
	}
	return tok, nil
}

func saveTokenizer(tok *tokenizer.Tokenizer, path string) error {
	if err := runfolder.SaveTokenizer(tok, path); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	return nil
}

// startModel returns the model, optimizer and first step of the run.
func startModel(cfg TrainConfig, out string, tok *tokenizer.Tokenizer, cpu *model.CPU, resume bool) (*nn.Model, *nn.AdamW, int, error) {
	if resume {
		return runfolder.LoadCheckpoint(out, cpu, 1)
	}
	var m *nn.Model
	if cfg.Init != "" {
		var err error
		if m, err = nn.Load(cfg.Init, cpu); err != nil {
			return nil, nil, 0, err
		}
		if m.Config.VocabSize < tok.VocabSize() {
			return nil, nil, 0, fmt.Errorf("sft: %s has %d embeddings for a vocabulary of %d", cfg.Init, m.Config.VocabSize, tok.VocabSize())
		}
		if cfg.Context > 0 {
			if err := m.SetContext(cfg.Context); err != nil {
				return nil, nil, 0, fmt.Errorf("sft: --context: %w", err)
			}
		}
	} else {
		mc, err := ModelPreset(cfg.Model, tok.VocabSize(), cfg.MaxLen)
		if err != nil {
			return nil, nil, 0, err
		}
		if id, ok := tok.TokenID(turnEnd); ok {
			mc.EOSTokenID = id
		}
		base, err := model.NewRandom(mc, cfg.Seed, model.Options{Backend: cpu})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("sft: %w", err)
		}
		if m, err = nn.New(base, cpu); err != nil {
			return nil, nil, 0, err
		}
	}
	if cfg.LoRA != nil {
		if err := m.AddLoRA(*cfg.LoRA, cfg.Seed); err != nil {
			return nil, nil, 0, err
		}
	}
	return m, nn.NewAdamW(cfg.AdamW), 0, nil
}

func readRunConfig(out string) (TrainConfig, error) {
	var cfg TrainConfig
	if err := readJSON(filepath.Join(out, runConfigFile), &cfg); err != nil {
		return cfg, fmt.Errorf("sft: resume: %w", err)
	}
	return cfg, nil
}

func writeJSON(path string, v any) error {
	if err := runfolder.WriteJSON(path, v); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	return nil
}

func readJSON(path string, v any) error {
	if err := runfolder.ReadJSON(path, v); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	return nil
}

func meanLen(exs []nn.Example) float64 {
	s := 0
	for _, e := range exs {
		s += len(e.Tokens)
	}
	return float64(s) / float64(len(exs))
}
