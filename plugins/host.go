// Package plugins runs the Skills, Hooks and tools of LiveHAT as sandboxed
// WebAssembly plugins.
//
// A plugin is a module speaking the Extism guest ABI (so any Extism PDK
// can build one) plus a Manifest: what it exports, which permissions it
// asks for and the limits it runs under. The module is pinned by sha256
// and optionally signed with ed25519.
//
// The Host compiles modules on wazero once (with an on-disk compilation
// cache), keeps a pool of pre-initialised instances per plugin version so
// that concurrent sessions never share one, gives every call a deadline
// that stops even an infinite loop, and throws an instance away after any
// trap. Plugins see no filesystem, network, environment or real clock
// unless a permission unlocks the matching host function. The Registry
// adds versions on top: install, enable, upgrade and roll back while
// sessions keep the version their turn started with.
//
// See sdk/ABI.md for the contract between the host and plugins.
package plugins

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins/internal/engine"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
)

// Errors of a plugin call; a failed call's error wraps exactly one of
// them (test with errors.Is) inside a *CallError.
var (
	ErrTimeout        = engine.ErrTimeout
	ErrCanceled       = engine.ErrCanceled
	ErrTrap           = engine.ErrTrap
	ErrOutOfMemory    = engine.ErrOutOfMemory
	ErrPermission     = engine.ErrPermission
	ErrOutputTooLarge = engine.ErrOutputTooLarge
	ErrInputTooLarge  = engine.ErrInputTooLarge
	ErrBadPointer     = engine.ErrBadPointer
	ErrHostMemory     = engine.ErrHostMemory
	ErrQuota          = engine.ErrQuota
	ErrGuest          = engine.ErrGuest
	ErrNoExport       = engine.ErrNoExport
	ErrClosed         = engine.ErrClosed
	ErrHostEnv        = engine.ErrHostEnv
	// ErrBadInput: tool arguments that fail the tool's JSON Schema.
	ErrBadInput = errors.New("input rejected")
	// ErrBadOutput: output that breaks the kind's contract (a hook
	// decision that does not validate, a tool result that is not JSON).
	ErrBadOutput = errors.New("output rejected")
	// ErrUnknown: a kind and name the manifest does not declare.
	ErrUnknown = errors.New("not declared by the manifest")
)

// Errors of loading a plugin.
var (
	// ErrIntegrity: the module does not match the manifest's sha256.
	ErrIntegrity = errors.New("integrity check failed")
	// ErrSignature: a bad, untrusted or missing (when required) signature.
	ErrSignature = errors.New("signature check failed")
	// ErrABI: the module was built for another ABI version, or lacks an export.
	ErrABI = errors.New("abi mismatch")
)

// CallError is the error of one failed call: the plugin, the export, the
// kind of failure (one of the Err* values) and what happened.
type CallError = engine.CallError

// Stats counts the calls and instances of one loaded plugin version.
type Stats = engine.Stats

// HostConfig configures a Host. It is immutable: every With method
// returns a changed copy.
type HostConfig struct {
	cacheDir        string
	trusted         map[string]ed25519.PublicKey
	requireSig      bool
	prewarm         int
	recycleBytes    uint32
	hostMemoryBytes int
	initTimeout     time.Duration
	noCloseOnDone   bool
}

// NewHostConfig returns the defaults: an in-memory compilation cache,
// unsigned plugins accepted, one prewarmed instance per plugin, instances
// recycled past 64 MiB of linear memory, 8 MiB of Extism kernel memory
// per call.
func NewHostConfig() HostConfig {
	return HostConfig{prewarm: 1, recycleBytes: 64 << 20, hostMemoryBytes: 8 << 20}
}

// WithCacheDir keeps compiled code in dir, so that a restart compiles a
// standard-Go plugin in ~0.1 s instead of ~2.5 s.
func (c HostConfig) WithCacheDir(dir string) HostConfig {
	c.cacheDir = dir
	return c
}

// WithTrustedKey trusts signatures made with key under the name id.
func (c HostConfig) WithTrustedKey(id string, key ed25519.PublicKey) HostConfig {
	t := maps.Clone(c.trusted)
	if t == nil {
		t = map[string]ed25519.PublicKey{}
	}
	t[id] = key
	c.trusted = t
	return c
}

// WithRequireSignature refuses unsigned plugins when on (production).
func (c HostConfig) WithRequireSignature(on bool) HostConfig {
	c.requireSig = on
	return c
}

// WithPrewarm sets how many instances each plugin makes at load (capped
// by its limits.instances); more instances are made on demand.
func (c HostConfig) WithPrewarm(n int) HostConfig {
	c.prewarm = max(n, 0)
	return c
}

// WithRecycleBytes retires an instance whose linear memory grew past n
// bytes (standard-Go guests never give memory back); 0 never recycles.
func (c HostConfig) WithRecycleBytes(n uint32) HostConfig {
	c.recycleBytes = n
	return c
}

