package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Import modules of the Extism ABI: the kernel functions every PDK uses,
// and the namespace PDKs declare user host functions in.
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
)

// Per-call bounds on what host functions accept.
const (
	maxKeyBytes      = 256
	maxLogBytes      = 4096
	maxLogsPerCall   = 100
	maxQueryBytes    = 64 << 10
	maxErrorBytes    = 16 << 10
	maxConfigKeySize = 256
)

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      func(inst *instance, ctx context.Context, stack []uint64)
}

func envFuncs() []hostFunc {
	return []hostFunc{
		{"alloc", []api.ValueType{i64}, []api.ValueType{i64}, hostAlloc},
		{"free", []api.ValueType{i64}, nil, func(inst *instance, _ context.Context, s []uint64) { inst.kern.free(s[0]) }},
		{"length", []api.ValueType{i64}, []api.ValueType{i64}, func(inst *instance, _ context.Context, s []uint64) { s[0] = inst.kern.length(s[0]) }},
		{"length_unsafe", []api.ValueType{i64}, []api.ValueType{i64}, func(inst *instance, _ context.Context, s []uint64) { s[0] = inst.kern.length(s[0]) }},
		{"load_u8", []api.ValueType{i64}, []api.ValueType{i32}, hostLoadU8},
		{"load_u64", []api.ValueType{i64}, []api.ValueType{i64}, hostLoadU64},
		{"store_u8", []api.ValueType{i64, i32}, nil, hostStoreU8},
		{"store_u64", []api.ValueType{i64, i64}, nil, hostStoreU64},
		{"input_length", nil, []api.ValueType{i64}, func(inst *instance, _ context.Context, s []uint64) { s[0] = inst.kern.input.n }},
		{"input_offset", nil, []api.ValueType{i64}, func(inst *instance, _ context.Context, s []uint64) { s[0] = inst.kern.input.off }},
		{"input_load_u8", []api.ValueType{i64}, []api.ValueType{i32}, hostInputLoadU8},
		{"input_load_u64", []api.ValueType{i64}, []api.ValueType{i64}, hostInputLoadU64},
		{"output_set", []api.ValueType{i64, i64}, nil, hostOutputSet},
		{"error_set", []api.ValueType{i64}, nil, hostErrorSet},
		{"error_get", nil, []api.ValueType{i64}, func(inst *instance, _ context.Context, s []uint64) { s[0] = inst.kern.errOffset }},
		{"config_get", []api.ValueType{i64}, []api.ValueType{i64}, hostConfigGet},
		{"var_get", []api.ValueType{i64}, []api.ValueType{i64}, hostVarGet},
		{"var_set", []api.ValueType{i64, i64}, nil, hostVarSet},
		{"http_request", []api.ValueType{i64, i64}, []api.ValueType{i64}, hostHTTPRequest},
		{"http_status_code", nil, []api.ValueType{i32}, hostNoResponse},
		{"http_headers", nil, []api.ValueType{i64}, hostNoResponse},
		{"get_log_level", nil, []api.ValueType{i32}, hostLogLevel},
		{"log_trace", []api.ValueType{i64}, nil, hostLog(slog.LevelDebug - 4)},
		{"log_debug", []api.ValueType{i64}, nil, hostLog(slog.LevelDebug)},
		{"log_info", []api.ValueType{i64}, nil, hostLog(slog.LevelInfo)},
		{"log_warn", []api.ValueType{i64}, nil, hostLog(slog.LevelWarn)},
		{"log_error", []api.ValueType{i64}, nil, hostLog(slog.LevelError)},
	}
}

func userFuncs() []hostFunc {
	return []hostFunc{
		{"livehat_catalog_lookup", []api.ValueType{i64}, []api.ValueType{i64}, hostCatalogLookup},
	}
}

