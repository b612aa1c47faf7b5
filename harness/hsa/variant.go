package hsa

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness"
)

// variant is a transform in progress: a private copy of the harness, the
// generator and the steps recorded so far.
type variant struct {
	h     *harness.Harness
	rng   *rand.Rand
	opts  Options
	steps []Step
}

func newVariant(h *harness.Harness, seed int64, opts Options) *variant {
	return &variant{h: h.Clone(), rng: newRand(seed), opts: opts}
}

func (v *variant) record(s Step) {
	v.steps = append(v.steps, s)
	v.followCatalogArgs(s)
	v.followArgumentMap(s)
}

// followCatalogArgs keeps a tool's catalog, query and variant arguments
// naming the same arguments after a step reshapes them: a renamed argument
// is renamed there too, a wrap puts them inside the new object
// ("spec.item_id") and a flatten lifts them out of it, so a runtime that
// knows the catalog still holds them.
func (v *variant) followCatalogArgs(s Step) {
	if s.Op != OpRenameParam && s.Op != OpWrap && s.Op != OpFlatten {
		return
	}
	for i := range v.h.Tools {
		t := &v.h.Tools[i]
		if t.Name != s.Tool {
			continue
		}
		for _, args := range [][]string{t.CatalogArgs, t.QueryArgs, t.VariantArgs, t.CountArgs} {
			for j, a := range args {
				args[j] = followArg(s, a)
			}
		}
	}
}

// followArg returns the name argument a has after step s.
func followArg(s Step, a string) string {
	outer, inner, nested := strings.Cut(a, ".")
	switch {
	case s.Op == OpWrap && !nested:
		return s.Param + "." + a
	case s.Op == OpFlatten && nested && outer == s.Param && slices.Contains(s.Keys, inner):
		return inner
	case s.Op != OpRenameParam:
	case len(s.Path) == 0 && a == s.From:
		return s.To
	case len(s.Path) == 0 && nested && outer == s.From:
		return s.To + "." + inner
	case len(s.Path) == 1 && nested && outer == s.Path[0] && inner == s.From:
		return outer + "." + s.To
	}
	return a
}

// edit records a change of what the model reads.
func (v *variant) edit(target, from, to string) {
	v.record(Step{Op: OpEdit, Target: target, From: from, To: to})
}

// done returns the variant, or ErrNotApplicable when nothing changed.
func (v *variant) done(family string) (*harness.Harness, Mapping, error) {
	if len(v.steps) == 0 {
		return nil, Mapping{}, fmt.Errorf("%s: %w", family, ErrNotApplicable)
	}
	return v.h, Mapping{Steps: v.steps}, nil
}

// chance reports true with probability p.
func (v *variant) chance(p float64) bool { return v.rng.Float64() < p }

// shuffle permutes s in place and reports whether the order changed.
func shuffle[T any](rng *rand.Rand, s []T) bool {
	if len(s) < 2 {
		return false
	}
	perm := rng.Perm(len(s))
	changed := false
	for i, p := range perm {
		if i != p {
			changed = true
			break
		}
	}
	if !changed {
		// Swap one pair so a reorder family always reorders.
		i := rng.IntN(len(s) - 1)
		perm[i], perm[i+1] = perm[i+1], perm[i]
	}
	out := make([]T, len(s))
	for i, p := range perm {
		out[i] = s[p]
	}
	copy(s, out)
	return true
}

// chinese reports whether the harness is written mostly in Chinese, so
// generated text (titles, feedback, noise skills) matches its language.
func (v *variant) chinese() bool {
	var b strings.Builder
	b.WriteString(v.h.Description)
	for _, s := range v.h.Layout.Sections {
		b.WriteString(s.Title + s.Text + strings.Join(s.Items, ""))
	}
	for _, s := range v.h.Skills {
		b.WriteString(s.Description + s.Instructions)
		for _, r := range s.Rules {
			b.WriteString(r.Text)
		}
	}
	for _, t := range v.h.Tools {
		b.WriteString(t.Description)
	}
	return isChinese(b.String())
}

// takenToolNames returns the tool names in use, the load-skill tool's included.
func (v *variant) takenToolNames() map[string]bool {
	taken := map[string]bool{v.h.LoadSkillToolName(): true, harness.DefaultLoadSkillTool: true}
	for _, t := range v.h.Tools {
		taken[t.Name] = true
	}
	return taken
}

func (v *variant) takenSkillIDs() map[string]bool {
	taken := map[string]bool{}
	for _, s := range v.h.Skills {
		taken[s.ID] = true
	}
	return taken
}

// renameSkill renames skill i and records the step.
func (v *variant) renameSkill(i int, to string) {
	from := v.h.Skills[i].ID
	v.h.Skills[i].ID = to
	v.record(Step{Op: OpRenameSkill, From: from, To: to,
		LoadTool: v.h.LoadSkillToolName(), LoadParam: v.h.LoadSkillParamName()})
}

// renameTool renames tool i, or the load-skill tool when i < 0.
func (v *variant) renameTool(i int, to string) {
	var from string
	if i < 0 {
		from = v.h.LoadSkillToolName()
		v.h.Pipeline.LoadSkillTool = to
	} else {
		from = v.h.Tools[i].Name
		v.h.Tools[i].Name = to
	}
	v.record(Step{Op: OpRenameTool, Tool: from, To: to})
}

// renameLoadSkillParam renames the skill-id argument of the load-skill tool.
func (v *variant) renameLoadSkillParam(to string) {
	from := v.h.LoadSkillParamName()
	v.h.Pipeline.LoadSkillParam = to
	v.record(Step{Op: OpRenameParam, Tool: v.h.LoadSkillToolName(), From: from, To: to})
}

// rewriteMentions updates mentions of renamed skills and tools in every
// text of the harness and in string values of hook configs, so a rule
// that says "call `get_price` first" still names a real tool.
func (v *variant) rewriteMentions(renames [][2]string) error {
	if len(renames) == 0 {
		return nil
	}
	h := v.h
	rw := func(s string) string { return rewriteMentions(s, renames) }
	v.rewriteTexts(rw)
	for i := range h.Layout.Sections {
		h.Layout.Sections[i].Title = rw(h.Layout.Sections[i].Title)
	}
	h.Pipeline.RetryFeedback = rw(h.Pipeline.RetryFeedback)
	exact := map[string]string{}
	for _, r := range renames {
		if identifierLike(r[0]) {
			exact[r[0]] = r[1]
		}
	}
	for i := range h.Hooks {
		cfg, err := rewriteConfig(h.Hooks[i].Config, exact)
		if err != nil {
			return fmt.Errorf("hook %q config: %w", h.Hooks[i].Name, err)
		}
		h.Hooks[i].Config = cfg
	}
	return nil
}

// rewriteConfig replaces string values (not keys) of a hook config that
// equal a renamed name. A config that is not JSON is left alone:
// validation reports it, not augmentation.
func rewriteConfig(raw json.RawMessage, exact map[string]string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	val, err := parseValue(raw)
	if err != nil {
		return raw, nil
	}
	changed := false
	var walk func(x any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case *object:
			for _, k := range x.keys {
				x.vals[k] = walk(x.vals[k])
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			if nu, ok := exact[x]; ok {
				changed = true
				return nu
			}
		}
		return x
	}
	val = walk(val)
	if !changed {
		return raw, nil
	}
	return encodeValue(val)
}
