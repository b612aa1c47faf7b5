package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// Harness runs "livehat harness validate|render|diff|augment".
func Harness(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing subcommand (validate, render, diff or augment)")
	}
	switch args[0] {
	case "validate":
		return harnessValidate(args[1:], stdout, stderr)
	case "render":
		return harnessRender(args[1:], stdout, stderr)
	case "diff":
		return harnessDiff(args[1:], stdout, stderr)
	case "augment":
		return harnessAugment(ctx, args[1:], stdin, stdout, stderr)
	}
	return usagef("unknown subcommand %q (want validate, render, diff or augment)", args[0])
}

func harnessValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harness validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat harness validate FILE...\n\nChecks each harness file and prints every problem with its line and field.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("validate: name at least one harness file")
	}
	failed := 0
	for _, path := range fs.Args() {
		h, err := harness.Load(path)
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

func harnessRender(args []string, stdout, stderr io.Writer) error {
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
		return usagef("render: name exactly one harness file")
	}
	h, err := harness.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	conv := harness.Conversation{Messages: []harness.Message{{Role: harness.RoleUser, Content: "How much is the serum today?"}}}
	if *convPath != "" {
		data, err := os.ReadFile(*convPath)
		if err != nil {
			return err
		}
		conv = harness.Conversation{}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&conv); err != nil {
			return fmt.Errorf("%s: %w", *convPath, err)
		}
	}
	p, err := harness.Render(h, conv, harness.RenderOptions{OmitToolsSection: *omitTools})
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

func harnessDiff(args []string, stdout, stderr io.Writer) error {
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
		return usagef("diff: name two harness files, OLD and NEW")
	}
	a, errA := harness.Load(fs.Arg(0))
	b, errB := harness.Load(fs.Arg(1))
	if err := errors.Join(errA, errB); err != nil {
		return err
	}
	changes := harness.Diff(a, b)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Old     string           `json:"old"`
			New     string           `json:"new"`
			Changes []harness.Change `json:"changes"`
		}{a.Version(), b.Version(), changes})
	}
	fmt.Fprintf(stdout, "%s (%s) → %s (%s)\n", fs.Arg(0), a.ShortVersion(), fs.Arg(1), b.ShortVersion())
	fmt.Fprint(stdout, harness.FormatDiff(changes))
	return nil
}

// augmentOutput is what "livehat harness augment" prints.
type augmentOutput struct {
	Harness json.RawMessage `json:"harness"`
	Mapping hsa.Mapping     `json:"mapping"`
	Record  hsa.Record      `json:"record"`
	// Gold holds the --gold calls mapped to the variant.
	Gold []hsa.Call `json:"gold,omitempty"`
}