func providedImport(module, name string) bool {
	fs := envFuncs()
	if module == userModule {
		fs = userFuncs()
	}
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

func instantiateHostModules(ctx context.Context, rt wazero.Runtime) error {
	for mod, fs := range map[string][]hostFunc{envModule: envFuncs(), userModule: userFuncs()} {
		b := rt.NewHostModuleBuilder(mod)
		for _, f := range fs {
			b.NewFunctionBuilder().
				WithGoModuleFunction(wrap(f), f.params, f.results).
				WithName(f.name).
				Export(f.name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("host module %s: %w", mod, err)
		}
	}
	return nil
}

// wrap finds the calling instance and turns a host function into a
// wazero function. A host function fails by panicking with a *CallError
// after recording it as the call's fault: wazero turns the panic into a
// trap of the guest, and the fault keeps the precise reason, led by the
// host function's name.
func wrap(f hostFunc) api.GoModuleFunc {
	name := f.name
	return func(ctx context.Context, _ api.Module, stack []uint64) {
		inst := instanceOf(ctx)
		if inst == nil {
			panic(fmt.Errorf("%s called outside a plugin call (from a start function?)", name))
		}
		inst.hostFn = name
		f.fn(inst, ctx, stack)
	}
}

func instanceOf(ctx context.Context) *instance {
	if c, ok := ctx.(*callCtx); ok {
		return c.inst
	}
	inst, _ := ctx.Value(instanceKey{}).(*instance)
	return inst
}

// fail records the fault of the current call, naming the host function
// that refused, and traps the guest.
func (inst *instance) fail(kind error, format string, args ...any) {
	ce := &CallError{Plugin: inst.m.cfg.Label, Kind: kind, Detail: inst.hostFn + ": " + fmt.Sprintf(format, args...), Discarded: true}
	if inst.fault == nil {
		inst.fault = ce
	}
	panic(ce)
}

func (inst *instance) must(b []byte, err error) []byte {
	if err != nil {
		inst.fail(ErrBadPointer, "%v", err)
	}
	return b
}

func (inst *instance) storeOrFail(b []byte) uint64 {
	off, err := inst.kern.store(b)
	if err != nil {
		inst.fail(ErrHostMemory, "%v", err)
	}
	return off
}

func hostAlloc(inst *instance, _ context.Context, s []uint64) {
	off, err := inst.kern.alloc(s[0])
	if err != nil {
		inst.fail(ErrHostMemory, "%v", err)
	}
	s[0] = off
}

func hostLoadU8(inst *instance, _ context.Context, s []uint64) {
	s[0] = uint64(inst.must(inst.kern.bytes(s[0], 1))[0])
}

func hostLoadU64(inst *instance, _ context.Context, s []uint64) {
	b := inst.must(inst.kern.bytes(s[0], 8))
	s[0] = binary.LittleEndian.Uint64(b)
}

func hostStoreU8(inst *instance, _ context.Context, s []uint64) {
	inst.must(inst.kern.bytes(s[0], 1))[0] = byte(s[1])
}

func hostStoreU64(inst *instance, _ context.Context, s []uint64) {
	binary.LittleEndian.PutUint64(inst.must(inst.kern.bytes(s[0], 8)), s[1])
}

func hostInputLoadU8(inst *instance, _ context.Context, s []uint64) {
	in := inst.kern.input
	if s[0] >= in.n {
		inst.fail(ErrBadPointer, "index %d is past the %d-byte input", s[0], in.n)
	}
	s[0] = uint64(inst.kern.buf[in.off+s[0]])
}

func hostInputLoadU64(inst *instance, _ context.Context, s []uint64) {
	in := inst.kern.input
	if s[0] > in.n || in.n-s[0] < 8 {
		inst.fail(ErrBadPointer, "index %d is past the %d-byte input", s[0], in.n)
	}
	s[0] = binary.LittleEndian.Uint64(inst.kern.buf[in.off+s[0]:])
}

func hostOutputSet(inst *instance, _ context.Context, s []uint64) {
	off, n := s[0], s[1]
	if off == 0 && n == 0 { // a null, empty output: what a PDK sends for "nothing"
		inst.kern.output, inst.kern.outputSet = inst.kern.output[:0], false
		return
	}
	if n > uint64(inst.m.cfg.MaxOutputBytes) {
		inst.fail(ErrOutputTooLarge, "an output of %d bytes (at offset %d) is over max_output_bytes, %d", n, off, inst.m.cfg.MaxOutputBytes)
	}
	b := inst.must(inst.kern.bytes(off, n))
	inst.kern.output, inst.kern.outputSet = append(inst.kern.output[:0], b...), true
}

func hostErrorSet(inst *instance, _ context.Context, s []uint64) {
	b := inst.must(inst.kern.blockBytes(s[0]))
	if len(b) > maxErrorBytes {
		b = b[:maxErrorBytes]
	}
	inst.kern.errMsg, inst.kern.errSet, inst.kern.errOffset = string(b), true, s[0]
}

func hostConfigGet(inst *instance, _ context.Context, s []uint64) {
	key := inst.must(inst.kern.blockBytes(s[0]))
	if len(key) > maxConfigKeySize {
		s[0] = 0
		return
	}
	v, ok := inst.m.cfg.Config[string(key)]
	if !ok {
		s[0] = 0
		return
	}
	s[0] = inst.storeOrFail([]byte(v))
}

func (inst *instance) needEnv() Env {
	if inst.env == nil {
		inst.fail(ErrHostEnv, "the host gave this call no environment")
	}
	return inst.env
}

func (inst *instance) kvKey(off uint64) string {
	if !inst.m.cfg.Grants.KV {
		inst.fail(ErrPermission, `needs permission "kv", which the manifest does not request`)
	}
	key := inst.must(inst.kern.blockBytes(off))
	if len(key) == 0 || len(key) > maxKeyBytes {
		inst.fail(ErrBadPointer, "key of %d bytes (want 1-%d)", len(key), maxKeyBytes)
	}
	return string(key)
}

func hostVarGet(inst *instance, ctx context.Context, s []uint64) {
	key := inst.kvKey(s[0])
	v, ok, err := inst.needEnv().KVGet(ctx, inst.m.cfg.Scope, key)
	if err != nil {
		inst.fail(ErrHostEnv, "key %q: %v", key, err)
	}
	if !ok {
		s[0] = 0
		return
	}
	s[0] = inst.storeOrFail(v)
}

func hostVarSet(inst *instance, ctx context.Context, s []uint64) {
	key := inst.kvKey(s[0])
	env := inst.needEnv()
	scope := inst.m.cfg.Scope
	if s[1] == 0 {
		if err := env.KVDelete(ctx, scope, key); err != nil {
			inst.fail(ErrHostEnv, "key %q (delete): %v", key, err)
		}
		return
	}
	val := inst.must(inst.kern.blockBytes(s[1]))
	used, err := env.KVUsage(ctx, scope)
	if err != nil {
		inst.fail(ErrHostEnv, "key %q: usage: %v", key, err)
	}
	old, found, err := env.KVGet(ctx, scope, key)
	if err != nil {
		inst.fail(ErrHostEnv, "key %q: %v", key, err)
	}
	if found {
		used -= len(key) + len(old)
	}
	if after := used + len(key) + len(val); after > inst.m.cfg.KVQuota {
		inst.fail(ErrQuota, "key %q: %d bytes would pass the quota of %d bytes", key, after, inst.m.cfg.KVQuota)
	}
	if err := env.KVSet(ctx, scope, key, append([]byte(nil), val...)); err != nil {
		inst.fail(ErrHostEnv, "key %q: %v", key, err)
	}
}

// hostHTTPRequest answers every request with no response, offset 0 (then
// status 0 and no headers), as Extism's JavaScript host does when HTTP is
// not enabled: the guest's PDK returns an error it can handle, where a
// trap would fail the call and throw the instance away. Plugins have no
// network; the refusal is logged for the plugin's author.
func hostHTTPRequest(inst *instance, ctx context.Context, s []uint64) {
	if inst.env != nil && inst.logs < maxLogsPerCall {
		inst.logs++
		inst.env.Log(ctx, slog.LevelWarn, inst.m.cfg.Scope, "http_request refused: plugins have no network access")
	}
	s[0] = 0
}

// hostNoResponse is http_status_code and http_headers after a refused
// request: 0, no status and no headers.
func hostNoResponse(_ *instance, _ context.Context, s []uint64) { s[0] = 0 }

func hostLogLevel(inst *instance, _ context.Context, s []uint64) {
	if !inst.m.cfg.Grants.Log {
		s[0] = math.MaxInt32 // above every level: PDKs skip their log calls
		return
	}
	s[0] = 0
}

func hostLog(level slog.Level) func(*instance, context.Context, []uint64) {
	return func(inst *instance, ctx context.Context, s []uint64) {
		msg := inst.must(inst.kern.blockBytes(s[0]))
		if !inst.m.cfg.Grants.Log || inst.env == nil || inst.logs >= maxLogsPerCall {
			return
		}
		inst.logs++
		if len(msg) > maxLogBytes {
			msg = msg[:maxLogBytes]
		}
		inst.env.Log(ctx, level, inst.m.cfg.Scope, string(msg))
	}
}

func hostCatalogLookup(inst *instance, ctx context.Context, s []uint64) {
	if !inst.m.cfg.Grants.Catalog {
		inst.fail(ErrPermission, `needs permission "catalog", which the manifest does not request`)
	}
	q := inst.must(inst.kern.blockBytes(s[0]))
	if len(q) > maxQueryBytes {
		inst.fail(ErrBadPointer, "query of %d bytes, limit %d", len(q), maxQueryBytes)
	}
	res, err := inst.needEnv().CatalogLookup(ctx, q)
	if err != nil {
		inst.fail(ErrHostEnv, "%v", err)
	}
	s[0] = inst.storeOrFail(res)
}
