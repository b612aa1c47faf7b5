// Package experiment runs online experiments (A/B tests) of harness
// versions and model checkpoints on commerce metrics: an experiment's arms,
// the stable assignment of streams or viewers to arms, the validated and
// idempotent ingestion of the shop's commerce events, per-arm metrics with
// an attribution window, the statistics that turn them into a decision
// (Welch intervals, a seeded bootstrap for heavy-tailed GMV, CUPED, a
// sample-ratio-mismatch check, a fixed horizon or an always-valid
// sequential test), the SQLite store that keeps all of it, and a
// simulation of the live room's viewers that exercises it end to end.
//
// The console builds its experiment pages on this package; the report is
// always recomputed from the stored assignments, turns and events, so the
// same data gives the same numbers.
package experiment

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Unit is what an experiment assigns to arms.
type Unit string

// Units of assignment.
const (
	// UnitStream assigns whole streams: every viewer of a stream sees the
	// stream's arm. Use it when the arms change what everyone hears.
	UnitStream Unit = "stream"
	// UnitViewer assigns viewers within a stream by a stable hash of the
	// viewer id, so a viewer keeps their arm across streams and restarts.
	UnitViewer Unit = "viewer"
)

// State is where an experiment is in its life.
type State string

// Experiment states. An experiment moves draft → running → stopped and
// never back: a stopped experiment's data is what its report is about.
const (
	StateDraft   State = "draft"
	StateRunning State = "running"
	StateStopped State = "stopped"
)

// Metric names a per-arm metric.
type Metric string

// Metrics the report computes for every arm. The first five are commerce
// metrics (higher is better); the last three are guardrails (lower is
// better).
const (
	// MetricGMVPerViewer is attributed purchase value per exposed viewer,
	// in the experiment's currency (major units).
	MetricGMVPerViewer Metric = "gmv_per_viewer"
	// MetricGMVPerStreamHour is attributed purchase value per hour on air.
	MetricGMVPerStreamHour Metric = "gmv_per_stream_hour"
	// MetricItemViewsPerViewer is attributed item-page views per viewer.
	MetricItemViewsPerViewer Metric = "item_views_per_viewer"
	// MetricConversionRate is the share of viewers with an attributed
	// purchase.
	MetricConversionRate Metric = "conversion_rate"
	// MetricCouponUse is the share of viewers who claimed a coupon.
	MetricCouponUse Metric = "coupon_use"
	// MetricLatencyP95 is the 95th percentile of turn latency, seconds.
	MetricLatencyP95 Metric = "latency_p95_s"
	// MetricViolationsPer1000 is compliance violations per 1,000 replies.
	MetricViolationsPer1000 Metric = "violations_per_1000_replies"
	// MetricShedPer1000 is viewer messages shed per 1,000 messages
	// (answered plus shed).
	MetricShedPer1000 Metric = "shed_per_1000_messages"
)

// Metrics lists every metric in report order.
func Metrics() []Metric {
	return []Metric{MetricGMVPerViewer, MetricGMVPerStreamHour, MetricItemViewsPerViewer, MetricConversionRate,
		MetricCouponUse, MetricLatencyP95, MetricViolationsPer1000, MetricShedPer1000}
}

// lowerIsBetter reports whether a smaller value of m is the better one.
func lowerIsBetter(m Metric) bool {
	return m == MetricLatencyP95 || m == MetricViolationsPer1000 || m == MetricShedPer1000
}

// Analysis is how an experiment guards against peeking.
type Analysis string

// Analyses.
const (
	// AnalysisFixedHorizon allows a verdict only once every arm has
	// reached the planned sample size (or the experiment was stopped
	// there): looking earlier and stopping on a significant result
	// inflates false positives.
	AnalysisFixedHorizon Analysis = "fixed_horizon"
	// AnalysisSequential uses an always-valid mixture SPRT (mSPRT): its
	// p-value and interval stay valid however often they are looked at,
	// so a verdict is allowed whenever it is significant.
	AnalysisSequential Analysis = "sequential"
)

// Arm is one variant under test: a harness version, a checkpoint, or both.
type Arm struct {
	// Name identifies the arm within the experiment ("control",
	// "no-coupon"). The first arm is the control the others are compared
	// with.
	Name string `json:"name"`
	// HarnessVersion is the content hash of the harness version the arm
	// runs (harness.Harness.Version); empty keeps the stream's own.
	HarnessVersion string `json:"harness_version,omitempty"`
	// Checkpoint names the model checkpoint the arm serves; empty keeps
	// the serving one.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Weight is the arm's share of traffic relative to the others' (1 and
	// 1 split evenly; 9 and 1 is a 10 % canary).
	Weight float64 `json:"weight"`
}

