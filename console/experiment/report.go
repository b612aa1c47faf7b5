package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteReport prints a report as text: the arms, the uplift table of
// every treatment against the control with 95 % intervals, the
// sample-ratio check and the verdict. scores, when given, adds each arm's
// mean answer score.
func WriteReport(w io.Writer, rep *Report, scores map[string]float64) error {
	e := rep.Experiment
	fmt.Fprintf(w, "experiment %s (%s): unit %s, primary %s, %s", e.ID, e.Name, e.Unit, e.Primary, e.Analysis)
	if e.PlannedUnitsPerArm > 0 {
		fmt.Fprintf(w, ", planned %d units per arm", e.PlannedUnitsPerArm)
	}
	fmt.Fprintf(w, ", attribution window %v\n\n", e.AttributionWindow)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "arm\tunits\tviewers\treplies")
	if scores != nil {
		fmt.Fprint(tw, "\tanswer score")
	}
	fmt.Fprintf(tw, "\titem views\tcoupons\tpurchases\tGMV (%s)\n", e.Currency)
	for _, a := range rep.Arms {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d", a.Arm, a.Units, a.Viewers, a.Replies)
		if scores != nil {
			fmt.Fprintf(tw, "\t%.3f", scores[a.Arm])
		}
		fmt.Fprintf(tw, "\t%d\t%d\t%d\t%.2f\n", a.Events[KindItemView], a.Events[KindCouponClaim], a.Events[KindPurchase], float64(a.GMVMinor)/100)
	}
	tw.Flush()
	for t := 1; t < len(e.Arms); t++ {
		fmt.Fprintf(w, "\n%s vs %s (difference and uplift of %s over %s, 95 %% intervals)\n", e.Arms[t].Name, e.Arms[0].Name, e.Arms[t].Name, e.Arms[0].Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "metric\t%s\t%s\tdiff\tinterval\tbasis\tuplift\tuplift interval\tWelch p\t\n", e.Arms[0].Name, e.Arms[t].Name)
		for _, c := range rep.Comparisons {
			if c.Treatment != e.Arms[t].Name {
				continue
			}
			ci, up := c.DiffCI, c.UpliftCI
			switch c.Basis {
			case BasisBootstrap:
				if c.BootstrapDiffCI != nil {
					ci = *c.BootstrapDiffCI
				}
				if c.BootstrapUpliftCI != nil {
					up = *c.BootstrapUpliftCI
				}
			case BasisCUPED:
				ci, up = c.CUPED.DiffCI, c.CUPED.UpliftCI
			case BasisSequential:
				ci = c.Sequential.DiffCI
			}
			mark := ""
			switch {
			case c.Better:
				mark = "better"
			case c.Worse:
				mark = "worse"
			}
			if c.Metric == e.Primary {
				mark += " (primary)"
			} else if slices.Contains(e.Guardrails, c.Metric) {
				mark += " (guardrail)"
			}
			upliftText, upCI := "n/a", "n/a"
			if c.UpliftDefined {
				upliftText, upCI = fmt.Sprintf("%+.1f%%", 100*c.Uplift), fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*up.Lo, 100*up.Hi)
			}
			p := fmt.Sprintf("%.2g", c.PValue)
			switch {
			case c.Metric == MetricLatencyP95:
				p = "n/a" // a percentile's bootstrap gives an interval, not a p-value
			case c.Sequential != nil:
				p = fmt.Sprintf("%.2g (always-valid %.2g)", c.PValue, c.Sequential.PValue)
			}
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%+.4g\t[%.4g, %.4g]\t%s\t%s\t%s\t%s\t%s\n", c.Metric, c.ControlValue, c.TreatmentValue, c.Diff,
				ci.Lo, ci.Hi, c.Basis, upliftText, upCI, p, strings.TrimSpace(mark))
		}
		tw.Flush()
	}
	srm := "ok"
	if rep.SRM.Mismatch {
		srm = "MISMATCH"
	}
	fmt.Fprintf(w, "\nsample ratio: observed %v, expected %.1f, chi-square %.3f (df %d), p = %.3g: %s\n", rep.SRM.Observed, rep.SRM.Expected, rep.SRM.ChiSquare, rep.SRM.DF, rep.SRM.PValue, srm)
	v := rep.Verdict
	verdict := string(v.Decision)
	if v.Winner != "" {
		verdict += " " + v.Winner
	}
	if !v.Allowed {
		verdict = "withheld"
	}
	fmt.Fprintf(w, "verdict: %s (%s analysis, %.0f %% of the planned sample): %s\n", verdict, v.Analysis, 100*v.Progress, v.Reason)
	for _, a := range v.GuardrailAlerts {
		fmt.Fprintln(w, "guardrail alert:", a)
	}
	x := rep.Excluded
	fmt.Fprintf(w, "events not credited: %d outside the attribution window, %d from unexposed viewers, %d outside the period, %d in another currency\n",
		x.NotAttributed, x.Unexposed, x.OutsidePeriod+x.BeforeExposure, x.OtherCurrency)
	return nil
}
