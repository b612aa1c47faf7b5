package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func newVersion(name, version string) NewPluginVersion {
	return NewPluginVersion{Name: name, Version: version, SHA256: strings.Repeat("a", 64), PackageSHA256: strings.Repeat("b", 64),
		Manifest: []byte(`{"name":"` + name + `"}`), Size: 10, PackageSize: 20}
}

func TestPluginsAreScopedAndVersioned(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")

	if _, _, err := s.AddPluginVersion(ctx, a.m1, newVersion("shop", "1.0.0")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant uploads: %v", err)
	}
	p, v, err := s.AddPluginVersion(ctx, a.dev, newVersion("shop", "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if p.OwnerID != a.dev.UserID || !p.Enabled || p.Active == nil || p.Active.Version != "1.0.0" || !v.Active {
		t.Errorf("first version: %+v %+v", p, v)
	}
	// Newer versions become active, older ones wait for a rollback.
	if p, _, _ = s.AddPluginVersion(ctx, a.dev, newVersion("shop", "1.10.0")); p.Active.Version != "1.10.0" {
		t.Errorf("newer version not active: %s", p.Active.Version)
	}
	if p, _, _ = s.AddPluginVersion(ctx, a.dev, newVersion("shop", "1.9.0")); p.Active.Version != "1.10.0" {
		t.Errorf("older version became active: %s", p.Active.Version)
	}
	if _, _, err := s.AddPluginVersion(ctx, a.dev, newVersion("shop", "1.9.0")); !errors.Is(err, ErrConflict) {
		t.Errorf("same version twice: %v", err)
	}
	// Another organisation may use the same name; its plugin is its own.
	if _, _, err := s.AddPluginVersion(ctx, b.op, newVersion("shop", "3.0.0")); err != nil {
		t.Errorf("same name in another org: %v", err)
	}

	for _, c := range []struct {
		who  string
		sc   Scope
		want int
	}{{"owner", a.dev, 1}, {"operator", a.op, 1}, {"merchant", a.m1, 0}, {"other org's operator", b.op, 1}} {
		list, err := s.Plugins(ctx, c.sc)
		if err != nil || len(list) != c.want {
			t.Errorf("%s lists %d plugins (%v), want %d", c.who, len(list), err, c.want)
		}
	}
	if list, _ := s.Plugins(ctx, b.op); len(list) == 1 && list[0].Active.Version != "3.0.0" {
		t.Errorf("org b sees org a's plugin: %+v", list[0])
	}
	if _, err := s.Plugin(ctx, a.m1, "shop"); !errors.Is(err, ErrNotFound) {
		t.Errorf("merchant reads a plugin: %v", err)
	}
	if vs, err := s.PluginVersions(ctx, a.op, "shop"); err != nil || len(vs) != 3 {
		t.Errorf("versions: %d %v", len(vs), err)
	}

	p, err = s.ActivatePluginVersion(ctx, a.op, "shop", "1.0.0", p.Revision)
	if err != nil || p.Active.Version != "1.0.0" {
		t.Fatalf("rollback: %v %+v", err, p)
	}
	if _, err := s.ActivatePluginVersion(ctx, a.op, "shop", "1.10.0", p.Revision-1); !errors.Is(err, ErrConflict) {
		t.Errorf("stale rollback: %v", err)
	}
	if _, err := s.ActivatePluginVersion(ctx, a.op, "shop", "7.0.0", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("rollback to a missing version: %v", err)
	}
	if _, err := s.SetPluginEnabled(ctx, b.op, "nope", false, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("disable a missing plugin: %v", err)
	}
	active, _ := s.ActivePlugins(ctx, a.org.ID)
	if len(active) != 1 || active[0].Version != "1.0.0" {
		t.Errorf("active plugins: %+v", active)
	}
	if _, err := s.SetPluginEnabled(ctx, a.dev, "shop", false, 0); err != nil {
		t.Fatal(err)
	}
	if active, _ := s.ActivePlugins(ctx, a.org.ID); len(active) != 0 {
		t.Errorf("a disabled plugin is active: %+v", active)
	}
	if n, _ := s.PluginCount(ctx); n != 2 {
		t.Errorf("plugin count %d, want 2", n)
	}
}

func TestPluginKeysAreOperatorManaged(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	if _, err := s.AddPluginKey(ctx, a.dev, "team", "ab"); !errors.Is(err, ErrNotFound) {
		t.Errorf("developer adds a key: %v", err)
	}
	if _, err := s.AddPluginKey(ctx, a.op, "team", "ab"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPluginKey(ctx, a.op, "team", "cd"); !errors.Is(err, ErrConflict) {
		t.Errorf("same key id twice: %v", err)
	}
	if keys, err := s.PluginKeys(ctx, a.dev); err != nil || len(keys) != 1 {
		t.Errorf("developer lists keys: %v %v", keys, err)
	}
	if _, err := s.PluginKeys(ctx, a.m1); !errors.Is(err, ErrNotFound) {
		t.Errorf("merchant lists keys: %v", err)
	}
	if err := s.DeletePluginKey(ctx, a.op, "team"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePluginKey(ctx, a.op, "team"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

func TestEnabledPluginsListEveryOrganisationsRunningVersions(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
	for _, x := range []struct {
		sc            Scope
		name, version string
	}{{a.dev, "shop", "1.0.0"}, {a.dev, "shop", "1.1.0"}, {a.op, "mod", "1.0.0"}, {b.op, "shop", "2.0.0"}} {
		if _, _, err := s.AddPluginVersion(ctx, x.sc, newVersion(x.name, x.version)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetPluginEnabled(ctx, a.op, "mod", false, 0); err != nil {
		t.Fatal(err)
	}
	list, err := s.EnabledPlugins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list {
		got = append(got, p.OrgID+"/"+p.Name+"@"+p.Version+" "+string(p.Manifest))
	}
	want := []string{a.org.ID + `/shop@1.1.0 {"name":"shop"}`, b.org.ID + `/shop@2.0.0 {"name":"shop"}`}
	if a.org.ID > b.org.ID {
		want[0], want[1] = want[1], want[0]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("enabled plugins:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
