package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/ifeval"
	"github.com/livehat/livehat/trainer/opd"
)

// Config is the live room the live-room suites run in: the harness and
// the plugins of its hooks.
type Config struct {
	// Base is the harness the suites run under (the demo harness).
	Base *harness.Harness
	// PluginDirs are the Go plugin folders whose hooks the harness names.
	PluginDirs []string
	// CacheDir caches built plugins; empty means the default.
	CacheDir string
}

// Options chooses what Evaluate runs and how.
type Options struct {
	// Suites are the suites to run, in order: SuiteLSQA, SuiteHVQA,
	// SuiteRobust, SuiteStrategy, SuiteTransfer, SuiteMiniIF, SuiteIFEval.
	Suites []string
	// Limit runs only the first Limit items of each suite (0: all).
	Limit int
	// Parallel is the number of items run at once.
	Parallel int
	// SuitesDir, when set, holds suite files <name>.jsonl read instead of
	// the committed ones.
	SuitesDir string
	// BindCatalog holds the model's item arguments to the room's catalog
	// ids, as live sessions do.
	BindCatalog bool
	// Out, when set, is the folder the JSON reports and the per-item
	// results are written to.
	Out string
	// Logger receives the warnings of the sandbox and the sessions.
	Logger *slog.Logger
	// Progress, when set, is told of the items finished in each suite.
	Progress func(done, total int)
}

// Results is what Evaluate measured.
type Results struct {
	// Reports are the live-room suites' reports, in the order run.
	Reports []*SuiteReport
	// Others are the reports of the other suites, in the order run:
	// a *MiniIFReport for Mini-IF, an ifeval.Summary for IFEval.
	Others []any
	// MiniIF and IFEval are those suites' full reports.
	MiniIF []*MiniIFReport
	IFEval []ifeval.Report
	// Notes name the suites the model cannot run, and why.
	Notes []string
}

// ServerFailures counts the items of the live-room suites that failed on
// the model server, and names their kinds ("unreachable 2, timeout 1").
// Their scores are the safe line's, not the model's.
func (r *Results) ServerFailures() (n int, kinds string) { return serverFailures(r.Reports) }

// ServerFailures counts the suite's items that failed on the model
// server, and names their kinds.
func (r *SuiteReport) ServerFailures() (n int, kinds string) {
	return serverFailures([]*SuiteReport{r})
}

// Evaluate runs the suites of o on the model m: the live-room suites
// through the runtime, under cfg.Base with the hooks of cfg.PluginDirs
// (built and loaded only when a live-room suite runs); Mini-IF and IFEval
// on m.Generate, or, for a model without one (the expert), a note. When a
// live-room suite stops part way, Evaluate returns the results so far
// with the error; with o.Out set, the reports are written there once
// every suite has run.
func Evaluate(ctx context.Context, cfg Config, m *Model, o Options) (*Results, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var runner *Runner
	liveRoom := func() (*Runner, error) {
		if runner != nil {
			return runner, nil
		}
		sb, err := runtime.OpenSandbox(ctx, cfg.CacheDir, logger)
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
		runner = &Runner{Base: cfg.Base, Sandbox: sb, Model: m.Factory, Parallel: o.Parallel, Logger: logger, Progress: o.Progress,
			BindCatalog: o.BindCatalog}
		return runner, nil
	}
	defer func() {
		if runner != nil {
			runner.Sandbox.Close(context.Background())
		}
	}()
	res := &Results{}
	for _, name := range o.Suites {
		switch name {
		case SuiteMiniIF:
			if m.Generate == nil {
				res.Notes = append(res.Notes, "miniif: the expert policy only plays the live room; pass a checkpoint or a served model")
				continue
			}
			rep, err := runMiniIFSuite(ctx, m.Generate, o)
			if err != nil {
				return nil, err
			}
			res.Others = append(res.Others, rep)
			res.MiniIF = append(res.MiniIF, rep)
			continue
		case SuiteIFEval:
			if m.Generate == nil {
				res.Notes = append(res.Notes, "ifeval: the expert policy only plays the live room; pass a served model, or --suite ifeval --responses FILE")
				continue
			}
			dataDir, err := ifeval.DefaultDataDir(".")
			if err != nil {
				return nil, err
			}
			rep, err := RunIFEval(ctx, dataDir, m.Generate, o.Limit, o.Parallel, o.Progress)
			if err != nil {
				return nil, err
			}
			res.Others = append(res.Others, rep.Summary())
			res.IFEval = append(res.IFEval, rep)
			continue
		}
		s, err := openSuite(name, o.SuitesDir)
		if err != nil {
			return nil, err
		}
		if o.Limit > 0 && o.Limit < len(s.Items) {
			s.Items = s.Items[:o.Limit]
		}
		r, err := liveRoom()
		if err != nil {
			return nil, err
		}
		rep, err := r.Run(ctx, s)
		if rep != nil {
			res.Reports = append(res.Reports, rep)
		}
		if err != nil {
			return res, err
		}
	}
	if o.Out != "" {
		if err := saveReports(o.Out, res.Reports); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// runMiniIFSuite runs Mini-IF (from o.SuitesDir or the committed suite)
// and writes its report to o.Out when set.
func runMiniIFSuite(ctx context.Context, gen Generator, o Options) (*MiniIFReport, error) {
	prompts, err := miniIFPrompts(o.SuitesDir)
	if err != nil {
		return nil, err
	}
	if o.Limit > 0 && o.Limit < len(prompts) {
		prompts = prompts[:o.Limit]
	}
	rep, err := RunMiniIF(ctx, prompts, gen, o.Parallel, o.Progress)
	if err != nil {
		return nil, err
	}
	if o.Out != "" {
		if err := saveMiniIF(o.Out, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// openSuite reads a live-room suite from dir, or the committed one.
func openSuite(name, dir string) (*Suite, error) {
	if dir != "" {
		return LoadSuite(name, filepath.Join(dir, name+".jsonl"))
	}
	return OpenSuite(name)
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
