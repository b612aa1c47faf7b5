package console

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/liveroom"
)

// body encodes v as a JSON request body.
func body(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expect fails the test unless the call answered want; it returns the
// decoded body.
func (e *testEnv) expect(t *testing.T, want int, token, method, path string, req any) map[string]any {
	t.Helper()
	ct, b := "", ""
	if req != nil {
		ct, b = "application/json", body(t, req)
	}
	code, m, raw := e.call(t, token, method, path, ct, b)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
	}
	return m
}

// expectField fails the test unless the call answered want with an error
// naming field.
func (e *testEnv) expectField(t *testing.T, want int, field, token, method, path string, req any) {
	t.Helper()
	ct, b := "", ""
	if req != nil {
		ct = "application/json"
		if s, ok := req.(string); ok {
			b = s
		} else {
			b = body(t, req)
		}
	}
	code, m, raw := e.call(t, token, method, path, ct, b)
	if code != want || m["field"] != field {
		t.Errorf("%s %s %s: %d %s, want %d naming field %q", method, path, b, code, raw, want, field)
	}
}

// withHookPlugins installs the example plugins the demo harness names as
// the organisation's plugins (built once and cached), as serve does on
// first run: gates and evaluations run the organisation's active versions.
func withHookPlugins(t *testing.T, e *testEnv) {
	t.Helper()
	// Hooks on a busy test machine must not turn into fail-closed denials.
	e.srv.cfg.Sandbox.SetTimeoutFloor(5 * time.Second)
	e.srv.cfg.PluginDirs = nil
	e.srv.cfg.PluginDirs = append(e.srv.cfg.PluginDirs, testfixture.DemoPluginDirs()...)
	if err := e.srv.InstallExamples(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// editedDemo returns the demo harness changed by edit, as a JSON document.
func editedDemo(t *testing.T, e *testEnv, edit func(h *harness.Harness)) (string, *harness.Harness) {
	t.Helper()
	h := e.demo.Clone()
	edit(h)
	doc, err := harness.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(doc), h
}

// commitVersion opens a draft of the demo with the given document and
// commits it, returning the new version.
func commitVersion(t *testing.T, e *testEnv, doc string) string {
	t.Helper()
	d := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "document": doc})
	v := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts/"+d["id"].(string)+"/commit", map[string]any{"revision": d["revision"]})
	return v["version"].(map[string]any)["version"].(string)
}

