package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// PluginExports is what one installed plugin version declares, as the
// compatibility check reads it.
type PluginExports struct {
	// Label names the plugin version in messages, e.g. "storefront@1.0.0".
	Label string
	// Tools maps each tool export to the JSON Schema of the arguments the
	// plugin accepts.
	Tools map[string]json.RawMessage
	// Hooks and Skills list the hook and skill exports.
	Hooks  []string
	Skills []string
}

// CheckPlugins checks that the plugins that will serve h (by plugin name)
// implement it: every tool, hook and plugin skill names an export its
// plugin declares, and every tool's declared schema accepts whatever the
// tool's parameters allow once its argument map applies — compared
// structurally (property names, required properties, types, enums and
// bounds), which is what breaks calls in practice. It returns nil or an
// ErrorList whose entries name the harness tool, the argument and the
// plugin, located by their path in the harness document.
func CheckPlugins(h *Harness, installed map[string]PluginExports) error {
	return checkPlugins(h, installed, true)
}

// CheckInstalledPlugins is CheckPlugins for a harness being written, whose
// plugins may not be installed yet: what names a plugin missing from
// installed is left unchecked (MissingPlugins lists those plugins), and
// every other problem is reported.
func CheckInstalledPlugins(h *Harness, installed map[string]PluginExports) error {
	return checkPlugins(h, installed, false)
}

