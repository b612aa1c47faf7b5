package hsa

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

const demoHarness = "../../examples/harness/demo.json"

// A variant keeps each tool's catalog arguments naming the argument that
// carries the item id in its mapped gold calls, its query arguments the
// one that carries the lookup's words, and its variant arguments the one
// that carries the size, whatever they were renamed to, and inside the
// object a wrap puts them in ("spec.item_id").
func TestCatalogArgsFollowTheirArgument(t *testing.T) {
	if _, err := os.Stat(demoHarness); err != nil {
		t.Skipf("no demo harness: %v", err)
	}
	h, err := harness.Load(demoHarness)
	if err != nil {
		t.Fatal(err)
	}
	var gold []Call
	for _, tool := range h.Tools {
		switch {
		case slices.Equal(tool.CatalogArgs, []string{"item_id"}):
			args := map[string]any{"item_id": "p-cream"}
			for _, v := range tool.VariantArgs {
				args[v] = "30ml"
			}
			gold = append(gold, Call{Name: tool.Name, Arguments: args})
		case slices.Equal(tool.QueryArgs, []string{"query"}):
			gold = append(gold, Call{Name: tool.Name, Arguments: map[string]any{"query": "p-cream"}})
		}
	}
	if len(gold) < 5 {
		t.Fatalf("the demo harness binds %d tools to the catalog, want the 4 item tools and the lookup", len(gold))
	}
	bound := func(tool harness.Tool) []string { return append(slices.Clone(tool.CatalogArgs), tool.QueryArgs...) }
	check := func(what string, nh *harness.Harness, m Mapping) {
		t.Helper()
		if err := harness.Validate(nh); err != nil {
			t.Fatalf("%s: invalid variant: %v", what, err)
		}
		for _, c := range gold {
			mc, err := m.Map(c)
			if err != nil {
				t.Fatalf("%s: map %v: %v", what, c, err)
			}
			tool, _ := nh.Tool(mc.Name)
			wrapped := wrappedTools(m)[mc.Name]
			args := bound(tool)
			switch {
			case len(args) != 1:
				t.Errorf("%s: %s lost its catalog or query argument (%v; steps %+v)", what, mc.Name, args, m.Steps)
			case wrapped && !strings.Contains(args[0], "."):
				t.Errorf("%s: %s was wrapped but binds %q at the top level", what, mc.Name, args[0])
			default:
				if v, _ := harness.ArgValue(mc.Arguments, args[0]); v != "p-cream" {
					t.Errorf("%s: %s binds %q but the item is in %v", what, mc.Name, args[0], mc.Arguments)
				}
			}
			variants := 0
			for _, v := range mc.Arguments {
				if inner, ok := v.(map[string]any); ok {
					for _, v := range inner {
						if v == "30ml" {
							variants++
						}
					}
				}
				if v == "30ml" {
					variants++
				}
			}
			if len(tool.VariantArgs) != variants {
				t.Errorf("%s: %s has variant arguments %v for %d variants in %v", what, mc.Name, tool.VariantArgs, variants, mc.Arguments)
			} else if variants == 1 {
				if v, _ := harness.ArgValue(mc.Arguments, tool.VariantArgs[0]); v != "30ml" {
					t.Errorf("%s: %s holds %q to variants but the variant is in %v", what, mc.Name, tool.VariantArgs[0], mc.Arguments)
				}
			}
		}
	}
	opts := Options{Gold: gold}
	renamed := 0
	for _, f := range Families() {
		for seed := range int64(6) {
			nh, m, err := f.Apply(h, seed, opts)
			if errors.Is(err, ErrNotApplicable) {
				continue
			}
			if err != nil {
				t.Fatalf("%s seed %d: %v", f.Name, seed, err)
			}
			check(f.Name, nh, m)
			for _, t := range nh.Tools {
				if args := bound(t); len(args) == 1 && args[0] != "item_id" && args[0] != "query" {
					renamed++
				}
			}
		}
	}
	for _, pool := range []Pool{PoolTrain, PoolHeldOut} {
		for seed := range int64(6) {
			nh, rec, err := Augment(h, pool, seed, 3, opts)
			if err != nil {
				t.Fatalf("augment %s seed %d: %v", pool, seed, err)
			}
			check("augment/"+string(pool), nh, rec.Mapping())
		}
	}
	if renamed == 0 {
		t.Error("no variant renamed a catalog argument; the test proves nothing about renames")
	}
}

// wrappedTools names, as the variant finally calls them, the tools whose
// arguments a wrap step moved into one object.
func wrappedTools(m Mapping) map[string]bool {
	w := map[string]bool{}
	for _, s := range m.Steps {
		switch {
		case s.Op == OpWrap:
			w[s.Tool] = true
		case s.Op == OpRenameTool && w[s.Tool]:
			w[s.To] = true
		}
	}
	return w
}
