// Package harness describes the evolvable harness of a live-stream avatar
// agent as data: the prompt layout, Skills, tools, Hooks and the numeric
// limits of the prompt pipeline.
//
// A Harness is the complete, immutable description of what the model sees
// and may do in one version. Operators edit harness files every day; the
// model is trained (see Harness-Aware Training) to follow whatever harness
// it is given. Harness files are JSON (or YAML), decoded strictly, validated
// for every cross-reference, and identified by a content hash.
package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Harness is one version of an agent's harness.
type Harness struct {
	// Name is a human-readable name, e.g. "demo-beauty-stream".
	Name string `json:"name"`
	// Description says what this harness is for.
	Description string `json:"description,omitempty"`
	// Layout orders and styles the blocks of the system prompt.
	Layout Layout `json:"layout"`
	// Skills are listed in the prompt by id and description; the model
	// loads a skill's content with the load-skill tool (progressive disclosure).
	Skills []Skill `json:"skills,omitempty"`
	// Tools are the functions the model may call, besides the built-in
	// load-skill tool.
	Tools []Tool `json:"tools,omitempty"`
	// Hooks run at lifecycle events of a turn and decide what happens next.
	Hooks []Hook `json:"hooks,omitempty"`
	// Pipeline holds the numeric business limits and the conventions of
	// the prompt pipeline (load-skill tool, injected context, retries).
	Pipeline Pipeline `json:"pipeline"`
}

// LayoutStyle is how section titles and boundaries are written.
type LayoutStyle string

// Layout styles.
const (
	StyleMarkdown LayoutStyle = "markdown" // "## Title" headers
	StyleXML      LayoutStyle = "xml"      // <tag>…</tag> blocks
	StylePlain    LayoutStyle = "plain"    // "TITLE:" lines
)

// SectionKind names what a prompt section holds.
type SectionKind string

// Section kinds. Skills, tools and context are filled from the harness and
// the conversation; the others carry their own text and items.
const (
	SectionPersona      SectionKind = "persona"
	SectionRules        SectionKind = "rules"
	SectionSkills       SectionKind = "skills"
	SectionTools        SectionKind = "tools"
	SectionContext      SectionKind = "context"
	SectionOutputFormat SectionKind = "output_format"
	SectionCustom       SectionKind = "custom"
)

// Layout is the ordered list of system-prompt sections and their style.
type Layout struct {
	Style    LayoutStyle `json:"style"`
	Sections []Section   `json:"sections"`
}

// ListFormat is how a list of items is written out.
type ListFormat string

// List formats.
const (
	ListBullets  ListFormat = "bullets"
	ListNumbered ListFormat = "numbered"
	ListProse    ListFormat = "prose"
)

// Section is one block of the system prompt.
type Section struct {
	Kind SectionKind `json:"kind"`
	// ID distinguishes custom sections; it defaults to the kind.
	ID string `json:"id,omitempty"`
	// Title is written in the layout's style; empty means no title.
	Title string `json:"title,omitempty"`
	// Text is free text placed before the items.
	Text string `json:"text,omitempty"`
	// Items are list entries (rules, output constraints).
	Items []string `json:"items,omitempty"`
	// Format is how Items are written; default bullets.
	Format ListFormat `json:"format,omitempty"`
}

// Key returns the identity of the section inside a layout: its ID, or its
// kind when it has none.
func (s Section) Key() string {
	if s.ID != "" {
		return s.ID
	}
	return string(s.Kind)
}

// SkillKind separates the skills a reply depends on from optional ones.
type SkillKind string

// Skill kinds.
const (
	// SkillReply skills hold the rules for answering; when the pipeline
	// requires it, at least one must be loaded before a final reply.
	SkillReply SkillKind = "reply"
	// SkillStrategy skills compose tool-call chains (e.g. a coupon push).
	SkillStrategy SkillKind = "strategy"
)

