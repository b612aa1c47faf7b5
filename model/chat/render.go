package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Template names a chat template that Render reproduces.
type Template int

const (
	// Qwen3 is the chat_template of Qwen3's tokenizer_config.json: thinking
	// blocks kept only after the last user query, no default system prompt.
	Qwen3 Template = iota
	// Qwen25 is the template of the Qwen2.5 instruct models: a default
	// system prompt when none is given, assistant text written as is.
	Qwen25
)

// qwen25System is the system prompt Qwen2.5's template adds when a
// conversation has none.
const qwen25System = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// RenderOptions adjust how Render writes a conversation.
type RenderOptions struct {
	// Template selects the chat template; the zero value is Qwen3.
	Template Template
	// AddGenerationPrompt appends the opening of an assistant turn so that the
	// model continues with its answer.
	AddGenerationPrompt bool
	// DisableThinking appends an empty `<think>` block after the generation
	// prompt, as Qwen3's template does for enable_thinking=false, so the model
	// answers without reasoning first. Qwen25 ignores it.
	DisableThinking bool
	// VerbatimArguments writes each tool call's Arguments exactly as stored
	// (the template's branch for arguments given as a string) instead of
	// re-encoding them as the template's tojson filter does (the branch for
	// arguments given as an object). Use it to reproduce a model's own output
	// byte for byte, e.g. to reuse its cached prefix.
	VerbatimArguments bool
}

const (
	imStart = "<|im_start|>"
	imEnd   = "<|im_end|>"

	toolsHeader = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
	toolsFooter = "\n</tools>\n\nFor each function call, return a json object with function name and " +
		"arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n" +
		"{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>" + imEnd + "\n"
)