// WithHostMemoryBytes bounds the Extism kernel memory one call may
// allocate (input, output and host-function results).
func (c HostConfig) WithHostMemoryBytes(n int) HostConfig {
	c.hostMemoryBytes = max(n, 1<<16)
	return c
}

// WithInitTimeout bounds a plugin's start function (__wasm_call_ctors or
// _initialize) when an instance is made; default 10 s. A plugin whose
// start function runs past it fails to load.
func (c HostConfig) WithInitTimeout(d time.Duration) HostConfig {
	c.initTimeout = d
	return c
}

// Host loads plugins. It is safe for concurrent use.
type Host struct {
	cfg   HostConfig
	cache wazero.CompilationCache
}

// NewHost returns a Host with cfg.
func NewHost(ctx context.Context, cfg HostConfig) (*Host, error) {
	h := &Host{cfg: cfg}
	if cfg.cacheDir != "" {
		if err := os.MkdirAll(cfg.cacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("plugins: cache dir: %w", err)
		}
		c, err := wazero.NewCompilationCacheWithDir(cfg.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("plugins: cache dir %s: %w", cfg.cacheDir, err)
		}
		h.cache = c
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	return h, nil
}

// Close releases the compilation cache. Plugins must be closed first.
func (h *Host) Close(ctx context.Context) error {
	return h.cache.Close(ctx)
}

// DefaultCacheDir is where the CLI and the console keep compiled code.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "livehat", "wazero")
}

var abiExportRE = regexp.MustCompile(`^livehat_abi_v([0-9]+)$`)

// Load verifies a package (integrity, signature, ABI) and compiles it
// into a ready Plugin with a warm instance pool.
func (h *Host) Load(ctx context.Context, pkg *Package) (*Plugin, error) {
	return h.LoadWith(ctx, pkg, LoadOptions{})
}

// LoadOptions adjust how one package runs without changing it: the
// manifest, and the signature over it, stay as the author wrote them.
type LoadOptions struct {
	// MinTimeout raises the per-call deadline to at least this.
	// Evaluations and tests set it so that a busy machine does not turn
	// a slow call into the hook's failure policy.
	MinTimeout time.Duration
}

// LoadWith is Load with options.
func (h *Host) LoadWith(ctx context.Context, pkg *Package, opts LoadOptions) (*Plugin, error) {
	signer, err := pkg.Verify(h.cfg.trusted)
	if err != nil {
		return nil, fmt.Errorf("plugins: load: %w", err)
	}
	m := pkg.Manifest
	label := m.Name + "@" + m.Version
	if signer == "" && h.cfg.requireSig {
		return nil, fmt.Errorf("plugins: load %s: %w: the host requires signed plugins", label, ErrSignature)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, t := range m.Tools {
		s, err := compileSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("plugins: load %s: tool %s: %w", label, t.Name, err)
		}
		schemas[t.Name] = s
	}
	l := m.Limits.WithDefaults()
	mod, err := engine.Compile(ctx, pkg.Wasm, engine.Config{
		Label:                label,
		Scope:                m.Name,
		MemoryLimitPages:     l.MemoryPages,
		Timeout:              max(l.Timeout(), opts.MinTimeout),
		MaxInputBytes:        l.MaxInputBytes,
		MaxOutputBytes:       l.MaxOutputBytes,
		HostMemoryBytes:      max(h.cfg.hostMemoryBytes, l.MaxInputBytes+l.MaxOutputBytes+(1<<16)),
		Instances:            l.Instances,
		Prewarm:              h.cfg.prewarm,
		KVQuota:              l.KVBytes,
		Grants:               engine.Grants{Catalog: m.Has(PermCatalog), KV: m.Has(PermKV), Log: m.Has(PermLog), Clock: m.Has(PermClock)},
		Config:               maps.Clone(m.Config),
		Cache:                h.cache,
		RecycleBytes:         h.cfg.recycleBytes,
		InitTimeout:          h.cfg.initTimeout,
		TrustedNoCloseOnDone: h.cfg.noCloseOnDone,
	})
	if err != nil {
		return nil, fmt.Errorf("plugins: load %s: %w", label, err)
	}
	p := &Plugin{m: m, mod: mod, schemas: schemas, sha256: m.Wasm.SHA256, signer: signer, label: label, timeout: max(l.Timeout(), opts.MinTimeout)}
	if err := p.checkExports(); err != nil {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("plugins: load %s: %w", label, err)
	}
	return p, nil
}

func (p *Plugin) checkExports() error {
	for _, e := range p.mod.Exports() {
		if sm := abiExportRE.FindStringSubmatch(e); sm != nil {
			if v, _ := strconv.Atoi(sm[1]); v != ABIVersion {
				return fmt.Errorf("%w: the module was built for ABI v%s (it exports %s); this host speaks v%d", ErrABI, sm[1], e, ABIVersion)
			}
		}
	}
	var missing []string
	check := func(kind Kind, name, export string) {
		if !p.mod.HasExport(export) {
			missing = append(missing, fmt.Sprintf("%s %s (export %q)", kind, name, export))
		}
	}
	for _, t := range p.m.Tools {
		check(KindTool, t.Name, t.ExportName())
	}
	for _, h := range p.m.Hooks {
		check(KindHook, h.Name, h.ExportName())
	}
	for _, s := range p.m.Skills {
		check(KindSkill, s.ID, s.ExportName())
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the module lacks exports of type () -> i32 for %s", ErrABI, strings.Join(missing, ", "))
	}
	return nil
}

