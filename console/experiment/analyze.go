package experiment

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Data is everything an experiment's report is computed from; the store
// loads it, and the simulation and tests build it directly.
type Data struct {
	Exposures []Exposure
	Sessions  []StreamSession
	Turns     []TurnRecord
	// Events are commerce events from PrePeriod before the start to the
	// end; events of other experiments' tags are ignored.
	Events []Event
	// Covariates, when set, are the units' pre-period values of the
	// primary metric for CUPED; otherwise they are read from the events of
	// the experiment's pre-period (if PrePeriod is set).
	Covariates map[string]float64
}

// AnalyzeOptions tune a report.
type AnalyzeOptions struct {
	// AsOf is the end of a running experiment's data (open sessions run
	// to it); zero means the stop time, or the latest time in the data.
	AsOf time.Time
	// Resamples is the bootstrap's resample count; default 2000.
	Resamples int
	// Seed seeds the bootstrap; zero derives it from the experiment id, so
	// a report is reproducible from the stored data alone.
	Seed uint64
}

// Interval is a two-sided confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Excludes reports whether the interval excludes v.
func (i Interval) Excludes(v float64) bool { return v < i.Lo || v > i.Hi }

// ArmMetric is one metric's value for one arm.
type ArmMetric struct {
	Metric Metric  `json:"metric"`
	Value  float64 `json:"value"`
	// CI is the value's interval (delta method; for latency P95, none).
	CI Interval `json:"ci95"`
}

// ArmResult is what one arm saw and did.
type ArmResult struct {
	Arm         string            `json:"arm"`
	Units       int               `json:"units"`
	Viewers     int               `json:"viewers"`
	StreamHours float64           `json:"stream_hours"`
	Replies     int               `json:"replies"`
	Events      map[EventKind]int `json:"events"`
	// GMVMinor is the attributed purchase value in minor units.
	GMVMinor int64       `json:"gmv_minor"`
	Metrics  []ArmMetric `json:"metrics"`
}

// Metric returns the arm's value of m.
func (a ArmResult) Metric(m Metric) (ArmMetric, bool) {
	i := slices.IndexFunc(a.Metrics, func(x ArmMetric) bool { return x.Metric == m })
	if i < 0 {
		return ArmMetric{}, false
	}
	return a.Metrics[i], true
}

// Adjusted is a comparison after CUPED.
type Adjusted struct {
	Diff     float64  `json:"diff"`
	DiffCI   Interval `json:"diff_ci"`
	Uplift   float64  `json:"uplift"`
	UpliftCI Interval `json:"uplift_ci"`
	PValue   float64  `json:"p_value"`
	Theta    float64  `json:"theta"`
	// VarianceReduction is 1 − adjusted variance / raw variance.
	VarianceReduction float64 `json:"variance_reduction"`
}

// Sequential is the always-valid (mSPRT) reading of a comparison.
type Sequential struct {
	PValue float64  `json:"p_value"`
	DiffCI Interval `json:"diff_ci"`
	// Tau is the mixture's scale: the effect the test is tuned to.
	Tau float64 `json:"tau"`
}

// Basis names the interval a comparison's decision rests on.
type Basis string

// Bases of a decision.
const (
	BasisWelch      Basis = "welch"
	BasisCUPED      Basis = "cuped"
	BasisBootstrap  Basis = "bootstrap"
	BasisSequential Basis = "sequential"
)