// MissingPlugins lists, sorted, the plugins h's tools, hooks and skills
// name that installed lacks.
func MissingPlugins(h *Harness, installed map[string]PluginExports) []string {
	var out []string
	add := func(name string) {
		if _, ok := installed[name]; !ok && name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, t := range h.Tools {
		add(t.Plugin)
	}
	for _, k := range h.Hooks {
		add(k.Plugin)
	}
	for _, s := range h.Skills {
		add(s.Plugin)
	}
	slices.Sort(out)
	return out
}

func checkPlugins(h *Harness, installed map[string]PluginExports, strict bool) error {
	var errs ErrorList
	add := func(path, format string, args ...any) {
		errs = append(errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	resolve := func(path, what, name, plugin string) (PluginExports, bool) {
		p, ok := installed[plugin]
		if !ok && strict {
			add(path+".plugin", "%s %q: plugin %q is not installed and enabled (installed: %s)", what, name, plugin, installedList(installed))
		}
		return p, ok
	}
	for i, t := range h.Tools {
		path := fmt.Sprintf("tools[%d]", i)
		p, ok := resolve(path, "tool", t.Name, t.Plugin)
		if !ok {
			continue
		}
		declared, ok := p.Tools[t.Export]
		if !ok {
			add(path+".export", "tool %q: plugin %s declares no tool %q (its tools: %s)", t.Name, p.Label, t.Export, keyList(p.Tools))
			continue
		}
		c := schemaCheck{tool: t, plugin: p.Label}
		var hs, ps map[string]any
		if err := json.Unmarshal(t.Parameters, &hs); err != nil {
			add(path+".parameters", "tool %q: %v", t.Name, err)
			continue
		}
		if err := json.Unmarshal(declared, &ps); err != nil {
			add(path+".export", "tool %q: plugin %s declares a schema for %q that is not a JSON object: %v", t.Name, p.Label, t.Export, err)
			continue
		}
		c.node(hs, ps, nil, path+".parameters")
		for _, e := range c.problems {
			errs = append(errs, e)
		}
	}
	for i, k := range h.Hooks {
		path := fmt.Sprintf("hooks[%d]", i)
		if p, ok := resolve(path, "hook", k.Name, k.Plugin); ok && !slices.Contains(p.Hooks, k.Export) {
			add(path+".export", "hook %q: plugin %s declares no hook %q (its hooks: %s)", k.Name, p.Label, k.Export, quoted(p.Hooks))
		}
	}
	for i, s := range h.Skills {
		if s.Plugin == "" {
			continue
		}
		path := fmt.Sprintf("skills[%d]", i)
		if p, ok := resolve(path, "skill", s.ID, s.Plugin); ok && !slices.Contains(p.Skills, s.Export) {
			add(path+".export", "skill %q: plugin %s declares no skill %q (its skills: %s)", s.ID, p.Label, s.Export, quoted(p.Skills))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// schemaCheck compares one harness tool's parameters with its plugin's
// declared schema: the harness side must allow nothing the plugin refuses.
type schemaCheck struct {
	tool     Tool
	plugin   string
	problems ErrorList
}

func (c *schemaCheck) add(path string, arg []string, format string, args ...any) {
	what := fmt.Sprintf("tool %q", c.tool.Name)
	if len(arg) > 0 {
		what += fmt.Sprintf(" argument %q", placeOf(arg))
	}
	msg := fmt.Sprintf("%s (plugin %s, export %q): %s", what, c.plugin, c.tool.Export, fmt.Sprintf(format, args...))
	c.problems = append(c.problems, &Error{Path: path, Msg: msg})
}

// pluginName is the name the plugin receives argument name of the object
// at in (harness names) under.
func (c *schemaCheck) pluginName(in []string, name string) string {
	for _, r := range c.tool.ArgumentMap {
		if r.Name == name && slices.Equal(r.In, in) {
			return r.Plugin
		}
	}
	return name
}

// undecidable are the keywords whose meaning a structural comparison
// cannot follow; a node that uses one is not compared further.
var undecidable = []string{"$ref", "allOf", "anyOf", "oneOf", "not", "if", "$dynamicRef"}

// node compares a harness schema node (hs) with the plugin's (ps). arg is
// the argument's place in harness names, path the node's in the document.
func (c *schemaCheck) node(hs, ps map[string]any, arg []string, path string) {
	for _, k := range undecidable {
		if _, ok := hs[k]; ok {
			return
		}
		if _, ok := ps[k]; ok {
			return
		}
	}
	c.types(hs, ps, arg, path)
	c.enum(hs, ps, arg, path)
	c.bounds(hs, ps, arg, path)
	hp, _ := hs["properties"].(map[string]any)
	pp, _ := ps["properties"].(map[string]any)
	if hp != nil || pp != nil || ps["required"] != nil || ps["additionalProperties"] == false {
		c.object(hs, ps, hp, pp, arg, path)
	}
	hi, _ := hs["items"].(map[string]any)
	pi, _ := ps["items"].(map[string]any)
	switch {
	case pi != nil && hi != nil:
		c.node(hi, pi, append(slices.Clip(arg), ArrayItems), path+".items")
	case pi != nil && hasType(hs, "array"):
		c.add(path, arg, "the plugin says what the items of the array are, and the harness tool allows any items; give it an items schema")
	}
}

func (c *schemaCheck) object(hs, ps, hp, pp map[string]any, arg []string, path string) {
	in := arg
	hreq, preq := stringList(hs["required"]), stringList(ps["required"])
	closed := ps["additionalProperties"] == false
	reaches := map[string]string{} // plugin name → harness name
	for _, hn := range sortedNames(hp) {
		pn := c.pluginName(in, hn)
		reaches[pn] = hn
		child := append(slices.Clip(arg), hn)
		childPath := path + ".properties." + hn
		hchild, _ := hp[hn].(map[string]any)
		pchild, ok := pp[pn].(map[string]any)
		switch {
		case ok && hchild != nil:
			c.node(hchild, pchild, child, childPath)
		case !ok && closed:
			how := fmt.Sprintf("it reaches the plugin as %q, which the plugin does not declare (it declares %s)", pn, propertyList(pp))
			if pn == hn {
				if free := c.unreached(pp, hp, in); len(free) == 1 {
					how += fmt.Sprintf("; if it stands for the plugin's %q, add {\"name\": %q, \"plugin\": %q} to argument_map", free[0], hn, free[0])
				} else {
					how += "; rename it for the plugin with argument_map"
				}
			}
			c.add(childPath, child, "%s", how)
		}
	}
	for _, pn := range preq {
		hn, present := reaches[pn]
		switch {
		case !present:
			hint := "add it, or rename an argument to it with argument_map"
			if free := c.unmatched(hp, pp, in); len(free) == 1 {
				hint = fmt.Sprintf("if %q stands for it, add {\"name\": %q, \"plugin\": %q} to argument_map", free[0], free[0], pn)
			}
			c.add(path, arg, "the plugin requires argument %q, which no argument of the harness tool reaches it as; %s", placeOf(append(slices.Clip(in), pn)), hint)
		case !slices.Contains(hreq, hn):
			c.add(path+".properties."+hn, append(slices.Clip(arg), hn), "is optional in the harness tool, but the plugin requires it (as %q): add it to required", pn)
		}
	}
	if closed && hs["additionalProperties"] != false {
		c.add(path, arg, "the harness tool lets the model send arguments the plugin does not declare, which it refuses: set \"additionalProperties\": false")
	}
}

// unreached lists the plugin's properties that no harness argument
// reaches.
func (c *schemaCheck) unreached(pp, hp map[string]any, in []string) []string {
	reached := map[string]bool{}
	for hn := range hp {
		reached[c.pluginName(in, hn)] = true
	}
	var out []string
	for _, pn := range sortedNames(pp) {
		if !reached[pn] {
			out = append(out, pn)
		}
	}
	return out
}

// unmatched lists the harness arguments that reach the plugin under a
// name it does not declare.
func (c *schemaCheck) unmatched(hp, pp map[string]any, in []string) []string {
	var out []string
	for _, hn := range sortedNames(hp) {
		if _, ok := pp[c.pluginName(in, hn)]; !ok {
			out = append(out, hn)
		}
	}
	return out
}

func (c *schemaCheck) types(hs, ps map[string]any, arg []string, path string) {
	pt := typeList(ps)
	if pt == nil {
		return
	}
	ht := typeList(hs)
	if ht == nil {
		c.add(path, arg, "the harness tool allows any type, and the plugin accepts only %s", strings.Join(pt, " or "))
		return
	}
	for _, t := range ht {
		if !slices.Contains(pt, t) && !(t == "integer" && slices.Contains(pt, "number")) {
			c.add(path, arg, "the harness tool allows a %s, and the plugin accepts only %s", t, strings.Join(pt, " or "))
		}
	}
}

func (c *schemaCheck) enum(hs, ps map[string]any, arg []string, path string) {
	penum, ok := ps["enum"].([]any)
	if !ok {
		return
	}
	henum, ok := hs["enum"].([]any)
	if cv, isConst := hs["const"]; isConst {
		henum, ok = []any{cv}, true
	}
	if !ok {
		c.add(path, arg, "the plugin accepts only %s, and the harness tool allows any value: give it the same enum (or part of it)", jsonText(penum))
		return
	}
	for _, v := range henum {
		if !slices.ContainsFunc(penum, func(p any) bool { return jsonEqual(p, v) }) {
			c.add(path, arg, "the harness tool allows %s, which the plugin's enum %s does not", jsonText(v), jsonText(penum))
		}
	}
}

// bounds compares lower and upper limits: the harness may narrow them, not
// widen them.
func (c *schemaCheck) bounds(hs, ps map[string]any, arg []string, path string) {
	for _, k := range []string{"minimum", "minLength", "minItems", "minProperties"} {
		if pv, ok := ps[k].(float64); ok {
			if hv, ok := hs[k].(float64); !ok || hv < pv {
				c.add(path, arg, "the plugin wants %s %v, and the harness tool allows %s", k, pv, boundText(hs, k))
			}
		}
	}
	for _, k := range []string{"maximum", "maxLength", "maxItems", "maxProperties"} {
		if pv, ok := ps[k].(float64); ok {
			if hv, ok := hs[k].(float64); !ok || hv > pv {
				c.add(path, arg, "the plugin wants %s %v, and the harness tool allows %s", k, pv, boundText(hs, k))
			}
		}
	}
}

func boundText(s map[string]any, k string) string {
	if v, ok := s[k]; ok {
		return fmt.Sprintf("%s %v", k, v)
	}
	return "no " + k
}

func typeList(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func hasType(s map[string]any, t string) bool { return slices.Contains(typeList(s), t) }

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func keyList[V any](m map[string]V) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	return quoted(names)
}

func quoted(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func installedList(m map[string]PluginExports) string {
	names := make([]string, 0, len(m))
	for _, p := range m {
		names = append(names, p.Label)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Locate fills in the line and column of each problem of err (the
// ErrorList of CheckPlugins, say) from its path in data, the document h
// was parsed from; a path inside a schema is placed at the schema.
func Locate(data []byte, format Format, err error) error {
	var root *node
	var perr error
	switch format {
	case FormatYAML:
		root, perr = parseYAMLTree(bytes.TrimPrefix(data, []byte("\ufeff")))
	default:
		root, perr = parseJSONTree(bytes.TrimPrefix(data, []byte("\ufeff")))
	}
	if perr != nil {
		return err
	}
	pos := map[string][2]int{}
	var ignored ErrorList
	checkTree(root, reflect.TypeFor[Harness](), "", pos, &ignored)
	return withPositions(err, pos)
}
