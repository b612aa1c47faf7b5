package command

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/sft"
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

// withHookCritic gives data with a feedback share the critic it needs:
// the example plugins, built from the working tree, run the harness's
// hooks on the flawed replies. The returned func releases them.
func withHookCritic(ctx context.Context, cfg *sft.DataConfig) (func(), error) {
	if cfg.FeedbackShare == 0 {
		return func() {}, nil
	}
	_, dirs, err := demoWithHooks()
	if err != nil {
		return nil, fmt.Errorf("--feedback-share: %w", err)
	}
	sb, err := runtime.OpenSandbox(ctx, "", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if _, err := sb.LoadGoDir(ctx, dir); err != nil {
			sb.Close(context.Background())
			return nil, fmt.Errorf("--feedback-share: %w", err)
		}
	}
	cfg.Critic = sft.NewHookCritic(sb)
	return func() { sb.Close(context.Background()) }, nil
}
