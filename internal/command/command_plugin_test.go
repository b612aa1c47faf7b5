package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// pluginTestCache is the cache the plugins package's tests build and
// compile their guests into, so that the example modules are built once.
func pluginTestCache(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "livehat-test")
}

// examplePluginDir copies an example plugin's manifest and its module,
// built with the Go toolchain (cached by source hash), into a temporary
// plugin directory.
func examplePluginDir(t *testing.T, name, wasmFile string) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "plugins", name)
	built, err := plugins.BuildGoCached(context.Background(), src, filepath.Join(pluginTestCache(t), "wasm"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for from, to := range map[string]string{filepath.Join(src, "plugin.json"): "plugin.json", built: wasmFile} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// edgePluginDir is a plugin directory holding the plugins package's
// hand-written edge module with one hook, "allow", and one tool, "exit3".
func edgePluginDir(t *testing.T) string {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "plugins", "testdata", "edge.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{"abi": 1, "name": "edge", "version": "1.0.0", "description": "hand-written edge cases",
		"wasm": {"file": "edge.wasm"},
		"hooks": [{"name": "allow", "event": "after_response"}],
		"tools": [{"name": "exit3", "description": "exits with status 3", "parameters": {"type": "object"}}]}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "edge.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPlugin runs "livehat plugin ARGS", with the test cache for the
// commands that compile.
func runPlugin(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	if len(args) > 0 && slices.Contains([]string{"build", "test", "pack", "install"}, args[0]) {
		args = append(args, "--cache", filepath.Join(pluginTestCache(t), "wazero"))
	}
	err := Plugin(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestPluginTestAndInspect(t *testing.T) {
	dir := examplePluginDir(t, "shop", "shop.wasm")
	catalog := filepath.Join("..", "..", "examples", "plugins", "catalog.json")
	out, _, err := runPlugin(t, "", "inspect", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shop-tools@1.0.0 (abi 1)", "tool:lookup_product", "catalog: Reads products",
		"extism:host/user.livehat_catalog_lookup", "lookup_product() -> (i32)", "livehat_abi_v1() -> (i32)", "pinned true"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PROBLEM") {
		t.Errorf("inspect found problems:\n%s", out)
	}
	out, _, err = runPlugin(t, "", "inspect", "--json", filepath.Join(dir, "shop.wasm"))
	var in plugins.Inspection
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in.Size == 0 || len(in.Problems) != 0 || !strings.Contains(out, `"memory_min_pages": `) {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}

	out, errOut, err := runPlugin(t, "", "test", dir, "--call", "tool:lookup_product", "--input", `{"name":"口红"}`, "--catalog", catalog)
	if err != nil || !strings.Contains(out, `"id": "p-lipstick"`) || !strings.Contains(errOut, "shop-tools@1.0.0 tool:lookup_product: ok in") {
		t.Fatalf("test: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = runPlugin(t, `{"product_id":"p-cream","quantity":2}`, "test", "--call", "tool:best_coupon", "--input", "-",
		"--catalog", catalog, "--repeat", "5", dir)
	if err != nil || !strings.Contains(out, `"pay": 466.2`) || !strings.Contains(errOut, "5 calls, p50") {
		t.Fatalf("test --repeat: %v\n%s\n%s", err, out, errOut)
	}
	if _, _, err := runPlugin(t, "", "test", dir, "--call", "tool:lookup_product", "--input", `{"id":7}`); !errors.Is(err, plugins.ErrBadInput) {
		t.Fatalf("schema failure: %v", err)
	}
	hookDir := examplePluginDir(t, "speech", "speech.wasm")
	in2, _ := json.Marshal(plugins.HookInput{Event: harness.EventAfterResponse, Text: strings.Repeat("很长的回复。", 40), ReplyChars: 30})
	out, _, err = runPlugin(t, "", "test", hookDir, "--call", "hook:fit_speech", "--input", string(in2))
	if err != nil || !strings.Contains(out, `"action": "rewrite"`) {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	skillDir := examplePluginDir(t, "promotion", "promotion.wasm")
	out, _, err = runPlugin(t, "", "test", skillDir, "--call", "skill:current_promotion", "--catalog", catalog, "--now", "2026-11-29T22:50:00Z")
	if err != nil || !strings.Contains(out, "还剩10分钟结束") {
		t.Fatalf("skill: %v\n%s", err, out)
	}
}

func TestPluginPackInstall(t *testing.T) {
	dir := examplePluginDir(t, "moderation", "moderation.wasm")
	keys := t.TempDir()
	out, _, err := runPlugin(t, "", "keygen", "--out", filepath.Join(keys, "team-a"))
	if err != nil || !strings.Contains(out, "public key") {
		t.Fatalf("keygen: %v %s", err, out)
	}
	lhp := filepath.Join(t.TempDir(), "mod.lhp")
	out, _, err = runPlugin(t, "", "pack", dir, "--no-build", "--key", filepath.Join(keys, "team-a"), "-o", lhp)
	if err != nil || !strings.Contains(out, "signed by team-a") {
		t.Fatalf("pack: %v %s", err, out)
	}
	out, _, err = runPlugin(t, "", "inspect", lhp)
	if err != nil || !strings.Contains(out, "team-a (not verified: inspect trusts no keys)") || strings.Contains(out, "PROBLEM") {
		t.Fatalf("inspect package: %v\n%s", err, out)
	}
	data := t.TempDir()
	if _, _, err := runPlugin(t, "", "install", lhp, "--data", data); !errors.Is(err, plugins.ErrSignature) {
		t.Fatalf("install without the key: %v", err)
	}
	out, _, err = runPlugin(t, "", "install", lhp, "--data", data, "--trust", filepath.Join(keys, "team-a.pub"))
	want := "installed moderation@1.0.0 into " + filepath.Join(plugins.StoreDir(data), "moderation", "1.0.0"+plugins.PackageExt)
	if err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("install: %v %q, want %q", err, out, want)
	}
}

// TestPluginBuild builds a real example from source with the Go toolchain.
func TestPluginBuild(t *testing.T) {
	dir := "../../examples/plugins/speech"
	out, _, err := runPlugin(t, "", "build", dir)
	t.Cleanup(func() { os.Remove(filepath.Join(dir, "speech.wasm")) })
	if err != nil || !strings.Contains(out, "speech-length@1.0.0: hook:fit_speech") || !strings.Contains(out, "loaded in the sandbox") {
		t.Fatalf("build: %v\n%s", err, out)
	}
}

func TestPluginUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"test", "x"}, {"test", "x", "--call", "gadget:y"}, {"inspect"},
		{"build", "a", "b"}, {"test", "--repeat"}, {"test", "x", "--call", "tool:y", "--repeat", "0"}, {"keygen"},
		{"pack"}, {"install"}, {"inspect", "--bogus", "x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if _, _, err := runPlugin(t, "", args...); !IsUsage(err) {
				t.Errorf("%q: %v, want a usage error", args, err)
			}
		})
	}
	// A file that is neither a package, a module nor a folder.
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runPlugin(t, "", "inspect", other); !IsUsage(err) || !strings.Contains(err.Error(), "want a .lhp package") {
		t.Errorf("inspect %s: %v, want a usage error", other, err)
	}
	_, errOut, err := runPlugin(t, "", "test", "-h")
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut, "Usage: livehat plugin test FILE --call KIND:NAME --input JSON") {
		t.Errorf("-h: %v\n%s", err, errOut)
	}
	if out, _, err := runPlugin(t, "", "help"); err != nil || !strings.Contains(out, "inspect FILE") {
		t.Errorf("help: %v %s", err, out)
	}
}

