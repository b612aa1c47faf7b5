package console

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
)

// TestLiveTurnsRunAndRecordTheStreamsArm runs a stream-unit experiment on
// the demo stream through a real live session: the started experiment binds
// the stream to its arm's harness version, the next viewer turn runs it,
// and the turn, the viewer's exposure and the session are stored under the
// arm.
func TestLiveTurnsRunAndRecordTheStreamsArm(t *testing.T) {
	e := newLiveEnv(t)
	ctx := context.Background()
	v2 := putShorterVersion(t, e.testEnv)
	// The treatment's weight makes the hash all but certain to give it the
	// one stream (the control's share is 1e-12).
	body, _ := json.Marshal(map[string]any{"name": "live", "unit": "stream", "streams": []string{e.demoStream},
		"arms":                  []map[string]any{{"name": "control", "weight": 1e-6}, {"name": "short", "harness_version": v2.Version(), "weight": 1e6}},
		"planned_units_per_arm": 1})
	code, m, raw := e.call(t, e.admin, "POST", "/api/experiments", "application/json", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := m["id"].(string)
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/start", "", ""); code != 200 {
		t.Fatalf("start: %d %s", code, raw)
	}
	ask := func(viewer string) map[string]any {
		body := fmt.Sprintf(`{"messages": [{"viewer": %q, "text": "口红多少钱"}]}`, viewer)
		if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json", body); code != 202 {
			t.Fatalf("messages: %d %s", code, raw)
		}
		return waitLive(t, events, "turn").Data
	}
	turn := ask("fan-1")
	if turn["harness_version"] != v2.Version() {
		t.Fatalf("the turn ran %v, not the arm's %s", turn["harness_version"], v2.Version())
	}
	_, data, err := e.srv.experiments().Data(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Turns) != 1 || data.Turns[0].ID != turn["id"] || data.Turns[0].Arm != "short" || data.Turns[0].Viewer != "fan-1" {
		t.Fatalf("stored turns %+v, want the live turn %v under arm short", data.Turns, turn["id"])
	}
	exposed := false
	for _, x := range data.Exposures {
		exposed = exposed || (x.Viewer == "fan-1" && x.Arm == "short")
	}
	if !exposed || len(data.Sessions) != 1 || data.Sessions[0].Stream != e.demoStream {
		t.Errorf("exposures %+v and sessions %+v, want fan-1 exposed to short in one session", data.Exposures, data.Sessions)
	}
	// After the stop the stream is back on its version and turns are no
	// longer recorded.
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/stop", "", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	if after := ask("fan-2"); after["harness_version"] != e.demo.Version() {
		t.Errorf("after the stop the turn ran %v", after["harness_version"])
	}
	if _, data, _ = e.srv.experiments().Data(ctx, id); len(data.Turns) != 1 {
		t.Errorf("%d turns stored after the stop, want 1", len(data.Turns))
	}
}

