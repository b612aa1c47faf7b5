package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness/catalog"
)

// Limits of the experiment endpoints.
const (
	// maxEventBody bounds one commerce-event batch's body: MaxBatch events
	// of a few hundred bytes each.
	maxEventBody = 4 << 20
	// eventClockSkew is how far in the future a shop's event may be dated.
	eventClockSkew = 2 * time.Minute
	// maxEventID bounds a shop's event id: the store keeps it behind the
	// stream id (36 bytes and a slash) within its 128-byte limit.
	maxEventID = 91
	// maxSeriesPoints bounds the points of a report over time.
	maxSeriesPoints = 48
	// seriesResamples is the bootstrap size of each point of a series: the
	// chart shows the trend; the report itself uses the full 2,000.
	seriesResamples = 400
)

// experimentRoutes serves online experiments (issue #8). Everything but
// the events endpoint is for operators; the events endpoint is also open
// to a merchant's token for its own streams.
//
//	GET  /api/experiments                 the organisation's experiments, newest first
//	POST /api/experiments                 create a draft (see experimentRequest)
//	POST /api/experiments/plan            {"baseline_mean", "sd", "mde", "alpha", "power"} → {"units_per_arm"}
//	GET  /api/experiments/:id             the experiment and its streams
//	POST /api/experiments/:id/start       start; stream units get their arm's harness version, viewer units one live session per arm
//	POST /api/experiments/:id/stop        stop; streams go back to the version they ran before
//	GET  /api/experiments/:id/report      per-arm metrics, comparisons, SRM, verdict (?as_of=RFC3339)
//	GET  /api/experiments/:id/series      the report at ?points=N times from the start (charts)
//	POST /api/experiments/:id/ship        ship the winner: its harness version through the release flow, its checkpoint to serving
//	POST /api/streams/:id/events          {"events": [...]} commerce events of the stream's shop → BatchResult
func (s *Server) experimentRoutes(api fiber.Router) {
	var ingested *prometheus.CounterVec
	if s.cfg.Metrics != nil {
		ingested = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "livehat_experiment_events_total",
			Help: "Commerce events posted to the experiments' events API, by outcome."}, []string{"status"})
		if err := s.cfg.Metrics.Register(ingested); err != nil {
			s.log.Warn("experiment event counter not registered", "err", err)
			ingested = nil
		}
	}
	ready := func(c *fiber.Ctx) error {
		if !s.experimentsReady(c.UserContext()) {
			return errNoExperimentTables
		}
		return c.Next()
	}
	op := requireRole(store.RoleOperator)
	g := api.Group("/experiments", op, ready)
	g.Get("", s.listExperiments)
	g.Post("", s.createExperiment)
	g.Post("/plan", s.planExperiment)
	g.Get("/:id", s.getExperiment)
	g.Post("/:id/start", s.startExperiment)
	g.Post("/:id/stop", s.stopExperiment)
	g.Get("/:id/report", s.experimentReport)
	g.Get("/:id/series", s.experimentSeries)
	g.Post("/:id/ship", s.shipExperiment)
	api.Post("/streams/:id/events", requireRole(store.RoleOperator, store.RoleMerchant), ready,
		func(c *fiber.Ctx) error { return s.ingestEvents(c, ingested) })
}

// experimentArmRequest is one arm of a new experiment.
type experimentArmRequest struct {
	Name string `json:"name"`
	// HarnessVersion is a stored version (full hash or short form); empty
	// keeps each stream's own version.
	HarnessVersion string  `json:"harness_version"`
	Checkpoint     string  `json:"checkpoint"`
	Weight         float64 `json:"weight"`
}

// experimentPlan asks for the planned size from a power calculation.
type experimentPlan struct {
	BaselineMean float64 `json:"baseline_mean"`
	SD           float64 `json:"sd"`
	// Power defaults to 0.8.
	Power float64 `json:"power"`
}

