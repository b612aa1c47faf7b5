package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/tokenizer"
)

// isUsage reports whether err is a command-line mistake rather than a
// failure of the work itself; those exit with status 2.
func isUsage(err error) bool {
	var u *harness.UsageError
	return errors.As(err, &u)
}

// runHarness dispatches "livehat harness …": augment belongs to package
// hsa, the rest to package harness.
func runHarness(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "augment" {
		return hsa.AugmentMain(ctx, args[1:], stdin, stdout, stderr)
	}
	return harness.Main(ctx, args, stdin, stdout, stderr)
}

// runTokenizer dispatches "livehat tokenizer train".
func runTokenizer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "train" {
		return &harness.UsageError{Msg: "want: livehat tokenizer train --corpus FILE --vocab-size N --out DIR"}
	}
	return tokenizer.TrainTokenizerMain(ctx, args[1:], stdin, stdout, stderr)
}

// runBench dispatches "livehat bench model".
func runBench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &harness.UsageError{Msg: "missing benchmark (model)"}
	}
	switch args[0] {
	case "model":
		return model.BenchModelMain(ctx, args[1:], stdin, stdout, stderr)
	}
	return &harness.UsageError{Msg: fmt.Sprintf("unknown benchmark %q (want model)", args[0])}
}