// putVersionWithout stores the demo harness without one of its skills as
// another version of the demo organisation.
func putVersionWithout(t *testing.T, e *testEnv, skill string) *harness.Harness {
	t.Helper()
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	v := e.demo.Clone()
	v.Skills = slices.DeleteFunc(v.Skills, func(s harness.Skill) bool { return s.ID == skill })
	if len(v.Skills) == len(e.demo.Skills) {
		t.Fatalf("the demo harness has no skill %q", skill)
	}
	doc, _ := harness.Marshal(v)
	if _, _, err := e.store.PutHarnessVersion(ctx, systemScope(admin.OrgID), store.HarnessVersion{Version: v.Version(), Name: v.Name, Document: doc}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLiveViewerUnitExperiment runs a viewer-unit experiment in the demo
// stream's live room: each viewer is answered by their arm's session (the
// treatment's harness has no price_answer skill, which the trace shows),
// keeps their arm, and every turn is stored under the viewer's arm, with
// the stream's time on air recorded once for the room. When the experiment
// stops, the room goes back to one session on the stream's version.
func TestLiveViewerUnitExperiment(t *testing.T) {
	e := newLiveEnv(t)
	ctx := context.Background()
	noPrice := putVersionWithout(t, e.testEnv, "price_answer")
	body, _ := json.Marshal(map[string]any{"name": "price skill", "unit": "viewer", "streams": []string{e.demoStream},
		"arms":                  []map[string]any{{"name": "control", "weight": 1}, {"name": "no-price", "harness_version": noPrice.Version(), "weight": 1}},
		"planned_units_per_arm": 10})
	code, m, raw := e.call(t, e.admin, "POST", "/api/experiments", "application/json", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := m["id"].(string)
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/start", "", ""); code != 200 {
		t.Fatalf("start: %d %s", code, raw)
	}
	// One viewer of each arm, by the experiment's own hash.
	x, err := e.srv.experiments().Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	viewerOf := map[string]string{}
	for i := 0; len(viewerOf) < 2; i++ {
		v := fmt.Sprintf("fan-%d", i)
		a, err := x.Assign(v)
		if err != nil {
			t.Fatal(err)
		}
		if viewerOf[a.Name] == "" {
			viewerOf[a.Name] = v
		}
	}
	ask := func(viewer, text string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"messages": [{"viewer": %q, "text": %q}]}`, viewer, text)
		if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json", body); code != 202 {
			t.Fatalf("messages: %d %s", code, raw)
		}
		return waitLive(t, events, "turn").Data
	}
	tools := func(turn map[string]any) string { return strings.Join(traceNames(turn["tools"], "name"), ",") }

	control := ask(viewerOf["control"], "精华多少钱？")
	treated := ask(viewerOf["no-price"], "精华多少钱？")
	if control["arm"] != "control" || control["harness_version"] != e.demo.Version() || !strings.Contains(tools(control), "price_answer") {
		t.Errorf("the control viewer's turn: arm %v, version %v, tools %s; want the demo harness with price_answer", control["arm"], control["harness_version"], tools(control))
	}
	if treated["arm"] != "no-price" || treated["harness_version"] != noPrice.Version() || strings.Contains(tools(treated), "price_answer") {
		t.Errorf("the treated viewer's turn: arm %v, version %v, tools %s; want the version without price_answer", treated["arm"], treated["harness_version"], tools(treated))
	}
	if control["session"] == treated["session"] {
		t.Errorf("both arms answered from session %v", control["session"])
	}
	// The same viewer lands in the same arm and session again.
	again := ask(viewerOf["no-price"], "有优惠券吗？")
	if again["arm"] != "no-price" || again["session"] != treated["session"] {
		t.Errorf("the treated viewer's second turn: arm %v in session %v, want no-price in %v", again["arm"], again["session"], treated["session"])
	}

	_, data, err := e.srv.experiments().Data(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wantArm := map[string]string{control["id"].(string): "control", treated["id"].(string): "no-price", again["id"].(string): "no-price"}
	if len(data.Turns) != len(wantArm) {
		t.Fatalf("%d turns stored, want %d: %+v", len(data.Turns), len(wantArm), data.Turns)
	}
	for _, tr := range data.Turns {
		if wantArm[tr.ID] != tr.Arm || viewerOf[tr.Arm] != tr.Viewer {
			t.Errorf("turn %s of %s stored under arm %q, want %q", tr.ID, tr.Viewer, tr.Arm, wantArm[tr.ID])
		}
	}
	if len(data.Exposures) != 2 {
		t.Errorf("exposures %+v, want one per viewer", data.Exposures)
	}
	for _, xp := range data.Exposures {
		if viewerOf[xp.Arm] != xp.Viewer {
			t.Errorf("viewer %s exposed to %s", xp.Viewer, xp.Arm)
		}
	}
	if len(data.Sessions) != 1 {
		t.Errorf("sessions %+v, want the room's time on air once, not once per arm", data.Sessions)
	}

	// Stopped: the treated viewer is answered by the room's one session on
	// the stream's version, the arm's session retires, and nothing more is
	// recorded.
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/stop", "", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	after := ask(viewerOf["no-price"], "精华多少钱？")
	if after["arm"] != nil || after["harness_version"] != e.demo.Version() || after["session"] != control["session"] || !strings.Contains(tools(after), "price_answer") {
		t.Errorf("after the stop: arm %v, version %v, session %v, tools %s; want the control's session on the demo version", after["arm"], after["harness_version"], after["session"], tools(after))
	}
	if retired := waitLive(t, events, "retired"); retired.Data["session"] != treated["session"] || retired.Data["arm"] != "no-price" {
		t.Errorf("retired %v, want the no-price arm's session", retired.Data)
	}
	if _, data, _ = e.srv.experiments().Data(ctx, id); len(data.Turns) != len(wantArm) {
		t.Errorf("%d turns stored after the stop, want %d", len(data.Turns), len(wantArm))
	}
}
