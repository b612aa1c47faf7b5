package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// evalSuites are the live-room suites the console runs (IFEval needs its
// data folder and a generating model; the eval command runs it).
func evalSuites() []string {
	return []string{eval.SuiteLSQA, eval.SuiteHVQA, eval.SuiteRobust, eval.SuiteStrategy}
}

// Kinds of model an evaluation runs against.
const (
	modelServing = "serving"
	modelExpert  = "expert"
	modelRun     = "run"
	modelURL     = "url"
	// modelCheckpoint is one exact checkpoint an experiment's arm may
	// name (checkpointModel): a promoted folder or the console's model.
	modelCheckpoint = "checkpoint"
)

// evaluations runs evaluation suites in the console process, one at a
// time, and keeps their history.
type evaluations struct {
	s     *Server
	queue *jobQueue

	// suites caches the committed suite files, read once.
	mu     sync.Mutex
	suites map[string]*eval.Suite
}

func (e *evaluations) routes(r fiber.Router) {
	r.Get("/", e.list)
	r.Get("/suites", e.listSuites)
	r.Post("/", e.start)
	r.Get("/:id", e.get)
	r.Get("/:id/items", e.items)
	r.Get("/:id/items/:item", e.item)
	r.Post("/:id/stop", e.stop)
	r.Delete("/:id", e.delete)
}

// suite returns the committed suite of that name.
func (e *evaluations) suite(name string) (*eval.Suite, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.suites[name]; ok {
		return s, nil
	}
	s, err := eval.OpenSuite(name)
	if err != nil {
		return nil, err
	}
	if e.suites == nil {
		e.suites = map[string]*eval.Suite{}
	}
	e.suites[name] = s
	return s, nil
}

type suiteInfo struct {
	Name  string `json:"name"`
	Items int    `json:"items"`
}

func (e *evaluations) listSuites(c *fiber.Ctx) error {
	var out []suiteInfo
	for _, name := range evalSuites() {
		s, err := e.suite(name)
		if err != nil {
			return err
		}
		out = append(out, suiteInfo{Name: name, Items: len(s.Items)})
	}
	return c.JSON(out)
}

// evalRequest starts an evaluation: suite, the first N items, and the
// model — the organisation's serving model, the scripted expert, a
// run's checkpoint (RunID), a checkpoint the organisation promoted or the
// console's model by name (Checkpoint, what shipping an experiment's
// winner is gated on) or an OpenAI-compatible server (URL with
// RemoteModel).
type evalRequest struct {
	Suite       string `json:"suite"`
	N           int    `json:"n"`
	Model       string `json:"model"`
	RunID       string `json:"run_id,omitempty"`
	Checkpoint  string `json:"checkpoint,omitempty"`
	URL         string `json:"url,omitempty"`
	RemoteModel string `json:"remote_model,omitempty"`
	Harness     string `json:"harness,omitempty"`
}

func (e *evaluations) start(c *fiber.Ctx) error {
	var req evalRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", err.Error())
	}
	if !slices.Contains(evalSuites(), req.Suite) {
		return badRequest("suite", fmt.Sprintf("unknown suite %q: want one of %s", req.Suite, strings.Join(evalSuites(), ", ")))
	}
	suite, err := e.suite(req.Suite)
	if err != nil {
		return err
	}
	if req.N < 1 || req.N > len(suite.Items) {
		return badRequest("n", fmt.Sprintf("suite %s has %d items: want 1 to %d, got %d", req.Suite, len(suite.Items), len(suite.Items), req.N))
	}
	base, err := e.s.baseHarness(req.Harness)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	ne := store.NewEvaluation{Suite: req.Suite, N: req.N, ModelKind: req.Model, HarnessVersion: base.Version()}
	switch req.Model {
	case modelServing:
		v := e.s.servingView(ctx, sc.OrgID)
		switch {
		case v.Default && e.s.cfg.Model == nil:
			return fieldError(fiber.StatusConflict, "model", "no serving model: promote a run's checkpoint or start the console with a model")
		case v.Promotion != nil:
			ne.ModelRef, ne.ModelName = v.Promotion.RunID, fmt.Sprintf("%s (step %d, serving)", v.Promotion.RunName, v.Promotion.Step)
		default:
			ne.ModelName = v.Spec
		}
	case modelExpert:
		ne.ModelName = "expert"
	case modelRun:
		if req.RunID == "" {
			return badRequest("run_id", "name the run whose checkpoint to evaluate")
		}
		r, err := e.s.store.Run(ctx, sc, req.RunID)
		if errors.Is(err, store.ErrNotFound) {
			return fieldError(fiber.StatusUnprocessableEntity, "run_id", fmt.Sprintf("no training run %q", req.RunID))
		}
		if err != nil {
			return err
		}
		st, err := runfolder.ReadState(r.Dir)
		if err != nil {
			return fieldError(fiber.StatusConflict, "run_id", fmt.Sprintf("run %q has no checkpoint yet", r.Name))
		}
		ne.ModelRef, ne.ModelName = r.ID, fmt.Sprintf("%s (step %d)", r.Name, st.Step)
	case modelCheckpoint:
		id, err := e.s.resolveCheckpoint(ctx, sc.OrgID, req.Checkpoint)
		if err != nil {
			return fieldError(fiber.StatusUnprocessableEntity, "checkpoint", err.Error())
		}
		ne.ModelRef, ne.ModelName = id.ref(), id.String()
	case modelURL:
		u, err := url.Parse(req.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return badRequest("url", "want the http(s) base URL of an OpenAI-compatible server")
		}
		if strings.TrimSpace(req.RemoteModel) == "" {
			return badRequest("remote_model", "name the model the server should answer with")
		}
		ne.ModelRef, ne.ModelName = req.URL, req.RemoteModel+" at "+u.Host
	default:
		return badRequest("model", fmt.Sprintf("unknown model %q: want serving, expert, run, checkpoint or url", req.Model))
	}
	if req.Model != modelRun && req.RunID != "" {
		return badRequest("run_id", "only a run model names a run")
	}
	if req.Model != modelCheckpoint && req.Checkpoint != "" {
		return badRequest("checkpoint", "only a checkpoint model names a checkpoint")
	}
	ev, err := e.s.store.CreateEvaluation(ctx, sc, ne)
	if err != nil {
		return err
	}
	e.queue.submit(ev.ID, func(ctx context.Context) { e.execute(ctx, sc, ev.ID, req, suite, base) })
	return c.Status(fiber.StatusCreated).JSON(ev)
}

