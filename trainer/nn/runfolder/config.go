package runfolder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

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
