package hsa

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/livehat/livehat/harness"
)

// augmentOutput is what "livehat harness augment" prints.
type augmentOutput struct {
	Harness json.RawMessage `json:"harness"`
	Mapping Mapping         `json:"mapping"`
	Record  Record          `json:"record"`
	// Gold holds the --gold calls mapped to the variant.
	Gold []Call `json:"gold,omitempty"`
}

// AugmentMain runs "livehat harness augment FILE --family NAME --seed N"
// (args are those after "augment"; flags may come before or after FILE).
// It prints the variant harness, its mapping and its HSA record as one
// indented JSON object. With --pool and no --family it draws --n families
// of the pool; --list prints the catalogue; --gold FILE maps a JSON array
// of gold calls ({"name", "arguments"}) and protects what they use. FILE
// "-" reads the harness from stdin. Command-line mistakes are
// *harness.UsageError.
func AugmentMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
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
	if *pool != "" && *pool != string(PoolTrain) && *pool != string(PoolHeldOut) && *pool != string(PoolOperator) {
		return &harness.UsageError{Msg: fmt.Sprintf("augment: unknown pool %q (want train, heldout or operator)", *pool)}
	}
	if *list {
		return printFamilies(stdout, Pool(*pool))
	}
	if len(files) != 1 {
		return &harness.UsageError{Msg: fmt.Sprintf("augment: name exactly one harness file (got %d)", len(files))}
	}
	if *family == "" && *pool == "" {
		return &harness.UsageError{Msg: "augment: give --family NAME (see --list) or --pool train|heldout"}
	}
	var fam Family
	if *family != "" {
		var err error
		if fam, err = Lookup(*family); err != nil {
			return &harness.UsageError{Msg: "augment: " + err.Error()}
		}
		if *pool != "" && fam.Pool != Pool(*pool) {
			return &harness.UsageError{Msg: fmt.Sprintf("augment: family %s is in pool %s, not %s", fam.Name, fam.Pool, *pool)}
		}
	}
	h, err := loadHarness(files[0], stdin)
	if err != nil {
		return err
	}
	var opts Options
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
		out.Record = Record{Seed: *seed, Transforms: []Transform{{Family: fam.Name, Pool: fam.Pool, Seed: *seed, Mapping: m}}}
		h = variant
	} else {
		variant, rec, err := Augment(h, Pool(*pool), *seed, *n, opts)
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

func loadHarness(path string, stdin io.Reader) (*harness.Harness, error) {
	if path != "-" {
		return harness.Load(path)
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("augment: read stdin: %w", err)
	}
	return harness.Parse(data, harness.FormatOf("", data))
}

func loadGold(path string) ([]Call, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("augment: gold calls: %w", err)
	}
	var calls []Call
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

func printFamilies(w io.Writer, pool Pool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tPOOL\tDIMENSION\tDESCRIPTION")
	for _, f := range Families() {
		if pool != "" && f.Pool != pool {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Pool, f.Dimension, f.Description)
	}
	return tw.Flush()
}
