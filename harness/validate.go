package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// toolNamePattern is what OpenAI-compatible servers and Qwen templates
// accept as a function name.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate checks every field and cross-reference of h: names present and
// unique, known kinds and events, schemas that compile, sections for what
// the harness defines, limits inside their legal ranges. It returns an
// ErrorList naming each problem by its field path.
func Validate(h *Harness) error {
	v := &validator{}
	v.harness(h)
	if len(v.errs) > 0 {
		return v.errs
	}
	return nil
}

type validator struct{ errs ErrorList }

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) harness(h *Harness) {
	if strings.TrimSpace(h.Name) == "" {
		v.add("name", "is empty")
	}
	v.layout(h)
	v.skills(h)
	v.tools(h)
	v.hooks(h)
	v.pipeline(h)
}

func (v *validator) layout(h *Harness) {
	switch h.Layout.Style {
	case StyleMarkdown, StyleXML, StylePlain:
	case "":
		v.add("layout.style", "is empty (want markdown, xml or plain)")
	default:
		v.add("layout.style", "unknown style %q (want markdown, xml or plain)", h.Layout.Style)
	}
	if len(h.Layout.Sections) == 0 {
		v.add("layout.sections", "is empty: the prompt needs at least one section")
	}
	seen := map[string]int{}
	has := map[SectionKind]bool{}
	for i, s := range h.Layout.Sections {
		p := fmt.Sprintf("layout.sections[%d]", i)
		switch s.Kind {
		case SectionPersona, SectionRules, SectionSkills, SectionTools, SectionContext, SectionOutputFormat:
		case SectionCustom:
			if s.ID == "" {
				v.add(p+".id", "a custom section needs an id")
			}
		case "":
			v.add(p+".kind", "is empty (want persona, rules, skills, tools, context, output_format or custom)")
		default:
			v.add(p+".kind", "unknown section kind %q (want persona, rules, skills, tools, context, output_format or custom)", s.Kind)
		}
		if s.ID != "" && !isIdentifier(s.ID) {
			v.add(p+".id", "%q must be letters, digits, '_' or '-'", s.ID)
		}
		if first, dup := seen[s.Key()]; dup {
			v.add(p, "duplicate section %q (first is sections[%d]); give custom sections distinct ids", s.Key(), first)
		} else {
			seen[s.Key()] = i
		}
		has[s.Kind] = true
		v.listFormat(p+".format", s.Format)
		for j, it := range s.Items {
			if strings.TrimSpace(it) == "" {
				v.add(fmt.Sprintf("%s.items[%d]", p, j), "is empty")
			}
		}
	}
	if len(h.Skills) > 0 && !has[SectionSkills] {
		v.add("layout.sections", "the harness defines skills but the layout has no skills section, so the model would never see them")
	}
	if len(h.Tools) > 0 && !has[SectionTools] {
		v.add("layout.sections", "the harness defines tools but the layout has no tools section, so the model would never see them")
	}
}

func (v *validator) listFormat(path string, f ListFormat) {
	switch f {
	case "", ListBullets, ListNumbered, ListProse:
	default:
		v.add(path, "unknown list format %q (want bullets, numbered or prose)", f)
	}
}

