package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/livehat/livehat/model/chat"
)

// ToolCallError is a tool call the server returned that could not be read
// as a call: its arguments are not a JSON object even after repair, or the
// call has no name. The call is left out of the message's ToolCalls, so that
// nothing runs on garbage, and reported here instead.
type ToolCallError struct {
	// Index is the call's position among all the calls of the answer.
	Index int
	// ID and Name are the server's, when it sent them.
	ID, Name string
	// Arguments is the text the server sent as the arguments.
	Arguments string
	// Err says what is wrong.
	Err error
}

// Error names the call, its arguments and what is wrong with them.
func (e *ToolCallError) Error() string {
	return fmt.Sprintf("tool call %d %q: arguments %.80q: %v", e.Index, e.Name, e.Arguments, e.Err)
}

// Unwrap returns what is wrong.
func (e *ToolCallError) Unwrap() error { return e.Err }

// Call is the unreadable call as a caller can keep it in its conversation:
// its arguments' text as a JSON string (valid JSON, but not the object a
// tool takes, so a schema check fails on it and says so) and the server's
// id, which the client remembers like the ids of readable calls.
func (e *ToolCallError) Call() chat.ToolCall {
	text, _ := json.Marshal(e.Arguments)
	return chat.ToolCall{ID: e.ID, Name: e.Name, Arguments: text}
}

// repairObject returns text as a JSON object. Models writing JSON by hand
// leave raw newlines and tabs inside strings (invalid JSON, but unambiguous),
// and some servers encode the object a second time as a JSON string; both
// are repaired. Anything else that is not an object is an error that says
// where the JSON breaks.
func repairObject(text string) (json.RawMessage, error) {
	b := bytes.TrimSpace([]byte(text))
	if len(b) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(b) {
		b = escapeControlInStrings(b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, err)
		}
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	switch v := v.(type) {
	case map[string]any:
		return json.RawMessage(b), nil
	case string:
		inner := bytes.TrimSpace([]byte(v))
		if len(inner) > 0 && inner[0] == '{' {
			if obj, err := repairObject(v); err == nil {
				return obj, nil
			}
		}
		return nil, errors.New("a JSON string, want an object")
	case nil:
		return nil, errors.New("null, want an object")
	default:
		return nil, fmt.Errorf("a JSON %T, want an object", v)
	}
}

// escapeControlInStrings escapes the control characters that appear raw
// inside JSON strings, leaving the rest of the text as it is.
func escapeControlInStrings(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case !inString:
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			switch c {
			case '\n':
				out = append(out, `\n`...)
			case '\r':
				out = append(out, `\r`...)
			case '\t':
				out = append(out, `\t`...)
			default:
				out = append(out, fmt.Sprintf(`\u%04x`, c)...)
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// callFromWire reads a server's tool call, repairing its arguments where
// repairObject can.
func callFromWire(index int, c wireToolCall) (chat.ToolCall, *ToolCallError) {
	if c.Function.Name == "" {
		return chat.ToolCall{}, &ToolCallError{Index: index, ID: c.ID, Arguments: c.Function.Arguments, Err: errors.New("the call has no name")}
	}
	args, err := repairObject(c.Function.Arguments)
	if err != nil {
		return chat.ToolCall{}, &ToolCallError{Index: index, ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments, Err: err}
	}
	return chat.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args}, nil
}

// ParseContentToolCalls recovers the tool calls a model wrote in its text
// as <tool_call>{"name": …, "arguments": {…}}</tool_call> blocks, the Qwen
// rendering, for servers that pass them through as content (a chat template
// without tool support). It returns the text outside the blocks, trimmed,
// the calls, and an error for each block that is not a readable call. A
// last block left unclosed (the model stopped after the object) counts as
// closed. Arguments are repaired as for calls the server parsed.
func ParseContentToolCalls(content string) (text string, calls []chat.ToolCall, errs []*ToolCallError) {
	var out strings.Builder
	rest := content
	for {
		open := strings.Index(rest, chat.ToolCallOpen)
		if open < 0 {
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:open])
		rest = rest[open+len(chat.ToolCallOpen):]
		body := rest
		if end := strings.Index(rest, chat.ToolCallClose); end >= 0 {
			body, rest = rest[:end], rest[end+len(chat.ToolCallClose):]
		} else {
			rest = ""
		}
		index := len(calls) + len(errs)
		call, err := parseCallBody(body)
		if err != nil {
			err.Index = index
			errs = append(errs, err)
			continue
		}
		calls = append(calls, call)
	}
	return strings.TrimSpace(out.String()), calls, errs
}

