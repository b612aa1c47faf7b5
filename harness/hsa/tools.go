package hsa

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness"
)

// toolSchema parses the parameters of tool i; ok is false for a schema
// that does not parse, which transforms leave alone (validation reports it).
func (v *variant) toolSchema(i int) (*object, bool) {
	o, err := parseSchema(v.h.Tools[i].Parameters)
	return o, err == nil
}

func (v *variant) setToolSchema(i int, o *object) error {
	raw, err := encodeSchema(o)
	if err != nil {
		return fmt.Errorf("tool %q: encode parameters: %w", v.h.Tools[i].Name, err)
	}
	v.h.Tools[i].Parameters = raw
	return nil
}

// namer makes the new names of one renaming family.
type namer struct {
	tool  func(old string) string
	param func(old string, style nameStyle) string
	// styles are the styles a tool's parameters may be rewritten in.
	styles []nameStyle
}

// renameTools renames tools and their parameters (at least one change),
// the load-skill tool and its parameter included, and rewrites mentions.
func renameTools(v *variant, family string, n namer, pTool, pParam float64) error {
	type cand struct{ tool int } // -1 is the load-skill tool
	var cands []cand
	if len(v.h.Skills) > 0 {
		cands = append(cands, cand{-1})
	}
	for i := range v.h.Tools {
		cands = append(cands, cand{i})
	}
	if len(cands) == 0 {
		return nil
	}
	must := v.rng.IntN(len(cands))
	var renames [][2]string
	for ci, c := range cands {
		var old string
		if c.tool < 0 {
			old = v.h.LoadSkillToolName()
		} else {
			old = v.h.Tools[c.tool].Name
		}
		if ci == must || v.chance(pTool) {
			to := uniqueName(v.rng, old, v.takenToolNames(), func() string { return n.tool(old) })
			v.renameTool(c.tool, to)
			renames = append(renames, [2]string{old, to})
		}
		style := n.styles[v.rng.IntN(len(n.styles))]
		if c.tool < 0 {
			if v.chance(pParam) {
				oldP := v.h.LoadSkillParamName()
				to := uniqueName(v.rng, oldP, map[string]bool{}, func() string { return n.param(oldP, style) })
				v.renameLoadSkillParam(to)
				renames = append(renames, [2]string{oldP, to})
			}
			continue
		}
		if err := renameParams(v, c.tool, n, style, pParam); err != nil {
			return err
		}
	}
	if err := v.rewriteMentions(renames); err != nil {
		return fmt.Errorf("%s: %w", family, err)
	}
	return nil
}

// renameParams renames properties of tool i at every depth.
func renameParams(v *variant, i int, n namer, style nameStyle, p float64) error {
	root, ok := v.toolSchema(i)
	if !ok || !refsLocal(root) {
		return nil
	}
	tool := v.h.Tools[i].Name
	var renames [][2]string
	walkObjects(root, nil, func(node *object, path []string) {
		taken := map[string]bool{}
		for _, k := range propertyNames(node) {
			taken[k] = true
		}
		// A name another argument reaches the plugin under is taken too:
		// the argument map could not tell the two apart.
		for _, r := range v.h.Tools[i].ArgumentMap {
			if slices.Equal(r.In, path) {
				taken[r.Plugin] = true
			}
		}
		for _, k := range propertyNames(node) {
			if !v.chance(p) {
				continue
			}
			to := uniqueName(v.rng, k, taken, func() string { return n.param(k, style) })
			taken[to] = true
			renameProperty(node, k, to)
			v.record(Step{Op: OpRenameParam, Tool: tool, Path: slices.Clone(path), From: k, To: to})
			renames = append(renames, [2]string{k, to})
		}
	})
	if len(renames) == 0 {
		return nil
	}
	v.h.Tools[i].Description = rewriteMentions(v.h.Tools[i].Description, renames)
	return v.setToolSchema(i, root)
}

