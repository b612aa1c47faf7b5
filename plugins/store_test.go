package plugins

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStore installs a signed package into a data directory's store and
// loads the store back: a host without the signer's key refuses it, one
// with the key installs and activates it.
func TestStore(t *testing.T) {
	ctx := context.Background()
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pkg := &Package{Manifest: edgeManifest(), Wasm: watWasm(t, "edge")}
	pkg.Pin()
	if err := pkg.Sign("team-a", key); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if _, err := InstallToStore(data, pkg, nil); !errors.Is(err, ErrSignature) {
		t.Fatalf("installed a signed package without its key: %v", err)
	}
	trusted := map[string]ed25519.PublicKey{"team-a": pub}
	path, err := InstallToStore(data, pkg, trusted)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(StoreDir(data), "edge", "1.0.0"+PackageExt); path != want {
		t.Errorf("installed at %s, want %s", path, want)
	}
	if err := NewRegistry(newTestHost(t, NewHostConfig())).LoadStore(ctx, data); !errors.Is(err, ErrSignature) {
		t.Fatalf("a host without the key loaded the store: %v", err)
	}
	r := NewRegistry(newTestHost(t, NewHostConfig().WithTrustedKey("team-a", pub)))
	defer r.Close(ctx)
	if err := r.LoadStore(ctx, data); err != nil {
		t.Fatal(err)
	}
	if l := r.List(); len(l) != 1 || l[0].Name != "edge" || l[0].Active != "1.0.0" {
		t.Fatalf("store: %+v", l)
	}

	// A package that does not read is reported, and the others load.
	broken := filepath.Join(StoreDir(data), "broken", "1.0.0"+PackageExt)
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("not a package"), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := NewRegistry(newTestHost(t, NewHostConfig().WithTrustedKey("team-a", pub)))
	defer r2.Close(ctx)
	if err := r2.LoadStore(ctx, data); err == nil || !strings.Contains(err.Error(), broken) {
		t.Errorf("broken package: err = %v, want one naming %s", err, broken)
	}
	if l := r2.List(); len(l) != 1 || l[0].Active != "1.0.0" {
		t.Errorf("the sound package was not loaded next to the broken one: %+v", l)
	}
}
