package plugins

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

func hostileManifest() *Manifest {
	m := &Manifest{ABI: ABIVersion, Name: "hostile", Version: "6.6.6", Wasm: WasmRef{File: "hostile.wasm"},
		Permissions: []PermissionRequest{{Name: PermKV, Reason: "to flood it"}},
		Limits:      Limits{MemoryPages: 256, TimeoutMS: 1500 * slowdown, MaxOutputBytes: 1 << 20, Instances: 2, KVBytes: 4096}}
	for _, e := range []string{"ok", "spin", "grow", "recurse", "huge_output", "panic", "exit", "read_file",
		"read_env", "catalog", "kv_flood"} {
		m.Hooks = append(m.Hooks, HookSpec{Name: e, Event: harness.EventViewerMessage})
	}
	return m
}

// TestHostile runs each attack of testdata/hostile and checks that it
// fails its own call with a clear error while the host, the attacker's
// next call and another plugin keep working.
func TestHostile(t *testing.T) {
	t.Setenv("LIVEHAT_TEST_SECRET", "hunter2")
	h := newTestHost(t, NewHostConfig())
	bad := load(t, h, hostileManifest(), guestWasm(t, "hostile"))
	good := load(t, h, edgeManifest(), watWasm(t, "edge"))
	env := demoEnv(t, nil)
	ctx := context.Background()
	cases := []struct {
		export string
		kinds  []error // any of them
		says   string
	}{
		{"spin", []error{ErrTimeout}, "s deadline"},
		{"grow", []error{ErrOutOfMemory}, "256 pages"},
		{"recurse", []error{ErrOutOfMemory}, "fatal error: out of memory"}, // the goroutine stack outgrows the page limit,
		{"huge_output", []error{ErrOutputTooLarge}, "4194304 bytes"},
		{"panic", []error{ErrTrap}, "panicked on purpose"},
		{"exit", []error{ErrTrap}, "exited with code 3"},
		{"catalog", []error{ErrPermission}, `needs permission "catalog"`},
		{"kv_flood", []error{ErrQuota}, "quota of 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			start := time.Now()
			_, err := bad.Call(ctx, env, KindHook, c.export, []byte(`{"event":"viewer_message"}`))
			took := time.Since(start)
			matched := false
			for _, k := range c.kinds {
				matched = matched || errors.Is(err, k)
			}
			if !matched || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "hostile@6.6.6") {
				t.Fatalf("error %v: want one of %v saying %q", err, c.kinds, c.says)
			}
			var ce *CallError
			if !errors.As(err, &ce) || ce.Export != c.export {
				t.Fatalf("error %#v is not a CallError for %s", err, c.export)
			}
			if took > 10*slowdown*time.Second {
				t.Fatalf("the attack held the call for %v", took)
			}
			// The process is not wedged: a collection finishes (an infinite
			// loop without close-on-done would block it forever).
			runtime.GC()
			if out, err := bad.Call(ctx, env, KindHook, "ok", nil); err != nil || string(out) != `{"action":"allow"}` {
				t.Fatalf("the attacker's next call: %s, %v", out, err)
			}
			if d, err := good.Hook(ctx, nil, "allow", nil); err != nil || d.Action != harness.ActionAllow {
				t.Fatalf("another plugin: %+v, %v", d, err)
			}
		})
	}
	t.Run("read_file", func(t *testing.T) {
		out, err := bad.Call(ctx, env, KindHook, "read_file", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 0 {
			t.Fatalf("the guest reached the filesystem: %q", out)
		}
	})
	t.Run("read_env", func(t *testing.T) {
		out, err := bad.Call(ctx, env, KindHook, "read_env", nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "hunter2") || strings.Contains(string(out), "PATH=") {
			t.Fatalf("the guest read the host's environment: %q", out)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := bad.Call(cctx, env, KindHook, "spin", nil)
		if !errors.Is(err, ErrCanceled) {
			t.Fatalf("canceled spin: %v", err)
		}
	})
	st := bad.Stats()
	if st.Discards < uint64(len(cases)) {
		t.Fatalf("stats %+v: every trap must discard its instance", st)
	}
}

// TestPoolUnderAttack hammers a plugin from many goroutines while others
// make it trap: good calls never fail and never share an instance.
func TestPoolUnderAttack(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	m := edgeManifest()
	m.Limits.Instances = 3
	m.Limits.TimeoutMS = 100 * slowdown // long enough for echo calls on a loaded machine
	p := load(t, h, m, watWasm(t, "edge"))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				export, input := "echo", []byte{byte('a' + g), byte(i)}
				if g == 0 && i%4 == 0 {
					export = "spin"
				} else if g == 1 && i%4 == 0 {
					export = "unreachable"
				}
				out, err := p.Call(ctx, nil, KindHook, export, input)
				switch {
				case export != "echo":
					if err == nil {
						errs <- errors.New(export + " succeeded")
					}
				case err != nil:
					errs <- err
				case string(out) != string(input):
					errs <- errors.New("echo returned another call's input")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLoadRejects(t *testing.T) {
	h := newTestHost(t, NewHostConfig().WithInitTimeout(300*time.Millisecond))
	edge := watWasm(t, "edge")
	ctx := context.Background()

	pkg := &Package{Manifest: edgeManifest(), Wasm: edge}
	pkg.Manifest.Wasm.SHA256 = SHA256Hex([]byte("another module"))
	if _, err := h.Load(ctx, pkg); !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("hash mismatch: %v", err)
	}
	pkg = &Package{Manifest: edgeManifest(), Wasm: edge}
	if _, err := h.Load(ctx, pkg); !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "does not pin") {
		t.Errorf("unpinned: %v", err)
	}
	m := edgeManifest()
	m.ABI = 2
	if _, err := loadErr(h, m, edge); err == nil || !strings.Contains(err.Error(), "abi 2 is not supported") {
		t.Errorf("manifest abi 2: %v", err)
	}
	one := func(export string) *Manifest {
		return &Manifest{ABI: ABIVersion, Name: "xx", Version: "1.0.0", Wasm: WasmRef{File: "x.wasm"},
			Hooks: []HookSpec{{Name: export, Event: harness.EventAfterResponse}}}
	}
	for _, c := range []struct {
		name, wat, export, says string
		kind                    error
	}{
		{"module abi v2", "abi2", "allow", "built for ABI v2", ErrABI},
		{"missing export", "edge", "absent", `hook absent (export "absent")`, ErrABI},
		{"unknown import module", "badimport", "allow", `imports from "env"`, nil},
		{"unknown user function", "unknownuser", "allow", "extism:host/user.launch_missiles", nil},
		{"start function loops", "initloop", "allow", "deadline", nil},
		{"start function takes a parameter", "badstart", "allow", "start function _initialize has type (i32) -> (), want () -> ()", nil},
	} {
		_, err := loadErr(h, one(c.export), watWasm(t, c.wat))
		if err == nil || !strings.Contains(err.Error(), c.says) || (c.kind != nil && !errors.Is(err, c.kind)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.says)
		}
	}
	if _, err := loadErr(h, one("allow"), []byte("\x00asm garbage")); err == nil || !strings.Contains(err.Error(), "compile") {
		t.Errorf("garbage module: %v", err)
	}
	m = hostileManifest()
	m.Limits.MemoryPages = 8
	if _, err := loadErr(h, m, guestWasm(t, "hostile")); err == nil || !strings.Contains(err.Error(), "over limit") {
		t.Errorf("memory limit below the module's minimum: %v", err)
	}
}

