package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/command"
)

// isUsage reports whether err is a command-line mistake rather than a
// failure of the work itself; those exit with status 2.
func isUsage(err error) bool { return command.IsUsage(err) }

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
