package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/ifeval"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Eval is "livehat eval" on the demo harness with the example plugins of
// its hooks, built from the working tree (see evalOn).
func Eval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	base, dirs, err := demoWithHooks()
	if err != nil {
		return err
	}
	return evalOn(ctx, eval.Config{Base: base, PluginDirs: dirs}, args, stdin, stdout, stderr)
}

// evalOn is "livehat eval": the suites run on the live room cfg sets up
// (see eval.Evaluate) with the model named by --model, and their report is
// printed as tables or, with --json, as JSON. With --responses it scores
// existing IFEval responses instead (evalIFEvalResponses). Items lost to
// the model server score the safe line: the report stands, and the error
// says it is not a measurement.
func evalOn(ctx context.Context, cfg eval.Config, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if r, ok := flagValue(args, "responses"); ok && r != "" {
		return evalIFEvalResponses(ctx, args, stdin, stdout, stderr)
	}
	fs := newFlags("eval", "[--suite NAMES] [--model SPEC] [flags]", stderr)
	suites := fs.String("suite", "all", "suites to run: lsqa, hvqa, robust, strategy, transfer, miniif, ifeval, all, or a comma-separated list")
	modelArg := fs.String("model", examples.ModelName, "the model: bundled (the repository's compact model), expert (the scripted policy), host (the rule-based host), a checkpoint folder, or an OpenAI-compatible server URL")
	remoteModel := fs.String("remote-model", "", "model name to ask the remote server for")
	remoteTimeout := fs.Duration("remote-timeout", 0, "a served model: the longest wait for the server's answer to start, and between two pieces of it (0: 60s)")
	asJSON := fs.Bool("json", false, "print the report as JSON on standard output")
	limit := fs.Int("n", 0, "run only the first N items of each suite (0: all)")
	parallel := fs.Int("parallel", 2, "items run at once")
	out := fs.String("out", "", "write the JSON report (and per-item results) to this folder")
	fs.String("responses", "", "IFEval: score these responses (official input_response_data layout; see --suite ifeval --responses FILE -h)")
	suitesDir := fs.String("suites", "", "read suite files <name>.jsonl from this folder instead of the committed ones")
	bindCatalog := fs.Bool("bind-catalog", false, "hold the model's item arguments to the room's catalog ids, as live sessions do")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	names, err := suiteNames(*suites)
	if err != nil {
		return err
	}
	m, err := openEvalModel(*modelArg, *remoteModel, *remoteTimeout)
	if err != nil {
		return err
	}
	defer m.Close()
	o := eval.Options{Suites: names, Limit: *limit, Parallel: *parallel, SuitesDir: *suitesDir, BindCatalog: *bindCatalog, Out: *out,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if !*asJSON {
		o.Progress = progressPrinter(stderr)
	}
	res, err := eval.Evaluate(ctx, cfg, m, o)
	if err != nil {
		if res != nil {
			writeEvalReport(stdout, res, *asJSON)
		}
		return err
	}
	if err := writeEvalReport(stdout, res, *asJSON); err != nil {
		return err
	}
	var serverErr error
	if failed, kinds := res.ServerFailures(); failed > 0 {
		serverErr = fmt.Errorf("eval: %d items failed on the model server (%s): their scores are the safe line's, not the model's", failed, kinds)
	}
	if *asJSON {
		return serverErr
	}
	for _, rep := range res.MiniIF {
		fmt.Fprintln(stdout)
		if err := writeMiniIFTable(stdout, rep); err != nil {
			return err
		}
	}
	for _, rep := range res.IFEval {
		fmt.Fprintln(stdout)
		if err := writeIFEvalTable(stdout, rep); err != nil {
			return err
		}
	}
	return serverErr
}

// parseFlags parses a command line whose arguments after the first
// positional one are left to the command, as fs.Parse does; a malformed
// flag is a *UsageError and -h is flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usagef("%s: %v", fs.Name(), err)
}

// openEvalModel opens the --model spec; a served model's --remote-timeout
// bounds its waits.
func openEvalModel(spec, remoteModel string, timeout time.Duration) (*eval.Model, error) {
	served := strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://")
	var m *eval.Model
	var err error
	switch {
	case timeout < 0:
		return nil, usagef("--remote-timeout %v: want a positive duration, or 0 for 60s", timeout)
	case timeout > 0 && served:
		m, err = eval.OpenServer(remote.Config{BaseURL: spec, Model: remoteModel, Timeout: timeout, StreamIdleTimeout: timeout})
	case timeout > 0:
		return nil, usagef("--remote-timeout: only a served model (--model http://…) has one")
	default:
		m, err = eval.OpenModel(spec, remoteModel)
	}
	switch {
	case errors.Is(err, eval.ErrModelSpec) && served:
		return nil, usagef("--remote-model: name the model the server should answer with")
	case errors.Is(err, eval.ErrModelSpec):
		return nil, usagef("--model %q: want bundled, expert, host, an http(s) URL, or a checkpoint folder", spec)
	}
	return m, err
}

