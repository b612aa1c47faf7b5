package mtp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// Config is the run configuration of `livehat train --stage mtp` (the
// run folder's run.json).
type Config struct {
	// Init is the policy's checkpoint directory (with tokenizer.json).
	Init string `json:"init"`
	// Prompts is a JSONL file of conversations ({"messages": […],
	// "tools": […]}, the layout of the SFT datasets); each line's turns
	// before its first assistant turn are a prompt.
	Prompts string `json:"prompts"`
	// Heads is the number of MTP heads. A checkpoint that already has this
	// many continues training them; otherwise fresh ones replace them.
	Heads int `json:"heads"`
	// DraftVocab, when positive, is written to the checkpoint as
	// mtp_draft_vocab_size: the heads draft among the ids below it.
	DraftVocab int `json:"draft_vocab,omitempty"`
	// Rollouts is the number of sampled replies (prompts are reused in
	// turn), each up to Gen tokens, sampled with Temperature and TopP (the
	// serving settings: heads learn what the policy writes under them).
	Rollouts    int     `json:"rollouts"`
	Gen         int     `json:"gen"`
	Temperature float64 `json:"temperature"`
	TopP        float64 `json:"top_p"`
	// Eval prompts, the last of the file, are held out to measure the
	// acceptance before and after training.
	Eval  int     `json:"eval"`
	Steps int     `json:"steps"`
	Batch int     `json:"batch"`
	LR    float64 `json:"lr"`
	Seed  uint64  `json:"seed"`
}

// DefaultConfig is a run for a small model.
func DefaultConfig() Config {
	o := DefaultOptions()
	return Config{Heads: 2, Rollouts: 256, Gen: 64, Eval: 16, Steps: o.Steps, Batch: o.Batch, LR: o.LR, Seed: o.Seed}
}

// validate reports the first setting a run cannot use, by its field.
func (c Config) validate() error {
	switch {
	case c.Init == "" || c.Prompts == "":
		return errors.New("mtp: name the policy's checkpoint (init) and the prompts file (prompts)")
	case c.Heads < 1 || c.Heads > model.MaxMTPHeads:
		return fmt.Errorf("mtp: heads %d: want 1 to %d", c.Heads, model.MaxMTPHeads)
	case c.DraftVocab < 0:
		return fmt.Errorf("mtp: draft_vocab %d is negative", c.DraftVocab)
	case c.Rollouts <= 0 || c.Gen <= 0 || c.Eval < 0:
		return fmt.Errorf("mtp: rollouts %d and gen %d must be positive, eval %d not negative", c.Rollouts, c.Gen, c.Eval)
	}
	return nil
}

// TrainRun is the MTP stage in the run folder out (`livehat train --stage
// mtp`): it samples the policy's own replies to the prompts, trains its
// MTP heads on them with the trunk frozen, and writes cfg as out/run.json,
// the checkpoint with the heads to out/checkpoint, the metrics to
// out/metrics.jsonl and the acceptance before and after training on
// held-out prompts to out/acceptance.json. A run is a few minutes at
// most, so it is not resumed: a folder that holds a run is refused.
func TrainRun(ctx context.Context, cfg Config, out string, stdout io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if err := runfolder.StartConfig(out, cfg, false); err != nil {
		return err
	}
	return train(ctx, cfg, out, stdout)
}

// Summary is OUT/acceptance.json: greedy speculative decoding of the
// held-out prompts with the heads before and after training.
type Summary struct {
	Before, After model.SpecStats
	// The rates, for readers of the file.
	BeforeAcceptance, AfterAcceptance     float64
	BeforeMeanAccepted, AfterMeanAccepted float64
}