// Skill is a unit of instructions the model loads on demand. Its content
// follows the Agent Skills SKILL.md layout: front matter with name,
// description and metadata, then Markdown instructions.
type Skill struct {
	// ID is what the model passes to the load-skill tool.
	ID   string    `json:"id"`
	Kind SkillKind `json:"kind"`
	// Description is what the prompt lists next to the id.
	Description string `json:"description"`
	// Version is the skill's own version, informational.
	Version string `json:"version,omitempty"`
	// Instructions is the free text before the rules.
	Instructions string `json:"instructions,omitempty"`
	// Rules are the skill's individual rules, in order.
	Rules []Rule `json:"rules,omitempty"`
	// Format is how Rules are written when the skill is loaded.
	Format ListFormat `json:"format,omitempty"`
	// Plugin and Export, when set, name a plugin export that computes the
	// skill's content at load time instead of (or on top of) the text here.
	Plugin string `json:"plugin,omitempty"`
	Export string `json:"export,omitempty"`
	// Metadata is free-form key/value data carried from SKILL.md.
	Metadata map[string]string `json:"metadata,omitempty"`
	// File, when set in a harness file, names a SKILL.md (relative to the
	// harness file) that supplies the fields left empty here. Load reads
	// it and clears File, so a loaded harness is self-contained.
	File string `json:"file,omitempty"`
}

// Rule is one instruction of a skill.
type Rule struct {
	Text string `json:"text"`
	// Essential rules carry the task; augmentation may drop the others.
	Essential bool `json:"essential,omitempty"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters"`
	// Plugin and Export name the plugin export that implements the tool.
	Plugin string `json:"plugin,omitempty"`
	Export string `json:"export,omitempty"`
	// CatalogArgs names the arguments (string properties of Parameters,
	// top-level or "object.property" inside a top-level object) whose value is the id of an item of the stream's catalog.
	// A runtime that knows the catalog holds the model to those ids: a
	// constrained decoder cannot write another, and a call naming another
	// is refused before the plugin runs. It is not shown to the model.
	CatalogArgs []string `json:"catalog_args,omitempty"`
	// QueryArgs names the arguments (string properties of Parameters, as
	// CatalogArgs names them) whose value names an item in words, as a lookup's query
	// does. A runtime that knows the catalog holds a constrained decoder to
	// the catalog's ids, names and aliases and to spans of the viewer's
	// message, so that a model cannot look up an item nobody named (a
	// compact model's habit on a catalog it was not trained on); the text
	// is the plugin's to resolve. It is not shown to the model.
	QueryArgs []string `json:"query_args,omitempty"`
	// VariantArgs names the arguments (string properties of Parameters, as
	// CatalogArgs names them, none required) whose value is a variant of an item: a
	// size or a colour as the catalog names it. A runtime that knows the
	// catalog holds a constrained decoder to the catalog's variant names,
	// and leaves the argument out where no item has a variant, so that a
	// model cannot ask for a "中号" nobody sells (a compact model's habit
	// with kinds it was not trained on). It is not shown to the model.
	VariantArgs []string `json:"variant_args,omitempty"`
	// CountArgs names the arguments (integer or number properties of Parameters, as
	// CatalogArgs names them, none required) whose value is how many of an
	// item the viewer orders. A runtime that knows the catalog holds a
	// constrained decoder to the counts the viewer's message states ("买3
	// 件", "buy 2"), and leaves the argument out where it states none, so
	// that the plugin's default (one) stands and a total is never of an
	// order nobody placed. It is not shown to the model.
	CountArgs []string `json:"count_args,omitempty"`
	// ArgumentMap renames arguments between the harness and the plugin:
	// Parameters (and CatalogArgs) use the harness's names, which the model
	// sees; the runtime gives the plugin the names its schema declares.
	// It is not shown to the model.
	ArgumentMap []ArgumentRename `json:"argument_map,omitempty"`
}

