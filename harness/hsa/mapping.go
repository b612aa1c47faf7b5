package hsa

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Call is a gold tool call: the tool's name and its JSON-decoded
// arguments. A nil Arguments map means no arguments, the same as an empty one.
type Call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// Op names what one Step of a Mapping does.
type Op string

// Mapping operations. The ones that touch tool calls are listed first;
// the others change what the model reads (limits, wording, layout) and
// are recorded so the trainer can adapt the gold reply and explain the
// variant, but leave tool calls as they are.
const (
	// OpRenameTool renames tool Tool to To (the load-skill tool included).
	OpRenameTool Op = "rename_tool"
	// OpRenameParam renames property From to To of the object found at
	// Path inside the arguments of tool Tool.
	OpRenameParam Op = "rename_param"
	// OpWrap moves all arguments of Tool into one object parameter Param.
	OpWrap Op = "wrap"
	// OpFlatten lifts the properties Keys of object parameter Param of
	// Tool to the top level of its arguments.
	OpFlatten Op = "flatten"
	// OpAddParam adds optional parameter Param to Tool; gold calls do not
	// set it, and the inverse drops it.
	OpAddParam Op = "add_param"
	// OpDropTool masks (removes) tool Tool, which no gold call may use.
	OpDropTool Op = "drop_tool"
	// OpAddTool adds the distractor tool Tool, which no gold call uses.
	OpAddTool Op = "add_tool"
	// OpRenameSkill renames skill From to To, which rewrites the skill-id
	// argument LoadParam of load-skill calls (tool LoadTool).
	OpRenameSkill Op = "rename_skill"
	// OpAddSkill adds the noise skill To, which no gold call loads.
	OpAddSkill Op = "add_skill"
	// OpDropSkill masks (removes) skill From, which no gold call may load.
	OpDropSkill Op = "drop_skill"
	// OpLimit moves a numeric limit of the pipeline; see Limit.
	OpLimit Op = "limit"
	// OpCorrection plans a hook-triggered correction; see Correction.
	OpCorrection Op = "correction"
	// OpEdit is any other change of what the model reads: Target names
	// the field, From and To (when short) say what changed.
	OpEdit Op = "edit"
)

// Step is one recorded change of a transform. Which fields are set
// depends on Op. Names are those in effect when the step applies, so the
// steps of a Mapping are read in order.
type Step struct {
	Op        Op           `json:"op"`
	Tool      string       `json:"tool,omitempty"`
	Path      []string     `json:"path,omitempty"`
	Param     string       `json:"param,omitempty"`
	Keys      []string     `json:"keys,omitempty"`
	From      string       `json:"from,omitempty"`
	To        string       `json:"to,omitempty"`
	LoadTool  string       `json:"load_tool,omitempty"`
	LoadParam string       `json:"load_param,omitempty"`
	Target    string       `json:"target,omitempty"`
	Limit     *LimitChange `json:"limit,omitempty"`
	// Correction is set on OpCorrection steps.
	Correction *Correction `json:"correction,omitempty"`
}

// ArrayItems is the Path element that stands for every item of an array.
const ArrayItems = "[]"

