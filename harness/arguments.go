package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ArgumentRename maps one argument of a harness tool to the name the
// plugin behind it declares. An operator renames an argument for the model
// (item_name for query, say) without touching the plugin: the tool's
// Parameters use the new name, the model writes it, and the runtime gives
// the plugin its own name before the plugin checks its schema.
// Re-describing an argument needs no rename: descriptions are the
// harness's own, and plugins never read them.
type ArgumentRename struct {
	// Name is the argument as the tool's Parameters name it.
	Name string `json:"name"`
	// Plugin is the name the plugin's declared schema gives it.
	Plugin string `json:"plugin"`
	// In locates the object that holds the argument: property names from
	// the top level, as Parameters name them, with ArrayItems for the items
	// of an array. Empty for a top-level argument.
	In []string `json:"in,omitempty"`
}

// ArrayItems is the In element that stands for every item of an array.
const ArrayItems = "[]"

// where writes the argument's place for a message: "item_name", or
// "items[].sku" for a nested one.
func (r ArgumentRename) where(name string) string {
	var b strings.Builder
	for _, p := range r.In {
		if p == ArrayItems {
			b.WriteString("[]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(name)
	return b.String()
}

// PluginArguments returns a call's arguments as the tool's plugin receives
// them: every argument the tool renames carries the plugin's name. With
// no renames it returns args unchanged. Numbers keep their exact text.
func (t Tool) PluginArguments(args json.RawMessage) (json.RawMessage, error) {
	if len(t.ArgumentMap) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("tool %q: arguments are not JSON: %v", t.Name, err)
	}
	// Deeper objects go first: their In still names the parents as the
	// harness does, before a parent's own rename changes it.
	for _, g := range renameGroups(t.ArgumentMap, true) {
		if err := renameIn(v, g.in, g.toPlugin); err != nil {
			return nil, fmt.Errorf("tool %q: %v", t.Name, err)
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tool %q: arguments: %v", t.Name, err)
	}
	return out, nil
}

// HarnessArguments is the inverse of PluginArguments for decoded
// arguments: a call written in the plugin's names (a gold call of the
// live room, say) as the model writes it under this tool. It changes args
// in place and returns it.
func (t Tool) HarnessArguments(args map[string]any) (map[string]any, error) {
	// Parents first: a child's In names its parents as the harness does,
	// which they are once renamed back.
	for _, g := range renameGroups(t.ArgumentMap, false) {
		if err := renameIn(args, g.in, g.toHarness); err != nil {
			return nil, fmt.Errorf("tool %q: %v", t.Name, err)
		}
	}
	return args, nil
}

// renameGroup is the renames of the arguments of one object, applied at
// once so that two arguments may swap names.
type renameGroup struct {
	in                  []string
	toPlugin, toHarness map[string]string
}

// renameGroups groups renames by the object they apply to, deepest
// objects first when deepFirst is set, parents first otherwise.
func renameGroups(renames []ArgumentRename, deepFirst bool) []renameGroup {
	var out []renameGroup
	for _, r := range renames {
		i := slices.IndexFunc(out, func(g renameGroup) bool { return slices.Equal(g.in, r.In) })
		if i < 0 {
			out = append(out, renameGroup{in: r.In, toPlugin: map[string]string{}, toHarness: map[string]string{}})
			i = len(out) - 1
		}
		out[i].toPlugin[r.Name] = r.Plugin
		out[i].toHarness[r.Plugin] = r.Name
	}
	slices.SortStableFunc(out, func(a, b renameGroup) int {
		if deepFirst {
			return len(b.in) - len(a.in)
		}
		return len(a.in) - len(b.in)
	})
	return out
}

// renameIn renames the keys of every object reached from v along path
// as names says, all at once. Values without the path's shape (an absent
// optional argument) are left alone: there is nothing to rename.
func renameIn(v any, path []string, names map[string]string) error {
	if len(path) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		renamed := make(map[string]any, len(m))
		from := map[string]string{} // new key → the key it came from
		for k, val := range m {
			to, ok := names[k]
			if !ok {
				to = k
			}
			if prev, clash := from[to]; clash {
				a, b := min(prev, k), max(prev, k)
				return fmt.Errorf("arguments %q and %q would both be %q", a, b, to)
			}
			from[to] = k
			renamed[to] = val
		}
		clear(m)
		maps.Copy(m, renamed)
		return nil
	}
	if path[0] == ArrayItems {
		arr, _ := v.([]any)
		for _, e := range arr {
			if err := renameIn(e, path[1:], names); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	child, ok := m[path[0]]
	if !ok {
		return nil
	}
	return renameIn(child, path[1:], names)
}

// schemaAt returns the object schema found along path (property names and
// ArrayItems) inside a parameters schema, or why there is none.
func schemaAt(schema map[string]any, path []string) (map[string]any, error) {
	cur := schema
	for i, p := range path {
		var next map[string]any
		if p == ArrayItems {
			next, _ = cur["items"].(map[string]any)
			if next == nil {
				return nil, fmt.Errorf("%s is not an array with an items schema", placeOf(path[:i]))
			}
		} else {
			props, _ := cur["properties"].(map[string]any)
			next, _ = props[p].(map[string]any)
			if next == nil {
				return nil, fmt.Errorf("%q is not a property of %s", p, placeOf(path[:i]))
			}
		}
		cur = next
	}
	return cur, nil
}

// placeOf names an object inside the parameters for a message.
func placeOf(path []string) string {
	if len(path) == 0 {
		return "the parameters"
	}
	return ArgumentRename{In: path[:len(path)-1]}.where(path[len(path)-1])
}

// mapProblem is a problem with entry At of a tool's argument map.
type mapProblem struct {
	At  int
	Msg string
}

// checkArgumentMap requires each rename to name a property of the tool's
// parameters once, and to give it a plugin name no other argument of the
// same object reaches the plugin with.
func checkArgumentMap(raw json.RawMessage, renames []ArgumentRename) []mapProblem {
	if len(renames) == 0 {
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return []mapProblem{{0, fmt.Sprintf("parameters: %v", err)}}
	}
	var problems []mapProblem
	type key struct{ in, name string }
	names, plugins := map[key]int{}, map[key]int{}
	for i, r := range renames {
		bad := func(format string, args ...any) {
			problems = append(problems, mapProblem{i, fmt.Sprintf(format, args...)})
		}
		switch {
		case r.Name == "":
			bad("name is empty: give the argument as the parameters name it")
			continue
		case r.Plugin == "":
			bad("plugin is empty: give the name the plugin declares for %q", r.Name)
			continue
		case r.Name == r.Plugin:
			bad("%q is renamed to itself; leave it out", r.Name)
			continue
		}
		obj, err := schemaAt(schema, r.In)
		if err != nil {
			bad("in: %v", err)
			continue
		}
		props, _ := obj["properties"].(map[string]any)
		if _, ok := props[r.Name]; !ok {
			bad("argument %q is not a property of %s (it has %s)", r.Name, placeOf(r.In), propertyList(props))
			continue
		}
		in := strings.Join(r.In, "\x00")
		if first, dup := names[key{in, r.Name}]; dup {
			bad("argument %q is renamed twice (first in [%d])", r.where(r.Name), first)
			continue
		}
		names[key{in, r.Name}] = i
		if first, dup := plugins[key{in, r.Plugin}]; dup {
			bad("two arguments reach the plugin as %q (the first in [%d])", r.where(r.Plugin), first)
			continue
		}
		plugins[key{in, r.Plugin}] = i
	}
	// An argument the map leaves alone reaches the plugin under its own
	// name, which no renamed argument may take.
	for k, i := range plugins {
		if _, renamed := names[k]; renamed {
			continue
		}
		obj, err := schemaAt(schema, renames[i].In)
		if err != nil {
			continue
		}
		props, _ := obj["properties"].(map[string]any)
		if _, ok := props[k.name]; ok {
			problems = append(problems, mapProblem{i, fmt.Sprintf("%q would reach the plugin as %q, which the argument %q of the same name also does; rename that one too",
				renames[i].where(renames[i].Name), k.name, renames[i].where(k.name))})
		}
	}
	slices.SortStableFunc(problems, func(a, b mapProblem) int { return a.At - b.At })
	return problems
}

func propertyList(props map[string]any) string {
	if len(props) == 0 {
		return "no properties"
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, fmt.Sprintf("%q", k))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
