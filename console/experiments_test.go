package console

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// experimentFixture is a test console with a second harness version and
// streams enough for a stream-unit experiment to reach a verdict.
type experimentFixture struct {
	*testEnv
	candidate string   // the treatment's harness version
	streams   []string // the demo stream first
	adminUser *store.User
}

func newExperimentFixture(t *testing.T, extraStreams int) *experimentFixture {
	t.Helper()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	v2 := putShorterVersion(t, e)
	demo, err := e.store.Stream(ctx, admin.Scope(), e.demoStream)
	if err != nil {
		t.Fatal(err)
	}
	f := &experimentFixture{testEnv: e, candidate: v2.Version(), streams: []string{e.demoStream}, adminUser: admin}
	for i := range extraStreams {
		st, err := e.store.CreateStream(ctx, admin.Scope(), store.Stream{MerchantID: demo.MerchantID, Name: fmt.Sprintf("stream %d", i),
			Catalog: demo.Catalog, Currency: "CNY", HarnessVersion: demo.HarnessVersion})
		if err != nil {
			t.Fatal(err)
		}
		f.streams = append(f.streams, st.ID)
	}
	return f
}

// putShorterVersion stores the demo harness with shorter replies as a
// second version of the demo organisation.
func putShorterVersion(t *testing.T, e *testEnv) *harness.Harness {
	t.Helper()
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	v2 := e.demo.Clone()
	v2.Pipeline.ReplyChars.Value = 100
	doc, _ := harness.Marshal(v2)
	if _, _, err := e.store.PutHarnessVersion(ctx, systemScope(admin.OrgID), store.HarnessVersion{Version: v2.Version(), Name: v2.Name, Document: doc}); err != nil {
		t.Fatal(err)
	}
	return v2
}

// create posts an experiment over the fixture's streams with the demo
// version as control and the candidate as treatment.
func (f *experimentFixture) create(t *testing.T, unit string, planned int) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": "reply length", "unit": unit, "streams": f.streams,
		"arms": []map[string]any{{"name": "control", "harness_version": f.demo.Version(), "weight": 1},
			{"name": "short", "harness_version": f.candidate[:19], "weight": 1}},
		"primary_metric": "gmv_per_viewer", "guardrails": []string{"latency_p95_s", "violations_per_1000_replies"},
		"planned_units_per_arm": planned, "analysis": "fixed_horizon"})
	code, m, raw := f.call(t, f.admin, "POST", "/api/experiments", "application/json", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	return m
}