func train(ctx context.Context, cfg Config, out string, stdout io.Writer) error {
	cpu := model.NewCPU(0)
	defer cpu.Close()
	m, err := model.Load(cfg.Init, model.Options{Backend: cpu})
	if err != nil {
		return fmt.Errorf("mtp: %w", err)
	}
	tok, err := runfolder.LoadTokenizer(filepath.Join(cfg.Init, "tokenizer.json"))
	if err != nil {
		return fmt.Errorf("mtp: %w", err)
	}
	prompts, err := readPrompts(cfg.Prompts, func(text string) []int { return tok.EncodeWithSpecial(text) })
	if err != nil {
		return err
	}
	if len(prompts) <= cfg.Eval {
		return fmt.Errorf("mtp: %s holds %d prompts; --eval %d leaves none to train on", cfg.Prompts, len(prompts), cfg.Eval)
	}
	trainPrompts, held := prompts[:len(prompts)-cfg.Eval], prompts[len(prompts)-cfg.Eval:]
	if len(m.MTP) != cfg.Heads {
		if err := m.InitMTP(cfg.Heads, cfg.Seed); err != nil {
			return err
		}
	}
	if cfg.DraftVocab > 0 {
		m.Config.MTPDraftVocab = cfg.DraftVocab
		if err := m.Config.Validate(); err != nil {
			return fmt.Errorf("mtp: --draft-vocab: %w", err)
		}
	}
	var sum Summary
	if len(held) > 0 {
		if sum.Before, err = Acceptance(ctx, m, held, cfg.Gen, cfg.Heads); err != nil {
			return err
		}
	}
	batch := make([][]int, cfg.Rollouts)
	for i := range batch {
		batch[i] = trainPrompts[i%len(trainPrompts)]
	}
	start := time.Now()
	scfg := sample.Config{Temperature: float32(cfg.Temperature), TopP: float32(cfg.TopP), Seed: cfg.Seed}
	rolls, err := SampleRollouts(ctx, m, batch, cfg.Gen, scfg)
	if err != nil {
		return err
	}
	positions := 0
	for _, r := range rolls {
		positions += len(r.Hidden) / m.Config.HiddenSize
	}
	fmt.Fprintf(stdout, "sampled %d rollouts (%d positions) in %.1fs\n", len(rolls), positions, time.Since(start).Seconds())
	log, err := runfolder.OpenLog(out, 0, cfg.Steps, stdout)
	if err != nil {
		return err
	}
	defer log.Close()
	opts := Options{Steps: cfg.Steps, Batch: cfg.Batch, LR: cfg.LR, MaxGradNorm: 1, Seed: cfg.Seed}
	last := time.Now()
	err = Train(ctx, m, rolls, opts, func(r StepReport) error {
		el := time.Since(last)
		last = time.Now()
		met := runfolder.Metrics{Step: r.Step, Loss: r.Loss, LR: r.LR, GradNorm: r.GradNorm, Tokens: opts.Batch * cfg.Heads,
			TrainedTokens: opts.Batch * cfg.Heads, TokensPerSec: float64(opts.Batch*cfg.Heads) / el.Seconds(), StepSeconds: el.Seconds(),
			Eval: map[string]float64{}}
		for i, a := range r.Accuracy {
			met.Eval[fmt.Sprintf("head%d_accuracy", i)] = a
		}
		return log.Step(met, fmt.Sprintf("loss %.3f, head accuracy %.2f", r.Loss, r.Accuracy))
	})
	if err != nil {
		return err
	}
	if len(held) > 0 {
		if sum.After, err = Acceptance(ctx, m, held, cfg.Gen, cfg.Heads); err != nil {
			return err
		}
	}
	sum.BeforeAcceptance, sum.AfterAcceptance = sum.Before.AcceptanceRate(), sum.After.AcceptanceRate()
	sum.BeforeMeanAccepted, sum.AfterMeanAccepted = sum.Before.MeanAcceptedLength(), sum.After.MeanAcceptedLength()
	dir := filepath.Join(out, runfolder.CheckpointDir)
	if err := m.Save(dir); err != nil {
		return err
	}
	if err := runfolder.SaveTokenizer(tok, filepath.Join(dir, "tokenizer.json")); err != nil {
		return err
	}
	if err := runfolder.WriteJSON(filepath.Join(out, "acceptance.json"), sum); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "held-out greedy acceptance with %d heads: %.2f before, %.2f after training (mean accepted length %.2f → %.2f); checkpoint in %s\n",
		cfg.Heads, sum.BeforeAcceptance, sum.AfterAcceptance, sum.BeforeMeanAccepted, sum.AfterMeanAccepted, dir)
	return nil
}

// promptLine is the part of a conversation line that makes a prompt.
// Tools come as chat.Tool objects or in OpenAI's {"type": "function",
// "function": {…}} wrapping, as the exported datasets write them.
type promptLine struct {
	Messages []chat.Message   `json:"messages"`
	Tools    []toolDefinition `json:"tools"`
}

type toolDefinition struct {
	chat.Tool
	Function *chat.Tool `json:"function"`
}

func (p promptLine) tools() []chat.Tool {
	var out []chat.Tool
	for _, t := range p.Tools {
		if t.Function != nil {
			out = append(out, *t.Function)
		} else {
			out = append(out, t.Tool)
		}
	}
	return out
}

// readPrompts renders each line's turns before its first assistant turn
// with a generation prompt and encodes them.
func readPrompts(path string, encode func(string) []int) ([][]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mtp: %w", err)
	}
	defer f.Close()
	var out [][]int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var p promptLine
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("mtp: %s:%d: %w", path, line, err)
		}
		msgs := p.Messages
		for i, m := range msgs {
			if m.Role == chat.RoleAssistant {
				msgs = msgs[:i]
				break
			}
		}
		if len(msgs) == 0 {
			return nil, fmt.Errorf("mtp: %s:%d: no turns before the first assistant turn", path, line)
		}
		text, err := chat.Render(msgs, p.tools(), chat.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			return nil, fmt.Errorf("mtp: %s:%d: %w", path, line, err)
		}
		out = append(out, encode(text))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mtp: %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, errors.New("mtp: " + path + " holds no prompts")
	}
	return out, nil
}