// harnessAugment runs "livehat harness augment FILE --family NAME --seed N"
// (args are those after "augment"; flags may come before or after FILE).
// It prints the variant harness, its mapping and its HSA record as one
// indented JSON object. With --pool and no --family it draws --n families
// of the pool; --list prints the catalogue; --gold FILE maps a JSON array
// of gold calls ({"name", "arguments"}) and protects what they use. FILE
// "-" reads the harness from stdin.
func harnessAugment(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("harness augment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	family := fs.String("family", "", "apply the family `NAME` (see --list)")
	seed := fs.Int64("seed", 0, "seed `N`; the same seed gives the same variant")
	pool := fs.String("pool", "", "`POOL` (train or heldout): without --family, draw --n families from it")
	n := fs.Int("n", 3, "how many families to draw from --pool")
	list := fs.Bool("list", false, "list the families with their pool and description")
	goldPath := fs.String("gold", "", "JSON `file` with an array of gold calls to map and protect")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: livehat harness augment FILE --family NAME --seed N [--gold CALLS.json]\n"+
			"       livehat harness augment FILE --pool train|heldout [--n 3] --seed N\n"+
			"       livehat harness augment --list [--pool train|heldout]\n\n"+
			"Prints a task-preserving variant of the harness and the mapping of gold tool calls.")
		fs.PrintDefaults()
	}
	// A malformed flag stays an ordinary error (exit status 1), as it
	// always was for this command.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if *pool != "" && *pool != string(hsa.PoolTrain) && *pool != string(hsa.PoolHeldOut) && *pool != string(hsa.PoolOperator) {
		return usagef("augment: unknown pool %q (want train, heldout or operator)", *pool)
	}
	if *list {
		return printFamilies(stdout, hsa.Pool(*pool))
	}
	if len(files) != 1 {
		return usagef("augment: name exactly one harness file (got %d)", len(files))
	}
	if *family == "" && *pool == "" {
		return usagef("augment: give --family NAME (see --list) or --pool train|heldout")
	}
	var fam hsa.Family
	if *family != "" {
		var err error
		if fam, err = hsa.Lookup(*family); err != nil {
			return usagef("augment: %v", err)
		}
		if *pool != "" && fam.Pool != hsa.Pool(*pool) {
			return usagef("augment: family %s is in pool %s, not %s", fam.Name, fam.Pool, *pool)
		}
	}
	h, err := loadAugmentHarness(files[0], stdin)
	if err != nil {
		return err
	}
	var opts hsa.Options
	if *goldPath != "" {
		if opts.Gold, err = loadGold(*goldPath); err != nil {
			return err
		}
	}
	var out augmentOutput
	if *family != "" {
		variant, m, err := fam.Apply(h, *seed, opts)
		if err != nil {
			return fmt.Errorf("augment %s: family %s (seed %d): %w", files[0], fam.Name, *seed, err)
		}
		if err := harness.Validate(variant); err != nil {
			return fmt.Errorf("augment %s: family %s (seed %d) made an invalid harness: %w", files[0], fam.Name, *seed, err)
		}
		out.Mapping = m
		out.Record = hsa.Record{Seed: *seed, Transforms: []hsa.Transform{{Family: fam.Name, Pool: fam.Pool, Seed: *seed, Mapping: m}}}
		h = variant
	} else {
		variant, rec, err := hsa.Augment(h, hsa.Pool(*pool), *seed, *n, opts)
		if err != nil {
			return fmt.Errorf("augment %s: %w", files[0], err)
		}
		out.Mapping, out.Record = rec.Mapping(), rec
		h = variant
	}
	for _, c := range opts.Gold {
		mc, err := out.Mapping.Map(c)
		if err != nil {
			return fmt.Errorf("augment %s: gold call: %w", files[0], err)
		}
		out.Gold = append(out.Gold, mc)
	}
	if out.Harness, err = harness.Marshal(h); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// loadAugmentHarness reads the harness to augment from path, or from
// stdin when path is "-".
func loadAugmentHarness(path string, stdin io.Reader) (*harness.Harness, error) {
	if path != "-" {
		return harness.Load(path)
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("augment: read stdin: %w", err)
	}
	return harness.Parse(data, harness.FormatOf("", data))
}

// loadGold reads --gold: a JSON array of calls, each with a name.
func loadGold(path string) ([]hsa.Call, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("augment: gold calls: %w", err)
	}
	var calls []hsa.Call
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&calls); err != nil {
		return nil, fmt.Errorf("augment: gold calls %s: want a JSON array of {\"name\", \"arguments\"}: %w", path, err)
	}
	for i, c := range calls {
		if c.Name == "" {
			return nil, fmt.Errorf("augment: gold calls %s: call %d has no name", path, i)
		}
	}
	return calls, nil
}

// printFamilies prints the HSA catalogue, or one pool of it, as a table.
func printFamilies(w io.Writer, pool hsa.Pool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tPOOL\tDIMENSION\tDESCRIPTION")
	for _, f := range hsa.Families() {
		if pool != "" && f.Pool != pool {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Pool, f.Dimension, f.Description)
	}
	return tw.Flush()
}
