// Package hsa implements Harness-State Augmentation (HSA), the data side
// of Harness-Aware Training: task-preserving transformations of a harness.
//
// A Family takes a harness and a seed and returns a variant harness and a
// Mapping that rewrites gold tool calls from the old harness to the new
// one (and back). Variants differ in what the model reads — skill and
// tool names, descriptions, rule wording, prompt layout, limits, hook
// conventions — but not in what a correct answer does, so a model trained
// on them learns to follow the harness it is given instead of memorising
// one. Every family is seeded (same seed, byte-identical variant) and
// never changes its input.
//
// The families cover five dimensions: skill identifiers, skill content,
// tool definitions, prompt structure and hooks. They are split into two
// pools that differ in kind, not only in seed:
//
//   - PoolTrain: natural and code-style renames drawn from the training
//     word bank, paraphrase through the zh/en phrase bank, reordering,
//     reformatting, masking, noise skills, distractor tools, added
//     optional parameters, markdown and plain layouts, training section
//     titles, limit jitter, tags and prose injection, retry changes and
//     simulated corrections.
//   - PoolHeldOut: what training never shows — opaque ids for skills and
//     for tools and parameters, renames from a disjoint held-out word bank,
//     arguments wrapped into an object or flattened out of one, the XML
//     layout with held-out titles, JSON injection, and held-out retry
//     wording. Evaluating on this pool is Harness-Variant QA.
package hsa

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness"
)

// Pool is a group of families: training variants or held-out variants.
type Pool string

// Pools.
const (
	PoolTrain   Pool = "train"
	PoolHeldOut Pool = "heldout"
)

// ErrNotApplicable is returned (wrapped) by a family that has nothing to
// change in the harness it was given, e.g. skill masking without
// unprotected skills.
var ErrNotApplicable = errors.New("hsa: family does not apply to this harness")

