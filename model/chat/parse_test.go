package chat

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAssistant(t *testing.T) {
	text := "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"杭州\"}}\n</tool_call>\n" +
		"<tool_call>{\"arguments\": {}, \"name\": \"now\"}</tool_call>"
	content, calls, err := ParseAssistant(text)
	if err != nil {
		t.Fatal(err)
	}
	if content != "Let me check." {
		t.Errorf("content = %q", content)
	}
	want := []ToolCall{
		{Name: "get_weather", Arguments: json.RawMessage(`{"city": "杭州"}`)},
		{Name: "now", Arguments: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %+v, want %+v", calls, want)
	}

	content, calls, err = ParseAssistant("  just text <tool  \n")
	if err != nil || content != "just text <tool" || calls != nil {
		t.Errorf("plain text: got %q %v %v", content, calls, err)
	}
}

func TestParseAssistantErrors(t *testing.T) {
	tests := []struct {
		text    string
		offset  int
		problem string
	}{
		{"hi <tool_call>{\"name\": \"f\", \"arguments\": {}}", 3, "unclosed <tool_call>"},
		{"hi </tool_call>", 3, "without an opening"},
		{"<tool_call>{\"name\": \"f\", \"arguments\": {]}</tool_call>", 39, "invalid JSON"},
		{"<tool_call> {\"arguments\": {}}</tool_call>", 12, `missing "name"`},
		{"<tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>", 11, `"name" is 3, want a string`},
		{"<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>", 11, `"name" is empty`},
		{"<tool_call>{\"name\": \"f\"}</tool_call>", 11, `missing "arguments"`},
		{"<tool_call>{\"name\": \"f\", \"arguments\": \"{}\"}</tool_call>", 11, `"arguments" is "{}", want a JSON object`},
		{"<tool_call>{\"name\": \"f\", \"arguments\": {}} {}</tool_call>", 42, "trailing data"},
		{"<tool_call>[1]</tool_call>", 11, "invalid JSON"},
		{"<tool_call>null</tool_call>", 11, "null"},
		{"<tool_call>\n</tool_call>", 11, "empty tool call"},
	}
	for _, tt := range tests {
		_, _, err := ParseAssistant(tt.text)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseAssistant(%q) err = %v, want a *ParseError", tt.text, err)
			continue
		}
		if pe.Offset != tt.offset || !strings.Contains(pe.Problem, tt.problem) {
			t.Errorf("ParseAssistant(%q) = %v, want offset %d and %q", tt.text, err, tt.offset, tt.problem)
		}
	}
}

