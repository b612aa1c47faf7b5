package command

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/livehat/livehat/model/tokenizer"
)

// maxTokenizeLine is the longest JSONL line tokenize accepts.
const maxTokenizeLine = 64 << 20

// Tokenize runs "livehat tokenize --tokenizer DIR_OR_FILE [--decode]". It
// reads JSONL {"text": …} lines on stdin and writes {"text": …, "ids": […]}
// lines; with --decode it reads {"ids": […]} and writes {"ids": […], "text": …}.
// Added tokens, special ones included, are recognised in the text as Hugging
// Face's encode(text, add_special_tokens=False) does, unless --special=false.
func Tokenize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("tokenizer", "", "tokenizer.json file or a directory holding one (required)")
	decode := fs.Bool("decode", false, `read {"ids": […]} lines and write them back with their "text"`)
	special := fs.Bool("special", true, "recognise special tokens such as <|im_start|> in the text")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat tokenize --tokenizer DIR_OR_FILE [--decode] [--special=false] < in.jsonl > out.jsonl")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("tokenize: --tokenizer is required and no positional arguments are accepted")
	}
	tok, err := tokenizer.Load(*path)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 0, 64<<10), maxTokenizeLine)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	lineNo := 0
	for in.Scan() {
		lineNo++
		if err := ctx.Err(); err != nil {
			return err
		}
		line := bytes.TrimSpace(in.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Text *string `json:"text"`
			IDs  *[]int  `json:"ids"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("tokenize: stdin line %d: %w", lineNo, err)
		}
		if *decode {
			if rec.IDs == nil {
				return fmt.Errorf(`tokenize: stdin line %d: no "ids" array`, lineNo)
			}
			for _, id := range *rec.IDs {
				if tok.TokenBytes(id) == nil {
					return fmt.Errorf("tokenize: stdin line %d: id %d is not in the vocabulary", lineNo, id)
				}
			}
			err = enc.Encode(struct {
				IDs  []int  `json:"ids"`
				Text string `json:"text"`
			}{*rec.IDs, tok.Decode(*rec.IDs)})
		} else {
			if rec.Text == nil {
				return fmt.Errorf(`tokenize: stdin line %d: no "text" string`, lineNo)
			}
			ids := tok.Encode(*rec.Text)
			if *special {
				ids = tok.EncodeWithSpecial(*rec.Text)
			}
			err = enc.Encode(struct {
				Text string `json:"text"`
				IDs  []int  `json:"ids"`
			}{*rec.Text, ids})
		}
		if err != nil {
			return fmt.Errorf("tokenize: write: %w", err)
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("tokenize: stdin line %d: %w", lineNo+1, err)
	}
	return out.Flush()
}

// Tokenizer runs "livehat tokenizer train".
func Tokenizer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "train" {
		return usagef("want: livehat tokenizer train --corpus FILE --vocab-size N --out DIR")
	}
	return tokenizerTrain(ctx, args[1:], stdin, stdout, stderr)
}

// tokenizerTrain runs "livehat tokenizer train --corpus FILE --vocab-size N
// --out DIR": it trains a byte-level BPE on the corpus (plain text lines, or
// JSONL lines with a "text" field) and writes DIR/tokenizer.json.
func tokenizerTrain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenizer train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpusPath := fs.String("corpus", "", "corpus file: plain text lines or JSONL with \"text\" (required; - for stdin)")
	vocabSize := fs.Int("vocab-size", 0, "vocabulary size including special and byte tokens (required)")
	outDir := fs.String("out", "", "output directory for tokenizer.json (required)")
	minFreq := fs.Int("min-frequency", 2, "stop when the best pair occurs fewer times")
	specials := fs.String("special-tokens", "<|endoftext|>,<|im_start|>,<|im_end|>", "comma-separated special tokens, given ids 0, 1, …")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat tokenizer train --corpus FILE --vocab-size N --out DIR [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpusPath == "" || *outDir == "" || *vocabSize <= 0 || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("tokenizer train: --corpus, --vocab-size and --out are required")
	}
	var r io.Reader = stdin
	if *corpusPath != "-" {
		f, err := os.Open(*corpusPath)
		if err != nil {
			return fmt.Errorf("tokenizer train: %w", err)
		}
		defer f.Close()
		r = f
	}
	var sp []string
	for _, s := range strings.Split(*specials, ",") {
		if s = strings.TrimSpace(s); s != "" {
			sp = append(sp, s)
		}
	}
	corpus := tokenizer.NewCorpus(r, *corpusPath)
	tok, err := tokenizer.Train(ctx, corpus.Texts(), tokenizer.TrainConfig{VocabSize: *vocabSize, MinFrequency: *minFreq, SpecialTokens: sp})
	if err := corpus.Err(); err != nil {
		return fmt.Errorf("tokenizer train: %w", err)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fmt.Errorf("tokenizer train: %w", err)
	}
	path := filepath.Join(*outDir, "tokenizer.json")
	if err := tok.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trained %d tokens (%d merges) from %d texts: %s\n", tok.VocabSize(), tok.NumMerges(), corpus.Count(), path)
	return nil
}
