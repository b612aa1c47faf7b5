package console

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/runtime"
)

// servedByBundled makes the bundled HAT model the console's serving model,
// as `livehat serve` does by default.
func servedByBundled(t *testing.T, e *testEnv) {
	t.Helper()
	dir, err := examples.WriteModel(examples.ModelCacheDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Load(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	e.srv.cfg.Model, e.srv.cfg.ModelName = runtime.LocalModel{Engine: eng, Constrain: true}, examples.ModelDescription
}

// renameEdit is the edit of the demo harness, as a new operator
// made it: the lookup tool renamed to goods_search (its plugin export
// kept), skill and tool descriptions reworded, the tools reordered; and
// its argument query renamed to keyword, mapped back to the plugin's name
// when mapped.
func renameEdit(mapped bool) func(h *harness.Harness) {
	return func(h *harness.Harness) {
		for i := range h.Tools {
			tool := &h.Tools[i]
			if tool.Name != "product_lookup" {
				tool.Description = "Use this to " + strings.ToLower(tool.Description[:1]) + tool.Description[1:]
				continue
			}
			tool.Name = "goods_search"
			tool.Description = "Find an item of today's stream by what the viewer called it."
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"keyword":{"type":"string","description":"The item as the viewer named it: id, name or alias."}},"required":["keyword"],"additionalProperties":false}`)
			tool.QueryArgs = []string{"keyword"}
			if mapped {
				tool.ArgumentMap = []harness.ArgumentRename{{Name: "keyword", Plugin: "query"}}
			}
		}
		for i := range h.Skills {
			h.Skills[i].Description = "When it applies: " + h.Skills[i].Description
		}
		slices.Reverse(h.Tools)
		// Texts that named the tool name the new one, as an operator's
		// search-and-replace would.
		doc, _ := json.Marshal(h)
		var back harness.Harness
		_ = json.Unmarshal([]byte(strings.ReplaceAll(string(doc), "product_lookup", "goods_search")), &back)
		for i := range back.Tools {
			back.Tools[i].Export = h.Tools[i].Export
		}
		*h = back
	}
}

// TestRenameScenario is issue #20's scenario through the HTTP API: an
// argument renamed without a map is refused at validate and commit naming
// the argument; mapped, it commits; the gate with the serving model (the
// bundled one) shows what that model loses under the rename, on the suites
// and on the stream's own questions replayed from its turn log, and the
// expert, which follows renames, shows nothing. What the shipped model
// loses varies with it (trainer/REPRODUCTION.md, "Where #19 stands"): a
// category at least, which the gate must name.
func TestRenameScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	servedByBundled(t, e)

	unmapped, _ := editedDemo(t, e, renameEdit(false))
	code, m, raw := e.call(t, e.admin, "POST", "/api/harness/validate", "application/json", unmapped)
	if code != 422 || !strings.Contains(string(raw), `argument \"keyword\"`) || !strings.Contains(string(raw), `requires argument \"query\"`) ||
		!strings.Contains(string(raw), `{\"name\": \"keyword\", \"plugin\": \"query\"}`) {
		t.Fatalf("validate of an unmapped argument rename: %d %s", code, raw)
	}
	d := e.expect(t, 201, e.admin, "POST", "/api/harness-drafts", map[string]any{"base_version": e.demo.ShortVersion(), "document": unmapped})
	code, m, raw = e.call(t, e.admin, "POST", "/api/harness-drafts/"+d["id"].(string)+"/commit", "application/json", body(t, map[string]any{"revision": d["revision"]}))
	if code != 422 || m["field"] != "document" || !strings.Contains(string(raw), `"line":`) || !strings.Contains(string(raw), "keyword") {
		t.Fatalf("commit of an unmapped argument rename: %d %s", code, raw)
	}

	mapped, cand := editedDemo(t, e, renameEdit(true))
	if code, _, raw := e.call(t, e.admin, "POST", "/api/harness/validate", "application/json", mapped); code != 200 {
		t.Fatalf("validate of a mapped argument rename: %d %s", code, raw)
	}
	ver := commitVersion(t, e, mapped)
	if ver != cand.Version() {
		t.Fatalf("committed %s, want %s", ver, cand.Version())
	}

	// The stream's own recent questions, in its turn log.
	for i, q := range []string{"玻尿酸精华多少钱", "How much is the serum?", "防晒霜有货吗"} {
		if err := e.store.AddLiveTurn(context.Background(), store.LiveTurn{ID: fmt.Sprintf("asked-%d", i), StreamID: e.demoStream,
			Source: store.TurnSourceLive, Event: "viewer_message", Viewers: []string{"fan"}, Input: q, Reply: "…", Outcome: "replied",
			HarnessVersion: e.demo.Version(), Steps: json.RawMessage(`[]`)}); err != nil {
			t.Fatal(err)
		}
	}

	gate := func(model string) gateReport {
		t.Helper()
		req := map[string]any{"candidate": ver, "n": 8, "suites": []string{"lsqa"}}
		if model != "" {
			req["model"] = model
		} else {
			req["replay"] = 3
		}
		g := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", req)
		g = waitGate(t, e, g["id"].(string))
		var rep gateReport
		if err := json.Unmarshal([]byte(body(t, g["report"])), &rep); err != nil || g["state"] == store.GateFailed {
			t.Fatalf("gate %v: %v %v", g["state"], g["error"], err)
		}
		for _, s := range rep.Suites {
			t.Logf("%s with %s: %.1f → %.1f (%+.1f, 95%% interval %v)", s.Suite, rep.Model, s.Baseline.Score, s.Candidate.Score, s.Delta, s.DeltaCI95)
		}
		return rep
	}

	served := gate("")
	if served.Model != examples.ModelDescription || served.ModelKind != gateServing || served.Replayed != 3 {
		t.Errorf("the serving gate measured %q (%s) on %d replayed questions", served.Model, served.ModelKind, served.Replayed)
	}
	if len(served.Regressions) == 0 {
		t.Errorf("the bundled model under the rename: overall %+.1f, no regressions; want the categories it loses", served.Overall.Delta)
	}
	var replay *suiteDelta
	for i := range served.Suites {
		if served.Suites[i].Suite == replaySuite {
			replay = &served.Suites[i]
		}
	}
	if replay == nil || replay.Baseline.N != 3 || replay.Candidate.N != 3 {
		t.Errorf("replayed suite = %+v", replay)
	}

	expert := gate(gateExpert)
	if !expert.Sanity || len(expert.Regressions) != 0 || expert.Overall.Delta != 0 {
		t.Errorf("the expert under the rename: overall %+.1f, regressions %v; want none", expert.Overall.Delta, expert.Regressions)
	}
}