// Experiment is the definition and life of one online experiment.
type Experiment struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arms are the variants; Arms[0] is the control.
	Arms []Arm `json:"arms"`
	Unit Unit  `json:"unit"`
	// Primary is the metric the decision is made on.
	Primary Metric `json:"primary_metric"`
	// Guardrails are metrics that must not get significantly worse.
	Guardrails []Metric `json:"guardrails,omitempty"`
	// AttributionWindow is how long after a reply that mentions an item an
	// event on that item is credited to the reply's arm. Zero credits
	// every event of an assigned unit while the experiment runs.
	AttributionWindow time.Duration `json:"attribution_window_ns"`
	// PrePeriod, when set, is how far before the start the store reads the
	// units' events as CUPED covariates.
	PrePeriod time.Duration `json:"pre_period_ns,omitempty"`
	// Currency is the ISO 4217 code GMV is summed in; purchases in other
	// currencies are counted apart and not summed.
	Currency string `json:"currency"`
	// PlannedUnitsPerArm is the sample size the power calculation asked
	// for (see PlanSampleSize); the fixed-horizon analysis waits for it.
	PlannedUnitsPerArm int      `json:"planned_units_per_arm"`
	Analysis           Analysis `json:"analysis"`
	// Alpha is the two-sided significance level; default 0.05.
	Alpha float64 `json:"alpha"`
	// MDE is the relative effect the plan is powered for (0.05 = 5 %); the
	// sequential test uses it as its mixture's scale.
	MDE float64 `json:"mde"`

	State   State     `json:"state"`
	Created time.Time `json:"created"`
	Started time.Time `json:"started,omitzero"`
	Stopped time.Time `json:"stopped,omitzero"`
}

// Defaults used when an experiment leaves a field zero.
const (
	defaultAlpha    = 0.05
	defaultMDE      = 0.05
	defaultCurrency = "CNY"
)

var (
	armNamePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// withDefaults fills the zero fields that have defaults.
func (e Experiment) withDefaults() Experiment {
	if e.Alpha == 0 {
		e.Alpha = defaultAlpha
	}
	if e.MDE == 0 {
		e.MDE = defaultMDE
	}
	if e.Currency == "" {
		e.Currency = defaultCurrency
	}
	if e.Analysis == "" {
		e.Analysis = AnalysisFixedHorizon
	}
	if e.Primary == "" {
		e.Primary = MetricGMVPerViewer
	}
	if e.State == "" {
		e.State = StateDraft
	}
	return e
}

// Validate checks an experiment's definition and names every problem.
func (e Experiment) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if e.ID == "" {
		bad("id", "is empty")
	}
	if e.Name == "" {
		bad("name", "is empty")
	}
	if len(e.Arms) < 2 {
		bad("arms", "has %d arm(s); an experiment compares at least a control and one treatment", len(e.Arms))
	}
	seen := map[string]int{}
	for i, a := range e.Arms {
		p := fmt.Sprintf("arms[%d]", i)
		if !armNamePattern.MatchString(a.Name) {
			bad(p+".name", "%q must be 1–64 letters, digits, '_', '.' or '-'", a.Name)
		}
		if j, dup := seen[a.Name]; dup {
			bad(p+".name", "duplicate arm %q (first is arms[%d])", a.Name, j)
		}
		seen[a.Name] = i
		if !(a.Weight > 0) || a.Weight > 1e6 {
			bad(p+".weight", "%v must be a positive traffic weight", a.Weight)
		}
	}
	switch e.Unit {
	case UnitStream, UnitViewer:
	default:
		bad("unit", "%q (want stream or viewer)", e.Unit)
	}
	if !slices.Contains(Metrics(), e.Primary) {
		bad("primary_metric", "unknown metric %q", e.Primary)
	}
	for i, g := range e.Guardrails {
		if !slices.Contains(Metrics(), g) {
			bad(fmt.Sprintf("guardrails[%d]", i), "unknown metric %q", g)
		}
	}
	if e.AttributionWindow < 0 {
		bad("attribution_window", "%v is negative", e.AttributionWindow)
	}
	if e.PrePeriod < 0 {
		bad("pre_period", "%v is negative", e.PrePeriod)
	}
	if !currencyPattern.MatchString(e.Currency) {
		bad("currency", "%q is not an ISO 4217 code such as CNY", e.Currency)
	}
	if e.PlannedUnitsPerArm < 0 {
		bad("planned_units_per_arm", "%d is negative", e.PlannedUnitsPerArm)
	}
	switch e.Analysis {
	case AnalysisFixedHorizon, AnalysisSequential:
	default:
		bad("analysis", "%q (want fixed_horizon or sequential)", e.Analysis)
	}
	if !(e.Alpha > 0 && e.Alpha < 0.5) {
		bad("alpha", "%v must be in (0, 0.5)", e.Alpha)
	}
	if !(e.MDE > 0) {
		bad("mde", "%v must be positive", e.MDE)
	}
	switch e.State {
	case StateDraft, StateRunning, StateStopped:
	default:
		bad("state", "%q (want draft, running or stopped)", e.State)
	}
	if len(errs) > 0 {
		return fmt.Errorf("experiment %q: %w", e.ID, errors.Join(errs...))
	}
	return nil
}

// ArmIndex returns the position of the named arm, or -1.
func (e Experiment) ArmIndex(name string) int {
	return slices.IndexFunc(e.Arms, func(a Arm) bool { return a.Name == name })
}

// Running reports whether the experiment counts data at time t: it has
// started, and has not stopped by t.
func (e Experiment) Running(t time.Time) bool {
	if e.State == StateDraft || e.Started.IsZero() || t.Before(e.Started) {
		return false
	}
	return e.Stopped.IsZero() || t.Before(e.Stopped)
}
