package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
)

// Gate limits: n items per suite (the gate should take seconds to a few
// minutes, not the hours a full evaluation takes).
const (
	defaultGateN = 5
	maxGateN     = 100
	// defaultGateTolerance is the points of score a suite or category may
	// lose before the gate calls it a regression.
	defaultGateTolerance = 1.0
)

// Gate models (gateRequest.Model).
const (
	// gateServing measures the model the organisation's streams run, or
	// with gateRequest.Stream the one that stream runs.
	gateServing = "serving"
	// gateCheckpoint measures a checkpoint to be released with the version.
	gateCheckpoint = "checkpoint"
	// gateExpert runs the scripted expert, which follows whatever harness
	// it is given: a sanity check of the harness, which no release counts.
	gateExpert = "expert"
)

// defaultGateReplay is how many of the streams' recent viewer questions a
// gate replays unless told otherwise.
const defaultGateReplay = 10

// gateRequest starts a release gate: the candidate version against the
// baseline (by default the version most streams run), with the model that
// will serve, on n items of each live-room suite and on the streams' own
// recent questions replayed from their turn log. A suite or category whose
// score drops by more than tolerance points is a regression.
type gateRequest struct {
	Candidate string   `json:"candidate"`
	Baseline  string   `json:"baseline"`
	Suites    []string `json:"suites"`
	N         int      `json:"n"`
	Tolerance *float64 `json:"tolerance"`
	LoopID    string   `json:"loop_id"`
	// Model is gateServing (the default), gateCheckpoint with Checkpoint
	// (a promoted checkpoint's name, or the console's model by its name),
	// or gateExpert.
	Model      string `json:"model"`
	Checkpoint string `json:"checkpoint"`
	// Replay is how many recent viewer questions to replay (default
	// defaultGateReplay; 0 replays none), from Streams (default: the
	// streams that run the baseline).
	Replay  *int     `json:"replay"`
	Streams []string `json:"streams"`
	// Stream gates for one stream: the serving model is the one that
	// stream runs (its own model server when it has one), the baseline
	// the version it runs, and the questions replayed its own unless
	// Streams says otherwise.
	Stream string `json:"stream"`
}

// gateScores is one suite's result under one version.
type gateScores struct {
	Score           float64    `json:"score"`
	CI95            [2]float64 `json:"ci95"`
	Accuracy        float64    `json:"accuracy"`
	Effectiveness   float64    `json:"effectiveness"`
	ToolRationality float64    `json:"tool_rationality"`
	SkillSelection  float64    `json:"skill_selection"`
	N               int        `json:"n"`
	Errors          int        `json:"errors"`
	// OnAir counts the replies that reached the audience, OnAirUnbacked
	// those with a statement the tools did not back (the grader's check).
	OnAir         int `json:"on_air"`
	OnAirUnbacked int `json:"on_air_unbacked"`
	// OnAirRewritten counts the replies on air a hook rewrote, and
	// OwnScore is Score less the part their items carry: what the model
	// earned in its own words (eval.SuiteReport.RewrittenScore).
	OnAirRewritten int     `json:"on_air_rewritten"`
	OwnScore       float64 `json:"own_score"`
}

// categoryDelta compares one category of a suite. DeltaCI95 is the 95%
// interval of the difference, from the items both versions ran (paired).
type categoryDelta struct {
	Category  string     `json:"category"`
	Baseline  float64    `json:"baseline"`
	Candidate float64    `json:"candidate"`
	Delta     float64    `json:"delta"`
	DeltaCI95 [2]float64 `json:"delta_ci95"`
	N         int        `json:"n"`
	Regressed bool       `json:"regressed"`
}

// suiteDelta compares one suite under the two versions.
type suiteDelta struct {
	Suite      string          `json:"suite"`
	Baseline   gateScores      `json:"baseline"`
	Candidate  gateScores      `json:"candidate"`
	Delta      float64         `json:"delta"`
	DeltaCI95  [2]float64      `json:"delta_ci95"`
	Regressed  bool            `json:"regressed"`
	Categories []categoryDelta `json:"categories"`
}