// Comparison is a treatment arm against the control on one metric:
// treatment minus control, and the relative uplift treatment/control − 1.
type Comparison struct {
	Metric         Metric  `json:"metric"`
	Control        string  `json:"control"`
	Treatment      string  `json:"treatment"`
	ControlValue   float64 `json:"control_value"`
	TreatmentValue float64 `json:"treatment_value"`
	// Diff and its Welch interval, p-value and Welch–Satterthwaite degrees
	// of freedom. For latency P95 the interval is the bootstrap's and the
	// p-value is 1: a percentile's bootstrap gives no p-value.
	Diff   float64  `json:"diff"`
	DiffCI Interval `json:"diff_ci"`
	PValue float64  `json:"p_value"`
	DF     float64  `json:"df"`
	// UpliftDefined is false when the control's value is 0.
	UpliftDefined bool     `json:"uplift_defined"`
	Uplift        float64  `json:"uplift"`
	UpliftCI      Interval `json:"uplift_ci"`
	// Bootstrap intervals, for GMV metrics and latency P95.
	BootstrapDiffCI   *Interval `json:"bootstrap_diff_ci,omitempty"`
	BootstrapUpliftCI *Interval `json:"bootstrap_uplift_ci,omitempty"`
	// CUPED is present for the primary metric when covariates exist.
	CUPED *Adjusted `json:"cuped,omitempty"`
	// Sequential is present in sequential experiments.
	Sequential *Sequential `json:"sequential,omitempty"`
	// Basis is the interval Significant and Better are read from.
	Basis Basis `json:"basis"`
	// Significant: the basis interval excludes zero.
	Significant bool `json:"significant"`
	// Better: significant, in the metric's good direction.
	Better bool `json:"better"`
	// Worse: significant, in the metric's bad direction.
	Worse bool `json:"worse"`
}

// Decision is what the experiment says to do.
type Decision string

// Decisions.
const (
	// DecisionNone: the data may not be read as a decision yet.
	DecisionNone Decision = "none"
	// DecisionShip: a treatment beat the control on the primary metric
	// without breaking a guardrail.
	DecisionShip Decision = "ship"
	// DecisionKeepControl: no treatment is better, or the better one broke
	// a guardrail.
	DecisionKeepControl Decision = "keep_control"
)

// Verdict says whether a decision may be read from the report yet, and
// which.
type Verdict struct {
	Analysis Analysis `json:"analysis"`
	// Allowed is false while reading the report as a decision would be
	// peeking (or the split is broken).
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	// Progress is the smallest arm's units over the planned units per arm.
	Progress float64  `json:"progress"`
	Decision Decision `json:"decision"`
	// Winner is the arm to ship, when Decision is ship.
	Winner string `json:"winner,omitempty"`
	// GuardrailAlerts name each guardrail a treatment made significantly
	// worse.
	GuardrailAlerts []string `json:"guardrail_alerts,omitempty"`
}

// Exclusions count the events a report did not credit to any arm, by why.
type Exclusions struct {
	Duplicates      int `json:"duplicates"`
	OtherExperiment int `json:"other_experiment"`
	Unexposed       int `json:"unexposed"`
	OutsidePeriod   int `json:"outside_period"`
	BeforeExposure  int `json:"before_exposure"`
	NotAttributed   int `json:"not_attributed"`
	OtherCurrency   int `json:"other_currency"`
	PrePeriod       int `json:"pre_period"`
}

// Report is an experiment's per-arm metrics, comparisons, sample-ratio
// check and verdict.
type Report struct {
	Experiment  Experiment   `json:"experiment"`
	AsOf        time.Time    `json:"as_of"`
	Arms        []ArmResult  `json:"arms"`
	Comparisons []Comparison `json:"comparisons"`
	SRM         SRM          `json:"srm"`
	Verdict     Verdict      `json:"verdict"`
	Excluded    Exclusions   `json:"excluded"`
	Seed        uint64       `json:"bootstrap_seed"`
	Resamples   int          `json:"bootstrap_resamples"`
}

// Comparison returns the comparison of a treatment on a metric.
func (r *Report) Comparison(treatment string, m Metric) (Comparison, bool) {
	i := slices.IndexFunc(r.Comparisons, func(c Comparison) bool { return c.Treatment == treatment && c.Metric == m })
	if i < 0 {
		return Comparison{}, false
	}
	return r.Comparisons[i], true
}