// suiteNames reads --suite: "all" or a comma-separated list.
func suiteNames(arg string) ([]string, error) {
	all := []string{eval.SuiteLSQA, eval.SuiteHVQA, eval.SuiteRobust, eval.SuiteStrategy, eval.SuiteTransfer, eval.SuiteMiniIF, eval.SuiteIFEval}
	if arg == "all" {
		return all, nil
	}
	var out []string
	for _, n := range strings.Split(arg, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(all, n) {
			return nil, usagef("unknown suite %q (want %s or all)", n, strings.Join(all, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// progressPrinter reports finished items on one line, at most five times a
// second.
func progressPrinter(w io.Writer) func(done, total int) {
	last := time.Time{}
	return func(done, total int) {
		if done == total || time.Since(last) > 200*time.Millisecond {
			fmt.Fprintf(w, "\r%d/%d items", done, total)
			if done == total {
				fmt.Fprintln(w)
			}
			last = time.Now()
		}
	}
}

// writeEvalReport prints the results: every suite's entry as JSON, or the
// live-room suites' table with their categories, worst items, server
// failures and unbacked statements, then the notes.
func writeEvalReport(w io.Writer, res *eval.Results, asJSON bool) error {
	if asJSON {
		suites := make([]any, 0, len(res.Reports)+len(res.Others))
		for _, r := range res.Reports {
			suites = append(suites, r)
		}
		suites = append(suites, res.Others...)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Suites []any    `json:"suites"`
			Notes  []string `json:"notes,omitempty"`
		}{suites, res.Notes})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tscore\tn\t95% CI\taccuracy\teffectiveness\ttools\tskill\ttool-name\targs\tfacts\tunbacked on air\trewritten (score)\terrors\ttime")
	for _, r := range res.Reports {
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t[%.1f, %.1f]\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d/%d\t%d (%.1f)\t%d\t%s\n", r.Name, r.Score, r.N, r.CI95[0], r.CI95[1],
			r.Accuracy, r.Effectiveness, r.ToolRationality, r.SkillSelection, r.ToolNames, r.CallArgs, r.Facts, r.OnAirUnbacked, r.OnAir,
			r.OnAirRewritten, r.RewrittenScore, r.Errors, r.Took.Round(time.Millisecond))
	}
	tw.Flush()
	for _, r := range res.Reports {
		fmt.Fprintf(w, "\n%s by category:\n", r.Name)
		writeCategories(w, r.Categories)
		for _, it := range r.Worst {
			fmt.Fprintf(w, "  worst %s (%s) score %.1f: %s\n", it.ID, it.Category, it.Grade.Score, strings.Join(it.Grade.Deductions, "; "))
		}
		if n, kinds := r.ServerFailures(); n > 0 {
			fmt.Fprintf(w, "  model server failures: %d items (%s)\n", n, kinds)
		}
		writeUnbacked(w, r)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "\nnote:", n)
	}
	return nil
}

// writeCategories prints a suite's score by category, sorted by name.
func writeCategories(w io.Writer, cats map[string]eval.Summary) error {
	names := make([]string, 0, len(cats))
	for c := range cats {
		names = append(names, c)
	}
	slices.Sort(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range names {
		fmt.Fprintf(tw, "  %s\t%.1f\t(n=%d)\n", c, cats[c].Score, cats[c].N)
	}
	return tw.Flush()
}

// writeUnbacked lists a suite's unbacked statements on air: the count of
// replies by kind, then the worst items' statements.
func writeUnbacked(w io.Writer, r *eval.SuiteReport) {
	if r.OnAirUnbacked == 0 {
		return
	}
	var kinds []string
	for _, k := range liveroom.UnbackedKinds() {
		if n := r.UnbackedKinds[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, "  unbacked on air: %d of %d replies; by kind: %s\n", r.OnAirUnbacked, r.OnAir, strings.Join(kinds, ", "))
	for _, it := range r.UnbackedItems {
		var said []string
		for _, u := range it.Grade.Unbacked {
			said = append(said, fmt.Sprintf("%s %q (%s)", u.Kind, u.Phrase, u.Why))
		}
		fmt.Fprintf(w, "  unbacked %s (%s) score %.1f: %s\n", it.ID, it.Category, it.Grade.Score, strings.Join(said, "; "))
	}
}

// writeMiniIFTable prints a Mini-IF report as a table.
func writeMiniIFTable(w io.Writer, r *eval.MiniIFReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tscore\tn\t95% CI\tinstructions\terrors\ttime")
	fmt.Fprintf(tw, "%s\t%.1f\t%d\t[%.1f, %.1f]\t%.1f\t%d\t%s\n", r.Name, r.Score, r.N, r.CI95[0], r.CI95[1], r.Instructions, r.Errors, r.Took.Round(time.Millisecond))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s by category:\n", r.Name)
	return writeCategories(w, r.Categories)
}

// evalIFEvalResponses is "livehat eval --suite ifeval --responses FILE": it
// scores an existing responses file (official input_response_data layout)
// against the prompts (--prompts FILE, default the shared
// input_data.jsonl), prints the four accuracies and the per-category table
// (or, with --json, {"suites":[{"name":"ifeval",...}]}), and with --out
// DIR writes the official per-prompt verdict files. --data DIR overrides
// where the Punkt and langdetect models are read from; --letter-compat
// draws random letters for non-letter letter_frequency kwargs as most
// official revisions do.
func evalIFEvalResponses(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("eval --suite ifeval", "--responses FILE [--prompts FILE] [--out DIR] [--json] [--data DIR] [--letter-compat]", stderr)
	suite := fs.String("suite", "ifeval", "suite to run (only ifeval is handled here)")
	responsesPath := fs.String("responses", "", "responses `FILE` ({\"prompt\", \"response\"} per line, in prompt order); - reads standard input")
	promptsPath := fs.String("prompts", "", "prompts `FILE` (default ../shared/data/ifeval/input_data.jsonl from the repository root)")
	dataDir := fs.String("data", "", "`DIR` holding punkt-english.json and langdetect-profiles/ (default ../shared/data/ifeval)")
	outDir := fs.String("out", "", "write eval_results_strict.jsonl and eval_results_loose.jsonl to `DIR`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	letterCompat := fs.Bool("letter-compat", false, "replace non a-z letter_frequency letters by seeded random letters")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ifeval: unexpected arguments %q", fs.Args())
	}
	if *suite != "ifeval" {
		return fmt.Errorf("ifeval: --suite %q is not ifeval", *suite)
	}
	if *responsesPath == "" {
		return errors.New("ifeval: --responses FILE is required")
	}
	if *dataDir == "" || *promptsPath == "" {
		def, err := ifeval.DefaultDataDir(".")
		if err != nil {
			return err
		}
		if *dataDir == "" {
			*dataDir = def
		}
		if *promptsPath == "" {
			*promptsPath = filepath.Join(def, "input_data.jsonl")
		}
	}
	prompts, err := ifeval.LoadPrompts(*promptsPath)
	if err != nil {
		return err
	}
	var responses []ifeval.Response
	if *responsesPath == "-" {
		responses, err = ifeval.ReadResponses(stdin)
		if err != nil {
			err = fmt.Errorf("standard input: %w", err)
		}
	} else {
		responses, err = ifeval.LoadResponses(*responsesPath)
	}
	if err != nil {
		return err
	}
	// Fail before loading the models when the files cannot be joined.
	if len(prompts) != len(responses) {
		return fmt.Errorf("ifeval: %d prompts but %d responses", len(prompts), len(responses))
	}
	ev, err := ifeval.NewEvaluator(*dataDir, ifeval.Options{RandomLetterCompat: *letterCompat})
	if err != nil {
		return err
	}
	rep, err := ev.Evaluate(ctx, prompts, responses)
	if err != nil {
		return err
	}
	if n := len(rep.PromptMismatches); n > 0 {
		fmt.Fprintf(stderr, "ifeval: warning: %d response lines carry a different prompt text than the prompt at the same position (keys %v); responses are joined by line order\n", n, rep.PromptMismatches)
	}
	if *outDir != "" {
		if err := ifeval.WriteOfficialResults(*outDir, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		out := struct {
			Suites []ifeval.Summary `json:"suites"`
		}{[]ifeval.Summary{rep.Summary()}}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return fmt.Errorf("ifeval: %w", err)
		}
		return nil
	}
	return writeIFEvalTable(stdout, rep)
}

// writeIFEvalTable prints the four IFEval accuracies and the per-category
// breakdown.
func writeIFEvalTable(w io.Writer, rep ifeval.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "IFEval\t%d prompts\t%d instructions\n", rep.PromptStrict.Total, rep.InstStrict.Total)
	for _, row := range []struct {
		name string
		acc  ifeval.Accuracy
	}{
		{"prompt-level strict", rep.PromptStrict},
		{"instruction-level strict", rep.InstStrict},
		{"prompt-level loose", rep.PromptLoose},
		{"instruction-level loose", rep.InstLoose},
	} {
		fmt.Fprintf(tw, "%s\t%6.2f%%\t(%d/%d)\n", row.name, row.acc.Percent(), row.acc.Correct, row.acc.Total)
	}
	fmt.Fprintf(tw, "\ncategory\tstrict\t\tloose\t\n")
	for _, c := range rep.Categories {
		fmt.Fprintf(tw, "%s\t%6.2f%%\t(%d/%d)\t%6.2f%%\t(%d/%d)\n", c.Name,
			c.Strict.Percent(), c.Strict.Correct, c.Strict.Total,
			c.Loose.Percent(), c.Loose.Correct, c.Loose.Total)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("ifeval: %w", err)
	}
	return nil
}