// CatalogParameters returns Parameters with each CatalogArgs property
// limited to ids, each QueryArgs property to words and each VariantArgs
// property to variants (JSON Schema "enum"s): the schema a constrained
// decoder holds the model's call to. An argument whose list is nil or
// empty keeps its own schema, except that with ids known an empty (not
// nil) variants list — a catalog without variants — leaves the variant
// arguments out. With no list in force it returns Parameters unchanged.
func (t Tool) CatalogParameters(ids, words, variants []string) (json.RawMessage, error) {
	held := func(args, values []string) bool { return len(args) > 0 && len(values) > 0 }
	if len(ids) == 0 {
		variants = nil // variants are held only where the catalog is known
	}
	noVariants := len(t.VariantArgs) > 0 && variants != nil && len(variants) == 0
	if !held(t.CatalogArgs, ids) && !held(t.QueryArgs, words) && !held(t.VariantArgs, variants) && !noVariants {
		return t.Parameters, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(t.Parameters, &schema); err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	for _, bind := range []struct {
		kind         string
		args, values []string
	}{{"catalog", t.CatalogArgs, ids}, {"query", t.QueryArgs, words}, {"variant", t.VariantArgs, variants}} {
		if len(bind.values) == 0 && (bind.kind != "variant" || !noVariants) {
			continue
		}
		for _, name := range bind.args {
			holder, prop, key, ok := schemaArg(schema, name)
			if !ok {
				return nil, fmt.Errorf("tool %q: %s argument %q is not a property of its parameters", t.Name, bind.kind, name)
			}
			if len(bind.values) == 0 {
				// No item has a variant: there is none to name.
				delete(holder["properties"].(map[string]any), key)
				continue
			}
			prop["enum"] = bind.values
		}
	}
	out, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	return out, nil
}

// CountParameters returns params (Parameters, or what CatalogParameters
// made of them) with each CountArgs property limited to counts, or left out
// where counts is empty: the schema a constrained decoder holds the
// model's call to when the catalog is known. Without CountArgs it returns
// params unchanged.
func (t Tool) CountParameters(params json.RawMessage, counts []int) (json.RawMessage, error) {
	if len(t.CountArgs) == 0 {
		return params, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(params, &schema); err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	for _, name := range t.CountArgs {
		holder, prop, key, ok := schemaArg(schema, name)
		if !ok {
			return nil, fmt.Errorf("tool %q: count argument %q is not a property of its parameters", t.Name, name)
		}
		if len(counts) == 0 {
			delete(holder["properties"].(map[string]any), key)
			continue
		}
		prop["enum"] = counts
	}
	out, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	return out, nil
}

// HookEvent is a point in the turn lifecycle where hooks run.
type HookEvent string

// Hook events, in the order a turn meets them.
const (
	EventSessionStart  HookEvent = "session_start"
	EventViewerMessage HookEvent = "viewer_message"
	EventBeforeModel   HookEvent = "before_model"
	EventBeforeTool    HookEvent = "before_tool"
	EventAfterTool     HookEvent = "after_tool"
	EventAfterResponse HookEvent = "after_response"
	EventNarrationTick HookEvent = "narration_tick"
)

// HookEvents lists every known event in lifecycle order.
func HookEvents() []HookEvent {
	return []HookEvent{EventSessionStart, EventViewerMessage, EventBeforeModel,
		EventBeforeTool, EventAfterTool, EventAfterResponse, EventNarrationTick}
}

// Valid reports whether e is a known event.
func (e HookEvent) Valid() bool {
	for _, k := range HookEvents() {
		if e == k {
			return true
		}
	}
	return false
}

// FailurePolicy says what a turn does when a hook itself fails (traps,
// times out, returns garbage).
type FailurePolicy string

// Failure policies.
const (
	// FailOpen treats a failed hook as allow: availability first.
	FailOpen FailurePolicy = "fail_open"
	// FailClosed treats a failed hook as deny: compliance first.
	FailClosed FailurePolicy = "fail_closed"
)

// Hook binds a plugin export to a lifecycle event.
type Hook struct {
	Name  string    `json:"name"`
	Event HookEvent `json:"event"`
	// Order sorts hooks of the same event; lower runs first.
	Order     int           `json:"order,omitempty"`
	Plugin    string        `json:"plugin"`
	Export    string        `json:"export"`
	OnFailure FailurePolicy `json:"on_failure,omitempty"`
	// Config is passed to the hook verbatim (e.g. banned words).
	Config json.RawMessage `json:"config,omitempty"`
}

// Action is what a hook decided.
type Action string

// Hook actions: the one decision contract for every hook.
const (
	ActionAllow   Action = "allow"   // go on unchanged
	ActionDeny    Action = "deny"    // stop this step; Reason says why
	ActionRewrite Action = "rewrite" // replace the text or the tool arguments
	ActionInject  Action = "inject"  // add Context for the model
	ActionRetry   Action = "retry"   // let the model try again after reading Feedback
)

// HookDecision is the result of one hook call.
type HookDecision struct {
	Action Action `json:"action"`
	// Reason explains a deny (shown in traces, not to viewers).
	Reason string `json:"reason,omitempty"`
	// Text replaces the message or reply on rewrite.
	Text string `json:"text,omitempty"`
	// Arguments replace a tool call's arguments on rewrite.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Context is added for the model on inject.
	Context string `json:"context,omitempty"`
	// Feedback is what the model reads before it tries again on retry.
	Feedback string `json:"feedback,omitempty"`
	// Call, on retry, names the tool the model's next answer must call, by
	// what runs it ("coupon_check", or "storefront/coupon_check"): the
	// harness's tool of that export, whatever the harness calls it. The
	// model writes the arguments. A hook that finds a fact missing asks
	// for the call that gives it.
	Call string `json:"call,omitempty"`
}

// Validate checks that the decision's fields fit its action.
func (d HookDecision) Validate() error {
	switch d.Action {
	case ActionAllow:
		return nil
	case ActionDeny:
		if d.Reason == "" {
			return fmt.Errorf("hook decision deny: reason is empty")
		}
	case ActionRewrite:
		if d.Text == "" && len(d.Arguments) == 0 {
			return fmt.Errorf("hook decision rewrite: needs text or arguments")
		}
		if len(d.Arguments) > 0 && !json.Valid(d.Arguments) {
			return fmt.Errorf("hook decision rewrite: arguments are not valid JSON")
		}
	case ActionInject:
		if d.Context == "" {
			return fmt.Errorf("hook decision inject: context is empty")
		}
	case ActionRetry:
		if d.Feedback == "" {
			return fmt.Errorf("hook decision retry: feedback is empty")
		}
	default:
		return fmt.Errorf("hook decision: unknown action %q (want allow, deny, rewrite, inject or retry)", d.Action)
	}
	if d.Call != "" && d.Action != ActionRetry {
		return fmt.Errorf("hook decision %s: call is for retry only", d.Action)
	}
	return nil
}

// ToolRunning returns the name of the harness's tool that an export runs:
// ref is the export ("coupon_check") or plugin and export
// ("storefront/coupon_check"). False when no tool of the harness runs it.
func (h *Harness) ToolRunning(ref string) (string, bool) {
	plugin, export, scoped := strings.Cut(ref, "/")
	if !scoped {
		export = plugin
	}
	for _, t := range h.Tools {
		if t.Export == export && (!scoped || t.Plugin == plugin) {
			return t.Name, true
		}
	}
	return "", false
}

// Limit is a numeric business limit with the range in which it is legal.
// Augmentation may move Value anywhere inside [Min, Max].
type Limit struct {
	Value int `json:"value"`
	Min   int `json:"min"`
	Max   int `json:"max"`
}

// InjectFormat is how hook-injected context is written for the model.
type InjectFormat string

// Inject formats.
const (
	InjectTags  InjectFormat = "tags"  // <context source="…">…</context>
	InjectJSON  InjectFormat = "json"  // {"context": …, "source": …}
	InjectProse InjectFormat = "prose" // "Note from <source>: …"
)

// InjectPosition is where injected context goes in the conversation.
type InjectPosition string

// Inject positions.
const (
	// InjectSystem appends injected context to the system prompt.
	InjectSystem InjectPosition = "system"
	// InjectBeforeUser places it in the last user turn, before the text.
	InjectBeforeUser InjectPosition = "before_user"
	// InjectAfterUser places it in the last user turn, after the text.
	InjectAfterUser InjectPosition = "after_user"
)

// Injection is how hook-injected context is presented.
type Injection struct {
	Format   InjectFormat   `json:"format"`
	Position InjectPosition `json:"position"`
	// Tag is the element name for the tags format; default "context".
	Tag string `json:"tag,omitempty"`
}

// Pipeline holds the numeric limits and conventions of a turn.
type Pipeline struct {
	// ReplyChars bounds the length of a spoken reply, in characters.
	ReplyChars Limit `json:"reply_chars"`
	// ToolRounds bounds the model ↔ tool rounds of a turn.
	ToolRounds Limit `json:"tool_rounds"`
	// Retries is the budget of hook-triggered retries per turn.
	Retries Limit `json:"retries"`
	// RequireReplySkill makes the runtime refuse a final reply before a
	// reply skill was loaded in the turn; a backend that can be told to
	// call a tool opens every turn with the load, so the model's first
	// choice is the skill.
	RequireReplySkill bool `json:"require_reply_skill,omitempty"`
	// LoadSkillTool is the name of the built-in tool that loads a skill;
	// default "load_skill".
	LoadSkillTool string `json:"load_skill_tool,omitempty"`
	// LoadSkillParam is the name of its skill-id argument; default "skill_id".
	LoadSkillParam string `json:"load_skill_param,omitempty"`
	// Injection presents hook-injected context.
	Injection Injection `json:"injection"`
	// RetryFeedback is the template of the message the model reads on a
	// hook retry; "{feedback}" is replaced by the hook's feedback.
	RetryFeedback string `json:"retry_feedback,omitempty"`
}

// Defaults used where a harness leaves a convention empty.
const (
	DefaultLoadSkillTool  = "load_skill"
	DefaultLoadSkillParam = "skill_id"
	DefaultInjectTag      = "context"
	DefaultRetryFeedback  = "Your previous reply was rejected: {feedback} Please answer again."
)

// LoadSkillToolName returns the name of the built-in load-skill tool.
func (h *Harness) LoadSkillToolName() string {
	if h.Pipeline.LoadSkillTool != "" {
		return h.Pipeline.LoadSkillTool
	}
	return DefaultLoadSkillTool
}

// LoadSkillParamName returns the argument name of the load-skill tool.
func (h *Harness) LoadSkillParamName() string {
	if h.Pipeline.LoadSkillParam != "" {
		return h.Pipeline.LoadSkillParam
	}
	return DefaultLoadSkillParam
}

// Skill returns the skill with the given id.
func (h *Harness) Skill(id string) (Skill, bool) {
	for _, s := range h.Skills {
		if s.ID == id {
			return s, true
		}
	}
	return Skill{}, false
}

// Tool returns the tool with the given name. The built-in load-skill tool
// is included, with its generated schema.
func (h *Harness) Tool(name string) (Tool, bool) {
	if name == h.LoadSkillToolName() && len(h.Skills) > 0 {
		return h.LoadSkillTool(), true
	}
	for _, t := range h.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// LoadSkillTool returns the definition of the built-in tool that loads a
// skill's content; its enum lists the skill ids of this harness.
func (h *Harness) LoadSkillTool() Tool {
	ids := make([]string, len(h.Skills))
	for i, s := range h.Skills {
		ids[i] = s.ID
	}
	// Structs rather than maps keep the key order Qwen-style schemas use.
	type property struct {
		Type        string   `json:"type"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
	}
	type object struct {
		Type                 string              `json:"type"`
		Properties           map[string]property `json:"properties"`
		Required             []string            `json:"required"`
		AdditionalProperties bool                `json:"additionalProperties"`
	}
	param := h.LoadSkillParamName()
	raw, _ := json.Marshal(object{ // strings and slices always marshal
		Type:       "object",
		Properties: map[string]property{param: {Type: "string", Description: "Id of the skill to load.", Enum: ids}},
		Required:   []string{param},
	})
	return Tool{
		Name:        h.LoadSkillToolName(),
		Description: "Load the full instructions of a skill by its id before using it.",
		Parameters:  raw,
	}
}

// AllTools returns the tools the model sees: the load-skill tool first
// (when the harness has skills), then the harness's tools in order.
func (h *Harness) AllTools() []Tool {
	out := make([]Tool, 0, len(h.Tools)+1)
	if len(h.Skills) > 0 {
		out = append(out, h.LoadSkillTool())
	}
	return append(out, h.Tools...)
}

// Clone returns a deep copy of h, so transforms never alias the original.
func (h *Harness) Clone() *Harness {
	c := *h
	c.Layout.Sections = make([]Section, len(h.Layout.Sections))
	for i, s := range h.Layout.Sections {
		s.Items = append([]string(nil), s.Items...)
		c.Layout.Sections[i] = s
	}
	c.Skills = make([]Skill, len(h.Skills))
	for i, s := range h.Skills {
		s.Rules = append([]Rule(nil), s.Rules...)
		if s.Metadata != nil {
			m := make(map[string]string, len(s.Metadata))
			for k, v := range s.Metadata {
				m[k] = v
			}
			s.Metadata = m
		}
		c.Skills[i] = s
	}
	c.Tools = make([]Tool, len(h.Tools))
	for i, t := range h.Tools {
		t.Parameters = append(json.RawMessage(nil), t.Parameters...)
		t.CatalogArgs = append([]string(nil), t.CatalogArgs...)
		t.QueryArgs = append([]string(nil), t.QueryArgs...)
		t.VariantArgs = append([]string(nil), t.VariantArgs...)
		t.CountArgs = append([]string(nil), t.CountArgs...)
		if t.ArgumentMap != nil {
			t.ArgumentMap = make([]ArgumentRename, len(h.Tools[i].ArgumentMap))
			for j, r := range h.Tools[i].ArgumentMap {
				r.In = append([]string(nil), r.In...)
				t.ArgumentMap[j] = r
			}
		}
		c.Tools[i] = t
	}
	c.Hooks = make([]Hook, len(h.Hooks))
	for i, k := range h.Hooks {
		k.Config = append(json.RawMessage(nil), k.Config...)
		c.Hooks[i] = k
	}
	return &c
}
