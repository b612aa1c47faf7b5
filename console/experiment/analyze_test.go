package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// synthetic builds a viewer-unit experiment's data without the runtime:
// n viewers arrive one a second; a viewer of arm a buys with chance
// buy[a], a log-normal amount (median 100 yuan, heavy right tail), and
// views an item with chance 0.5. pre, when set, gives every viewer a
// pre-period purchase correlated with their spending.
func synthetic(seed uint64, n int, buy [2]float64, pre bool) (Experiment, Data) {
	exp := twoArms(fmt.Sprintf("synthetic-%d", seed), 1, 1)
	exp.Started = t0
	exp.State = StateRunning
	if pre {
		exp.PrePeriod = 24 * time.Hour
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	var d Data
	d.Sessions = []StreamSession{{ID: "s", Stream: "s1", Start: t0, End: t0.Add(time.Duration(n+600) * time.Second)}}
	for i := range n {
		v := fmt.Sprintf("v%d", i)
		at := t0.Add(time.Duration(i) * time.Second)
		arm, _ := exp.Assign(v)
		a := exp.ArmIndex(arm.Name)
		d.Exposures = append(d.Exposures, Exposure{Stream: "s1", Viewer: v, Unit: v, Arm: arm.Name, Time: at})
		taste := math.Exp(rng.NormFloat64()) // how much this viewer spends
		if pre {
			d.Events = append(d.Events, Event{ID: v + "-pre", Stream: "s1", Viewer: v, Item: "A", Kind: KindPurchase,
				AmountMinor: int64(10000 * taste), Currency: "CNY", Time: t0.Add(-time.Hour)})
		}
		if rng.Float64() < 0.5 {
			d.Events = append(d.Events, Event{ID: v + "-view", Stream: "s1", Viewer: v, Item: "A", Kind: KindItemView, Time: at.Add(time.Second)})
		}
		if rng.Float64() < buy[a] {
			amount := int64(10000 * taste * math.Exp(0.5*rng.NormFloat64()))
			d.Events = append(d.Events, Event{ID: v + "-buy", Stream: "s1", Viewer: v, Item: "A", Kind: KindPurchase,
				AmountMinor: amount, Currency: "CNY", Time: at.Add(2 * time.Second)})
		}
	}
	return exp, d
}

// TestAATestFalsePositiveRate runs 300 seeded A/A experiments (both arms
// buy at 20 %): Welch on conversion, the bootstrap on GMV and CUPED on
// GMV must each call a difference significant in at most α plus three
// binomial standard errors of the runs (0.05 + 3·√(0.05·0.95/300) =
// 0.088).
func TestAATestFalsePositiveRate(t *testing.T) {
	const runs = 300
	var conv, gmv, cuped int
	for seed := range uint64(runs) {
		exp, d := synthetic(seed+1, 400, [2]float64{0.2, 0.2}, seed%2 == 0)
		rep, err := Analyze(exp, d, AnalyzeOptions{Resamples: 1000})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := rep.Comparison("treatment", MetricConversionRate)
		g, _ := rep.Comparison("treatment", MetricGMVPerViewer)
		if c.Significant {
			conv++
		}
		if g.BootstrapDiffCI != nil && g.BootstrapDiffCI.Excludes(0) {
			gmv++
		}
		if g.CUPED != nil && g.CUPED.DiffCI.Excludes(0) {
			cuped++
		}
	}
	limit := int(runs * (0.05 + 3*math.Sqrt(0.05*0.95/runs)))
	t.Logf("significant A/A results in %d runs: conversion %d, GMV bootstrap %d, GMV CUPED %d (of %d)", runs, conv, gmv, cuped, runs/2)
	if conv > limit || gmv > limit || cuped > limit/2+5 {
		t.Errorf("A/A false positives: conversion %d, GMV %d of %d (limit %d); CUPED %d of %d", conv, gmv, runs, limit, cuped, runs/2)
	}
}

// TestPeekingWithSequentialTest looks at 200 A/A experiments eight times
// each as viewers arrive. Stopping at the first Welch p < 0.05 finds a
// "winner" far more often than 5 % — the reason a fixed-horizon report is
// withheld before its horizon — while the always-valid mSPRT stays under
// α however often it is read.
func TestPeekingWithSequentialTest(t *testing.T) {
	const runs, looks, n = 200, 8, 800
	var naive, seq int
	for seed := range uint64(runs) {
		exp, d := synthetic(1000+seed, n, [2]float64{0.3, 0.3}, false)
		exp.Primary = MetricConversionRate
		exp.Analysis = AnalysisSequential
		exp.PlannedUnitsPerArm = n / 2 // τ is the effect the plan detects
		naiveHit, seqHit := false, false
		for k := 1; k <= looks; k++ {
			asOf := t0.Add(time.Duration(k*n/looks) * time.Second)
			rep, err := Analyze(exp, d, AnalyzeOptions{AsOf: asOf, Resamples: 20})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := rep.Comparison("treatment", MetricConversionRate)
			naiveHit = naiveHit || c.PValue < 0.05
			seqHit = seqHit || c.Sequential.PValue < 0.05
		}
		if naiveHit {
			naive++
		}
		if seqHit {
			seq++
		}
	}
	t.Logf("A/A runs with a significant look: naive Welch %d, mSPRT %d (of %d)", naive, seq, runs)
	if limit := int(runs * (0.05 + 3*math.Sqrt(0.05*0.95/runs))); seq > limit {
		t.Errorf("mSPRT with %d looks: %d of %d A/A runs significant, want ≤ %d", looks, seq, runs, limit)
	}
	if naive <= int(0.08*runs) {
		t.Errorf("naive peeking found only %d of %d: the simulation no longer shows the peeking problem", naive, runs)
	}
}

// TestSyntheticEffectDetected: a real uplift (20 % → 26 % buyers) is
// found by every method, CUPED narrows the GMV interval, and the report
// ships the treatment.
func TestSyntheticEffectDetected(t *testing.T) {
	exp, d := synthetic(7, 4000, [2]float64{0.20, 0.26}, true)
	exp.PlannedUnitsPerArm = 1500
	rep, err := Analyze(exp, d, AnalyzeOptions{Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rep.Comparison("treatment", MetricConversionRate)
	g, _ := rep.Comparison("treatment", MetricGMVPerViewer)
	if !c.Better || c.DiffCI.Lo <= 0 {
		t.Errorf("conversion uplift not found: %+v", c)
	}
	if g.CUPED == nil || g.Basis != BasisCUPED || g.CUPED.VarianceReduction < 0.05 {
		t.Fatalf("CUPED not applied or useless: %+v", g.CUPED)
	}
	if w, cw := g.DiffCI.Hi-g.DiffCI.Lo, g.CUPED.DiffCI.Hi-g.CUPED.DiffCI.Lo; cw >= w {
		t.Errorf("CUPED interval %.3f is not narrower than Welch's %.3f", cw, w)
	}
	if rep.Verdict.Decision != DecisionShip || rep.Verdict.Winner != "treatment" {
		t.Errorf("verdict %+v", rep.Verdict)
	}
	again, _ := Analyze(exp, d, AnalyzeOptions{Resamples: 500})
	if g2, _ := again.Comparison("treatment", MetricGMVPerViewer); *g2.BootstrapDiffCI != *g.BootstrapDiffCI {
		t.Error("the bootstrap is not reproducible from the same data")
	}
}

// TestVerdictGuards: the verdict is withheld before the planned horizon,
// without a plan, and under a sample ratio mismatch; a broken guardrail
// keeps the control.
func TestVerdictGuards(t *testing.T) {
	exp, d := synthetic(11, 2000, [2]float64{0.2, 0.3}, false)
	check := func(name string, e Experiment, d Data, allowed bool, decision Decision, reason string) {
		t.Helper()
		rep, err := Analyze(e, d, AnalyzeOptions{Resamples: 200})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Errorf("%s: the report does not encode as JSON: %v", name, err)
		}
		v := rep.Verdict
		if v.Allowed != allowed || v.Decision != decision || !strings.Contains(v.Reason, reason) {
			t.Errorf("%s: verdict %+v, want allowed=%v %s with %q", name, v, allowed, decision, reason)
		}
	}
	check("no plan", exp, d, false, DecisionNone, "no planned sample size")
	early := exp
	early.PlannedUnitsPerArm = 5000
	check("before the horizon", early, d, false, DecisionNone, "peeking")
	done := exp
	done.PlannedUnitsPerArm = 900
	check("at the horizon", done, d, true, DecisionShip, "treatment beats control")

	skewed := d
	skewed.Exposures = append([]Exposure(nil), d.Exposures...)
	for i := range skewed.Exposures {
		if i%5 == 0 {
			skewed.Exposures[i].Arm = "control" // a logging bug that files some treatment viewers under control
		}
	}
	check("SRM", done, skewed, false, DecisionNone, "sample ratio mismatch")

	guarded := done
	guarded.Guardrails = []Metric{MetricViolationsPer1000}
	bad := d
	bad.Turns = nil
	for i, x := range d.Exposures {
		bad.Turns = append(bad.Turns, TurnRecord{ID: fmt.Sprint(i), Stream: x.Stream, Viewer: x.Viewer, Arm: x.Arm, Time: x.Time,
			Violation: x.Arm == "treatment" && i%4 == 0})
	}
	check("guardrail", guarded, bad, true, DecisionKeepControl, "without breaking a guardrail")
	early.Guardrails = guarded.Guardrails
	if rep, _ := Analyze(early, bad, AnalyzeOptions{Resamples: 50}); rep.Verdict.Allowed || len(rep.Verdict.GuardrailAlerts) != 1 {
		t.Errorf("a broken guardrail before the horizon: %+v, want a withheld verdict with one alert", rep.Verdict)
	}

	seq := exp
	seq.Analysis, seq.Primary, seq.MDE = AnalysisSequential, MetricConversionRate, 0.3
	seq.State = StateRunning
	check("sequential", seq, d, true, DecisionShip, "treatment beats")
}

// TestStreamUnitRatioMetrics: in a stream-unit experiment per-viewer
// metrics are ratios over streams. Control streams: 2 viewers with one
// purchase of 10 yuan, 3 viewers with one of 20 → 30/5 = 6 yuan per
// viewer and 2/5 conversion; stream-hours 1 + 2 → 10 yuan per hour.
func TestStreamUnitRatioMetrics(t *testing.T) {
	exp := Experiment{ID: "streams", Name: "streams", Unit: UnitStream, Arms: []Arm{{Name: "control", Weight: 1}, {Name: "treatment", Weight: 1}}}.withDefaults()
	exp.Started, exp.State = t0, StateRunning
	var ctl []string
	for i := 0; len(ctl) < 2; i++ {
		s := fmt.Sprintf("stream-%d", i)
		if a, _ := exp.Assign(s); a.Name == "control" {
			ctl = append(ctl, s)
		}
	}
	var d Data
	for k, s := range ctl {
		for v := range k + 2 {
			d.Exposures = append(d.Exposures, Exposure{Stream: s, Viewer: fmt.Sprintf("%s-v%d", s, v), Unit: s, Arm: "control", Time: t0})
		}
		d.Sessions = append(d.Sessions, StreamSession{ID: s, Stream: s, Start: t0, End: t0.Add(time.Duration(k+1) * time.Hour)})
		d.Events = append(d.Events, Event{ID: s + "-buy", Stream: s, Viewer: s + "-v0", Item: "A", Kind: KindPurchase,
			AmountMinor: int64(1000 * (k + 1)), Currency: "CNY", Time: t0.Add(time.Minute)})
	}
	d.Exposures = append(d.Exposures, Exposure{Stream: "t", Viewer: "tv", Unit: "t", Arm: "treatment", Time: t0})
	rep, err := Analyze(exp, d, AnalyzeOptions{AsOf: t0.Add(3 * time.Hour), Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	val := func(m Metric) float64 { x, _ := rep.Arms[0].Metric(m); return x.Value }
	near(t, "GMV per viewer", val(MetricGMVPerViewer), 6, 1e-12)
	near(t, "conversion", val(MetricConversionRate), 0.4, 1e-12)
	near(t, "GMV per stream-hour", val(MetricGMVPerStreamHour), 10, 1e-12)
	if rep.Arms[0].Units != 2 || rep.Arms[0].Viewers != 5 {
		t.Errorf("control units %d viewers %d, want 2 and 5", rep.Arms[0].Units, rep.Arms[0].Viewers)
	}
	if rep.Verdict.Allowed {
		t.Error("a verdict from one treatment stream")
	}
}

// TestReportWithAnEmptyArmIsJSON: an arm nobody was assigned to yet (one
// stream in a stream-unit experiment) reports zeros, not NaN intervals
// that JSON cannot carry.
func TestReportWithAnEmptyArmIsJSON(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Experiment{ID: "one-stream", Name: "one stream", Unit: UnitStream, Arms: []Arm{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}},
		PlannedUnitsPerArm: 1, State: StateRunning, Started: t0}
	d := Data{Exposures: []Exposure{{Stream: "s", Unit: "s", Arm: "a", Time: t0}},
		Events: []Event{{ID: "e", Stream: "s", Viewer: "v", Item: "i", Kind: KindPurchase, AmountMinor: 100, Currency: "CNY", Time: t0.Add(time.Minute)}}}
	rep, err := Analyze(e, d, AnalyzeOptions{AsOf: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("report with an empty arm: %v", err)
	}
	if rep.Verdict.Allowed {
		t.Errorf("verdict allowed with one unit: %+v", rep.Verdict)
	}
}
