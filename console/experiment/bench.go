package experiment

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	_ "github.com/mattn/go-sqlite3" // the bench keeps its experiment in SQLite, as the console does

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// BenchUsage is the command line of BenchMain.
const BenchUsage = "livehat bench experiment [--viewers N] [--seed N] [--arms no-coupon,demo] [--rooms N] [--analysis fixed_horizon|sequential] [--planned N] [--parallel N] [--plugins DIR] [--plugin-cache DIR] [--db FILE] [--json]"

// benchPresets are the harnesses an arm of the bench can run.
func benchPresets(demo *harness.Harness) (map[string]func() (*harness.Harness, error), []string) {
	return map[string]func() (*harness.Harness, error){
		"demo":      func() (*harness.Harness, error) { return demo, nil },
		"no-coupon": func() (*harness.Harness, error) { return WithoutCoupons(demo) },
	}, []string{"demo", "no-coupon"}
}

// BenchMain runs "livehat bench experiment": a simulated two-arm (or
// more) experiment in the live room, every viewer's question answered
// through the real runtime with the example plugins and the live room's
// expert policy, stored in SQLite and reported as an uplift table with
// intervals, the sample-ratio check and the verdict. The first arm is the
// control. Run it from the repository root (the example plugins are built
// from examples/plugins), or pass --plugins.
func BenchMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage:", BenchUsage)
		fs.PrintDefaults()
	}
	viewers := fs.Int("viewers", 4000, "simulated viewers; each asks one shopping question")
	seed := fs.Uint64("seed", 1, "seed of rooms, viewers and their choices")
	armsArg := fs.String("arms", "no-coupon,demo", "comma-separated harness presets, control first: demo, no-coupon (repeat one for an A/A test)")
	rooms := fs.Int("rooms", 8, "simulated live rooms (streams)")
	analysis := fs.String("analysis", string(AnalysisFixedHorizon), "peeking guard: fixed_horizon or sequential")
	planned := fs.Int("planned", 0, "planned units per arm (0: 90 % of an even split of --viewers)")
	parallel := fs.Int("parallel", 2, "turns run at once")
	pluginDir := fs.String("plugins", filepath.Join("examples", "plugins"), "folder of the example plugins")
	cacheDir := fs.String("plugin-cache", "", "cache of built plugins (default: the plugins package's cache folder)")
	dbPath := fs.String("db", "", "keep the experiment in this SQLite file (default: a temporary one)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &harness.UsageError{Msg: fmt.Sprintf("unexpected argument %q; usage: %s", fs.Arg(0), BenchUsage)}
	}
	if *viewers < 4 || *rooms < 1 || *parallel < 1 || *planned < 0 {
		return &harness.UsageError{Msg: "--viewers must be at least 4, --rooms and --parallel at least 1, --planned not negative"}
	}
	if a := Analysis(*analysis); a != AnalysisFixedHorizon && a != AnalysisSequential {
		return &harness.UsageError{Msg: fmt.Sprintf("--analysis %q: want fixed_horizon or sequential", *analysis)}
	}
	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		return fmt.Errorf("bench experiment: demo harness: %w", err)
	}
	presets, names := benchPresets(demo)
	var arms []SimArm
	list := strings.Split(*armsArg, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	for i, p := range list {
		build, ok := presets[p]
		if !ok {
			return &harness.UsageError{Msg: fmt.Sprintf("--arms: unknown preset %q (want %s)", p, strings.Join(names, ", "))}
		}
		h, err := build()
		if err != nil {
			return err
		}
		name := p
		if count := len(slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x != p })); count > 1 {
			name = fmt.Sprintf("%s-%c", p, 'a'+i) // an A/A test: the same harness twice
		}
		arms = append(arms, SimArm{Name: name, Harness: h})
	}
	if len(arms) < 2 {
		return &harness.UsageError{Msg: "--arms: name at least two presets, the control first"}
	}
	if *planned == 0 {
		*planned = *viewers * 9 / 10 / len(arms)
	}

	quiet := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sb, err := runtime.OpenSandbox(ctx, *cacheDir, quiet)
	if err != nil {
		return err
	}
	defer sb.Close(context.Background())
	sb.SetTimeoutFloor(5 * time.Second)
	for _, p := range examples.DemoPlugins() {
		if _, err := sb.LoadGoDir(ctx, filepath.Join(*pluginDir, p)); err != nil {
			return fmt.Errorf("bench experiment: the example plugins are built from %s (run from the repository root or pass --plugins): %w", *pluginDir, err)
		}
	}
	path := *dbPath
	if path == "" {
		dir, err := os.MkdirTemp("", "livehat-bench-experiment-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "experiment.db")
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range Migrations() {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("bench experiment: %s: %w (use a new --db file)", path, err)
		}
	}
	t0 := time.Now()
	res, err := Simulate(ctx, SimConfig{Store: NewStore(db, func() time.Time { return simStart }), Sandbox: sb, Arms: arms, Viewers: *viewers,
		Rooms: *rooms, Seed: *seed, Analysis: Analysis(*analysis), PlannedUnitsPerArm: *planned, Parallel: *parallel, Logger: quiet})
	if err != nil {
		return fmt.Errorf("bench experiment: %w", err)
	}
	took := time.Since(t0)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Scores  map[string]float64 `json:"answer_scores"`
			Events  BatchResult        `json:"ingestion"`
			Report  *Report            `json:"report"`
			Seconds float64            `json:"seconds"`
		}{res.Score, BatchResult{Accepted: res.Events.Accepted, Duplicates: res.Events.Duplicates, Rejected: res.Events.Rejected}, res.Report, took.Seconds()})
	}
	return WriteReport(stdout, res.Report, res.Score)
}

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
