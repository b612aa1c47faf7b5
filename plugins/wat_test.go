package plugins

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The hand-written WebAssembly text modules of testdata are committed
// assembled, so that go test needs only Go and gcc. After editing a .wat,
// run go generate (it needs wabt's wat2wasm) and commit the .wasm too;
// TestCommittedWasm checks that the two agree.
//
//go:generate wat2wasm testdata/abi2.wat -o testdata/abi2.wasm
//go:generate wat2wasm testdata/badimport.wat -o testdata/badimport.wasm
//go:generate wat2wasm testdata/badstart.wat -o testdata/badstart.wasm
//go:generate wat2wasm testdata/ctors.wat -o testdata/ctors.wasm
//go:generate wat2wasm testdata/ctorsreactor.wat -o testdata/ctorsreactor.wasm
//go:generate wat2wasm testdata/edge.wat -o testdata/edge.wasm
//go:generate wat2wasm testdata/initloop.wat -o testdata/initloop.wasm
//go:generate wat2wasm testdata/unknownuser.wat -o testdata/unknownuser.wasm

// assembler is wabt's WebAssembly text assembler.
const assembler = "wat2wasm"

// watWasm returns the committed assembly of testdata/<name>.wat.
func watWasm(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatalf("test module %s: %v (run go generate ./plugins with wabt installed)", name, err)
	}
	return b
}

// TestCommittedWasm re-assembles every testdata/*.wat and checks that the
// committed .wasm beside it is what its source assembles to. It needs
// wabt, so it is skipped without it, except in CI, which installs wabt.
func TestCommittedWasm(t *testing.T) {
	sources, err := filepath.Glob(filepath.Join("testdata", "*.wat"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no testdata/*.wat found: %v", err)
	}
	for _, src := range sources {
		if _, err := os.Stat(strings.TrimSuffix(src, ".wat") + ".wasm"); err != nil {
			t.Errorf("%s has no committed assembly: %v (add a //go:generate line in wat_test.go)", src, err)
		}
	}
	for _, src := range sources {
		name := strings.TrimSuffix(filepath.Base(src), ".wat")
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name+".wasm")
			msg, err := exec.Command(assembler, src, "-o", out).CombinedOutput()
			if errors.Is(err, exec.ErrNotFound) {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s is not installed; CI must check the committed modules (.ci/run installs wabt)", assembler)
				}
				t.Skipf("%s is not installed (Debian: apt-get install wabt); the committed modules are not re-checked", assembler)
			}
			if err != nil {
				t.Fatalf("%s %s: %v: %s", assembler, src, err, msg)
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := watWasm(t, name); !bytes.Equal(got, want) {
				t.Fatalf("testdata/%s.wasm (%d bytes) is not what %s assembles to (%d bytes): run go generate ./plugins and commit it",
					name, len(got), src, len(want))
			}
		})
	}
}
