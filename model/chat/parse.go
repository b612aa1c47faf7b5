package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Tags that delimit a tool call in assistant text.
const (
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// ParseError reports malformed tool-call text.
type ParseError struct {
	// Offset is the byte offset in the parsed text where the problem is.
	Offset int
	// Problem says what is wrong.
	Problem string
}

// Error names the byte offset and the problem.
func (e *ParseError) Error() string {
	return fmt.Sprintf("chat: tool call at byte %d: %s", e.Offset, e.Problem)
}

// ParseAssistant splits assistant text into its plain content and the tool
// calls written as <tool_call>{"name": ..., "arguments": {...}}</tool_call>
// blocks. content is the text outside the blocks with surrounding white space
// trimmed. It fails with a *ParseError on an unclosed or unopened tag, invalid
// JSON, a missing or empty name, or arguments that are not a JSON object.
func ParseAssistant(text string) (content string, calls []ToolCall, err error) {
	var s ToolCallScanner
	var out strings.Builder
	collect := func(evs []Event) {
		for _, ev := range evs {
			if ev.Call != nil {
				calls = append(calls, *ev.Call)
			} else {
				out.WriteString(ev.Text)
			}
		}
	}
	evs, err := s.Write(text)
	collect(evs)
	if err != nil {
		return "", nil, err
	}
	evs, err = s.Close()
	collect(evs)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(out.String()), calls, nil
}

// parseCall decodes the JSON between the tags; offset is where body starts in
// the whole text, so errors point at the faulty byte.
func parseCall(body string, offset int) (ToolCall, error) {
	lead := len(body) - len(strings.TrimLeft(body, " \t\r\n"))
	trimmed := strings.TrimSpace(body)
	if trimmed == "" {
		return ToolCall{}, &ParseError{offset, "empty tool call"}
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		at := offset + lead
		if se, ok := err.(*json.SyntaxError); ok {
			at += int(se.Offset) - 1 // Offset counts the bad byte as read
		}
		return ToolCall{}, &ParseError{at, "invalid JSON: " + err.Error()}
	}
	if dec.More() || int(dec.InputOffset()) != len(trimmed) {
		return ToolCall{}, &ParseError{offset + lead + int(dec.InputOffset()), "trailing data after the JSON object"}
	}
	if raw == nil {
		return ToolCall{}, &ParseError{offset + lead, "tool call is null, want a JSON object"}
	}
	nameRaw, ok := raw["name"]
	if !ok {
		return ToolCall{}, &ParseError{offset + lead, `missing "name"`}
	}
	var name string
	if err := json.Unmarshal(nameRaw, &name); err != nil {
		return ToolCall{}, &ParseError{offset + lead, fmt.Sprintf(`"name" is %s, want a string`, nameRaw)}
	}
	if name == "" {
		return ToolCall{}, &ParseError{offset + lead, `"name" is empty`}
	}
	args, ok := raw["arguments"]
	if !ok {
		return ToolCall{}, &ParseError{offset + lead, fmt.Sprintf(`call of %q: missing "arguments"`, name)}
	}
	if len(args) == 0 || args[0] != '{' {
		return ToolCall{}, &ParseError{offset + lead, fmt.Sprintf(`call of %q: "arguments" is %.40s, want a JSON object`, name, args)}
	}
	return ToolCall{Name: name, Arguments: bytes.Clone(args)}, nil
}

// Event is one piece of a streamed assistant message: either plain text or a
// complete tool call.
type Event struct {
	// Text is plain text to pass on; empty when Call is set.
	Text string
	// Call is a complete tool call, or nil.
	Call *ToolCall
}

// ToolCallScanner splits streamed assistant text into plain text and tool
// calls as it arrives. Text that might be the start of <tool_call> is held back
// until the next write decides it; a call is emitted once its closing tag
// arrives. The zero value is ready to use. A malformed call yields a
// *ParseError from the Write that completes it; the scanner drops that block
// and carries on after it.
type ToolCallScanner struct {
	buf    strings.Builder // held text: a possible tag prefix, or a call body
	inCall bool
	start  int // offset in the whole stream of what buf holds
}

// Write feeds the next chunk of text and returns the events it completes,
// together with the first *ParseError met in this chunk, if any.
func (s *ToolCallScanner) Write(chunk string) ([]Event, error) {
	s.buf.WriteString(chunk)
	pending := s.buf.String()
	s.buf.Reset()
	var evs []Event
	var firstErr error
	for {
		if !s.inCall {
			if i := strings.Index(pending, ToolCallOpen); i >= 0 {
				if k := strings.Index(pending[:i], ToolCallClose); k >= 0 && firstErr == nil {
					firstErr = &ParseError{s.start + k, "</tool_call> without an opening <tool_call>"}
				}
				evs = appendText(evs, pending[:i])
				s.start += i + len(ToolCallOpen)
				pending = pending[i+len(ToolCallOpen):]
				s.inCall = true
				continue
			}
			// Hold back what could still become either tag, so that a stray
			// closing tag split across writes is caught as in one piece.
			keep := max(partialSuffix(pending, ToolCallOpen), partialSuffix(pending, ToolCallClose))
			emit := pending[:len(pending)-keep]
			if k := strings.Index(emit, ToolCallClose); k >= 0 && firstErr == nil {
				firstErr = &ParseError{s.start + k, "</tool_call> without an opening <tool_call>"}
			}
			evs = appendText(evs, emit)
			s.start += len(emit)
			s.buf.WriteString(pending[len(emit):])
			return evs, firstErr
		}
		end := strings.Index(pending, ToolCallClose)
		if end < 0 {
			s.buf.WriteString(pending)
			return evs, firstErr
		}
		call, err := parseCall(pending[:end], s.start)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
		} else {
			evs = append(evs, Event{Call: &call})
		}
		s.start += end + len(ToolCallClose)
		pending = pending[end+len(ToolCallClose):]
		s.inCall = false
	}
}

// InCall reports whether the text so far has opened a tool call that is
// not closed yet: the moment for a decoder to constrain what follows.
func (s *ToolCallScanner) InCall() bool { return s.inCall }

// Close ends the stream: it returns held-back text, or a *ParseError when a
// tool call was opened and never closed.
func (s *ToolCallScanner) Close() ([]Event, error) {
	rest := s.buf.String()
	s.buf.Reset()
	if s.inCall {
		s.inCall = false
		return nil, &ParseError{s.start - len(ToolCallOpen), "unclosed <tool_call>: no </tool_call> before the end of the text"}
	}
	s.start += len(rest)
	return appendText(nil, rest), nil
}

func appendText(evs []Event, text string) []Event {
	if text == "" {
		return evs
	}
	return append(evs, Event{Text: text})
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag, i.e. text that could still become tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