// gateReport is what a finished gate stores and the page shows.
type gateReport struct {
	// Model names the model measured; ModelKind is gateServing,
	// gateCheckpoint or gateExpert (Sanity: the expert's check of the
	// harness, which no release counts). Stream is the stream whose
	// serving model was measured, when the gate was run for one.
	Model     string `json:"model"`
	ModelKind string `json:"model_kind"`
	Sanity    bool   `json:"sanity,omitempty"`
	Stream    string `json:"stream,omitempty"`
	// Replayed is how many of the streams' recent questions each version
	// answered (the "replay" suite).
	Replayed  int          `json:"replayed"`
	Candidate string       `json:"candidate"`
	Baseline  string       `json:"baseline"`
	N         int          `json:"n"`
	Tolerance float64      `json:"tolerance"`
	Suites    []suiteDelta `json:"suites"`
	// Overall is the mean of the suites' scores.
	Overall struct {
		Baseline  float64 `json:"baseline"`
		Candidate float64 `json:"candidate"`
		Delta     float64 `json:"delta"`
	} `json:"overall"`
	// Regressions lists every suite and category that dropped by more
	// than the tolerance ("" category: the suite as a whole).
	Regressions []regression `json:"regressions"`
	// Causes counts the candidate's failed items by cause.
	Causes map[string]int `json:"causes"`
	// Warnings say why the scores may not mean what they seem, e.g. a
	// plugin the harness names was not loaded.
	Warnings []string `json:"warnings"`
	TookMS   int64    `json:"took_ms"`
}

// missingPlugin finds the runtime's "plugin … is not installed" in a
// deduction: the gate ran without a plugin its harness names.
var missingPlugin = regexp.MustCompile(`plugin "([^"]+)" is not installed`)

// regression is a suite, or a category of one, that got worse: Delta is
// in points of score (for modelOwnWords, of the model's own words), except
// for the unbackedOnAir category, where it is the change in replies on air
// with a statement the tools did not back.
type regression struct {
	Suite    string  `json:"suite"`
	Category string  `json:"category,omitempty"`
	Delta    float64 `json:"delta"`
}

// unbackedOnAir is the regression category of a suite whose candidate put
// more unbacked statements on air than the baseline (the grader's count,
// issue #18): no tolerance applies.
const unbackedOnAir = "unbacked_on_air"

// modelOwnWords is the regression category of a suite whose candidate's
// model earned less in its own words, beyond the tolerance: the grounding
// check's rewrites can hold a suite's score while a harness edit breaks
// the model underneath.
const modelOwnWords = "model_own_words"

// gateProgress is what a gate's SSE stream sends while it runs.
type gateProgress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Phase string `json:"phase"`
}

// gateRun is a gate running in this process: its progress and listeners.
type gateRun struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	now    gateProgress
	subs   map[chan gateProgress]struct{}
	ended  bool
}

// end closes every listener's channel: the gate's result is in the store.
func (r *gateRun) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	for ch := range r.subs {
		close(ch)
	}
	r.subs = nil
}

func (r *gateRun) publish(p gateProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = p
	for ch := range r.subs {
		select {
		case ch <- p:
		default: // a slow listener skips a step; the next one carries the count
		}
	}
}

// subscribe returns a channel of progress, closed when the gate ends,
// and the progress so far.
func (r *gateRun) subscribe() (chan gateProgress, gateProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan gateProgress, 8)
	if r.ended {
		close(ch)
	} else {
		r.subs[ch] = struct{}{}
	}
	return ch, r.now
}

func (r *gateRun) unsubscribe(ch chan gateProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.subs[ch]; ok {
		delete(r.subs, ch)
		close(ch)
	}
}

// gateModel is the model a gate measures: its name (what releases compare
// with the serving model's), its kind and how each item gets it; stream is
// the stream whose serving model it is, when the gate was run for one.
type gateModel struct {
	name    string
	kind    string
	factory eval.ModelFactory
	stream  string
}

