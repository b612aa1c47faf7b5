package console

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/livehat/livehat/harness"
)

// TestStreamHarnessOnlyThroughReleases: a merchant sees the stream's
// version and can ask for another, but only an operator's release binds
// one, and every binding is a recorded release.
func TestStreamHarnessOnlyThroughReleases(t *testing.T) {
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	doc, v2 := editedDemo(t, e, func(h *harness.Harness) { h.Description = "committed, never gated or released" })
	commitVersion(t, e, doc)
	path := "/api/streams/" + e.demoStream
	releases := func() int { return len(expectList(t, e, e.admin, "/api/releases")) }
	before := releases()

	st := e.expect(t, 200, e.merchant, "GET", path, nil)
	for _, c := range []struct {
		name  string
		token string
		ref   string
	}{
		{"a merchant, the full version", e.merchant, v2.Version()},
		{"a merchant, the short version", e.merchant, v2.ShortVersion()},
		{"an operator too", e.admin, v2.Version()},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := e.expect(t, 200, e.merchant, "GET", path, nil)
			e.expectField(t, 409, "harness_version", c.token, "PUT", path, map[string]any{"name": cur["name"], "persona": "warm",
				"harness_version": c.ref, "revision": cur["revision"]})
			if got := e.expect(t, 200, e.merchant, "GET", path, nil); got["harness_version"] != e.demo.Version() || got["persona"] == "warm" {
				t.Errorf("after the refused edit the stream runs %v with persona %v", got["harness_version"], got["persona"])
			}
		})
	}
	// The edit form sends the version it shows: that edit goes through.
	saved := e.expect(t, 200, e.merchant, "PUT", path, map[string]any{"name": st["name"], "persona": "warm",
		"harness_version": e.demo.ShortVersion(), "revision": st["revision"]})
	if saved["persona"] != "warm" || saved["harness_version"] != e.demo.Version() {
		t.Errorf("an edit that keeps the version: %v", saved)
	}
	if n := releases(); n != before {
		t.Errorf("stream edits recorded %d releases", n-before)
	}

	// The merchant asks; the operator sees the request; nothing moves.
	e.expectField(t, 409, "version", e.merchant, "POST", path+"/harness-requests", map[string]any{"version": e.demo.ShortVersion()})
	e.expectField(t, 404, "version", e.merchant, "POST", path+"/harness-requests", map[string]any{"version": "0123456789ab"})
	e.expect(t, 404, e.rival, "POST", path+"/harness-requests", map[string]any{"version": v2.ShortVersion()})
	req := e.expect(t, 201, e.merchant, "POST", path+"/harness-requests", map[string]any{"version": v2.ShortVersion(), "note": "for the holiday"})
	if req["state"] != "open" || req["version"] != v2.Version() || req["requested_by"] != "merchant" {
		t.Errorf("request = %v", req)
	}
	if list := expectList(t, e, e.admin, "/api/harness-requests"); len(list) != 1 {
		t.Errorf("the operator sees %d requests", len(list))
	}
	if list := expectList(t, e, e.rival, "/api/harness-requests"); len(list) != 0 {
		t.Errorf("another merchant sees %d requests", len(list))
	}
	matrix := e.expect(t, 200, e.admin, "GET", "/api/harness-compat", nil)["plugins"].(map[string]any)
	streams := matrix["streams"].([]any)
	if len(streams) != 1 || streams[0].(map[string]any)["requested_version"] != v2.Version() || streams[0].(map[string]any)["compatible"] != true {
		t.Errorf("matrix streams = %v", streams)
	}
	if got := e.expect(t, 200, e.merchant, "GET", path, nil); got["harness_version"] != e.demo.Version() {
		t.Fatalf("a request moved the stream to %v", got["harness_version"])
	}
	e.expect(t, 403, e.merchant, "POST", "/api/releases", map[string]any{"version": v2.Version(), "streams": []string{e.demoStream}, "override": "me"})

	// An operator's release binds it and grants the request.
	rel := e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": v2.Version(), "streams": []string{e.demoStream},
		"override": "the merchant asked for it"})
	if got := e.expect(t, 200, e.merchant, "GET", path, nil); got["harness_version"] != v2.Version() {
		t.Errorf("after the release the stream runs %v", got["harness_version"])
	}
	list := expectList(t, e, e.merchant, path+"/harness-requests")
	if r := list[0].(map[string]any); r["state"] != "granted" || r["release_id"] != rel["id"] {
		t.Errorf("request after the release = %v", r)
	}

	// A new stream: a merchant cannot bind one; an operator's binding is a release.
	e.expectField(t, 403, "harness_version", e.merchant, "POST", "/api/streams", map[string]any{"name": "new", "harness_version": v2.Version()})
	created := e.expect(t, 201, e.admin, "POST", "/api/streams", map[string]any{"name": "new", "merchant_id": st["merchant_id"],
		"harness_version": e.demo.ShortVersion()})
	if created["harness_version"] != e.demo.Version() {
		t.Errorf("created on %v", created["harness_version"])
	}
	last := expectList(t, e, e.admin, "/api/releases")[0].(map[string]any)
	if streams := last["streams"].([]any); last["version"] != e.demo.Version() || len(streams) != 1 ||
		streams[0].(map[string]any)["stream_id"] != created["id"] || last["override"] == "" {
		t.Errorf("the creation's release = %v", last)
	}
	admin, _ := e.store.UserByUsername(context.Background(), "admin")
	if rs, _ := e.store.HarnessReleases(context.Background(), admin.Scope()); len(rs) != before+2 {
		t.Errorf("%d releases, want %d", len(rs), before+2)
	}
}

// expectList GETs a path that answers a JSON list and returns it.
func expectList(t *testing.T, e *testEnv, token, path string) []any {
	t.Helper()
	code, _, raw := e.call(t, token, "GET", path, "", "")
	var out []any
	if code != 200 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("GET %s: %d %s, want a list", path, code, raw)
	}
	return out
}
