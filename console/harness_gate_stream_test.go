package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/liveroom"
)

// TestGateForAStreamsOwnModel: a stream served by its own model server is
// gated with that server ("stream" in the gate request), and a release to
// it relies on such a gate, not on the organisation's: without one, or
// with a regressed one, the release is refused naming the stream and its
// model, unless an override reason is given. Each released stream records
// the model and the gate it was released on.
func TestGateForAStreamsOwnModel(t *testing.T) {
	e := newTestEnv(t, nil)
	withHookPlugins(t, e)
	servedByHost(e)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	merchant, _ := e.store.UserByUsername(ctx, "merchant")
	sc := admin.Scope()
	second, err := e.store.CreateStream(ctx, sc, store.Stream{MerchantID: merchant.MerchantID, Name: "Second room", HarnessVersion: e.demo.Version()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.store.CreateOrg(ctx, "Other org")
	if err != nil {
		t.Fatal(err)
	}
	otherShop, err := e.store.CreateMerchant(ctx, systemScope(other.ID), "Other shop")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := e.store.CreateStream(ctx, systemScope(other.ID), store.Stream{MerchantID: otherShop.ID, Name: "Foreign", HarnessVersion: e.demo.Version()})
	if err != nil {
		t.Fatal(err)
	}

	// The demo stream is served by its own model server.
	gpu, requests := fakeModelServer(t, "The serum is 199 yuan.")
	own := "big at " + strings.TrimPrefix(gpu.URL, "http://")
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model/streams/"+e.demoStream, "application/json",
		`{"server": {"url": "`+gpu.URL+`", "model": "big"}}`); code != 200 {
		t.Fatalf("PUT stream serving: %d %s", code, raw)
	}
	demoName := e.expect(t, 200, e.merchant, "GET", "/api/streams/"+e.demoStream, nil)["name"].(string)

	doc, _ := editedDemo(t, e, func(h *harness.Harness) { h.Description += " (stream gate test)" })
	ver := commitVersion(t, e, doc)
	gate := func(extra map[string]any) map[string]any {
		t.Helper()
		req := map[string]any{"candidate": ver, "n": 1, "suites": []string{"lsqa"}, "replay": 0}
		for k, v := range extra {
			req[k] = v
		}
		g := e.expect(t, 202, e.admin, "POST", "/api/harness-gates", req)
		if g = waitGate(t, e, g["id"].(string)); g["state"] != store.GatePassed {
			t.Fatalf("gate %v finished %v (%v)", extra, g["state"], g["error"])
		}
		return g
	}

	t.Run("a gate request names a stream of the organisation", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			req    map[string]any
			status int
			field  string
		}{
			{"unknown stream", map[string]any{"stream": "nope"}, 404, "stream"},
			{"another organisation's stream", map[string]any{"stream": foreign.ID}, 404, "stream"},
			{"the expert with a stream", map[string]any{"stream": e.demoStream, "model": "expert"}, 400, "stream"},
			{"a checkpoint with a stream", map[string]any{"stream": e.demoStream, "model": "checkpoint", "checkpoint": liveroom.HostModelName}, 400, "stream"},
		} {
			t.Run(c.name, func(t *testing.T) {
				req := map[string]any{"candidate": ver, "n": 1, "suites": []string{"lsqa"}}
				for k, v := range c.req {
					req[k] = v
				}
				e.expectField(t, c.status, c.field, e.admin, "POST", "/api/harness-gates", req)
			})
		}
	})

	// The organisation's gate measures the host, and asks the stream's
	// server nothing.
	orgGate := gate(nil)
	if orgGate["model"] != liveroom.HostModelName || len(requests()) != 0 {
		t.Fatalf("the organisation's gate measured %v and asked the stream's server %d times", orgGate["model"], len(requests()))
	}
	// It covers the second stream, not the demo stream: the refusal names
	// the stream, its model and how to gate it.
	rel := e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver, "streams": []string{second.ID}})
	if rel["gate_id"] != orgGate["id"] {
		t.Errorf("release to the second stream relied on %v, want the organisation's gate %v", rel["gate_id"], orgGate["id"])
	}
	for _, req := range []map[string]any{
		{"version": ver, "streams": []string{e.demoStream}},
		{"version": ver, "streams": []string{second.ID, e.demoStream}},
		{"version": ver, "canary_percent": 100},
		{"version": ver, "streams": []string{e.demoStream}, "gate_id": orgGate["id"]},
	} {
		code, m, raw := e.call(t, e.admin, "POST", "/api/releases", "application/json", body(t, req))
		msg, _ := m["error"].(string)
		wantField := "streams"
		if req["gate_id"] != nil {
			wantField = "gate_id" // the named gate measured a model no chosen stream runs
		}
		if code != 409 || m["field"] != wantField || !strings.Contains(msg, own) ||
			(wantField == "streams" && (!strings.Contains(msg, `stream "`+demoName+`"`) || !strings.Contains(msg, `"stream": "`+e.demoStream+`"`))) {
			t.Errorf("release %v: %d %s; want 409 naming the demo stream and its model %s", req, code, raw, own)
		}
	}

	// The stream's gate measures its server, against the version it runs.
	streamGate := gate(map[string]any{"stream": e.demoStream})
	if streamGate["model"] != own || streamGate["baseline"] != e.demo.Version() || len(requests()) == 0 {
		t.Fatalf("the stream's gate measured %v against %v after %d requests to its server", streamGate["model"], streamGate["baseline"], len(requests()))
	}
	var rep gateReport
	if err := json.Unmarshal([]byte(body(t, streamGate["report"])), &rep); err != nil || rep.Stream != e.demoStream || rep.ModelKind != gateServing {
		t.Fatalf("report: stream %q kind %q (%v)", rep.Stream, rep.ModelKind, err)
	}
	// Now a canary of every stream ships, each stream on its own model's gate.
	rel = e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver, "canary_percent": 100})
	var r store.HarnessRelease
	if err := json.Unmarshal([]byte(body(t, rel)), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, st := range r.Streams {
		got[st.StreamID] = st.Model + " / " + st.GateID
	}
	want := map[string]string{e.demoStream: own + " / " + streamGate["id"].(string),
		second.ID: liveroom.HostModelName + " / " + orgGate["id"].(string)}
	if len(got) != 2 || got[e.demoStream] != want[e.demoStream] || got[second.ID] != want[second.ID] || r.GateID != orgGate["id"] {
		t.Errorf("release streams %v (gate %s), want %v (gate %s)", got, r.GateID, want, orgGate["id"])
	}
	if st := e.expect(t, 200, e.merchant, "GET", "/api/streams/"+e.demoStream, nil); st["harness_version"] != ver {
		t.Errorf("the demo stream runs %v after the release", st["harness_version"])
	}

	// A regressed gate of the stream's model is refused, naming it, and
	// ships with an override.
	doc2, _ := editedDemo(t, e, func(h *harness.Harness) { h.Description += " (regressed on the stream's model)" })
	ver2 := commitVersion(t, e, doc2)
	for model, state := range map[string]string{liveroom.HostModelName: store.GatePassed, own: store.GateRegressed} {
		g, err := e.store.CreateHarnessGate(ctx, sc, store.HarnessGate{Candidate: ver2, Baseline: e.demo.Version(), Model: model, Suites: []string{"lsqa"}, N: 1, Total: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.FinishHarnessGate(ctx, sc, g.ID, state, json.RawMessage(`{}`), "", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	code, m, raw := e.call(t, e.admin, "POST", "/api/releases", "application/json", body(t, map[string]any{"version": ver2, "canary_percent": 100}))
	if msg, _ := m["error"].(string); code != 409 || m["field"] != "override" || !strings.Contains(msg, `stream "`+demoName+`"`) || !strings.Contains(msg, own) {
		t.Errorf("release over a regressed stream gate: %d %s", code, raw)
	}
	e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver2, "streams": []string{second.ID}})
	rel = e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver2, "streams": []string{e.demoStream}, "override": "the stream's model is being replaced tonight"})
	if rel["override"] != "the stream's model is being replaced tonight" {
		t.Errorf("override release = %v", rel)
	}

	// Back on the organisation's model, the stream relies on its gate.
	e.expect(t, 200, e.admin, "DELETE", "/api/serving-model/streams/"+e.demoStream, nil)
	rel = e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": ver, "streams": []string{e.demoStream}})
	if rel["gate_id"] != orgGate["id"] {
		t.Errorf("after the stream's server was removed the release relied on %v, want %v", rel["gate_id"], orgGate["id"])
	}
}
