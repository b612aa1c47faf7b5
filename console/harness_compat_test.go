package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// TestPluginChangesKeepStreamsServed: a plugin upgrade, rollback or
// disable that would break a harness version a stream runs is refused,
// naming the stream, version, tool and argument, unless an operator
// overrides; one that breaks nothing goes through. The compatibility
// matrix shows every version against the installed plugins.
func TestPluginChangesKeepStreamsServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	// storefront 2.0.0 renames product_lookup's argument query to q.
	breaking := packExample(t, "storefront", "2.0.0", func(p *plugins.Package) {
		for i := range p.Manifest.Tools {
			if p.Manifest.Tools[i].Name == "product_lookup" {
				p.Manifest.Tools[i].Parameters = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)
			}
		}
	})
	compatible := packExample(t, "storefront", "1.1.0", nil)

	code, m := e.upload(t, e.admin, breaking)
	msg, _ := m["error"].(string)
	for _, want := range []string{"making storefront@2.0.0 active would break", `(streams "Demo beauty stream")`, `tool "product_lookup" argument "query"`,
		"the plugin does not declare", "?override="} {
		if !strings.Contains(msg, want) {
			t.Errorf("upload of a breaking version: %d %s; want it to say %q", code, msg, want)
		}
	}
	if code != 409 || m["field"] != "override" {
		t.Fatalf("upload of a breaking version: %d %v", code, m)
	}
	if code, m := e.upload(t, e.admin, compatible); code != 201 {
		t.Fatalf("upload of a compatible version: %d %v", code, m)
	}
	e.expectField(t, 409, "override", e.admin, "POST", "/api/plugins/storefront/disable", nil)
	e.expectField(t, 409, "override", e.admin, "POST", "/api/plugins/compliance/disable", nil)

	// The matrix: the demo version is served; a version committed when
	// storefront had a tool it lacks now is not, with the reason.
	doc, other := editedDemo(t, e, func(h *harness.Harness) { h.Tools[0].Export = "product_search" })
	admin, _ := e.store.UserByUsername(context.Background(), "admin")
	if _, _, err := e.store.PutHarnessVersion(context.Background(), admin.Scope(), store.HarnessVersion{Version: other.Version(),
		Name: other.Name, Document: json.RawMessage(doc)}); err != nil {
		t.Fatal(err)
	}
	matrix := e.expect(t, 200, e.admin, "GET", "/api/harness-compat", nil)["plugins"].(map[string]any)
	rows := map[string]map[string]any{}
	for _, r := range matrix["harnesses"].([]any) {
		rows[r.(map[string]any)["version"].(string)] = r.(map[string]any)
	}
	if rows[e.demo.Version()]["compatible"] != true || len(rows[e.demo.Version()]["streams"].([]any)) != 1 {
		t.Errorf("the demo's row: %v", rows[e.demo.Version()])
	}
	if r := rows[other.Version()]; r["compatible"] != false || !strings.Contains(body(t, r["problems"]), `declares no tool \"product_search\"`) {
		t.Errorf("the other version's row: %v", r)
	}
	if ps := body(t, matrix["plugins"]); !strings.Contains(ps, `{"name":"storefront","version":"1.1.0"}`) {
		t.Errorf("installed plugins: %s", ps)
	}

	// An operator may break on purpose, with a reason.
	code, m, _ = e.call(t, e.admin, "POST", "/api/plugins/storefront/rollback", "application/json", `{"version":"1.0.0"}`)
	if code != 200 {
		t.Errorf("a rollback to a compatible version: %d %v", code, m)
	}
	if code, m := e.upload(t, e.admin, breaking); code != 409 {
		t.Errorf("the breaking version again: %d %v", code, m)
	}
	e.expect(t, 200, e.admin, "POST", "/api/plugins/storefront/disable?override=moving+to+storefront+2", nil)
}
