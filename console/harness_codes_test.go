package console

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

// TestHarnessRefusalsCarryCodes: a harness that does not validate and one
// the installed plugins cannot serve are refused with codes of their own,
// so that a page words the refusal in its reader's language.
func TestHarnessRefusalsCarryCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	unserved, _ := editedDemo(t, e, func(h *harness.Harness) { h.Tools[0].Export = "product_search" })
	for _, tc := range []struct {
		name, doc, code string
	}{
		{"invalid", `{"name": "x", "retriez": 1}`, codeHarnessInvalid},
		{"not served by the plugins", string(unserved), codeHarnessIncompatible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, raw := e.call(t, e.admin, "POST", "/api/harness/validate", "application/json", tc.doc)
			if code != 422 || body["code"] != tc.code || body["field"] != "body" || !strings.Contains(string(raw), `"problems"`) {
				t.Errorf("validate: %d %s; want 422 with code %s and its problems", code, raw, tc.code)
			}
		})
	}
}