// gateModelOf resolves a gate request's model: the organisation's serving
// model (what live sessions open now), the model req.Stream's sessions
// open (its own model server, else the organisation's), a checkpoint to be
// released with the version, or the expert.
func (s *Server) gateModelOf(ctx context.Context, orgID string, req gateRequest) (gateModel, error) {
	served := func(m runtime.Model, name, kind string) gateModel {
		return gateModel{name: name, kind: kind, factory: func(eval.Case) (runtime.Model, error) { return m, nil }}
	}
	if req.Stream != "" && req.Model != "" && req.Model != gateServing {
		return gateModel{}, badRequest("stream", "a stream's model is gated with \"model\": \"serving\"; "+
			"name no stream to gate a checkpoint or run the expert's sanity check")
	}
	switch req.Model {
	case "", gateServing:
		if req.Checkpoint != "" {
			return gateModel{}, badRequest("checkpoint", "a checkpoint goes with \"model\": \"checkpoint\"")
		}
		openModel := s.liveModel
		if req.Stream != "" {
			openModel = func(ctx context.Context, orgID string) (runtime.Model, string, error) {
				return s.streamModel(ctx, orgID, req.Stream, "")
			}
		}
		m, name, err := openModel(ctx, orgID)
		switch {
		case errors.Is(err, errNoModel):
			return gateModel{}, fieldError(fiber.StatusConflict, "model", "the console serves no model: gate a checkpoint (\"model\": \"checkpoint\"), "+
				"or run the expert's sanity check of the harness (\"model\": \"expert\")")
		case err != nil && req.Stream != "":
			return gateModel{}, fieldError(fiber.StatusConflict, "stream", fmt.Sprintf("stream %q: its serving model cannot be opened: %v", req.Stream, err))
		case err != nil:
			return gateModel{}, err
		}
		g := served(m, name, gateServing)
		g.stream = req.Stream
		return g, nil
	case gateCheckpoint:
		if strings.TrimSpace(req.Checkpoint) == "" {
			return gateModel{}, badRequest("checkpoint", "name the checkpoint released with the version")
		}
		m, name, err := s.checkpointModel(ctx, orgID, req.Checkpoint)
		if err != nil {
			return gateModel{}, fieldError(fiber.StatusNotFound, "checkpoint", err.Error())
		}
		return served(m, name, gateCheckpoint), nil
	case gateExpert:
		if req.Checkpoint != "" {
			return gateModel{}, badRequest("checkpoint", "a checkpoint goes with \"model\": \"checkpoint\"")
		}
		return gateModel{name: gateExpert, kind: gateExpert, factory: eval.NewExpert}, nil
	}
	return gateModel{}, badRequest("model", fmt.Sprintf("%q: want serving, checkpoint or expert", req.Model))
}

// pickItems takes n items spread evenly over a suite, so that a small gate
// still covers its rooms and categories; the choice is the same every time.
func pickItems(s *eval.Suite, n int) *eval.Suite {
	out := &eval.Suite{Name: s.Name}
	if n >= len(s.Items) {
		out.Items = slices.Clone(s.Items)
	} else {
		for i := range n {
			out.Items = append(out.Items, s.Items[i*len(s.Items)/n])
		}
	}
	for i, it := range out.Items {
		if it.Variant != nil {
			// The suite recorded the families its seeds drew from the demo
			// harness; a candidate with other skills or tools draws others
			// from the same seed, which is the variant the gate should
			// score rather than an error.
			v := *it.Variant
			v.Families = nil
			out.Items[i].Variant = &v
		}
	}
	return out
}

func (s *Server) gateRoutes(api fiber.Router) {
	op := requireRole(store.RoleOperator)
	api.Get("/harness-gates", op, s.listGates)
	api.Post("/harness-gates", op, s.startGate)
	api.Get("/harness-gates/:id", op, s.getGate)
	api.Get("/harness-gates/:id/events", op, s.gateEvents)
	api.Post("/harness-gates/:id/cancel", op, s.cancelGate)
}

func (s *Server) listGates(c *fiber.Ctx) error {
	list, err := s.store.HarnessGates(c.UserContext(), scopeOf(c), 50)
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) getGate(c *fiber.Ctx) error {
	g, err := s.store.HarnessGate(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "release gate")
	}
	return c.JSON(g)
}