// parseCallBody reads the object inside one <tool_call> block.
func parseCallBody(body string) (chat.ToolCall, *ToolCallError) {
	obj, err := repairObject(body)
	if err != nil {
		return chat.ToolCall{}, &ToolCallError{Arguments: strings.TrimSpace(body), Err: fmt.Errorf("the block is %v", err)}
	}
	var call struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(obj, &call); err != nil || call.Name == nil || *call.Name == "" {
		return chat.ToolCall{}, &ToolCallError{Arguments: strings.TrimSpace(body), Err: errors.New(`the block has no "name" string`)}
	}
	argText := string(call.Arguments)
	if len(call.Arguments) > 0 && call.Arguments[0] == '"' {
		var s string
		if json.Unmarshal(call.Arguments, &s) == nil {
			argText = s // arguments written as a string holding the object
		}
	}
	if string(call.Arguments) == "null" {
		argText = ""
	}
	args, err := repairObject(argText)
	if err != nil {
		return chat.ToolCall{}, &ToolCallError{Name: *call.Name, Arguments: argText, Err: err}
	}
	return chat.ToolCall{Name: *call.Name, Arguments: args}, nil
}

// idMemory remembers the ids a server gave its tool calls, by tool name
// and arguments, so that a caller whose messages do not carry ids (a
// teacher loop that keeps only names and arguments) sends the server's own
// ids back with the calls and their results. Two calls of the same tool
// with the same arguments share one entry, so a caller that can keep the
// ids (the runtime does) should. It holds at most maxRemembered calls,
// dropping the oldest.
type idMemory struct {
	mu    sync.Mutex
	ids   map[string]string
	order []string
}

const maxRemembered = 4096

func callKey(name string, args json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		return name + "\x00" + string(args)
	}
	return name + "\x00" + compact.String()
}

func (m *idMemory) remember(calls []chat.ToolCall) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[string]string{}
	}
	for _, c := range calls {
		if c.ID == "" {
			continue
		}
		k := callKey(c.Name, c.Arguments)
		if _, ok := m.ids[k]; !ok {
			m.order = append(m.order, k)
		}
		m.ids[k] = c.ID
	}
	for len(m.order) > maxRemembered {
		delete(m.ids, m.order[0])
		m.order = m.order[1:]
	}
}

func (m *idMemory) lookup(name string, args json.RawMessage) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[callKey(name, args)]
}

// assignIDs gives every assistant tool call an id and every tool message
// the id and name of the call it answers, as the OpenAI format requires:
// ids the messages carry are kept, then ids the server gave the same call
// (memory), then ids made from the call's position, which stay the same on
// every later turn of the conversation so the prompt's bytes do not change.
// An id an earlier call of the conversation already has is replaced by the
// positional one, and the tool messages that answer the call by the id it
// was given follow it, first unanswered call first. A tool message without
// an id answers the first unanswered call of the assistant turn before it
// with its tool name, or else the first unanswered one.
func assignIDs(msgs []chat.Message, memory *idMemory) []chat.Message {
	out := make([]chat.Message, len(msgs))
	used := map[string]bool{}
	type pending struct {
		id, given, name string // given: the id the caller's message had
		answered        bool
	}
	var open []pending
	for i, m := range msgs {
		switch {
		case m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0:
			calls := make([]chat.ToolCall, len(m.ToolCalls))
			open = open[:0]
			for j, c := range m.ToolCalls {
				given := c.ID
				if c.ID == "" && memory != nil {
					c.ID = memory.lookup(c.Name, c.Arguments)
				}
				if c.ID == "" || used[c.ID] {
					c.ID = fmt.Sprintf("call_m%d_%d", i, j)
				}
				used[c.ID] = true
				calls[j] = c
				open = append(open, pending{id: c.ID, given: given, name: c.Name})
			}
			m.ToolCalls = calls
		case m.Role == chat.RoleTool:
			match := -1
			for k := range open {
				if open[k].answered {
					continue
				}
				if m.ToolCallID != "" && open[k].id == m.ToolCallID {
					match = k
					break
				}
				if m.ToolCallID != "" && match < 0 && open[k].given == m.ToolCallID {
					match = k // the id the call had before it was replaced
				}
				if m.ToolCallID == "" && match < 0 && (m.Name == "" || open[k].name == m.Name) {
					match = k
				}
			}
			if match < 0 && m.ToolCallID == "" {
				for k := range open {
					if !open[k].answered {
						match = k
						break
					}
				}
			}
			if match >= 0 {
				open[match].answered = true
				m.ToolCallID = open[match].id
				if m.Name == "" {
					m.Name = open[match].name
				}
			}
		case m.Role == chat.RoleUser || m.Role == chat.RoleSystem:
			open = open[:0]
		}
		out[i] = m
	}
	return out
}
