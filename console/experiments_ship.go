package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// checkpointID names one exact model checkpoint: the console's configured
// model, or a promoted folder with the run and step it was promoted from.
type checkpointID struct {
	configured bool
	name       string // the configured model's name
	folder     string
	runID      string
	runName    string
	step       int
}

// ref is what an evaluation of kind "checkpoint" records as its model
// reference: the folder, or the configured model's name.
func (id checkpointID) ref() string {
	if id.configured {
		return id.name
	}
	return id.folder
}

func (id checkpointID) String() string {
	if id.configured {
		return id.name
	}
	if id.runID == "" {
		return filepath.Base(id.folder)
	}
	return fmt.Sprintf("%s (%s, step %d)", filepath.Base(id.folder), id.runName, id.step)
}

// resolveCheckpoint is the exact checkpoint an experiment's arm or an
// evaluation names: the console's configured model by its name, or a
// checkpoint folder the organisation promoted (promotedFolder).
func (s *Server) resolveCheckpoint(ctx context.Context, orgID, checkpoint string) (checkpointID, error) {
	checkpoint = strings.TrimSpace(checkpoint)
	if checkpoint == "" {
		return checkpointID{}, fmt.Errorf("name the checkpoint: a promoted checkpoint's folder, or the console's model %q", s.configuredModelName())
	}
	if s.cfg.Model != nil && checkpoint == s.configuredModelName() {
		return checkpointID{configured: true, name: checkpoint}, nil
	}
	folder, err := s.promotedFolder(ctx, orgID, checkpoint)
	if err != nil {
		return checkpointID{}, err
	}
	return folderCheckpoint(folder), nil
}

// folderCheckpoint reads a promoted folder's promotion record; a folder
// without one (not promoted by the console) is named by its path only.
func folderCheckpoint(folder string) checkpointID {
	id := checkpointID{folder: folder}
	var p promotion
	if runfolder.ReadJSON(filepath.Join(folder, promotedFile), &p) == nil {
		id.runID, id.runName, id.step = p.RunID, p.RunName, p.Step
	}
	return id
}

// servingCheckpoint is the checkpoint the organisation serves now; ok is
// false when it serves nothing (no promotion and no configured model).
func (s *Server) servingCheckpoint(ctx context.Context, orgID string) (id checkpointID, ok bool) {
	v := s.servingView(ctx, orgID)
	if v.Default || v.Spec == "" {
		return checkpointID{configured: true, name: s.configuredModelName()}, s.cfg.Model != nil
	}
	return folderCheckpoint(v.Spec), true
}

// evalStep reads the step the console writes into the model name of an
// evaluation of a run or of a promoted serving checkpoint: "name (step
// N)" or "name (step N, serving)".
var evalStep = regexp.MustCompile(`\(step (\d+)(?:, serving)?\)$`)

// evaluated reports whether an evaluation ran the checkpoint: one of kind
// checkpoint that names it, or — for a promoted folder — one of the run it
// was promoted from at the same step (kind run, or serving while it
// served), or — for the configured model — one of the serving model while
// nothing was promoted.
func (id checkpointID) evaluated(ev store.Evaluation) bool {
	switch ev.ModelKind {
	case modelCheckpoint:
		return ev.ModelRef == id.ref()
	case modelRun, modelServing:
		if id.configured {
			return ev.ModelKind == modelServing && ev.ModelRef == "" && id.name != "" && ev.ModelName == id.name
		}
		m := evalStep.FindStringSubmatch(ev.ModelName)
		return id.runID != "" && ev.ModelRef == id.runID && m != nil && m[1] == strconv.Itoa(id.step)
	}
	return false
}

// shipEvaluation is one suite of a checkpoint's gate: the checkpoint's
// latest finished evaluation and the serving model's it is compared with.
type shipEvaluation struct {
	Suite     string `json:"suite"`
	N         int    `json:"n"`
	Candidate string `json:"candidate_eval"`
	Baseline  string `json:"baseline_eval,omitempty"`
}

// checkpointGate is the gate a checkpoint passed to ship: its offline
// evaluations on the live-room suites against the serving model's, with
// the release gate's comparison (compareGate: a suite or category that
// lost more than the tolerance is a regression).
type checkpointGate struct {
	Candidate   string           `json:"candidate"`
	Baseline    string           `json:"baseline"`
	Evaluations []shipEvaluation `json:"evaluations"`
	Comparison  *gateReport      `json:"comparison,omitempty"`
}

