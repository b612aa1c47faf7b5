package eval

import (
	"context"
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

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/ifeval"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/opd"
)

// Config is what the eval command needs from the binary that wires it.
type Config struct {
	// Base is the harness the suites run under (the demo harness).
	Base *harness.Harness
	// PluginDirs are the Go plugin folders whose hooks the harness names.
	PluginDirs []string
	// CacheDir caches built plugins; empty means the default.
	CacheDir string
}

// Main runs "livehat eval". With --suite ifeval and --responses it scores
// existing responses (see trainer/ifeval); otherwise it runs the live-room
// suites through the runtime with the model named by --model.
func Main(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suites := fs.String("suite", "all", "suites to run: lsqa, hvqa, robust, strategy, transfer, miniif, ifeval, all, or a comma-separated list")
	modelArg := fs.String("model", examples.ModelName, "the model: bundled (the repository's compact model), expert (the scripted policy), host (the rule-based host), a checkpoint folder, or an OpenAI-compatible server URL")
	remoteModel := fs.String("remote-model", "", "model name to ask the remote server for")
	remoteTimeout := fs.Duration("remote-timeout", 0, "a served model: the longest wait for the server's answer to start, and between two pieces of it (0: 60s)")
	asJSON := fs.Bool("json", false, "print the report as JSON on standard output")
	limit := fs.Int("n", 0, "run only the first N items of each suite (0: all)")
	parallel := fs.Int("parallel", 2, "items run at once")
	out := fs.String("out", "", "write the JSON report (and per-item results) to this folder")
	responses := fs.String("responses", "", "IFEval: score these responses (official input_response_data layout)")
	suitesDir := fs.String("suites", "", "read suite files <name>.jsonl from this folder instead of the committed ones")
	bindCatalog := fs.Bool("bind-catalog", false, "hold the model's item arguments to the room's catalog ids, as live sessions do")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *responses != "" {
		return ifeval.EvalMain(ctx, args, nil, stdout, stderr)
	}
	names, err := suiteNames(*suites)
	if err != nil {
		return err
	}
	var m *Model
	switch {
	case *remoteTimeout < 0:
		return &harness.UsageError{Msg: fmt.Sprintf("--remote-timeout %v: want a positive duration, or 0 for 60s", *remoteTimeout)}
	case *remoteTimeout > 0 && (strings.HasPrefix(*modelArg, "http://") || strings.HasPrefix(*modelArg, "https://")):
		m, err = OpenServer(remote.Config{BaseURL: *modelArg, Model: *remoteModel, Timeout: *remoteTimeout, StreamIdleTimeout: *remoteTimeout})
	case *remoteTimeout > 0:
		return &harness.UsageError{Msg: "--remote-timeout: only a served model (--model http://…) has one"}
	default:
		m, err = OpenModel(*modelArg, *remoteModel)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	factory, generate := m.Factory, m.Generate
	quiet := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress func(done, total int)
	if !*asJSON {
		progress = progressPrinter(stderr)
	}
	// The hook plugins are built and loaded only for the live-room suites.
	var runner *Runner
	liveRoom := func() (*Runner, error) {
		if runner != nil {
			return runner, nil
		}
		sb, err := runtime.OpenSandbox(ctx, cfg.CacheDir, quiet)
		if err != nil {
			return nil, err
		}
		sb.SetTimeoutFloor(evalTimeoutFloor)
		for _, dir := range cfg.PluginDirs {
			if _, err := sb.LoadGoDir(ctx, dir); err != nil {
				sb.Close(context.Background())
				return nil, err
			}
		}
		runner = &Runner{Base: cfg.Base, Sandbox: sb, Model: factory, Parallel: *parallel, Logger: quiet, Progress: progress,
			BindCatalog: *bindCatalog}
		return runner, nil
	}
	defer func() {
		if runner != nil {
			runner.Sandbox.Close(context.Background())
		}
	}()
	var reports []*SuiteReport
	var extra []any
	var ifevalReports []ifeval.Report
	var miniIFReports []*MiniIFReport
	var notes []string
	for _, name := range names {
		if name == SuiteMiniIF {
			if generate == nil {
				notes = append(notes, "miniif: the expert policy only plays the live room; pass a checkpoint or a served model")
				continue
			}
			prompts, err := miniIFPrompts(*suitesDir)
			if err != nil {
				return err
			}
			if *limit > 0 && *limit < len(prompts) {
				prompts = prompts[:*limit]
			}
			rep, err := RunMiniIF(ctx, prompts, generate, *parallel, progress)
			if err != nil {
				return err
			}
			extra = append(extra, rep)
			miniIFReports = append(miniIFReports, rep)
			if *out != "" {
				if err := saveMiniIF(*out, rep); err != nil {
					return err
				}
			}
			continue
		}
		if name == SuiteIFEval {
			if generate == nil {
				notes = append(notes, "ifeval: the expert policy only plays the live room; pass a served model, or --suite ifeval --responses FILE")
				continue
			}
			dataDir, err := ifeval.DefaultDataDir(".")
			if err != nil {
				return err
			}
			rep, err := RunIFEval(ctx, dataDir, generate, *limit, *parallel, progress)
			if err != nil {
				return err
			}
			extra = append(extra, rep.Summary())
			ifevalReports = append(ifevalReports, rep)
			continue
		}
		var s *Suite
		if *suitesDir != "" {
			s, err = LoadSuite(name, filepath.Join(*suitesDir, name+".jsonl"))
		} else {
			s, err = OpenSuite(name)
		}
		if err != nil {
			return err
		}
		if *limit > 0 && *limit < len(s.Items) {
			s.Items = s.Items[:*limit]
		}
		r, err := liveRoom()
		if err != nil {
			return err
		}
		rep, err := r.Run(ctx, s)
		if rep != nil {
			reports = append(reports, rep)
		}
		if err != nil {
			writeReport(stdout, reports, extra, notes, *asJSON)
			return err
		}
	}
	if *out != "" {
		if err := saveReports(*out, reports); err != nil {
			return err
		}
	}
	if err := writeReport(stdout, reports, extra, notes, *asJSON); err != nil {
		return err
	}
	// Items lost to the server scored its safe line, not the model: the
	// report stands, and the exit status says it is not a measurement.
	failed, kinds := serverFailures(reports)
	var serverErr error
	if failed > 0 {
		serverErr = fmt.Errorf("eval: %d items failed on the model server (%s): their scores are the safe line's, not the model's", failed, kinds)
	}
	if *asJSON {
		return serverErr
	}
	for _, rep := range miniIFReports {
		fmt.Fprintln(stdout)
		if err := writeMiniIF(stdout, rep); err != nil {
			return err
		}
	}
	for _, rep := range ifevalReports {
		fmt.Fprintln(stdout)
		if err := ifeval.WriteTable(stdout, rep); err != nil {
			return err
		}
	}
	return serverErr
}

// remoteGenerator answers plain prompts with a served model: the prompt
// as the only user turn, greedy.
func remoteGenerator(client *remote.Client) Generator {
	zero := 0.0
	return func(ctx context.Context, prompt string, maxTokens int) (string, error) {
		resp, err := client.Complete(ctx, remote.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: prompt}}, Temperature: &zero, MaxTokens: maxTokens})
		if err != nil {
			return "", err
		}
		return resp.Message.Content, nil
	}
}

