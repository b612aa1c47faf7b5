package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

// edgeExports are the exports of testdata/edge.wat.
var edgeExports = []string{"allow", "echo", "fail_msg", "fail_status", "no_output", "oob_output",
	"oob_output_len", "oob_output_wrap", "oob_load", "null_load", "bad_error_ptr", "input_past_end",
	"huge_alloc", "big_output", "unreachable", "recurse", "spin", "grow", "catalog", "network", "config",
	"exit3", "exit0", "exit0_error", "files"}

func edgeManifest(perms ...Permission) *Manifest {
	m := &Manifest{ABI: ABIVersion, Name: "edge", Version: "1.0.0", Wasm: WasmRef{File: "edge.wasm"},
		Limits: Limits{MemoryPages: 32, TimeoutMS: 50 * slowdown, MaxOutputBytes: 1 << 20, Instances: 2},
		Config: map[string]string{"greeting": "hello"}}
	for _, e := range edgeExports {
		m.Hooks = append(m.Hooks, HookSpec{Name: e, Event: harness.EventAfterResponse})
	}
	for _, p := range perms {
		m.Permissions = append(m.Permissions, PermissionRequest{Name: p, Reason: "test"})
	}
	return m
}

func TestEdgeImports(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := load(t, h, edgeManifest(), watWasm(t, "edge"))
	ctx := context.Background()
	cases := []struct {
		export string
		input  string
		want   string // output, when the call succeeds
		kind   error  // error kind, when it fails
		detail string // part of the error message
	}{
		{export: "allow", want: `{"action":"allow"}      `},
		{export: "echo", input: `{"x":1}`, want: `{"x":1}`},
		{export: "echo", input: "", want: ""},
		{export: "no_output", want: ""},
		{export: "config", input: "greeting", want: "hello"},
		{export: "config", input: "absent", want: ""},
		{export: "fail_msg", kind: ErrGuest, detail: "boom"},
		{export: "fail_status", kind: ErrGuest, detail: "status 7"},
		{export: "oob_output", kind: ErrBadPointer, detail: "output_set: [1099511627776, +10) is outside"},
		{export: "oob_output_len", kind: ErrOutputTooLarge, detail: "output_set: an output of 281474976710655 bytes (at offset 8) is over max_output_bytes, 1048576"},
		{export: "oob_output_wrap", kind: ErrBadPointer, detail: "output_set: [18446744073709551608, +16) is outside"},
		{export: "oob_load", kind: ErrBadPointer, detail: "load_u64: [8589934592, +8) is outside"},
		{export: "null_load", kind: ErrBadPointer, detail: "load_u64: [0, +8) is outside"},
		{export: "bad_error_ptr", kind: ErrBadPointer, detail: "error_set: no block starts at offset 12345"},
		{export: "input_past_end", input: "1234567", kind: ErrBadPointer, detail: "input_load_u64: index 7 is past the 7-byte input"},
		{export: "huge_alloc", kind: ErrHostMemory, detail: "alloc: allocating 1099511627776 bytes"},
		{export: "big_output", kind: ErrOutputTooLarge, detail: "output_set: an output of 2000000 bytes"},
		{export: "unreachable", kind: ErrTrap, detail: "unreachable"},
		{export: "recurse", kind: ErrTrap, detail: "stack overflow"},
		{export: "spin", kind: ErrTimeout, detail: "deadline"},
		{export: "grow", kind: ErrTrap},
		{export: "catalog", input: `{"kind":"product"}`, kind: ErrPermission, detail: `livehat_catalog_lookup: needs permission "catalog"`},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			start := time.Now()
			out, err := p.Call(ctx, nil, KindHook, c.export, []byte(c.input))
			if c.kind == nil {
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				if string(out) != c.want {
					t.Fatalf("output %q, want %q", out, c.want)
				}
				return
			}
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.detail) || !strings.Contains(err.Error(), "edge@1.0.0") {
				t.Fatalf("error %q does not name the plugin and say %q", err, c.detail)
			}
			if time.Since(start) > 10*slowdown*time.Second {
				t.Fatalf("a failing call took %v", time.Since(start))
			}
			// The host keeps serving: the same plugin answers the next call.
			d, err := p.Hook(ctx, nil, "allow", nil)
			if err != nil || d.Action != harness.ActionAllow {
				t.Fatalf("after %s: allow = %+v, %v", c.export, d, err)
			}
		})
	}
	st := p.Stats()
	if st.Discards == 0 || st.Instantiations <= 1 {
		t.Fatalf("stats %+v: traps should discard and replace instances", st)
	}
}