// unitAcc accumulates one unit's numbers.
type unitAcc struct {
	arm       int
	first     time.Time
	viewers   map[string]bool
	streams   map[string]bool
	gmv       int64
	views     int
	buyers    map[string]bool
	claimers  map[string]bool
	replies   int
	violation int
	shed      int
	hours     float64
	pre       float64 // pre-period value of the primary metric
}

type attrKey struct {
	stream string
	arm    int
	item   string
}

// Analyze computes an experiment's report from its data. It is a pure
// function: the same data and options give the same report.
func Analyze(exp Experiment, data Data, opts AnalyzeOptions) (*Report, error) {
	a, err := newAnalysis(exp, data, opts)
	if err != nil {
		return nil, err
	}
	if err := a.exposeUnits(); err != nil {
		return nil, err
	}
	a.airHours()
	a.countTurns()
	a.creditEvents()
	s := a.sampleUnits()
	a.armResults(s)
	srm, err := CheckSRM(s.counts, a.weights())
	if err != nil {
		return nil, err
	}
	a.rep.SRM = srm
	a.compare(s)
	a.rep.Verdict = verdict(a.exp, a.rep, s.counts)
	return a.rep, nil
}

// analysis is one run of Analyze: the experiment and its data, the end
// of the period the report covers, the report being filled in, and what
// each phase leaves for the next.
type analysis struct {
	exp  Experiment
	data Data
	opts AnalyzeOptions
	end  time.Time
	rep  *Report

	// units are the exposed units by id; streamViewers the viewers
	// exposed on each stream (exposeUnits).
	units         map[string]*unitAcc
	streamViewers map[string]map[string]bool
	// latencies and replies are per arm; mentions index when each arm
	// named an item on a stream, sorted, for attribution (countTurns).
	latencies [][]float64
	replies   []int
	mentions  map[attrKey][]time.Time
	// events counts each arm's credited events by kind (creditEvents).
	events []map[EventKind]int
}

// newAnalysis validates the experiment, fills in the options' defaults
// and finds the end of the reported period: the as-of time, or the stop
// time when that is earlier.
func newAnalysis(exp Experiment, data Data, opts AnalyzeOptions) (*analysis, error) {
	exp = exp.withDefaults()
	if err := exp.Validate(); err != nil {
		return nil, err
	}
	if opts.Resamples <= 0 {
		opts.Resamples = 2000
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(hashUnit("bootstrap", exp.ID) * (1 << 53))
	}
	asOf := opts.AsOf
	if asOf.IsZero() {
		asOf = exp.Stopped
	}
	if asOf.IsZero() {
		asOf = latest(data)
	}
	end := asOf
	if !exp.Stopped.IsZero() && exp.Stopped.Before(end) {
		end = exp.Stopped
	}
	return &analysis{exp: exp, data: data, opts: opts, end: end,
		rep: &Report{Experiment: exp, AsOf: asOf, Seed: opts.Seed, Resamples: opts.Resamples}}, nil
}

// exposeUnits makes the units from the exposures up to the end: a unit's
// arm is its first exposure's.
func (a *analysis) exposeUnits() error {
	exp := a.exp
	a.units = map[string]*unitAcc{}
	a.streamViewers = map[string]map[string]bool{}
	exposures := slices.Clone(a.data.Exposures)
	sort.SliceStable(exposures, func(i, j int) bool { return exposures[i].Time.Before(exposures[j].Time) })
	for _, x := range exposures {
		if x.Time.After(a.end) {
			break // exposures are sorted; later units are not in this report
		}
		arm := exp.ArmIndex(x.Arm)
		if arm < 0 {
			return fmt.Errorf("experiment %q: exposure of unit %q to unknown arm %q", exp.ID, x.Unit, x.Arm)
		}
		u := a.units[x.Unit]
		if u == nil {
			u = &unitAcc{arm: arm, first: x.Time, viewers: map[string]bool{}, streams: map[string]bool{}, buyers: map[string]bool{}, claimers: map[string]bool{}}
			a.units[x.Unit] = u
		}
		u.streams[x.Stream] = true
		if x.Viewer != "" {
			u.viewers[x.Viewer] = true
			if a.streamViewers[x.Stream] == nil {
				a.streamViewers[x.Stream] = map[string]bool{}
			}
			a.streamViewers[x.Stream][x.Viewer] = true
		}
	}
	return nil
}