// LimitChange records a moved pipeline limit. A shorter reply limit
// changes what a correct reply is, so the trainer must fit the gold reply
// to To (see FitReply).
type LimitChange struct {
	// Name is the pipeline field: reply_chars, tool_rounds or retries.
	Name string `json:"name"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// Mapping rewrites gold labels from the harness a transform started from
// to the harness it produced. It is plain data, so it travels with a
// trajectory and can be applied again later.
type Mapping struct {
	Steps []Step `json:"steps"`
}

// Then returns the mapping that applies m, then next.
func (m Mapping) Then(next Mapping) Mapping {
	steps := make([]Step, 0, len(m.Steps)+len(next.Steps))
	steps = append(steps, m.Steps...)
	steps = append(steps, next.Steps...)
	return Mapping{Steps: steps}
}

// Map rewrites a gold call under the old harness into the equivalent call
// under the new one. It fails when the call depends on something the
// transform removed (a masked skill) or cannot be reshaped as the schema
// change requires.
func (m Mapping) Map(c Call) (Call, error) {
	out := Call{Name: c.Name, Arguments: copyArgs(c.Arguments)}
	for i, s := range m.Steps {
		var err error
		if out, err = s.forward(out); err != nil {
			return Call{}, fmt.Errorf("map call %q: step %d (%s): %w", c.Name, i, s.Op, err)
		}
	}
	return out, nil
}

// Inverse rewrites a call under the new harness back into the call under
// the old one: Inverse(Map(c)) is c. It fails for calls that have no
// counterpart in the old harness (a distractor tool, a noise skill).
func (m Mapping) Inverse(c Call) (Call, error) {
	out := Call{Name: c.Name, Arguments: copyArgs(c.Arguments)}
	for i := len(m.Steps) - 1; i >= 0; i-- {
		s := m.Steps[i]
		var err error
		if out, err = s.backward(out); err != nil {
			return Call{}, fmt.Errorf("inverse of call %q: step %d (%s): %w", c.Name, i, s.Op, err)
		}
	}
	return out, nil
}

// Limits returns the net change of each pipeline limit the mapping moved,
// in the order they first moved. A limit moved back to its start is omitted.
func (m Mapping) Limits() []LimitChange {
	var out []LimitChange
	for _, s := range m.Steps {
		if s.Op != OpLimit || s.Limit == nil {
			continue
		}
		i := slices.IndexFunc(out, func(l LimitChange) bool { return l.Name == s.Limit.Name })
		if i < 0 {
			out = append(out, *s.Limit)
			continue
		}
		out[i].To = s.Limit.To
	}
	return slices.DeleteFunc(out, func(l LimitChange) bool { return l.From == l.To })
}

// Corrections returns the hook-triggered corrections the mapping planned.
func (m Mapping) Corrections() []Correction {
	var out []Correction
	for _, s := range m.Steps {
		if s.Op == OpCorrection && s.Correction != nil {
			out = append(out, *s.Correction)
		}
	}
	return out
}

func (s Step) isLoadSkill(c Call, id string) bool {
	if c.Name != s.LoadTool {
		return false
	}
	v, ok := c.Arguments[s.LoadParam].(string)
	return ok && v == id
}

func (s Step) forward(c Call) (Call, error) {
	switch s.Op {
	case OpRenameTool:
		if c.Name == s.Tool {
			c.Name = s.To
		}
	case OpRenameParam:
		if c.Name == s.Tool {
			return c, renameAt(c.Arguments, s.Path, s.From, s.To)
		}
	case OpWrap:
		if c.Name == s.Tool {
			c.Arguments = map[string]any{s.Param: c.Arguments}
		}
	case OpFlatten:
		if c.Name == s.Tool {
			return c, flatten(c.Arguments, s.Param, s.Keys)
		}
	case OpAddTool:
		if c.Name == s.Tool {
			return c, fmt.Errorf("tool %q did not exist before the transform", s.Tool)
		}
	case OpDropTool:
		if c.Name == s.Tool {
			return c, fmt.Errorf("the call uses tool %q, which the transform masked; list it in Options.Tools", s.Tool)
		}
	case OpRenameSkill:
		if s.isLoadSkill(c, s.From) {
			c.Arguments[s.LoadParam] = s.To
		}
	case OpAddSkill:
		if s.isLoadSkill(c, s.To) {
			return c, fmt.Errorf("skill %q did not exist before the transform", s.To)
		}
	case OpDropSkill:
		if s.isLoadSkill(c, s.From) {
			return c, fmt.Errorf("the call loads skill %q, which the transform masked; list it in Options.Skills", s.From)
		}
	}
	return c, nil
}

func (s Step) backward(c Call) (Call, error) {
	switch s.Op {
	case OpRenameTool:
		if c.Name == s.To {
			c.Name = s.Tool
		}
	case OpRenameParam:
		if c.Name == s.Tool {
			return c, renameAt(c.Arguments, s.Path, s.To, s.From)
		}
	case OpWrap:
		if c.Name == s.Tool {
			inner, ok := c.Arguments[s.Param].(map[string]any)
			if !ok || len(c.Arguments) != 1 {
				return c, fmt.Errorf("arguments of %q must be exactly one object %q", s.Tool, s.Param)
			}
			c.Arguments = inner
		}
	case OpFlatten:
		if c.Name == s.Tool {
			if _, ok := c.Arguments[s.Param]; ok {
				return c, fmt.Errorf("argument %q of %q was flattened but is present", s.Param, s.Tool)
			}
			inner := map[string]any{}
			for _, k := range s.Keys {
				if v, ok := c.Arguments[k]; ok {
					inner[k] = v
					delete(c.Arguments, k)
				}
			}
			c.Arguments[s.Param] = inner
		}
	case OpAddParam:
		if c.Name == s.Tool {
			delete(c.Arguments, s.Param)
		}
	case OpAddTool:
		if c.Name == s.Tool {
			return c, fmt.Errorf("tool %q is a distractor the transform added; it has no counterpart", s.Tool)
		}
	case OpRenameSkill:
		if s.isLoadSkill(c, s.To) {
			c.Arguments[s.LoadParam] = s.From
		}
	case OpAddSkill:
		if s.isLoadSkill(c, s.To) {
			return c, fmt.Errorf("skill %q is a noise skill the transform added; it has no counterpart", s.To)
		}
	}
	return c, nil
}

// renameAt renames key from to to in every object reached from v along
// path. Values that do not have the path's shape (an absent optional
// parameter, say) are left alone: there is nothing to rename.
func renameAt(v any, path []string, from, to string) error {
	if len(path) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		val, ok := m[from]
		if !ok {
			return nil
		}
		if _, clash := m[to]; clash {
			return fmt.Errorf("cannot rename argument %q to %q: both are present", from, to)
		}
		delete(m, from)
		m[to] = val
		return nil
	}
	if path[0] == ArrayItems {
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for _, e := range arr {
			if err := renameAt(e, path[1:], from, to); err != nil {
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
	return renameAt(child, path[1:], from, to)
}

func flatten(args map[string]any, param string, keys []string) error {
	v, ok := args[param]
	if !ok {
		return fmt.Errorf("argument %q is missing", param)
	}
	inner, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("argument %q is not an object", param)
	}
	delete(args, param)
	for k, val := range inner {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("argument %q has property %q that its schema does not declare", param, k)
		}
		if _, clash := args[k]; clash {
			return fmt.Errorf("property %q of %q clashes with a top-level argument", k, param)
		}
		args[k] = val
	}
	return nil
}

// copyArgs deep-copies decoded JSON arguments so a mapping never changes
// its caller's call.
func copyArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyJSON(v)
	}
	return out
}

func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyArgs(v)
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = copyJSON(e)
		}
		return c
	}
	return v
}

// SameCall reports whether a and b are the same call once their
// arguments are written as JSON (so 2 and 2.0, or nil and empty
// arguments, compare equal).
func SameCall(a, b Call) bool {
	if a.Name != b.Name {
		return false
	}
	na, errA := normalJSON(a.Arguments)
	nb, errB := normalJSON(b.Arguments)
	return errA == nil && errB == nil && na == nb
}

func normalJSON(args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	return string(out), err
}
