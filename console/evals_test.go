package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// evalEnv is a run env with the example plugins the demo harness names
// loaded in its sandbox and installed as the organisation's plugins, as
// serve installs them on first run.
func evalEnv(t *testing.T) *testEnv {
	t.Helper()
	e, _ := newRunEnv(t)
	withHookPlugins(t, e)
	e.srv.cfg.PluginDirs = append(e.srv.cfg.PluginDirs, testfixture.DemoPluginDirs()...)
	if err := e.srv.InstallExamples(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// waitEval polls an evaluation until it is no longer queued or running.
func waitEval(t *testing.T, e *testEnv, id string) map[string]any {
	t.Helper()
	return waitJob(t, e, "/api/evals/"+id, "its end", func(m map[string]any) bool { return m["state"] != "queued" && m["state"] != "running" })
}

func TestEvaluationWithTheExpert(t *testing.T) {
	e := evalEnv(t)
	code, ev, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", `{"suite":"lsqa","n":3,"model":"expert"}`)
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	id := ev["id"].(string)
	ev = waitEval(t, e, id)
	if ev["state"] != "done" || ev["done"].(float64) != 3 || ev["model_name"] != "expert" {
		t.Fatalf("evaluation ended as %v", ev)
	}
	rep := ev["report"].(map[string]any)
	if rep["name"] != "lsqa" || rep["n"].(float64) != 3 || rep["score"].(float64) != ev["score"].(float64) {
		t.Errorf("report %v, score %v", rep, ev["score"])
	}
	// The scripted expert answers the room's questions right.
	if ev["score"].(float64) < 60 {
		t.Errorf("the expert scored %v on three LSQA items", ev["score"])
	}
	code, items, _ := e.callList(t, e.admin, "/api/evals/"+id+"/items")
	if code != 200 || len(items) != 3 {
		t.Fatalf("items: %d %v", code, items)
	}
	for i, it := range items {
		if it["index"].(float64) != float64(i) || it["question"] == "" || it["item_id"] == "" || it["outcome"] == "" {
			t.Errorf("item %d: %v", i, it)
		}
		if _, ok := it["grade"].(map[string]any)["accuracy"]; !ok {
			t.Errorf("item %d has no grade: %v", i, it["grade"])
		}
	}
	first := items[0]["item_id"].(string)
	code, it, _ := e.call(t, e.admin, "GET", "/api/evals/"+id+"/items/"+first, "", "")
	if code != 200 || it["item_id"] != first || it["reply"] != items[0]["reply"] {
		t.Errorf("item drill-down: %d %v", code, it)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/evals/"+id+"/items/lsqa-999-99", "", ""); code != 404 {
		t.Errorf("unknown item: %d", code)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/evals/"+id+"/stop", "", ""); code != 409 {
		t.Errorf("stopping a finished evaluation: %d %v", code, m)
	}
	// The history lists it, filtered by suite.
	if code, list, _ := e.callList(t, e.admin, "/api/evals?suite=lsqa"); code != 200 || len(list) != 1 || list[0]["id"] != id {
		t.Errorf("history: %d %v", code, list)
	}
	if code, list, _ := e.callList(t, e.admin, "/api/evals?suite=hvqa"); code != 200 || len(list) != 0 {
		t.Errorf("hvqa history: %d %v", code, list)
	}
	// A strategy episode's question lists its turns.
	code, ev, raw = e.call(t, e.admin, "POST", "/api/evals", "application/json", `{"suite":"strategy","n":1,"model":"expert"}`)
	if code != 201 {
		t.Fatalf("strategy: %d %s", code, raw)
	}
	if ev = waitEval(t, e, ev["id"].(string)); ev["state"] != "done" {
		t.Fatalf("strategy evaluation: %v", ev)
	}
	_, items, _ = e.callList(t, e.admin, "/api/evals/"+ev["id"].(string)+"/items")
	if len(items) != 1 || strings.Count(items[0]["question"].(string), "\n") < 1 {
		t.Errorf("strategy item: %v", items)
	}
	// A finished evaluation can be deleted, items and all.
	if code, _, raw := e.call(t, e.admin, "DELETE", "/api/evals/"+id, "", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/evals/"+id+"/items/"+first, "", ""); code != 404 {
		t.Errorf("an item of a deleted evaluation answers %d", code)
	}
}

// TestARunCheckpointIsEvaluatedServedAndTrainedOn takes one tiny SFT run
// through what follows it: evaluation of its checkpoint, promotion to
// serving, evaluation of the serving model, and OPD and RL from it.
func TestARunCheckpointIsEvaluatedServedAndTrainedOn(t *testing.T) {
	e := evalEnv(t)
	code, run, raw := e.call(t, e.admin, "POST", "/api/runs", "application/json", tinyRun(2))
	if code != 201 {
		t.Fatalf("start run: %d %s", code, raw)
	}
	runID := run["id"].(string)
	if code, m, _ := e.call(t, e.admin, "POST", "/api/evals", "application/json", `{"suite":"lsqa","n":1,"model":"serving"}`); code != 409 || m["field"] != "model" {
		t.Errorf("serving model when none is configured or promoted: %d %v", code, m)
	}
	waitRun(t, e, runID, "done", func(m map[string]any) bool { return m["state"] == "done" })
	for _, body := range []string{
		fmt.Sprintf(`{"suite":"lsqa","n":1,"model":"run","run_id":%q}`, runID),
		`{"suite":"hvqa","n":1,"model":"serving"}`,
	} {
		if body == `{"suite":"hvqa","n":1,"model":"serving"}` {
			if code, _, raw := e.call(t, e.admin, "POST", "/api/runs/"+runID+"/promote", "", ""); code != 200 {
				t.Fatalf("promote: %d %s", code, raw)
			}
		}
		code, ev, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", body)
		if code != 201 {
			t.Fatalf("%s: %d %s", body, code, raw)
		}
		ev = waitEval(t, e, ev["id"].(string))
		// A two-step model answers badly, but it answers: the item is
		// graded, not failed.
		if ev["state"] != "done" || ev["done"].(float64) != 1 || ev["score"] == nil {
			t.Errorf("%s: %v", body, ev)
		}
		if !strings.Contains(ev["model_name"].(string), "step 2") {
			t.Errorf("%s: model name %v does not say which checkpoint", body, ev["model_name"])
		}
	}
	trainFromRun(t, e, runID)
}

// trainFromRun distils and reinforces a finished run's checkpoint
// through the API: each stage's own numbers reach its metrics.
func trainFromRun(t *testing.T, e *testEnv, sftID string) {
	t.Helper()
	for _, c := range []struct{ body, key string }{
		{fmt.Sprintf(`{"stage":"opd","init_run":%q,"teacher_run":%q,"steps":1,"batch":1,"eval_size":0,"threads":1}`, sftID, sftID), "kl"},
		{fmt.Sprintf(`{"stage":"rl","init_run":%q,"steps":1,"batch":1,"group":2,"rooms":2,"max_items":2,"eval_size":0,"threads":1}`, sftID), "reward_mean"},
	} {
		code, run, raw := e.call(t, e.admin, "POST", "/api/runs", "application/json", c.body)
		if code != 201 {
			t.Fatalf("%s: %d %s", c.body, code, raw)
		}
		id := run["id"].(string)
		m := waitRun(t, e, id, "its end", func(m map[string]any) bool { return m["state"] != "queued" && m["state"] != "running" })
		if m["state"] != "done" {
			_, _, log := e.call(t, e.admin, "GET", "/api/runs/"+id+"/log", "", "")
			t.Fatalf("%s ended %v: %v\n%s", m["stage"], m["state"], m["error"], log)
		}
		_, lines, _ := e.callList(t, e.admin, "/api/runs/"+id+"/metrics")
		if len(lines) != 1 || lines[0][c.key] == nil {
			t.Errorf("%s metrics %v lack %s", m["stage"], lines, c.key)
		}
		// The run trains on its own copy of the starting checkpoint.
		init := filepath.Join(m["dir"].(string), initDir)
		if _, err := os.Stat(filepath.Join(init, "config.json")); err != nil {
			t.Errorf("%s: no copy of the starting checkpoint: %v", m["stage"], err)
		}
		if _, err := os.Stat(filepath.Join(init, runfolder.OptimizerFile)); err == nil {
			t.Errorf("%s: the starting checkpoint's copy carries optimizer state", m["stage"])
		}
	}
}

func TestEvaluationBadInputAndIsolation(t *testing.T) {
	e, _ := newRunEnv(t)
	for _, c := range []struct {
		body, field string
		code        int
	}{
		{`{"suite":"lsqa","n":1,"model":"expert","x":1}`, "body", 400},
		{`{"suite":"mmlu","n":1,"model":"expert"}`, "suite", 400},
		{`{"suite":"lsqa","n":0,"model":"expert"}`, "n", 400},
		{`{"suite":"lsqa","n":100000,"model":"expert"}`, "n", 400},
		{`{"suite":"lsqa","n":1,"model":"gpt"}`, "model", 400},
		{`{"suite":"lsqa","n":1,"model":"run"}`, "run_id", 400},
		{`{"suite":"lsqa","n":1,"model":"run","run_id":"nope"}`, "run_id", 422},
		{`{"suite":"lsqa","n":1,"model":"url","url":"ftp://x"}`, "url", 400},
		{`{"suite":"lsqa","n":1,"model":"url","url":"http://127.0.0.1:9"}`, "remote_model", 400},
		{`{"suite":"lsqa","n":1,"model":"expert","run_id":"x"}`, "run_id", 400},
		{`{"suite":"lsqa","n":1,"model":"expert","harness":"sha256:0"}`, "harness", 400},
	} {
		code, m, _ := e.call(t, e.admin, "POST", "/api/evals", "application/json", c.body)
		if code != c.code || m["field"] != c.field {
			t.Errorf("%s: %d %v, want %d naming %s", c.body, code, m, c.code, c.field)
		}
	}
	if code, m, _ := e.call(t, e.admin, "GET", "/api/evals?suite=x", "", ""); code != 400 || m["field"] != "suite" {
		t.Errorf("history of an unknown suite: %d %v", code, m)
	}
	if code, list, _ := e.callList(t, e.admin, "/api/evals/suites"); code != 200 || len(list) != 4 || list[0]["items"].(float64) < 100 {
		t.Errorf("suites: %d %v", code, list)
	}
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	ev, err := e.store.CreateEvaluation(ctx, admin.Scope(), store.NewEvaluation{Suite: "lsqa", N: 1, ModelKind: "expert", ModelName: "expert", HarnessVersion: e.demo.Version()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{e.merchant, e.rival, e.dev} {
		for _, c := range [][2]string{{"GET", "/api/evals"}, {"POST", "/api/evals"}, {"GET", "/api/evals/" + ev.ID},
			{"GET", "/api/evals/" + ev.ID + "/items"}, {"POST", "/api/evals/" + ev.ID + "/stop"}, {"GET", "/api/evals/suites"},
			{"DELETE", "/api/evals/" + ev.ID}} {
			if code, _, _ := e.call(t, tok, c[0], c[1], "application/json", `{"suite":"lsqa","n":1,"model":"expert"}`); code != 403 {
				t.Errorf("%s %s by a non-operator: %d, want 403", c[0], c[1], code)
			}
		}
	}
	org, _ := e.store.CreateOrg(ctx, "Other org")
	other, _ := e.store.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "other-op", Role: store.RoleOperator, PasswordHash: "unused"})
	_, otherTok, err := e.store.CreateAPIToken(ctx, other.Scope(), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/evals/" + ev.ID, "/api/evals/" + ev.ID + "/items"} {
		if code, _, _ := e.call(t, otherTok, "GET", path, "", ""); code != 404 {
			t.Errorf("GET %s by another org's operator: %d, want 404", path, code)
		}
	}
	if code, _, _ := e.call(t, otherTok, "DELETE", "/api/evals/"+ev.ID, "", ""); code != 404 {
		t.Errorf("another org's operator deletes the evaluation: %d", code)
	}
	if code, m, _ := e.call(t, e.admin, "DELETE", "/api/evals/"+ev.ID, "", ""); code != 409 {
		t.Errorf("deleting a queued evaluation: %d %v", code, m)
	}
	if code, list, _ := e.callList(t, otherTok, "/api/evals"); code != 200 || len(list) != 0 {
		t.Errorf("another org's history: %d %v", code, list)
	}
}
