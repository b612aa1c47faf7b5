package mtp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/livehat/livehat/harness"
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

func registerFlags(c *Config, fs *flag.FlagSet) func() {
	fs.StringVar(&c.Init, "init", c.Init, "the policy's checkpoint directory (required)")
	fs.StringVar(&c.Prompts, "prompts", c.Prompts, "JSONL conversations whose opening turns are the prompts (required)")
	fs.IntVar(&c.Heads, "heads", c.Heads, "MTP heads to train (tokens drafted per step)")
	fs.IntVar(&c.DraftVocab, "draft-vocab", c.DraftVocab, "heads draft among the token ids below N (0: all)")
	fs.IntVar(&c.Rollouts, "rollouts", c.Rollouts, "sampled replies to train on")
	fs.IntVar(&c.Gen, "gen", c.Gen, "tokens per sampled reply at most")
	fs.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature of the rollouts (0: greedy)")
	fs.Float64Var(&c.TopP, "top-p", c.TopP, "nucleus cut of the rollouts (0 or 1: none)")
	fs.IntVar(&c.Eval, "eval", c.Eval, "held-out prompts for the acceptance report")
	fs.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps")
	fs.IntVar(&c.Batch, "batch", c.Batch, "positions per step")
	fs.Float64Var(&c.LR, "lr", c.LR, "AdamW learning rate")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the rollouts and batches")
	return nil
}

// TrainMain is `livehat train --stage mtp`: it samples the policy's own
// replies to the prompts, trains its MTP heads on them with the trunk
// frozen, and writes the checkpoint with the heads to OUT/checkpoint, the
// metrics to OUT/metrics.jsonl and the acceptance before and after
// training on held-out prompts to OUT/acceptance.json.
//
//	livehat train --stage mtp --init CHECKPOINT --prompts FILE.jsonl --out RUN
//	    [--heads 2] [--draft-vocab N] [--rollouts 256] [--gen 64] [--temperature 0] [--top-p 0]
//	    [--eval 16] [--steps 300] [--batch 128] [--lr 0.002] [--seed 1] [--config run.json]
//
// A run is a few minutes at most, so --resume is refused: run it again.
func TrainMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, cmd, err := runfolder.ParseCommand(args, "mtp", DefaultConfig, registerFlags, stderr)
	if err != nil {
		return err
	}
	switch {
	case cmd.Resume:
		return &harness.UsageError{Msg: "--resume: an mtp run is short and is not resumed; start it again in a new --out"}
	case cfg.Init == "" || cfg.Prompts == "":
		return &harness.UsageError{Msg: "--init CHECKPOINT and --prompts FILE.jsonl are required"}
	case cfg.Heads < 1 || cfg.Heads > model.MaxMTPHeads:
		return &harness.UsageError{Msg: fmt.Sprintf("--heads %d: want 1 to %d", cfg.Heads, model.MaxMTPHeads)}
	case cfg.DraftVocab < 0:
		return &harness.UsageError{Msg: fmt.Sprintf("--draft-vocab %d is negative", cfg.DraftVocab)}
	case cfg.Rollouts <= 0 || cfg.Gen <= 0 || cfg.Eval < 0:
		return &harness.UsageError{Msg: "--rollouts and --gen must be positive, --eval not negative"}
	}
	if err := runfolder.StartConfig(cmd.Out, cfg, false); err != nil {
		return err
	}
	return train(ctx, cfg, cmd.Out, stdout)
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
