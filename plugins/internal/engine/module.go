// Package engine runs Extism-ABI WebAssembly modules on wazero with the
// LiveHAT sandbox: a runtime per plugin version (its own memory limit),
// a shared compilation cache, a bounded pool of pre-initialised instances
// with cached export handles, per-call deadlines that close the module,
// and discard-and-replace after any trap.
package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// Env is the runtime's side of the host functions for one call: the
// stream the call serves. A nil Env is allowed; host functions then fail.
// Package plugins exports it as HostEnv. Methods are called from the
// goroutine running the plugin and must not block for long: the call's
// deadline keeps running.
type Env interface {
	// CatalogLookup answers a catalog query (plugins.CatalogQuery) with a
	// plugins.CatalogResult, both JSON. Backs livehat_catalog_lookup.
	CatalogLookup(ctx context.Context, query []byte) ([]byte, error)
	// KVGet, KVSet, KVDelete and KVUsage are a key-value store scoped by
	// plugin name (scope); the host enforces the manifest's quota with
	// KVUsage, the total bytes of keys and values in the scope. They back
	// Extism's var_get and var_set.
	KVGet(ctx context.Context, scope, key string) ([]byte, bool, error)
	KVSet(ctx context.Context, scope, key string, value []byte) error
	KVDelete(ctx context.Context, scope, key string) error
	KVUsage(ctx context.Context, scope string) (int, error)
	// Log receives the plugin's log lines (scope is the plugin name).
	Log(ctx context.Context, level slog.Level, scope, msg string)
	// Now is the stream's wall clock, which plugins with the clock
	// permission see.
	Now() time.Time
}

// Grants are the permissions a plugin holds.
type Grants struct {
	Catalog, KV, Log, Clock bool
}

// Config describes how to run one module. Every field is required unless
// said otherwise; the plugins package fills it from the manifest.
type Config struct {
	// Label names the plugin in errors: "name@version".
	Label string
	// Scope is the key-value scope of the plugin.
	Scope            string
	MemoryLimitPages uint32
	Timeout          time.Duration
	MaxInputBytes    int
	MaxOutputBytes   int
	// HostMemoryBytes bounds the Extism kernel memory of one call.
	HostMemoryBytes int
	// Instances bounds the instances alive at once; Prewarm are made at
	// load so that no call pays for instantiation.
	Instances, Prewarm int
	KVQuota            int
	Grants             Grants
	// Config is served to the guest by config_get.
	Config map[string]string
	// Cache is the shared compilation cache; nil compiles without one.
	Cache wazero.CompilationCache
	// RecycleBytes retires an instance whose linear memory grew past it
	// (standard-Go guests grow and never shrink); 0 never recycles.
	RecycleBytes uint32
	// InitTimeout bounds a guest's start function (__wasm_call_ctors or
	// _initialize), which runs before any per-call deadline applies; 0
	// means 10 s.
	InitTimeout time.Duration
	// TrustedNoCloseOnDone turns off close-on-context-done. Only for
	// benchmarks that measure its cost: without it an infinite loop
	// freezes the host process at its next garbage collection.
	TrustedNoCloseOnDone bool
}

// Stats counts what happened to a module's instances.
type Stats struct {
	Calls, Failures, Instantiations, Discards, Recycles uint64
	// Idle is the number of instances waiting in the pool.
	Idle int
	// PeakMemoryBytes is the largest linear memory an instance had after
	// a successful call (standard-Go guests grow and never shrink).
	PeakMemoryBytes uint64
}

// Module is a compiled plugin with its instance pool. It is safe for
// concurrent use; every call runs on an instance of its own.
type Module struct {
	cfg      Config
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	exports  []string
	// start is the start function every instance runs once, or "".
	start string

	idle  chan *instance
	slots chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup

	calls, failures, insts, discards, recycles atomic.Uint64
	peakMemory                                 atomic.Uint64
}

// defaultInitTimeout bounds a guest's start function by default; a
// standard-Go guest initialises in 8-22 ms.
const defaultInitTimeout = 10 * time.Second

