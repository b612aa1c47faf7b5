package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

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
	src, err := filepath.Abs("../examples/pdk-c")
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
				in, err := json.Marshal(HookInput{Event: harness.EventViewerMessage, Text: c.text})
				if err != nil {
					t.Fatal(err)
				}
				out, errOut, err := runCLI(t, "", "test", dir, "--call", "hook:screen", "--input", string(in))
				if err != nil || !strings.Contains(out, c.want) || !strings.Contains(errOut, c.log) {
					t.Fatalf("plugin test %q: %v\n%s\n%s", c.text, err, out, errOut)
				}
			}
			lhp := filepath.Join(t.TempDir(), "c-screen.lhp")
			if out, _, err := runCLI(t, "", "pack", dir, "--no-build", "-o", lhp); err != nil || !strings.Contains(out, "packed "+lhp) {
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
