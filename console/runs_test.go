package console

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// tinyRun is a training run that finishes in a few seconds on one core:
// the smallest preset on two rooms of one or two items.
func tinyRun(steps int) string {
	return fmt.Sprintf(`{"name":"tiny <b>run</b>","stage":"sft","model":"tiny","steps":%d,"batch":1,"lr":0.01,"rooms":2,
		"questions":5,"max_items":2,"vocab_size":1000,"save_every":1,"threads":1}`, steps)
}

// newRunEnv is a test env with a metrics registry whose background jobs
// are stopped before the store closes.
func newRunEnv(t *testing.T) (*testEnv, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e := newTestEnv(t, reg)
	t.Cleanup(func() { _ = e.srv.App().Shutdown() })
	return e, reg
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	name string
	data map[string]any
}

// readEvents reads a whole event stream (the run's stream ends once the
// run is no longer live).
func readEvents(t *testing.T, raw []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event %s: data %q: %v", cur.name, line, err)
			}
		case line == "" && cur.name != "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	return out
}

// followRun reads the run's event stream until its "end" event, opening
// it again when it closes early as a browser's EventSource would (one
// stream lasts at most eventStreamMax), and returns the events of all
// the streams; the last is "end".
func followRun(t *testing.T, e *testEnv, id string) []sseEvent {
	t.Helper()
	var all []sseEvent
	for range 20 {
		code, _, raw := e.call(t, e.admin, "GET", "/api/runs/"+id+"/events", "", "")
		if code != 200 {
			t.Fatalf("events: %d %s", code, raw)
		}
		all = append(all, readEvents(t, raw)...)
		if len(all) > 0 && all[len(all)-1].name == "end" {
			return all
		}
	}
	t.Fatalf("the run's event stream never ended: %v", all)
	return nil
}

