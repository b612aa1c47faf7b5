package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/sft"
)

// runLogFile is the trainer's progress log inside a run folder.
const runLogFile = "train.log"

// stopWaitLimit is how long a stop request waits for the job to record
// the stop before it answers with the job as it is.
const stopWaitLimit = 10 * time.Second

// trainingRuns starts, watches, stops and resumes the training runs of
// every organisation inside the console process, at most two at once.
type trainingRuns struct {
	s      *Server
	queue  *jobQueue
	gauges *trainingGauges
}

// runRoutes serves training runs, the serving model and evaluations, to
// operators only. It marks the jobs a previous process left unfinished as
// interrupted, and stops the running ones when the server shuts down.
//
//	GET    /api/runs                 the organisation's runs, newest first
//	GET    /api/runs/options         stages, presets and each stage's defaults
//	POST   /api/runs                 start a run (runRequest); 201 queued
//	GET    /api/runs/:id             a run, with its last checkpoint's step
//	GET    /api/runs/:id/metrics     every metrics.jsonl line so far
//	GET    /api/runs/:id/events      SSE: run, metrics, reset, problem, end
//	GET    /api/runs/:id/log         the end of the trainer's log (text)
//	POST   /api/runs/:id/stop        cancel; 202 with the run
//	POST   /api/runs/:id/resume      {"steps": N} optional; 202 queued again
//	POST   /api/runs/:id/promote     serve a copy of its last checkpoint
//	DELETE /api/runs/:id             forget a finished run and its folder
//	GET    /api/serving-model        what the organisation's streams use
//	PUT    /api/serving-model        serve them from a model server ({"server": {url, model, api_key|api_key_env, timeout_s, idle_timeout_s, concurrency, retries}})
//	DELETE /api/serving-model        back to the configured model
//	GET|PUT|DELETE /api/serving-model/streams/:stream  one stream's own model server
//	POST   /api/serving-model/test, /api/serving-model/streams/:stream/test  ask a server (PUT's body) for one token; nothing is stored
//	GET    /api/evals[?suite=S]      evaluation history, oldest first
//	GET    /api/evals/suites         the suites and their sizes
//	POST   /api/evals                run a suite (evalRequest); 201 queued
//	GET    /api/evals/:id            one evaluation with its report
//	GET    /api/evals/:id/items      its graded items
//	GET    /api/evals/:id/items/:item one item: question, reply, grade
//	POST   /api/evals/:id/stop       cancel, keeping the finished items
//	DELETE /api/evals/:id            forget a finished evaluation
func (s *Server) runRoutes(api fiber.Router) {
	t := &trainingRuns{s: s, queue: newJobQueue(2), gauges: newTrainingGauges(s.cfg.Metrics, s.log)}
	ev := &evaluations{s: s, queue: newJobQueue(1)}
	if runs, evals, err := s.store.InterruptJobs(context.Background()); err != nil {
		s.log.Error("marking unfinished jobs interrupted", "err", err)
	} else if runs+evals > 0 {
		s.log.Warn("jobs left unfinished by the previous process are marked interrupted", "runs", runs, "evaluations", evals)
	}
	s.app.Hooks().OnShutdown(func() error {
		t.queue.close()
		ev.queue.close()
		return nil
	})
	op := requireRole(store.RoleOperator)
	r := api.Group("/runs", op)
	r.Get("/", t.list)
	r.Get("/options", t.options)
	r.Post("/", t.start)
	r.Get("/:id", t.get)
	r.Get("/:id/metrics", t.metrics)
	r.Get("/:id/events", t.events)
	r.Get("/:id/log", t.log)
	r.Post("/:id/stop", t.stop)
	r.Post("/:id/resume", t.resume)
	r.Post("/:id/promote", t.promote)
	r.Delete("/:id", t.delete)
	api.Get("/serving-model", op, t.serving)
	api.Put("/serving-model", op, t.setServing)
	api.Delete("/serving-model", op, t.resetServing)
	api.Get("/serving-model/streams/:stream", op, t.streamServing)
	api.Put("/serving-model/streams/:stream", op, t.setStreamServing)
	api.Delete("/serving-model/streams/:stream", op, t.resetStreamServing)
	api.Post("/serving-model/test", op, t.testServing)
	api.Post("/serving-model/streams/:stream/test", op, t.testServing)
	ev.routes(api.Group("/evals", op))
}

