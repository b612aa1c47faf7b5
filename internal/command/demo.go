package command

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
)

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
