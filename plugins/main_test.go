package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Go guests are built once per test run (and cached across runs by
// content hash): a standard-Go wasm build costs seconds on two cores.
// Each entry maps a short name to its source directory.
var guestDirs = map[string]string{
	"hostile":   "testdata/hostile",
	"pdkcompat": "testdata/pdkcompat",
	"sdkfloor":  "testdata/sdkfloor",
}

// builtGuests holds the .wasm path of every guest built in TestMain.
var builtGuests = map[string]string{}

// testCacheDir is shared by every test binary of a run and by later runs.
func testCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "livehat-test")
}

func TestMain(m *testing.M) {
	examples, _ := filepath.Glob("../examples/plugins/*/plugin.json")
	for _, e := range examples {
		dir := filepath.Dir(e)
		guestDirs["example/"+filepath.Base(dir)] = dir
	}
	if err := buildGuests(); err != nil {
		fmt.Fprintln(os.Stderr, "building test guests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func buildGuests() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	names := make([]string, 0, len(guestDirs))
	for n := range guestDirs {
		names = append(names, n)
	}
	sort.Strings(names)
	var (
		mu   sync.Mutex
		errs []string
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 2) // two cores: more parallel builds only thrash
	)
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			path, err := BuildGoCached(ctx, guestDirs[n], filepath.Join(testCacheDir(), "wasm"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			builtGuests[n] = path
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// guestWasm returns the bytes of a guest built in TestMain.
func guestWasm(t testing.TB, name string) []byte {
	t.Helper()
	path, ok := builtGuests[name]
	if !ok {
		t.Fatalf("guest %q was not built (known: %v)", name, guestDirs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newTestHost returns a host sharing the on-disk compilation cache of
// the test runs, closed at the end of the test.
func newTestHost(t testing.TB, cfg HostConfig) *Host {
	t.Helper()
	h, err := NewHost(context.Background(), cfg.WithCacheDir(filepath.Join(testCacheDir(), "wazero")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// load pins wasm into manifest m and loads it, closing it at the end.
func load(t testing.TB, h *Host, m *Manifest, wasm []byte) *Plugin {
	t.Helper()
	p, err := loadErr(h, m, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func loadErr(h *Host, m *Manifest, wasm []byte) (*Plugin, error) {
	pkg := &Package{Manifest: m, Wasm: wasm}
	pkg.Pin()
	return h.Load(context.Background(), pkg)
}