func (v *validator) skills(h *Harness) {
	seen := map[string]int{}
	replies := 0
	for i, s := range h.Skills {
		p := fmt.Sprintf("skills[%d]", i)
		switch {
		case s.ID == "":
			v.add(p+".id", "is empty")
		case len(s.ID) > 64 || strings.IndexFunc(s.ID, unicode.IsSpace) >= 0:
			v.add(p+".id", "%q must be at most 64 bytes without spaces", s.ID)
		}
		if first, dup := seen[s.ID]; dup && s.ID != "" {
			v.add(p+".id", "duplicate skill id %q (first is skills[%d])", s.ID, first)
		} else {
			seen[s.ID] = i
		}
		switch s.Kind {
		case SkillReply:
			replies++
		case SkillStrategy:
		case "":
			v.add(p+".kind", "is empty (want reply or strategy)")
		default:
			v.add(p+".kind", "unknown skill kind %q (want reply or strategy)", s.Kind)
		}
		if strings.TrimSpace(s.Description) == "" {
			v.add(p+".description", "is empty: the prompt lists skills by id and description")
		}
		if s.Instructions == "" && len(s.Rules) == 0 && s.Plugin == "" {
			v.add(p, "skill %q has no content: give instructions, rules, or a plugin export", s.ID)
		}
		v.listFormat(p+".format", s.Format)
		for j, r := range s.Rules {
			if strings.TrimSpace(r.Text) == "" {
				v.add(fmt.Sprintf("%s.rules[%d].text", p, j), "is empty")
			}
		}
		v.pluginRef(p, s.Plugin, s.Export, false)
		if s.File != "" {
			v.add(p+".file", "skill file %q was not resolved; load the harness with Load", s.File)
		}
	}
	if h.Pipeline.RequireReplySkill && replies == 0 {
		v.add("pipeline.require_reply_skill", "is true but the harness has no reply skill to load")
	}
}

func (v *validator) pluginRef(path, plugin, export string, required bool) {
	switch {
	case required && plugin == "":
		v.add(path+".plugin", "is empty: name the plugin that implements it")
	case required && export == "":
		v.add(path+".export", "is empty: name the plugin export that implements it")
	case plugin != "" && export == "":
		v.add(path+".export", "is empty but plugin %q is set", plugin)
	case plugin == "" && export != "":
		v.add(path+".plugin", "is empty but export %q is set", export)
	}
}

func (v *validator) tools(h *Harness) {
	seen := map[string]int{}
	builtin := h.LoadSkillToolName()
	for i, t := range h.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if !toolNamePattern.MatchString(t.Name) {
			v.add(p+".name", "%q must be 1–64 letters, digits, '_' or '-'", t.Name)
		}
		if first, dup := seen[t.Name]; dup {
			v.add(p+".name", "duplicate tool name %q (first is tools[%d])", t.Name, first)
		} else {
			seen[t.Name] = i
		}
		if t.Name == builtin && len(h.Skills) > 0 {
			v.add(p+".name", "%q is the built-in load-skill tool's name", t.Name)
		}
		if strings.TrimSpace(t.Description) == "" {
			v.add(p+".description", "is empty: the model chooses tools by their descriptions")
		}
		if err := checkParameters(t.Parameters); err != nil {
			v.add(p+".parameters", "%v", err)
		} else {
			if err := checkCatalogArgs(t.Parameters, t.CatalogArgs, "a catalog id"); err != nil {
				v.add(p+".catalog_args", "%v", err)
			}
			if err := checkCatalogArgs(t.Parameters, t.QueryArgs, "an item query"); err != nil {
				v.add(p+".query_args", "%v", err)
			}
			for _, a := range t.QueryArgs {
				if slices.Contains(t.CatalogArgs, a) {
					v.add(p+".query_args", "%q is a catalog argument too: an argument holds an id or words, not both", a)
				}
			}
			if err := checkCatalogArgs(t.Parameters, t.VariantArgs, "a variant"); err != nil {
				v.add(p+".variant_args", "%v", err)
			}
			for _, a := range t.VariantArgs {
				if slices.Contains(t.CatalogArgs, a) || slices.Contains(t.QueryArgs, a) {
					v.add(p+".variant_args", "%q is a catalog or query argument too: an argument holds one kind of value", a)
				}
				if requiredArg(t.Parameters, a) {
					v.add(p+".variant_args", "%q is required: a variant argument must be one a call can leave out, as an item without variants does", a)
				}
			}
			if err := checkCountArgs(t.Parameters, t.CountArgs); err != nil {
				v.add(p+".count_args", "%v", err)
			}
			for _, a := range t.CountArgs {
				if requiredArg(t.Parameters, a) {
					v.add(p+".count_args", "%q is required: a count argument must be one a call can leave out, as a viewer who names no count does", a)
				}
			}
			for _, mp := range checkArgumentMap(t.Parameters, t.ArgumentMap) {
				v.add(fmt.Sprintf("%s.argument_map[%d]", p, mp.At), "tool %q: %s", t.Name, mp.Msg)
			}
		}
		v.pluginRef(p, t.Plugin, t.Export, true)
	}
}