func toolRename(bank wordBank, opaque bool) applyFunc {
	family := "tool-rename"
	if opaque {
		family = "tool-rename-opaque"
	}
	return func(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
		v := newVariant(h, seed, opts)
		n := namer{
			tool: func(old string) string {
				return naturalName(v.rng, old, bank, []nameStyle{styleSnake, styleCamel}[v.rng.IntN(2)])
			},
			param:  func(old string, style nameStyle) string { return naturalName(v.rng, old, bank, style) },
			styles: []nameStyle{styleSnake, styleCamel},
		}
		if opaque {
			n.tool = func(string) string { return opaqueName(v.rng) }
			n.param = func(string, nameStyle) string { return opaqueName(v.rng) }
		} else {
			// Some names are coined, so that a tool is found by what its
			// description says, not by the words of its name.
			tool, param := n.tool, n.param
			n.tool = func(old string) string {
				if v.chance(0.4) {
					return coinedName(v.rng, []nameStyle{styleSnake, styleCamel}[v.rng.IntN(2)])
				}
				return tool(old)
			}
			n.param = func(old string, style nameStyle) string {
				if v.chance(0.3) {
					return coinedName(v.rng, style)
				}
				return param(old, style)
			}
		}
		if err := renameTools(v, family, n, 0.6, 0.5); err != nil {
			return nil, Mapping{}, err
		}
		return v.done(family)
	}
}

// renameHeldoutWords renames skills, tools and parameters with the
// held-out word bank, in styles the training families do not use for tools.
func renameHeldoutWords(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	const family = "rename-heldout-words"
	v := newVariant(h, seed, opts)
	styles := []nameStyle{styleKebab, stylePascal}
	n := namer{
		tool:   func(old string) string { return naturalName(v.rng, old, heldoutWords, styles[v.rng.IntN(2)]) },
		param:  func(old string, style nameStyle) string { return naturalName(v.rng, old, heldoutWords, style) },
		styles: styles,
	}
	if err := renameTools(v, family, n, 0.6, 0.5); err != nil {
		return nil, Mapping{}, err
	}
	if len(v.h.Skills) > 0 {
		_, _, err := renameSkills(v, family, func(old string) string { return skillIDName(v, old, heldoutWords) })
		if err != nil && !errors.Is(err, ErrNotApplicable) {
			return nil, Mapping{}, err
		}
	}
	return v.done(family)
}

func toolReword(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	p := newParaphraser()
	for i := range v.h.Tools {
		t := &v.h.Tools[i]
		if nu := reword(v, p, t.Description); nu != t.Description {
			v.edit(fmt.Sprintf("tools[%s].description", t.Name), t.Description, nu)
			t.Description = nu
		}
		root, ok := v.toolSchema(i)
		if !ok {
			continue
		}
		changed := false
		walkObjects(root, nil, func(node *object, _ []string) {
			props, _ := node.obj("properties")
			for _, k := range props.keys {
				ps, ok := props.obj(k)
				if !ok {
					continue
				}
				if d, ok := ps.str("description"); ok {
					if nu := p.paraphrase(v.rng, d, 0.7); nu != d {
						ps.set("description", nu)
						changed = true
					}
				}
			}
		})
		if changed {
			if err := v.setToolSchema(i, root); err != nil {
				return nil, Mapping{}, err
			}
			v.edit(fmt.Sprintf("tools[%s].parameters", t.Name), "", "reworded parameter descriptions")
		}
	}
	return v.done("tool-reword")
}

func toolReorderParams(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	for i := range v.h.Tools {
		root, ok := v.toolSchema(i)
		if !ok {
			continue
		}
		changed := false
		walkObjects(root, nil, func(node *object, _ []string) {
			props, _ := node.obj("properties")
			if shuffle(v.rng, props.keys) {
				changed = true
			}
			if req, ok := node.get("required"); ok {
				arr, _ := req.([]any)
				shuffle(v.rng, arr)
			}
		})
		if changed {
			if err := v.setToolSchema(i, root); err != nil {
				return nil, Mapping{}, err
			}
			v.edit(fmt.Sprintf("tools[%s].parameters", v.h.Tools[i].Name), "", "reordered parameters")
		}
	}
	return v.done("tool-reorder-params")
}

// optionalParam is a parameter a tool may plausibly accept and a correct
// call never needs.
type optionalParam struct {
	name   string
	schema func() *object
}