func TestHarnessVersionsAreSeededAndScoped(t *testing.T) {
	e := newTestEnv(t, nil)
	code, _, raw := e.call(t, e.admin, "GET", "/api/harnesses", "", "")
	var list []harnessSummary
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil || len(list) != 1 {
		t.Fatalf("list: %d %s", code, raw)
	}
	if list[0].Version != e.demo.Version() || list[0].Streams != 1 || list[0].Short != e.demo.ShortVersion() {
		t.Errorf("seeded version = %+v", list[0])
	}
	// The demo stream's version has its first-run release.
	code, _, raw = e.call(t, e.admin, "GET", "/api/releases", "", "")
	var rels []store.HarnessRelease
	if err := json.Unmarshal(raw, &rels); code != 200 || err != nil || len(rels) != 1 {
		t.Fatalf("releases: %d %s", code, raw)
	}
	if r := rels[0]; r.Version != e.demo.Version() || len(r.Streams) != 1 || r.Streams[0].StreamID != e.demoStream || r.CreatedBy != "system" {
		t.Errorf("first-run release = %+v", r)
	}
	// A second server over the same store seeds nothing twice.
	srv2, err := New(e.srv.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e2 := *e
	e2.srv = srv2
	if _, _, raw := e2.call(t, e.admin, "GET", "/api/releases", "", ""); strings.Count(string(raw), `"id"`) != 1 {
		t.Errorf("after a restart: %s", raw)
	}

	// Merchants and developers read versions but manage nothing.
	for _, tok := range []string{e.merchant, e.rival, e.dev} {
		e.expect(t, 200, tok, "GET", "/api/harnesses", nil)
		e.expect(t, 200, tok, "GET", "/api/harnesses/"+e.demo.ShortVersion(), nil)
		for _, r := range []struct{ method, path string }{
			{"GET", "/api/harness-drafts"}, {"POST", "/api/harness-drafts"}, {"GET", "/api/harness-gates"},
			{"POST", "/api/harness-gates"}, {"GET", "/api/releases"}, {"POST", "/api/releases"},
			{"POST", "/api/releases/x/rollback"}, {"GET", "/api/harness-compat"}, {"GET", "/api/evolution/failures"},
			{"GET", "/api/evolution/loops"}, {"POST", "/api/evolution/loops"}, {"POST", "/api/hsa/preview"},
		} {
			if code, _, raw := e.call(t, tok, r.method, r.path, "application/json", `{}`); code != 403 {
				t.Errorf("%s %s as a non-operator: %d %s, want 403", r.method, r.path, code, raw)
			}
		}
	}
	// A merchant counts only their own streams.
	code, _, raw = e.call(t, e.rival, "GET", "/api/harnesses", "", "")
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil || list[0].Streams != 0 {
		t.Errorf("rival sees the demo stream's binding: %s", raw)
	}
}

func TestDraftSavesAreOptimistic(t *testing.T) {
	e := newTestEnv(t, nil)
	d := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "format": "yaml"})
	id := d["id"].(string)
	if d["revision"].(float64) != 1 || d["base_version"] != e.demo.Version() || !strings.Contains(d["document"].(string), `"name": "demo-live-shop"`) {
		t.Fatalf("new draft = %v", d)
	}
	// Two operators loaded revision 1; the second save conflicts and the
	// first one's text is what stays.
	first := strings.Replace(d["document"].(string), `"name": "demo`, `"name": "first-demo`, 1)
	second := strings.Replace(d["document"].(string), `"name": "demo`, `"name": "second-demo`, 1)
	e.expect(t, 200, e.admin, "PUT", "/api/harness-drafts/"+id, map[string]any{"document": first, "revision": 1})
	code, m, _ := e.call(t, e.admin, "PUT", "/api/harness-drafts/"+id, "application/json", body(t, map[string]any{"document": second, "revision": 1}))
	if code != 409 || !strings.Contains(m["error"].(string), "reload") {
		t.Fatalf("concurrent save: %d %v, want 409", code, m)
	}
	got := e.expect(t, 200, e.admin, "GET", "/api/harness-drafts/"+id, nil)
	if got["document"] != first || got["revision"].(float64) != 2 {
		t.Fatalf("after the conflict: rev %v, first's text kept: %v", got["revision"], got["document"] == first)
	}
	// Committing a stale revision conflicts too.
	e.expectField(t, 400, "revision", e.admin, "POST", "/api/harness-drafts/"+id+"/commit", map[string]any{})
	if code, _, _ := e.call(t, e.admin, "POST", "/api/harness-drafts/"+id+"/commit", "application/json", `{"revision":1}`); code != 409 {
		t.Errorf("stale commit: %d, want 409", code)
	}
	// An invalid document saves (work in progress) but does not commit.
	broken := strings.Replace(first, `"retries":`, `"retriez":`, 1)
	e.expect(t, 200, e.admin, "PUT", "/api/harness-drafts/"+id, map[string]any{"document": broken, "revision": 2})
	code, m, raw := e.call(t, e.admin, "POST", "/api/harness-drafts/"+id+"/commit", "application/json", `{"revision":3}`)
	if code != 422 || m["field"] != "document" || !strings.Contains(string(raw), `"line"`) {
		t.Fatalf("invalid commit: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/harness-drafts/"+id+"/diff", "", ""); code != 422 {
		t.Errorf("diff of an invalid draft: %d, want 422", code)
	}
	e.expect(t, 200, e.admin, "PUT", "/api/harness-drafts/"+id, map[string]any{"document": first, "revision": 3})
	diff := e.expect(t, 200, e.admin, "GET", "/api/harness-drafts/"+id+"/diff", nil)
	if !strings.Contains(body(t, diff["changes"]), `"path":"name"`) {
		t.Errorf("draft diff = %v", diff["changes"])
	}
	v := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts/"+id+"/commit", map[string]any{"revision": 4, "notes": "renamed"})
	ver := v["version"].(map[string]any)
	if ver["parent"] != e.demo.Version() || ver["author"] != "admin" || ver["notes"] != "renamed" || !strings.HasPrefix(ver["name"].(string), "first-") {
		t.Errorf("committed version = %v", ver)
	}
	short := strings.TrimPrefix(ver["version"].(string), "sha256:")[:12]
	got = e.expect(t, 200, e.admin, "GET", "/api/harnesses/"+short, nil)
	if got["version"] != ver["version"] {
		t.Errorf("by short hash: %v", got["version"])
	}
	// A version is immutable: committing the same content again is the
	// same version, first record kept.
	d2 := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts", map[string]any{"base_version": short, "notes": "again"})
	v2 := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts/"+d2["id"].(string)+"/commit", map[string]any{"revision": 1})
	if vv := v2["version"].(map[string]any); vv["version"] != ver["version"] || vv["notes"] != "renamed" {
		t.Errorf("recommit = %v", vv)
	}
	e.expect(t, 204, e.admin, "DELETE", "/api/harness-drafts/"+id, nil)
	e.expect(t, 404, e.admin, "GET", "/api/harness-drafts/"+id, nil)
}