// Plugin is one loaded plugin version. It is safe for concurrent use.
type Plugin struct {
	m       *Manifest
	mod     *engine.Module
	schemas map[string]*jsonschema.Schema
	sha256  string
	signer  string
	label   string
	timeout time.Duration
}

// Manifest returns the plugin's manifest; callers must not modify it.
func (p *Plugin) Manifest() *Manifest { return p.m }

// Timeout returns the deadline each call runs under: the manifest's
// limit, or LoadOptions.MinTimeout where that is longer.
func (p *Plugin) Timeout() time.Duration { return p.timeout }

// Name returns the plugin's name; Version its version.
func (p *Plugin) Name() string { return p.m.Name }

// Version returns the plugin's semantic version.
func (p *Plugin) Version() string { return p.m.Version }

// SHA256 returns the hex sha256 of the module.
func (p *Plugin) SHA256() string { return p.sha256 }

// Signer returns the id of the key that signed the plugin, or "".
func (p *Plugin) Signer() string { return p.signer }

// Exports returns the module's exports of the Extism shape () -> i32.
func (p *Plugin) Exports() []string { return p.mod.Exports() }

// Stats returns the call and instance counters of this version.
func (p *Plugin) Stats() Stats { return p.mod.Stats() }

// InstanceProbe is what starting one instance of a plugin costs.
type InstanceProbe = engine.Probe

// ProbeInstance starts one extra instance outside the pool, measures
// its start time and memory, and closes it.
func (p *Plugin) ProbeInstance(ctx context.Context) (InstanceProbe, error) { return p.mod.Probe(ctx) }

// Close stops the instance pool and frees the compiled module.
func (p *Plugin) Close(ctx context.Context) error { return p.mod.Close(ctx) }

// Call runs the export that implements kind:name with raw input bytes
// and returns its raw output. env serves host functions; it may be nil
// for plugins that use none.
func (p *Plugin) Call(ctx context.Context, env HostEnv, kind Kind, name string, input []byte) ([]byte, error) {
	export, ok := p.m.Export(kind, name)
	if !ok {
		return nil, &CallError{Plugin: p.label, Export: name, Kind: ErrUnknown,
			Detail: fmt.Sprintf("the manifest declares no %s named %q", kind, name)}
	}
	return p.mod.Call(ctx, env, export, input)
}

// Tool runs a tool: args are checked against the tool's JSON Schema,
// and the result must be JSON.
func (p *Plugin) Tool(ctx context.Context, env HostEnv, name string, args []byte) (json.RawMessage, error) {
	s, ok := p.schemas[name]
	if !ok {
		return nil, &CallError{Plugin: p.label, Export: name, Kind: ErrUnknown,
			Detail: fmt.Sprintf("the manifest declares no tool named %q", name)}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, &CallError{Plugin: p.label, Export: name, Kind: ErrBadInput, Detail: "arguments are not JSON: " + err.Error()}
	}
	if err := s.Validate(inst); err != nil {
		return nil, &CallError{Plugin: p.label, Export: name, Kind: ErrBadInput, Detail: oneLine(err.Error())}
	}
	out, err := p.Call(ctx, env, KindTool, name, args)
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, &CallError{Plugin: p.label, Export: name, Kind: ErrBadOutput, Detail: "the tool's result is not JSON"}
	}
	return out, nil
}

// Hook runs a hook with a HookInput (JSON) and returns its decision,
// validated against the harness's decision contract.
func (p *Plugin) Hook(ctx context.Context, env HostEnv, name string, input []byte) (harness.HookDecision, error) {
	out, err := p.Call(ctx, env, KindHook, name, input)
	if err != nil {
		return harness.HookDecision{}, err
	}
	d, err := DecodeDecision(out)
	if err != nil {
		return harness.HookDecision{}, &CallError{Plugin: p.label, Export: name, Kind: ErrBadOutput, Detail: err.Error()}
	}
	return d, nil
}

// Skill runs a skill with a SkillInput (JSON) and returns its text. When
// the call fails, the manifest's fallback text (if any) is returned with
// the error, so a caller can choose to serve it.
func (p *Plugin) Skill(ctx context.Context, env HostEnv, id string, input []byte) (string, error) {
	fallback := ""
	for _, s := range p.m.Skills {
		if s.ID == id {
			fallback = s.Text
		}
	}
	out, err := p.Call(ctx, env, KindSkill, id, input)
	if err != nil {
		return fallback, err
	}
	text, err := DecodeSkillOutput(out)
	if err != nil {
		return fallback, &CallError{Plugin: p.label, Export: id, Kind: ErrBadOutput, Detail: err.Error()}
	}
	return text, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