// openModel opens the evaluation's model; the serving model is the
// organisation's model server (through the client its live sessions
// share), the promoted checkpoint or, when none was, the console's own
// model.
func (e *evaluations) openModel(ctx context.Context, sc store.Scope, req evalRequest) (*eval.Model, error) {
	switch req.Model {
	case modelServing:
		v := e.s.servingView(ctx, sc.OrgID)
		switch {
		case v.Server != nil:
			m, name, err := e.s.liveModel(ctx, sc.OrgID)
			if err != nil {
				return nil, err
			}
			return &eval.Model{Name: name, Factory: func(eval.Case) (runtime.Model, error) { return m, nil }}, nil
		case !v.Default:
			return eval.OpenModel(v.Spec, "")
		}
		return e.s.configuredEvalModel()
	case modelRun:
		r, err := e.s.store.Run(ctx, sc, req.RunID)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", req.RunID, err)
		}
		return eval.OpenModel(filepath.Join(r.Dir, runfolder.CheckpointDir), "")
	case modelCheckpoint:
		id, err := e.s.resolveCheckpoint(ctx, sc.OrgID, req.Checkpoint)
		if err != nil {
			return nil, err
		}
		if id.configured {
			return e.s.configuredEvalModel()
		}
		return eval.OpenModel(id.folder, "")
	case modelURL:
		return eval.OpenModel(req.URL, req.RemoteModel)
	}
	return eval.OpenModel(modelExpert, "")
}

// configuredEvalModel is Config.Model as an evaluation's model.
func (s *Server) configuredEvalModel() (*eval.Model, error) {
	if s.cfg.Model == nil {
		return nil, errors.New("no serving model")
	}
	m := s.cfg.Model
	return &eval.Model{Name: s.cfg.ModelName, Factory: func(eval.Case) (runtime.Model, error) { return m, nil }}, nil
}