func optionalParams(zh bool) []optionalParam {
	desc := func(en, cn string) string {
		if zh {
			return cn
		}
		return en
	}
	typed := func(t, d string, extra ...any) func() *object {
		return func() *object {
			o := newObject()
			o.set("type", t)
			o.set("description", d)
			for i := 0; i+1 < len(extra); i += 2 {
				o.set(extra[i].(string), extra[i+1])
			}
			return o
		}
	}
	return []optionalParam{
		{"note", typed("string", desc("Free-text note for the operator log.", "备注，仅写入运营日志。"))},
		{"locale", typed("string", desc("Language of the returned text.", "返回文本的语言。"), "enum", []any{"zh-CN", "en-US"})},
		{"verbose", typed("boolean", desc("Return extra detail.", "是否返回更多细节。"))},
		{"max_results", typed("integer", desc("Upper bound on returned entries.", "最多返回的条数。"), "minimum", 1, "maximum", 50)},
		{"trace_id", typed("string", desc("Id that correlates logs.", "用于关联日志的编号。"))},
		{"currency", typed("string", desc("Currency of amounts.", "金额的币种。"), "enum", []any{"CNY", "USD"})},
		{"include_images", typed("boolean", desc("Attach image links.", "是否附带图片链接。"))},
		{"timeout_ms", typed("integer", desc("Give up after this many milliseconds.", "超时时间（毫秒）。"), "minimum", 100, "maximum", 10000)},
	}
}

func toolAddParams(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	zh := v.chinese()
	if len(v.h.Tools) == 0 {
		return v.done("tool-add-params")
	}
	must := v.rng.IntN(len(v.h.Tools))
	for i := range v.h.Tools {
		if i != must && !v.chance(0.5) {
			continue
		}
		root, ok := v.toolSchema(i)
		if !ok || root.has("properties") && !plainObject(root) {
			continue
		}
		if !root.has("properties") {
			root.set("properties", newObject())
		}
		props, _ := root.obj("properties")
		style := styleSnake
		if len(props.keys) > 0 {
			style = styleOf(props.keys[0])
		}
		bank := optionalParams(zh)
		for range 1 + v.rng.IntN(2) {
			op := bank[v.rng.IntN(len(bank))]
			taken := map[string]bool{}
			for _, k := range props.keys {
				taken[k] = true
			}
			name := uniqueName(v.rng, "", taken, func() string { return naturalName(v.rng, op.name, trainWords, style) })
			props.set(name, op.schema())
			v.record(Step{Op: OpAddParam, Tool: v.h.Tools[i].Name, Param: name})
		}
		if err := v.setToolSchema(i, root); err != nil {
			return nil, Mapping{}, err
		}
	}
	return v.done("tool-add-params")
}

// distractorKind is a look-alike of a tool that does something else.
type distractorKind struct {
	word   string
	en, zh string // said before the original description
}

func distractorKinds() []distractorKind {
	return []distractorKind{
		{"history", "Returns past records only, never the current state.", "只返回历史记录，不是当前状态。"},
		{"legacy", "Deprecated legacy version; do not use during a live stream.", "已废弃的旧版本，直播中不要使用。"},
		{"internal", "Back-office only; never call while on air.", "仅限后台使用，直播时不要调用。"},
		{"batch", "Offline batch job over many records; not for single viewer questions.", "离线批量任务，不用于回答单个观众的问题。"},
		{"sandbox", "Sandbox copy with fake data; results are not real.", "沙盒测试版，返回的是假数据。"},
		{"export", "Exports data to a file for analysts; does not answer viewers.", "把数据导出为文件给分析师，不回答观众。"},
		{"preview", "Preview for merchants before publishing; viewers cannot see it.", "商家发布前的预览，观众看不到。"},
		{"admin", "Administrative override for operators only.", "仅供运营人员使用的管理操作。"},
	}
}

