package eval

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// renamedDemo is the demo harness as an operator renames it: the lookup
// tool and its argument, and check_stock's item argument, each mapped
// back to the storefront plugin's names.
func renamedDemo(t *testing.T, h *harness.Harness) *harness.Harness {
	t.Helper()
	h = h.Clone()
	for i := range h.Tools {
		tool := &h.Tools[i]
		switch tool.Name {
		case "product_lookup":
			tool.Name = "item_lookup"
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"item_name":{"type":"string","description":"Item id, name or alias as the viewer wrote it."}},"required":["item_name"],"additionalProperties":false}`)
			tool.ArgumentMap = []harness.ArgumentRename{{Name: "item_name", Plugin: "query"}}
			tool.QueryArgs = []string{"item_name"}
		case "check_stock":
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"sku":{"type":"string","description":"Catalog id of the item."},"variant":{"type":"string"}},"required":["sku"],"additionalProperties":false}`)
			tool.CatalogArgs = []string{"sku"}
			tool.ArgumentMap = []harness.ArgumentRename{{Name: "sku", Plugin: "item_id"}}
		}
	}
	if err := harness.Validate(h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestExpertFollowsAnOperatorsRenames scores the expert on a few items of
// the live-room suites under the demo harness and under the demo with
// renamed tools and arguments: it follows the harness it is given, the
// grader reads the renamed calls as the room's, and the storefront plugin
// receives its own names, so the scores match.
func TestExpertFollowsAnOperatorsRenames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WASM plugin; skipped with -short")
	}
	ctx := context.Background()
	sb, err := runtime.OpenSandbox(ctx, testCacheDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	sb.SetTimeoutFloor(evalTimeoutFloor)
	if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "..", "examples", "plugins", "storefront")); err != nil {
		t.Fatal(err)
	}
	plain := base(t).Clone()
	plain.Hooks = nil // the scores compare tool use, which the hooks do not change
	renamed := renamedDemo(t, plain)
	for _, name := range []string{SuiteLSQA, SuiteHVQA} {
		t.Run(name, func(t *testing.T) {
			s, err := OpenSuite(name)
			if err != nil {
				t.Fatal(err)
			}
			s.Items = s.Items[:8]
			score := map[string]*SuiteReport{}
			for label, h := range map[string]*harness.Harness{"plain": plain, "renamed": renamed} {
				r := &Runner{Base: h, Sandbox: sb, Model: NewExpert, Parallel: 2}
				rep, err := r.Run(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				score[label] = rep
			}
			p, r := score["plain"], score["renamed"]
			if r.Score != p.Score || r.ToolNames != p.ToolNames || r.CallArgs != p.CallArgs || r.Errors > 0 {
				for _, w := range r.Worst {
					t.Logf("%s %s %q: %v", w.ID, w.Category, w.Reply, w.Grade.Deductions)
				}
				t.Errorf("renamed: score %.1f, tool names %.1f, arguments %.1f, %d errors; plain: %.1f, %.1f, %.1f",
					r.Score, r.ToolNames, r.CallArgs, r.Errors, p.Score, p.ToolNames, p.CallArgs)
			}
			if p.ToolNames < 99 {
				t.Errorf("plain: the expert named %.1f%% of tools right; the comparison proves nothing", p.ToolNames)
			}
		})
	}
}