// gateCheckpoint finds the evaluations a checkpoint ships on: for every
// live-room suite the checkpoint's latest finished evaluation, and the
// serving model's latest finished one of the same suite and size (the
// same items). Either missing is a 409 naming field "gate" that says
// which evaluation to run. With nothing served there is no baseline.
func (s *Server) gateCheckpoint(ctx context.Context, sc store.Scope, armCheckpoint string, cand, serving checkpointID, served bool) (*checkpointGate, error) {
	evals, err := s.store.Evaluations(ctx, sc, "")
	if err != nil {
		return nil, err
	}
	latest := func(id checkpointID, suite string, n int) *store.Evaluation {
		var found *store.Evaluation
		for i := range evals {
			ev := &evals[i]
			if ev.Suite == suite && ev.State == store.JobDone && ev.Score != nil && (n == 0 || ev.N == n) && id.evaluated(*ev) {
				found = ev
			}
		}
		return found
	}
	g := &checkpointGate{Candidate: cand.String(), Baseline: serving.String()}
	if !served {
		g.Baseline = ""
	}
	var missing, missingBase []string
	base, next := map[string]*eval.SuiteReport{}, map[string]*eval.SuiteReport{}
	for _, suite := range evalSuites() {
		c := latest(cand, suite, 0)
		if c == nil {
			missing = append(missing, suite)
			continue
		}
		se := shipEvaluation{Suite: suite, N: c.N, Candidate: c.ID}
		if served {
			b := latest(serving, suite, c.N)
			if b == nil {
				missingBase = append(missingBase, fmt.Sprintf("%s with n=%d", suite, c.N))
				continue
			}
			se.Baseline = b.ID
			var cr, br eval.SuiteReport
			if err := json.Unmarshal(c.Report, &cr); err != nil {
				return nil, fmt.Errorf("evaluation %s: report: %w", c.ID, err)
			}
			if err := json.Unmarshal(b.Report, &br); err != nil {
				return nil, fmt.Errorf("evaluation %s: report: %w", b.ID, err)
			}
			next[suite], base[suite] = &cr, &br
		}
		g.Evaluations = append(g.Evaluations, se)
	}
	switch {
	case len(missing) > 0:
		return nil, fieldError(fiber.StatusConflict, "gate", fmt.Sprintf("no finished evaluation of the winner's checkpoint %s on %s: "+
			`run it on the Evaluations page (POST /api/evals {"suite": …, "n": …, "model": "checkpoint", "checkpoint": %q} for each live-room suite), then ship again`,
			cand, strings.Join(missing, ", "), armCheckpoint))
	case len(missingBase) > 0:
		return nil, fieldError(fiber.StatusConflict, "gate", fmt.Sprintf("no finished evaluation of the serving model %s on %s to compare the winner's checkpoint with: "+
			`run it on the Evaluations page (model "serving", the same suite and n), then ship again`, serving, strings.Join(missingBase, ", ")))
	}
	if served {
		g.Comparison = compareGate(base, next, defaultGateTolerance)
		g.Comparison.Model, g.Comparison.Candidate, g.Comparison.Baseline = cand.String(), cand.String(), serving.String()
	}
	return g, nil
}

// servingSpec is the serving setting's value for a checkpoint: its folder,
// or "" (no setting) for the configured model.
func (id checkpointID) servingSpec() string {
	if id.configured {
		return ""
	}
	return id.folder
}

// shipPlan is what shipping an experiment's winner will do, checked in
// full before anything changes.
type shipPlan struct {
	ship    experiment.Ship
	publish *publishRequest
	// cand is the checkpoint to serve when changeServing is set.
	cand          checkpointID
	changeServing bool
}