// airHours gives each unit its hours on air: each stream's, clipped to
// the experiment's period, whole to a stream unit and shared among the
// viewers exposed on it for viewer units.
func (a *analysis) airHours() {
	exp := a.exp
	hours := map[string]float64{}
	for _, s := range a.data.Sessions {
		from, to := s.Start, s.End
		if to.IsZero() || to.After(a.end) {
			to = a.end
		}
		if from.Before(exp.Started) {
			from = exp.Started
		}
		if to.After(from) {
			hours[s.Stream] += to.Sub(from).Hours()
		}
	}
	for _, u := range a.units {
		for st := range u.streams {
			switch exp.Unit {
			case UnitStream:
				u.hours += hours[st]
			default:
				if n := len(a.streamViewers[st]); n > 0 {
					u.hours += hours[st] / float64(n)
				}
			}
		}
	}
}

// countTurns reads the turns: latency per arm, guardrail counts per unit,
// and the attribution index.
func (a *analysis) countTurns() {
	exp := a.exp
	a.latencies = make([][]float64, len(exp.Arms))
	a.replies = make([]int, len(exp.Arms))
	a.mentions = map[attrKey][]time.Time{}
	for _, t := range a.data.Turns {
		arm := exp.ArmIndex(t.Arm)
		if arm < 0 || (t.Experiment != "" && t.Experiment != exp.ID) || !exp.Running(t.Time) || t.Time.After(a.end) {
			continue
		}
		a.latencies[arm] = append(a.latencies[arm], t.Latency.Seconds())
		a.replies[arm]++
		for _, it := range t.Items {
			k := attrKey{t.Stream, arm, it}
			a.mentions[k] = append(a.mentions[k], t.Time)
		}
		unit, err := exp.UnitID(t.Stream, t.Viewer)
		if err != nil {
			continue // a narration in a viewer-unit experiment belongs to no unit
		}
		if u := a.units[unit]; u != nil && u.arm == arm {
			u.replies++
			u.shed += t.Shed
			if t.Violation {
				u.violation++
			}
		}
	}
	for k := range a.mentions {
		slices.SortFunc(a.mentions[k], func(a, b time.Time) int { return a.Compare(b) })
	}
}

// attributed reports whether the arm named the event's item on its stream
// within the attribution window before it (always, without a window).
func (a *analysis) attributed(ev Event, arm int) bool {
	if a.exp.AttributionWindow == 0 {
		return true
	}
	ts := a.mentions[attrKey{ev.Stream, arm, ev.Item}]
	i := sort.Search(len(ts), func(i int) bool { return ts[i].After(ev.Time) }) // first mention after the event
	return i > 0 && ev.Time.Sub(ts[i-1]) <= a.exp.AttributionWindow
}