// Compile compiles wasm, checks its imports and exports, and prewarms
// its pool.
func Compile(ctx context.Context, wasm []byte, cfg Config) (*Module, error) {
	if cfg.Instances < 1 {
		return nil, fmt.Errorf("engine: %s: instances must be at least 1", cfg.Label)
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(cfg.MemoryLimitPages).
		WithCloseOnContextDone(!cfg.TrustedNoCloseOnDone).
		WithCoreFeatures(api.CoreFeaturesV2)
	if cfg.Cache != nil {
		rc = rc.WithCompilationCache(cfg.Cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	m := &Module{cfg: cfg, rt: rt,
		idle:  make(chan *instance, cfg.Instances),
		slots: make(chan struct{}, cfg.Instances),
		done:  make(chan struct{}),
	}
	fail := func(err error) (*Module, error) {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("engine: %s: %w", cfg.Label, err)
	}
	if err := instantiateWASI(ctx, rt); err != nil {
		return fail(err)
	}
	if err := instantiateHostModules(ctx, rt); err != nil {
		return fail(err)
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return fail(fmt.Errorf("compile: %w", err))
	}
	m.compiled = compiled
	if err := checkImports(compiled); err != nil {
		return fail(err)
	}
	if m.start, err = startFunction(compiled); err != nil {
		return fail(err)
	}
	for name, def := range compiled.ExportedFunctions() {
		if isCallable(def) {
			m.exports = append(m.exports, name)
		}
	}
	for i := 0; i < min(cfg.Prewarm, cfg.Instances); i++ {
		m.slots <- struct{}{}
		inst, err := m.instantiate(ctx)
		if err != nil {
			m.Close(ctx)
			return nil, fmt.Errorf("engine: %s: %w", cfg.Label, err)
		}
		m.idle <- inst
	}
	return m, nil
}

// isCallable reports whether an export has the Extism shape () -> i32.
func isCallable(def api.FunctionDefinition) bool {
	r := def.ResultTypes()
	return len(def.ParamTypes()) == 0 && len(r) == 1 && r[0] == api.ValueTypeI32
}

// Start functions, in the order of preference Extism's runtime uses:
// __wasm_call_ctors runs C and C++ static constructors (a module built
// with --target=wasm32-unknown-unknown exports it and nothing calls it
// otherwise); _initialize is a WASI reactor's, which in wasi-libc calls
// __wasm_call_ctors itself, so only one of the two may run.
var startFunctions = []string{"__wasm_call_ctors", "_initialize"}

// startFunction returns the start function of a module, or "" if it
// exports none; one with another type than () -> () is refused.
func startFunction(c wazero.CompiledModule) (string, error) {
	fns := c.ExportedFunctions()
	for _, name := range startFunctions {
		def, ok := fns[name]
		if !ok {
			continue
		}
		if len(def.ParamTypes()) > 0 || len(def.ResultTypes()) > 0 {
			return "", fmt.Errorf("start function %s has type %s, want () -> ()", name, signature(def))
		}
		return name, nil
	}
	return "", nil
}

// checkImports refuses modules that import anything this host does not
// provide, with an error that names the import (wazero's own says less).
func checkImports(c wazero.CompiledModule) error {
	if len(c.ImportedMemories()) > 0 {
		return errors.New("module imports a memory; plugins must define their own")
	}
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case wasi_snapshot_preview1.ModuleName:
		case envModule, userModule:
			if !providedImport(mod, name) {
				return fmt.Errorf("module imports %s.%s, which this host does not provide", mod, name)
			}
		default:
			return fmt.Errorf("module imports from %q, which this host does not provide (want %s, %s or %s)",
				mod, envModule, userModule, wasi_snapshot_preview1.ModuleName)
		}
	}
	return nil
}

// Exports returns the names of the exports with the Extism shape.
func (m *Module) Exports() []string { return append([]string(nil), m.exports...) }

// HasExport reports whether name is an export with the Extism shape.
func (m *Module) HasExport(name string) bool {
	for _, e := range m.exports {
		if e == name {
			return true
		}
	}
	return false
}

// Stats returns the module's counters.
func (m *Module) Stats() Stats {
	return Stats{Calls: m.calls.Load(), Failures: m.failures.Load(), Instantiations: m.insts.Load(),
		Discards: m.discards.Load(), Recycles: m.recycles.Load(), Idle: len(m.idle), PeakMemoryBytes: m.peakMemory.Load()}
}

// Call runs export with input on a pooled instance and returns a copy of
// its output. env serves the host functions for this call.
func (m *Module) Call(ctx context.Context, env Env, export string, input []byte) ([]byte, error) {
	m.calls.Add(1)
	if len(input) > m.cfg.MaxInputBytes {
		m.failures.Add(1)
		return nil, m.errorf(export, ErrInputTooLarge, "%d bytes, limit %d", len(input), m.cfg.MaxInputBytes)
	}
	inst, err := m.acquire(ctx)
	if err != nil {
		m.failures.Add(1)
		return nil, &CallError{Plugin: m.cfg.Label, Export: export, Kind: kindOfCtx(err), Detail: err.Error()}
	}
	fn := inst.fns[export]
	if fn == nil {
		m.release(inst)
		m.failures.Add(1)
		return nil, m.errorf(export, ErrNoExport, "the module has no export %q of type () -> i32", export)
	}
	out, cerr := inst.call(ctx, env, fn, export, input)
	// A guest's proc_exit(0) ends its call normally but closes the module.
	closed := inst.mod.IsClosed()
	if cerr != nil {
		m.failures.Add(1)
		if cerr.Discarded || closed {
			cerr.Discarded = true
			m.discard(inst)
		} else {
			m.release(inst)
		}
		return nil, cerr
	}
	if closed {
		m.discard(inst)
		return out, nil
	}
	var size uint32
	if mem := inst.mod.Memory(); mem != nil {
		size = mem.Size()
	}
	for peak := m.peakMemory.Load(); uint64(size) > peak && !m.peakMemory.CompareAndSwap(peak, uint64(size)); {
		peak = m.peakMemory.Load()
	}
	if m.cfg.RecycleBytes > 0 && size > m.cfg.RecycleBytes {
		m.recycles.Add(1)
		m.discard(inst)
	} else {
		m.release(inst)
	}
	return out, nil
}

// kindOfCtx classifies a failure to get an instance: the module closed,
// the caller's context ended, or a fresh instance failed to start.
func kindOfCtx(err error) error {
	switch {
	case errors.Is(err, ErrClosed):
		return ErrClosed
	case errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	case errors.Is(err, context.Canceled):
		return ErrCanceled
	}
	return ErrTrap
}

func (m *Module) errorf(export string, kind error, format string, args ...any) *CallError {
	return &CallError{Plugin: m.cfg.Label, Export: export, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// acquire takes an idle instance, or makes one while the pool has room,
// or waits for one to come back.
func (m *Module) acquire(ctx context.Context) (*instance, error) {
	select {
	case <-m.done:
		return nil, ErrClosed
	default:
	}
	select {
	case inst := <-m.idle:
		return inst, nil
	default:
	}
	select {
	case inst := <-m.idle:
		return inst, nil
	case m.slots <- struct{}{}:
		inst, err := m.instantiate(ctx)
		if err != nil {
			<-m.slots
			return nil, err
		}
		return inst, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free instance: %w", ctx.Err())
	case <-m.done:
		return nil, ErrClosed
	}
}

func (m *Module) release(inst *instance) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		inst.close()
		<-m.slots
		return
	}
	m.idle <- inst
}

// discard closes inst and makes its replacement in the background, so
// the failed call returns at once and the pool keeps its size.
func (m *Module) discard(inst *instance) {
	m.discards.Add(1)
	inst.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		<-m.slots
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fresh, err := m.instantiate(context.Background())
		if err != nil {
			<-m.slots
			return
		}
		m.release(fresh)
	}()
}