func toolDistractors(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if len(v.h.Tools) == 0 {
		return v.done("tool-distractors")
	}
	kinds := distractorKinds()
	for range 1 + v.rng.IntN(2) {
		orig := v.h.Tools[v.rng.IntN(len(v.h.Tools))]
		k := kinds[v.rng.IntN(len(kinds))]
		style := styleOf(orig.Name)
		name := uniqueName(v.rng, orig.Name, v.takenToolNames(), func() string {
			words := splitWords(orig.Name)
			if v.chance(0.5) {
				words = append(words, k.word)
			} else {
				words = append([]string{k.word}, words...)
			}
			return joinWords(words, style)
		})
		d := orig
		d.Name = name
		d.Parameters = slices.Clone(orig.Parameters)
		d.CatalogArgs = slices.Clone(orig.CatalogArgs)
		d.ArgumentMap = slices.Clone(orig.ArgumentMap)
		lead := k.en
		if isChinese(orig.Description) {
			lead = k.zh
		}
		d.Description = strings.TrimSpace(lead + " " + orig.Description)
		if d.Export != "" {
			d.Export += "_" + k.word
		}
		at := v.rng.IntN(len(v.h.Tools) + 1)
		v.h.Tools = slices.Insert(v.h.Tools, at, d)
		v.record(Step{Op: OpAddTool, Tool: name})
	}
	return v.done("tool-distractors")
}

// protectedTools returns the tool names the gold needs.
func (o Options) protectedTools() map[string]bool {
	out := map[string]bool{}
	for _, t := range o.Tools {
		out[t] = true
	}
	for _, c := range o.Gold {
		out[c.Name] = true
	}
	return out
}

func toolMask(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	keep := opts.protectedTools()
	var droppable []int
	for i, t := range v.h.Tools {
		if !keep[t.Name] {
			droppable = append(droppable, i)
		}
	}
	if len(droppable) == 0 {
		return v.done("tool-mask")
	}
	drop := map[int]bool{droppable[v.rng.IntN(len(droppable))]: true}
	for _, i := range droppable {
		if v.chance(0.4) {
			drop[i] = true
		}
	}
	if len(drop) == len(v.h.Tools) {
		delete(drop, droppable[0]) // keep one tool so the tools section still lists something
	}
	var kept []harness.Tool
	for i, t := range v.h.Tools {
		if drop[i] {
			v.record(Step{Op: OpDropTool, Tool: t.Name})
			continue
		}
		kept = append(kept, t)
	}
	v.h.Tools = kept
	return v.done("tool-mask")
}

// wrapName generates the name of the one object parameter of a wrapped
// tool: a container noun, sometimes qualified ("payload", "call_args",
// "requestBody").
func wrapName(v *variant, style nameStyle) string {
	nouns := []string{"payload", "request", "input", "body", "spec", "params", "args", "options", "data"}
	quals := []string{"call", "tool", "request", "invocation"}
	words := []string{nouns[v.rng.IntN(len(nouns))]}
	if v.chance(0.4) {
		words = append([]string{quals[v.rng.IntN(len(quals))]}, words...)
	}
	return joinWords(words, style)
}

func toolWrapFlatten(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if len(v.h.Tools) == 0 {
		return v.done("tool-wrap-flatten")
	}
	must := v.rng.IntN(len(v.h.Tools))
	zh := v.chinese()
	for i := range v.h.Tools {
		if i != must && !v.chance(0.5) {
			continue
		}
		root, ok := v.toolSchema(i)
		if !ok || !refsLocal(root) {
			continue
		}
		tool := v.h.Tools[i].Name
		var flat []string
		for _, k := range propertyNames(root) {
			if flattenable(root, k) && !mapsBelow(v.h.Tools[i], k) {
				flat = append(flat, k)
			}
		}
		if len(flat) > 0 && v.chance(0.6) {
			p := flat[v.rng.IntN(len(flat))]
			keys := flattenSchema(root, p)
			v.record(Step{Op: OpFlatten, Tool: tool, Param: p, Keys: keys})
		} else {
			style := styleSnake
			if ks := propertyNames(root); len(ks) > 0 {
				style = styleOf(ks[0])
			}
			p := wrapName(v, style)
			desc := "All arguments of the call."
			if zh {
				desc = "本次调用的全部参数。"
			}
			root = wrapSchema(root, p, desc)
			v.record(Step{Op: OpWrap, Tool: tool, Param: p})
		}
		if err := v.setToolSchema(i, root); err != nil {
			return nil, Mapping{}, err
		}
	}
	return v.done("tool-wrap-flatten")
}