// creditEvents credits each commerce event to its unit's arm, or counts
// in the report why it was not; pre-period events make the units'
// covariates.
func (a *analysis) creditEvents() {
	exp, rep := a.exp, a.rep
	seen := map[string]bool{}
	a.events = make([]map[EventKind]int, len(exp.Arms))
	for i := range a.events {
		a.events[i] = map[EventKind]int{}
	}
	preFrom := exp.Started.Add(-exp.PrePeriod)
	for _, ev := range a.data.Events {
		if seen[ev.ID] {
			rep.Excluded.Duplicates++
			continue
		}
		seen[ev.ID] = true
		if ev.Experiment != "" && ev.Experiment != exp.ID {
			rep.Excluded.OtherExperiment++
			continue
		}
		unit, err := exp.UnitID(ev.Stream, ev.Viewer)
		u := a.units[unit]
		if err != nil || u == nil {
			rep.Excluded.Unexposed++
			continue
		}
		if ev.Time.Before(exp.Started) {
			if exp.PrePeriod > 0 && !ev.Time.Before(preFrom) && (ev.Kind != KindPurchase || ev.Currency == exp.Currency) {
				u.pre += primaryContribution(exp.Primary, ev, u)
			}
			rep.Excluded.PrePeriod++
			continue
		}
		switch {
		case ev.Time.After(a.end) || !ev.Time.Before(exp.Stopped) && !exp.Stopped.IsZero():
			rep.Excluded.OutsidePeriod++
			continue
		case ev.Time.Before(u.first):
			rep.Excluded.BeforeExposure++
			continue
		case !a.attributed(ev, u.arm):
			rep.Excluded.NotAttributed++
			continue
		case ev.Kind == KindPurchase && ev.Currency != exp.Currency:
			rep.Excluded.OtherCurrency++
			continue
		}
		a.events[u.arm][ev.Kind]++
		switch ev.Kind {
		case KindItemView:
			u.views++
		case KindPurchase:
			u.gmv += ev.AmountMinor
			u.buyers[ev.Viewer] = true
		case KindCouponClaim:
			u.claimers[ev.Viewer] = true
		}
	}
}

// armSamples are the per-arm totals and the samples of every ratio
// metric, one entry per unit in a fixed unit order.
type armSamples struct {
	samples     map[Metric][]sample
	counts      []int
	viewers     []int
	streamHours []float64
	gmv         []int64
}

