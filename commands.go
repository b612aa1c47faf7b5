package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/command"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/livebench"
)

// isUsage reports whether err is a command-line mistake rather than a
// failure of the work itself; those exit with status 2.
func isUsage(err error) bool { return command.IsUsage(err) }

// runBench dispatches "livehat bench model".
func runBench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &harness.UsageError{Msg: "missing benchmark (model, live or experiment)"}
	}
	switch args[0] {
	case "model":
		rest := args[1:]
		if !hasFlag(rest, "random") && !hasFlag(rest, "checkpoint") {
			// The bundled model unless a shape or checkpoint is named.
			dir, err := examples.WriteModel(examples.ModelCacheDir())
			if err != nil {
				return err
			}
			rest = append([]string{"--checkpoint", dir}, rest...)
		}
		return model.BenchModelMain(ctx, rest, stdin, stdout, stderr)
	case "live":
		base, dirs, err := demoWithHooks()
		if err != nil {
			return err
		}
		return livebench.Main(ctx, base, dirs, args[1:], stdout, stderr)
	case "experiment":
		return experiment.BenchMain(ctx, args[1:], stdin, stdout, stderr)
	}
	return &harness.UsageError{Msg: fmt.Sprintf("unknown benchmark %q (want model, live or experiment)", args[0])}
}

// hasFlag reports whether args set the flag name, in any of the forms
// the flag package accepts (-name, --name, with =value or without).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// demoWithHooks returns the demo harness and the folders of the example
// plugins that implement its tools and hooks, built from the working tree.
func demoWithHooks() (*harness.Harness, []string, error) {
	base, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		return nil, nil, fmt.Errorf("embedded demo harness: %w", err)
	}
	var dirs []string
	for _, p := range examples.DemoPlugins() {
		dir := filepath.Join("examples", "plugins", p)
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("the example plugins are built from %s: run from the repository root (%w)", dir, err)
		}
		dirs = append(dirs, dir)
	}
	return base, dirs, nil
}

// runEval runs "livehat eval" on the demo harness with the example hooks.
func runEval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	base, dirs, err := demoWithHooks()
	if err != nil {
		return err
	}
	return command.Eval(ctx, eval.Config{Base: base, PluginDirs: dirs}, args, stdin, stdout, stderr)
}
