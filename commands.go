package main

import (
	"context"
	"errors"
	"io"

	"github.com/livehat/livehat/harness"
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
	return harness.Main(ctx, args, stdin, stdout, stderr)
}