// Close stops the pool and releases the runtime. Calls in flight fail.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	m.mu.Unlock()
	m.wg.Wait()
	for {
		select {
		case inst := <-m.idle:
			inst.close()
			<-m.slots
			continue
		default:
		}
		break
	}
	return m.rt.Close(ctx)
}

// instance is one instantiated module with its kernel memory. It serves
// one call at a time.
type instance struct {
	m      *Module
	mod    api.Module
	fns    map[string]api.Function
	kern   kernel
	stack  [1]uint64
	stderr tailWriter

	env   Env
	fault *CallError
	logs  int
	// hostFn is the host function the guest called last, named in its
	// refusal.
	hostFn string
}

func (m *Module) instantiate(ctx context.Context) (*instance, error) {
	inst := &instance{m: m, kern: newKernel(m.cfg.HostMemoryBytes)}
	inst.stderr.limit = 4096
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(m.startFunctions()...).
		WithStderr(&inst.stderr).
		WithRandSource(rand.Reader)
	if m.cfg.Grants.Clock {
		mc = mc.WithWalltime(inst.walltime, sys.ClockResolution(time.Microsecond)).WithSysNanotime()
	}
	limit := m.cfg.InitTimeout
	if limit <= 0 {
		limit = defaultInitTimeout
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	ictx = &callCtx{Context: ictx, inst: inst}
	mod, err := m.rt.InstantiateModule(ictx, m.compiled, mc)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w%s", err, inst.stderr.suffix())
	}
	inst.mod = mod
	inst.fns = make(map[string]api.Function, len(m.exports))
	for _, name := range m.exports {
		inst.fns[name] = mod.ExportedFunction(name)
	}
	m.insts.Add(1)
	return inst, nil
}