func suiteNames(arg string) ([]string, error) {
	all := []string{SuiteLSQA, SuiteHVQA, SuiteRobust, SuiteStrategy, SuiteTransfer, SuiteMiniIF, SuiteIFEval}
	if arg == "all" {
		return all, nil
	}
	var out []string
	for _, n := range strings.Split(arg, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(all, n) {
			return nil, &harness.UsageError{Msg: fmt.Sprintf("unknown suite %q (want %s or all)", n, strings.Join(all, ", "))}
		}
		out = append(out, n)
	}
	return out, nil
}

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

func writeReport(w io.Writer, reports []*SuiteReport, extra []any, notes []string, asJSON bool) error {
	if asJSON {
		suites := make([]any, 0, len(reports)+len(extra))
		for _, r := range reports {
			suites = append(suites, r)
		}
		suites = append(suites, extra...)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Suites []any    `json:"suites"`
			Notes  []string `json:"notes,omitempty"`
		}{suites, notes})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tscore\tn\t95% CI\taccuracy\teffectiveness\ttools\tskill\ttool-name\targs\tfacts\tunbacked on air\terrors\ttime")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t[%.1f, %.1f]\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d/%d\t%d\t%s\n", r.Name, r.Score, r.N, r.CI95[0], r.CI95[1],
			r.Accuracy, r.Effectiveness, r.ToolRationality, r.SkillSelection, r.ToolNames, r.CallArgs, r.Facts, r.OnAirUnbacked, r.OnAir,
			r.Errors, r.Took.Round(time.Millisecond))
	}
	tw.Flush()
	for _, r := range reports {
		fmt.Fprintf(w, "\n%s by category:\n", r.Name)
		cats := make([]string, 0, len(r.Categories))
		for c := range r.Categories {
			cats = append(cats, c)
		}
		slices.Sort(cats)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range cats {
			fmt.Fprintf(tw, "  %s\t%.1f\t(n=%d)\n", c, r.Categories[c].Score, r.Categories[c].N)
		}
		tw.Flush()
		for _, it := range r.Worst {
			fmt.Fprintf(w, "  worst %s (%s) score %.1f: %s\n", it.ID, it.Category, it.Grade.Score, strings.Join(it.Grade.Deductions, "; "))
		}
		if n, kinds := serverFailures([]*SuiteReport{r}); n > 0 {
			fmt.Fprintf(w, "  model server failures: %d items (%s)\n", n, kinds)
		}
		writeUnbacked(w, r)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "\nnote:", n)
	}
	return nil
}

// writeUnbacked lists a suite's unbacked statements on air: the count of
// replies by kind, then the worst items' statements.
func writeUnbacked(w io.Writer, r *SuiteReport) {
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

// miniIFPrompts reads Mini-IF from dir, or the committed suite.
func miniIFPrompts(dir string) ([]opd.Prompt, error) {
	if dir == "" {
		return OpenMiniIF()
	}
	f, err := os.Open(filepath.Join(dir, SuiteMiniIF+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	return ReadMiniIF(f)
}

// saveMiniIF writes the Mini-IF report and its replies into dir.
func saveMiniIF(dir string, rep *MiniIFReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, it := range rep.Items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, rep.Name+"-items.jsonl"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, rep.Name+".json"), data, 0o644)
}

func saveReports(dir string, reports []*SuiteReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range reports {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for _, it := range r.Items {
			if err := enc.Encode(it); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, r.Name+"-items.jsonl"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, r.Name+".json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
