package console

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/plugins"
)

// packSized packs the shop example as plugin name@version with limits of
// instances × pages.
func packSized(t *testing.T, name, version string, instances int, pages uint32) []byte {
	t.Helper()
	return packExample(t, "shop", version, func(p *plugins.Package) {
		p.Manifest.Name = name
		p.Manifest.Limits.Instances, p.Manifest.Limits.MemoryPages = instances, pages
	})
}

// expectRefusal checks a refusal's status, its field ("limits") and that
// its message says each of says.
func expectRefusal(t *testing.T, what string, code int, m map[string]any, wantCode int, says ...string) {
	t.Helper()
	msg := fmt.Sprint(m["error"])
	if code != wantCode || m["field"] != "limits" {
		t.Errorf("%s: %d %v, want %d naming limits", what, code, m, wantCode)
		return
	}
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("%s: %q does not say %q", what, msg, s)
		}
	}
}

// TestPluginMemoryBudget is finding 3 of issue #21: a developer set 64
// instances × 4,096 pages and eight trials took the console to 5.2 GB.
// What the organisation's running plugins reserve is bounded, and so is
// what one plugin of a developer may reserve; installs, enables, rollbacks
// and trials past the budget are refused, naming it.
func TestPluginMemoryBudget(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	// The shop example reserves 64 MiB: 4 instances × 256 pages × 64 KiB;
	// checking or trying it holds one instance, 16 MiB.
	e.srv.plugins.budget.cfg = PluginMemory{Total: 1 << 30, PerOrg: 224 << 20, DeveloperPlugin: 96 << 20}

	code, m := e.upload(t, e.dev, packSized(t, "huge", "1.0.0", plugins.MaxInstances, plugins.MaxMemoryPages))
	expectRefusal(t, "a developer's 64 × 4096 plugin", code, m, 403, "16 GiB (64 instances × 4096 pages × 64 KiB)", "at most 96 MiB")
	code, m = e.upload(t, e.admin, packSized(t, "huge", "1.0.0", plugins.MaxInstances, plugins.MaxMemoryPages))
	expectRefusal(t, "an operator's 64 × 4096 plugin", code, m, 409, "budget of 224 MiB", "16 GiB")

	for _, name := range []string{"shop-a", "shop-b", "shop-c"} {
		if code, m := e.upload(t, e.admin, packSized(t, name, "1.0.0", 4, 256)); code != 201 {
			t.Fatalf("upload %s: %d %v", name, code, m)
		}
	}
	code, m = e.upload(t, e.admin, packSized(t, "shop-d", "1.0.0", 4, 256))
	expectRefusal(t, "a fourth 64 MiB plugin", code, m, 409, "would reserve 256 MiB, over its plugin memory budget of 224 MiB (192 MiB reserved without it)")
	if names := listNames(t, e, e.admin); len(names) != 3 {
		t.Errorf("a refused install left a plugin behind: %v", names)
	}

	// A disabled plugin reserves nothing; enabling it again must fit.
	if code, m := e.postJSON(t, e.admin, "/api/plugins/shop-c/disable", ""); code != 200 {
		t.Fatalf("disable: %d %v", code, m)
	}
	if code, m := e.upload(t, e.admin, packSized(t, "shop-d", "1.0.0", 4, 256)); code != 201 {
		t.Fatalf("upload after a disable: %d %v", code, m)
	}
	code, m = e.postJSON(t, e.admin, "/api/plugins/shop-c/enable", "")
	expectRefusal(t, "enabling past the budget", code, m, 409, "enabling shop-c", "budget of 224 MiB")
	if _, p, _ := e.call(t, e.admin, "GET", "/api/plugins/shop-c", "", ""); pluginOf(t, p)["enabled"] != false {
		t.Errorf("a refused enable enabled the plugin: %v", p["plugin"])
	}

	// A newer version replaces the running one's reservation; an older
	// one does not run until a rollback, which must fit.
	code, m = e.upload(t, e.admin, packSized(t, "shop-a", "2.0.0", 8, 256))
	expectRefusal(t, "a newer, larger version", code, m, 409, "installing shop-a@2.0.0", "256 MiB")
	if code, m := e.upload(t, e.admin, packSized(t, "shop-a", "0.9.0", 8, 256)); code != 201 {
		t.Fatalf("an older version, kept for rollback: %d %v", code, m)
	}
	code, m = e.postJSON(t, e.admin, "/api/plugins/shop-a/rollback", `{"version":"0.9.0"}`)
	expectRefusal(t, "rolling back to a larger version", code, m, 409, "rolling back to shop-a@0.9.0", "budget of 224 MiB")
	if code, m := e.upload(t, e.admin, packSized(t, "shop-a", "1.1.0", 2, 256)); code != 201 {
		t.Errorf("a newer, smaller version: %d %v", code, m)
	}

	// Trials: the running version's instances are counted already; a
	// trial of any other holds one instance (256 pages, 16 MiB) while it
	// runs, which must fit too. The running plugins hold 160 MiB now.
	e.srv.plugins.budget.cfg.PerOrg = 170 << 20
	try := `{"kind":"tool","name":"lookup_product","input":{"query":"serum"}}`
	if code, m := e.postJSON(t, e.admin, "/api/plugins/shop-b/try", try); code != 200 || m["ok"] != true {
		t.Errorf("a trial of a running version: %d %v", code, m)
	}
	code, m = e.postJSON(t, e.admin, "/api/plugins/shop-c/try", try)
	expectRefusal(t, "a trial of a disabled plugin past the budget", code, m, 429, "trying shop-c@1.0.0", "16 MiB (1 instance × 256 pages × 64 KiB)")
	e.srv.plugins.budget.cfg.PerOrg = 224 << 20
	if code, m := e.postJSON(t, e.admin, "/api/plugins/shop-c/try", try); code != 200 || m["ok"] != true {
		t.Errorf("a trial within the budget: %d %v", code, m)
	}
	if org, _, err := e.srv.plugins.budget.usage(context.Background(), mustUser(t, e, "admin").OrgID, ""); err != nil || org != 160<<20 {
		t.Errorf("after the trials the organisation reserves %d bytes (%v), want 160 MiB: a trial's hold outlived it", org, err)
	}
}