func TestSignatures(t *testing.T) {
	pubA, privA, _ := ed25519.GenerateKey(rand.Reader)
	pubB, _, _ := ed25519.GenerateKey(rand.Reader)
	edge := watWasm(t, "edge")
	ctx := context.Background()
	signed := &Package{Manifest: edgeManifest(), Wasm: edge}
	if err := signed.Sign("team-a", privA); err != nil {
		t.Fatal(err)
	}
	archive, err := signed.Archive()
	if err != nil {
		t.Fatal(err)
	}
	read := func() *Package {
		p, err := ReadPackage(archive)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	h := newTestHost(t, NewHostConfig().WithTrustedKey("team-a", pubA).WithRequireSignature(true))
	p, err := h.Load(ctx, read())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if p.Signer() != "team-a" || p.SHA256() != SHA256Hex(edge) {
		t.Fatalf("signer %q sha %s", p.Signer(), p.SHA256())
	}

	tampered := read()
	tampered.Manifest.Permissions = append(tampered.Manifest.Permissions, PermissionRequest{Name: PermCatalog, Reason: "sneaky"})
	if _, err := h.Load(ctx, tampered); !errors.Is(err, ErrSignature) {
		t.Errorf("tampered manifest: %v", err)
	}
	swapped := read()
	swapped.Wasm = watWasm(t, "abi2")
	if _, err := h.Load(ctx, swapped); !errors.Is(err, ErrIntegrity) {
		t.Errorf("swapped module: %v", err)
	}
	unsigned := read()
	unsigned.Signature = nil
	if _, err := h.Load(ctx, unsigned); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "requires signed") {
		t.Errorf("unsigned with signatures required: %v", err)
	}
	other := newTestHost(t, NewHostConfig().WithTrustedKey("team-b", pubB))
	if _, err := other.Load(ctx, read()); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("untrusted key: %v", err)
	}
	impostor := newTestHost(t, NewHostConfig().WithTrustedKey("team-a", pubB))
	if _, err := impostor.Load(ctx, read()); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("wrong key under a trusted name: %v", err)
	}
}
