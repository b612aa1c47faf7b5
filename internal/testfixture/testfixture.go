// Package testfixture gives tests the demo stream as `go run .` serves
// it: the demo harness, the example plugins that implement its tools and
// hooks, and sessions over them, so that each test package does not load
// them its own way (as bbolt's internal/btesting does for its databases).
//
// It imports harness, runtime and examples, and serves the tests of the
// packages allowed to import those: trainer and console, and runtime's
// external tests.
package testfixture

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// DemoHarness returns the demo stream's harness (examples.DemoHarness).
func DemoHarness(tb testing.TB) *harness.Harness {
	tb.Helper()
	h, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		tb.Fatalf("demo harness: %v", err)
	}
	return h
}

// PluginCacheDir is the compile cache the test binaries of a run share, so
// that the example plugins are compiled once: the cache is keyed by a hash
// of their sources and written atomically.
func PluginCacheDir() string { return filepath.Join(os.TempDir(), "livehat-test-plugin-cache") }

// PluginDir is the source folder of the example plugin name
// (examples/plugins/name), wherever the test runs from.
func PluginDir(name string) string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "plugins", name)
}

// DemoPluginDirs are the source folders of the demo harness's plugins
// (examples.DemoPlugins), in the order they are installed.
func DemoPluginDirs() []string {
	var dirs []string
	for _, name := range examples.DemoPlugins() {
		dirs = append(dirs, PluginDir(name))
	}
	return dirs
}

// HookTimeoutFloor is the least per-call deadline the fixture's sandboxes
// give hooks: a busy test machine must not turn a fail-closed hook (the
// compliance check) into safe lines.
const HookTimeoutFloor = 5 * time.Second

// QuietLogger discards what it is given.
func QuietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// DemoSandbox opens a sandbox over the shared plugin cache with the demo
// harness's plugins loaded and HookTimeoutFloor set; it is closed when
// the test ends. A nil logger logs through slog's default.
func DemoSandbox(tb testing.TB, logger *slog.Logger) *runtime.Sandbox {
	tb.Helper()
	ctx := context.Background()
	sb, err := runtime.OpenSandbox(ctx, PluginCacheDir(), logger)
	if err != nil {
		tb.Fatalf("sandbox: %v", err)
	}
	tb.Cleanup(func() { sb.Close(context.Background()) })
	sb.SetTimeoutFloor(HookTimeoutFloor)
	for _, dir := range DemoPluginDirs() {
		if _, err := sb.LoadGoDir(ctx, dir); err != nil {
			tb.Fatalf("load %s: %v", filepath.Base(dir), err)
		}
	}
	return sb
}

// DemoPlugins returns the demo plugins (DemoSandbox) over the demo
// catalog, with now as their clock (nil is the wall clock).
func DemoPlugins(tb testing.TB, logger *slog.Logger, now func() time.Time) *runtime.PluginSet {
	tb.Helper()
	ps, err := DemoSandbox(tb, logger).Plugins(examples.Catalog, now)
	if err != nil {
		tb.Fatalf("demo plugins: %v", err)
	}
	return ps
}

// DemoSession starts a session of the demo stream with cfg, closed when
// the test ends, and returns it with a listener of its events. Fields cfg
// leaves empty get the demo's: Stream "demo", the demo harness, the demo
// plugins (DemoPlugins) and QuietLogger; cfg.Model must be set.
func DemoSession(tb testing.TB, cfg runtime.Config) (*runtime.Session, <-chan runtime.Event) {
	tb.Helper()
	if cfg.Stream == "" {
		cfg.Stream = "demo"
	}
	if cfg.Harness == nil {
		cfg.Harness = DemoHarness(tb)
	}
	if cfg.Logger == nil {
		cfg.Logger = QuietLogger()
	}
	if cfg.Plugins == nil {
		cfg.Plugins = DemoPlugins(tb, cfg.Logger, nil)
	}
	s, err := runtime.NewSession(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("demo session: %v", err)
	}
	tb.Cleanup(s.Close)
	return s, s.Listen(256)
}