// TestPluginSigningFlow runs sdk/README.md's signing flow as written:
// keygen --out team.key, pack --key team.key, then install and test with
// --trust team.key.pub, which must name the same signer.
func TestPluginSigningFlow(t *testing.T) {
	dir := edgePluginDir(t)
	key := filepath.Join(t.TempDir(), "team.key")
	out, _, err := runPlugin(t, "", "keygen", "--out", key)
	if err != nil || !strings.Contains(out, "key id team ") {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	lhp := filepath.Join(t.TempDir(), "edge.lhp")
	out, _, err = runPlugin(t, "", "pack", dir, "--no-build", "--key", key, "-o", lhp)
	if err != nil || !strings.Contains(out, "signed by team)") {
		t.Fatalf("pack: %v\n%s", err, out)
	}
	out, _, err = runPlugin(t, "", "install", lhp, "--data", t.TempDir(), "--trust", key+".pub")
	if err != nil || !strings.Contains(out, "installed edge@1.0.0") {
		t.Fatalf("install --trust team.key.pub: %v\n%s", err, out)
	}
	out, _, err = runPlugin(t, "", "test", lhp, "--call", "hook:allow", "--trust", key+".pub")
	if err != nil || !strings.Contains(out, `"action": "allow"`) {
		t.Fatalf("test --trust team.key.pub: %v\n%s", err, out)
	}
	_, _, err = runPlugin(t, "", "test", lhp, "--call", "hook:allow")
	if !errors.Is(err, plugins.ErrSignature) || !strings.Contains(err.Error(), `pass --trust with the public key file of "team"`) {
		t.Fatalf("test of a signed package without --trust: %v", err)
	}
	_, _, err = runPlugin(t, "", "test", lhp, "--call", "hook:allow", "--trust", key+".pub", "--trust-id", "other")
	if !errors.Is(err, plugins.ErrSignature) || !strings.Contains(err.Error(), `signed by key "team", which is not trusted`) {
		t.Fatalf("test trusting the key under another name: %v", err)
	}
	badKey := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(badKey, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runPlugin(t, "", "pack", dir, "--no-build", "--key", badKey); err == nil || !strings.Contains(err.Error(), "want a hex ed25519 seed") {
		t.Errorf("pack with a broken key: %v", err)
	}
	if _, _, err := runPlugin(t, "", "test", lhp, "--call", "hook:allow", "--trust", badKey); err == nil || !strings.Contains(err.Error(), "want a hex ed25519 public key") {
		t.Errorf("test trusting a broken key: %v", err)
	}
}

// TestPluginExitCode: a guest that ends with WASI proc_exit(3) fails the
// call with a CallError carrying exit code 3, which livehat hands on.
func TestPluginExitCode(t *testing.T) {
	_, _, err := runPlugin(t, "", "test", edgePluginDir(t), "--call", "tool:exit3", "--input", "{}")
	var ce *plugins.CallError
	if !errors.As(err, &ce) || ce.ExitCode != 3 {
		t.Fatalf("err = %v, want a CallError with exit code 3", err)
	}
}

func TestKeyIDFromFile(t *testing.T) {
	for _, c := range []struct{ key, id string }{
		{"team.key", "team"},
		{"keys/team.key", "team"},
		{"team", "team"},
		{"team-a", "team-a"},
		{"acme.prod.key", "acme.prod"},
		{"team.pub", "team"},
	} {
		t.Run(c.key, func(t *testing.T) {
			// pack names the signer from the key, install and test from
			// keygen's public key file beside it: the two must agree.
			if got := keyIDFromFile(c.key); got != c.id {
				t.Errorf("keyIDFromFile(%q) = %q, want %q", c.key, got, c.id)
			}
			if got := keyIDFromFile(c.key + ".pub"); got != c.id {
				t.Errorf("keyIDFromFile(%q) = %q, want %q", c.key+".pub", got, c.id)
			}
		})
	}
}

// cCompiler is the C compiler of sdk/README.md's C path.
const cCompiler = "clang"

// requireCWasm names the variable that makes TestCPDKExample fail, not
// skip, when clang cannot build WebAssembly (.ci/run sets it after
// installing clang, lld and wasi-libc).
const requireCWasm = "LIVEHAT_TEST_CLANG_WASM"

// TestCPDKExample builds examples/pdk-c with clang the two ways
// sdk/README.md documents, and runs it as a plugin author would: plugin
// test (a denial with the manifest's reason and a log line, an allowed
// message) and pack. Without clang's WebAssembly target it is skipped.
func TestCPDKExample(t *testing.T) {
	src, err := filepath.Abs("../../examples/pdk-c")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name string
		args []string
	}{
		// No libc: nothing in the module calls the static constructors,
		// so they are exported for the host to run.
		{"wasm32-unknown-unknown", []string{"--target=wasm32-unknown-unknown", "-O2", "-nostdlib",
			"-Wl,--no-entry", "-Wl,--export=__wasm_call_ctors"}},
		// wasi-libc: a reactor, whose _initialize runs the constructors.
		{"wasm32-wasi", []string{"--target=wasm32-wasi", "-O2", "-mexec-model=reactor"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			if msg, err := clang(t, dir, v.args, "probe.c", "int probe(void) { return 0; }\n"); err != nil {
				if os.Getenv(requireCWasm) != "" {
					t.Fatalf("%s is set but clang cannot build for %s: %v\n%s", requireCWasm, v.name, err, msg)
				}
				t.Skipf("clang cannot build for %s here (Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32): %v", v.name, err)
			}
			args := slices.Concat(v.args, []string{"-I", src, "-o", filepath.Join(dir, "screen.wasm"), filepath.Join(src, "screen.c")})
			if msg, err := exec.Command(cCompiler, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			man, err := os.ReadFile(filepath.Join(src, "plugin.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "plugin.json"), man, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ text, want, log string }{
				{"加微信看 https://shop.example 更便宜", `"reason": "links and messenger handles are not allowed in chat"`, "screen: denied"},
				{"加VX: abc123", `"action": "deny"`, "screen: denied"},
				{"这款面霜多少钱？", `"action": "allow"`, ""},
			} {
				in, err := json.Marshal(plugins.HookInput{Event: harness.EventViewerMessage, Text: c.text})
				if err != nil {
					t.Fatal(err)
				}
				out, errOut, err := runPlugin(t, "", "test", dir, "--call", "hook:screen", "--input", string(in))
				if err != nil || !strings.Contains(out, c.want) || !strings.Contains(errOut, c.log) {
					t.Fatalf("plugin test %q: %v\n%s\n%s", c.text, err, out, errOut)
				}
			}
			lhp := filepath.Join(t.TempDir(), "c-screen.lhp")
			if out, _, err := runPlugin(t, "", "pack", dir, "--no-build", "-o", lhp); err != nil || !strings.Contains(out, "packed "+lhp) {
				t.Fatalf("plugin pack: %v\n%s", err, out)
			}
		})
	}
}

// clang compiles source (written to dir/name) with args into a module.
func clang(t *testing.T, dir string, args []string, name, source string) ([]byte, error) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = slices.Concat(args, []string{"-o", path + ".wasm", path})
	msg, err := exec.CommandContext(ctx, cCompiler, args...).CombinedOutput()
	if errors.Is(err, exec.ErrNotFound) {
		return msg, errors.New("clang is not installed")
	}
	return msg, err
}
