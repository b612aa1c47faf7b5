package command

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/livehat/livehat/model/gguf"
	"github.com/livehat/livehat/trainer/rl"
	"github.com/livehat/livehat/trainer/sft"
)

// ExportGGUF runs "livehat export gguf": it writes a checkpoint directory
// of ours as a GGUF file for llama.cpp and other GGML engines.
//
//	livehat export gguf --checkpoint DIR --out FILE [--type f32|f16|bf16|q8_0] [--tokenizer tokenizer.json] [--name NAME] [--chat-template FILE]
func ExportGGUF(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export gguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("checkpoint", "", "Hugging Face checkpoint directory (config.json, safetensors)")
	out := fs.String("out", "", "GGUF file to write")
	typ := fs.String("type", "", "matrix type: f32, f16, bf16 or q8_0 (default: the checkpoint's own)")
	tok := fs.String("tokenizer", "", "tokenizer.json (default: the one in the checkpoint directory)")
	name := fs.String("name", "", "general.name (default: the directory name)")
	tmplFile := fs.String("chat-template", "", "Jinja chat template file to embed (default: tokenizer_config.json's, else Qwen3's, which the in-process engine renders)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("export gguf: need --checkpoint DIR and --out FILE, and no other arguments")
	}
	opts := gguf.ExportOptions{Tokenizer: *tok, Name: *name}
	if *tmplFile != "" {
		b, err := os.ReadFile(*tmplFile)
		if err != nil {
			return fmt.Errorf("export gguf: --chat-template: %w", err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return fmt.Errorf("export gguf: --chat-template %s is empty", *tmplFile)
		}
		opts.ChatTemplate = string(b)
	}
	if *typ != "" {
		t, ok := map[string]gguf.TensorType{"f32": gguf.F32, "f16": gguf.F16, "bf16": gguf.BF16, "q8_0": gguf.Q8_0}[strings.ToLower(*typ)]
		if !ok {
			return fmt.Errorf("export gguf: unknown --type %q (want f32, f16, bf16 or q8_0)", *typ)
		}
		opts.Type = &t
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := gguf.ExportFile(*out, *dir, opts); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return fmt.Errorf("export gguf: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s (%.1f MiB)\n", *out, float64(st.Size())/(1<<20))
	return nil
}

// Export is "livehat export": "gguf" converts a checkpoint for llama.cpp
// (ExportGGUF); anything else exports training data for TRL or verl
// (ExportData).
func Export(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "gguf" {
		return ExportGGUF(ctx, args[1:], stdin, stdout, stderr)
	}
	return ExportData(ctx, args, stdin, stdout, stderr)
}

// ExportData runs "livehat export --format …": it writes the HSA-SFT
// trajectories as JSONL for TRL or verl, each line with its harness
// version and HSA record; the formats trl-rl and verl-rl write RL prompts
// instead (exportRLPrompts).
//
//	livehat export --format trl|verl --out FILE [--augment=true|false]
//	    [--rooms 40 --questions 12 --data-seed 1 --variant-share 0.75 --transforms 3 --retry-share 0.2 --context-share 0.5 --memory-share 0.5]
//	    [--teacher URL --teacher-model NAME]
//
// --out - writes to standard output.
func ExportData(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if f, _ := flagValue(args, "format"); f == rl.FormatTRL || f == rl.FormatVerl {
		return exportRLPrompts(args, stdout, stderr)
	}
	cfg := sft.DefaultDataConfig()
	fs := newFlags("export", "--format trl|verl|trl-rl|verl-rl --out FILE [flags]", stderr)
	format := fs.String("format", sft.FormatTRL, "dataset layout: trl or verl (trl-rl and verl-rl: RL prompts)")
	out := fs.String("out", "", "output JSONL file, - for standard output (required)")
	harnessPath := sftDataFlags(fs, &cfg)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *format != sft.FormatTRL && *format != sft.FormatVerl {
		return usagef("--format %q: want trl, verl, trl-rl or verl-rl", *format)
	}
	if *out == "" {
		return usagef("--out FILE is required")
	}
	cfg.TeacherAPIKey = os.Getenv(teacherKeyEnv)
	base, err := loadHarness(*harnessPath)
	if err != nil {
		return err
	}
	release, err := withHookCritic(ctx, &cfg)
	if err != nil {
		return err
	}
	defer release()
	trajs, st, err := sft.Build(ctx, base, cfg)
	if err != nil {
		return err
	}
	toFile, err := writeJSONL(*out, stdout, func(w io.Writer) error { return sft.WriteJSONL(w, trajs, *format) })
	if err != nil || !toFile {
		return err
	}
	fmt.Fprintf(stderr, "export: %d examples (%d under HSA variants, %d with a kept retry) to %s\n", st.Kept, st.Variants, st.Retries, *out)
	return nil
}

// exportRLPrompts is "livehat export --format trl-rl|verl-rl": RL prompts
// with their harness version, HSA record and verifier inputs.
//
//	livehat export --format trl-rl|verl-rl --out FILE [--tasks 256] [--split train] [--harness FILE]
//	    [--rooms 32 --min-items 0 --max-items 0 --data-seed 1 --variant-share 0.5 --transforms 2 --fault-share 0.2]
//
// --out - writes to standard output.
func exportRLPrompts(args []string, stdout, stderr io.Writer) error {
	cfg := rl.DefaultTaskConfig()
	fs := newFlags("export", "--format trl-rl|verl-rl --out FILE [flags]", stderr)
	format := fs.String("format", rl.FormatVerl, "dataset layout: trl-rl or verl-rl")
	out := fs.String("out", "", "output JSONL file, - for standard output (required)")
	n := fs.Int("tasks", 256, "RL prompts to write")
	split := fs.String("split", "train", "split name written to verl's extra_info")
	harnessPath := fs.String("harness", "", "base harness file (default: the embedded demo harness)")
	fs.Uint64Var(&cfg.Seed, "data-seed", cfg.Seed, "seed of the rooms, questions, variants and faults")
	fs.IntVar(&cfg.Rooms, "rooms", cfg.Rooms, "live rooms the tasks are drawn from")
	fs.IntVar(&cfg.Room.MinItems, "min-items", cfg.Room.MinItems, "fewest items in a room's catalog (0: the room's default)")
	fs.IntVar(&cfg.Room.MaxItems, "max-items", cfg.Room.MaxItems, "most items in a room's catalog (0: the room's default)")
	fs.IntVar(&cfg.Room.Variety, "variety", cfg.Room.Variety, "rooms as a wider range of merchants and viewers make them, -1 to 5 (liveroom.RoomConfig.Variety), as in the SFT stages")
	fs.Float64Var(&cfg.VariantShare, "variant-share", cfg.VariantShare, "share of tasks under a freshly augmented harness")
	fs.IntVar(&cfg.Transforms, "transforms", cfg.Transforms, "training-pool families per variant")
	fs.Float64Var(&cfg.FaultShare, "fault-share", cfg.FaultShare, "share of tasks with a faulty tool")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	switch {
	case *format != rl.FormatTRL && *format != rl.FormatVerl:
		return usagef("--format %q: want trl-rl or verl-rl", *format)
	case *out == "":
		return usagef("--out FILE is required")
	case *n <= 0:
		return usagef("--tasks %d: want at least 1", *n)
	}
	base, err := loadHarness(*harnessPath)
	if err != nil {
		return err
	}
	ts, err := rl.ExportTasks(base, cfg, *n)
	if err != nil {
		return err
	}
	toFile, err := writeJSONL(*out, stdout, func(w io.Writer) error { return rl.WriteJSONL(w, ts, *format, *split) })
	if err != nil || !toFile {
		return err
	}
	variants, faulty := 0, 0
	for _, t := range ts {
		if t.Record != nil {
			variants++
		}
		if len(t.Faults) > 0 {
			faulty++
		}
	}
	fmt.Fprintf(stderr, "export: %d RL prompts (%d under HSA variants, %d with a tool fault) to %s\n", len(ts), variants, faulty, *out)
	return nil
}

// writeJSONL calls write on standard output when out is "-", else on the
// file out (buffered), and reports whether it wrote a file.
func writeJSONL(out string, stdout io.Writer, write func(io.Writer) error) (toFile bool, err error) {
	if out == "-" {
		return false, write(stdout)
	}
	f, err := os.Create(out)
	if err != nil {
		return true, fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return true, err
	}
	if err := bw.Flush(); err != nil {
		return true, fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return true, fmt.Errorf("export: %w", err)
	}
	return true, nil
}