// experimentRequest creates an experiment. PlannedUnitsPerArm is given,
// or computed from Plan with the experiment's MDE and Alpha.
type experimentRequest struct {
	Name                     string                 `json:"name"`
	Unit                     experiment.Unit        `json:"unit"`
	Streams                  []string               `json:"streams"`
	Arms                     []experimentArmRequest `json:"arms"`
	Primary                  experiment.Metric      `json:"primary_metric"`
	Guardrails               []experiment.Metric    `json:"guardrails"`
	AttributionWindowMinutes float64                `json:"attribution_window_minutes"`
	PrePeriodHours           float64                `json:"pre_period_hours"`
	Currency                 string                 `json:"currency"`
	PlannedUnitsPerArm       int                    `json:"planned_units_per_arm"`
	Plan                     *experimentPlan        `json:"plan"`
	Analysis                 experiment.Analysis    `json:"analysis"`
	Alpha                    float64                `json:"alpha"`
	MDE                      float64                `json:"mde"`
}

// experimentView is an experiment as the API answers it.
type experimentView struct {
	experiment.Experiment
	Streams []experiment.Participant `json:"streams"`
	// Ships is the history of its shipped winners, oldest first.
	Ships []experiment.Ship `json:"ships"`
}

func (s *Server) experimentView(ctx context.Context, sc store.Scope, e experiment.Experiment) (experimentView, error) {
	streams, err := s.experiments().Participants(ctx, sc, e.ID)
	if err != nil {
		return experimentView{}, err
	}
	ships, err := s.experiments().Ships(ctx, sc, e.ID)
	return experimentView{Experiment: e, Streams: orEmpty(streams), Ships: orEmpty(ships)}, err
}

// requestExperiment reads the request's :id experiment of the caller's organisation.
func (s *Server) requestExperiment(c *fiber.Ctx) (experiment.Experiment, error) {
	e, err := s.orgExperiment(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return e, storeError(err, "experiment")
	}
	return e, nil
}

