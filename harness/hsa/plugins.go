package hsa

import (
	"slices"

	"github.com/livehat/livehat/harness"
)

// FromPlugins returns the mapping from the names h's plugins declare to
// h's own: a tool named otherwise than its export renames the export, and
// each entry of a tool's argument map renames the plugin's argument; so
// does a load-skill tool or argument named otherwise than the defaults. An
// operator's renames are thus the same steps a tool-rename family
// records: gold calls in the plugins' names (the live room's) map through
// it to calls under h, and calls under h map back with Inverse. It is
// empty when h uses the plugins' names.
func FromPlugins(h *harness.Harness) Mapping {
	steps := []Step{}
	renamed := map[string]bool{} // exports renamed away
	for _, t := range h.Tools {
		if t.Export != "" && t.Name != t.Export {
			renamed[t.Export] = true
		}
	}
	// A tool may take the name of another tool's export: renaming through
	// a name no tool has keeps the steps from renaming twice.
	clash := false
	for _, t := range h.Tools {
		clash = clash || t.Name != t.Export && renamed[t.Name]
	}
	for _, t := range h.Tools {
		if t.Export == "" || t.Name == t.Export {
			continue
		}
		if clash {
			steps = append(steps, Step{Op: OpRenameTool, Tool: t.Export, To: passing(t.Name)})
		} else {
			steps = append(steps, Step{Op: OpRenameTool, Tool: t.Export, To: t.Name})
		}
	}
	if clash {
		for _, t := range h.Tools {
			if t.Export != "" && t.Name != t.Export {
				steps = append(steps, Step{Op: OpRenameTool, Tool: passing(t.Name), To: t.Name})
			}
		}
	}
	for _, t := range h.Tools {
		steps = append(steps, argumentSteps(t)...)
	}
	if len(h.Skills) > 0 {
		if tool := h.LoadSkillToolName(); tool != harness.DefaultLoadSkillTool {
			steps = append(steps, Step{Op: OpRenameTool, Tool: harness.DefaultLoadSkillTool, To: tool})
		}
		if param := h.LoadSkillParamName(); param != harness.DefaultLoadSkillParam {
			steps = append(steps, Step{Op: OpRenameParam, Tool: h.LoadSkillToolName(), From: harness.DefaultLoadSkillParam, To: param})
		}
	}
	return Mapping{Steps: steps}
}

// passing is the name a rename passes through on its way to name.
func passing(name string) string { return "\x00" + name }

// argumentSteps are the renames of t's argument map as steps: parents
// first, since a child's path names them as the harness does, and the
// arguments of one object through passing names when one takes another's.
func argumentSteps(t harness.Tool) []Step {
	renames := slices.Clone(t.ArgumentMap)
	slices.SortStableFunc(renames, func(a, b harness.ArgumentRename) int { return len(a.In) - len(b.In) })
	var steps []Step
	for i := 0; i < len(renames); {
		j := i
		for j < len(renames) && slices.Equal(renames[j].In, renames[i].In) {
			j++
		}
		group := renames[i:j]
		froms := map[string]bool{}
		for _, r := range group {
			froms[r.Plugin] = true
		}
		clash := slices.ContainsFunc(group, func(r harness.ArgumentRename) bool { return froms[r.Name] })
		for _, r := range group {
			to := r.Name
			if clash {
				to = passing(r.Name)
			}
			steps = append(steps, Step{Op: OpRenameParam, Tool: t.Name, Path: slices.Clone(r.In), From: r.Plugin, To: to})
		}
		if clash {
			for _, r := range group {
				steps = append(steps, Step{Op: OpRenameParam, Tool: t.Name, Path: slices.Clone(r.In), From: passing(r.Name), To: r.Name})
			}
		}
		i = j
	}
	return steps
}

// ExceptArgumentRenames returns m without its argument renames. A variant
// harness carries them in its tools' argument maps, so the runtime has
// undone them before a plugin is called: a caller between the runtime and
// the plugins undoes only the rest (tool names, wraps, added arguments).
func (m Mapping) ExceptArgumentRenames() Mapping {
	out := Mapping{Steps: []Step{}}
	for _, s := range m.Steps {
		if s.Op != OpRenameParam {
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// followArgumentMap keeps a tool's argument map in step with a reshape
// of its arguments, so that the variant's plugin still receives its own
// names: a renamed argument maps back to the name it reached the plugin
// under, a wrap moves every mapped argument into the new object, and a
// flatten lifts those of the flattened one.
func (v *variant) followArgumentMap(s Step) {
	for i := range v.h.Tools {
		t := &v.h.Tools[i]
		if t.Name != s.Tool {
			continue
		}
		switch s.Op {
		case OpRenameParam:
			t.ArgumentMap = renameMapped(t.ArgumentMap, s.Path, s.From, s.To)
		case OpWrap:
			for j := range t.ArgumentMap {
				t.ArgumentMap[j].In = append([]string{s.Param}, t.ArgumentMap[j].In...)
			}
		case OpFlatten:
			for j, r := range t.ArgumentMap {
				if len(r.In) > 0 && r.In[0] == s.Param {
					t.ArgumentMap[j].In = slices.Clone(r.In[1:])
				}
			}
		}
	}
}

// renameMapped is list after argument from of the object at path is
// renamed to; paths through it follow.
func renameMapped(list []harness.ArgumentRename, path []string, from, to string) []harness.ArgumentRename {
	out := make([]harness.ArgumentRename, 0, len(list)+1)
	found := false
	for _, r := range list {
		r.In = slices.Clone(r.In)
		if len(r.In) > len(path) && slices.Equal(r.In[:len(path)], path) && r.In[len(path)] == from {
			r.In[len(path)] = to
		}
		if slices.Equal(r.In, path) && r.Name == from {
			found = true
			r.Name = to
			if r.Name == r.Plugin {
				continue // renamed back to the plugin's own name
			}
		}
		out = append(out, r)
	}
	if !found {
		out = append(out, harness.ArgumentRename{Name: to, Plugin: from, In: slices.Clone(path)})
	}
	return out
}

// mapsBelow reports whether tool t's argument map renames param or
// anything inside it: flattening it could not be undone by the runtime.
func mapsBelow(t harness.Tool, param string) bool {
	return slices.ContainsFunc(t.ArgumentMap, func(r harness.ArgumentRename) bool {
		return len(r.In) == 0 && r.Name == param || len(r.In) > 0 && r.In[0] == param
	})
}