// requiredArg reports whether the parameters schema requires the argument
// name (in the object that declares it).
func requiredArg(raw json.RawMessage, name string) bool {
	var schema map[string]any
	if json.Unmarshal(raw, &schema) != nil {
		return false
	}
	holder, _, key, ok := schemaArg(schema, name)
	if !ok {
		return false
	}
	required, _ := holder["required"].([]any)
	return slices.Contains(required, any(key))
}

// checkCatalogArgs requires each catalog (or query) argument to be a
// distinct property of the parameters, top-level or inside a top-level
// object ("spec.item_id"), that a string can satisfy, so the runtime can
// hold it to the catalog's ids (or words); what names the value in errors.
func checkCatalogArgs(raw json.RawMessage, args []string, what string) error {
	return eachArg(raw, args, func(name string, prop map[string]any) error {
		switch ty := prop["type"].(type) {
		case nil:
		case string:
			if ty != "string" {
				return fmt.Errorf("%q has type %q; %s is a string", name, ty, what)
			}
		default:
			return fmt.Errorf("%q must have type \"string\" (or none) to hold %s", name, what)
		}
		return nil
	})
}

// checkCountArgs requires each count argument to be a distinct integer
// (or number) property of the parameters, as checkCatalogArgs places them.
func checkCountArgs(raw json.RawMessage, args []string) error {
	return eachArg(raw, args, func(name string, prop map[string]any) error {
		if prop["type"] != "integer" && prop["type"] != "number" {
			return fmt.Errorf("%q must have type \"integer\" (or \"number\") to hold a count", name)
		}
		return nil
	})
}

// eachArg finds each of args, once, in the parameters schema raw and
// checks its property schema.
func eachArg(raw json.RawMessage, args []string, check func(name string, prop map[string]any) error) error {
	if len(args) == 0 {
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return fmt.Errorf("parameters: %v", err)
	}
	seen := map[string]bool{}
	for _, name := range args {
		if seen[name] {
			return fmt.Errorf("%q is listed twice", name)
		}
		seen[name] = true
		_, prop, _, ok := schemaArg(schema, name)
		if !ok {
			return fmt.Errorf("%q is not a property of the parameters (an argument renamed in the parameters is renamed here too)", name)
		}
		if err := check(name, prop); err != nil {
			return err
		}
	}
	return nil
}

// checkParameters requires a JSON Schema for an arguments object and
// compiles it, so a broken schema fails at load time, not on air.
func checkParameters(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fmt.Errorf("is missing: give a JSON Schema with \"type\": \"object\"")
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("must be a JSON Schema object")
	}
	if obj["type"] != "object" {
		return fmt.Errorf("must have \"type\": \"object\" (tool arguments are an object), got %v", jsonText(obj["type"]))
	}
	if _, err := CompileSchema(raw); err != nil {
		return err
	}
	return nil
}

func jsonText(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// CompileSchema compiles a tool's parameter schema (draft 2020-12 unless
// it says otherwise) without fetching remote references.
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noRemoteLoader{})
	const url = "mem://tool-parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %s", firstLeaf(err.Error()))
	}
	return s, nil
}