// waitJob polls a run or an evaluation (path is its API path) until cond
// holds for it.
func waitJob(t *testing.T, e *testEnv, path, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		code, m, raw := e.call(t, e.admin, "GET", path, "", "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, raw)
		}
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got to %s: %v", path, what, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRun polls a run until cond holds for it.
func waitRun(t *testing.T, e *testEnv, id string, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	return waitJob(t, e, "/api/runs/"+id, what, cond)
}

func TestTrainingRunStreamsMetricsAndPromotes(t *testing.T) {
	e, reg := newRunEnv(t)
	code, run, raw := e.call(t, e.admin, "POST", "/api/runs", "application/json", tinyRun(4))
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	id := run["id"].(string)
	if run["state"] != "queued" && run["state"] != "running" {
		t.Errorf("a new run is %v", run["state"])
	}
	// The event stream follows the run to its end.
	events := followRun(t, e, id)
	seen := map[float64]bool{}
	var steps []float64
	var final map[string]any
	for _, ev := range events {
		switch ev.name {
		case "metrics":
			// A stream opened again sends the lines from the first.
			if step := ev.data["step"].(float64); !seen[step] {
				seen[step] = true
				steps = append(steps, step)
			}
			if loss, ok := ev.data["loss"].(float64); !ok || !(loss > 0) {
				t.Errorf("metrics line without a loss: %v", ev.data)
			}
			if _, ok := ev.data["tokens_per_s"].(float64); !ok {
				t.Errorf("metrics line without tokens/s: %v", ev.data)
			}
		case "run":
			final = ev.data
		}
	}
	if fmt.Sprint(steps) != "[1 2 3 4]" {
		t.Errorf("metrics steps over SSE = %v, want [1 2 3 4]", steps)
	}
	if last := events[len(events)-1]; last.name != "end" || last.data["state"] != "done" {
		t.Errorf("last event = %+v, want end with state done", last)
	}
	if final["state"] != "done" || final["step"].(float64) != 4 || final["checkpoint_step"].(float64) != 4 {
		t.Errorf("final run event = %v", final)
	}
	if final["name"] != "tiny <b>run</b>" {
		t.Errorf("name = %v, stored as given (the page escapes it)", final["name"])
	}
	code, lines, _ := e.callList(t, e.admin, "/api/runs/"+id+"/metrics")
	if code != 200 || len(lines) != 4 || lines[3]["eval_loss"] == nil {
		t.Errorf("metrics: %d, %d lines, last %v; want 4 with the final eval loss", code, len(lines), lines)
	}
	// The gauges carry the run's last step.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gauges := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "run" && l.GetValue() == id {
					gauges[f.GetName()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	if gauges["livehat_training_step"] != 4 || !(gauges["livehat_training_loss"] > 0) || !(gauges["livehat_training_tokens_per_second"] > 0) {
		t.Errorf("training gauges for the run = %v", gauges)
	}
	code, _, raw = e.call(t, e.admin, "GET", "/api/runs/"+id+"/log", "", "")
	if code != 200 || !strings.Contains(string(raw), "step 4/4") {
		t.Errorf("log: %d %s", code, raw)
	}

	// Promote: the serving model becomes a copy of the checkpoint.
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	if got := e.srv.servingModel(ctx, admin.OrgID); got != e.srv.cfg.ModelName {
		t.Errorf("serving model before promotion = %q, want the configured %q", got, e.srv.cfg.ModelName)
	}
	code, sv, raw := e.call(t, e.admin, "POST", "/api/runs/"+id+"/promote", "", "")
	if code != 200 {
		t.Fatalf("promote: %d %s", code, raw)
	}
	spec := sv["spec"].(string)
	if sv["default"] != false || !strings.HasSuffix(spec, id+"-step4") {
		t.Errorf("promoted: %v", sv)
	}
	if p, _ := sv["promotion"].(map[string]any); p["run_id"] != id || p["step"].(float64) != 4 || p["promoted_by"] != "admin" {
		t.Errorf("promotion record: %v", sv["promotion"])
	}
	if got := e.srv.servingModel(ctx, admin.OrgID); got != spec {
		t.Errorf("servingModel = %q, want %q", got, spec)
	}
	for _, f := range []string{"config.json", "tokenizer.json", runfolder.StateFile} {
		if _, err := os.Stat(filepath.Join(spec, f)); err != nil {
			t.Errorf("promoted folder lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(spec, runfolder.OptimizerFile)); err == nil {
		t.Error("the promoted folder carries optimizer state it does not need")
	}
	// A session opened after the promotion answers with the checkpoint.
	code, _, raw = e.call(t, e.admin, "POST", "/v1/chat/completions", "application/json",
		`{"model":"stream:`+e.demoStream+`","messages":[{"role":"user","content":"hello"}],"max_tokens":8}`)
	if code != 200 || !strings.Contains(string(raw), `"model":"`+spec+`"`) {
		t.Errorf("a turn after the promotion: %d %s, want the trace to name %s", code, raw, spec)
	}
	// The engine it answered with reports its work on /metrics.
	_, _, metrics := e.call(t, "", "GET", "/metrics", "", "")
	if series := `livehat_engine_steps_total{model="` + spec + `"}`; !strings.Contains(string(metrics), series) ||
		!strings.Contains(string(metrics), `livehat_engine_busy_seconds_total{model="`+spec+`"}`) {
		t.Errorf("/metrics lacks the served engine's series %s", series)
	}
	if code, sv, _ = e.call(t, e.admin, "GET", "/api/serving-model", "", ""); code != 200 || sv["spec"] != spec {
		t.Errorf("GET serving model: %d %v", code, sv)
	}
	if code, sv, _ = e.call(t, e.admin, "DELETE", "/api/serving-model", "", ""); code != 200 || sv["default"] != true {
		t.Errorf("reset serving model: %d %v", code, sv)
	}
	if got := e.srv.servingModel(ctx, admin.OrgID); got != e.srv.cfg.ModelName {
		t.Errorf("serving model after reset = %q", got)
	}
}

// callList is call for endpoints that answer a JSON array.
func (e *testEnv) callList(t *testing.T, token, path string) (int, []map[string]any, []byte) {
	t.Helper()
	code, _, raw := e.call(t, token, "GET", path, "", "")
	var list []map[string]any
	_ = json.Unmarshal(raw, &list)
	return code, list, raw
}

func TestTrainingRunStopAndResume(t *testing.T) {
	e, _ := newRunEnv(t)
	code, run, raw := e.call(t, e.admin, "POST", "/api/runs", "application/json", tinyRun(500))
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	id := run["id"].(string)
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs/"+id+"/resume", "", ""); code != 409 {
		t.Errorf("resuming a live run: %d %v, want 409", code, m)
	}
	if code, m, _ := e.call(t, e.admin, "DELETE", "/api/runs/"+id, "", ""); code != 409 {
		t.Errorf("deleting a live run: %d %v, want 409", code, m)
	}
	waitRun(t, e, id, "a checkpoint", func(m map[string]any) bool { return m["checkpoint_step"] != nil })
	code, run, raw = e.call(t, e.admin, "POST", "/api/runs/"+id+"/stop", "", "")
	if code != 202 {
		t.Fatalf("stop: %d %s", code, raw)
	}
	run = waitRun(t, e, id, "stopped", func(m map[string]any) bool { return m["state"] == "stopped" })
	ckpt := int(run["checkpoint_step"].(float64))
	if ckpt < 1 || ckpt >= 500 {
		t.Fatalf("stopped at checkpoint %d", ckpt)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs/"+id+"/stop", "", ""); code != 409 {
		t.Errorf("stopping a stopped run: %d %v, want 409", code, m)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs/"+id+"/resume", "application/json", fmt.Sprintf(`{"steps":%d}`, ckpt)); code != 400 || m["field"] != "steps" {
		t.Errorf("resuming to the checkpoint's own step: %d %v, want 400 on steps", code, m)
	}
	code, run, raw = e.call(t, e.admin, "POST", "/api/runs/"+id+"/resume", "application/json", fmt.Sprintf(`{"steps":%d}`, ckpt+2))
	if code != 202 || run["steps"].(float64) != float64(ckpt+2) {
		t.Fatalf("resume: %d %s", code, raw)
	}
	events := followRun(t, e, id)
	if last := events[len(events)-1]; last.data["state"] != "done" {
		t.Fatalf("resumed run ended with %+v", last)
	}
	// The metrics hold each step once: the resumed run dropped what the
	// stopped one logged past its checkpoint.
	_, lines, _ := e.callList(t, e.admin, "/api/runs/"+id+"/metrics")
	if len(lines) != ckpt+2 {
		t.Fatalf("%d metric lines after resuming from %d to %d", len(lines), ckpt, ckpt+2)
	}
	for i, l := range lines {
		if int(l["step"].(float64)) != i+1 {
			t.Fatalf("metric line %d is step %v", i, l["step"])
		}
	}
	_, _, raw = e.call(t, e.admin, "GET", "/api/runs/"+id+"/log", "", "")
	if !strings.Contains(string(raw), "starting at step "+fmt.Sprint(ckpt)) {
		t.Errorf("the log does not show the resume from step %d:\n%s", ckpt, raw)
	}
	// A finished run can be deleted with its folder.
	if code, _, raw := e.call(t, e.admin, "DELETE", "/api/runs/"+id, "", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, raw)
	}
	if _, err := os.Stat(run["dir"].(string)); !os.IsNotExist(err) {
		t.Errorf("the deleted run's folder remains: %v", err)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/runs/"+id, "", ""); code != 404 {
		t.Errorf("a deleted run answers %d", code)
	}
}

func TestTrainingRunBadInput(t *testing.T) {
	e, _ := newRunEnv(t)
	for _, c := range []struct {
		body, field string
		code        int
	}{
		{`{"stage":"sft","steps":2,"extra":1}`, "body", 400},
		{`{"stage":"dpo"}`, "stage", 400},
		{`{"stage":"sft","steps":-1}`, "steps", 400},
		{`{"stage":"sft","steps":1000001}`, "steps", 400},
		{`{"stage":"sft","lr":3}`, "lr", 400},
		{`{"stage":"sft","batch":-2}`, "batch", 400},
		{`{"stage":"sft","model":"huge"}`, "model", 400},
		{`{"stage":"sft","vocab_size":10}`, "vocab_size", 400},
		{`{"stage":"fixed-sft","augment":true}`, "augment", 400},
		{`{"stage":"sft","lora_rank":4,"lora_targets":["attn"]}`, "lora_targets", 400},
		{`{"stage":"opd"}`, "init_run", 400},
		{`{"stage":"opd","init_run":"x"}`, "teacher_run", 400},
		{`{"stage":"rl","init_run":"no-such-run"}`, "init_run", 422},
		{`{"stage":"sft","harness":"sha256:0000"}`, "harness", 400},
		{`{"stage":"sft","eval_size":-1}`, "eval_size", 400},
		{`{"stage":"sft","eval_every":-1}`, "eval_every", 400},
		{`{"stage":"sft","group":4}`, "group", 400},
		{`{"stage":"rl","init_run":"x","group":1}`, "group", 400},
	} {
		code, m, _ := e.call(t, e.admin, "POST", "/api/runs", "application/json", c.body)
		if code != c.code || m["field"] != c.field {
			t.Errorf("%s: %d %v, want %d naming %s", c.body, code, m, c.code, c.field)
		}
	}
	// A run without a checkpoint cannot start another or be promoted.
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	dir := t.TempDir()
	r, err := e.store.CreateRun(ctx, admin.Scope(), store.NewTrainingRun{ID: store.NewID(), Name: "empty", Stage: "sft",
		Config: json.RawMessage(tinyRun(2)), Dir: dir, Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs", "application/json", `{"stage":"rl","init_run":"`+r.ID+`"}`); code != 409 || m["field"] != "init_run" {
		t.Errorf("RL from a run without a checkpoint: %d %v", code, m)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs/"+r.ID+"/promote", "", ""); code != 409 {
		t.Errorf("promoting a run without a checkpoint: %d %v", code, m)
	}
	if code, m, _ := e.call(t, e.admin, "POST", "/api/runs/"+r.ID+"/resume", "application/json", `{"steps":"x"}`); code != 400 || m["field"] != "body" {
		t.Errorf("resume with a bad body: %d %v", code, m)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/runs/nope", "", ""); code != 404 {
		t.Errorf("unknown run: %d", code)
	}
}

func TestTrainingRunsAreForOperatorsOfTheOrg(t *testing.T) {
	e, _ := newRunEnv(t)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	r, err := e.store.CreateRun(ctx, admin.Scope(), store.NewTrainingRun{ID: store.NewID(), Name: "ours", Stage: "sft",
		Config: json.RawMessage(tinyRun(2)), Dir: t.TempDir(), Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	// An operator of another organisation.
	org, err := e.store.CreateOrg(ctx, "Other org")
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.store.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "other-op", Role: store.RoleOperator, PasswordHash: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	_, otherTok, err := e.store.CreateAPIToken(ctx, other.Scope(), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{e.merchant, e.rival, e.dev} {
		for _, c := range [][2]string{{"GET", "/api/runs"}, {"POST", "/api/runs"}, {"GET", "/api/runs/" + r.ID},
			{"GET", "/api/runs/" + r.ID + "/events"}, {"POST", "/api/runs/" + r.ID + "/stop"}, {"POST", "/api/runs/" + r.ID + "/promote"},
			{"GET", "/api/serving-model"}, {"DELETE", "/api/serving-model"}, {"GET", "/api/runs/options"}, {"DELETE", "/api/runs/" + r.ID}} {
			if code, _, _ := e.call(t, tok, c[0], c[1], "application/json", tinyRun(2)); code != 403 {
				t.Errorf("%s %s by a non-operator: %d, want 403", c[0], c[1], code)
			}
		}
	}
	if code, list, _ := e.callList(t, otherTok, "/api/runs"); code != 200 || len(list) != 0 {
		t.Errorf("another org's operator lists %d runs (%d)", len(list), code)
	}
	for _, c := range [][2]string{{"GET", "/api/runs/" + r.ID}, {"GET", "/api/runs/" + r.ID + "/metrics"}, {"GET", "/api/runs/" + r.ID + "/log"},
		{"POST", "/api/runs/" + r.ID + "/stop"}, {"POST", "/api/runs/" + r.ID + "/resume"}, {"POST", "/api/runs/" + r.ID + "/promote"},
		{"DELETE", "/api/runs/" + r.ID}} {
		if code, _, _ := e.call(t, otherTok, c[0], c[1], "", ""); code != 404 {
			t.Errorf("%s %s by another org's operator: %d, want 404", c[0], c[1], code)
		}
	}
	if code, m, _ := e.call(t, otherTok, "POST", "/api/runs", "application/json", `{"stage":"rl","init_run":"`+r.ID+`"}`); code != 422 || m["field"] != "init_run" {
		t.Errorf("another org's run as init: %d %v", code, m)
	}
	if code, list, _ := e.callList(t, e.admin, "/api/runs"); code != 200 || len(list) != 1 || list[0]["creator"] != "admin" {
		t.Errorf("the operator's runs: %d %v", code, list)
	}
}

// TestRestartMarksRunsInterrupted: a run left running by a killed process
// is interrupted when the console starts again, and can be resumed.
func TestRestartMarksRunsInterrupted(t *testing.T) {
	e, _ := newRunEnv(t)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	sc := admin.Scope()
	root := filepath.Join(e.srv.cfg.DataDir, "runs")
	var ids []string
	for _, state := range []store.JobState{store.JobQueued, store.JobRunning} {
		id := store.NewID()
		dir := filepath.Join(root, id)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		var req runRequest
		if err := json.Unmarshal([]byte(tinyRun(2)), &req); err != nil {
			t.Fatal(err)
		}
		req.defaults()
		req.Harness = e.demo.Version()
		cfg, _ := json.Marshal(req)
		if _, err := e.store.CreateRun(ctx, sc, store.NewTrainingRun{ID: id, Name: "left " + string(state), Stage: "sft", Config: cfg, Dir: dir, Steps: 2}); err != nil {
			t.Fatal(err)
		}
		if state == store.JobRunning {
			if err := e.store.SetRunState(ctx, sc, id, []store.JobState{store.JobQueued}, store.JobRunning, ""); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	// The console starts again over the same store.
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: e.store, Sandbox: e.srv.cfg.Sandbox,
		Harnesses: []*harness.Harness{e.demo}, DataDir: e.srv.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.App().Shutdown() })
	e.srv = srv
	for _, id := range ids {
		r, err := e.store.Run(ctx, sc, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != store.JobInterrupted || r.FinishedAt == nil || !strings.Contains(r.Error, "console stopped") {
			t.Errorf("%s after a restart: %s (%q)", r.Name, r.State, r.Error)
		}
	}
	// No checkpoint was written: resuming starts the run over.
	code, run, raw := e.call(t, e.admin, "POST", "/api/runs/"+ids[1]+"/resume", "", "")
	if code != 202 || run["state"] != "queued" || run["error"] != nil {
		t.Fatalf("resume an interrupted run: %d %s", code, raw)
	}
	waitRun(t, e, ids[1], "done", func(m map[string]any) bool { return m["state"] == "done" })
}
