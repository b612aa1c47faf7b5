package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestRunStatesAndScope(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
	r, err := s.CreateRun(ctx, a.op, NewTrainingRun{ID: NewID(), Name: "r", Stage: "sft", Config: json.RawMessage(`{"steps":3}`), Dir: "/runs/x", Steps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != JobQueued || r.Creator != "a-op" || r.StartedAt != nil {
		t.Fatalf("new run: %+v", r)
	}
	// Only the organisation's operators see it.
	for name, sc := range map[string]Scope{"merchant": a.m1, "developer": a.dev, "other org": b.op} {
		if _, err := s.Run(ctx, sc, r.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s reads the run: %v", name, err)
		}
		if list, _ := s.Runs(ctx, sc); len(list) != 0 {
			t.Errorf("%s lists %d runs", name, len(list))
		}
		if err := s.SetRunState(ctx, sc, r.ID, []JobState{JobQueued}, JobRunning, ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s changes the run's state: %v", name, err)
		}
		if err := s.SetRunProgress(ctx, sc, r.ID, 1, 3); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s changes the run's progress: %v", name, err)
		}
	}
	if _, err := s.CreateRun(ctx, a.m1, NewTrainingRun{ID: NewID(), Name: "m", Stage: "sft", Config: json.RawMessage(`{}`), Dir: "/d"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant creates a run: %v", err)
	}
	// A state change applies only from the states it names.
	if err := s.SetRunState(ctx, a.op, r.ID, []JobState{JobStopped}, JobQueued, ""); !errors.Is(err, ErrJobState) {
		t.Errorf("queued → queued from stopped only: %v", err)
	}
	if err := s.SetRunState(ctx, a.op, r.ID, []JobState{JobQueued}, JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunProgress(ctx, a.op, r.ID, 2, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunState(ctx, a.op, r.ID, []JobState{JobRunning}, JobFailed, "gradient norm NaN"); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Run(ctx, a.op, r.ID)
	if r.State != JobFailed || r.Error != "gradient norm NaN" || r.Step != 2 || r.StartedAt == nil || r.FinishedAt == nil {
		t.Errorf("failed run: %+v", r)
	}
	if err := s.SetRunState(ctx, a.op, r.ID, []JobState{JobFailed}, JobQueued, ""); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Run(ctx, a.op, r.ID)
	if r.Error != "" || r.StartedAt != nil || r.FinishedAt != nil {
		t.Errorf("a requeued run keeps its last end: %+v", r)
	}
	// Only a run that is over can be deleted, and only by its operators.
	if err := s.DeleteRun(ctx, a.op, r.ID); !errors.Is(err, ErrJobState) {
		t.Errorf("deleting a queued run: %v", err)
	}
	_ = s.SetRunState(ctx, a.op, r.ID, []JobState{JobQueued}, JobStopped, "")
	if err := s.DeleteRun(ctx, b.op, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another org deletes the run: %v", err)
	}
	if err := s.DeleteRun(ctx, a.op, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, a.op, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run: %v", err)
	}
}

func TestInterruptJobs(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	var ids []string
	for _, st := range []JobState{JobQueued, JobRunning, JobDone} {
		r, err := s.CreateRun(ctx, a.op, NewTrainingRun{ID: NewID(), Name: string(st), Stage: "sft", Config: json.RawMessage(`{}`), Dir: "/d"})
		if err != nil {
			t.Fatal(err)
		}
		switch st {
		case JobRunning:
			_ = s.SetRunState(ctx, a.op, r.ID, []JobState{JobQueued}, JobRunning, "")
		case JobDone:
			_ = s.SetRunState(ctx, a.op, r.ID, []JobState{JobQueued}, JobRunning, "")
			_ = s.SetRunState(ctx, a.op, r.ID, []JobState{JobRunning}, JobDone, "")
		}
		ids = append(ids, r.ID)
	}
	ev, err := s.CreateEvaluation(ctx, a.op, NewEvaluation{Suite: "lsqa", N: 3, ModelKind: "expert", ModelName: "expert", HarnessVersion: "v"})
	if err != nil {
		t.Fatal(err)
	}
	runs, evals, err := s.InterruptJobs(ctx)
	if err != nil || runs != 2 || evals != 1 {
		t.Fatalf("interrupted %d runs and %d evaluations (%v), want 2 and 1", runs, evals, err)
	}
	for i, want := range []JobState{JobInterrupted, JobInterrupted, JobDone} {
		r, _ := s.Run(ctx, a.op, ids[i])
		if r.State != want {
			t.Errorf("run %s is %s, want %s", r.Name, r.State, want)
		}
	}
	if r, _ := s.Run(ctx, a.op, ids[1]); r.Error != "the console stopped while this was running" {
		t.Errorf("interrupted run's error: %q", r.Error)
	}
	if e, _ := s.Evaluation(ctx, a.op, ev.ID); e.State != JobInterrupted {
		t.Errorf("evaluation is %s", e.State)
	}
}

func TestEvaluationItemsAndSettings(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
	ev, err := s.CreateEvaluation(ctx, a.op, NewEvaluation{Suite: "lsqa", N: 2, ModelKind: "expert", ModelName: "expert", HarnessVersion: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Score != nil || ev.Total != 2 {
		t.Errorf("new evaluation: %+v", ev)
	}
	items := []EvalItem{
		{Index: 1, ItemID: "lsqa-000-01", Category: "price", Question: "多少钱?", Reply: "<b>99</b>", Score: 1, Grade: json.RawMessage(`{"score":1}`), Outcome: "replied"},
		{Index: 0, ItemID: "lsqa-000-00", Category: "spam", Question: "q", Reply: "", Score: 0, Grade: json.RawMessage(`{"score":0}`), Outcome: "denied", Error: "x"},
	}
	score := 50.0
	if err := s.FinishEvaluation(ctx, a.op, ev.ID, JobDone, &score, json.RawMessage(`{"score":50}`), items, ""); !errors.Is(err, ErrJobState) {
		t.Errorf("finishing a queued evaluation: %v", err)
	}
	if err := s.SetEvaluationState(ctx, a.op, ev.ID, []JobState{JobQueued}, JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetEvaluationProgress(ctx, a.op, ev.ID, 1, 2); err != nil {
		t.Fatal(err)
	}
	bad := append([]EvalItem(nil), items...)
	bad[0].Grade = json.RawMessage(`{`)
	if err := s.FinishEvaluation(ctx, a.op, ev.ID, JobDone, &score, json.RawMessage(`{}`), bad, ""); err == nil {
		t.Error("an item with a broken grade was stored")
	}
	if got, _ := s.Evaluation(ctx, a.op, ev.ID); got.State != JobRunning {
		t.Errorf("a failed finish changed the evaluation: %s", got.State)
	}
	if err := s.FinishEvaluation(ctx, a.op, ev.ID, JobDone, &score, json.RawMessage(`{"score":50}`), items, ""); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Evaluation(ctx, a.op, ev.ID)
	if got.State != JobDone || got.Score == nil || *got.Score != 50 || got.Done != 2 || string(got.Report) != `{"score":50}` {
		t.Errorf("finished evaluation: %+v", got)
	}
	list, err := s.EvalItems(ctx, a.op, ev.ID)
	if err != nil || len(list) != 2 || list[0].ItemID != "lsqa-000-00" || list[1].Reply != "<b>99</b>" {
		t.Errorf("items in suite order: %+v %v", list, err)
	}
	if it, err := s.EvalItem(ctx, a.op, ev.ID, "lsqa-000-01"); err != nil || it.Question != "多少钱?" {
		t.Errorf("item: %+v %v", it, err)
	}
	for name, sc := range map[string]Scope{"merchant": a.m1, "other org": b.op} {
		if _, err := s.EvalItems(ctx, sc, ev.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s lists the items: %v", name, err)
		}
		if _, err := s.EvalItem(ctx, sc, ev.ID, "lsqa-000-01"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s reads an item: %v", name, err)
		}
		if list, _ := s.Evaluations(ctx, sc, ""); len(list) != 0 {
			t.Errorf("%s lists evaluations", name)
		}
	}
	if list, _ := s.Evaluations(ctx, a.op, "hvqa"); len(list) != 0 {
		t.Errorf("the suite filter lets lsqa through")
	}
	if err := s.DeleteEvaluation(ctx, a.m1, ev.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant deletes an evaluation: %v", err)
	}
	if err := s.DeleteEvaluation(ctx, a.op, ev.ID); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM eval_items WHERE eval_id = ?`, ev.ID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d items of a deleted evaluation remain (%v)", left, err)
	}

	// Settings belong to one organisation.
	if _, err := s.OrgSetting(ctx, a.org.ID, "serving_model"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unset setting: %v", err)
	}
	if err := s.SetOrgSetting(ctx, a.m1, "serving_model", "/m"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant sets the serving model: %v", err)
	}
	for _, v := range []string{"/models/one", "/models/two"} {
		if err := s.SetOrgSetting(ctx, a.op, "serving_model", v); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := s.OrgSetting(ctx, a.org.ID, "serving_model"); err != nil || st.Value != "/models/two" || st.UpdatedBy != a.op.UserID {
		t.Errorf("setting: %+v %v", st, err)
	}
	if _, err := s.OrgSetting(ctx, b.org.ID, "serving_model"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another org sees the setting: %v", err)
	}
	if err := s.SetOrgSetting(ctx, a.op, "serving_model", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OrgSetting(ctx, a.org.ID, "serving_model"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a cleared setting: %v", err)
	}
}