// firstLeaf shortens the library's nested report ("- at '/x': 'allOf'
// failed" lines, indented by depth) to its first innermost cause, which
// is the line a person needs.
func firstLeaf(report string) string {
	lines := strings.Split(report, "\n")
	depth := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "- at ") {
			continue
		}
		if i+1 == len(lines) || depth(lines[i+1]) <= depth(l) {
			return strings.TrimPrefix(strings.TrimSpace(l), "- ")
		}
	}
	return lines[0]
}

// noRemoteLoader refuses every $ref outside the document: a harness must
// be self-contained and loading it must never touch the network.
type noRemoteLoader struct{}

func (noRemoteLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference %s is outside the schema; harness schemas must be self-contained", url)
}

func (v *validator) hooks(h *Harness) {
	seen := map[string]int{}
	for i, k := range h.Hooks {
		p := fmt.Sprintf("hooks[%d]", i)
		if !isIdentifier(k.Name) {
			v.add(p+".name", "%q must be 1–64 letters, digits, '_' or '-'", k.Name)
		}
		if first, dup := seen[k.Name]; dup {
			v.add(p+".name", "duplicate hook name %q (first is hooks[%d])", k.Name, first)
		} else {
			seen[k.Name] = i
		}
		if !k.Event.Valid() {
			names := make([]string, 0, 7)
			for _, e := range HookEvents() {
				names = append(names, string(e))
			}
			v.add(p+".event", "unknown event %q (want one of %s)", k.Event, strings.Join(names, ", "))
		}
		v.pluginRef(p, k.Plugin, k.Export, true)
		switch k.OnFailure {
		case "", FailOpen, FailClosed:
		default:
			v.add(p+".on_failure", "unknown policy %q (want fail_open or fail_closed)", k.OnFailure)
		}
	}
}

func (v *validator) pipeline(h *Harness) {
	p := h.Pipeline
	v.limit("pipeline.reply_chars", p.ReplyChars, 1)
	v.limit("pipeline.tool_rounds", p.ToolRounds, 1)
	v.limit("pipeline.retries", p.Retries, 0)
	if p.LoadSkillTool != "" && !toolNamePattern.MatchString(p.LoadSkillTool) {
		v.add("pipeline.load_skill_tool", "%q must be 1–64 letters, digits, '_' or '-'", p.LoadSkillTool)
	}
	if p.LoadSkillParam != "" && !isIdentifier(p.LoadSkillParam) {
		v.add("pipeline.load_skill_param", "%q must be 1–64 letters, digits, '_' or '-'", p.LoadSkillParam)
	}
	switch p.Injection.Format {
	case "", InjectTags, InjectJSON, InjectProse:
	default:
		v.add("pipeline.injection.format", "unknown format %q (want tags, json or prose)", p.Injection.Format)
	}
	switch p.Injection.Position {
	case "", InjectSystem, InjectBeforeUser, InjectAfterUser:
	default:
		v.add("pipeline.injection.position", "unknown position %q (want system, before_user or after_user)", p.Injection.Position)
	}
	if p.Injection.Tag != "" && !isIdentifier(p.Injection.Tag) {
		v.add("pipeline.injection.tag", "%q must be letters, digits, '_' or '-'", p.Injection.Tag)
	}
	if p.RetryFeedback != "" && !strings.Contains(p.RetryFeedback, "{feedback}") {
		v.add("pipeline.retry_feedback", "must contain {feedback}, where the hook's feedback goes")
	}
}

func (v *validator) limit(path string, l Limit, floor int) {
	if l == (Limit{}) {
		v.add(path, "is missing: give value, min and max")
		return
	}
	if l.Min < floor {
		v.add(path+".min", "is %d, below the floor of %d", l.Min, floor)
	}
	if l.Max < l.Min {
		v.add(path+".max", "is %d, below min %d", l.Max, l.Min)
	}
	if l.Value < l.Min || l.Value > l.Max {
		v.add(path+".value", "is %d, outside the legal range [%d, %d]", l.Value, l.Min, l.Max)
	}
}

func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