// scanAll feeds text to a scanner in pieces cut at the given lengths and
// collects what it emits, merging adjacent text events.
func scanAll(text string, cuts []int) (string, []ToolCall, error) {
	var s ToolCallScanner
	var out strings.Builder
	var calls []ToolCall
	var firstErr error
	take := func(evs []Event, err error) {
		for _, ev := range evs {
			if ev.Call != nil {
				calls = append(calls, *ev.Call)
			} else {
				out.WriteString(ev.Text)
			}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, n := range cuts {
		n = min(n, len(text))
		take(s.Write(text[:n]))
		text = text[n:]
	}
	take(s.Write(text))
	take(s.Close())
	return out.String(), calls, firstErr
}

func TestToolCallScannerStreams(t *testing.T) {
	text := "Sure <b>.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"</tool\"}}\n</tool_call> done <"
	var s ToolCallScanner
	var got []Event
	for _, r := range text { // one character at a time, as tokens may arrive
		evs, err := s.Write(string(r))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
	}
	evs, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, evs...)
	var text2 strings.Builder
	var calls []ToolCall
	for _, ev := range got {
		if ev.Call != nil {
			calls = append(calls, *ev.Call)
			if text2.String() != "Sure <b>.\n" {
				t.Errorf("text before the call = %q", text2.String())
			}
		}
		text2.WriteString(ev.Text)
	}
	if text2.String() != "Sure <b>.\n done <" {
		t.Errorf("text = %q", text2.String())
	}
	if len(calls) != 1 || calls[0].Name != "f" || string(calls[0].Arguments) != `{"q": "</tool"}` {
		t.Errorf("calls = %+v", calls)
	}
	var s3 ToolCallScanner
	s3.Write("a <tool_")
	if s3.InCall() {
		t.Error("InCall before the tag is complete")
	}
	s3.Write("call>{")
	if !s3.InCall() {
		t.Error("InCall false inside a call")
	}
	s3.Write(`"name": "f", "arguments": {}}</tool_call>`)
	if s3.InCall() {
		t.Error("InCall true after the call closed")
	}
	// Text that cannot start a tag is emitted at once, not held back.
	var s2 ToolCallScanner
	evs, _ = s2.Write("hello <tool_c")
	if len(evs) != 1 || evs[0].Text != "hello " {
		t.Errorf("first write emitted %+v, want just %q", evs, "hello ")
	}
	evs, _ = s2.Write("ar")
	if len(evs) != 1 || evs[0].Text != "<tool_car" {
		t.Errorf("second write emitted %+v, want %q", evs, "<tool_car")
	}
}

func TestToolCallScannerRecoversAfterError(t *testing.T) {
	content, calls, err := scanAll("a<tool_call>{bad}</tool_call>b<tool_call>{\"name\":\"g\",\"arguments\":{}}</tool_call>", []int{5, 20})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Offset != 13 {
		t.Fatalf("err = %v, want a *ParseError at byte 13", err)
	}
	if content != "ab" || len(calls) != 1 || calls[0].Name != "g" {
		t.Errorf("after the bad block got %q %+v", content, calls)
	}
}

// FuzzParseAssistant checks that the parser never panics, that a streamed
// parse cut anywhere agrees with the one-shot parse, and that rendering what
// was parsed parses back to the same thing.
func FuzzParseAssistant(f *testing.F) {
	f.Add("Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5]}}\n</tool_call>", 3, 17)
	f.Add("<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call><tool_call>", 11, 1)
	f.Add("x </tool_call> <tool_call>{]}</tool_call>", 0, 4)
	f.Add("<tool_call>{\"name\":\"\\u0041\",\"arguments\":{\"k\":\"</tool\"}}</tool_call>", 30, 2)
	f.Fuzz(func(t *testing.T, text string, cut1, cut2 int) {
		content, calls, err := ParseAssistant(text)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not a *ParseError", err)
		}
		if pe != nil && (pe.Offset < 0 || pe.Offset > len(text)) {
			t.Fatalf("error offset %d outside the text of %d bytes", pe.Offset, len(text))
		}
		cuts := []int{abs(cut1) % (len(text) + 1), abs(cut2) % (len(text) + 1)}
		sc, scalls, serr := scanAll(text, cuts)
		if (err == nil) != (serr == nil) {
			t.Fatalf("one-shot err %v, streamed err %v", err, serr)
		}
		if err != nil {
			return
		}
		if strings.TrimSpace(sc) != content || !reflect.DeepEqual(calls, scalls) {
			t.Fatalf("streamed parse (%q, %v) differs from one-shot (%q, %v)", sc, scalls, content, calls)
		}
		for _, c := range calls {
			if checkName(c.Name) != nil {
				return // the template cannot render such names
			}
		}
		if strings.Contains(content, "<think>") || strings.Contains(content, "</think>") {
			return // the template moves think blocks; not a round trip
		}
		msgs := []Message{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: content, ToolCalls: calls}}
		prompt, err := Render(msgs, nil, RenderOptions{})
		if err != nil {
			t.Fatalf("render of parsed calls: %v", err)
		}
		body := strings.TrimPrefix(prompt, "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
		body = strings.TrimSuffix(body, "<|im_end|>\n")
		content2, calls2, err := ParseAssistant(body)
		if err != nil {
			t.Fatalf("parse of rendered %q: %v", body, err)
		}
		if content2 != strings.TrimSpace(strings.TrimLeft(content, "\n")) || len(calls2) != len(calls) {
			t.Fatalf("round trip: got %q %v, want %q %v", content2, calls2, content, calls)
		}
		for i := range calls {
			if calls2[i].Name != calls[i].Name || !jsonEqual(t, calls2[i].Arguments, calls[i].Arguments) {
				t.Fatalf("round trip call %d: got %s %s, want %s %s", i, calls2[i].Name, calls2[i].Arguments, calls[i].Name, calls[i].Arguments)
			}
		}
	})
}

// FuzzRenderParse renders an assistant turn built from fuzzed parts and
// checks that parsing the text gives the parts back.
func FuzzRenderParse(f *testing.F) {
	f.Add("Checking.", "get_weather", `{"city": "Paris", "n": [1, {"x": null}]}`)
	f.Add("", "f", `{}`)
	f.Add("多语言", "lookup", `{"q": "<tool_call>\n"}`)
	f.Fuzz(func(t *testing.T, content, name, args string) {
		if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") || checkName(name) != nil {
			return
		}
		for _, tag := range []string{ToolCallOpen, ToolCallClose, "<think>", "</think>"} {
			if strings.Contains(content, tag) || strings.Contains(name, tag) {
				return
			}
		}
		msgs := []Message{{Role: RoleAssistant, Content: content, ToolCalls: []ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}}
		prompt, err := Render(msgs, nil, RenderOptions{})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		body := strings.TrimSuffix(strings.TrimPrefix(prompt, "<|im_start|>assistant\n"), "<|im_end|>\n")
		got, calls, err := ParseAssistant(body)
		if err != nil {
			t.Fatalf("parse of %q: %v", body, err)
		}
		if got != strings.TrimSpace(strings.TrimLeft(content, "\n")) || len(calls) != 1 || calls[0].Name != name || !jsonEqual(t, calls[0].Arguments, json.RawMessage(args)) {
			t.Fatalf("parse(render(%q, %q, %s)) = %q %+v", content, name, args, got, calls)
		}
	})
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
