package nvrtc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Arch is a compute capability, e.g. {9, 0} for H20/H200.
type Arch struct{ Major, Minor int }

// Virtual returns the virtual architecture name, e.g. "compute_90".
func (a Arch) Virtual() string { return fmt.Sprintf("compute_%d%d", a.Major, a.Minor) }

// Validate rejects capabilities the kernels do not target: they use warp
// shuffles with masks (sm_30+) and need sm_70's independent thread
// scheduling semantics, and nothing below Volta runs CUDA 12 anyway.
func (a Arch) Validate() error {
	if a.Major < 7 || a.Major > 20 || a.Minor < 0 || a.Minor > 9 {
		return fmt.Errorf("cuda: compute capability %d.%d is not supported (need 7.0 or newer)", a.Major, a.Minor)
	}
	return nil
}

// Options returns the NVRTC options the kernels are compiled with for arch:
// PTX for its virtual architecture (the driver JIT-compiles it for the
// exact device), C++17, and IEEE-accurate math (no --use_fast_math) so
// results stay close to the CPU backend's.
func Options(arch Arch) []string {
	return []string{
		"--gpu-architecture=" + arch.Virtual(),
		"--std=c++17",
		"--fmad=true",
	}
}

// Real returns the real architecture name, e.g. "sm_90".
func (a Arch) Real() string { return fmt.Sprintf("sm_%d%d", a.Major, a.Minor) }

// CUBINOptions are Options for device code of arch itself rather than PTX.
func CUBINOptions(arch Arch) []string {
	o := Options(arch)
	o[0] = "--gpu-architecture=" + arch.Real()
	return o
}

// CacheKey identifies the PTX of a source compiled with options by a given
// NVRTC version: a change to any of them is a different key.
func CacheKey(src string, options []string, compilerVersion string) string {
	h := sha256.New()
	fmt.Fprintf(h, "livehat-ptx-1\x00%s\x00", compilerVersion)
	for _, o := range options {
		fmt.Fprintf(h, "%s\x00", o)
	}
	fmt.Fprintf(h, "\x00%s", src)
	return hex.EncodeToString(h.Sum(nil))
}

// Cache is a directory of compiled PTX files named by CacheKey.
type Cache struct {
	Dir string
}

// DefaultCacheDir returns $LIVEHAT_PTX_CACHE, else the user cache
// directory's livehat/ptx, else a folder under the temporary directory.
func DefaultCacheDir() string {
	if d := os.Getenv("LIVEHAT_PTX_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "livehat", "ptx")
	}
	return filepath.Join(os.TempDir(), "livehat-ptx")
}

func (c Cache) path(key string) (string, error) {
	if len(key) != 64 || strings.Trim(key, "0123456789abcdef") != "" {
		return "", fmt.Errorf("nvrtc: %q is not a cache key", key)
	}
	return filepath.Join(c.Dir, key+".ptx"), nil
}

// Get returns the cached PTX for key, if any. A file that is not PTX (a
// truncated or foreign file) counts as absent.
func (c Cache) Get(key string) ([]byte, bool) {
	p, err := c.path(key)
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil || !LooksLikePTX(b) {
		return nil, false
	}
	return b, true
}

// Put stores PTX under key, atomically (a concurrent reader sees the old
// file or the whole new one).
func (c Cache) Put(key string, ptx []byte) error {
	p, err := c.path(key)
	if err != nil {
		return err
	}
	if !LooksLikePTX(ptx) {
		return fmt.Errorf("nvrtc: refusing to cache %d bytes that are not PTX", len(ptx))
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("nvrtc: PTX cache: %w", err)
	}
	f, err := os.CreateTemp(c.Dir, key+".*.tmp")
	if err != nil {
		return fmt.Errorf("nvrtc: PTX cache: %w", err)
	}
	_, werr := f.Write(ptx)
	cerr := f.Close()
	if err := firstErr(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("nvrtc: PTX cache: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("nvrtc: PTX cache: %w", err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// LooksLikePTX reports whether b is PTX text: it declares a .version and a
// .target and ends in a complete line.
func LooksLikePTX(b []byte) bool {
	s := string(b)
	return strings.Contains(s, ".version ") && strings.Contains(s, ".target ") && strings.HasSuffix(strings.TrimRight(s, "\x00"), "\n")
}
