package plugins

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

// hookManifest declares each export as an after_response hook of a
// plugin named name.
func hookManifest(name string, exports ...string) *Manifest {
	m := &Manifest{ABI: ABIVersion, Name: name, Version: "1.0.0", Wasm: WasmRef{File: name + ".wasm"},
		Limits: Limits{TimeoutMS: 1000 * slowdown, Instances: 1}}
	for _, e := range exports {
		m.Hooks = append(m.Hooks, HookSpec{Name: e, Event: harness.EventAfterResponse})
	}
	return m
}

// u64s decodes an output of little-endian u64 values.
func u64s(t *testing.T, out []byte, n int) []uint64 {
	t.Helper()
	if len(out) != 8*n {
		t.Fatalf("output of %d bytes, want %d u64 values", len(out), n)
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(out[8*i:])
	}
	return v
}

// TestStaticConstructors: a module that exports __wasm_call_ctors gets
// its constructors run once per instance before any call, as Extism's
// runtime does (C++ static constructors depend on it); when it also
// exports _initialize, only the constructors run, as in Extism.
func TestStaticConstructors(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	ctx := context.Background()
	state := func(p *Plugin) []uint64 {
		t.Helper()
		out, err := p.Call(ctx, nil, KindHook, "state", nil)
		if err != nil {
			t.Fatal(err)
		}
		return u64s(t, out, 2)
	}
	t.Run("constructors only", func(t *testing.T) {
		p := load(t, h, hookManifest("ctors", "state", "trap"), watWasm(t, "ctors"))
		for call := range 3 {
			if got := state(p); got[0] != 1 || got[1] != 42 {
				t.Fatalf("call %d: constructor runs %d, built value %d; want 1, 42", call, got[0], got[1])
			}
		}
		// A trap discards the instance; its replacement is constructed too.
		if _, err := p.Call(ctx, nil, KindHook, "trap", nil); err == nil {
			t.Fatal("trap succeeded")
		}
		if got := state(p); got[0] != 1 || got[1] != 42 {
			t.Fatalf("fresh instance: constructor runs %d, built value %d; want 1, 42", got[0], got[1])
		}
		if st := p.Stats(); st.Instantiations < 2 {
			t.Fatalf("stats %+v: the trap should have made a fresh instance", st)
		}
	})
	t.Run("constructors and _initialize", func(t *testing.T) {
		p := load(t, h, hookManifest("ctors-reactor", "state"), watWasm(t, "ctorsreactor"))
		if got := state(p); got[0] != 1 || got[1] != 0 {
			t.Fatalf("constructor runs %d, _initialize runs %d; want 1, 0", got[0], got[1])
		}
	})
}

// TestGuestExit: a guest that calls WASI proc_exit ends its call. A
// non-zero status fails the call with that status (in the error and in
// CallError.ExitCode); status 0 is a success unless the guest set an
// error, as in Extism's runtime. Either way the instance is replaced.
func TestGuestExit(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := load(t, h, edgeManifest(), watWasm(t, "edge"))
	ctx := context.Background()
	cases := []struct {
		export, input string
		want          string // output, when the call succeeds
		kind          error
		code          uint32
		says          string
	}{
		{export: "exit3", kind: ErrTrap, code: 3, says: "the guest exited with code 3"},
		{export: "exit0", input: `{"action":"allow"}`, want: `{"action":"allow"}`},
		{export: "exit0_error", input: "refused", kind: ErrGuest, says: "refused"},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			before := p.Stats().Discards
			out, err := p.Call(ctx, nil, KindHook, c.export, []byte(c.input))
			if c.kind == nil {
				if err != nil || string(out) != c.want {
					t.Fatalf("got %q, %v; want %q", out, err, c.want)
				}
			} else {
				var ce *CallError
				if !errors.As(err, &ce) || !errors.Is(err, c.kind) || ce.ExitCode != c.code || !strings.Contains(err.Error(), c.says) {
					t.Fatalf("error %v (%#v); want kind %v, exit code %d, saying %q", err, ce, c.kind, c.code, c.says)
				}
			}
			if after := p.Stats().Discards; after != before+1 {
				t.Fatalf("discards %d -> %d: the exited instance must be replaced", before, after)
			}
			if d, err := p.Hook(ctx, nil, "allow", nil); err != nil || d.Action != harness.ActionAllow {
				t.Fatalf("after %s: %+v, %v", c.export, d, err)
			}
		})
	}
}

// TestNoFiles: with no directory open, every WASI path function fails on
// its descriptor, whatever the path: EBADF, or ENOTDIR on a standard
// stream, as Extism's runtime answers (and sdk/ABI.md says).
func TestNoFiles(t *testing.T) {
	const ebadf, enotdir = 8, 54
	h := newTestHost(t, NewHostConfig())
	p := load(t, h, edgeManifest(), watWasm(t, "edge"))
	out, err := p.Call(context.Background(), nil, KindHook, "files", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := u64s(t, out, 4)
	for i, c := range []struct {
		what string
		want uint64
	}{
		{"path_open(3, /etc/passwd)", ebadf},
		{"path_open(3, etc/passwd)", ebadf},
		{"path_open(0, /etc/passwd)", enotdir},
		{"path_create_directory(3, /etc/passwd)", ebadf},
	} {
		if got[i] != c.want {
			t.Errorf("%s = errno %d, want %d", c.what, got[i], c.want)
		}
	}
}

// TestNoNetwork: Extism's http_request gets no response (offset 0, status
// 0, no headers), as Extism's JavaScript host answers when HTTP is not
// enabled, so the guest's PDK returns an error the guest can handle; the
// call goes on and the instance is kept. The refusal is logged.
func TestNoNetwork(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := load(t, h, edgeManifest(), watWasm(t, "edge"))
	var log bytes.Buffer
	before := p.Stats().Discards
	out, err := p.Call(context.Background(), demoEnv(t, &log), KindHook, "network", []byte(`{"url":"https://example.com/"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := u64s(t, out, 3); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("response offset %d, status %d, headers %d; want 0, 0, 0", got[0], got[1], got[2])
	}
	if after := p.Stats().Discards; after != before {
		t.Fatalf("discards %d -> %d: a refused request must not cost the instance", before, after)
	}
	if !strings.Contains(log.String(), "http_request refused: plugins have no network access") || !strings.Contains(log.String(), "edge") {
		t.Fatalf("log %q does not report the refusal for the plugin", log.String())
	}
}