// startGate checks the request, records the gate and runs it in the
// background: 202 with the gate; progress over GET …/events (SSE) or by
// polling GET /api/harness-gates/:id.
func (s *Server) startGate(c *fiber.Ctx) error {
	var req gateRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"candidate\", \"baseline\", \"model\", \"checkpoint\", \"stream\", \"suites\", \"n\", \"replay\", \"streams\", \"tolerance\"}: "+err.Error())
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	cand, _, err := s.lookupVersion(c, "candidate", req.Candidate)
	if err != nil {
		return err
	}
	if req.Stream != "" {
		st, err := s.store.Stream(ctx, sc, req.Stream)
		if errors.Is(err, store.ErrNotFound) {
			return fieldError(fiber.StatusNotFound, "stream", fmt.Sprintf("no stream %q", req.Stream))
		}
		if err != nil {
			return err
		}
		if req.Baseline == "" {
			req.Baseline = st.HarnessVersion
		}
		if len(req.Streams) == 0 {
			req.Streams = []string{st.ID}
		}
	}
	if req.Baseline == "" {
		if req.Baseline, err = s.currentVersion(ctx, sc.OrgID); err != nil {
			return badRequest("baseline", err.Error())
		}
	}
	base, _, err := s.lookupVersion(c, "baseline", req.Baseline)
	if err != nil {
		return err
	}
	if req.N == 0 {
		req.N = defaultGateN
	}
	if req.N < 1 || req.N > maxGateN {
		return badRequest("n", fmt.Sprintf("%d items per suite: want 1 to %d", req.N, maxGateN))
	}
	tolerance := defaultGateTolerance
	if req.Tolerance != nil {
		tolerance = *req.Tolerance
		if tolerance < 0 || tolerance > 100 || math.IsNaN(tolerance) {
			return badRequest("tolerance", "points of score a suite may lose: want 0 to 100")
		}
	}
	if len(req.Suites) == 0 {
		req.Suites = evalSuites() // every suite that plays the live room
	}
	suites := make([]*eval.Suite, 0, len(req.Suites))
	total := 0
	for i, name := range req.Suites {
		if !slices.Contains(evalSuites(), name) || slices.Contains(req.Suites[:i], name) {
			return badRequest("suites", fmt.Sprintf("%q: want each of %s at most once", name, strings.Join(evalSuites(), ", ")))
		}
		full, err := eval.OpenSuite(name)
		if err != nil {
			return err
		}
		sub := pickItems(full, req.N)
		suites = append(suites, sub)
		total += len(sub.Items)
	}
	if req.LoopID != "" {
		if _, err := s.store.EvolutionLoop(ctx, sc, req.LoopID); err != nil {
			return fieldError(fiber.StatusNotFound, "loop_id", "no such evolution loop")
		}
	}
	model, err := s.gateModelOf(ctx, sc.OrgID, req)
	if err != nil {
		return err
	}
	replayN := defaultGateReplay
	if model.kind == gateExpert {
		replayN = 0 // the expert plays a question's gold, and a live question has none
	}
	if req.Replay != nil {
		replayN = *req.Replay
	}
	switch {
	case replayN < 0 || replayN > maxGateN:
		return badRequest("replay", fmt.Sprintf("%d questions: want 0 to %d", replayN, maxGateN))
	case replayN > 0 && model.kind == gateExpert:
		return badRequest("replay", "the expert plays a question's gold answer, and the streams' own questions have none: replay them with the serving model")
	}
	replay, err := s.replayQuestions(ctx, sc, base.Version(), req.Streams, replayN)
	if err != nil {
		return err
	}
	total += len(replay)
	if cand.Version() != base.Version() {
		total *= 2
	}
	g, err := s.store.CreateHarnessGate(ctx, sc, store.HarnessGate{Candidate: cand.Version(), Baseline: base.Version(), Model: model.name,
		Suites: req.Suites, N: req.N, Total: total, LoopID: req.LoopID})
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	run := &gateRun{cancel: cancel, subs: map[chan gateProgress]struct{}{}, now: gateProgress{Total: total, Phase: "waiting for a free slot"}}
	a := s.harnesses
	a.mu.Lock()
	a.gates[g.ID] = run
	a.mu.Unlock()
	go s.runGate(runCtx, sc, g, cand, base, suites, replay, model, tolerance, run)
	return c.Status(fiber.StatusAccepted).JSON(g)
}

