package command

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/livehat/livehat/model/gguf"
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
