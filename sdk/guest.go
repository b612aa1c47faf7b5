//go:build wasip1

package sdk

import (
	"encoding/json"
	"fmt"
	"time"

	pdk "github.com/extism/go-pdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

//go:wasmimport extism:host/user livehat_catalog_lookup
func catalogLookup(query uint64) uint64

// abiV1 tells the host which ABI version the plugin was built for; the
// host refuses a module that exports another version.
//
//go:wasmexport livehat_abi_v1
func abiV1() int32 { return 0 }

// Tool runs fn as a tool export: it decodes the arguments into a new
// Req, calls fn and writes its Resp as the result. Call it from a
// //go:wasmexport function and return its status. Req types that
// implement JSONDecoder, and Resp types that implement JSONAppender,
// skip reflection; others use encoding/json.
func Tool[Req, Resp any](fn func(req *Req) (Resp, error)) int32 {
	req := new(Req)
	in := pdk.Input()
	if d, ok := any(req).(JSONDecoder); ok {
		r := jsonx.NewReader(in)
		err := d.DecodeJSON(r)
		if err == nil {
			err = r.End()
		}
		if err != nil {
			return fail(fmt.Errorf("arguments: %w", err))
		}
	} else if err := json.Unmarshal(in, req); err != nil {
		return fail(fmt.Errorf("arguments: %w", err))
	}
	resp, err := fn(req)
	if err != nil {
		return fail(err)
	}
	var out []byte
	if a, ok := any(resp).(JSONAppender); ok {
		out = a.AppendJSON(nil)
	} else if out, err = json.Marshal(resp); err != nil {
		return fail(fmt.Errorf("result: %w", err))
	}
	pdk.Output(out)
	return 0
}

// Hook runs fn as a hook export: it decodes the HookInput, calls fn and
// writes the Decision, which must validate.
func Hook(fn func(in *HookInput) Decision) int32 {
	in, err := DecodeHookInput(pdk.Input())
	if err != nil {
		return fail(err)
	}
	d := fn(in)
	if err := d.Validate(); err != nil {
		return fail(err)
	}
	pdk.Output(d.AppendJSON(nil))
	return 0
}

// Skill runs fn as a skill export: it decodes the SkillInput, calls fn
// and writes {"text": ...}.
func Skill(fn func(in *SkillInput) (string, error)) int32 {
	in, err := DecodeSkillInput(pdk.Input())
	if err != nil {
		return fail(err)
	}
	text, err := fn(in)
	if err != nil {
		return fail(err)
	}
	if text == "" {
		return fail(fmt.Errorf("skill %s: empty text", in.Skill))
	}
	pdk.Output(AppendSkillOutput(nil, text))
	return 0
}

func fail(err error) int32 {
	pdk.SetError(err)
	return 1
}

// Lookup asks the stream's catalog (permission "catalog").
func Lookup(q CatalogQuery) (*CatalogResult, error) {
	mem := pdk.AllocateBytes(q.AppendJSON(nil))
	res := pdk.FindMemory(catalogLookup(mem.Offset()))
	return DecodeCatalogResult(res.ReadBytes())
}

// Get returns the value of key in the plugin's key-value scope
// (permission "kv"), and whether it exists.
func Get(key string) ([]byte, bool) {
	v := pdk.GetVar(key)
	return v, v != nil
}

// Set stores value under key (permission "kv"); the host enforces the
// manifest's quota by failing the call.
func Set(key string, value []byte) { pdk.SetVar(key, value) }

// Delete removes key (permission "kv").
func Delete(key string) { pdk.RemoveVar(key) }

// LogLevel is the level of a log line.
type LogLevel = pdk.LogLevel

// Log levels.
const (
	LogDebug = pdk.LogDebug
	LogInfo  = pdk.LogInfo
	LogWarn  = pdk.LogWarn
	LogError = pdk.LogError
)

// Log writes a line to the host's log (permission "log"; without it the
// line is dropped).
func Log(level LogLevel, msg string) { pdk.Log(level, msg) }

// Config returns a value of the manifest's config section.
func Config(key string) (string, bool) { return pdk.GetConfig(key) }

// Now returns the stream's time with permission "clock"; without it
// the guest's clock is fixed and deterministic.
func Now() time.Time { return time.Now() }
