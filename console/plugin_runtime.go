package console

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/plugins"
	"github.com/livehat/livehat/runtime"
)

// pluginRuntime is the console's side of the sandbox: which stored plugin
// versions are loaded, the plugin sets streams run (cached per
// organisation, plugin generation and catalog), and call statistics.
type pluginRuntime struct {
	sandbox *runtime.Sandbox
	store   *store.Store
	files   packageFiles
	log     *slog.Logger

	// loadMu serialises loading, so two sessions that miss the cache at
	// once compile a version once.
	loadMu sync.Mutex
	// checker verifies uploads in a host of its own, so that a rejected
	// package never enters the live sandbox.
	checkerOnce sync.Once
	checker     *plugins.Host
	checkerErr  error

	// budget is the process-wide plugin memory budget (plugin_budget.go).
	budget *memoryBudget

	mu        sync.Mutex
	gen       map[string]uint64          // org → generation, bumped by every change to its plugins
	loaded    map[string]*plugins.Plugin // stored version id → loaded plugin
	loadedOrg map[string]string          // stored version id → its organisation
	failed    map[string]string          // stored version id → why it did not load
	// retired are loaded versions their organisation no longer runs
	// (replaced or disabled), with when that was seen; each is closed
	// retireGrace later, once turns that took it before the change ended.
	retired     map[string]time.Time
	retireGrace time.Duration
	now         func() time.Time
	sets        map[setKey]*streamSet
	stats       map[statKey]*callStats

	calls   *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// setKey names a cached plugin set: an organisation and a catalog.
type setKey struct {
	org     string
	catalog [sha256.Size]byte
}

// streamSet is a cached set with the environment it serves. The
// environment (catalog and plugin key-value data) outlives plugin
// changes, so an upgrade keeps what plugins remembered about the stream.
type streamSet struct {
	gen uint64
	env *plugins.LocalEnv
	set *runtime.PluginSet
}

// maxSets bounds the cache of plugin sets (one per distinct catalog).
const maxSets = 1024

// retireGrace is how long a version its organisation stopped running
// stays loaded: a turn that took its plugin set before the change may
// still call it, each call within plugins.MaxTimeout.
const retireGrace = 2 * plugins.MaxTimeout

type statKey struct{ org, plugin string }

// callStats are one plugin's calls since the console started, with the
// latencies of the most recent ones for percentiles.
type callStats struct {
	calls, errors uint64
	recent        [512]time.Duration
	next          int
}

// callSummary is what the page shows of a plugin's calls.
type callSummary struct {
	Calls  uint64  `json:"calls"`
	Errors uint64  `json:"errors"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
}

func newPluginRuntime(cfg Config, st *store.Store, log *slog.Logger) *pluginRuntime {
	r := &pluginRuntime{sandbox: cfg.Sandbox, store: st, log: log, files: packageFiles{dir: packagesDir(cfg, st)},
		budget: newMemoryBudget(cfg.PluginMemory, st),
		gen:    map[string]uint64{}, loaded: map[string]*plugins.Plugin{}, loadedOrg: map[string]string{}, failed: map[string]string{},
		retired: map[string]time.Time{}, retireGrace: retireGrace, now: time.Now,
		sets: map[setKey]*streamSet{}, stats: map[statKey]*callStats{},
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "livehat_plugin_calls_total",
			Help: "Plugin calls by plugin, export and outcome (ok, timeout, rejected, error)."}, []string{"plugin", "export", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "livehat_plugin_call_seconds",
			Help: "Plugin call latency in the sandbox, in seconds.", Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12)},
			[]string{"plugin", "export"}),
	}
	if cfg.Metrics != nil {
		r.calls = registerOrReuse(cfg.Metrics, r.calls, log)
		r.seconds = registerOrReuse(cfg.Metrics, r.seconds, log)
	}
	return r
}

// registerOrReuse registers c, or returns the collector registered under
// the same name before (two servers on one registry share the series).
func registerOrReuse[C prometheus.Collector](reg *prometheus.Registry, c C, log *slog.Logger) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if prev, ok := are.ExistingCollector.(C); ok {
			return prev
		}
	}
	if err != nil {
		log.Warn("plugin metrics not registered", "err", err)
	}
	return c
}

// packagesDir is where uploaded packages live: the data folder, or the
// database's folder when no data folder is configured.
func packagesDir(cfg Config, st *store.Store) string {
	dir := cfg.DataDir
	if dir == "" {
		dir = filepath.Dir(st.Path())
	}
	return filepath.Join(dir, "plugin-packages")
}

// changed invalidates an organisation's cached plugin sets; handlers call
// it after a change to the org's plugins is committed.
func (r *pluginRuntime) changed(orgID string) {
	r.mu.Lock()
	r.gen[orgID]++
	r.mu.Unlock()
}

// set returns the plugin set of an organisation's enabled active versions,
// bound to catalog. A cached set is reused while no plugin of the org has
// changed, so a turn boundary costs a hash of the catalog and a map look-up.
func (r *pluginRuntime) set(ctx context.Context, orgID string, catalog []byte) (*runtime.PluginSet, error) {
	r.closeRetired(ctx)
	key := setKey{org: orgID, catalog: sha256.Sum256(catalog)}
	r.mu.Lock()
	gen := r.gen[orgID]
	cached := r.sets[key]
	r.mu.Unlock()
	if cached != nil && cached.gen == gen {
		return cached.set, nil
	}
	var env *plugins.LocalEnv
	if cached != nil {
		env = cached.env
	} else {
		cat, err := parseCatalog(catalog)
		if err != nil {
			return nil, err
		}
		env = plugins.NewLocalEnv(cat, r.log, nil)
	}
	ps, err := r.active(ctx, orgID)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.sets[key]
	if cur != nil && cur.gen >= gen {
		// Another turn built this generation meanwhile: one set, one
		// environment per stream catalog.
		return cur.set, nil
	}
	if cur != nil {
		env = cur.env // the stream's plugin memory survives the change
	} else if len(r.sets) >= maxSets {
		for k := range r.sets {
			delete(r.sets, k)
			break
		}
	}
	built := &streamSet{gen: gen, env: env, set: runtime.NewPluginSet(env, ps...)}
	r.sets[key] = built
	return built.set, nil
}

// isolatedSet is the organisation's enabled active versions bound to
// catalog in a plugin environment of its own, neither cached nor shared:
// an evaluation item must not see what earlier items or live streams left
// in a plugin's memory (a moderation hook's repeat detector, for one).
func (r *pluginRuntime) isolatedSet(ctx context.Context, orgID string, catalog []byte) (*runtime.PluginSet, error) {
	cat, err := parseCatalog(catalog)
	if err != nil {
		return nil, err
	}
	ps, err := r.active(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return runtime.NewPluginSet(plugins.NewLocalEnv(cat, r.log, nil), ps...), nil
}

// active loads the organisation's enabled active plugin versions; one that
// fails to load is left out and its problem recorded.
func (r *pluginRuntime) active(ctx context.Context, orgID string) ([]*plugins.Plugin, error) {
	active, err := r.store.ActivePlugins(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("console: plugins of org %s: %w", orgID, err)
	}
	ps := make([]*plugins.Plugin, 0, len(active))
	r.retire(orgID, active)
	for _, a := range active {
		p, err := r.load(ctx, orgID, a.VersionID, a.PackageSHA256)
		if err != nil {
			// The session runs without it: its tools answer "not
			// installed" and its hooks apply their failure policy,
			// which is what a fail_closed compliance hook needs.
			r.log.Error("plugin not loaded", "plugin", a.Name, "version", a.Version, "err", err)
			r.mu.Lock()
			r.failed[a.VersionID] = err.Error()
			r.mu.Unlock()
			continue
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// parseCatalog reads the catalog a plugin set serves (empty: none). The
// live hub and trials hand it a stream's catalog with the stream's
// currency stated; a document that states none is in noCurrency.
func parseCatalog(raw []byte) (*catalog.Catalog, error) {
	cat, err := parseStreamCatalog(raw, noCurrency)
	if err != nil {
		return nil, fmt.Errorf("console: stream catalog: %w", err)
	}
	return cat, nil
}

// retire marks the organisation's loaded versions that are not among
// active (what it runs now) as retired, and unmarks those that are again.
func (r *pluginRuntime) retire(orgID string, active []store.RuntimePlugin) {
	running := make(map[string]bool, len(active))
	for _, a := range active {
		running[a.VersionID] = true
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, org := range r.loadedOrg {
		_, marked := r.retired[id]
		switch {
		case org != orgID:
		case running[id]:
			delete(r.retired, id)
		case !marked:
			r.retired[id] = now
		}
	}
}

// closeRetired unloads the versions retired longer than the grace ago,
// so the sandbox holds what the organisations run (and what the plugin
// memory budget counts), not every version that ever ran.
func (r *pluginRuntime) closeRetired(ctx context.Context) {
	now := r.now()
	var done []*plugins.Plugin
	r.mu.Lock()
	for id, since := range r.retired {
		if now.Sub(since) < r.retireGrace {
			continue
		}
		done = append(done, r.loaded[id])
		delete(r.loaded, id)
		delete(r.loadedOrg, id)
		delete(r.retired, id)
	}
	r.mu.Unlock()
	for _, p := range done {
		if err := p.Close(context.WithoutCancel(ctx)); err != nil {
			r.log.Warn("retired plugin not closed cleanly", "plugin", p.Name(), "version", p.Version(), "err", err)
		}
	}
}

// load returns the loaded plugin of a stored version, loading it into the
// sandbox on first use. The archive is read back by its hash; its
// signature was verified against the organisation's keys at upload and is
// not checked again here (the sandbox trusts no keys of its own), since
// the content address already proves these are the verified bytes.
func (r *pluginRuntime) load(ctx context.Context, orgID, versionID, packageSHA string) (*plugins.Plugin, error) {
	if p := r.loadedVersion(versionID); p != nil {
		return p, nil
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if p := r.loadedVersion(versionID); p != nil {
		return p, nil
	}
	data, err := r.files.read(packageSHA)
	if err != nil {
		return nil, err
	}
	pkg, err := plugins.ReadPackage(data)
	if err != nil {
		return nil, err
	}
	pkg.Signature = nil
	p, err := r.sandbox.Load(ctx, pkg)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.loaded[versionID] = p
	r.loadedOrg[versionID] = orgID
	delete(r.failed, versionID)
	r.mu.Unlock()
	return p, nil
}

// problem says why a stored version failed to load for live sessions, or
// "" when it did not fail.
func (r *pluginRuntime) problem(versionID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed[versionID]
}

// loadedVersion is the loaded plugin of a stored version, or nil while it
// is not loaded.
func (r *pluginRuntime) loadedVersion(versionID string) *plugins.Plugin {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loaded[versionID]
}

// check verifies a package the way the sandbox will run it (integrity,
// signature against trusted, ABI, exports, start-up) in a separate host,
// and returns the id of the key that signed it ("" when unsigned).
func (r *pluginRuntime) check(ctx context.Context, pkg *plugins.Package, trusted map[string]ed25519.PublicKey) (string, error) {
	signer, err := pkg.Verify(trusted)
	if err != nil {
		return "", err
	}
	p, err := r.loadAside(ctx, pkg)
	if err != nil {
		return "", err
	}
	return signer, p.Close(ctx)
}

// loadAside loads a package in the checker's host, outside the live
// sandbox; the caller closes the plugin. The signature, verified by the
// caller or at upload, is not checked again.
func (r *pluginRuntime) loadAside(ctx context.Context, pkg *plugins.Package) (*plugins.Plugin, error) {
	r.checkerOnce.Do(func() {
		r.checker, r.checkerErr = plugins.NewHost(context.WithoutCancel(ctx), plugins.NewHostConfig().WithCacheDir(plugins.DefaultCacheDir()))
	})
	if r.checkerErr != nil {
		return nil, r.checkerErr
	}
	unsigned := *pkg
	unsigned.Signature = nil
	return r.checker.Load(ctx, &unsigned)
}

// trial returns the plugin a trial of a stored version runs and a release
// to call after it. A running version (live: the active version of an
// enabled plugin) is the one live sessions run, whose memory the budget
// counts already; any other version is loaded aside for the one call,
// holding one instance's memory from the budget while it runs, so trying
// a version never changes what the sandbox serves.
func (r *pluginRuntime) trial(ctx context.Context, orgID string, pv *store.PluginVersion, live bool, what string, mem reservation) (*plugins.Plugin, func(), error) {
	r.closeRetired(ctx)
	if live {
		p, err := r.load(ctx, orgID, pv.ID, pv.PackageSHA256)
		return p, func() {}, err
	}
	data, err := r.files.read(pv.PackageSHA256)
	if err != nil {
		return nil, nil, err
	}
	pkg, err := plugins.ReadPackage(data)
	if err != nil {
		return nil, nil, err
	}
	unhold, err := r.budget.hold(ctx, orgID, "trying "+what, mem.oneInstance())
	if err != nil {
		return nil, nil, err
	}
	p, err := r.loadAside(ctx, pkg)
	if err != nil {
		unhold()
		return nil, nil, err
	}
	return p, func() {
		_ = p.Close(context.WithoutCancel(ctx))
		unhold()
	}, nil
}

// outcome classifies a call's error for the metrics.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, plugins.ErrTimeout):
		return "timeout"
	case errors.Is(err, plugins.ErrBadInput), errors.Is(err, plugins.ErrBadOutput), errors.Is(err, plugins.ErrUnknown):
		return "rejected"
	}
	return "error"
}

// record counts one call of plugin's export for an organisation.
func (r *pluginRuntime) record(orgID, plugin, export string, took time.Duration, err error) {
	out := outcome(err)
	r.calls.WithLabelValues(plugin, export, out).Inc()
	r.seconds.WithLabelValues(plugin, export).Observe(took.Seconds())
	k := statKey{orgID, plugin}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats[k]
	if st == nil {
		st = &callStats{}
		r.stats[k] = st
	}
	st.calls++
	if err != nil {
		st.errors++
	}
	st.recent[st.next%len(st.recent)] = took
	st.next++
}

// summary is one plugin's call statistics for an organisation.
func (r *pluginRuntime) summary(orgID, plugin string) callSummary {
	r.mu.Lock()
	st := r.stats[statKey{orgID, plugin}]
	if st == nil {
		r.mu.Unlock()
		return callSummary{}
	}
	n := min(st.next, len(st.recent))
	lat := slices.Clone(st.recent[:n])
	sum := callSummary{Calls: st.calls, Errors: st.errors}
	r.mu.Unlock()
	slices.Sort(lat)
	sum.P50MS, sum.P95MS = quantileMS(lat, 0.50), quantileMS(lat, 0.95)
	return sum
}

// quantileMS is the nearest-rank quantile q of sorted durations, in ms.
func quantileMS(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

// meteredPlugins counts and times every call of a session's plugin set.
type meteredPlugins struct {
	next runtime.Plugins
	r    *pluginRuntime
	org  string
}

// Tool implements runtime.Plugins.
func (m meteredPlugins) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	t0 := time.Now()
	out, err := m.next.Tool(ctx, plugin, export, args)
	m.r.record(m.org, plugin, export, time.Since(t0), err)
	return out, err
}

// Hook implements runtime.Plugins.
func (m meteredPlugins) Hook(ctx context.Context, plugin, export string, input json.RawMessage) (harness.HookDecision, error) {
	t0 := time.Now()
	d, err := m.next.Hook(ctx, plugin, export, input)
	m.r.record(m.org, plugin, export, time.Since(t0), err)
	return d, err
}

// Skill implements runtime.Plugins.
func (m meteredPlugins) Skill(ctx context.Context, plugin, export string, input json.RawMessage) (string, error) {
	t0 := time.Now()
	text, err := m.next.Skill(ctx, plugin, export, input)
	m.r.record(m.org, plugin, export, time.Since(t0), err)
	return text, err
}