// TestDraftNotes checks that a save keeps the notes it does not mention
// and changes them only when it names them.
func TestDraftNotes(t *testing.T) {
	e := newTestEnv(t, nil)
	d := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "notes": "why: shorter replies"})
	id, doc := d["id"].(string), d["document"].(string)
	for _, c := range []struct {
		name string
		save map[string]any
		want string
	}{
		{"a save without notes keeps them", map[string]any{"document": doc}, "why: shorter replies"},
		{"a save with notes replaces them", map[string]any{"document": doc, "notes": "why: fewer retries"}, "why: fewer retries"},
		{"a save with empty notes clears them", map[string]any{"document": doc, "notes": ""}, ""},
		{"a save without notes keeps them cleared", map[string]any{"document": doc}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := e.expect(t, 200, e.admin, "GET", "/api/harness-drafts/"+id, nil)
			c.save["revision"] = cur["revision"]
			saved := e.expect(t, 200, e.admin, "PUT", "/api/harness-drafts/"+id, c.save)
			if saved["notes"] != c.want && !(c.want == "" && saved["notes"] == nil) {
				t.Errorf("notes after the save = %q, want %q", saved["notes"], c.want)
			}
		})
	}
}

func TestHarnessBadInputNamesTheField(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, c := range []struct {
		code          int
		field, method string
		path          string
		req           any
	}{
		{400, "body", "POST", "/api/harness-drafts", `{"base":"x"}`},
		{400, "format", "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "format": "xml"}},
		{404, "base_version", "POST", "/api/harness-drafts", map[string]any{"base_version": "0123456789ab"}},
		{400, "base_version", "POST", "/api/harness-drafts", map[string]any{"name": "x"}},
		{400, "revision", "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "revision": 3}},
		{400, "old", "POST", "/api/harness/diff", map[string]any{"new": e.demo.Version()}},
		{404, "new", "POST", "/api/harness/diff", map[string]any{"old": e.demo.Version(), "new": "sha256:00000000"}},
		{404, "candidate", "POST", "/api/harness-gates", map[string]any{"candidate": "deadbeefdead"}},
		{400, "candidate", "POST", "/api/harness-gates", map[string]any{}},
		{400, "n", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "n": -1}},
		{400, "n", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "n": 1000}},
		{400, "suites", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "suites": []string{"bogus"}}},
		{400, "suites", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "suites": []string{"lsqa", "lsqa"}}},
		{400, "tolerance", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "tolerance": -2}},
		{404, "loop_id", "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "loop_id": "nope"}},
		{400, "streams", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion()}},
		{400, "canary_percent", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion(), "canary_percent": 150}},
		{400, "canary_percent", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion(), "canary_percent": 10, "streams": []string{e.demoStream}}},
		{409, "gate_id", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion(), "streams": []string{e.demoStream}}},
		{404, "gate_id", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion(), "streams": []string{e.demoStream}, "gate_id": "nope"}},
		{404, "streams[0]", "POST", "/api/releases", map[string]any{"version": e.demo.ShortVersion(), "streams": []string{"nope"}, "override": "test"}},
		{404, "version", "POST", "/api/releases", map[string]any{"version": "sha256:ffffffffffff", "canary_percent": 5}},
		{400, "family", "POST", "/api/hsa/preview", map[string]any{"version": e.demo.ShortVersion(), "family": "no-such-family"}},
		{400, "family", "POST", "/api/hsa/preview", map[string]any{"version": e.demo.ShortVersion()}},
		{400, "pool", "POST", "/api/hsa/preview", map[string]any{"version": e.demo.ShortVersion(), "pool": "other"}},
		{400, "gold[0].name", "POST", "/api/hsa/preview", map[string]any{"version": e.demo.ShortVersion(), "pool": "train", "gold": []any{map[string]any{}}}},
		{404, "draft_id", "POST", "/api/hsa/preview", map[string]any{"draft_id": "nope", "family": "tool-rename"}},
		{400, "cause", "POST", "/api/evolution/loops", map[string]any{"cause": "bad luck", "title": "x", "base_version": e.demo.ShortVersion()}},
		{400, "title", "POST", "/api/evolution/loops", map[string]any{"cause": CauseWrongTool, "base_version": e.demo.ShortVersion()}},
		{400, "base_version", "POST", "/api/evolution/loops", map[string]any{"cause": CauseWrongTool, "title": "x"}},
		{404, "version", "GET", "/api/evolution/failures?version=abcdefabcdef", nil},
		{404, "gate", "GET", "/api/evolution/failures?gate=nope", nil},
	} {
		e.expectField(t, c.code, c.field, e.admin, c.method, c.path, c.req)
	}
	// A rival organisation's version is invisible.
	ctx := context.Background()
	org, err := e.store.CreateOrg(ctx, "Other org")
	if err != nil {
		t.Fatal(err)
	}
	doc, h := editedDemo(t, e, func(h *harness.Harness) { h.Description = "other org" })
	if _, _, err := e.store.PutHarnessVersion(ctx, systemScope(org.ID), store.HarnessVersion{Version: h.Version(), Name: h.Name, Document: json.RawMessage(doc)}); err != nil {
		t.Fatal(err)
	}
	e.expect(t, 404, e.admin, "GET", "/api/harnesses/"+h.ShortVersion(), nil)
}