func (s *Server) listExperiments(c *fiber.Ctx) error {
	list, err := s.experiments().OrgList(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	out := make([]experimentView, 0, len(list))
	for _, e := range list {
		v, err := s.experimentView(c.UserContext(), scopeOf(c), e)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return c.JSON(out)
}

func (s *Server) getExperiment(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	v, err := s.experimentView(c.UserContext(), scopeOf(c), e)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// planExperiment is the power calculation the create form offers.
func (s *Server) planExperiment(c *fiber.Ctx) error {
	var req struct {
		experimentPlan
		MDE   float64 `json:"mde"`
		Alpha float64 `json:"alpha"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", `want {"baseline_mean", "sd", "mde", "alpha", "power"}: `+err.Error())
	}
	n, err := planUnits(req.experimentPlan, req.MDE, req.Alpha)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"units_per_arm": n})
}

// planUnits runs PlanSampleSize with the form's defaults (α 0.05, power
// 0.8), naming the field at fault.
func planUnits(p experimentPlan, mde, alpha float64) (int, error) {
	if alpha == 0 {
		alpha = 0.05
	}
	if p.Power == 0 {
		p.Power = 0.8
	}
	switch {
	case !(p.BaselineMean > 0):
		return 0, badRequest("plan.baseline_mean", "the control's expected mean of the primary metric must be positive")
	case !(p.SD > 0):
		return 0, badRequest("plan.sd", "the per-unit standard deviation must be positive")
	case !(mde > 0 && mde < 10):
		return 0, badRequest("mde", "the relative effect to detect must be positive (0.05 is 5 %)")
	case !(alpha > 0 && alpha < 0.5):
		return 0, badRequest("alpha", "want a level in (0, 0.5)")
	case !(p.Power > 0.5 && p.Power < 1):
		return 0, badRequest("plan.power", "want a power in (0.5, 1)")
	}
	n, err := experiment.PlanSampleSize(p.BaselineMean, p.SD, mde, alpha, p.Power)
	if err != nil {
		return 0, badRequest("plan", err.Error())
	}
	return n, nil
}

// createExperiment stores a draft experiment of the caller's organisation.
func (s *Server) createExperiment(c *fiber.Ctx) error {
	var req experimentRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want an experiment (name, unit, streams, arms, primary_metric, …): "+err.Error())
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	req.Name = strings.TrimSpace(req.Name)
	switch {
	case req.Name == "":
		return badRequest("name", "name the experiment")
	case len(req.Name) > 200:
		return badRequest("name", "at most 200 characters")
	case len(req.Streams) == 0:
		return badRequest("streams", "choose the streams the experiment runs on")
	case len(req.Arms) < 2:
		return badRequest("arms", "an experiment needs a control and at least one treatment")
	case len(req.Arms) > 10:
		return badRequest("arms", "at most 10 arms")
	case req.AttributionWindowMinutes < 0 || req.AttributionWindowMinutes > 7*24*60:
		return badRequest("attribution_window_minutes", "want 0 (every event of an exposed unit) to 10080 minutes (a week)")
	case req.PrePeriodHours < 0 || req.PrePeriodHours > 24*90:
		return badRequest("pre_period_hours", "want 0 to 2160 hours (90 days)")
	case req.PlannedUnitsPerArm < 0:
		return badRequest("planned_units_per_arm", "must not be negative")
	case req.PlannedUnitsPerArm > 0 && req.Plan != nil:
		return badRequest("plan", "give planned_units_per_arm or a plan to compute it, not both")
	}
	for i, id := range req.Streams {
		if _, err := s.store.Stream(ctx, sc, id); err != nil || slices.Contains(req.Streams[:i], id) {
			return fieldError(fiber.StatusNotFound, fmt.Sprintf("streams[%d]", i), fmt.Sprintf("no stream %q (or named twice)", id))
		}
	}
	e := experiment.Experiment{Name: req.Name, Unit: req.Unit, Primary: req.Primary, Guardrails: req.Guardrails,
		AttributionWindow: time.Duration(req.AttributionWindowMinutes * float64(time.Minute)),
		PrePeriod:         time.Duration(req.PrePeriodHours * float64(time.Hour)),
		Currency:          strings.ToUpper(strings.TrimSpace(req.Currency)), PlannedUnitsPerArm: req.PlannedUnitsPerArm,
		Analysis: req.Analysis, Alpha: req.Alpha, MDE: req.MDE}
	if req.Plan != nil {
		mde := req.MDE
		if mde == 0 {
			mde = 0.05 // the experiment's default MDE
		}
		n, err := planUnits(*req.Plan, mde, req.Alpha)
		if err != nil {
			return err
		}
		e.PlannedUnitsPerArm = n
	}
	for i, a := range req.Arms {
		arm := experiment.Arm{Name: strings.TrimSpace(a.Name), Checkpoint: strings.TrimSpace(a.Checkpoint), Weight: a.Weight}
		if len(arm.Checkpoint) > 200 {
			return badRequest(fmt.Sprintf("arms[%d].checkpoint", i), "at most 200 characters")
		}
		if strings.TrimSpace(a.HarnessVersion) != "" {
			_, v, err := s.lookupVersion(c, fmt.Sprintf("arms[%d].harness_version", i), a.HarnessVersion)
			if err != nil {
				return err
			}
			arm.HarnessVersion = v.Version
		}
		e.Arms = append(e.Arms, arm)
	}
	created, err := s.experiments().Create(ctx, e)
	if err != nil {
		return experimentInputError(err)
	}
	if err := s.experiments().Claim(ctx, sc, created.ID, req.Streams); err != nil {
		if derr := s.experiments().DeleteDraft(ctx, created.ID); derr != nil {
			s.log.Error("experiment left without an organisation", "experiment", created.ID, "err", derr)
		}
		return err
	}
	v, err := s.experimentView(ctx, sc, created)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(v)
}

// experimentInputError turns the experiment package's validation error
// ("experiment "id": field: problem" per line) into a 400 naming the
// request field of the first problem, with every problem in the message.
func experimentInputError(err error) error {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, `": `); ok && strings.HasPrefix(msg, "experiment ") {
		msg = rest
	}
	field := "body"
	if f, _, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(f, " \n") {
		field = f
	}
	switch field {
	case "attribution_window":
		field = "attribution_window_minutes"
	case "pre_period":
		field = "pre_period_hours"
	}
	return badRequest(field, strings.ReplaceAll(msg, "\n", "; "))
}

// experimentStateError maps the experiment package's sentinels.
func experimentStateError(err error) error {
	switch {
	case errors.Is(err, experiment.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "no such experiment")
	case errors.Is(err, experiment.ErrState):
		return fiber.NewError(fiber.StatusConflict, err.Error())
	}
	return err
}

// startExperiment starts a draft. A stream-unit experiment assigns whole
// streams: each stream gets its arm by the hash and is bound to the arm's
// harness version (it switches at its next turn boundary). A viewer-unit
// experiment leaves the streams' versions alone: their live rooms open one
// session per arm and route each viewer to their arm's (live_arms.go). An
// arm's checkpoint must be one the organisation can serve; its sessions
// answer with it. Every turn is recorded under its arm (experimentTurn).
func (s *Server) startExperiment(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	if e.State != experiment.StateDraft {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the experiment is %s; only a draft can start", e.State))
	}
	for i, a := range e.Arms {
		if a.Checkpoint == "" {
			continue
		}
		if _, _, err := s.checkpointModel(ctx, sc.OrgID, a.Checkpoint); err != nil {
			return fieldError(fiber.StatusConflict, fmt.Sprintf("arms[%d].checkpoint", i), fmt.Sprintf("the arm's checkpoint cannot be served: %v "+
				"(name the console's model %q, or a checkpoint promoted on the Training page)", err, s.configuredModelName()))
		}
	}
	streams, err := s.experiments().Participants(ctx, sc, e.ID)
	if err != nil {
		return err
	}
	for _, x := range streams {
		if _, err := s.store.Stream(ctx, sc, x.StreamID); err != nil {
			return fieldError(fiber.StatusConflict, "streams", fmt.Sprintf("stream %s was deleted since the experiment was created", x.StreamID))
		}
		other, _, busy, err := s.experiments().RunningOn(ctx, x.StreamID)
		if err != nil {
			return err
		}
		if busy {
			return fieldError(fiber.StatusConflict, "streams", fmt.Sprintf("stream %q already runs experiment %s: stop it first", x.Name, other))
		}
	}
	now := s.store.Now()
	started, err := s.experiments().Start(ctx, e.ID, now)
	if err != nil {
		return experimentStateError(err)
	}
	for _, x := range streams {
		st, err := s.store.Stream(ctx, sc, x.StreamID)
		if err != nil {
			return storeError(err, "stream")
		}
		x.PreviousVersion = st.HarnessVersion
		if e.Unit == experiment.UnitViewer {
			// Viewers get their arms as they ask; the stream keeps its version.
			if err := s.experiments().SetParticipant(ctx, sc, e.ID, x); err != nil {
				return err
			}
			continue
		}
		arm, err := s.experiments().Assign(ctx, e.ID, x.StreamID, "", now)
		if err != nil {
			return experimentStateError(err)
		}
		x.Arm, x.HarnessVersion = arm.Name, st.HarnessVersion
		if arm.HarnessVersion != "" {
			x.HarnessVersion = arm.HarnessVersion
		}
		if err := s.experiments().SetParticipant(ctx, sc, e.ID, x); err != nil {
			return err
		}
		if x.HarnessVersion != st.HarnessVersion {
			if err := s.store.SetStreamHarness(ctx, sc, x.StreamID, x.HarnessVersion); err != nil {
				return storeError(err, "stream")
			}
		}
	}
	v, err := s.experimentView(ctx, sc, started)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// stopExperiment stops a running experiment and puts every stream that
// still runs its arm's version back on the version it ran before; a
// stream published to since keeps what was published. The live rooms of a
// viewer-unit experiment go back to one session when they next look
// (a message, a viewer connecting, or their refresh every couple of
// seconds).
func (s *Server) stopExperiment(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	stopped, err := s.experiments().Stop(ctx, e.ID, s.store.Now())
	if err != nil {
		return experimentStateError(err)
	}
	streams, err := s.experiments().Participants(ctx, sc, e.ID)
	if err != nil {
		return err
	}
	for _, x := range streams {
		st, err := s.store.Stream(ctx, sc, x.StreamID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if x.PreviousVersion != "" && st.HarnessVersion == x.HarnessVersion && x.HarnessVersion != x.PreviousVersion {
			if err := s.store.SetStreamHarness(ctx, sc, x.StreamID, x.PreviousVersion); err != nil {
				return storeError(err, "stream")
			}
		}
	}
	v, err := s.experimentView(ctx, sc, stopped)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// experimentReport is the experiment's report, recomputed from the stored
// data: as of now for a running experiment, or as of ?as_of.
func (s *Server) experimentReport(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	var opts experiment.AnalyzeOptions
	if v := c.Query("as_of"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return badRequest("as_of", "want an RFC 3339 time such as 2026-11-30T12:00:00Z")
		}
		opts.AsOf = t
	}
	if e.Started.IsZero() {
		return fiber.NewError(fiber.StatusConflict, "the experiment has not started: there is nothing to report yet")
	}
	rep, err := s.experiments().Report(c.UserContext(), e.ID, opts)
	if err != nil {
		return experimentStateError(err)
	}
	return c.JSON(rep)
}

// seriesPoint is the report at one time, reduced to what the charts draw.
type seriesPoint struct {
	AsOf        time.Time                       `json:"as_of"`
	Units       map[string]int                  `json:"units"`
	Primary     map[string]experiment.ArmMetric `json:"primary"`
	Comparisons []experiment.Comparison         `json:"comparisons"`
	Progress    float64                         `json:"progress"`
	Decision    experiment.Decision             `json:"decision"`
	Allowed     bool                            `json:"allowed"`
}

// experimentSeries recomputes the report at ?points evenly spaced times
// from the start to now (or the stop) from one load of the stored data,
// for the charts over time. Each point sees only what was known then.
func (s *Server) experimentSeries(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	points := 12
	if v := c.Query("points"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > maxSeriesPoints {
			return badRequest("points", fmt.Sprintf("want a number from 2 to %d", maxSeriesPoints))
		}
		points = n
	}
	if e.Started.IsZero() {
		return fiber.NewError(fiber.StatusConflict, "the experiment has not started: there is no series yet")
	}
	exp, data, err := s.experiments().Data(c.UserContext(), e.ID)
	if err != nil {
		return experimentStateError(err)
	}
	end := exp.Stopped
	if end.IsZero() {
		end = s.store.Now().UTC()
	}
	span := end.Sub(exp.Started)
	out := make([]seriesPoint, 0, points)
	for i := 1; i <= points; i++ {
		at := exp.Started.Add(span * time.Duration(i) / time.Duration(points))
		rep, err := experiment.Analyze(exp, data, experiment.AnalyzeOptions{AsOf: at, Resamples: seriesResamples})
		if err != nil {
			return err
		}
		p := seriesPoint{AsOf: at, Units: map[string]int{}, Primary: map[string]experiment.ArmMetric{},
			Comparisons: []experiment.Comparison{}, Progress: rep.Verdict.Progress, Decision: rep.Verdict.Decision, Allowed: rep.Verdict.Allowed}
		for _, a := range rep.Arms {
			p.Units[a.Arm] = a.Units
			if m, ok := a.Metric(exp.Primary); ok {
				p.Primary[a.Arm] = m
			}
		}
		for _, cmp := range rep.Comparisons {
			if cmp.Metric == exp.Primary {
				p.Comparisons = append(p.Comparisons, cmp)
			}
		}
		out = append(out, p)
	}
	return c.JSON(fiber.Map{"experiment": exp.ID, "primary_metric": exp.Primary, "points": out})
}

// shipExperiment ships the winning arm of a stopped experiment whose
// verdict is ship, through the gates every release passes: its harness
// version is published to the experiment's streams by the release handler
// (POST /api/releases, with the version's latest finished release gate),
// and its checkpoint becomes the organisation's serving model (what the
// Training page's promote sets; the console's model by name resets to
// it), gated on its finished evaluations of the live-room suites against
// the serving model's (planShip). Everything is checked before anything
// changes. {"override": "…"} ships despite a regression of either; the
// reason, the gate and who shipped are recorded in the experiment's
// history (GET /api/experiments/:id, "ships") and in the release.
func (s *Server) shipExperiment(c *fiber.Ctx) error {
	e, err := s.requestExperiment(c)
	if err != nil {
		return err
	}
	var req struct {
		Override string `json:"override"`
	}
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := decodeStrict(c.Body(), &req); err != nil {
			return badRequest("body", `want {} or {"override": "reason"}: `+err.Error())
		}
	}
	if len(req.Override) > 2000 {
		return badRequest("override", "at most 2000 characters")
	}
	req.Override = strings.TrimSpace(req.Override)
	ctx, sc := c.UserContext(), scopeOf(c)
	if e.State != experiment.StateStopped {
		return fiber.NewError(fiber.StatusConflict, "stop the experiment before shipping its winner: a running experiment's streams run their arms")
	}
	rep, err := s.experiments().Report(ctx, e.ID, experiment.AnalyzeOptions{})
	if err != nil {
		return experimentStateError(err)
	}
	if rep.Verdict.Decision != experiment.DecisionShip {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the experiment has no winner to ship (verdict %s): %s", rep.Verdict.Decision, rep.Verdict.Reason))
	}
	winner := e.Arms[e.ArmIndex(rep.Verdict.Winner)]
	if winner.HarnessVersion == "" && winner.Checkpoint == "" {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("the winner %q runs each stream's own harness version and the serving model: there is nothing to ship", winner.Name))
	}
	var streams []string
	if winner.HarnessVersion != "" {
		if streams, err = s.shipStreams(ctx, sc, e.ID); err != nil {
			return err
		}
	}
	plan, err := s.planShip(ctx, sc, e.ID, winner.Name, winner.HarnessVersion, winner.Checkpoint, req.Override, streams)
	if err != nil {
		return err
	}
	return s.runShip(c, plan)
}

// catalogItems lists the item ids of a stream's catalog document: what
// events may name, and what the model's item arguments are held to. A
// catalog that does not parse has none.
func catalogItems(raw json.RawMessage) []string {
	cat, err := parseStreamCatalog(raw, noCurrency)
	if err != nil {
		return nil
	}
	return productIDs(cat)
}

// productIDs lists a catalog's product ids in its order.
func productIDs(c *catalog.Catalog) []string {
	ids := make([]string, 0, len(c.Products))
	for _, p := range c.Products {
		ids = append(ids, p.ID)
	}
	return ids
}

// ingestEvents stores a batch of the stream's commerce events: each is
// accepted, a duplicate of one stored before (idempotent by event id
// within the stream) or rejected with the reason. An event's stream_id may be left out; it is
// the stream of the path.
func (s *Server) ingestEvents(c *fiber.Ctx, counter *prometheus.CounterVec) error {
	if len(c.Body()) > maxEventBody {
		return fieldError(fiber.StatusRequestEntityTooLarge, "body", fmt.Sprintf("over the %d-byte limit of one batch: send at most %d events at a time", maxEventBody, experiment.MaxBatch))
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	st, err := s.store.Stream(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	events, err := experiment.DecodeBatch(bytes.NewReader(c.Body()))
	switch {
	case errors.Is(err, experiment.ErrBatchTooLarge):
		return fieldError(fiber.StatusRequestEntityTooLarge, "events", err.Error())
	case err != nil:
		return badRequest("events", err.Error())
	case len(events) == 0:
		return badRequest("events", "the batch is empty")
	}
	known := map[string]bool{}
	ids := make([]string, len(events))
	for i := range events {
		ev := &events[i]
		if len(ev.ID) > maxEventID {
			return badRequest(fmt.Sprintf("events[%d].id", i), fmt.Sprintf("%d bytes, more than %d", len(ev.ID), maxEventID))
		}
		// Event ids are the shop's; stored under the stream, one shop's ids
		// can never collide with (or block) another's.
		ids[i] = ev.ID
		if ev.ID != "" {
			ev.ID = st.ID + "/" + ev.ID
		}
		if ev.Stream == "" {
			ev.Stream = st.ID
		}
		if ev.Stream != st.ID {
			return badRequest(fmt.Sprintf("events[%d].stream_id", i), fmt.Sprintf("%q is not this stream (%s): post each stream's events to its own URL", ev.Stream, st.ID))
		}
		if ev.Experiment != "" && !known[ev.Experiment] {
			if _, err := s.orgExperiment(ctx, sc, ev.Experiment); err != nil {
				return badRequest(fmt.Sprintf("events[%d].experiment_id", i), fmt.Sprintf("no experiment %q in your organisation", ev.Experiment))
			}
			known[ev.Experiment] = true
		}
	}
	res, err := s.experiments().Ingest(ctx, events, experiment.NewValidator(catalogItems(st.Catalog), eventClockSkew, s.store.Now))
	if err != nil {
		return err
	}
	for i := range res.Events {
		res.Events[i].ID = ids[res.Events[i].Index]
	}
	if counter != nil {
		counter.WithLabelValues(string(experiment.StatusAccepted)).Add(float64(res.Accepted))
		counter.WithLabelValues(string(experiment.StatusDuplicate)).Add(float64(res.Duplicates))
		counter.WithLabelValues(string(experiment.StatusRejected)).Add(float64(res.Rejected))
	}
	return c.JSON(res)
}
