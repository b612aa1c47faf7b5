// Package runfolder keeps the files every training stage writes in its
// run folder, so SFT, OPD and RL runs share one layout that the console and
// `--resume` read: run.json (the configuration), metrics.jsonl (one line per
// optimizer step), and checkpoint/ — a Hugging Face model directory with
// the tokenizer, the optimizer state and the step — replaced atomically.
// Progress writes the terminal line with the ETA and the latest numbers.
package runfolder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
)

// Files and folders of a run directory.
const (
	ConfigFile    = "run.json"
	MetricsFile   = "metrics.jsonl"
	CheckpointDir = "checkpoint"
	OptimizerFile = "optimizer.safetensors"
	StateFile     = "trainer_state.json"
	TokenizerFile = "tokenizer.json"

	tmpSuffix      = ".tmp"
	previousSuffix = ".old"
)

// Metrics is one line of metrics.jsonl. The first fields are written by
// every stage; the optional ones by the stages that measure them.
type Metrics struct {
	Step          int     `json:"step"`
	Loss          float64 `json:"loss"`
	LR            float64 `json:"lr"`
	GradNorm      float64 `json:"grad_norm"`
	Tokens        int     `json:"tokens"`
	TrainedTokens int     `json:"trained_tokens"`
	TokensPerSec  float64 `json:"tokens_per_s"`
	StepSeconds   float64 `json:"step_s"`
	// EvalLoss is the loss per trained token on held-out examples (SFT).
	EvalLoss *float64 `json:"eval_loss,omitempty"`
	// KL is the mean per-token KL: to the teacher (OPD), to the
	// reference policy (RL).
	KL *float64 `json:"kl,omitempty"`
	// RewardMean and RewardStd describe the combined reward of a step's
	// rollouts (RL); Rewards holds each raw component's mean.
	RewardMean *float64           `json:"reward_mean,omitempty"`
	RewardStd  *float64           `json:"reward_std,omitempty"`
	Rewards    map[string]float64 `json:"rewards,omitempty"`
	// ClipFrac is the share of tokens whose ratio was clipped (RL).
	ClipFrac *float64 `json:"clip_frac,omitempty"`
	// Eval holds the scores of the evaluation schedule at the steps it
	// names.
	Eval map[string]float64 `json:"eval,omitempty"`
}

// Value returns a pointer to v, for the optional fields of Metrics.
func Value(v float64) *float64 { return &v }

// State is trainer_state.json of a checkpoint.
type State struct {
	Step int `json:"step"`
}

// SaveCheckpoint writes the checkpoint aside and swaps it in with renames,
// so a kill at any moment leaves a complete checkpoint behind.
func SaveCheckpoint(out string, m *nn.Model, opt *nn.AdamW, tok *tokenizer.Tokenizer, step int) error {
	dir := filepath.Join(out, CheckpointDir)
	tmp, old := dir+tmpSuffix, dir+previousSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := m.Save(tmp); err != nil {
		return err
	}
	if err := opt.Save(filepath.Join(tmp, OptimizerFile)); err != nil {
		return err
	}
	if err := SaveTokenizer(tok, filepath.Join(tmp, TokenizerFile)); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(tmp, StateFile), State{Step: step}); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint reads the model, optimizer and step of a run folder's
// last checkpoint; the optimizer must have made updatesPerStep updates
// for every step (more than one for RL's several epochs over a step's
// rollouts).
func LoadCheckpoint(out string, backend model.Backend, updatesPerStep int) (*nn.Model, *nn.AdamW, int, error) {
	dir := filepath.Join(out, CheckpointDir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// A crash between the two renames of SaveCheckpoint leaves only
		// the previous checkpoint.
		if _, err := os.Stat(dir + previousSuffix); err == nil {
			dir += previousSuffix
		}
	}
	m, err := nn.Load(dir, backend)
	if err != nil {
		return nil, nil, 0, err
	}
	opt, err := nn.LoadAdamW(filepath.Join(dir, OptimizerFile))
	if err != nil {
		return nil, nil, 0, err
	}
	var st State
	if err := ReadJSON(filepath.Join(dir, StateFile), &st); err != nil {
		return nil, nil, 0, err
	}
	if st.Step*updatesPerStep != opt.Steps() {
		return nil, nil, 0, fmt.Errorf("checkpoint: %s is at step %d (%d updates each) but its optimizer at update %d", dir, st.Step, updatesPerStep, opt.Steps())
	}
	return m, opt, st.Step, nil
}

// ReadState returns the step of the run folder's last complete
// checkpoint.
func ReadState(out string) (State, error) {
	var st State
	err := ReadJSON(filepath.Join(out, CheckpointDir, StateFile), &st)
	return st, err
}

