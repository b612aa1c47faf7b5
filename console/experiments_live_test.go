package console

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
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