func (m *Module) startFunctions() []string {
	if m.start == "" {
		return nil
	}
	return []string{m.start}
}

func (inst *instance) walltime() (int64, int32) {
	now := time.Now()
	if inst.env != nil {
		now = inst.env.Now()
	}
	return now.Unix(), int32(now.Nanosecond())
}

func (inst *instance) close() {
	if inst.mod != nil {
		_ = inst.mod.Close(context.Background())
	}
}

// call runs one export. A returned error with Discarded set means the
// instance must not be used again.
func (inst *instance) call(ctx context.Context, env Env, fn api.Function, export string, input []byte) ([]byte, *CallError) {
	m := inst.m
	if err := inst.kern.reset(input); err != nil {
		return nil, m.errorf(export, ErrInputTooLarge, "%v", err)
	}
	inst.env, inst.fault, inst.logs = env, nil, 0
	inst.stderr.reset()
	dctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	// A fresh context per call: wazero's close-on-done watcher may still
	// read it after the call returned.
	cctx := &callCtx{Context: dctx, inst: inst}
	inst.stack[0] = 0
	err := fn.CallWithStack(cctx, inst.stack[:])
	cancel()
	inst.env = nil
	if err != nil && (inst.fault != nil || !exitedWith(err, 0)) {
		return nil, inst.classify(ctx, export, err)
	}
	k := &inst.kern
	if status := int32(inst.stack[0]); status != 0 || k.errSet {
		msg := k.errMsg
		if msg == "" {
			msg = fmt.Sprintf("export returned status %d without an error message", status)
		}
		return nil, m.errorf(export, ErrGuest, "%s", msg)
	}
	if !k.outputSet {
		return []byte{}, nil
	}
	return bytes.Clone(k.output), nil
}

// classify turns a failed call into a CallError; the instance is always
// discarded: after a trap wazero may keep a broken module open (an
// out-of-memory guest answers later calls wrongly), and after a deadline
// the module is closed.
func (inst *instance) classify(parent context.Context, export string, err error) *CallError {
	m := inst.m
	ce := &CallError{Plugin: m.cfg.Label, Export: export, Discarded: true}
	var exit *sys.ExitError
	switch {
	case inst.fault != nil:
		ce.Kind, ce.Detail = inst.fault.Kind, inst.fault.Detail
	case errors.As(err, &exit) && (exit.ExitCode() == sys.ExitCodeDeadlineExceeded || exit.ExitCode() == sys.ExitCodeContextCanceled):
		switch perr := parent.Err(); {
		case perr == nil:
			ce.Kind = ErrTimeout
			ce.Detail = fmt.Sprintf("the call ran past its %v deadline and was stopped", m.cfg.Timeout)
		case errors.Is(perr, context.DeadlineExceeded):
			ce.Kind, ce.Detail = ErrTimeout, "the caller's deadline passed and the call was stopped"
		default:
			ce.Kind, ce.Detail = ErrCanceled, "the caller canceled the call"
		}
	case strings.Contains(inst.stderr.String(), "out of memory"):
		ce.Kind = ErrOutOfMemory
		ce.Detail = fmt.Sprintf("linear memory is capped at %d pages (%d MiB)%s",
			m.cfg.MemoryLimitPages, m.cfg.MemoryLimitPages/16, inst.stderr.suffix())
	case errors.As(err, &exit):
		ce.Kind, ce.ExitCode = ErrTrap, exit.ExitCode()
		ce.Detail = fmt.Sprintf("the guest exited with code %d%s", exit.ExitCode(), inst.stderr.suffix())
	default:
		ce.Kind = ErrTrap
		ce.Detail = firstLine(err.Error()) + inst.stderr.suffix()
	}
	return ce
}