// baseHarness is the served harness of the given version, or the first
// one (the embedded demo the suites and the room's data are built on).
func (s *Server) baseHarness(version string) (*harness.Harness, error) {
	if len(s.cfg.Harnesses) == 0 {
		return nil, fiber.NewError(fiber.StatusServiceUnavailable, "the console serves no harness to train or evaluate under")
	}
	if version == "" {
		return s.cfg.Harnesses[0], nil
	}
	for _, h := range s.cfg.Harnesses {
		if h.Version() == version || h.ShortVersion() == version {
			return h, nil
		}
	}
	return nil, badRequest("harness", fmt.Sprintf("no served harness version %q", version))
}

// dataPath is a folder under the data folder: "runs" holds run folders,
// "models" promoted checkpoints.
func (s *Server) dataPath(name string) (string, error) {
	if s.cfg.DataDir == "" {
		return "", fiber.NewError(fiber.StatusServiceUnavailable, "the console has no data folder for "+name)
	}
	return filepath.Join(s.cfg.DataDir, name), nil
}

type runOptions struct {
	Stages      []string              `json:"stages"`
	Presets     []string              `json:"presets"`
	Defaults    map[string]runRequest `json:"defaults"`
	Harnesses   []string              `json:"harnesses"`
	LoRAModules []string              `json:"lora_modules"`
	MaxSteps    int                   `json:"max_steps"`
}

// options lists what the form offers, with each stage's defaults.
func (t *trainingRuns) options(c *fiber.Ctx) error {
	o := runOptions{Stages: trainingStages(), Presets: sft.ModelPresets(), Defaults: map[string]runRequest{},
		LoRAModules: loraModules, MaxSteps: maxRunSteps}
	for _, st := range trainingStages() {
		r := runRequest{Stage: st}
		r.defaults()
		// These follow the steps the form ends up with: left empty, the
		// server picks them from the run's length.
		r.Name, r.SaveEvery, r.EvalEvery = "", 0, 0
		o.Defaults[st] = r
	}
	for _, h := range t.s.cfg.Harnesses {
		o.Harnesses = append(o.Harnesses, h.Version())
	}
	return c.JSON(o)
}

