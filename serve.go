package main

import (
	"context"
	"io"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return nil
}