func TestExperimentRolesAndValidation(t *testing.T) {
	f := newExperimentFixture(t, 0)
	for _, tok := range []string{f.merchant, f.dev, f.rival} {
		if code, _, _ := f.call(t, tok, "GET", "/api/experiments", "", ""); code != 403 {
			t.Errorf("list as a non-operator: %d, want 403", code)
		}
		if code, _, _ := f.call(t, tok, "POST", "/api/experiments", "application/json", `{}`); code != 403 {
			t.Errorf("create as a non-operator: %d, want 403", code)
		}
	}
	if code, _, _ := f.call(t, f.dev, "POST", "/api/streams/"+f.demoStream+"/events", "application/json", `{"events": []}`); code != 403 {
		t.Errorf("developer posting events: %d, want 403", code)
	}
	arms := fmt.Sprintf(`[{"name": "control", "weight": 1}, {"name": "b", "harness_version": %q, "weight": 1}]`, f.candidate)
	for _, c := range []struct{ body, field string }{
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `, "bogus": 1}`, "body"},
		{`{"unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `}`, "name"},
		{`{"name": "x", "unit": "stream", "arms": ` + arms + `}`, "streams"},
		{`{"name": "x", "unit": "stream", "streams": ["nope"], "arms": ` + arms + `}`, "streams[0]"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": [{"name": "a", "weight": 1}]}`, "arms"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": [{"name": "a", "weight": 1}, {"name": "b", "harness_version": "sha256:00000000dead", "weight": 1}]}`, "arms[1].harness_version"},
		{`{"name": "x", "unit": "room", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `}`, "unit"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `, "primary_metric": "likes"}`, "primary_metric"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": [{"name": "a b", "weight": 1}, {"name": "c", "weight": 1}]}`, "arms[0].name"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `, "attribution_window_minutes": -1}`, "attribution_window_minutes"},
		{`{"name": "x", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `, "plan": {"baseline_mean": 0, "sd": 1}}`, "plan.baseline_mean"},
	} {
		code, m, raw := f.call(t, f.admin, "POST", "/api/experiments", "application/json", c.body)
		if code/100 != 4 || m["field"] != c.field {
			t.Errorf("%s: %d %s, want a 4xx naming %q", c.body, code, raw, c.field)
		}
	}
	// The plan's size is PlanSampleSize's.
	body := `{"name": "planned", "unit": "stream", "streams": ["` + f.demoStream + `"], "arms": ` + arms + `, "mde": 0.1, "plan": {"baseline_mean": 50, "sd": 120}}`
	code, m, raw := f.call(t, f.admin, "POST", "/api/experiments", "application/json", body)
	want, _ := experiment.PlanSampleSize(50, 120, 0.1, 0.05, 0.8)
	if code != 201 || m["planned_units_per_arm"] != float64(want) || m["state"] != "draft" {
		t.Fatalf("create with a plan: %d %s, want planned %d", code, raw, want)
	}
	code, pm, _ := f.call(t, f.admin, "POST", "/api/experiments/plan", "application/json", `{"baseline_mean": 50, "sd": 120, "mde": 0.1}`)
	if code != 200 || pm["units_per_arm"] != float64(want) {
		t.Errorf("plan: %d %v, want %d", code, pm, want)
	}
	id := m["id"].(string)
	if code, _, _ := f.call(t, f.admin, "GET", "/api/experiments/"+id+"/report", "", ""); code != 409 {
		t.Errorf("report of a draft: %d, want 409", code)
	}
	// An arm's checkpoint must be one the organisation can serve: an
	// unknown name, a path outside the promoted checkpoints and a folder
	// name that climbs out of them are refused at start, naming the arm.
	for _, ck := range []string{"no-such-checkpoint", "/etc", "../runs"} {
		cb := strings.Replace(body, `"harness_version": "`+f.candidate+`"`, `"harness_version": "`+f.candidate+`", "checkpoint": "`+ck+`"`, 1)
		code, cm, raw := f.call(t, f.admin, "POST", "/api/experiments", "application/json", cb)
		if code != 201 {
			t.Fatalf("create with checkpoint %q: %d %s", ck, code, raw)
		}
		if code, m, raw := f.call(t, f.admin, "POST", "/api/experiments/"+cm["id"].(string)+"/start", "", ""); code != 409 || m["field"] != "arms[1].checkpoint" {
			t.Errorf("starting with checkpoint %q: %d %s, want 409 naming arms[1].checkpoint", ck, code, raw)
		}
	}
	// Viewer units start: live rooms open one session per arm, and the
	// streams keep their versions (TestLiveViewerUnitExperiment runs one).
	vb := strings.Replace(body, `"unit": "stream"`, `"unit": "viewer"`, 1)
	_, vm, _ := f.call(t, f.admin, "POST", "/api/experiments", "application/json", vb)
	if code, m, raw := f.call(t, f.admin, "POST", "/api/experiments/"+vm["id"].(string)+"/start", "", ""); code != 200 || m["state"] != "running" {
		t.Errorf("starting a viewer-unit experiment: %d %s, want 200", code, raw)
	}
	st, err := f.store.Stream(context.Background(), f.adminUser.Scope(), f.demoStream)
	if err != nil || st.HarnessVersion != f.demo.Version() {
		t.Errorf("a viewer-unit experiment rebound the stream: %v %v", st, err)
	}
}

// post sends a batch of events to a stream with a token.
func (f *experimentFixture) post(t *testing.T, token, stream string, events []map[string]any) (int, map[string]any, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"events": events})
	return f.call(t, token, "POST", "/api/streams/"+stream+"/events", "application/json", string(body))
}

func TestExperimentEventsIngestion(t *testing.T) {
	f := newExperimentFixture(t, 1)
	now := time.Now().UTC()
	good := []map[string]any{
		{"id": "e1", "viewer_id": "v1", "item_id": "p-serum", "kind": "item_view", "time": now},
		{"id": "e2", "viewer_id": "v1", "item_id": "p-serum", "kind": "purchase", "amount_minor": 19900, "currency": "CNY", "time": now},
	}
	code, m, raw := f.post(t, f.merchant, f.demoStream, good)
	if code != 200 || m["accepted"] != 2.0 || m["duplicates"] != 0.0 {
		t.Fatalf("first batch: %d %s", code, raw)
	}
	// Sent again: duplicates, nothing stored twice.
	code, m, raw = f.post(t, f.merchant, f.demoStream, good)
	if code != 200 || m["accepted"] != 0.0 || m["duplicates"] != 2.0 {
		t.Fatalf("re-sent batch: %d %s", code, raw)
	}
	if n, _ := f.srv.experiments().CountEvents(context.Background()); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	// Ids are the shop's per stream: another stream's e1 is its own event,
	// and results name the ids as they were sent.
	code, m, raw = f.post(t, f.admin, f.streams[1], good)
	if code != 200 || m["accepted"] != 2.0 || m["events"].([]any)[0].(map[string]any)["id"] != "e1" {
		t.Fatalf("the same ids on another stream: %d %s", code, raw)
	}
	long := []map[string]any{{"id": strings.Repeat("x", maxEventID+1), "viewer_id": "v1", "item_id": "p-serum", "kind": "item_view", "time": now}}
	if code, m, _ := f.post(t, f.merchant, f.demoStream, long); code != 400 || m["field"] != "events[0].id" {
		t.Errorf("an over-long id: %d %v", code, m)
	}
	bad := []map[string]any{
		{"id": "b1", "viewer_id": "v1", "item_id": "p-none", "kind": "item_view", "time": now},
		{"id": "b2", "viewer_id": "v1", "item_id": "p-serum", "kind": "purchase", "amount_minor": -5, "currency": "CNY", "time": now},
		{"id": "b3", "viewer_id": "v1", "item_id": "p-serum", "kind": "item_view", "time": now.Add(time.Hour)},
		{"id": "e1", "viewer_id": "v2", "item_id": "p-serum", "kind": "item_view", "time": now},
		{"id": "b4", "viewer_id": "v1", "item_id": "p-serum", "kind": "refund", "time": now},
	}
	code, m, raw = f.post(t, f.admin, f.demoStream, bad)
	if code != 200 || m["rejected"] != 5.0 {
		t.Fatalf("bad batch: %d %s", code, raw)
	}
	for i, want := range []string{"not in the catalog", "negative", "future", "different content", "unknown"} {
		r := m["events"].([]any)[i].(map[string]any)
		if r["status"] != "rejected" || !strings.Contains(r["reason"].(string), want) {
			t.Errorf("event %d: %v, want rejected because %q", i, r, want)
		}
	}
	// The rival merchant cannot post to the demo stream; a developer is refused.
	if code, _, _ := f.post(t, f.rival, f.demoStream, good); code != 404 {
		t.Errorf("rival posting to the demo stream: %d, want 404", code)
	}
	// Mis-addressed, malformed, empty and oversized batches.
	if code, m, _ := f.post(t, f.merchant, f.demoStream, []map[string]any{{"id": "x", "stream_id": "other", "viewer_id": "v", "item_id": "p-serum", "kind": "item_view", "time": now}}); code != 400 || m["field"] != "events[0].stream_id" {
		t.Errorf("event of another stream: %d %v", code, m)
	}
	if code, m, _ := f.post(t, f.merchant, f.demoStream, []map[string]any{{"id": "x", "viewer_id": "v", "item_id": "p-serum", "kind": "item_view", "time": now, "experiment_id": "nope"}}); code != 400 || m["field"] != "events[0].experiment_id" {
		t.Errorf("event tagged with an unknown experiment: %d %v", code, m)
	}
	if code, m, _ := f.call(t, f.merchant, "POST", "/api/streams/"+f.demoStream+"/events", "application/json", `{"events": [{"id": "x", "colour": "red"}]}`); code != 400 || m["field"] != "events" {
		t.Errorf("unknown event field: %d %v", code, m)
	}
	if code, _, _ := f.post(t, f.merchant, f.demoStream, []map[string]any{}); code != 400 {
		t.Errorf("empty batch: %d, want 400", code)
	}
	big := make([]string, experiment.MaxBatch+1)
	for i := range big {
		big[i] = `{}`
	}
	if code, m, _ := f.call(t, f.merchant, "POST", "/api/streams/"+f.demoStream+"/events", "application/json", `{"events": [`+strings.Join(big, ",")+`]}`); code != 413 || m["field"] != "events" {
		t.Errorf("batch over MaxBatch: %d %v, want 413", code, m)
	}
	huge := `{"events": [{"id": "` + strings.Repeat("x", maxEventBody) + `"}]}`
	if code, _, _ := f.call(t, f.merchant, "POST", "/api/streams/"+f.demoStream+"/events", "application/json", huge); code != 413 {
		t.Errorf("body over the batch limit: %d, want 413", code)
	}
}

// liveTurn is a finished runtime turn answering viewer, as a live session
// hands it to the console.
func liveTurn(id, session, viewer string) *runtime.Turn {
	return &runtime.Turn{ID: id, Session: session, Event: harness.EventViewerMessage, Viewers: []string{viewer},
		Outcome: runtime.OutcomeReplied, Timing: runtime.Timing{Total: 800 * time.Millisecond},
		Actions: []runtime.AvatarAction{{Item: "p-serum"}}}
}

func TestExperimentLifecycleReportAndShip(t *testing.T) {
	f := newExperimentFixture(t, 29)
	withHookPlugins(t, f.testEnv) // a release needs the plugins the version names
	ctx := context.Background()
	m := f.create(t, "stream", 5)
	id := m["id"].(string)
	if code, _, _ := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/ship", "", ""); code != 409 {
		t.Errorf("ship a draft: %d, want 409", code)
	}
	code, m, raw := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/start", "", "")
	if code != 200 || m["state"] != "running" {
		t.Fatalf("start: %d %s", code, raw)
	}
	if code, _, _ := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/start", "", ""); code != 409 {
		t.Errorf("second start: %d, want 409", code)
	}
	// A second experiment cannot take the same streams while this one runs.
	other := f.create(t, "stream", 5)
	if code, m, _ := f.call(t, f.admin, "POST", "/api/experiments/"+other["id"].(string)+"/start", "", ""); code != 409 || m["field"] != "streams" {
		t.Errorf("start on busy streams: %d %v", code, m)
	}
	// Every stream has its arm, and runs the arm's version.
	armOf := map[string]string{}
	for _, x := range m["streams"].([]any) {
		x := x.(map[string]any)
		sid, arm := x["stream_id"].(string), x["arm"].(string)
		armOf[sid] = arm
		st, _ := f.store.Stream(ctx, f.adminUser.Scope(), sid)
		want := f.demo.Version()
		if arm == "short" {
			want = f.candidate
		}
		if st.HarnessVersion != want || x["harness_version"] != want || x["previous_version"] != f.demo.Version() {
			t.Fatalf("stream %s in arm %s runs %s (%v)", sid, arm, st.HarnessVersion, x)
		}
	}
	n := map[string]int{}
	for _, a := range armOf {
		n[a]++
	}
	if n["control"] < 5 || n["short"] < 5 {
		t.Fatalf("split of 30 streams %v: an arm is under the planned 5", n)
	}
	// Live turns: two viewers per stream ask; the treatment's viewers buy
	// twice as much. A turn under another version is not the arm's.
	for i, sid := range f.streams {
		x := armVersion(f, armOf[sid])
		f.srv.experimentTurn(sid, f.demo.Version()+"-other", armPin{}, liveTurn(fmt.Sprintf("off-%d", i), "s-"+sid, "ghost"), 0)
		for v := range 2 {
			f.srv.experimentTurn(sid, x, armPin{}, liveTurn(fmt.Sprintf("t%d-%d", i, v), "s-"+sid, fmt.Sprintf("v%d-%d", i, v)), v)
		}
		now := time.Now().UTC() // after the exposures above
		var events []map[string]any
		for v := range 2 {
			viewer := fmt.Sprintf("v%d-%d", i, v)
			amount := 10000 + 100*((i+v)%7)
			if armOf[sid] == "short" {
				amount *= 2
			}
			events = append(events, map[string]any{"id": fmt.Sprintf("buy-%d-%d", i, v), "viewer_id": viewer, "item_id": "p-serum",
				"kind": "purchase", "amount_minor": amount, "currency": "CNY", "time": now})
		}
		if code, m, raw := f.post(t, f.admin, sid, events); code != 200 || m["accepted"] != 2.0 {
			t.Fatalf("events of %s: %d %s", sid, code, raw)
		}
	}
	// The report is Analyze over the stored data, as of the same time.
	asOf := time.Now().UTC()
	code, _, raw = f.call(t, f.admin, "GET", "/api/experiments/"+id+"/report?as_of="+asOf.Format(time.RFC3339Nano), "", "")
	if code != 200 {
		t.Fatalf("report: %d %s", code, raw)
	}
	exp, data, err := f.srv.experiments().Data(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := experiment.Analyze(exp, data, experiment.AnalyzeOptions{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	// Both sides through a map, so that key order does not matter.
	var got, wantAny any
	_ = json.Unmarshal(raw, &got)
	wantRaw, _ := json.Marshal(want)
	_ = json.Unmarshal(wantRaw, &wantAny)
	gb, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(wantAny)
	if string(gb) != string(wantJSON) {
		t.Errorf("report differs from Analyze over the same data:\n got %s\nwant %s", gb, wantJSON)
	}
	if len(data.Turns) != 60 || len(data.Exposures) != 90 {
		t.Errorf("stored %d turns and %d exposures, want 60 (the off-version turns left out) and 90 (30 streams, 60 viewers)", len(data.Turns), len(data.Exposures))
	}
	for _, a := range want.Arms {
		if a.Units != n[a.Arm] || a.Replies != 2*n[a.Arm] {
			t.Errorf("arm %s: %d units, %d replies; want %d and %d", a.Arm, a.Units, a.Replies, n[a.Arm], 2*n[a.Arm])
		}
		// One message shed per two answered in every stream: 1,000/3 per 1,000.
		if m, _ := a.Metric(experiment.MetricShedPer1000); math.Abs(m.Value-1000.0/3) > 1e-9 {
			t.Errorf("arm %s: shed per 1,000 messages %v, want 333.33", a.Arm, m.Value)
		}
	}
	if want.Verdict.Decision != experiment.DecisionShip || want.Verdict.Winner != "short" {
		t.Fatalf("verdict %+v, want ship short", want.Verdict)
	}
	// The series has the points asked for, each no later than the next.
	code, sm, raw := f.call(t, f.admin, "GET", "/api/experiments/"+id+"/series?points=4", "", "")
	if code != 200 || len(sm["points"].([]any)) != 4 {
		t.Fatalf("series: %d %s", code, raw)
	}
	if code, _, _ := f.call(t, f.admin, "GET", "/api/experiments/"+id+"/series?points=1000", "", ""); code != 400 {
		t.Errorf("series of 1000 points: %d, want 400", code)
	}

	// Shipping waits for the stop; the stop puts the streams back.
	if code, _, _ := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/ship", "", ""); code != 409 {
		t.Errorf("ship while running: %d, want 409", code)
	}
	code, m, raw = f.call(t, f.admin, "POST", "/api/experiments/"+id+"/stop", "", "")
	if code != 200 || m["state"] != "stopped" {
		t.Fatalf("stop: %d %s", code, raw)
	}
	for _, sid := range f.streams {
		if st, _ := f.store.Stream(ctx, f.adminUser.Scope(), sid); st.HarnessVersion != f.demo.Version() {
			t.Errorf("stream %s runs %s after the stop", sid, st.HarnessVersion)
		}
	}
	// No gate for the winner's version yet: 409 saying to run it.
	code, m, raw = f.call(t, f.admin, "POST", "/api/experiments/"+id+"/ship", "", "")
	if code != 409 || m["field"] != "gate" || !strings.Contains(m["error"].(string), "run it") {
		t.Fatalf("ship without a gate: %d %s", code, raw)
	}
	// With a passed gate the winner is published to the experiment's streams.
	sc := f.adminUser.Scope()
	// A gate of the model that serves the streams.
	g, err := f.store.CreateHarnessGate(ctx, sc, store.HarnessGate{Candidate: f.candidate, Baseline: f.demo.Version(),
		Model: f.srv.servingModelName(ctx, sc.OrgID), Suites: []string{"live"}, N: 1, Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.FinishHarnessGate(ctx, sc, g.ID, store.GatePassed, json.RawMessage(`{}`), "", nil, nil); err != nil {
		t.Fatal(err)
	}
	code, m, raw = f.call(t, f.admin, "POST", "/api/experiments/"+id+"/ship", "", "")
	rel, _ := m["release"].(map[string]any)
	if code != 201 || rel["version"] != f.candidate || rel["gate_id"] != g.ID || m["serving"] != nil {
		t.Fatalf("ship: %d %s", code, raw)
	}
	if ship, _ := m["ship"].(map[string]any); ship["release_id"] != rel["id"] || ship["shipper"] != "admin" || ship["arm"] != "short" {
		t.Errorf("the ship's record %v, want the release and who shipped", m["ship"])
	}
	for _, sid := range f.streams {
		if st, _ := f.store.Stream(ctx, sc, sid); st.HarnessVersion != f.candidate {
			t.Errorf("stream %s runs %s after shipping", sid, st.HarnessVersion)
		}
	}
	// Another organisation's operator sees none of it.
	org, err := f.store.CreateOrg(ctx, "Other org")
	if err != nil {
		t.Fatal(err)
	}
	op, err := f.store.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "other-op", Role: store.RoleOperator, PasswordHash: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	_, otherTok, err := f.store.CreateAPIToken(ctx, op.Scope(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call(t, otherTok, "GET", "/api/experiments", "", ""); code != 200 || string(raw) != "[]" {
		t.Errorf("another organisation's list: %d %s", code, raw)
	}
	for _, path := range []string{"", "/report", "/series"} {
		if code, _, _ := f.call(t, otherTok, "GET", "/api/experiments/"+id+path, "", ""); code != 404 {
			t.Errorf("another organisation reading %s: %d, want 404", path, code)
		}
	}
	for _, path := range []string{"/stop", "/ship"} {
		if code, _, _ := f.call(t, otherTok, "POST", "/api/experiments/"+id+path, "", ""); code != 404 {
			t.Errorf("another organisation posting %s: %d, want 404", path, code)
		}
	}
	if code, _, _ := f.post(t, otherTok, f.demoStream, []map[string]any{{"id": "x", "viewer_id": "v", "item_id": "p-serum", "kind": "item_view", "time": time.Now()}}); code != 404 {
		t.Errorf("another organisation posting events to the demo stream: %d, want 404", code)
	}
}

// armVersion is the harness version streams of an arm run.
func armVersion(f *experimentFixture, arm string) string {
	if arm == "short" {
		return f.candidate
	}
	return f.demo.Version()
}

// TestExperimentStopKeepsALaterRelease: a stream published to while the
// experiment ran keeps what was published when the experiment stops, and
// its turns under that version are not the arm's.
func TestExperimentStopKeepsALaterRelease(t *testing.T) {
	f := newExperimentFixture(t, 0)
	ctx := context.Background()
	body, _ := json.Marshal(map[string]any{"name": "one stream", "unit": "stream", "streams": f.streams,
		"arms": []map[string]any{{"name": "control", "weight": 1e-6}, {"name": "short", "harness_version": f.candidate, "weight": 1e6}}})
	code, m, raw := f.call(t, f.admin, "POST", "/api/experiments", "application/json", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := m["id"].(string)
	if code, _, raw := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/start", "", ""); code != 200 {
		t.Fatalf("start: %d %s", code, raw)
	}
	sc := f.adminUser.Scope()
	if st, _ := f.store.Stream(ctx, sc, f.demoStream); st.HarnessVersion != f.candidate {
		t.Fatalf("the stream runs %s, not the arm's version", st.HarnessVersion)
	}
	// A release moves the stream back to the demo version mid-experiment.
	if err := f.store.SetStreamHarness(ctx, sc, f.demoStream, f.demo.Version()); err != nil {
		t.Fatal(err)
	}
	f.srv.experimentTurn(f.demoStream, f.demo.Version(), armPin{}, liveTurn("after-release", "s1", "v1"), 0)
	if _, data, _ := f.srv.experiments().Data(ctx, id); len(data.Turns) != 0 {
		t.Errorf("a turn under the released version was recorded for the arm: %+v", data.Turns)
	}
	v3 := f.demo.Clone()
	v3.Pipeline.ReplyChars.Value = 90
	doc, _ := harness.Marshal(v3)
	if _, _, err := f.store.PutHarnessVersion(ctx, systemScope(f.adminUser.OrgID), store.HarnessVersion{Version: v3.Version(), Name: v3.Name, Document: doc}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.SetStreamHarness(ctx, sc, f.demoStream, v3.Version()); err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/stop", "", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	if st, _ := f.store.Stream(ctx, sc, f.demoStream); st.HarnessVersion != v3.Version() {
		t.Errorf("after the stop the stream runs %s, not the version released to it", st.HarnessVersion)
	}
	if code, _, _ := f.call(t, f.admin, "POST", "/api/experiments/"+id+"/stop", "", ""); code != 409 {
		t.Errorf("second stop: %d, want 409", code)
	}
}
