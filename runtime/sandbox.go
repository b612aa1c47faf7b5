package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/plugins"
)

// Sandbox is the process's plugin host with the plugins loaded into it. It
// hands each stream a PluginSet bound to that stream's catalog, so one
// compiled plugin serves many streams while each sees only its own data.
type Sandbox struct {
	host     *plugins.Host
	cacheDir string
	log      *slog.Logger

	// timeoutFloor raises plugins' per-call deadlines to at least this.
	timeoutFloor time.Duration

	mu      sync.RWMutex
	loaded  []*plugins.Plugin
	byName  map[string]*plugins.Plugin
	closing bool
}

// OpenSandbox starts a plugin host whose compiled code and built Go
// plugins are cached under cacheDir (plugins.DefaultCacheDir() when empty).
func OpenSandbox(ctx context.Context, cacheDir string, log *slog.Logger) (*Sandbox, error) {
	if cacheDir == "" {
		cacheDir = plugins.DefaultCacheDir()
	}
	if log == nil {
		log = slog.Default()
	}
	host, err := plugins.NewHost(ctx, plugins.NewHostConfig().WithCacheDir(cacheDir))
	if err != nil {
		return nil, fmt.Errorf("runtime: plugin host: %w", err)
	}
	return &Sandbox{host: host, cacheDir: cacheDir, log: log, byName: map[string]*plugins.Plugin{}}, nil
}

// SetTimeoutFloor makes plugins loaded afterwards run with per-call
// deadlines of at least d. Evaluations use it: they measure what a model
// answers, and a machine busy with other work must not turn into
// fail-closed hooks. Live streams keep the manifests' deadlines.
func (s *Sandbox) SetTimeoutFloor(d time.Duration) {
	s.mu.Lock()
	s.timeoutFloor = d
	s.mu.Unlock()
}

// LoadGoDir builds the Go plugin in dir (cached by the hash of its
// sources) and loads it; a plugin of the same name is replaced.
func (s *Sandbox) LoadGoDir(ctx context.Context, dir string) (*plugins.Plugin, error) {
	m, _, err := plugins.ReadManifestDir(dir)
	if err != nil {
		return nil, err
	}
	path, err := plugins.BuildGoCached(ctx, dir, s.cacheDir)
	if err != nil {
		return nil, fmt.Errorf("runtime: build plugin %s: %w", dir, err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("runtime: plugin %s: %w", dir, err)
	}
	m.Wasm.SHA256 = "" // a source manifest pins nothing; Pin pins this build
	pkg := &plugins.Package{Manifest: m, Wasm: wasm}
	pkg.Pin()
	return s.Load(ctx, pkg)
}

// Load adds a packaged plugin.
func (s *Sandbox) Load(ctx context.Context, pkg *plugins.Package) (*plugins.Plugin, error) {
	t0 := time.Now()
	s.mu.RLock()
	floor := s.timeoutFloor
	s.mu.RUnlock()
	p, err := s.host.LoadWith(ctx, pkg, plugins.LoadOptions{MinTimeout: floor})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		_ = p.Close(ctx)
		return nil, errors.New("runtime: sandbox closed")
	}
	s.byName[p.Name()] = p
	s.loaded = append(s.loaded, p)
	s.log.Info("plugin loaded", "name", p.Name(), "version", p.Version(), "took", time.Since(t0))
	return p, nil
}

// Plugins returns the loaded plugins, serving a stream whose catalog is
// the given catalog document (package harness/catalog; version 1 is
// upgraded) to host functions.
func (s *Sandbox) Plugins(catalogJSON []byte, now func() time.Time) (*PluginSet, error) {
	cat, err := catalog.Parse(catalogJSON)
	if err != nil {
		return nil, fmt.Errorf("runtime: stream catalog: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	env := plugins.NewLocalEnv(cat, s.log, now)
	s.mu.RLock()
	defer s.mu.RUnlock()
	ps := make([]*plugins.Plugin, 0, len(s.byName))
	for _, p := range s.byName {
		ps = append(ps, p)
	}
	return NewPluginSet(env, ps...), nil
}

// Close unloads every plugin and stops the host.
func (s *Sandbox) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	loaded := s.loaded
	s.loaded, s.byName = nil, map[string]*plugins.Plugin{}
	s.mu.Unlock()
	var errs []error
	for _, p := range loaded {
		errs = append(errs, p.Close(ctx))
	}
	errs = append(errs, s.host.Close(ctx))
	return errors.Join(errs...)
}
