package console

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn/runfolder"
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

// createExperiment creates an experiment from its JSON fields and returns it.
func createExperiment(t *testing.T, e *testEnv, spec map[string]any) experiment.Experiment {
	t.Helper()
	body, _ := json.Marshal(spec)
	code, m, raw := e.call(t, e.admin, "POST", "/api/experiments", "application/json", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	x, err := e.srv.experiments().Get(context.Background(), m["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// startExperiment starts an experiment through the API.
func startExperiment(t *testing.T, e *testEnv, id string) {
	t.Helper()
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/start", "", ""); code != 200 {
		t.Fatalf("start: %d %s", code, raw)
	}
}

// viewersByArm picks n viewer ids of each arm by the experiment's hash.
func viewersByArm(t *testing.T, x experiment.Experiment, n int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for i := 0; ; i++ {
		full := true
		for _, a := range x.Arms {
			full = full && len(out[a.Name]) >= n
		}
		if full {
			return out
		}
		v := fmt.Sprintf("viewer-%d", i)
		a, err := x.Assign(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(out[a.Name]) < n {
			out[a.Name] = append(out[a.Name], v)
		}
	}
}

// postMessages sends viewer messages, given as viewer, text pairs, to the
// demo stream's live room.
func (e *liveEnv) postMessages(t *testing.T, pairs ...string) {
	t.Helper()
	var list []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		list = append(list, map[string]string{"viewer": pairs[i], "text": pairs[i+1]})
	}
	b, _ := json.Marshal(map[string]any{"messages": list})
	if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json", string(b)); code != 202 {
		t.Fatalf("messages: %d %s", code, raw)
	}
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
	x := createExperiment(t, e.testEnv, map[string]any{"name": "price skill", "unit": "viewer", "streams": []string{e.demoStream},
		"arms":                  []map[string]any{{"name": "control", "weight": 1}, {"name": "no-price", "harness_version": noPrice.Version(), "weight": 1}},
		"planned_units_per_arm": 10})
	id := x.ID
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	startExperiment(t, e.testEnv, id)
	viewerOf := map[string]string{}
	for arm, vs := range viewersByArm(t, x, 1) {
		viewerOf[arm] = vs[0]
	}
	ask := func(viewer, text string) map[string]any {
		t.Helper()
		e.postMessages(t, viewer, text)
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

// TestLiveViewerUnitExperimentNarratesOnce puts the demo stream on air
// under a viewer-unit experiment whose treatment names a checkpoint (the
// console's configured model, by name): the strategy runs on the control
// arm's session only, its narration is no arm's turn, and the checkpoint
// arm's turns are recorded under it.
func TestLiveViewerUnitExperimentNarratesOnce(t *testing.T) {
	e := newLiveEnv(t)
	ctx := context.Background()
	x := createExperiment(t, e.testEnv, map[string]any{"name": "narration", "unit": "viewer", "streams": []string{e.demoStream},
		"arms":                  []map[string]any{{"name": "control", "weight": 1}, {"name": "host", "checkpoint": e.srv.configuredModelName(), "weight": 1}},
		"planned_units_per_arm": 10})
	id := x.ID
	startExperiment(t, e.testEnv, id)
	events := e.subscribe(t, e.merchant, e.demoStream)
	hello := waitLive(t, events, "session")
	arms, _ := hello.Data["arms"].([]any)
	if len(arms) != 2 || hello.Data["arm"] != "control" {
		t.Fatalf("the room's state %v, want the control's session with two arms", hello.Data)
	}
	sessionOf := map[string]any{}
	for _, a := range arms {
		a := a.(map[string]any)
		sessionOf[a["arm"].(string)] = a["session"]
	}
	if sessionOf["control"] != hello.Data["session"] || sessionOf["host"] == sessionOf["control"] {
		t.Fatalf("arm sessions %v, control %v", sessionOf, hello.Data["session"])
	}
	if code, _, raw := e.call(t, e.admin, "POST", "/api/streams/"+e.demoStream+"/live/air", "application/json", `{"on_air":true}`); code != 200 {
		t.Fatalf("go on air: %d %s", code, raw)
	}
	// Three price questions from each arm's viewers: the control's session
	// sees enough to announce the coupon; the other runs no strategy.
	perArm := viewersByArm(t, x, 3)
	var msgs []string
	for i, text := range []string{"精华多少钱", "面霜多少钱", "口红多少钱"} {
		msgs = append(msgs, perArm["host"][i], text, perArm["control"][i], text)
	}
	e.postMessages(t, msgs...)
	var hostTurns []string
	for {
		ev := waitLive(t, events, "turn").Data
		if ev["event"] == "narration_tick" {
			if ev["session"] != sessionOf["control"] || ev["arm"] != "control" {
				t.Errorf("narration from session %v (arm %v), want the control's %v", ev["session"], ev["arm"], sessionOf["control"])
			}
			if _, data, _ := e.srv.experiments().Data(ctx, id); slices.ContainsFunc(data.Turns, func(tr experiment.TurnRecord) bool { return tr.ID == ev["id"] }) {
				t.Errorf("the narration %v was recorded under an arm", ev["id"])
			}
			break
		}
		if ev["session"] == sessionOf["host"] {
			if ev["arm"] != "host" || ev["model"] != e.srv.configuredModelName() {
				t.Errorf("the checkpoint arm's turn: arm %v, model %v", ev["arm"], ev["model"])
			}
			hostTurns = append(hostTurns, ev["id"].(string))
		}
	}
	if len(hostTurns) == 0 {
		t.Fatal("the checkpoint arm answered nothing before the narration")
	}
	_, data, err := e.srv.experiments().Data(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range data.Turns {
		if slices.Contains(hostTurns, tr.ID) && tr.Arm != "host" {
			t.Errorf("the checkpoint arm's turn %s stored under %q", tr.ID, tr.Arm)
		}
	}
	// Off air closes every arm's session together.
	if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/air", "application/json", `{"on_air":false}`); code != 200 {
		t.Fatalf("off air: %d %s", code, raw)
	}
	if ev := waitLive(t, events, "closed"); ev.Data["session"] != sessionOf["control"] {
		t.Errorf("closed %v", ev.Data)
	}
}

// TestCheckpointArmsNameTheOrganisationsPromotedFolders checks which
// checkpoints an arm may name: a folder under models/ promoted from a run
// of the organisation, by name or path; not another organisation's, not a
// path elsewhere, not a name that climbs out of models/.
func TestCheckpointArmsNameTheOrganisationsPromotedFolders(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	other, err := e.store.CreateOrg(ctx, "Other org")
	if err != nil {
		t.Fatal(err)
	}
	models, _ := e.srv.dataPath("models")
	promote := func(orgID, runID, folder string) string {
		if _, err := e.store.CreateRun(ctx, systemScope(orgID), store.NewTrainingRun{ID: runID, Stage: "sft", Config: []byte(`{}`), Dir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(models, folder)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := runfolder.WriteJSON(filepath.Join(dir, promotedFile), promotion{RunID: runID}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ours := promote(admin.OrgID, "run-ours", "run-ours-step4")
	theirs := promote(other.ID, "run-theirs", "run-theirs-step4")
	for _, c := range []struct {
		checkpoint, want string
	}{{"run-ours-step4", ours}, {ours, ours}, {"run-theirs-step4", ""}, {theirs, ""}, {"../runs", ""}, {"/etc", ""}, {"nope", ""}} {
		got, err := e.srv.promotedFolder(ctx, admin.OrgID, c.checkpoint)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("checkpoint %q: %q, %v; want %q", c.checkpoint, got, err, c.want)
		}
	}
}

// heldModel is the rule-based host, except that a prompt with a viewer
// message containing "HOLD" waits for release: a turn that stays in flight.
type heldModel struct {
	liveroom.Host
	release chan struct{}
}

func (m heldModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	for _, msg := range req.Messages {
		if msg.Role == harness.RoleUser && strings.Contains(msg.Content, "HOLD") {
			select {
			case <-m.release:
			case <-ctx.Done():
				return runtime.Response{}, ctx.Err()
			}
			break
		}
	}
	return m.Host.Generate(ctx, req)
}

// TestLiveArmSessionAnswersWhatItWasAskedAfterTheStop stops a viewer-unit
// experiment while the treatment's session has a turn in flight and a
// question queued: the viewer's next messages go to the room's one
// session, and the retiring session answers both before it closes, so
// nothing it was asked is dropped.
func TestLiveArmSessionAnswersWhatItWasAskedAfterTheStop(t *testing.T) {
	e := newLiveEnv(t)
	release := make(chan struct{})
	e.srv.cfg.Model = heldModel{release: release}
	noPrice := putVersionWithout(t, e.testEnv, "price_answer")
	x := createExperiment(t, e.testEnv, map[string]any{"name": "drain", "unit": "viewer", "streams": []string{e.demoStream},
		"arms": []map[string]any{{"name": "control", "weight": 1}, {"name": "no-price", "harness_version": noPrice.Version(), "weight": 1}}})
	id := x.ID
	startExperiment(t, e.testEnv, id)
	events := e.subscribe(t, e.merchant, e.demoStream)
	hello := waitLive(t, events, "session")
	treated := viewersByArm(t, x, 1)["no-price"][0]
	e.postMessages(t, treated, "HOLD 精华多少钱？", treated, "面霜有货吗？")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+id+"/stop", "", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	// The next message re-arranges the room: the treated viewer is the
	// control session's now.
	e.postMessages(t, treated, "口红多少钱？")
	answered := map[string]string{} // input → session
	var retired map[string]any
	for retired == nil || len(answered) < 3 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch ev.Kind {
			case "turn":
				answered[ev.Data["input"].(string)] = ev.Data["session"].(string)
				if ev.Data["input"] == "口红多少钱？" {
					close(release) // the held turn may finish now
				}
			case "dropped":
				t.Errorf("dropped %v", ev.Data)
			case "retired":
				retired = ev.Data
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("answered %v, retired %v after 30 s", answered, retired)
		}
	}
	control := hello.Data["session"].(string)
	if answered["口红多少钱？"] != control {
		t.Errorf("after the stop the treated viewer was answered by %s, want the control's %s", answered["口红多少钱？"], control)
	}
	arm := answered["HOLD 精华多少钱？"]
	if arm == control || answered["面霜有货吗？"] != arm || retired["session"] != arm {
		t.Errorf("answered %v, retired %v: want the arm's session to answer its two questions, then retire", answered, retired)
	}
}

// TestLiveViewerSplitStrategyCountsTheRoom: under a 50/50 viewer split
// the control's session runs the strategy but answers only half the room;
// the demo strategy's coupon rule (three price questions in a minute)
// still fires on the room's third price question, two of which the other
// arm's session answered, so neither session alone had three.
func TestLiveViewerSplitStrategyCountsTheRoom(t *testing.T) {
	e := newLiveEnv(t)
	noPrice := putVersionWithout(t, e.testEnv, "price_answer")
	x := createExperiment(t, e.testEnv, map[string]any{"name": "room signals", "unit": "viewer", "streams": []string{e.demoStream},
		"arms": []map[string]any{{"name": "control", "weight": 1}, {"name": "no-price", "harness_version": noPrice.Version(), "weight": 1}}})
	startExperiment(t, e.testEnv, x.ID)
	events := e.subscribe(t, e.merchant, e.demoStream)
	hello := waitLive(t, events, "session")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/streams/"+e.demoStream+"/live/air", "application/json", `{"on_air":true}`); code != 200 {
		t.Fatalf("go on air: %d %s", code, raw)
	}
	perArm := viewersByArm(t, x, 2)
	e.postMessages(t, perArm["no-price"][0], "精华多少钱", perArm["control"][0], "面霜多少钱", perArm["no-price"][1], "口红多少钱")
	answered := map[string]int{} // arm → viewer turns
	for {
		ev := waitLive(t, events, "turn").Data
		if ev["event"] != "narration_tick" {
			answered[fmt.Sprint(ev["arm"])]++
			continue
		}
		if ev["session"] != hello.Data["session"] || !strings.Contains(fmt.Sprint(ev["reply"]), "满99减20") {
			t.Errorf("narration from session %v: %v; want the control's %v announcing the coupon", ev["session"], ev["reply"], hello.Data["session"])
		}
		break
	}
	// Each arm answered its own viewers; the observed questions were not
	// answered twice.
	for {
		if answered["control"] > 1 || answered["no-price"] > 2 {
			t.Fatalf("viewer turns by arm %v: a question was answered by both sessions", answered)
		}
		if answered["control"] == 1 && answered["no-price"] == 2 {
			break
		}
		ev := waitLive(t, events, "turn").Data
		if ev["event"] != "narration_tick" {
			answered[fmt.Sprint(ev["arm"])]++
		}
	}
}