// planShip checks a winner's harness version and checkpoint against their
// gates: the harness version's latest finished release gate, and the
// checkpoint's evaluations against the serving model's (gateCheckpoint).
// A regression of either is refused unless override gives a reason.
func (s *Server) planShip(ctx context.Context, sc store.Scope, experimentID, armName, version, checkpoint, override string, streams []string) (*shipPlan, error) {
	p := &shipPlan{ship: experiment.Ship{ExperimentID: experimentID, Arm: armName, HarnessVersion: version, Checkpoint: checkpoint, Override: override}}
	if version != "" {
		// The gate of the model the streams will run: the winner's
		// checkpoint when it ships too (one that cannot be served is
		// refused below, with the reason), else the serving model. Streams
		// with a model server of their own need gates of theirs, which the
		// release checks.
		model := s.servingModelName(ctx, sc.OrgID)
		if checkpoint != "" {
			if _, name, err := s.checkpointModel(ctx, sc.OrgID, checkpoint); err == nil {
				model = name
			}
		}
		gate, err := s.releaseGate(ctx, sc, version, model)
		if err != nil {
			return nil, err
		}
		if gate == nil {
			return nil, fieldError(fiber.StatusConflict, "gate", fmt.Sprintf("the release gate has not run for the winner's harness version %s with %s: "+
				"run it on the Harnesses page (release gate), then ship again", version, model))
		}
		if gate.State == store.GateRegressed && override == "" {
			return nil, fieldError(fiber.StatusConflict, "override", "the release gate of the winner's harness version found regressions: "+
				"give an override reason to ship anyway (it is recorded)")
		}
		if len(streams) == 0 {
			return nil, fiber.NewError(fiber.StatusConflict, "every stream of the experiment was deleted: publish the version from the Harnesses page")
		}
		p.publish = &publishRequest{Version: version, Streams: streams, GateID: gate.ID, Override: override, Checkpoint: checkpoint}
	}
	if checkpoint == "" {
		return p, nil
	}
	cand, err := s.resolveCheckpoint(ctx, sc.OrgID, checkpoint)
	if err != nil {
		return nil, fieldError(fiber.StatusConflict, "checkpoint", fmt.Sprintf("the winner's checkpoint cannot be served: %v", err))
	}
	// A model server is no checkpoint the gate can evaluate or a rollback
	// restore: the operator moves off it on purpose.
	if v := s.servingView(ctx, sc.OrgID); v.Server != nil {
		return nil, fieldError(fiber.StatusConflict, "checkpoint", fmt.Sprintf("the organisation's streams are served by the model server %s: "+
			"shipping the winner's checkpoint would replace it; go back to the console's model on the Settings page first, or serve the checkpoint from the server", v.Spec))
	}
	serving, served := s.servingCheckpoint(ctx, sc.OrgID)
	p.ship.PreviousServing = serving.servingSpec()
	p.ship.Serving = p.ship.PreviousServing
	if served && cand.ref() == serving.ref() && cand.configured == serving.configured {
		return p, nil // it serves already
	}
	g, err := s.gateCheckpoint(ctx, sc, checkpoint, cand, serving, served)
	if err != nil {
		return nil, err
	}
	if g.Comparison != nil && len(g.Comparison.Regressions) > 0 && override == "" {
		var worst []string
		for _, r := range g.Comparison.Regressions {
			where := r.Suite
			if r.Category != "" {
				where += "/" + r.Category
			}
			worst = append(worst, fmt.Sprintf("%s %+.1f", where, r.Delta))
		}
		return nil, fieldError(fiber.StatusConflict, "override", fmt.Sprintf("the winner's checkpoint %s scores lower than the serving model %s in its evaluations (%s points; more than %.0f is a regression): "+
			"give an override reason to ship anyway (it is recorded)", cand, serving, strings.Join(worst, ", "), defaultGateTolerance))
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	p.ship.Gate, p.cand, p.changeServing = raw, cand, true
	p.ship.Serving = cand.servingSpec()
	return p, nil
}

// shipResult is what POST /api/experiments/:id/ship answers: the ship as
// the experiment's history records it, the harness release it made and
// the serving model after it.
type shipResult struct {
	Ship    experiment.Ship       `json:"ship"`
	Release *store.HarnessRelease `json:"release,omitempty"`
	Serving *servingView          `json:"serving,omitempty"`
}

// runShip carries out a checked plan: the harness release through the
// release handler (the record every release gets), then the serving
// change, then the history record.
func (s *Server) runShip(c *fiber.Ctx, p *shipPlan) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	var res shipResult
	if p.publish != nil {
		body, err := json.Marshal(p.publish)
		if err != nil {
			return err
		}
		c.Request().SetBody(body)
		if err := s.publishRelease(c); err != nil {
			return err
		}
		if c.Response().StatusCode() != fiber.StatusCreated {
			return nil // the release handler's refusal stands
		}
		var rel store.HarnessRelease
		if err := json.Unmarshal(c.Response().Body(), &rel); err != nil {
			return fmt.Errorf("experiment ship: the release's answer: %w", err)
		}
		c.Response().ResetBody()
		res.Release, p.ship.ReleaseID = &rel, rel.ID
	}
	if p.ship.Checkpoint != "" {
		if p.changeServing {
			if err := s.store.SetOrgSetting(ctx, sc, servingSetting, p.cand.servingSpec()); err != nil {
				return storeError(err, "setting")
			}
			p.ship.ServingChanged = true
			s.log.Info("experiment winner serves", "experiment", p.ship.ExperimentID, "arm", p.ship.Arm, "checkpoint", p.cand.String(),
				"previous", p.ship.PreviousServing, "by", userOf(c).Username, "override", p.ship.Override)
		}
		v := s.servingView(ctx, sc.OrgID)
		res.Serving = &v
	}
	if err := s.experiments().AddShip(ctx, sc, &p.ship); err != nil {
		return err
	}
	p.ship.Shipper = userOf(c).Username
	res.Ship = p.ship
	return c.Status(fiber.StatusCreated).JSON(res)
}

// shipStreams lists the experiment's streams that still exist.
func (s *Server) shipStreams(ctx context.Context, sc store.Scope, id string) ([]string, error) {
	streams, err := s.experiments().Participants(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(streams))
	for _, x := range streams {
		_, err := s.store.Stream(ctx, sc, x.StreamID)
		switch {
		case err == nil:
			ids = append(ids, x.StreamID)
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return ids, nil
}