// execute runs the suite's first N items and stores the report and the
// items, also when the run is stopped part way (the finished items).
func (e *evaluations) execute(ctx context.Context, sc store.Scope, id string, req evalRequest, suite *eval.Suite, base *harness.Harness) {
	bg := context.WithoutCancel(ctx)
	log := e.s.log.With("evaluation", id)
	if ctx.Err() != nil {
		state, msg := endState(ctx, ctx.Err())
		if err := e.s.store.SetEvaluationState(bg, sc, id, []store.JobState{store.JobQueued}, state, msg); err != nil {
			log.Error("recording an evaluation that never started", "err", err)
		}
		return
	}
	if err := e.s.store.SetEvaluationState(bg, sc, id, []store.JobState{store.JobQueued}, store.JobRunning, ""); err != nil {
		log.Error("starting an evaluation", "err", err)
		return
	}
	finish := func(state store.JobState, score *float64, report json.RawMessage, items []store.EvalItem, msg string) {
		if err := e.s.store.FinishEvaluation(bg, sc, id, state, score, report, items, msg); err != nil {
			log.Error("recording an evaluation's end", "err", err)
		}
	}
	// The suites run with the plugins loaded in the sandbox; the
	// organisation's enabled plugins are loaded there when one of its
	// plugin sets is first built, which may not have happened yet.
	if _, err := e.s.streamPlugins(bg, sc.OrgID, nil); err != nil {
		log.Warn("evaluation: the organisation's plugins", "err", err)
	}
	m, err := e.openModel(ctx, sc, req)
	if err != nil {
		finish(store.JobFailed, nil, json.RawMessage(`{}`), nil, "opening the model: "+err.Error())
		return
	}
	defer m.Close()
	part := &eval.Suite{Name: suite.Name, Items: suite.Items[:req.N]}
	var lastWrite time.Time
	runner := &eval.Runner{Base: base, Sandbox: e.s.cfg.Sandbox, Plugins: e.s.orgPlugins(sc.OrgID), Model: m.Factory, Parallel: 2,
		Logger: slog.New(slog.DiscardHandler),
		Progress: func(done, total int) {
			// Called under the runner's lock, item by item: a write at
			// most every 200 ms keeps the store out of the items' way.
			if done < total && time.Since(lastWrite) < 200*time.Millisecond {
				return
			}
			lastWrite = time.Now()
			if err := e.s.store.SetEvaluationProgress(bg, sc, id, done, total); err != nil {
				log.Error("recording evaluation progress", "err", err)
			}
		}}
	rep, err := runner.Run(ctx, part)
	state, msg := endState(ctx, err)
	if rep == nil {
		finish(state, nil, json.RawMessage(`{}`), nil, msg)
		return
	}
	report, jerr := json.Marshal(rep)
	if jerr != nil {
		finish(store.JobFailed, nil, json.RawMessage(`{}`), nil, "encoding the report: "+jerr.Error())
		return
	}
	var score *float64
	if rep.N > 0 {
		score = &rep.Score
	}
	finish(state, score, report, evalItems(part, rep.Items), msg)
}

// evalItems turns the runner's results into stored items, with each
// item's question text from the suite (an episode's turns one per line).
func evalItems(s *eval.Suite, results []eval.ItemResult) []store.EvalItem {
	index := make(map[string]int, len(s.Items))
	for i, it := range s.Items {
		index[it.ID] = i
	}
	out := make([]store.EvalItem, 0, len(results))
	for _, r := range results {
		i, ok := index[r.ID]
		if !ok {
			continue
		}
		it := s.Items[i]
		question := it.Question.Text
		if len(it.Steps) > 0 {
			var lines []string
			for _, st := range it.Steps {
				prefix := "viewer: "
				if st.Narration {
					prefix = "narration: "
				}
				lines = append(lines, prefix+st.Question.Text)
			}
			question = strings.Join(lines, "\n")
		}
		grade, _ := json.Marshal(r.Grade)
		out = append(out, store.EvalItem{Index: i, ItemID: r.ID, Category: r.Category, Question: question, Reply: r.Reply,
			Score: r.Grade.Score, Grade: grade, Outcome: string(r.Outcome), Error: r.Error,
			TookMS: float64(r.Took) / float64(time.Millisecond), HarnessVersion: r.Harness})
	}
	slices.SortFunc(out, func(a, b store.EvalItem) int { return a.Index - b.Index })
	return out
}

func (e *evaluations) list(c *fiber.Ctx) error {
	suite := c.Query("suite")
	if suite != "" && !slices.Contains(evalSuites(), suite) {
		return badRequest("suite", fmt.Sprintf("unknown suite %q", suite))
	}
	list, err := e.s.store.Evaluations(c.UserContext(), scopeOf(c), suite)
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (e *evaluations) get(c *fiber.Ctx) error {
	ev, err := e.s.store.Evaluation(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "evaluation")
	}
	return c.JSON(ev)
}

func (e *evaluations) items(c *fiber.Ctx) error {
	list, err := e.s.store.EvalItems(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "evaluation")
	}
	return c.JSON(orEmpty(list))
}

func (e *evaluations) item(c *fiber.Ctx) error {
	it, err := e.s.store.EvalItem(c.UserContext(), scopeOf(c), c.Params("id"), c.Params("item"))
	if err != nil {
		return storeError(err, "evaluation item")
	}
	return c.JSON(it)
}

// stop cancels a queued or running evaluation; the items that finished
// are kept.
func (e *evaluations) stop(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	ev, err := e.s.store.Evaluation(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "evaluation")
	}
	if !ev.State.Live() {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the evaluation is %s, not queued or running", ev.State))
	}
	e.queue.stopWait(ev.ID, stopWaitLimit)
	if ev, err = e.s.store.Evaluation(ctx, sc, ev.ID); err != nil {
		return storeError(err, "evaluation")
	}
	return c.Status(fiber.StatusAccepted).JSON(ev)
}

// delete removes an evaluation that is not queued or running.
func (e *evaluations) delete(c *fiber.Ctx) error {
	if err := e.s.store.DeleteEvaluation(c.UserContext(), scopeOf(c), c.Params("id")); err != nil {
		return jobStateError(err, "evaluation")
	}
	return c.SendStatus(fiber.StatusNoContent)
}
