package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func edgeVersion(t testing.TB, version string) *Package {
	t.Helper()
	m := edgeManifest()
	m.Version = version
	m.Config = map[string]string{"greeting": "v" + version}
	pkg := &Package{Manifest: m, Wasm: watWasm(t, "edge")}
	pkg.Pin()
	return pkg
}

func greeting(t testing.TB, p *Plugin) string {
	t.Helper()
	out, err := p.Call(context.Background(), nil, KindHook, "config", []byte("greeting"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestRegistryVersions(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(newTestHost(t, NewHostConfig()))
	defer r.Close(ctx)
	if _, err := r.Install(ctx, edgeVersion(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Install(ctx, edgeVersion(t, "1.0.0")); !errors.Is(err, ErrInstalled) {
		t.Fatalf("second install: %v", err)
	}
	turn1 := r.Snapshot()
	if _, err := r.Upgrade(ctx, edgeVersion(t, "1.1.0")); err != nil {
		t.Fatal(err)
	}
	// The turn that started before the upgrade keeps its version.
	p1, _ := turn1.Plugin("edge")
	turn2 := r.Snapshot()
	p2, _ := turn2.Plugin("edge")
	if greeting(t, p1) != "v1.0.0" || greeting(t, p2) != "v1.1.0" {
		t.Fatalf("turn1 %s, turn2 %s", greeting(t, p1), greeting(t, p2))
	}
	turn1.Release()
	turn1.Release()
	if _, err := r.Upgrade(ctx, edgeVersion(t, "1.0.5")); !errors.Is(err, ErrNotNewer) {
		t.Fatalf("downgrade through Upgrade: %v", err)
	}
	if v, err := r.Rollback("edge"); err != nil || v != "1.0.0" {
		t.Fatalf("rollback: %s, %v", v, err)
	}
	turn3 := r.Snapshot()
	if p, _ := turn3.Plugin("edge"); greeting(t, p) != "v1.0.0" {
		t.Fatal("rollback did not apply to the next turn")
	}
	turn3.Release()
	if _, err := r.Rollback("edge"); err == nil {
		t.Fatal("rolled back past the first version")
	}
	if err := r.Disable("edge"); err != nil {
		t.Fatal(err)
	}
	if s := r.Snapshot(); len(s.Names()) != 0 {
		t.Fatalf("a disabled plugin is in a snapshot: %v", s.Names())
	}
	r.Enable("edge")
	if err := r.Remove(ctx, "edge", "1.0.0"); !errors.Is(err, ErrInUse) {
		t.Fatalf("removing the active version: %v", err)
	}
	// 1.1.0 is removed while turn2 still runs on it: it stays usable
	// until the turn releases it, then it is closed.
	if err := r.Remove(ctx, "edge", "1.1.0"); err != nil {
		t.Fatal(err)
	}
	if greeting(t, p2) != "v1.1.0" {
		t.Fatal("a removed version died under a running turn")
	}
	turn2.Release()
	if _, err := p2.Call(ctx, nil, KindHook, "config", []byte("greeting")); !errors.Is(err, ErrClosed) {
		t.Fatalf("a removed, released version still runs: %v", err)
	}
	list := r.List()
	if len(list) != 1 || list[0].Active != "1.0.0" || fmt.Sprint(list[0].Versions) != "[1.0.0]" || !list[0].Enabled {
		t.Fatalf("list %+v", list)
	}
	if err := r.Activate("nope", "1.0.0"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("unknown plugin: %v", err)
	}
}

// TestRegistryHotSwap upgrades and rolls back while turns run: every
// turn sees one version from start to end.
func TestRegistryHotSwap(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(newTestHost(t, NewHostConfig()))
	defer r.Close(ctx)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		if _, err := r.Install(ctx, edgeVersion(t, v)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r.Activate("edge", []string{"1.0.0", "2.0.0"}[i%2])
		}
	}()
	errs := make(chan error, 100)
	var turns sync.WaitGroup
	for range 4 {
		turns.Add(1)
		go func() {
			defer turns.Done()
			for range 50 {
				s := r.Snapshot()
				p, _ := s.Plugin("edge")
				a := greeting(t, p)
				b := greeting(t, p)
				if a != b {
					errs <- fmt.Errorf("one turn saw %s then %s", a, b)
				}
				s.Release()
			}
		}()
	}
	turns.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
