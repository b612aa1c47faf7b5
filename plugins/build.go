package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// GoBuildArgs are the go build flags of a plugin: a WASI reactor whose
// //go:wasmexport functions are the plugin's exports.
func GoBuildArgs(out string) []string {
	return []string{"build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "."}
}

// BuildGo compiles the Go plugin in dir to a .wasm at out with the
// standard toolchain (GOOS=wasip1 GOARCH=wasm). Compiler output goes to
// log (nil discards).
func BuildGo(ctx context.Context, dir, out string, log io.Writer) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("build %s: %w", dir, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", GoBuildArgs(abs)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if log != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&stderr, log), io.MultiWriter(&stderr, log)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// BuildGoCached is BuildGo with a cache: the module is kept in cacheDir
// under the hash of everything that decides its bytes (the Go version
// and the files of every non-standard package it depends on), so a
// second build of unchanged sources costs one `go list`.
func BuildGoCached(ctx context.Context, dir, cacheDir string) (string, error) {
	key, err := sourceHash(ctx, dir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(cacheDir, key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	tmp, err := os.CreateTemp(cacheDir, "build-*.wasm")
	if err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := BuildGo(ctx, dir, tmp.Name(), nil); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	return out, nil
}

// sourceHash hashes the Go version, go.sum-pinned module versions and
// the files of the packages dir depends on outside the standard library
// and the module cache.
func sourceHash(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f",
		"{{if not .Standard}}{{if not .Module}}{{.Dir}}{{else if .Module.Main}}{{.Dir}}{{else}}mod:{{.Module.Path}}@{{.Module.Version}}{{end}}{{end}}", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: go list: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	ver, err := exec.CommandContext(ctx, "go", "version").Output()
	if err != nil {
		return "", fmt.Errorf("build %s: go version: %w", dir, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", ver, GoBuildArgs("out"))
	lines := strings.Fields(out.String())
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintf(h, "%s\n", l)
		if strings.HasPrefix(l, "mod:") {
			continue
		}
		if err := hashDir(h, l); err != nil {
			return "", fmt.Errorf("build %s: %w", dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashDir(w io.Writer, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, "_test.go") || !strings.HasSuffix(name, ".go") && name != "go.mod" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(w, "%s %x\n", e.Name(), sum)
	}
	return nil
}

// BuildDir builds the Go plugin in dir into dir/<manifest wasm.file> and
// returns it as a pinned package.
func BuildDir(ctx context.Context, dir string, log io.Writer) (*Package, error) {
	m, _, err := ReadManifestDir(dir)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, m.Wasm.File)
	if err := BuildGo(ctx, dir, out, log); err != nil {
		return nil, err
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	if m.Wasm.SHA256 != "" && m.Wasm.SHA256 != SHA256Hex(wasm) {
		return nil, errors.New("build: the manifest pins another module; clear wasm.sha256 in the source manifest (pack pins it)")
	}
	p := &Package{Manifest: m, Wasm: wasm}
	p.Pin()
	return p, nil
}