// runGate runs the gate's suites and replayed questions under the
// baseline and the candidate with the gate's model, then stores the
// report, the scores and the failed items.
func (s *Server) runGate(ctx context.Context, sc store.Scope, g *store.HarnessGate, cand, base *harness.Harness,
	suites []*eval.Suite, replay []replayItem, model gateModel, tolerance float64, run *gateRun) {
	a := s.harnesses
	defer func() {
		run.cancel()
		a.mu.Lock()
		delete(a.gates, g.ID)
		a.mu.Unlock()
		run.end()
	}()
	// The store writes below must land even when the gate was cancelled.
	bg := context.WithoutCancel(ctx)
	finish := func(state string, rep *gateReport, errMsg string, scores []store.HarnessScore, fails []store.HarnessFailure) {
		raw := []byte(`{}`)
		if rep != nil {
			raw, _ = json.Marshal(rep)
		}
		a.gateRuns.WithLabelValues(state).Inc()
		if err := s.store.FinishHarnessGate(bg, sc, g.ID, state, raw, errMsg, scores, fails); err != nil {
			s.log.Error("release gate: store result", "gate", g.ID, "err", err)
		}
		if g.LoopID != "" {
			summary := fmt.Sprintf("gate %s: %s", state, errMsg)
			if rep != nil {
				summary = fmt.Sprintf("gate %s: %s vs %s, overall %+.1f points, %d regressions", state,
					cand.ShortVersion(), base.ShortVersion(), rep.Overall.Delta, len(rep.Regressions))
			}
			detail, _ := json.Marshal(fiber.Map{"gate_id": g.ID, "state": state, "candidate": g.Candidate})
			if err := s.store.AddEvolutionEvent(bg, sc, g.LoopID, store.EvolutionEvent{Kind: "evaluation", Summary: summary, Detail: detail}, ""); err != nil {
				s.log.Error("release gate: evolution event", "gate", g.ID, "err", err)
			}
		}
	}
	select {
	case a.slot <- struct{}{}:
		defer func() { <-a.slot }()
	case <-ctx.Done():
		finish(store.GateCancelled, nil, "cancelled before it started", nil, nil)
		return
	}
	// The suites run with the plugins loaded in the sandbox; an
	// organisation's enabled plugins are loaded there when one of its
	// plugin sets is first built, which may not have happened yet.
	if _, err := s.streamPlugins(bg, sc.OrgID, nil); err != nil {
		s.log.Warn("release gate: the organisation's plugins", "gate", g.ID, "err", err)
	}
	start := time.Now()
	done := 0
	results := map[string]map[string]*eval.SuiteReport{} // version → suite → report
	versions := []*harness.Harness{base}
	if cand.Version() != base.Version() {
		versions = append(versions, cand)
	}
	quiet := slog.New(slog.DiscardHandler)
	for _, h := range versions {
		results[h.Version()] = map[string]*eval.SuiteReport{}
		for _, suite := range suites {
			phase := fmt.Sprintf("%s under %s", suite.Name, h.ShortVersion())
			offset := done
			run.publish(gateProgress{Done: done, Total: g.Total, Phase: phase})
			// The catalog binding of live sessions applies: the gate
			// measures the model as it serves.
			runner := &eval.Runner{Base: h, Sandbox: s.cfg.Sandbox, Plugins: s.orgPlugins(sc.OrgID), Model: model.factory, Parallel: 2, TurnTimeout: 30 * time.Second,
				BindCatalog: model.kind != gateExpert, Logger: quiet, Progress: func(d, _ int) {
					run.publish(gateProgress{Done: offset + d, Total: g.Total, Phase: phase})
					_ = s.store.SetHarnessGateProgress(bg, g.ID, offset+d, g.Total)
				}}
			rep, err := runner.Run(ctx, suite)
			if err != nil {
				state := store.GateFailed
				if ctx.Err() != nil {
					state = store.GateCancelled
				}
				finish(state, nil, phase+": "+err.Error(), nil, nil)
				return
			}
			results[h.Version()][suite.Name] = rep
			a.gateItems.Add(float64(len(rep.Items)))
			done = offset + len(suite.Items)
		}
		if len(replay) == 0 {
			continue
		}
		phase := fmt.Sprintf("%d replayed questions under %s", len(replay), h.ShortVersion())
		offset := done
		run.publish(gateProgress{Done: done, Total: g.Total, Phase: phase})
		rep, err := s.runReplay(ctx, sc.OrgID, h.Version(), replay, model, func(d int) {
			run.publish(gateProgress{Done: offset + d, Total: g.Total, Phase: phase})
			_ = s.store.SetHarnessGateProgress(bg, g.ID, offset+d, g.Total)
		})
		if err != nil {
			state := store.GateFailed
			if ctx.Err() != nil {
				state = store.GateCancelled
			}
			finish(state, nil, phase+": "+err.Error(), nil, nil)
			return
		}
		results[h.Version()][replaySuite] = rep
		a.gateItems.Add(float64(len(rep.Items)))
		done = offset + len(replay)
	}
	rep := compareGate(results[base.Version()], results[cand.Version()], tolerance)
	rep.Model, rep.ModelKind, rep.Sanity, rep.Replayed, rep.Stream = model.name, model.kind, model.kind == gateExpert, len(replay), model.stream
	rep.Candidate, rep.Baseline, rep.N, rep.TookMS = cand.Version(), base.Version(), g.N, time.Since(start).Milliseconds()
	if rep.Sanity {
		rep.Warnings = append(rep.Warnings, "the expert follows whatever harness it is given: this gate checks that the harness works, "+
			"not how the serving model copes with it, and no release counts it")
	}
	var scores []store.HarnessScore
	var fails []store.HarnessFailure
	missing := map[string]bool{}
	for _, h := range versions {
		for _, name := range sortedKeys(results[h.Version()]) {
			r := results[h.Version()][name]
			cats, _ := json.Marshal(r.Categories)
			scores = append(scores, store.HarnessScore{Model: model.name, Version: h.Version(), Suite: name, Score: r.Score, N: r.N, Categories: cats})
			for _, it := range r.Items {
				if it.Grade.Score >= 1 && it.Error == "" {
					continue
				}
				for _, d := range it.Grade.Deductions {
					if m := missingPlugin.FindStringSubmatch(d); m != nil {
						missing[m[1]] = true
					}
				}
				cause := failureCause(it)
				fails = append(fails, store.HarnessFailure{Version: h.Version(), Suite: name, ItemID: it.ID, Category: it.Category,
					Cause: cause, Score: it.Grade.Score, Deductions: it.Grade.Deductions, Reply: it.Reply})
				if h.Version() == cand.Version() {
					rep.Causes[cause]++
				}
			}
		}
	}
	for _, name := range sortedKeys(missing) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("plugin %q, which the harness names, was not loaded: its hooks applied their failure policy and its tools failed, so the scores do not show the harness as it runs live", name))
	}
	state := store.GatePassed
	if len(rep.Regressions) > 0 {
		state = store.GateRegressed
	}
	finish(state, rep, "", scores, fails)
}