// TestPluginMemoryTotalBudget: the organisations together are bounded too.
func TestPluginMemoryTotalBudget(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	e.srv.plugins.budget.cfg = PluginMemory{Total: 100 << 20, PerOrg: 1 << 30, DeveloperPlugin: 1 << 30}
	ctx := context.Background()
	org, err := e.store.CreateOrg(ctx, "Second org")
	if err != nil {
		t.Fatal(err)
	}
	op, err := e.store.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "op2", Role: store.RoleOperator, PasswordHash: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := e.store.CreateAPIToken(ctx, op.Scope(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if code, m := e.upload(t, e.admin, packSized(t, "shop-a", "1.0.0", 4, 256)); code != 201 {
		t.Fatalf("first org: %d %v", code, m)
	}
	code, m := e.upload(t, token, packSized(t, "shop-a", "1.0.0", 4, 256))
	expectRefusal(t, "second org past the total", code, m, 409, "all organisations would reserve 128 MiB", "budget of 100 MiB")
}

// TestRetiredVersionsAreUnloaded: a version an organisation stopped
// running leaves the sandbox once turns that took it have had time to end,
// so what is loaded is what the budget counts.
func TestRetiredVersionsAreUnloaded(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	var mu sync.Mutex
	clock := time.Unix(1e9, 0)
	e.srv.plugins.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	ctx := context.Background()
	admin := mustUser(t, e, "admin")
	versionID := func(v string) string {
		pv, err := e.store.PluginVersion(ctx, admin.Scope(), "shop-tools", v)
		if err != nil {
			t.Fatal(err)
		}
		return pv.ID
	}
	turn := func() {
		if _, err := e.srv.streamPlugins(ctx, admin.OrgID, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if code, m := e.upload(t, e.admin, packExample(t, "shop", v, nil)); code != 201 {
			t.Fatalf("upload %s: %d %v", v, code, m)
		}
		turn()
	}
	old, cur := versionID("1.0.0"), versionID("1.1.0")
	if e.srv.plugins.loadedVersion(old) == nil || e.srv.plugins.loadedVersion(cur) == nil {
		t.Fatal("both versions should be loaded within the grace")
	}
	mu.Lock()
	clock = clock.Add(retireGrace)
	mu.Unlock()
	turn()
	if e.srv.plugins.loadedVersion(old) != nil {
		t.Error("the replaced version is still loaded after the grace")
	}
	if e.srv.plugins.loadedVersion(cur) == nil {
		t.Error("the running version was unloaded")
	}
	// Disabling retires the running version the same way.
	if code, m := e.postJSON(t, e.admin, "/api/plugins/shop-tools/disable", ""); code != 200 {
		t.Fatalf("disable: %d %v", code, m)
	}
	turn()
	mu.Lock()
	clock = clock.Add(retireGrace)
	mu.Unlock()
	turn()
	if e.srv.plugins.loadedVersion(cur) != nil {
		t.Error("a disabled plugin's version is still loaded after the grace")
	}
}