func TestHSAPreview(t *testing.T) {
	e := newTestEnv(t, nil)
	gold := []map[string]any{{"name": "product_lookup", "arguments": map[string]any{"item_id": "A1"}}}
	req := map[string]any{"version": e.demo.ShortVersion(), "family": "tool-rename", "seed": 7, "gold": gold}
	a := e.expect(t, 200, e.admin, "POST", "/api/hsa/preview", req)
	b := e.expect(t, 200, e.admin, "POST", "/api/hsa/preview", req)
	if body(t, a) != body(t, b) {
		t.Error("the same family and seed gave two variants")
	}
	variant := a["variant"].(map[string]any)
	if variant["version"] == e.demo.Version() || !strings.Contains(variant["prompt"].(string), "") {
		t.Errorf("variant = %v", variant["version"])
	}
	mapped := a["gold"].([]any)[0].(map[string]any)
	vc := mapped["variant"].(map[string]any)
	if mapped["error"] != nil || vc["name"] == "product_lookup" {
		t.Errorf("gold mapping = %v", mapped)
	}
	if len(a["changes"].([]any)) == 0 || a["base"].(map[string]any)["prompt"] == variant["prompt"] {
		t.Error("the variant shows no change from the base")
	}
	pool := e.expect(t, 200, e.admin, "POST", "/api/hsa/preview", map[string]any{"version": e.demo.ShortVersion(), "pool": "heldout", "n": 2, "seed": 3})
	if n := len(pool["record"].(map[string]any)["transforms"].([]any)); n < 1 || n > 2 {
		t.Errorf("pool preview applied %d families", n)
	}
	code, _, raw := e.call(t, e.admin, "GET", "/api/hsa/families", "", "")
	if code != 200 || !strings.Contains(string(raw), `"name":"tool-rename-opaque","pool":"heldout"`) {
		t.Errorf("families: %d %.200s", code, raw)
	}
}

func TestCanaryChoiceIsDeterministic(t *testing.T) {
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("stream-%02d", i)
	}
	v := "sha256:" + strings.Repeat("ab", 32)
	prev := []string{}
	for pct := 1; pct <= 100; pct++ {
		got := canaryStreams(v, ids, pct)
		if want := (40*pct + 99) / 100; len(got) != want {
			t.Fatalf("%d%% of 40 chose %d streams, want %d", pct, len(got), want)
		}
		rev := slices.Clone(ids)
		slices.Reverse(rev)
		if again := canaryStreams(v, rev, pct); !slices.Equal(got, again) {
			t.Fatalf("%d%%: the choice depends on the order of the streams", pct)
		}
		for _, id := range prev {
			if !slices.Contains(got, id) {
				t.Fatalf("%d%% dropped %s that a smaller canary chose", pct, id)
			}
		}
		prev = got
	}
	other := canaryStreams("sha256:"+strings.Repeat("cd", 32), ids, 25)
	if slices.Equal(other, canaryStreams(v, ids, 25)) {
		t.Error("two versions chose the same canary streams: the choice ignores the version")
	}
	if canaryStreams(v, nil, 50) != nil || canaryStreams(v, ids, 0) != nil {
		t.Error("an empty canary chose streams")
	}

	// Through the API: a 30% canary of 10 streams moves the 3 it names.
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	merchant, _ := e.store.UserByUsername(ctx, "merchant")
	for i := range 9 {
		if _, err := e.store.CreateStream(ctx, admin.Scope(), store.Stream{MerchantID: merchant.MerchantID, Name: fmt.Sprintf("s%d", i),
			HarnessVersion: e.demo.Version()}); err != nil {
			t.Fatal(err)
		}
	}
	doc, h := editedDemo(t, e, func(h *harness.Harness) { h.Description = "canary" })
	ver := commitVersion(t, e, doc)
	r := e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver, "canary_percent": 30, "override": "canary test without a gate"})
	streams, _ := e.store.Streams(ctx, admin.Scope())
	var all, on []string
	for _, st := range streams {
		all = append(all, st.ID)
		if st.HarnessVersion == h.Version() {
			on = append(on, st.ID)
		}
	}
	slices.Sort(on)
	if want := canaryStreams(h.Version(), all, 30); !slices.Equal(on, want) || len(on) != 3 {
		t.Errorf("canary moved %v, want %v", on, want)
	}
	if r["override"] != "canary test without a gate" || r["canary_percent"].(float64) != 30 {
		t.Errorf("release = %v", r)
	}
}