// Render writes messages and tools as the ChatML prompt text produced by the
// chat template opts.Template names (for Qwen3, the `chat_template` of Qwen3's
// tokenizer_config.json), with each tool passed as {"type": "function",
// "function": {...}} and rendered through the template's tojson filter. It
// fails on an unknown role or template, or on a tool or call name that would
// not stay a JSON string unescaped.
//
// Differences from the Jinja templates, all for inputs they cannot express
// usefully: an empty ReasoningContent counts as absent, a tool's empty
// Description or Parameters is left out of its JSON, and VerbatimArguments
// applies to Qwen25 too although its template always re-encodes.
func Render(messages []Message, tools []Tool, opts RenderOptions) (string, error) {
	if opts.Template != Qwen3 && opts.Template != Qwen25 {
		return "", fmt.Errorf("chat: render: unknown template %d", opts.Template)
	}
	qwen25 := opts.Template == Qwen25
	var b strings.Builder
	first := 0
	if len(tools) > 0 {
		b.WriteString(imStart + "system\n")
		if len(messages) > 0 && messages[0].Role == RoleSystem {
			b.WriteString(messages[0].Content + "\n\n")
			first = 1
		} else if qwen25 {
			b.WriteString(qwen25System + "\n\n")
		}
		b.WriteString(toolsHeader)
		for i, t := range tools {
			js, err := toolJSON(t)
			if err != nil {
				return "", fmt.Errorf("chat: render tool %d %q: %w", i, t.Name, err)
			}
			b.WriteByte('\n')
			b.Write(js)
		}
		b.WriteString(toolsFooter)
	} else if len(messages) > 0 && messages[0].Role == RoleSystem {
		b.WriteString(imStart + "system\n" + messages[0].Content + imEnd + "\n")
		first = 1
	} else if qwen25 {
		b.WriteString(imStart + "system\n" + qwen25System + imEnd + "\n")
	}

	lastQuery := lastQueryIndex(messages)
	for i := first; i < len(messages); i++ {
		m := messages[i]
		switch m.Role {
		case RoleUser, RoleSystem:
			b.WriteString(imStart + m.Role + "\n" + m.Content + imEnd + "\n")
		case RoleAssistant:
			keepThinking := !qwen25 && i > lastQuery
			if err := renderAssistant(&b, m, keepThinking, i == len(messages)-1, opts); err != nil {
				return "", fmt.Errorf("chat: render message %d: %w", i, err)
			}
		case RoleTool:
			if i == 0 || messages[i-1].Role != RoleTool {
				b.WriteString(imStart + "user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(messages)-1 || messages[i+1].Role != RoleTool {
				b.WriteString(imEnd + "\n")
			}
		default:
			return "", fmt.Errorf("chat: render message %d: unknown role %q", i, m.Role)
		}
	}
	if opts.AddGenerationPrompt {
		b.WriteString(imStart + "assistant\n")
		if opts.DisableThinking && !qwen25 {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String(), nil
}

// lastQueryIndex is the index of the last user turn that is a real query
// rather than tool results pasted into a user turn; assistant turns after it
// keep their reasoning in the prompt.
func lastQueryIndex(messages []Message) int {
	for i := len(messages) - 1; i >= 0; i-- {
		m := messages[i]
		if m.Role == RoleUser && !(strings.HasPrefix(m.Content, "<tool_response>") && strings.HasSuffix(m.Content, "</tool_response>")) {
			return i
		}
	}
	return len(messages) - 1
}

// renderAssistant writes an assistant turn. Qwen3 splits a <think> block off
// the content and keeps it only after the last query; Qwen2.5 has no
// thinking and writes the content as is.
func renderAssistant(b *strings.Builder, m Message, afterQuery, last bool, opts RenderOptions) error {
	content, reasoning := m.Content, m.ReasoningContent
	if opts.Template == Qwen25 {
		reasoning = ""
	} else if reasoning == "" {
		reasoning, content = SplitThinking(content)
	}
	b.WriteString(imStart + "assistant\n")
	if afterQuery && (last || reasoning != "") {
		b.WriteString("<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" + strings.TrimLeft(content, "\n"))
	} else {
		b.WriteString(content)
	}
	for j, c := range m.ToolCalls {
		if j > 0 || content != "" {
			b.WriteByte('\n')
		}
		if err := checkName(c.Name); err != nil {
			return fmt.Errorf("tool call %d: %w", j, err)
		}
		b.WriteString("<tool_call>\n{\"name\": \"" + c.Name + "\", \"arguments\": ")
		if opts.VerbatimArguments {
			b.Write(c.Arguments)
		} else {
			args, err := appendPyJSON(nil, c.Arguments)
			if err != nil {
				return fmt.Errorf("tool call %d %q: arguments: %w", j, c.Name, err)
			}
			b.Write(args)
		}
		b.WriteString("}\n</tool_call>")
	}
	b.WriteString(imEnd + "\n")
	return nil
}

// SplitThinking separates a Qwen3 answer into its reasoning (the text of the
// <think> block) and the answer after </think>, as Qwen3's chat template does:
// text without </think> is all answer. A live avatar speaks only the answer.
func SplitThinking(text string) (reasoning, answer string) {
	before, after, ok := cutLast(text, "</think>")
	if !ok {
		return "", text
	}
	r, _, _ := strings.Cut(before, "</think>")
	r = strings.TrimRight(r, "\n")
	if k := strings.LastIndex(r, "<think>"); k >= 0 {
		r = r[k+len("<think>"):]
	}
	return strings.TrimLeft(r, "\n"), strings.TrimLeft(after, "\n")
}

// cutLast splits s around the last occurrence of sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// checkName rejects names the template would paste into JSON text unescaped
// and so turn into invalid JSON.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("name %q is not valid UTF-8", name)
	}
	for _, c := range []byte(name) {
		if c == '"' || c == '\\' || c < 0x20 {
			return fmt.Errorf("name %q contains a character that needs JSON escaping", name)
		}
	}
	return nil
}

// toolJSON is a tool as the template's tojson writes an OpenAI-style tool dict.
func toolJSON(t Tool) ([]byte, error) {
	if err := checkName(t.Name); err != nil {
		return nil, err
	}
	b := []byte(`{"type": "function", "function": {"name": `)
	b = appendPyString(b, t.Name)
	if t.Description != "" {
		b = append(b, `, "description": `...)
		b = appendPyString(b, t.Description)
	}
	if len(t.Parameters) > 0 {
		b = append(b, `, "parameters": `...)
		var err error
		if b, err = appendPyJSON(b, t.Parameters); err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
	}
	return append(b, "}}"...), nil
}