// TrimMetrics drops metric lines past the checkpoint a run resumes from
// (steps a killed run logged but never saved).
func TrimMetrics(out string, step int) error {
	path := filepath.Join(out, MetricsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Step int `json:"step"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Step > step {
			continue // a line cut by the kill, or a step that was not saved
		}
		keep.Write(sc.Bytes())
		keep.WriteByte('\n')
	}
	if err := os.WriteFile(path, keep.Bytes(), 0o644); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Log records a run's steps: a line of metrics.jsonl each (trimmed first
// to the step the run resumes from, then appended) and the progress
// report.
type Log struct {
	f        *os.File
	enc      *json.Encoder
	progress *Progress
}

// OpenLog opens the run folder's metrics for a run resuming at step start
// (0 for a new one) and ending at step total; progress goes to w.
func OpenLog(out string, start, total int, w io.Writer) (*Log, error) {
	if err := TrimMetrics(out, start); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(out, MetricsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Log{f: f, enc: json.NewEncoder(f), progress: NewProgress(w, start, total)}, nil
}

// Step writes a step's metrics line and reports it with summary (the
// latest numbers for the progress line).
func (l *Log) Step(m Metrics, summary string) error {
	if err := l.enc.Encode(m); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	l.progress.Step(m.Step, summary)
	return nil
}

// Note reports a line of its own (an evaluation) without breaking the
// progress line.
func (l *Log) Note(format string, args ...any) { l.progress.Note(format, args...) }

// Close closes metrics.jsonl.
func (l *Log) Close() error { return l.f.Close() }

// StartConfig writes cfg as the run folder's run.json for a new run, or,
// when resuming, reads run.json into cfg. A new run refuses a folder that
// already holds one.
func StartConfig(out string, cfg any, resume bool) error {
	path := filepath.Join(out, ConfigFile)
	if resume {
		if err := ReadJSON(path, cfg); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already holds a run; pass --resume to continue it or choose another folder", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return WriteJSON(path, cfg)
}

// LoadTokenizer reads a tokenizer.json.
func LoadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	tok, err := tokenizer.Load(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return tok, nil
}

// SaveTokenizer writes a tokenizer.json.
func SaveTokenizer(tok *tokenizer.Tokenizer, path string) error {
	if err := tok.Save(path); err != nil {
		return fmt.Errorf("save tokenizer: %w", err)
	}
	return nil
}

// WriteJSON writes v as indented JSON.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return nil
}

// ReadJSON reads a JSON file into v.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// StepIndices returns the indices of a step's batch over n items: a fresh
// seeded permutation every epoch, read in order, so the batch depends only
// on the seed and the step and a resumed run draws what an uninterrupted
// one would.
func StepIndices(n int, seed uint64, step, batch int) []int {
	out := make([]int, batch)
	var perm []int
	epoch := -1
	for j := range batch {
		g := step*batch + j
		if e := g / n; e != epoch {
			epoch = e
			perm = rand.New(rand.NewPCG(seed, uint64(e)+1)).Perm(n)
		}
		out[j] = perm[g%n]
	}
	return out
}

// Start is what an on-policy stage's run begins with.
type Start struct {
	// Tokenizer is the run's tokenizer.json.
	Tokenizer *tokenizer.Tokenizer
	// Stop is the chat template's end-of-turn token, where sampled
	// turns end.
	Stop int
	// Model and Optimizer are what the run trains with.
	Model     *nn.Model
	Optimizer *nn.AdamW
	// Step is the first step to run (the checkpoint's on resume).
	Step int
}

// Begin loads what a run of a stage that starts from a checkpoint needs.
// A new run reads init's tokenizer.json (and copies it into out) and
// weights, adds LoRA adapters when o.LoRA is set and starts a fresh AdamW;
// a resumed run reads out's tokenizer and last checkpoint, whose optimizer
// must have made updatesPerStep updates a step.
func Begin(out, init string, resume bool, o Optimization, backend model.Backend, updatesPerStep int) (Start, error) {
	var st Start
	var err error
	tokPath := filepath.Join(init, TokenizerFile)
	if resume {
		tokPath = filepath.Join(out, TokenizerFile)
	}
	if st.Tokenizer, err = LoadTokenizer(tokPath); err != nil {
		return st, err
	}
	var ok bool
	if st.Stop, ok = st.Tokenizer.TokenID("<|im_end|>"); !ok {
		return st, errors.New("the tokenizer has no <|im_end|> token to end a turn")
	}
	if resume {
		st.Model, st.Optimizer, st.Step, err = LoadCheckpoint(out, backend, updatesPerStep)
		return st, err
	}
	if err := SaveTokenizer(st.Tokenizer, filepath.Join(out, TokenizerFile)); err != nil {
		return st, err
	}
	if st.Model, err = nn.Load(init, backend); err != nil {
		return st, err
	}
	if o.LoRA != nil {
		if err := st.Model.AddLoRA(*o.LoRA, o.Seed); err != nil {
			return st, err
		}
	}
	st.Optimizer = nn.NewAdamW(o.AdamW)
	return st, nil
}