func (t *trainingRuns) list(c *fiber.Ctx) error {
	list, err := t.s.store.Runs(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

// runView is a run with what its folder says.
type runView struct {
	*store.TrainingRun
	// CheckpointStep is the step of the last checkpoint (nil: none yet).
	CheckpointStep *int `json:"checkpoint_step"`
}

func viewRun(r *store.TrainingRun) runView {
	v := runView{TrainingRun: r}
	if st, err := runfolder.ReadState(r.Dir); err == nil {
		v.CheckpointStep = &st.Step
	}
	return v
}

func (t *trainingRuns) get(c *fiber.Ctx) error {
	r, err := t.s.store.Run(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	return c.JSON(viewRun(r))
}

// start validates the form, prepares the run folder and queues the run.
func (t *trainingRuns) start(c *fiber.Ctx) error {
	var req runRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", err.Error())
	}
	req.defaults()
	if err := req.check(); err != nil {
		return err
	}
	base, err := t.s.baseHarness(req.Harness)
	if err != nil {
		return err
	}
	req.Harness = base.Version()
	ctx, sc := c.UserContext(), scopeOf(c)
	var initSrc, teacherSrc string
	if req.InitRun != "" {
		if initSrc, err = t.checkpointOf(ctx, sc, req.InitRun, "init_run"); err != nil {
			return err
		}
	}
	if req.TeacherRun != "" {
		if teacherSrc, err = t.checkpointOf(ctx, sc, req.TeacherRun, "teacher_run"); err != nil {
			return err
		}
	}
	root, err := t.s.dataPath("runs")
	if err != nil {
		return err
	}
	id := store.NewID()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	for _, in := range []struct{ src, name string }{{initSrc, initDir}, {teacherSrc, teacherDir}} {
		if in.src == "" {
			continue
		}
		if _, err := copyCheckpoint(in.src, filepath.Join(dir, in.name)); err != nil {
			os.RemoveAll(dir)
			return fieldError(fiber.StatusConflict, in.name+"_run", "copying its checkpoint: "+err.Error())
		}
	}
	config, err := json.Marshal(req)
	if err != nil {
		return err
	}
	run, err := t.s.store.CreateRun(ctx, sc, store.NewTrainingRun{ID: id, Name: req.Name, Stage: req.Stage, Config: config,
		Dir: dir, Steps: req.Steps})
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	t.enqueue(sc, run, req, false, 0)
	return c.Status(fiber.StatusCreated).JSON(viewRun(run))
}

// checkpointOf is the checkpoint folder of a run the scope sees; field
// names the request field that named the run.
func (t *trainingRuns) checkpointOf(ctx context.Context, sc store.Scope, id, field string) (string, error) {
	r, err := t.s.store.Run(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", fieldError(fiber.StatusUnprocessableEntity, field, fmt.Sprintf("no training run %q", id))
	}
	if err != nil {
		return "", err
	}
	if _, err := runfolder.ReadState(r.Dir); err != nil {
		return "", fieldError(fiber.StatusConflict, field, fmt.Sprintf("run %q has no checkpoint yet", r.Name))
	}
	return filepath.Join(r.Dir, runfolder.CheckpointDir), nil
}

// enqueue hands the run to the queue; resume continues from its last
// checkpoint with steps as the new total (0: the saved one).
func (t *trainingRuns) enqueue(sc store.Scope, run *store.TrainingRun, req runRequest, resume bool, steps int) bool {
	return t.queue.submit(run.ID, func(ctx context.Context) { t.execute(ctx, sc, run, req, resume, steps) })
}

// execute runs one training run to its end and records how it ended.
func (t *trainingRuns) execute(ctx context.Context, sc store.Scope, run *store.TrainingRun, req runRequest, resume bool, steps int) {
	// The bookkeeping outlives a cancelled run: it records the stop.
	bg := context.WithoutCancel(ctx)
	log := t.s.log.With("run", run.ID)
	if ctx.Err() != nil {
		state, msg := endState(ctx, ctx.Err())
		if err := t.s.store.SetRunState(bg, sc, run.ID, []store.JobState{store.JobQueued}, state, msg); err != nil {
			log.Error("recording a run that never started", "err", err)
		}
		return
	}
	if err := t.s.store.SetRunState(bg, sc, run.ID, []store.JobState{store.JobQueued}, store.JobRunning, ""); err != nil {
		log.Error("starting a run", "err", err)
		return
	}
	err := t.train(ctx, sc, run, req, resume, steps)
	state, msg := endState(ctx, err)
	if state == store.JobFailed {
		log.Warn("training run failed", "err", err)
	}
	if err := t.s.store.SetRunState(bg, sc, run.ID, []store.JobState{store.JobRunning}, state, msg); err != nil {
		log.Error("recording how a run ended", "err", err)
	}
}

// train runs the trainer with its log in the run folder while a watcher
// follows the metrics it writes.
func (t *trainingRuns) train(ctx context.Context, sc store.Scope, run *store.TrainingRun, req runRequest, resume bool, steps int) error {
	base, err := t.s.baseHarness(req.Harness)
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(run.Dir, runLogFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	defer logf.Close()
	total := run.Steps
	if steps > 0 {
		total = steps
	}
	fmt.Fprintf(logf, "%s %s run %q, %d steps (resume: %v)\n", time.Now().UTC().Format(time.RFC3339), req.Stage, req.Name, total, resume)
	stopWatch := t.watch(sc, run.ID, run.Dir, total)
	err = trainRecovered(ctx, req, base, run.Dir, resume, steps, logf)
	stopWatch()
	if err != nil {
		fmt.Fprintf(logf, "error: %v\n", err)
	}
	return err
}

// trainRecovered runs the trainer, turning a panic into the run's error:
// a bug in one run must not take the console and every stream down.
func trainRecovered(ctx context.Context, req runRequest, base *harness.Harness, dir string, resume bool, steps int, log io.Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the trainer panicked: %v", p)
		}
	}()
	return req.train(ctx, base, dir, resume, steps, log)
}

// watch follows a running run's metrics file: it updates the gauges and
// the run's step in the store. The returned func reads what is left and
// stops watching.
func (t *trainingRuns) watch(sc store.Scope, id, dir string, total int) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	tail := &metricsTail{path: filepath.Join(dir, runfolder.MetricsFile)}
	last := -1
	update := func() {
		lines, _, err := tail.next()
		if err != nil || len(lines) == 0 {
			return
		}
		var m runfolder.Metrics
		if json.Unmarshal(lines[len(lines)-1], &m) != nil {
			return
		}
		t.gauges.observe(id, m)
		if m.Step != last {
			last = m.Step
			if err := t.s.store.SetRunProgress(context.Background(), sc, id, m.Step, total); err != nil {
				t.s.log.Error("recording run progress", "run", id, "err", err)
			}
		}
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(400 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				update()
				return
			case <-tick.C:
				update()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// stop cancels a queued or running run and waits a little for it to
// record the stop (a step in progress finishes first).
func (t *trainingRuns) stop(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	r, err := t.s.store.Run(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	if !r.State.Live() {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the run is %s, not queued or running", r.State))
	}
	t.queue.stopWait(r.ID, stopWaitLimit)
	if r, err = t.s.store.Run(ctx, sc, r.ID); err != nil {
		return storeError(err, "training run")
	}
	return c.Status(fiber.StatusAccepted).JSON(viewRun(r))
}

// resume queues a stopped, failed, interrupted or finished run again: it
// continues from its last checkpoint (a run stopped before its first one
// starts over), optionally to a new total of steps.
func (t *trainingRuns) resume(c *fiber.Ctx) error {
	var body struct {
		Steps int `json:"steps"`
	}
	if len(c.Body()) > 0 {
		if err := decodeStrict(c.Body(), &body); err != nil {
			return badRequest("body", "want {\"steps\": N} or nothing: "+err.Error())
		}
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	r, err := t.s.store.Run(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	if r.State.Live() || t.queue.busy(r.ID) {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the run is %s: stop it before resuming", r.State))
	}
	var req runRequest
	if err := json.Unmarshal(r.Config, &req); err != nil {
		return fmt.Errorf("run %s: stored config: %w", r.ID, err)
	}
	steps := body.Steps
	if steps == 0 {
		steps = r.Steps
	}
	if steps < 1 || steps > maxRunSteps {
		return badRequest("steps", fmt.Sprintf("want 1 to %d steps, got %d", maxRunSteps, steps))
	}
	st, err := runfolder.ReadState(r.Dir)
	fresh := err != nil
	switch {
	case fresh:
		if err := clearRunFolder(r.Dir); err != nil {
			return err
		}
		req.Steps = steps
	case steps <= st.Step:
		return badRequest("steps", fmt.Sprintf("the last checkpoint is at step %d: resume to more steps than that", st.Step))
	}
	if err := t.s.store.SetRunState(ctx, sc, r.ID, []store.JobState{store.JobStopped, store.JobFailed, store.JobInterrupted, store.JobDone},
		store.JobQueued, ""); err != nil {
		return jobStateError(err, "training run")
	}
	at := 0
	if !fresh {
		at = st.Step
	}
	if err := t.s.store.SetRunProgress(ctx, sc, r.ID, at, steps); err != nil {
		return storeError(err, "training run")
	}
	if r, err = t.s.store.Run(ctx, sc, r.ID); err != nil {
		return storeError(err, "training run")
	}
	t.enqueue(sc, r, req, !fresh, steps)
	return c.Status(fiber.StatusAccepted).JSON(viewRun(r))
}

// delete removes a run that is not queued or running, and its folder; a
// checkpoint promoted from it stays served (promotion copied it).
func (t *trainingRuns) delete(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	r, err := t.s.store.Run(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	if t.queue.busy(r.ID) {
		return fiber.NewError(fiber.StatusConflict, "the run is still stopping: try again in a moment")
	}
	if err := t.s.store.DeleteRun(ctx, sc, r.ID); err != nil {
		return jobStateError(err, "training run")
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		t.s.log.Error("removing a deleted run's folder", "run", r.ID, "dir", r.Dir, "err", err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// clearRunFolder removes what a run wrote, keeping its copied inputs and
// its log, so that it can start over.
func clearRunFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	for _, e := range entries {
		if slices.Contains([]string{initDir, teacherDir, runLogFile}, e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("run folder: %w", err)
		}
	}
	return nil
}

// jobStateError maps a refused state change to 409.
func jobStateError(err error, what string) error {
	if errors.Is(err, store.ErrJobState) {
		return fiber.NewError(fiber.StatusConflict, what+": "+err.Error())
	}
	return storeError(err, what)
}

// metrics returns every metrics line of the run so far, as JSON objects.
func (t *trainingRuns) metrics(c *fiber.Ctx) error {
	r, err := t.s.store.Run(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	tail := &metricsTail{path: filepath.Join(r.Dir, runfolder.MetricsFile)}
	lines, _, err := tail.next()
	if err != nil {
		return err
	}
	out := make([]json.RawMessage, 0, len(lines))
	for _, l := range lines {
		out = append(out, l)
	}
	return c.JSON(out)
}

// maxLogTail is how much of a run's log the console shows.
const maxLogTail = 64 << 10

// log returns the end of the run's progress log as text.
func (t *trainingRuns) log(c *fiber.Ctx) error {
	r, err := t.s.store.Run(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	f, err := os.Open(filepath.Join(r.Dir, runLogFile))
	if errors.Is(err, os.ErrNotExist) {
		c.Type("txt", "utf-8")
		return c.SendString("")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxLogTail {
		if _, err := f.Seek(fi.Size()-maxLogTail, io.SeekStart); err != nil {
			return err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	c.Type("txt", "utf-8")
	return c.Send(data)
}
