package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// UsageError is returned by the command functions when the command line
// itself is wrong (unknown subcommand, missing argument), as opposed to a
// harness that fails validation. It is the one usage-error type of every
// livehat command (harness, plugin, train, eval, bench …): livehat exits
// with status 2 on it. It lives here, the lowest package all of them
// import, until the commands have a package of their own.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// Main runs "livehat harness validate|render|diff". The augment subcommand
// lives in package hsa, which main wires next to this one.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &UsageError{Msg: "missing subcommand (validate, render, diff or augment)"}
	}
	switch args[0] {
	case "validate":
		return validateMain(args[1:], stdout, stderr)
	case "render":
		return renderMain(args[1:], stdout, stderr)
	case "diff":
		return diffMain(args[1:], stdout, stderr)
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want validate, render, diff or augment)", args[0])}
}

func validateMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harness validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat harness validate FILE...\n\nChecks each harness file and prints every problem with its line and field.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &UsageError{Msg: "validate: name at least one harness file"}
	}
	failed := 0
	for _, path := range fs.Args() {
		h, err := Load(path)
		if err != nil {
			failed++
			fmt.Fprintln(stdout, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok — %q version %s (%d skills, %d tools, %d hooks)\n",
			path, h.Name, h.ShortVersion(), len(h.Skills), len(h.Tools), len(h.Hooks))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d harness files are invalid", failed, fs.NArg())
	}
	return nil
}

func renderMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harness render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	convPath := fs.String("conversation", "", "JSON `file` with a Conversation (context, messages, injected)")
	asJSON := fs.Bool("json", false, "print the Prompt as JSON instead of ChatML-like text")
	omitTools := fs.Bool("omit-tools-section", false, "leave the tool listing out of the system prompt")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat harness render [flags] FILE\n\nPrints the prompt the model sees under this harness.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "render: name exactly one harness file"}
	}
	h, err := Load(fs.Arg(0))
	if err != nil {
		return err
	}
	conv := Conversation{Messages: []Message{{Role: RoleUser, Content: "How much is the serum today?"}}}
	if *convPath != "" {
		data, err := os.ReadFile(*convPath)
		if err != nil {
			return err
		}
		conv = Conversation{}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&conv); err != nil {
			return fmt.Errorf("%s: %w", *convPath, err)
		}
	}
	p, err := Render(h, conv, RenderOptions{OmitToolsSection: *omitTools})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	for _, m := range p.Messages {
		fmt.Fprintf(stdout, "<|im_start|>%s\n%s", m.Role, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(stdout, "\n<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Name, string(c.Arguments))
		}
		fmt.Fprint(stdout, "<|im_end|>\n")
	}
	return nil
}

func diffMain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harness diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat harness diff [--json] OLD NEW\n\nLists what changed between two harness versions.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &UsageError{Msg: "diff: name two harness files, OLD and NEW"}
	}
	a, errA := Load(fs.Arg(0))
	b, errB := Load(fs.Arg(1))
	if err := errors.Join(errA, errB); err != nil {
		return err
	}
	changes := Diff(a, b)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Old     string   `json:"old"`
			New     string   `json:"new"`
			Changes []Change `json:"changes"`
		}{a.Version(), b.Version(), changes})
	}
	fmt.Fprintf(stdout, "%s (%s) → %s (%s)\n", fs.Arg(0), a.ShortVersion(), fs.Arg(1), b.ShortVersion())
	fmt.Fprint(stdout, FormatDiff(changes))
	return nil
}
