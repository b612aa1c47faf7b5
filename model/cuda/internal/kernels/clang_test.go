package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourcesCompileWithClang compiles every module source to PTX with
// clang's CUDA front end where clang is installed (Debian: clang-14), so
// that syntax and type errors in the kernels surface on machines without
// the CUDA toolkit. It does not replace NVRTC (different front end, sm_80
// target, declarations from testdata/clang_shim.h), but a kernel that
// fails here would fail there too.
func TestSourcesCompileWithClang(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling seven modules takes a few seconds")
	}
	clang := ""
	for _, c := range []string{"clang++", "clang++-14", "clang++-15", "clang++-16"} {
		if p, err := exec.LookPath(c); err == nil {
			clang = p
			break
		}
	}
	if clang == "" {
		t.Skip("clang++ not installed; the kernel sources are compiled only by NVRTC on a GPU machine")
	}
	shim, err := filepath.Abs("testdata/clang_shim.h")
	if err != nil {
		t.Fatal(err)
	}
	// A run that passed is remembered by the hash of the compiler, the
	// shim and the sources, so only a change compiles again.
	h := sha256.New()
	shimText, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(h, "%s\x00%s\x00", clang, shimText)
	for _, f := range Files() {
		src, _, err := Source(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00%s\x00", f, src)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	passed := filepath.Join(cache, "livehat", "clang-check", hex.EncodeToString(h.Sum(nil)))
	if _, err := os.Stat(passed); err == nil {
		return
	}
	dir := t.TempDir()
	for _, f := range Files() {
		src, _, err := Source(f)
		if err != nil {
			t.Fatal(err)
		}
		in := filepath.Join(dir, f)
		out := in + ".ptx"
		if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(clang, "-x", "cuda", "--cuda-gpu-arch=sm_80", "--cuda-device-only",
			"-nocudainc", "-nocudalib", "-include", shim, "-O2", "-Wall", "-Werror", "-S", "-o", out, in)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, msg)
			continue
		}
		ptx, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Table() {
			if s.File == f && !strings.Contains(string(ptx), ".entry "+s.Name+"(") {
				t.Errorf("%s: no .entry %s in clang's PTX (mangled or missing extern \"C\"?)", f, s.Name)
			}
		}
	}
	if !t.Failed() && os.MkdirAll(filepath.Dir(passed), 0o755) == nil {
		os.WriteFile(passed, nil, 0o644)
	}
}
