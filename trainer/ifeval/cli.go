package ifeval

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// DefaultDataDir returns ../shared/data/ifeval relative to the repository
// root (the first directory holding go.mod at or above start).
func DefaultDataDir(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("ifeval: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("ifeval: no go.mod at or above %s to locate ../shared/data/ifeval", start)
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data", "ifeval")
	if _, err := os.Stat(data); err != nil {
		return "", fmt.Errorf("ifeval: shared IFEval data not found: %w", err)
	}
	return data, nil
}

// Summary is the ifeval entry of `livehat eval --json`: the four
// accuracies in percent, with prompt-level strict as the headline score.
type Summary struct {
	Name         string  `json:"name"`
	Score        float64 `json:"score"`
	N            int     `json:"n"`
	PromptStrict float64 `json:"prompt_strict"`
	InstStrict   float64 `json:"inst_strict"`
	PromptLoose  float64 `json:"prompt_loose"`
	InstLoose    float64 `json:"inst_loose"`
}

// Summary returns the report's suite entry.
func (r Report) Summary() Summary {
	return Summary{
		Name:         "ifeval",
		Score:        r.PromptStrict.Percent(),
		N:            r.PromptStrict.Total,
		PromptStrict: r.PromptStrict.Percent(),
		InstStrict:   r.InstStrict.Percent(),
		PromptLoose:  r.PromptLoose.Percent(),
		InstLoose:    r.InstLoose.Percent(),
	}
}

// EvalMain runs `livehat eval --suite ifeval`: it scores an existing
// responses file (--responses FILE, official input_response_data layout)
// against the prompts (--prompts FILE, default the shared input_data.jsonl),
// prints the four accuracies and the per-category table (or, with --json,
// {"suites":[{"name":"ifeval",...}]}), and with --out DIR writes the
// official per-prompt verdict files. --data DIR overrides where the Punkt
// and langdetect models are read from; --letter-compat draws random letters
// for non-letter letter_frequency kwargs as most official revisions do.
func EvalMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval --suite ifeval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suite := fs.String("suite", "ifeval", "suite to run (only ifeval is handled here)")
	responsesPath := fs.String("responses", "", "responses `FILE` ({\"prompt\", \"response\"} per line, in prompt order); - reads standard input")
	promptsPath := fs.String("prompts", "", "prompts `FILE` (default ../shared/data/ifeval/input_data.jsonl from the repository root)")
	dataDir := fs.String("data", "", "`DIR` holding punkt-english.json and langdetect-profiles/ (default ../shared/data/ifeval)")
	outDir := fs.String("out", "", "write eval_results_strict.jsonl and eval_results_loose.jsonl to `DIR`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	letterCompat := fs.Bool("letter-compat", false, "replace non a-z letter_frequency letters by seeded random letters")
	if err := fs.Parse(args); err != nil {
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
		def, err := DefaultDataDir(".")
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
	prompts, err := LoadPrompts(*promptsPath)
	if err != nil {
		return err
	}
	var responses []Response
	if *responsesPath == "-" {
		responses, err = ReadResponses(stdin)
		if err != nil {
			err = fmt.Errorf("standard input: %w", err)
		}
	} else {
		responses, err = LoadResponses(*responsesPath)
	}
	if err != nil {
		return err
	}
	// Fail before loading the models when the files cannot be joined.
	if len(prompts) != len(responses) {
		return fmt.Errorf("ifeval: %d prompts but %d responses", len(prompts), len(responses))
	}
	ev, err := NewEvaluator(*dataDir, Options{RandomLetterCompat: *letterCompat})
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
		if err := WriteOfficialResults(*outDir, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		out := struct {
			Suites []Summary `json:"suites"`
		}{[]Summary{rep.Summary()}}
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("ifeval: %w", err)
		}
		return nil
	}
	return WriteTable(stdout, rep)
}

// WriteTable prints the four accuracies and the per-category breakdown.
func WriteTable(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "IFEval\t%d prompts\t%d instructions\n", rep.PromptStrict.Total, rep.InstStrict.Total)
	for _, row := range []struct {
		name string
		acc  Accuracy
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