// Options tell a transform what the gold depends on.
type Options struct {
	// Skills and Tools name what the gold uses; they are never masked.
	Skills []string `json:"skills,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	// Gold lists gold calls; the skills they load and the tools they
	// call are protected as if listed in Skills and Tools.
	Gold []Call `json:"gold,omitempty"`
	// MinToolRounds is the number of tool rounds the gold needs; limit
	// jitter never sets the tool-round limit below it.
	MinToolRounds int `json:"min_tool_rounds,omitempty"`
}

// protectedSkills returns the skill ids the gold needs in h.
func (o Options) protectedSkills(h *harness.Harness) map[string]bool {
	out := map[string]bool{}
	for _, s := range o.Skills {
		out[s] = true
	}
	tool, param := h.LoadSkillToolName(), h.LoadSkillParamName()
	for _, c := range o.Gold {
		if id, ok := c.Arguments[param].(string); ok && c.Name == tool {
			out[id] = true
		}
	}
	return out
}

// through returns the options as they read after mapping m: renamed
// skills and tools keep their protection, gold calls are mapped.
func (o Options) through(m Mapping) (Options, error) {
	out := Options{MinToolRounds: o.MinToolRounds}
	for _, s := range o.Skills {
		for _, st := range m.Steps {
			if st.Op == OpRenameSkill && st.From == s {
				s = st.To
			}
		}
		out.Skills = append(out.Skills, s)
	}
	for _, t := range o.Tools {
		for _, st := range m.Steps {
			if st.Op == OpRenameTool && st.Tool == t {
				t = st.To
			}
		}
		out.Tools = append(out.Tools, t)
	}
	for _, c := range o.Gold {
		mc, err := m.Map(c)
		if err != nil {
			return Options{}, err
		}
		out.Gold = append(out.Gold, mc)
	}
	return out, nil
}

// Family is one kind of harness transformation.
type Family struct {
	// Name identifies the family, e.g. "tool-rename".
	Name string `json:"name"`
	// Pool is the pool the family belongs to.
	Pool Pool `json:"pool"`
	// Dimension is the part of the harness it varies: skill identifiers,
	// skill content, tool definitions, prompt structure or hooks.
	Dimension string `json:"dimension"`
	// Description says what the family changes.
	Description string `json:"description"`
	// Apply returns a variant of h and the mapping of gold labels. It
	// never modifies h, and the same seed gives the same variant.
	Apply func(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) `json:"-"`
}

// applyFunc is the type of Family.Apply, for the constructors of families
// that share code.
type applyFunc = func(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error)

// Dimensions of the harness that families vary.
const (
	DimSkillIDs     = "skill identifiers"
	DimSkillContent = "skill content"
	DimTools        = "tool definitions"
	DimPrompt       = "prompt structure"
	DimHooks        = "hooks"
)

// Families returns the catalogue: every family of both pools, training
// pool first, in a fixed order.
func Families() []Family {
	return []Family{
		{"skill-rename", PoolTrain, DimSkillIDs, "rename skill ids with coined words, or with training-bank synonyms, abbreviations and code styles (snake, camel, kebab, affixed)", skillRename},
		{"skill-reword", PoolTrain, DimSkillIDs, "reword skill descriptions through the phrase bank and description frames", skillReword},
		{"skill-noise", PoolTrain, DimSkillIDs, "add noise skills about topics that never apply to the stream", skillNoise},
		{"skill-mask", PoolTrain, DimSkillIDs, "drop skills the gold does not load", skillMask},
		{"skill-reorder", PoolTrain, DimSkillIDs, "shuffle the order of the skill listing", skillReorder},
		{"rule-paraphrase", PoolTrain, DimSkillContent, "paraphrase skill rules, instructions and prompt rules through the zh/en phrase bank", ruleParaphrase},
		{"rule-reorder", PoolTrain, DimSkillContent, "shuffle the rules inside each skill", ruleReorder},
		{"rule-reformat", PoolTrain, DimSkillContent, "write rule lists as bullets, numbered items or prose", ruleReformat},
		{"rule-mask", PoolTrain, DimSkillContent, "drop non-essential skill rules", ruleMask},
		{"tool-rename", PoolTrain, DimTools, "rename tools and parameters (nested included), the load-skill tool and its parameter, with training-bank synonyms or coined words in snake or camel case", toolRename(trainWords, false)},
		{"tool-reword", PoolTrain, DimTools, "reword tool and parameter descriptions through the phrase bank", toolReword},
		{"tool-reorder-params", PoolTrain, DimTools, "shuffle the order of parameters (nested included) and of required lists", toolReorderParams},
		{"tool-add-params", PoolTrain, DimTools, "add optional parameters the gold never sets", toolAddParams},
		{"tool-mask", PoolTrain, DimTools, "drop tools the gold does not call", toolMask},
		{"tool-distractors", PoolTrain, DimTools, "add look-alike distractor tools that do something else", toolDistractors},
		{"layout-reorder", PoolTrain, DimPrompt, "shuffle the prompt sections, the items inside them and the tool listing", layoutReorder},
		{"layout-style", PoolTrain, DimPrompt, "switch the layout between markdown and plain", layoutStyle},
		{"section-titles", PoolTrain, DimPrompt, "retitle sections from the training title bank (zh or en)", sectionRetitle(trainWords, "")},
		{"limit-jitter", PoolTrain, DimPrompt, "move reply-length and tool-round limits inside their legal ranges", limitJitter},
		{"inject-format", PoolTrain, DimHooks, "present hook-injected context as tags or prose, at another position, under another tag", injectFormat},
		{"retry-policy", PoolTrain, DimHooks, "move the retry budget inside its range and reword the retry feedback (training wording)", retryPolicy(trainWords)},
		{"correction", PoolTrain, DimHooks, "plan a hook-triggered correction: a first reply rejected with feedback, then the gold reply", correction},

		{"skill-rename-opaque", PoolHeldOut, DimSkillIDs, "rename skill ids to random opaque ids", skillRenameOpaque},
		{"rename-heldout-words", PoolHeldOut, DimSkillIDs, "rename skills, tools and parameters with the held-out word bank in kebab or Pascal case", renameHeldoutWords},
		{"tool-rename-opaque", PoolHeldOut, DimTools, "rename tools, parameters and the load-skill tool to random opaque ids", toolRename(heldoutWords, true)},
		{"tool-wrap-flatten", PoolHeldOut, DimTools, "wrap a tool's arguments into one object parameter, or flatten a required object parameter", toolWrapFlatten},
		{"layout-xml", PoolHeldOut, DimPrompt, "switch the layout to XML and retitle sections from the held-out title bank", sectionRetitle(heldoutWords, harness.StyleXML)},
		{"inject-json", PoolHeldOut, DimHooks, "present hook-injected context as JSON, at another position", injectJSON},
		{"retry-heldout", PoolHeldOut, DimHooks, "move the retry budget and reword the retry feedback with held-out wording", retryPolicy(heldoutWords)},

		{"operator-edit", PoolOperator, DimTools, "an operator's edit: every tool renamed and described anew in other words, arguments renamed through the argument map, the tool list reordered, the skills reworded", operatorEdit},
	}
}

// Lookup returns the family with the given name.
func Lookup(name string) (Family, error) {
	fams := Families()
	for _, f := range fams {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Name
	}
	return Family{}, fmt.Errorf("unknown HSA family %q (known: %s)", name, strings.Join(names, ", "))
}

// PoolFamilies returns the families of one pool.
func PoolFamilies(p Pool) ([]Family, error) {
	if p != PoolTrain && p != PoolHeldOut && p != PoolOperator {
		return nil, fmt.Errorf("unknown pool %q (want %s, %s or %s)", p, PoolTrain, PoolHeldOut, PoolOperator)
	}
	return slices.DeleteFunc(Families(), func(f Family) bool { return f.Pool != p }), nil
}

// Transform records one applied family in an augmentation.
type Transform struct {
	Family  string  `json:"family"`
	Pool    Pool    `json:"pool"`
	Seed    int64   `json:"seed"`
	Mapping Mapping `json:"mapping"`
}

// Record is the HSA provenance of a variant harness, stored with every
// trajectory made under it.
type Record struct {
	Seed       int64       `json:"seed"`
	Transforms []Transform `json:"transforms"`
}

// Mapping returns the composed mapping of all transforms, in order.
func (r Record) Mapping() Mapping {
	var m Mapping
	for _, t := range r.Transforms {
		m = m.Then(t.Mapping)
	}
	if m.Steps == nil {
		m.Steps = []Step{}
	}
	return m
}

// Augment draws up to n distinct families of pool at random and applies
// them in turn, each with its own seed drawn from seed. Families that do
// not apply to the harness at hand are skipped, so the record may hold
// fewer than n transforms; none at all is an error. The input must pass
// harness.Validate, and so does every variant.
func Augment(h *harness.Harness, pool Pool, seed int64, n int, opts Options) (*harness.Harness, Record, error) {
	fams, err := PoolFamilies(pool)
	if err != nil {
		return nil, Record{}, fmt.Errorf("augment: %w", err)
	}
	if n < 1 {
		return nil, Record{}, fmt.Errorf("augment: n is %d, want at least 1", n)
	}
	if err := harness.Validate(h); err != nil {
		return nil, Record{}, fmt.Errorf("augment: the input harness is invalid: %w", err)
	}
	rng := newRand(seed)
	perm := rng.Perm(len(fams))
	seeds := make([]int64, len(perm))
	for i := range seeds {
		seeds[i] = rng.Int64()
	}
	rec := Record{Seed: seed}
	cur := h
	apply := func(k int) error {
		f, fseed := fams[perm[k]], seeds[k]
		next, m, err := f.Apply(cur, fseed, opts)
		if errors.Is(err, ErrNotApplicable) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("augment: family %s (seed %d): %w", f.Name, fseed, err)
		}
		if err := harness.Validate(next); err != nil {
			return fmt.Errorf("augment: family %s (seed %d) produced an invalid harness: %w", f.Name, fseed, err)
		}
		if opts, err = opts.through(m); err != nil {
			return fmt.Errorf("augment: family %s (seed %d) cannot carry the gold: %w", f.Name, fseed, err)
		}
		rec.Transforms = append(rec.Transforms, Transform{Family: f.Name, Pool: f.Pool, Seed: fseed, Mapping: m})
		cur = next
		return nil
	}
	// A planned correction must see the final retry budget and feedback
	// wording, so it is applied after the other drawn families.
	var deferred []int
	for k := 0; k < len(perm) && len(rec.Transforms)+len(deferred) < n; k++ {
		if fams[perm[k]].Name == "correction" {
			deferred = append(deferred, k)
			continue
		}
		if err := apply(k); err != nil {
			return nil, Record{}, err
		}
	}
	for _, k := range deferred {
		if err := apply(k); err != nil {
			return nil, Record{}, err
		}
	}
	if len(rec.Transforms) == 0 {
		return nil, Record{}, fmt.Errorf("augment: no family of pool %s: %w", pool, ErrNotApplicable)
	}
	return cur, rec, nil
}

// newRand returns the generator every transform draws from: PCG seeded
// from seed alone, so a seed always gives the same variant.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x6873612d76617269)) // "hsa-vari"
}
