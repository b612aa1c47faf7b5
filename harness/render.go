package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chat roles, as ChatML writes them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat turn in ChatML roles. Assistant turns may carry tool
// calls; tool turns carry one call's result.
type Message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Name is the tool whose result a tool turn carries.
	Name string `json:"name,omitempty"`
	// ToolCallID is the ID of the call whose result a tool turn carries.
	// OpenAI-compatible servers pair results with calls by it; ChatML has
	// no place for it, so it never reaches a rendered prompt's text.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a call the model made: a tool name and its arguments object.
type ToolCall struct {
	// ID names the call within its conversation: the id an
	// OpenAI-compatible server gave it, or one the runtime made. Like
	// Message.ToolCallID it stays out of ChatML.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ContextItem is one piece of stream context (the featured item, the
// active coupon, the stock of an item) shown in the context section.
type ContextItem struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// InjectedContext is context a hook added for the model this turn.
type InjectedContext struct {
	Source string `json:"source"` // the hook's name
	Text   string `json:"text"`
}

// Conversation is what the runtime knows at the moment a prompt is built.
type Conversation struct {
	// Context is the stream's current state, rendered in the context section.
	Context []ContextItem `json:"context,omitempty"`
	// Messages is the turn history after the system prompt.
	Messages []Message `json:"messages"`
	// Injected is hook context for this turn, placed as the pipeline says.
	Injected []InjectedContext `json:"injected,omitempty"`
}

// FunctionSpec is a tool in the form Qwen2/Qwen3 chat templates and
// OpenAI-compatible servers take: {"type": "function", "function": {…}}.
type FunctionSpec struct {
	Type     string       `json:"type"`
	Function FunctionBody `json:"function"`
}

// FunctionBody is the inside of a FunctionSpec.
type FunctionBody struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Prompt is a rendered harness: the chat messages and the tool specs.
type Prompt struct {
	Messages []Message      `json:"messages"`
	Tools    []FunctionSpec `json:"tools"`
}

// RenderOptions tune Render.
type RenderOptions struct {
	// OmitToolsSection leaves the tool listing out of the system prompt,
	// for servers that apply their own chat template to Prompt.Tools.
	OmitToolsSection bool
}

// Render turns a harness and a conversation into chat messages: a system
// prompt built from the layout's sections in order, then the history, with
// hook-injected context placed as the pipeline says. Rendering is
// deterministic: the same inputs give the same bytes.
//
// h must have passed Validate (Load, Parse and the runtime's Swap do it);
// Render runs on every model step of a turn, so it only re-checks what it
// relies on (the layout style), not the schemas.
func Render(h *Harness, conv Conversation, opts RenderOptions) (Prompt, error) {
	switch h.Layout.Style {
	case StyleMarkdown, StyleXML, StylePlain:
	default:
		return Prompt{}, fmt.Errorf("harness %q: layout.style %q is not markdown, xml or plain; validate the harness first", h.Name, h.Layout.Style)
	}
	tools := h.AllTools()
	specs := make([]FunctionSpec, len(tools))
	for i, t := range tools {
		specs[i] = FunctionSpec{Type: "function", Function: FunctionBody{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	var blocks []string
	for _, s := range h.Layout.Sections {
		if s.Kind == SectionTools && opts.OmitToolsSection {
			continue
		}
		body := sectionBody(h, s, specs, conv)
		if body == "" {
			continue
		}
		blocks = append(blocks, styleBlock(h.Layout.Style, s, body))
	}
	pos := h.Pipeline.Injection.Position
	if pos == "" {
		pos = InjectSystem
	}
	injected := make([]string, len(conv.Injected))
	for i, c := range conv.Injected {
		injected[i] = h.FormatInjection(c)
	}
	if pos == InjectSystem && len(injected) > 0 {
		blocks = append(blocks, strings.Join(injected, "\n"))
	}
	msgs := make([]Message, 0, len(conv.Messages)+1)
	msgs = append(msgs, Message{Role: RoleSystem, Content: strings.Join(blocks, "\n\n")})
	for _, m := range conv.Messages {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool:
		default:
			return Prompt{}, fmt.Errorf("harness %q: conversation message with role %q (want user, assistant or tool)", h.Name, m.Role)
		}
		m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
		msgs = append(msgs, m)
	}
	if pos != InjectSystem && len(injected) > 0 {
		last := -1
		for i := len(msgs) - 1; i > 0; i-- {
			if msgs[i].Role == RoleUser {
				last = i
				break
			}
		}
		if last < 0 {
			return Prompt{}, fmt.Errorf("harness %q: injection position %s needs a user message", h.Name, pos)
		}
		note := strings.Join(injected, "\n")
		if pos == InjectBeforeUser {
			msgs[last].Content = note + "\n\n" + msgs[last].Content
		} else {
			msgs[last].Content = msgs[last].Content + "\n\n" + note
		}
	}
	return Prompt{Messages: msgs, Tools: specs}, nil
}

// LoadSkillPlaceholder in a section's text is replaced by the name of the
// load-skill tool, so that renaming the tool keeps the prompt consistent.
const LoadSkillPlaceholder = "{load_skill}"

func sectionBody(h *Harness, s Section, specs []FunctionSpec, conv Conversation) string {
	var parts []string
	if t := strings.TrimSpace(s.Text); t != "" {
		parts = append(parts, strings.ReplaceAll(t, LoadSkillPlaceholder, h.LoadSkillToolName()))
	}
	switch s.Kind {
	case SectionSkills:
		items := make([]string, len(h.Skills))
		for i, sk := range h.Skills {
			items[i] = sk.ID + ": " + sk.Description
		}
		if len(items) > 0 {
			parts = append(parts, FormatList(items, listOr(s.Format, ListBullets)))
		}
	case SectionTools:
		if len(specs) > 0 {
			parts = append(parts, toolsBlock(specs))
		}
	case SectionContext:
		for _, c := range conv.Context {
			if c.Title == "" {
				parts = append(parts, c.Text)
			} else {
				parts = append(parts, c.Title+": "+c.Text)
			}
		}
	}
	if len(s.Items) > 0 {
		parts = append(parts, FormatList(s.Items, listOr(s.Format, ListBullets)))
	}
	return strings.Join(parts, "\n")
}

func listOr(f, def ListFormat) ListFormat {
	if f == "" {
		return def
	}
	return f
}

// toolsBlock lists tools the way Qwen2/Qwen3 chat templates do: one JSON
// object per line inside <tools>, then how to write a call.
func toolsBlock(specs []FunctionSpec) string {
	var b strings.Builder
	b.WriteString("<tools>")
	for _, s := range specs {
		b.WriteByte('\n')
		b.WriteString(pythonJSON(s))
	}
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	return b.String()
}

// pythonJSON encodes v as Python's json.dumps does by default (", " and
// ": " separators, non-ASCII kept), which is what the Qwen templates'
// tojson filter produces; key order is kept as written.
func pythonJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	compact := bytes.TrimRight(buf.Bytes(), "\n")
	var out strings.Builder
	inString, escaped := false, false
	for _, c := range compact {
		out.WriteByte(c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

// styleBlock writes one section in the layout's style.
func styleBlock(style LayoutStyle, s Section, body string) string {
	switch style {
	case StyleXML:
		tag := s.Key()
		if s.Title != "" {
			return fmt.Sprintf("<%s title=%s>\n%s\n</%s>", tag, strconv.Quote(s.Title), body, tag)
		}
		return fmt.Sprintf("<%s>\n%s\n</%s>", tag, body, tag)
	case StylePlain:
		if s.Title != "" {
			return s.Title + ":\n" + body
		}
		return body
	default:
		if s.Title != "" {
			return "## " + s.Title + "\n\n" + body
		}
		return body
	}
}

// FormatList writes items as bullets, a numbered list or running prose.
// Prose adds sentence punctuation where an item lacks it (a full stop, or
// "。" after Chinese text).
func FormatList(items []string, f ListFormat) string {
	if f == ListProse {
		var b strings.Builder
		for i, it := range items {
			it = strings.TrimSpace(it)
			if i > 0 && !lastIsCJK(b.String()) {
				b.WriteByte(' ')
			}
			b.WriteString(it)
			if !endsSentence(it) {
				if lastIsCJK(it) {
					b.WriteString("。")
				} else {
					b.WriteByte('.')
				}
			}
		}
		return b.String()
	}
	lines := make([]string, len(items))
	for i, it := range items {
		lines[i] = listPrefix(f, i) + it
	}
	return strings.Join(lines, "\n")
}

func lastIsCJK(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isCJK(r) || r == '。'
}

func listPrefix(f ListFormat, i int) string {
	if f == ListNumbered {
		return strconv.Itoa(i+1) + ". "
	}
	return "- "
}

// SkillContent is what the load-skill tool returns for a skill: its
// instructions, then its rules in the skill's list format. Content that a
// plugin computes is appended by the runtime.
func SkillContent(s Skill) string {
	rules := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		rules[i] = r.Text
	}
	var parts []string
	if s.Instructions != "" {
		parts = append(parts, s.Instructions)
	}
	if len(rules) > 0 {
		parts = append(parts, FormatList(rules, listOr(s.Format, ListBullets)))
	}
	return strings.Join(parts, "\n\n")
}

// FormatInjection writes hook-injected context in the pipeline's format.
func (h *Harness) FormatInjection(c InjectedContext) string {
	inj := h.Pipeline.Injection
	switch inj.Format {
	case InjectJSON:
		return pythonJSON(struct {
			Source  string `json:"source"`
			Context string `json:"context"`
		}{c.Source, c.Text})
	case InjectProse:
		return fmt.Sprintf("Note from %s: %s", c.Source, c.Text)
	default:
		tag := inj.Tag
		if tag == "" {
			tag = DefaultInjectTag
		}
		return fmt.Sprintf("<%s source=%s>%s</%s>", tag, strconv.Quote(c.Source), c.Text, tag)
	}
}

// ReplySkillFeedback is the feedback the model reads when it answers
// before loading a reply skill, which RequireReplySkill forbids. The
// runtime sends it and augmentation reproduces it, so both say the same.
func (h *Harness) ReplySkillFeedback() string {
	return fmt.Sprintf("Load a reply skill with %s before you answer.", h.LoadSkillToolName())
}

// RetryMessage is the text the model reads when a hook asks it to try
// again, built from the pipeline's feedback template.
func (h *Harness) RetryMessage(feedback string) string {
	tmpl := h.Pipeline.RetryFeedback
	if tmpl == "" {
		tmpl = DefaultRetryFeedback
	}
	return strings.ReplaceAll(tmpl, "{feedback}", feedback)
}