// compareGate builds the per-suite and per-category comparison.
func compareGate(base, cand map[string]*eval.SuiteReport, tolerance float64) *gateReport {
	rep := &gateReport{Tolerance: tolerance, Causes: map[string]int{}, Regressions: []regression{}, Suites: []suiteDelta{}, Warnings: []string{}}
	for _, name := range sortedKeys(cand) {
		b, c := base[name], cand[name]
		sd := suiteDelta{Suite: name, Baseline: scoresOf(b), Candidate: scoresOf(c), Delta: round1(c.Score - b.Score),
			DeltaCI95: pairedInterval(b, c, nil), Categories: []categoryDelta{}}
		sd.Regressed = c.Score-b.Score < -tolerance
		scoreRegressed := sd.Regressed
		if sd.Regressed {
			rep.Regressions = append(rep.Regressions, regression{Suite: name, Delta: sd.Delta})
		}
		if c.OnAirUnbacked > b.OnAirUnbacked {
			sd.Regressed = true
			rep.Regressions = append(rep.Regressions, regression{Suite: name, Category: unbackedOnAir, Delta: float64(b.OnAirUnbacked - c.OnAirUnbacked)})
		}
		// A score that fell says it already; one that held may hide it.
		if own := (c.Score - c.RewrittenScore) - (b.Score - b.RewrittenScore); !scoreRegressed && own < -tolerance {
			sd.Regressed = true
			rep.Regressions = append(rep.Regressions, regression{Suite: name, Category: modelOwnWords, Delta: round1(own)})
		}
		cats := map[string]bool{}
		for k := range b.Categories {
			cats[k] = true
		}
		for k := range c.Categories {
			cats[k] = true
		}
		for _, k := range sortedKeys(cats) {
			bs, cs := b.Categories[k], c.Categories[k]
			cd := categoryDelta{Category: k, Baseline: round1(bs.Score), Candidate: round1(cs.Score), Delta: round1(cs.Score - bs.Score),
				DeltaCI95: pairedInterval(b, c, &k), N: max(bs.N, cs.N)}
			cd.Regressed = cs.Score-bs.Score < -tolerance
			if cd.Regressed {
				rep.Regressions = append(rep.Regressions, regression{Suite: name, Category: k, Delta: cd.Delta})
			}
			sd.Categories = append(sd.Categories, cd)
		}
		rep.Suites = append(rep.Suites, sd)
		rep.Overall.Baseline += b.Score
		rep.Overall.Candidate += c.Score
	}
	if n := float64(len(rep.Suites)); n > 0 {
		rep.Overall.Baseline, rep.Overall.Candidate = round1(rep.Overall.Baseline/n), round1(rep.Overall.Candidate/n)
		rep.Overall.Delta = round1(rep.Overall.Candidate - rep.Overall.Baseline)
	}
	sort.SliceStable(rep.Regressions, func(i, j int) bool { return rep.Regressions[i].Delta < rep.Regressions[j].Delta })
	return rep
}