// sampleUnits adds up the units per arm, in the order of their ids.
func (a *analysis) sampleUnits() armSamples {
	exp := a.exp
	ids := make([]string, 0, len(a.units))
	for id := range a.units {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	s := armSamples{samples: map[Metric][]sample{}, counts: make([]int, len(exp.Arms)), viewers: make([]int, len(exp.Arms)),
		streamHours: make([]float64, len(exp.Arms)), gmv: make([]int64, len(exp.Arms))}
	for _, m := range Metrics() {
		s.samples[m] = make([]sample, len(exp.Arms))
	}
	minor := math.Pow10(minorDigits(exp.Currency))
	for _, id := range ids {
		u := a.units[id]
		arm := u.arm
		s.counts[arm]++
		nv := float64(len(u.viewers))
		if exp.Unit == UnitViewer {
			nv = 1
		}
		s.viewers[arm] += len(u.viewers)
		s.streamHours[arm] += u.hours
		s.gmv[arm] += u.gmv
		cov := u.pre
		if a.data.Covariates != nil {
			cov = a.data.Covariates[id]
		}
		put := func(m Metric, num, den float64) {
			x := &s.samples[m][arm]
			x.num = append(x.num, num)
			x.den = append(x.den, den)
			x.cov = append(x.cov, cov)
		}
		g := float64(u.gmv) / minor
		put(MetricGMVPerViewer, g, nv)
		put(MetricGMVPerStreamHour, g, u.hours)
		put(MetricItemViewsPerViewer, float64(u.views), nv)
		put(MetricConversionRate, float64(len(u.buyers)), nv)
		put(MetricCouponUse, float64(len(u.claimers)), nv)
		put(MetricViolationsPer1000, 1000*float64(u.violation), float64(u.replies))
		put(MetricShedPer1000, 1000*float64(u.shed), float64(u.replies+u.shed))
	}
	return s
}

// armResults fills in each arm's totals and metrics with their intervals.
func (a *analysis) armResults(s armSamples) {
	exp := a.exp
	for i, arm := range exp.Arms {
		ar := ArmResult{Arm: arm.Name, Units: s.counts[i], Viewers: s.viewers[i], StreamHours: s.streamHours[i], Replies: a.replies[i],
			Events: a.events[i], GMVMinor: s.gmv[i]}
		for _, m := range Metrics() {
			if m == MetricLatencyP95 {
				v := 0.0
				if len(a.latencies[i]) > 0 {
					v = percentile(slices.Clone(a.latencies[i]), 0.95)
				}
				ar.Metrics = append(ar.Metrics, ArmMetric{Metric: m, Value: v, CI: Interval{v, v}})
				continue
			}
			est := ratioEstimate(s.samples[m][i])
			q := normalQuantile(1 - exp.Alpha/2)
			se := math.Sqrt(est.variance)
			if math.IsNaN(se) || math.IsInf(se, 0) {
				// An arm with no units yet has no spread to report; a NaN
				// would also make the report unencodable as JSON.
				se = 0
			}
			ar.Metrics = append(ar.Metrics, ArmMetric{Metric: m, Value: est.value, CI: Interval{est.value - q*se, est.value + q*se}})
		}
		a.rep.Arms = append(a.rep.Arms, ar)
	}
}

// weights are the arms' assignment weights.
func (a *analysis) weights() []float64 {
	w := make([]float64, len(a.exp.Arms))
	for i, arm := range a.exp.Arms {
		w[i] = arm.Weight
	}
	return w
}

// compare compares every treatment with the control on every metric;
// the primary metric is CUPED-adjusted when there are covariates.
func (a *analysis) compare(s armSamples) {
	exp, opts := a.exp, a.opts
	useCUPED := a.data.Covariates != nil || exp.PrePeriod > 0
	for t := 1; t < len(exp.Arms); t++ {
		for _, m := range Metrics() {
			c := Comparison{Metric: m, Control: exp.Arms[0].Name, Treatment: exp.Arms[t].Name, Basis: BasisWelch}
			seed := opts.Seed ^ uint64(t)<<32 ^ uint64(hashUnit(string(m), "")*(1<<31))
			if m == MetricLatencyP95 {
				compareQuantile(&c, a.latencies[0], a.latencies[t], exp.Alpha, opts.Resamples, seed)
			} else {
				compareRatio(&c, exp, s.samples[m][0], s.samples[m][t], m == exp.Primary && useCUPED, opts.Resamples, seed)
			}
			a.rep.Comparisons = append(a.rep.Comparisons, c)
		}
	}
}

// primaryContribution is what one pre-period event adds to a unit's
// covariate for the primary metric.
func primaryContribution(m Metric, ev Event, u *unitAcc) float64 {
	switch m {
	case MetricGMVPerViewer, MetricGMVPerStreamHour:
		if ev.Kind == KindPurchase {
			return float64(ev.AmountMinor)
		}
	case MetricItemViewsPerViewer:
		if ev.Kind == KindItemView {
			return 1
		}
	case MetricConversionRate:
		if ev.Kind == KindPurchase {
			return 1
		}
	case MetricCouponUse:
		if ev.Kind == KindCouponClaim {
			return 1
		}
	}
	return 0
}

// minorDigits is how many decimals a currency's minor unit has.
func minorDigits(currency string) int {
	switch currency {
	case "JPY", "KRW", "VND", "CLP", "ISK", "UGX":
		return 0
	case "BHD", "KWD", "OMR", "JOD", "TND", "IQD", "LYD":
		return 3
	}
	return 2
}

func latest(d Data) time.Time {
	var t time.Time
	up := func(x time.Time) {
		if x.After(t) {
			t = x
		}
	}
	for _, x := range d.Exposures {
		up(x.Time)
	}
	for _, s := range d.Sessions {
		up(s.Start)
		up(s.End)
	}
	for _, x := range d.Turns {
		up(x.Time)
	}
	for _, x := range d.Events {
		up(x.Time)
	}
	return t
}

// isGMV reports whether a metric is a heavy-tailed money metric, for
// which the bootstrap interval is the decision's basis.
func isGMV(m Metric) bool { return m == MetricGMVPerViewer || m == MetricGMVPerStreamHour }

func compareRatio(c *Comparison, exp Experiment, sc, st sample, cuped bool, resamples int, seed uint64) {
	ec, et := ratioEstimate(sc), ratioEstimate(st)
	c.ControlValue, c.TreatmentValue = ec.value, et.value
	if sc.n() < 2 || st.n() < 2 {
		c.PValue = 1
		return
	}
	w := welch(ec, et, exp.Alpha)
	c.Diff, c.DiffCI, c.PValue, c.DF = w.diff, Interval{w.lo, w.hi}, w.p, w.df
	c.UpliftDefined, c.Uplift, c.UpliftCI = w.upliftOK, w.uplift, Interval{w.upLo, w.upHi}
	basis := c.DiffCI
	diffForSeq, varForSeq := w.diff, ec.variance+et.variance
	if isGMV(c.Metric) {
		b := bootstrapRatio(sc, st, resamples, exp.Alpha, seed)
		if b.resamples > 0 {
			c.BootstrapDiffCI = &Interval{b.lo, b.hi}
			if b.upliftOK {
				c.BootstrapUpliftCI = &Interval{b.upLo, b.upHi}
			}
			basis, c.Basis = *c.BootstrapDiffCI, BasisBootstrap
		}
	}
	if cuped {
		if ac, at, theta, ok := cupedEstimates(sc, st); ok {
			aw := welch(ac, at, exp.Alpha)
			adj := &Adjusted{Diff: aw.diff, DiffCI: Interval{aw.lo, aw.hi}, PValue: aw.p, Theta: theta}
			if aw.upliftOK {
				adj.Uplift, adj.UpliftCI = aw.uplift, Interval{aw.upLo, aw.upHi}
			}
			if raw := ec.variance + et.variance; raw > 0 {
				adj.VarianceReduction = 1 - (ac.variance+at.variance)/raw
			}
			c.CUPED = adj
			basis, c.Basis = adj.DiffCI, BasisCUPED
			diffForSeq, varForSeq = aw.diff, ac.variance+at.variance
		}
	}
	if exp.Analysis == AnalysisSequential {
		tau := mixtureScale(exp, ec, et, varForSeq)
		p, lo, hi := msprt(diffForSeq, varForSeq, tau*tau, exp.Alpha)
		c.Sequential = &Sequential{PValue: p, DiffCI: Interval{lo, hi}, Tau: tau}
		basis, c.Basis = c.Sequential.DiffCI, BasisSequential
		if c.UpliftDefined {
			// The always-valid interval of the difference over the control.
			c.UpliftCI = Interval{lo / ec.value, hi / ec.value}
			if ec.value < 0 {
				c.UpliftCI = Interval{hi / ec.value, lo / ec.value}
			}
		}
	}
	c.Significant = basis.Excludes(0)
	up := basis.Lo > 0
	if lowerIsBetter(c.Metric) {
		up = basis.Hi < 0
	}
	c.Better = c.Significant && up
	c.Worse = c.Significant && !up
}

// mixtureScale is the mSPRT's τ: the effect the test is tuned to find.
// With a planned sample it is the effect the plan detects with 80 % power
// at level α, (z_{1−α/2} + z_{0.8}) times the standard error the
// difference will have at the planned size, from the arms' per-unit
// variances; without one, the planned relative effect MDE on the
// control's value; failing both, one current standard error. It depends
// on the data only through variances, not through the effect.
func mixtureScale(exp Experiment, c, t estimate, v float64) float64 {
	if n := float64(exp.PlannedUnitsPerArm); n > 0 {
		seAtPlan := math.Sqrt((c.variance*float64(c.n) + t.variance*float64(t.n)) / n)
		if tau := (normalQuantile(1-exp.Alpha/2) + normalQuantile(0.8)) * seAtPlan; tau > 0 {
			return tau
		}
	}
	if tau := exp.MDE * math.Abs(c.value); tau > 0 {
		return tau
	}
	return math.Sqrt(v)
}

func compareQuantile(c *Comparison, lc, lt []float64, alpha float64, resamples int, seed uint64) {
	c.Basis, c.PValue = BasisBootstrap, 1
	if len(lc) == 0 || len(lt) == 0 {
		return
	}
	c.ControlValue, c.TreatmentValue = percentile(slices.Clone(lc), 0.95), percentile(slices.Clone(lt), 0.95)
	c.Diff = c.TreatmentValue - c.ControlValue
	if len(lc) < 2 || len(lt) < 2 {
		return
	}
	// Latency percentiles need fewer resamples than GMV means to settle,
	// and each resample sorts every turn.
	lo, hi := bootstrapQuantileDiff(lc, lt, 0.95, min(resamples, 500), alpha, seed)
	c.DiffCI = Interval{lo, hi}
	c.BootstrapDiffCI = &Interval{lo, hi}
	if c.ControlValue != 0 {
		c.UpliftDefined = true
		c.Uplift = c.TreatmentValue/c.ControlValue - 1
		c.UpliftCI = Interval{lo / c.ControlValue, hi / c.ControlValue}
	}
	c.Significant = c.DiffCI.Excludes(0)
	c.Better = c.Significant && hi < 0
	c.Worse = c.Significant && lo > 0
}

// verdict decides whether the report may be read yet and what it says.
func verdict(exp Experiment, rep *Report, counts []int) Verdict {
	v := Verdict{Analysis: exp.Analysis, Decision: DecisionNone}
	// Guardrail alerts are raised even while the verdict is withheld: a
	// treatment that hurts viewers is stopped early, not read for a win.
	broken := map[string]bool{}
	for _, c := range rep.Comparisons {
		if slices.Contains(exp.Guardrails, c.Metric) && c.Worse {
			broken[c.Treatment] = true
			v.GuardrailAlerts = append(v.GuardrailAlerts, fmt.Sprintf("%s: %s is significantly worse than %s (%.4g vs %.4g)", c.Treatment, c.Metric, c.Control, c.TreatmentValue, c.ControlValue))
		}
	}
	smallest := slices.Min(counts)
	if exp.PlannedUnitsPerArm > 0 {
		v.Progress = float64(smallest) / float64(exp.PlannedUnitsPerArm)
	}
	switch {
	case smallest < 2:
		v.Reason = "not enough data: every arm needs at least two units"
		return v
	case rep.SRM.Mismatch:
		v.Reason = fmt.Sprintf("sample ratio mismatch (p = %.2g): the arms did not get the traffic the split promises; find the assignment or logging fault before reading any metric", rep.SRM.PValue)
		return v
	case exp.Analysis == AnalysisFixedHorizon && exp.PlannedUnitsPerArm == 0:
		v.Reason = "no planned sample size: a fixed-horizon test can only be read at a horizon set in advance (see PlanSampleSize)"
		return v
	case exp.Analysis == AnalysisFixedHorizon && smallest < exp.PlannedUnitsPerArm:
		v.Reason = fmt.Sprintf("peeking: %d of %d planned units in the smallest arm (%.0f %%); a fixed-horizon result read before the horizon overstates significance", smallest, exp.PlannedUnitsPerArm, 100*v.Progress)
		return v
	}
	v.Allowed = true
	bestUplift := math.Inf(-1)
	for _, c := range rep.Comparisons {
		if c.Metric != exp.Primary || !c.Better || broken[c.Treatment] {
			continue
		}
		if c.Diff > bestUplift {
			bestUplift, v.Winner = c.Diff, c.Treatment
		}
	}
	switch {
	case v.Winner != "":
		v.Decision = DecisionShip
		v.Reason = fmt.Sprintf("%s beats %s on %s with an interval that excludes zero, and no guardrail is broken", v.Winner, exp.Arms[0].Name, exp.Primary)
	case exp.Analysis == AnalysisSequential && exp.State != StateStopped:
		v.Decision = DecisionNone
		v.Reason = "no treatment is significantly better yet; the sequential test may keep running and be read at any time"
	default:
		v.Decision = DecisionKeepControl
		v.Reason = fmt.Sprintf("no treatment beats %s on %s without breaking a guardrail", exp.Arms[0].Name, exp.Primary)
	}
	return v
}
