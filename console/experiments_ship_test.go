package console

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// shipEnv is a test console with a configured model (the rule-based
// host) whose experiments can reach a verdict without live rooms.
type shipEnv struct {
	*testEnv
	adminScope store.Scope
}

func newShipEnv(t *testing.T) *shipEnv {
	t.Helper()
	e := newTestEnv(t, nil)
	e.srv.cfg.Model, e.srv.cfg.ModelName = liveroom.Host{}, liveroom.HostModelName
	admin, err := e.store.UserByUsername(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	return &shipEnv{testEnv: e, adminScope: admin.Scope()}
}

// promoteFixture makes a folder under models/ look promoted from a run of
// the organisation at a step, as the Training page's promote leaves it
// (without weights: nothing here loads it).
func (e *shipEnv) promoteFixture(t *testing.T, runID string, step int) string {
	t.Helper()
	ctx := context.Background()
	if _, err := e.store.CreateRun(ctx, e.adminScope, store.NewTrainingRun{ID: runID, Name: "tiny", Stage: "sft", Config: []byte(`{}`), Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	models, _ := e.srv.dataPath("models")
	dir := filepath.Join(models, fmt.Sprintf("%s-step%d", runID, step))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := runfolder.WriteJSON(filepath.Join(dir, promotedFile), promotion{RunID: runID, RunName: "tiny", Stage: "sft", Step: step}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// finishedEval stores a finished evaluation with the given suite score
// and category scores, as the Evaluations page leaves one.
func (e *shipEnv) finishedEval(t *testing.T, suite string, n int, kind, ref, name string, score float64, cats map[string]float64) string {
	t.Helper()
	ctx := context.Background()
	ev, err := e.store.CreateEvaluation(ctx, e.adminScope, store.NewEvaluation{Suite: suite, N: n, ModelKind: kind, ModelRef: ref, ModelName: name, HarnessVersion: e.demo.Version()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetEvaluationState(ctx, e.adminScope, ev.ID, []store.JobState{store.JobQueued}, store.JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	rep := eval.SuiteReport{Name: suite, Score: score, N: n, CI95: [2]float64{score - 10, score + 10}, Categories: map[string]eval.Summary{}}
	for k, v := range cats {
		rep.Categories[k] = eval.Summary{Score: v, N: n}
	}
	raw, _ := json.Marshal(rep)
	if err := e.store.FinishEvaluation(ctx, e.adminScope, ev.ID, store.JobDone, &score, raw, nil, ""); err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// stoppedWinner runs a viewer-unit experiment on the demo stream in which
// the second arm's viewers buy twice what the control's do, and stops it:
// its verdict ships that arm. It is started through the experiment store,
// not the API, because an arm may name a fixture checkpoint folder that
// has no weights to serve; the ship is what these tests are about.
func (e *shipEnv) stoppedWinner(t *testing.T, winner map[string]any) experiment.Experiment {
	t.Helper()
	ctx := context.Background()
	winner["name"], winner["weight"] = "winner", 1
	x := createExperiment(t, e.testEnv, map[string]any{"name": "ship", "unit": "viewer", "streams": []string{e.demoStream},
		"arms":           []map[string]any{{"name": "control", "weight": 1}, winner},
		"primary_metric": "gmv_per_viewer", "planned_units_per_arm": 5, "analysis": "fixed_horizon"})
	if _, err := e.srv.experiments().Start(ctx, x.ID, e.store.Now()); err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	for arm, viewers := range viewersByArm(t, x, 8) {
		a := x.Arms[x.ArmIndex(arm)]
		bound := a.HarnessVersion
		if bound == "" {
			bound = e.demo.Version()
		}
		for i, v := range viewers {
			pin := armPin{experiment: x.ID, arm: arm, checkpoint: a.Checkpoint, air: "air-1"}
			e.srv.experimentTurn(e.demoStream, bound, pin, liveTurn("t-"+v, "s-"+arm, v), 0)
			amount := 10000 + 100*(i%5)
			if arm == "winner" {
				amount *= 2
			}
			events = append(events, map[string]any{"id": "buy-" + v, "viewer_id": v, "item_id": "p-serum", "kind": "purchase",
				"amount_minor": amount, "currency": "CNY", "time": time.Now().UTC()})
		}
	}
	body, _ := json.Marshal(map[string]any{"events": events})
	if code, m, raw := e.call(t, e.admin, "POST", "/api/streams/"+e.demoStream+"/events", "application/json", string(body)); code != 200 || m["accepted"] != 16.0 {
		t.Fatalf("events: %d %s", code, raw)
	}
	if code, _, raw := e.call(t, e.admin, "POST", "/api/experiments/"+x.ID+"/stop", "", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	rep, err := e.srv.experiments().Report(ctx, x.ID, experiment.AnalyzeOptions{})
	if err != nil || rep.Verdict.Decision != experiment.DecisionShip || rep.Verdict.Winner != "winner" {
		t.Fatalf("verdict %+v (%v), want ship winner", rep.Verdict, err)
	}
	return x
}

// ship posts to the experiment's ship endpoint.
func (e *shipEnv) ship(t *testing.T, id, body string) (int, map[string]any, []byte) {
	t.Helper()
	return e.call(t, e.admin, "POST", "/api/experiments/"+id+"/ship", "application/json", body)
}

// TestShipCheckpointWinner ships a winner that names a promoted
// checkpoint: without its evaluations on every live-room suite, then
// without the serving model's to compare with, the ship is refused naming
// the gate and the evaluation to run; a regression is refused unless an
// override reason is given; shipped, the checkpoint serves and the
// experiment's history records the gate, the override and who shipped.
func TestShipCheckpointWinner(t *testing.T) {
	e := newShipEnv(t)
	folder := e.promoteFixture(t, "run-a", 4)
	x := e.stoppedWinner(t, map[string]any{"checkpoint": filepath.Base(folder)})

	code, m, raw := e.ship(t, x.ID, "")
	if code != 409 || m["field"] != "gate" || !strings.Contains(m["error"].(string), `"checkpoint": "run-a-step4"`) ||
		!strings.Contains(m["error"].(string), "lsqa, hvqa, robust, strategy") {
		t.Fatalf("ship without evaluations: %d %s", code, raw)
	}
	// Evaluations of the checkpoint: by kind checkpoint, and of its run at
	// the promoted step (kind run). One of the run at another step, and a
	// stopped one, are not the checkpoint's.
	e.finishedEval(t, eval.SuiteLSQA, 3, modelCheckpoint, folder, "run-a-step4 (tiny, step 4)", 70, map[string]float64{"price": 70})
	e.finishedEval(t, eval.SuiteHVQA, 3, modelRun, "run-a", "tiny (step 4)", 80, nil)
	e.finishedEval(t, eval.SuiteRobust, 3, modelCheckpoint, folder, "run-a-step4 (tiny, step 4)", 90, nil)
	e.finishedEval(t, eval.SuiteStrategy, 3, modelRun, "run-a", "tiny (step 9)", 90, nil)
	code, m, raw = e.ship(t, x.ID, "")
	if code != 409 || m["field"] != "gate" || !strings.Contains(m["error"].(string), "step 4) on strategy:") {
		t.Fatalf("ship without the strategy suite's evaluation: %d %s", code, raw)
	}
	e.finishedEval(t, eval.SuiteStrategy, 3, modelCheckpoint, folder, "run-a-step4 (tiny, step 4)", 90, nil)
	code, m, raw = e.ship(t, x.ID, "")
	if code != 409 || m["field"] != "gate" || !strings.Contains(m["error"].(string), "serving model "+liveroom.HostModelName) ||
		!strings.Contains(m["error"].(string), "lsqa with n=3") {
		t.Fatalf("ship without the serving model's evaluations: %d %s", code, raw)
	}
	// The serving model (the configured host, nothing promoted): lsqa
	// scores 5 points higher than the checkpoint, price 10 — regressions
	// by the release gate's rule. An evaluation of another size is not
	// comparable and is skipped.
	e.finishedEval(t, eval.SuiteLSQA, 3, modelServing, "", liveroom.HostModelName, 75, map[string]float64{"price": 80})
	e.finishedEval(t, eval.SuiteLSQA, 10, modelServing, "", liveroom.HostModelName, 20, nil)
	for _, s := range []string{eval.SuiteHVQA, eval.SuiteRobust, eval.SuiteStrategy} {
		e.finishedEval(t, s, 3, modelServing, "", liveroom.HostModelName, 80, nil)
	}
	code, m, raw = e.ship(t, x.ID, "")
	if code != 409 || m["field"] != "override" || !strings.Contains(m["error"].(string), "lsqa -5.0") || !strings.Contains(m["error"].(string), "lsqa/price -10.0") {
		t.Fatalf("ship of a regressed checkpoint: %d %s", code, raw)
	}
	if code, _, raw = e.call(t, e.admin, "GET", "/api/serving-model", "", ""); !strings.Contains(string(raw), `"default":true`) {
		t.Fatalf("a refused ship changed the serving model: %s", raw)
	}

	reason := "the A/B verdict outweighs a 3-item lsqa drop"
	code, m, raw = e.ship(t, x.ID, fmt.Sprintf(`{"override": %q}`, reason))
	if code != 201 || m["release"] != nil {
		t.Fatalf("ship with an override: %d %s", code, raw)
	}
	ship := m["ship"].(map[string]any)
	if ship["serving"] != folder || ship["previous_serving"] != nil || ship["serving_changed"] != true || ship["override"] != reason || ship["shipper"] != "admin" {
		t.Errorf("the ship's record %v", ship)
	}
	gate := ship["gate"].(map[string]any)
	if regs := gate["comparison"].(map[string]any)["regressions"].([]any); len(regs) != 2 || len(gate["evaluations"].([]any)) != 4 {
		t.Errorf("the recorded gate %v, want four suites' evaluations and two regressions", gate)
	}
	code, sv, raw := e.call(t, e.admin, "GET", "/api/serving-model", "", "")
	if code != 200 || sv["spec"] != folder || sv["default"] != false || sv["promotion"].(map[string]any)["run_id"] != "run-a" {
		t.Fatalf("serving after the ship: %d %s", code, raw)
	}
	_, got, _ := e.call(t, e.admin, "GET", "/api/experiments/"+x.ID, "", "")
	ships := got["ships"].([]any)
	if len(ships) != 1 || ships[0].(map[string]any)["override"] != reason || ships[0].(map[string]any)["shipper"] != "admin" {
		t.Errorf("the experiment's history %v, want the ship with its override and shipper", got["ships"])
	}
	// Shipping again changes nothing: the checkpoint serves already.
	code, m, raw = e.ship(t, x.ID, "")
	if code != 201 || m["ship"].(map[string]any)["serving_changed"] != false {
		t.Errorf("second ship: %d %s", code, raw)
	}
	for _, tok := range []string{e.merchant, e.dev} {
		if code, _, _ := e.call(t, tok, "POST", "/api/experiments/"+x.ID+"/ship", "", ""); code != 403 {
			t.Errorf("ship by a non-operator: %d, want 403", code)
		}
	}
}

// TestShipHarnessAndCheckpointWinner ships a winner with both a harness
// version and a checkpoint (the console's model by name, while a promoted
// checkpoint serves): the version is published to the experiment's stream
// through the release flow and the serving model goes back to the
// configured one, in one ship the history records with its release.
func TestShipHarnessAndCheckpointWinner(t *testing.T) {
	e := newShipEnv(t)
	withHookPlugins(t, e.testEnv) // a release needs the plugins the version names
	ctx := context.Background()
	v2 := putShorterVersion(t, e.testEnv)
	serving := e.promoteFixture(t, "run-b", 2)
	if err := e.store.SetOrgSetting(ctx, e.adminScope, servingSetting, serving); err != nil {
		t.Fatal(err)
	}
	x := e.stoppedWinner(t, map[string]any{"harness_version": v2.Version(), "checkpoint": liveroom.HostModelName})
	for _, s := range evalSuites() {
		e.finishedEval(t, s, 2, modelCheckpoint, liveroom.HostModelName, liveroom.HostModelName, 85, nil)
		// The serving checkpoint, evaluated while it served.
		e.finishedEval(t, s, 2, modelServing, "run-b", "tiny (step 2, serving)", 80, nil)
	}
	// No release gate of the version yet: refused before anything changes.
	code, m, raw := e.ship(t, x.ID, "")
	if code != 409 || m["field"] != "gate" || !strings.Contains(m["error"].(string), "release gate") {
		t.Fatalf("ship without a release gate: %d %s", code, raw)
	}
	// A gate of the checkpoint that ships with the version.
	g, err := e.store.CreateHarnessGate(ctx, e.adminScope, store.HarnessGate{Candidate: v2.Version(), Baseline: e.demo.Version(), Model: liveroom.HostModelName, Suites: []string{"lsqa"}, N: 1, Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.FinishHarnessGate(ctx, e.adminScope, g.ID, store.GatePassed, json.RawMessage(`{}`), "", nil, nil); err != nil {
		t.Fatal(err)
	}
	code, m, raw = e.ship(t, x.ID, "")
	if code != 201 {
		t.Fatalf("ship: %d %s", code, raw)
	}
	rel := m["release"].(map[string]any)
	ship := m["ship"].(map[string]any)
	if rel["version"] != v2.Version() || rel["gate_id"] != g.ID || ship["release_id"] != rel["id"] || ship["previous_serving"] != serving ||
		ship["serving"] != nil || ship["serving_changed"] != true {
		t.Errorf("ship answered release %v and record %v", rel, ship)
	}
	if st, _ := e.store.Stream(ctx, e.adminScope, e.demoStream); st.HarnessVersion != v2.Version() {
		t.Errorf("the stream runs %s after the ship, want %s", st.HarnessVersion, v2.Version())
	}
	code, sv, raw := e.call(t, e.admin, "GET", "/api/serving-model", "", "")
	if code != 200 || sv["default"] != true || sv["spec"] != liveroom.HostModelName {
		t.Errorf("serving after shipping the configured model: %d %s", code, raw)
	}
}

// TestEvaluationOfACheckpoint: an evaluation may name an exact checkpoint
// (what a ship is gated on) by its promoted folder or as the console's
// model; anything else is refused naming the field.
func TestEvaluationOfACheckpoint(t *testing.T) {
	e := newShipEnv(t)
	folder := e.promoteFixture(t, "run-c", 3)
	t.Cleanup(func() { _ = e.srv.App().Shutdown() })
	for _, c := range []struct {
		body, field string
		code        int
	}{
		{`{"suite":"lsqa","n":1,"model":"checkpoint"}`, "checkpoint", 422},
		{`{"suite":"lsqa","n":1,"model":"checkpoint","checkpoint":"nope"}`, "checkpoint", 422},
		{`{"suite":"lsqa","n":1,"model":"checkpoint","checkpoint":"../runs"}`, "checkpoint", 422},
		{`{"suite":"lsqa","n":1,"model":"expert","checkpoint":"run-c-step3"}`, "checkpoint", 400},
	} {
		if code, m, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", c.body); code != c.code || m["field"] != c.field {
			t.Errorf("%s: %d %s, want %d naming %s", c.body, code, raw, c.code, c.field)
		}
	}
	code, ev, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", `{"suite":"lsqa","n":1,"model":"checkpoint","checkpoint":"run-c-step3"}`)
	if code != 201 || ev["model_ref"] != folder || ev["model_name"] != "run-c-step3 (tiny, step 3)" {
		t.Fatalf("evaluation of a promoted checkpoint: %d %s", code, raw)
	}
	// The fixture folder has no weights: the evaluation fails opening it.
	if ev = waitEval(t, e.testEnv, ev["id"].(string)); ev["state"] != "failed" || !strings.Contains(fmt.Sprint(ev["error"]), "opening the model") {
		t.Errorf("evaluation of a folder without weights: %v", ev)
	}
	code, ev, raw = e.call(t, e.admin, "POST", "/api/evals", "application/json", fmt.Sprintf(`{"suite":"lsqa","n":1,"model":"checkpoint","checkpoint":%q}`, liveroom.HostModelName))
	if code != 201 || ev["model_ref"] != liveroom.HostModelName {
		t.Fatalf("evaluation of the console's model: %d %s", code, raw)
	}
	waitEval(t, e.testEnv, ev["id"].(string))
}