// tCritical95 is Student's t for a two-sided 95% interval with 1 to 30
// degrees of freedom; past 30 the normal 1.96 is close enough.
var tCritical95 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
	2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// pairedInterval is the 95% interval, in points, of the candidate's mean
// score minus the baseline's over the items both ran (of one category
// when category is set): the same items under both versions, so the
// differences are paired. With fewer than two items nothing is known and
// the interval is the whole range.
func pairedInterval(base, cand *eval.SuiteReport, category *string) [2]float64 {
	before := map[string]float64{}
	for _, it := range base.Items {
		before[it.ID] = it.Grade.Score
	}
	var diffs []float64
	for _, it := range cand.Items {
		b, ok := before[it.ID]
		if ok && (category == nil || it.Category == *category) {
			diffs = append(diffs, 100*(it.Grade.Score-b))
		}
	}
	n := len(diffs)
	if n < 2 {
		return [2]float64{-100, 100}
	}
	var mean, ss float64
	for _, d := range diffs {
		mean += d
	}
	mean /= float64(n)
	for _, d := range diffs {
		ss += (d - mean) * (d - mean)
	}
	t := 1.96
	if n-1 <= len(tCritical95) {
		t = tCritical95[n-2]
	}
	half := t * math.Sqrt(ss/float64(n-1)/float64(n))
	return [2]float64{round1(max(-100, mean-half)), round1(min(100, mean+half))}
}

func scoresOf(r *eval.SuiteReport) gateScores {
	return gateScores{Score: round1(r.Score), CI95: [2]float64{round1(r.CI95[0]), round1(r.CI95[1])}, Accuracy: round1(r.Accuracy),
		Effectiveness: round1(r.Effectiveness), ToolRationality: round1(r.ToolRationality), SkillSelection: round1(r.SkillSelection),
		N: r.N, Errors: r.Errors, OnAir: r.OnAir, OnAirUnbacked: r.OnAirUnbacked, OnAirRewritten: r.OnAirRewritten,
		OwnScore: round1(r.Score - r.RewrittenScore)}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func (s *Server) cancelGate(c *fiber.Ctx) error {
	g, err := s.store.HarnessGate(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "release gate")
	}
	a := s.harnesses
	a.mu.Lock()
	run := a.gates[g.ID]
	a.mu.Unlock()
	if run == nil {
		return fiber.NewError(fiber.StatusConflict, "the gate is not running (state "+g.State+")")
	}
	run.cancel()
	return c.SendStatus(fiber.StatusAccepted)
}

// gateEvents streams a gate's progress as server-sent events: "progress"
// events while it runs, then one "done" event with the finished gate.
func (s *Server) gateEvents(c *fiber.Ctx) error {
	sc := scopeOf(c)
	g, err := s.store.HarnessGate(c.UserContext(), sc, c.Params("id"))
	if err != nil {
		return storeError(err, "release gate")
	}
	a := s.harnesses
	a.mu.Lock()
	run := a.gates[g.ID]
	var ch chan gateProgress
	var now gateProgress
	if run != nil {
		ch, now = run.subscribe()
	}
	a.mu.Unlock()
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	id := g.ID
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		send := func(event string, v any) error {
			data, _ := json.Marshal(v)
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
				return err
			}
			return w.Flush()
		}
		if run != nil {
			defer run.unsubscribe(ch)
			if send("progress", now) != nil {
				return
			}
			keepalive := time.NewTicker(15 * time.Second)
			defer keepalive.Stop()
		wait:
			for {
				select {
				case p, ok := <-ch:
					if !ok {
						break wait
					}
					if send("progress", p) != nil {
						return
					}
				case <-keepalive.C:
					if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil || w.Flush() != nil {
						return
					}
				}
			}
		}
		final, err := s.store.HarnessGate(context.Background(), sc, id)
		if err != nil {
			_ = send("error", fiber.Map{"error": err.Error()})
			return
		}
		_ = send("done", final)
	})
	return nil
}
