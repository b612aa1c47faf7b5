package plugins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Errors of the registry.
var (
	ErrNotInstalled = errors.New("plugin not installed")
	ErrInstalled    = errors.New("plugin version already installed")
	ErrNotNewer     = errors.New("not newer than the active version")
	ErrInUse        = errors.New("plugin version is active")
)

// Registry holds the installed versions of every plugin and which one is
// active, and changes them without a restart. Sessions take a Snapshot at
// the start of a turn and use its versions for the whole turn, so an
// upgrade or rollback applies from the next turn on (hot swap between
// turns). It is safe for concurrent use.
type Registry struct {
	host *Host

	mu      sync.Mutex
	plugins map[string]*regEntry
	closed  bool
}

type regEntry struct {
	versions map[string]*regVersion
	active   string   // version string; "" when none
	history  []string // previously active versions, most recent last
	disabled bool
}

type regVersion struct {
	p       *Plugin
	refs    int  // snapshots holding it
	removed bool // close when refs reaches 0
}

// NewRegistry returns an empty registry loading plugins with h.
func NewRegistry(h *Host) *Registry {
	return &Registry{host: h, plugins: map[string]*regEntry{}}
}

// Install loads pkg and adds it as a version of its plugin. The first
// version of a plugin becomes active; later ones wait for Upgrade or
// Activate.
func (r *Registry) Install(ctx context.Context, pkg *Package) (*Plugin, error) {
	if pkg == nil || pkg.Manifest == nil {
		return nil, errors.New("registry: install: no manifest")
	}
	name, ver := pkg.Manifest.Name, pkg.Manifest.Version
	r.mu.Lock()
	if e := r.plugins[name]; e != nil && e.versions[ver] != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("registry: install %s@%s: %w", name, ver, ErrInstalled)
	}
	r.mu.Unlock()
	// Compile outside the lock: it takes seconds for a cold standard-Go module.
	p, err := r.host.Load(ctx, pkg)
	if err != nil {
		return nil, fmt.Errorf("registry: install: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = p.Close(ctx)
		return nil, fmt.Errorf("registry: install %s@%s: %w", name, ver, ErrClosed)
	}
	e := r.plugins[name]
	if e == nil {
		e = &regEntry{versions: map[string]*regVersion{}}
		r.plugins[name] = e
	}
	if e.versions[ver] != nil {
		_ = p.Close(ctx)
		return nil, fmt.Errorf("registry: install %s@%s: %w", name, ver, ErrInstalled)
	}
	e.versions[ver] = &regVersion{p: p}
	if e.active == "" {
		e.active = ver
	}
	return p, nil
}

// Upgrade installs pkg and makes it active; its version must be newer
// than the active one. The replaced version stays installed for Rollback.
func (r *Registry) Upgrade(ctx context.Context, pkg *Package) (*Plugin, error) {
	if pkg == nil || pkg.Manifest == nil {
		return nil, errors.New("registry: upgrade: no manifest")
	}
	name := pkg.Manifest.Name
	next, err := ParseSemver(pkg.Manifest.Version)
	if err != nil {
		return nil, fmt.Errorf("registry: upgrade: %w", err)
	}
	r.mu.Lock()
	if e := r.plugins[name]; e != nil && e.active != "" {
		cur, _ := ParseSemver(e.active)
		if next.Compare(cur) <= 0 {
			r.mu.Unlock()
			return nil, fmt.Errorf("registry: upgrade %s to %s: %w (%s)", name, next, ErrNotNewer, e.active)
		}
	}
	r.mu.Unlock()
	p, err := r.Install(ctx, pkg)
	if err != nil {
		return nil, err
	}
	if err := r.Activate(name, pkg.Manifest.Version); err != nil {
		return nil, err
	}
	return p, nil
}

// Activate makes an installed version the active one.
func (r *Registry) Activate(name, version string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.entry(name)
	if err != nil {
		return err
	}
	if e.versions[version] == nil {
		return fmt.Errorf("registry: activate %s@%s: %w", name, version, ErrNotInstalled)
	}
	if e.active == version {
		return nil
	}
	if e.active != "" {
		e.history = append(e.history, e.active)
	}
	e.active = version
	return nil
}

// Rollback re-activates the version that was active before the current
// one, and returns it.
func (r *Registry) Rollback(name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.entry(name)
	if err != nil {
		return "", err
	}
	for len(e.history) > 0 {
		prev := e.history[len(e.history)-1]
		e.history = e.history[:len(e.history)-1]
		if e.versions[prev] != nil {
			e.active = prev
			return prev, nil
		}
	}
	return "", fmt.Errorf("registry: rollback %s: no earlier version to return to", name)
}