// exitedWith reports whether err is the guest's WASI proc_exit(code).
// Extism's runtime ends a call that exits with status 0 as if the export
// returned 0: a success unless the guest set an error (its plugin.rs, on
// I32Exit), so a guest may end a call that way.
func exitedWith(err error, code uint32) bool {
	var exit *sys.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// callCtx carries the instance to the host functions; host functions
// find it with a type assertion instead of a context.Value walk.
type callCtx struct {
	context.Context
	inst *instance
}

type instanceKey struct{}

// Value returns the instance for instanceKey and defers everything else.
func (c *callCtx) Value(key any) any {
	if key == (instanceKey{}) {
		return c.inst
	}
	return c.Context.Value(key)
}

// tailWriter keeps the first limit bytes written to it: a Go guest's
// panic message comes first, its goroutine dump after.
type tailWriter struct {
	buf   []byte
	limit int
}

// Write keeps what fits and reports everything written, so the guest
// never sees a short write.
func (w *tailWriter) Write(p []byte) (int, error) {
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *tailWriter) reset() { w.buf = w.buf[:0] }

// String returns what was kept.
func (w *tailWriter) String() string { return string(w.buf) }

// suffix returns what the guest printed, trimmed to its first lines, as
// a suffix for an error message.
func (w *tailWriter) suffix() string {
	s := strings.TrimSpace(string(w.buf))
	if s == "" {
		return ""
	}
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return "; guest stderr: " + strings.Join(lines, " | ")
}

// ModuleInfo describes a module without running it.
type ModuleInfo struct {
	// Imports are "module.name" of every imported function.
	Imports []string
	// Exports are the names of exported functions, with their signatures.
	Exports []string
	// MemoryMinPages and MemoryMaxPages are the declared memory; max 0
	// means none declared.
	MemoryMinPages, MemoryMaxPages uint32
	// Problem is why the host would refuse the module's imports, or "".
	Problem string
}

// Inspect decodes wasm with the interpreter (no native compilation, so
// it is fast) and lists its imports, exports and memory.
func Inspect(ctx context.Context, wasm []byte) (ModuleInfo, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(ctx)
	c, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return ModuleInfo{}, fmt.Errorf("decode: %w", err)
	}
	var info ModuleInfo
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		info.Imports = append(info.Imports, mod+"."+name)
	}
	for name, def := range c.ExportedFunctions() {
		info.Exports = append(info.Exports, name+signature(def))
	}
	sort.Strings(info.Exports)
	for _, m := range c.ExportedMemories() {
		info.MemoryMinPages = m.Min()
		if max, ok := m.Max(); ok {
			info.MemoryMaxPages = max
		}
	}
	if err := checkImports(c); err != nil {
		info.Problem = err.Error()
	}
	return info, nil
}

func signature(def api.FunctionDefinition) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return "(" + names(def.ParamTypes()) + ") -> (" + names(def.ResultTypes()) + ")"
}

// Probe is what starting one fresh instance costs.
type Probe struct {
	// Start is the time to instantiate and run the start function.
	Start time.Duration
	// MemoryBytes is the linear memory right after the start function.
	MemoryBytes uint32
}

// Probe starts one extra instance outside the pool, measures it and
// closes it. It is for diagnostics and benchmarks; calls never wait on it.
func (m *Module) Probe(ctx context.Context) (Probe, error) {
	start := time.Now()
	inst, err := m.instantiate(ctx)
	if err != nil {
		return Probe{}, fmt.Errorf("engine: %s: %w", m.cfg.Label, err)
	}
	p := Probe{Start: time.Since(start)}
	if mem := inst.mod.Memory(); mem != nil {
		p.MemoryBytes = mem.Size()
	}
	inst.close()
	return p, nil
}