// waitGate polls a gate until it has finished.
func waitGate(t *testing.T, e *testEnv, id string) map[string]any {
	t.Helper()
	for range 1200 {
		g := e.expect(t, 200, e.admin, "GET", "/api/harness-gates/"+id, nil)
		if g["state"] != store.GateRunning {
			return g
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the gate did not finish in 2 minutes")
	return nil
}

// logGateFailures logs the items of a suite that a gate stored as
// failed: what they replied and why, to tell a flaky machine from a
// regression.
func logGateFailures(t *testing.T, e *testEnv, gateID, suite string) {
	t.Helper()
	admin, err := e.store.UserByUsername(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	fails, err := e.store.HarnessFailures(context.Background(), admin.Scope(), gateID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fails {
		if f.Suite == suite {
			t.Logf("  %s under %.12s: %s, score %.2f, %q, reply %q", f.ItemID, f.Version, f.Cause, f.Score, f.Deductions, f.Reply)
		}
	}
}

// servedByHost makes the rule-based host the console's serving model: a
// real model the gate measures, fast enough for tests.
func servedByHost(e *testEnv) {
	e.srv.cfg.Model, e.srv.cfg.ModelName = liveroom.Host{}, liveroom.HostModelName
}

func TestGatePublishRollback(t *testing.T) {
	e := newTestEnv(t, prometheus.NewRegistry())
	withHookPlugins(t, e)
	servedByHost(e)
	// A harmless edit: the candidate should score like the current version.
	doc, cand := editedDemo(t, e, func(h *harness.Harness) { h.Description += " (gate test)" })
	ver := commitVersion(t, e, doc)
	g := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", map[string]any{"candidate": ver, "n": 3})
	total := float64(2 * len(evalSuites()) * 3)
	if g["baseline"] != e.demo.Version() || g["total"].(float64) != total {
		t.Fatalf("gate = %v", g)
	}
	g = waitGate(t, e, g["id"].(string))
	if g["state"] != store.GatePassed || g["done"].(float64) != total {
		t.Fatalf("gate finished %v (%v): %v", g["state"], g["error"], g["report"])
	}
	var rep gateReport
	if err := json.Unmarshal([]byte(body(t, g["report"])), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Suites) != len(evalSuites()) || rep.Model != liveroom.HostModelName || rep.ModelKind != gateServing || rep.Sanity ||
		rep.Candidate != cand.Version() || len(rep.Warnings) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	for _, s := range rep.Suites {
		if s.Baseline.N != 3 || s.Candidate.N != 3 || s.Delta != 0 || len(s.Categories) == 0 || s.DeltaCI95 != [2]float64{0, 0} {
			t.Errorf("suite %s: %+v", s.Suite, s)
			logGateFailures(t, e, g["id"].(string), s.Suite)
		}
	}
	// The hooks ran under the test's floor, not the manifests' deadlines
	// of a few hundred milliseconds that a busy machine overruns.
	e.srv.plugins.mu.Lock()
	for _, p := range e.srv.plugins.loaded {
		if p.Timeout() < 5*time.Second {
			t.Errorf("plugin %s ran with a %v deadline", p.Name(), p.Timeout())
		}
	}
	e.srv.plugins.mu.Unlock()
	// The finished gate's event stream says so at once.
	code, _, raw := e.call(t, e.admin, "GET", "/api/harness-gates/"+g["id"].(string)+"/events", "", "")
	if code != 200 || !strings.HasPrefix(string(raw), "event: done\n") {
		t.Errorf("events of a finished gate: %d %s", code, raw)
	}
	// The compatibility view has the serving model under both versions.
	compat := e.expect(t, 200, e.admin, "GET", "/api/harness-compat", nil)
	if cells := compat["cells"].([]any); len(cells) != 2 || len(compat["suites"].([]any)) != 4 {
		t.Errorf("compat = %v", compat)
	}

	// Publish to the demo stream through the gate; the stream switches.
	rel := e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": cand.ShortVersion(), "streams": []string{e.demoStream}})
	if rel["gate_id"] != g["id"] || rel["override"] != "" || rel["state"] != store.ReleaseActive {
		t.Errorf("release = %v", rel)
	}
	st := e.expect(t, 200, e.merchant, "GET", "/api/streams/"+e.demoStream, nil)
	if st["harness_version"] != cand.Version() {
		t.Fatalf("stream runs %v after publish", st["harness_version"])
	}
	// The merchant cannot roll it back; the operator can, in one call.
	e.expect(t, 403, e.merchant, "POST", "/api/releases/"+rel["id"].(string)+"/rollback", nil)
	rb := e.expect(t, 200, e.admin, "POST", "/api/releases/"+rel["id"].(string)+"/rollback", nil)
	if len(rb["restored"].([]any)) != 1 || rb["release"].(map[string]any)["state"] != store.ReleaseRolledBack {
		t.Errorf("rollback = %v", rb)
	}
	st = e.expect(t, 200, e.merchant, "GET", "/api/streams/"+e.demoStream, nil)
	if st["harness_version"] != e.demo.Version() {
		t.Errorf("stream runs %v after rollback", st["harness_version"])
	}
	e.expect(t, 409, e.admin, "POST", "/api/releases/"+rel["id"].(string)+"/rollback", nil)
	e.expect(t, 404, e.admin, "POST", "/api/releases/nope/rollback", nil)
	_, _, metrics := e.call(t, "", "GET", "/metrics", "", "")
	for _, series := range []string{`livehat_harness_gates_total{state="passed"} 1`, "livehat_harness_gate_items_total 24",
		`livehat_harness_releases_total{kind="streams"} 1`, "livehat_harness_rollbacks_total 1"} {
		if !strings.Contains(string(metrics), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// TestGateWarnsOfMissingPlugins runs a gate in a console whose sandbox
// lacks the plugins the harness names: the report says so.
func TestGateWarnsOfMissingPlugins(t *testing.T) {
	e := newTestEnv(t, nil)
	servedByHost(e)
	g := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", map[string]any{"candidate": e.demo.ShortVersion(), "n": 1, "suites": []string{"lsqa"}})
	if g["total"].(float64) != 1 {
		t.Errorf("a gate of a version against itself runs it once: total %v", g["total"])
	}
	// The event stream ends with the finished gate, whatever progress
	// events came before it.
	code, _, raw := e.call(t, e.admin, "GET", "/api/harness-gates/"+g["id"].(string)+"/events", "", "")
	events := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	last := events[len(events)-1]
	if code != 200 || !strings.HasPrefix(last, "event: done\ndata: ") || strings.Contains(last, `"state":"running"`) {
		t.Fatalf("events: %d %s", code, raw)
	}
	for _, ev := range events[:len(events)-1] {
		var p gateProgress
		if !strings.HasPrefix(ev, "event: progress\ndata: ") || json.Unmarshal([]byte(strings.TrimPrefix(ev, "event: progress\ndata: ")), &p) != nil || p.Total != 1 {
			t.Errorf("progress event %q", ev)
		}
	}
	g = waitGate(t, e, g["id"].(string))
	if w := body(t, g["report"].(map[string]any)["warnings"]); !strings.Contains(w, `plugin \"compliance\"`) {
		t.Errorf("warnings = %s", w)
	}
}

func TestEvolutionLoop(t *testing.T) {
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	servedByHost(e)
	// A candidate with the shortest reply limit: the expert's replies no
	// longer fit, which its sanity check must show as regressions with causes.
	doc, short := editedDemo(t, e, func(h *harness.Harness) { h.Pipeline.ReplyChars.Value = h.Pipeline.ReplyChars.Min })
	ver := commitVersion(t, e, doc)
	g := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", map[string]any{"candidate": ver, "n": 3, "suites": []string{"lsqa", "strategy"}, "model": "expert"})
	g = waitGate(t, e, g["id"].(string))
	if g["state"] != store.GateRegressed {
		t.Fatalf("gate of a 60-character limit: %v %v", g["state"], body(t, g["report"]))
	}
	// The expert's check counts for no release: shipping needs a gate of
	// the serving model, or an override reason.
	e.expectField(t, 409, "gate_id", e.admin, "POST", "/api/releases", map[string]any{"version": ver, "streams": []string{e.demoStream}})
	e.expectField(t, 409, "gate_id", e.admin, "POST", "/api/releases", map[string]any{"version": ver, "streams": []string{e.demoStream}, "gate_id": g["id"]})

	fails := e.expect(t, 200, e.admin, "GET", "/api/evolution/failures?version="+short.ShortVersion(), nil)
	causes := fails["causes"].([]any)
	if len(causes) == 0 {
		t.Fatalf("no failures grouped: %v", fails)
	}
	first := causes[0].(map[string]any)
	for _, c := range causes {
		c := c.(map[string]any)
		t.Logf("%s: %v failed items", c["cause"], c["count"])
	}
	item := first["items"].([]any)[0].(map[string]any)
	if first["count"].(float64) < 1 || item["version"] != short.Version() || len(item["deductions"].([]any)) == 0 {
		t.Errorf("failure group = %v", first)
	}

	// Live traces of streams on the version join the gates' failures.
	e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver, "streams": []string{e.demoStream}, "override": "live trace test"})
	for i, steps := range []string{
		`[{"kind":"hook","name":"compliance","event":"after_response"},{"kind":"retry","output":"the reply makes a banned claim"}]`,
		`[{"kind":"tool","name":"product_lookup","error":"item_id: required"}]`,
		`[{"kind":"tool","name":"product_lookup"}]`,
	} {
		if err := e.store.AddLiveTurn(context.Background(), store.LiveTurn{ID: fmt.Sprintf("turn-%d", i), StreamID: e.demoStream,
			Source: store.TurnSourceLive, Event: "viewer_message", Input: "多少钱", Reply: "<b>99</b>", Outcome: "replied",
			HarnessVersion: short.Version(), Steps: json.RawMessage(steps)}); err != nil {
			t.Fatal(err)
		}
	}
	fails = e.expect(t, 200, e.admin, "GET", "/api/evolution/failures?version="+short.ShortVersion(), nil)
	liveByCause := map[string]int{}
	for _, c := range fails["causes"].([]any) {
		for _, it := range c.(map[string]any)["items"].([]any) {
			if it := it.(map[string]any); it["suite"] == "live" {
				liveByCause[c.(map[string]any)["cause"].(string)]++
			}
		}
	}
	if fails["live_turns"].(float64) != 3 || liveByCause[CauseHookRejection] != 1 || liveByCause[CauseWrongTool] != 1 {
		t.Errorf("live failures: %v of %v turns", liveByCause, fails["live_turns"])
	}

	// Diagnose → edit → evaluate → ship, each step kept.
	lp := e.expect(t, 201, e.admin, "POST", "/api/evolution/loops", map[string]any{"cause": first["cause"], "title": "replies too long",
		"base_version": short.ShortVersion(), "diagnosis": "the limit is too short for prices", "items": []string{item["item_id"].(string)}})
	loop, draft := lp["loop"].(map[string]any), lp["draft"].(map[string]any)
	if draft["loop_id"] != loop["id"] || draft["base_version"] != short.Version() {
		t.Fatalf("loop draft = %v", draft)
	}
	fixed, _ := editedDemo(t, e, func(h *harness.Harness) { h.Description += " (fixed)" })
	d := e.expect(t, 200, e.admin, "PUT", "/api/harness-drafts/"+draft["id"].(string), map[string]any{"document": fixed, "revision": 1})
	v := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts/"+draft["id"].(string)+"/commit", map[string]any{"revision": d["revision"]})
	newVer := v["version"].(map[string]any)["version"].(string)
	g2 := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", map[string]any{"candidate": newVer, "n": 3, "suites": []string{"lsqa"},
		"loop_id": loop["id"]})
	if g2 = waitGate(t, e, g2["id"].(string)); g2["state"] != store.GatePassed {
		t.Fatalf("gate of the fix: %v %v: %s", g2["state"], g2["error"], body(t, g2["report"]))
	}
	e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": newVer, "canary_percent": 100, "loop_id": loop["id"]})
	got := e.expect(t, 200, e.admin, "GET", "/api/evolution/loops/"+loop["id"].(string), nil)
	var kinds []string
	for _, ev := range got["events"].([]any) {
		kinds = append(kinds, ev.(map[string]any)["kind"].(string))
	}
	if got["state"] != store.LoopShipped || !slices.Equal(kinds, []string{"diagnosis", "edit", "evaluation", "decision"}) {
		t.Errorf("loop %v with events %v", got["state"], kinds)
	}
	e.expect(t, 409, e.admin, "POST", "/api/evolution/loops/"+loop["id"].(string)+"/close", map[string]any{"note": "late"})
	code, _, raw := e.call(t, e.admin, "GET", "/api/evolution/loops", "", "")
	if code != 200 || !strings.Contains(string(raw), `"title":"replies too long"`) {
		t.Errorf("loops: %d %s", code, raw)
	}
}

// evalItem is the part of an item result the cause classifier reads.
type evalItem struct {
	outcome    runtime.Outcome
	err        string
	deductions []string
}

func (i evalItem) result() eval.ItemResult {
	return eval.ItemResult{Outcome: i.outcome, Error: i.err, Grade: liveroom.Grade{Deductions: i.deductions}}
}

// TestFailureCauses classifies the live-room grader's deductions.
func TestFailureCauses(t *testing.T) {
	for d, want := range map[string]string{
		`missing call product_lookup({"item_id":"A1"})`:                      CauseWrongTool,
		`needless call check_stock({})`:                                      CauseWrongTool,
		`call send_link does not fit the harness: missing item_id`:           CauseWrongTool,
		`states the price 99 yuan`:                                           CauseWrongFact,
		`names an amount the tools did not give: 12 yuan`:                    CauseWrongFact,
		`makes a banned absolute claim "best in the world"`:                  CauseWrongFact,
		`reply skill price_answer was not loaded`:                            CauseMissingSkill,
		`safe line: compliance rejected the reply`:                           CauseHookRejection,
		`step 3 (price): reply skill price_answer was not loaded`:            CauseMissingSkill,
		`reply is 140 characters, over the 60 the harness allows for speech`: CauseReplyForm,
		`not run: context deadline exceeded`:                                 CauseRunError,
		`something new`:                                                      "",
	} {
		if got := deductionCause(d); got != want {
			t.Errorf("deductionCause(%q) = %q, want %q", d, got, want)
		}
	}
	it := func(outcome runtime.Outcome, errMsg string, ds ...string) evalItem {
		return evalItem{outcome, errMsg, ds}
	}
	for _, c := range []struct {
		in   evalItem
		want string
	}{
		{it(runtime.OutcomeReplied, "", "states the price", "missing call x()"), CauseWrongTool},
		{it(runtime.OutcomeSafeLine, "", "states the price"), CauseHookRejection},
		{it(runtime.OutcomeReplied, "", "something new"), CauseReplyForm},
		{it(runtime.OutcomeReplied, "boom", "states the price"), CauseRunError},
	} {
		if got := failureCause(c.in.result()); got != c.want {
			t.Errorf("failureCause(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGateModel checks which model a gate measures for each request and
// console: the serving model unless told otherwise, a checkpoint when one
// is named, the expert only when asked, and a clear refusal otherwise.
func TestGateModel(t *testing.T) {
	e := newTestEnv(t, nil)
	cand := e.demo.ShortVersion()
	for _, c := range []struct {
		name    string
		serving bool // the console serves the rule-based host
		req     map[string]any
		status  int
		field   string
		model   string
	}{
		{"no model served", false, map[string]any{}, 409, "model", ""},
		{"the serving model by default", true, map[string]any{}, 202, "", liveroom.HostModelName},
		{"the serving model by name", true, map[string]any{"model": "serving"}, 202, "", liveroom.HostModelName},
		{"the expert when asked", false, map[string]any{"model": "expert"}, 202, "", "expert"},
		{"a checkpoint needs its name", true, map[string]any{"model": "checkpoint"}, 400, "checkpoint", ""},
		{"the console's model as a checkpoint", true, map[string]any{"model": "checkpoint", "checkpoint": liveroom.HostModelName}, 202, "", liveroom.HostModelName},
		{"an unknown checkpoint", true, map[string]any{"model": "checkpoint", "checkpoint": "nope"}, 404, "checkpoint", ""},
		{"a checkpoint without its kind", true, map[string]any{"checkpoint": "x"}, 400, "checkpoint", ""},
		{"an unknown model", true, map[string]any{"model": "gpt"}, 400, "model", ""},
		{"the expert cannot replay live questions", false, map[string]any{"model": "expert", "replay": 3}, 400, "replay", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.srv.cfg.Model, e.srv.cfg.ModelName = nil, ""
			if c.serving {
				e.srv.cfg.Model, e.srv.cfg.ModelName = liveroom.Host{}, liveroom.HostModelName
			}
			req := map[string]any{"candidate": cand, "n": 1, "suites": []string{"lsqa"}}
			for k, v := range c.req {
				req[k] = v
			}
			code, m, raw := e.call(t, e.admin, "POST", "/api/harness-gates", "application/json", body(t, req))
			if code != c.status || (c.field != "" && m["field"] != c.field) {
				t.Fatalf("%d %s, want %d naming %q", code, raw, c.status, c.field)
			}
			if c.status == 202 {
				if m["model"] != c.model {
					t.Errorf("the gate measures %v, want %q", m["model"], c.model)
				}
				waitGate(t, e, m["id"].(string))
			}
		})
	}
}