// Enable and Disable switch a plugin on and off; a disabled plugin is
// absent from new snapshots.
func (r *Registry) Enable(name string) error { return r.setDisabled(name, false) }

// Disable switches a plugin off for new snapshots.
func (r *Registry) Disable(name string) error { return r.setDisabled(name, true) }

func (r *Registry) setDisabled(name string, off bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.entry(name)
	if err != nil {
		return err
	}
	e.disabled = off
	return nil
}

// Remove uninstalls an inactive version; it is closed once no snapshot
// holds it.
func (r *Registry) Remove(ctx context.Context, name, version string) error {
	r.mu.Lock()
	e, err := r.entry(name)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	v := e.versions[version]
	if v == nil {
		r.mu.Unlock()
		return fmt.Errorf("registry: remove %s@%s: %w", name, version, ErrNotInstalled)
	}
	if e.active == version {
		r.mu.Unlock()
		return fmt.Errorf("registry: remove %s@%s: %w; activate another version first", name, version, ErrInUse)
	}
	delete(e.versions, version)
	v.removed = true
	closeNow := v.refs == 0
	r.mu.Unlock()
	if closeNow {
		return v.p.Close(ctx)
	}
	return nil
}

func (r *Registry) entry(name string) (*regEntry, error) {
	e := r.plugins[name]
	if e == nil {
		return nil, fmt.Errorf("registry: %s: %w", name, ErrNotInstalled)
	}
	return e, nil
}

// PluginInfo describes one installed plugin.
type PluginInfo struct {
	Name string
	// Active is the active version, "" when none; Versions are all
	// installed versions in semver order.
	Active   string
	Versions []string
	Enabled  bool
	Kinds    []Kind
	SHA256   string
	Signer   string
	Stats    Stats
}

// List describes every installed plugin, sorted by name.
func (r *Registry) List() []PluginInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PluginInfo, 0, len(r.plugins))
	for name, e := range r.plugins {
		info := PluginInfo{Name: name, Active: e.active, Enabled: !e.disabled}
		for v := range e.versions {
			info.Versions = append(info.Versions, v)
		}
		slices.SortFunc(info.Versions, func(a, b string) int {
			va, _ := ParseSemver(a)
			vb, _ := ParseSemver(b)
			return va.Compare(vb)
		})
		if v := e.versions[e.active]; v != nil {
			info.Kinds, info.SHA256, info.Signer, info.Stats = v.p.m.Kinds(), v.p.SHA256(), v.p.Signer(), v.p.Stats()
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Snapshot pins the active version of every enabled plugin for one turn.
// Release it when the turn ends.
func (r *Registry) Snapshot() *Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Snapshot{r: r, held: map[string]*regVersion{}}
	for name, e := range r.plugins {
		if e.disabled || e.active == "" {
			continue
		}
		v := e.versions[e.active]
		v.refs++
		s.held[name] = v
	}
	return s
}

// Snapshot is the set of plugin versions one turn runs with. Its
// versions stay loaded until Release, whatever the registry does.
type Snapshot struct {
	r    *Registry
	once sync.Once
	held map[string]*regVersion
}

// Plugin returns the version of the named plugin pinned by the snapshot.
func (s *Snapshot) Plugin(name string) (*Plugin, bool) {
	v, ok := s.held[name]
	if !ok {
		return nil, false
	}
	return v.p, true
}

// Names returns the plugins of the snapshot, sorted.
func (s *Snapshot) Names() []string {
	names := make([]string, 0, len(s.held))
	for n := range s.held {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Release gives the snapshot's versions back; removed versions no
// snapshot holds any more are closed. Release is idempotent.
func (s *Snapshot) Release() {
	s.once.Do(func() {
		var toClose []*Plugin
		s.r.mu.Lock()
		for _, v := range s.held {
			v.refs--
			if v.refs == 0 && v.removed {
				toClose = append(toClose, v.p)
			}
		}
		s.r.mu.Unlock()
		for _, p := range toClose {
			_ = p.Close(context.Background())
		}
	})
}

// Close closes every installed version. Snapshots must be released first.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	var ps []*Plugin
	for _, e := range r.plugins {
		for _, v := range e.versions {
			ps = append(ps, v.p)
		}
	}
	r.plugins = map[string]*regEntry{}
	r.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close(ctx))
	}
	return errors.Join(errs...)
}
