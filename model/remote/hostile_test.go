package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/livehat/livehat/model/chat"
)

func TestRepairObject(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"object kept as sent", `{"a": 1}`, `{"a": 1}`, ""},
		{"empty means no arguments", "  ", `{}`, ""},
		{"raw newlines in a string", "{\"q\": \"<think>\n\n</think>pece Desk Lamp\"}", `{"q": "<think>\n\n</think>pece Desk Lamp"}`, ""},
		{"raw tab and bell", "{\"q\": \"a\tb\x07\"}", `{"q": "a\tb\u0007"}`, ""},
		{"newlines between fields stay", "{\n\"q\": \"a\"\n}", "{\n\"q\": \"a\"\n}", ""},
		{"escaped quote before a raw newline", "{\"q\": \"say \\\"hi\\\"\nthen\"}", `{"q": "say \"hi\"\nthen"}`, ""},
		{"object encoded as a string", `"{\"a\": 1}"`, `{"a": 1}`, ""},
		{"truncated", `{"a": `, "", "not valid JSON at byte"},
		{"array", `[1]`, "", "want an object"},
		{"string", `"hello"`, "", "a JSON string, want an object"},
		{"null", `null`, "", "null, want an object"},
		{"trailing garbage", `{"a": 1} x`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repairObject(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("repairObject(%q) = %s, %v; want an error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("repairObject(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseContentToolCalls(t *testing.T) {
	tests := []struct {
		name, in, text string
		calls          []string // name + " " + arguments
		errs           []string
	}{
		{"no calls", "Just text.", "Just text.", nil, nil},
		{"harness rendering", "Let me check.\n<tool_call>\n{\"name\": \"product_lookup\", \"arguments\": {\"query\": \"lamp\"}}\n</tool_call>",
			"Let me check.", []string{`product_lookup {"query": "lamp"}`}, nil},
		{"two calls", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 1}}</tool_call>",
			"", []string{"a {}", `b {"x": 1}`}, nil},
		{"raw newline in arguments", "<tool_call>{\"name\": \"a\", \"arguments\": {\"q\": \"x\ny\"}}</tool_call>",
			"", []string{`a {"q": "x\ny"}`}, nil},
		{"arguments as a string", "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"q\\\": 2}\"}</tool_call>",
			"", []string{`a {"q": 2}`}, nil},
		{"no arguments", "<tool_call>{\"name\": \"now\"}</tool_call>", "", []string{"now {}"}, nil},
		{"unclosed last block", "ok <tool_call>{\"name\": \"a\", \"arguments\": {}}", "ok", []string{"a {}"}, nil},
		{"bad block kept apart", "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call> then <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
			"then", []string{"b {}"}, []string{`tool call 0 "a"`}},
		{"no name", "<tool_call>{\"arguments\": {}}</tool_call>", "", nil, []string{`has no "name"`}},
		{"not JSON", "<tool_call>lookup(lamp)</tool_call>", "", nil, []string{"the block is not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, calls, errs := ParseContentToolCalls(tt.in)
			if text != tt.text {
				t.Errorf("text = %q, want %q", text, tt.text)
			}
			var got []string
			for _, c := range calls {
				got = append(got, c.Name+" "+string(c.Arguments))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.calls) {
				t.Errorf("calls = %q, want %q", got, tt.calls)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors = %v, want %d", errs, len(tt.errs))
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tt.errs[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, e, tt.errs[i])
				}
			}
		})
	}
}

// FuzzParseContentToolCalls: any text parses without panicking, every
// recovered call has a name and a JSON object for arguments, and a call the
// harness would render parses back to itself.
func FuzzParseContentToolCalls(f *testing.F) {
	f.Add("x<tool_call>{\"name\": \"a\", \"arguments\": {\"q\": \"b\nc\"}}</tool_call>", "a", `{"q":1}`)
	f.Add("<tool_call><tool_call></tool_call></tool_call>", "f", `{}`)
	f.Add("<tool_call>\"{\\\"name\\\": 1}\"", "g", `{"k":[1,{"x":"\n"}]}`)
	f.Fuzz(func(t *testing.T, content, name, args string) {
		_, calls, _ := ParseContentToolCalls(content)
		for _, c := range calls {
			var obj map[string]json.RawMessage
			if c.Name == "" || json.Unmarshal(c.Arguments, &obj) != nil || obj == nil {
				t.Fatalf("recovered call %q with arguments %q from %q", c.Name, c.Arguments, content)
			}
		}
		var want map[string]any
		if json.Unmarshal([]byte(args), &want) != nil || want == nil || name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, "\"\\") ||
			strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) || !json.Valid([]byte(`"`+name+`"`)) {
			return
		}
		rendered, _ := json.Marshal(map[string]any{"name": name, "arguments": want})
		if strings.Contains(string(rendered), chat.ToolCallClose) {
			return // the closing tag inside the JSON ends the block early, as it does for the model's own parser
		}
		_, calls, errs := ParseContentToolCalls("before " + chat.ToolCallOpen + "\n" + string(rendered) + "\n" + chat.ToolCallClose)
		if len(errs) > 0 || len(calls) != 1 || calls[0].Name != name {
			t.Fatalf("rendered call %s parsed to %+v, %v", rendered, calls, errs)
		}
		var got map[string]any
		if err := json.Unmarshal(calls[0].Arguments, &got); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("arguments %s came back as %s", args, calls[0].Arguments)
		}
	})
}

func TestContentToolCallsRecovered(t *testing.T) {
	const content = "<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"杭州\"}}\n</tool_call>"
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		if req["stream"] == true {
			b, _ := json.Marshal(content)
			sse(w, `data: {"choices":[{"delta":{"content":`+string(b)+`},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	check := func(t *testing.T, resp *Response, tools bool) {
		t.Helper()
		if !tools {
			if len(resp.Message.ToolCalls) != 0 || resp.Message.Content != content {
				t.Errorf("without tools offered the text was parsed: %+v", resp.Message)
			}
			return
		}
		if !resp.RecoveredToolCalls || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "get_weather" ||
			string(resp.Message.ToolCalls[0].Arguments) != `{"city": "杭州"}` || resp.Message.Content != "<think>\n\n</think>" {
			t.Errorf("message = %+v (recovered %v)", resp.Message, resp.RecoveredToolCalls)
		}
	}
	for _, tools := range []bool{true, false} {
		req := Request{Messages: userX}
		if tools {
			req.Tools = []chat.Tool{weatherTool}
		}
		t.Run(fmt.Sprintf("complete tools=%v", tools), func(t *testing.T) {
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			check(t, resp, tools)
		})
		t.Run(fmt.Sprintf("stream tools=%v", tools), func(t *testing.T) {
			s, err := c.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, _, err := collect(t, s); err != io.EOF {
				t.Fatal(err)
			}
			resp, err := s.Response()
			if err != nil {
				t.Fatal(err)
			}
			check(t, resp, tools)
		})
	}
}

// TestToolCallIDsRoundTrip: the ids the server gave its calls come back
// with the calls and their results although the caller's messages carry
// none; calls the server named no id for get ids from their position, the
// same on every request; tool messages name their tool.
func TestToolCallIDsRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		mu.Lock()
		bodies = append(bodies, req)
		mu.Unlock()
		fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
			{"id": "srv-7f3a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}]}`)
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	resp, err := c.Complete(context.Background(), Request{Messages: userX, Tools: []chat.Tool{weatherTool}})
	if err != nil || resp.Message.ToolCalls[0].ID != "srv-7f3a" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	// The caller drops the ids, as the harness's messages do.
	history := []chat.Message{userX[0],
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		{Role: chat.RoleTool, Name: "get_weather", Content: "sunny"},
		{Role: chat.RoleUser, Content: "and Rome?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
			{Name: "now", Arguments: json.RawMessage(`{}`)}}},
		{Role: chat.RoleTool, Name: "now", Content: "noon"},
		{Role: chat.RoleTool, Content: "rain"},
	}
	for range 2 {
		if _, err := c.Complete(context.Background(), Request{Messages: history}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(body map[string]any) string {
		var out []string
		for _, m := range body["messages"].([]any) {
			m := m.(map[string]any)
			for _, tc := range asSlice(m["tool_calls"]) {
				out = append(out, "call:"+tc.(map[string]any)["id"].(string))
			}
			if m["role"] == "tool" {
				out = append(out, fmt.Sprintf("result:%v/%v", m["tool_call_id"], m["name"]))
			}
		}
		return strings.Join(out, " ")
	}
	want := "call:srv-7f3a result:srv-7f3a/get_weather call:call_m4_0 call:call_m4_1 result:call_m4_1/now result:call_m4_0/get_weather"
	for i, b := range bodies[1:] {
		if got := ids(b); got != want {
			t.Errorf("request %d ids:\n got %s\nwant %s", i+1, got, want)
		}
	}
}

// TestToolCallIDsCarriedByTheCaller: ids the caller's messages carry
// reach the server as they are, results paired with their calls by id
// whatever their order; an id a call repeats (a server that numbers each
// reply's calls from call_0) is replaced by the call's position, and the
// results that answered it by that id follow it, so no result names
// another turn's call or its sibling's.
func TestToolCallIDsCarriedByTheCaller(t *testing.T) {
	lookup := func(id, city string) chat.ToolCall {
		return chat.ToolCall{ID: id, Name: "get_weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}
	}
	result := func(id, content string) chat.Message {
		return chat.Message{Role: chat.RoleTool, ToolCallID: id, Name: "get_weather", Content: content}
	}
	assistant := func(calls ...chat.ToolCall) chat.Message {
		return chat.Message{Role: chat.RoleAssistant, ToolCalls: calls}
	}
	cases := []struct {
		name string
		msgs []chat.Message
		want string
	}{
		{"results out of order", []chat.Message{userX[0], assistant(lookup("a", "Paris"), lookup("b", "Rome")), result("b", "rain"), result("a", "sun")},
			"call:a call:b result:b/rain result:a/sun"},
		{"the same call twice", []chat.Message{userX[0], assistant(lookup("a", "Paris"), lookup("b", "Paris")), result("a", "sun"), result("b", "sun too")},
			"call:a call:b result:a/sun result:b/sun too"},
		{"an id twice in one reply", []chat.Message{userX[0], assistant(lookup("call_0", "Paris"), lookup("call_0", "Rome")), result("call_0", "sun"), result("call_0", "rain")},
			"call:call_0 call:call_m1_1 result:call_0/sun result:call_m1_1/rain"},
		{"an id again in the next reply", []chat.Message{userX[0], assistant(lookup("call_0", "Paris")), result("call_0", "sun"),
			assistant(lookup("call_0", "Rome")), result("call_0", "rain")},
			"call:call_0 result:call_0/sun call:call_m3_0 result:call_m3_0/rain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
				body = req
				fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}`)
			})
			c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
			before, _ := json.Marshal(tc.msgs)
			if _, err := c.Complete(context.Background(), Request{Messages: tc.msgs}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range body["messages"].([]any) {
				m := m.(map[string]any)
				for _, tc := range asSlice(m["tool_calls"]) {
					got = append(got, "call:"+tc.(map[string]any)["id"].(string))
				}
				if m["role"] == "tool" {
					got = append(got, fmt.Sprintf("result:%v/%v", m["tool_call_id"], m["content"]))
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("ids on the wire:\n got %s\nwant %s", strings.Join(got, " "), tc.want)
			}
			if after, _ := json.Marshal(tc.msgs); string(after) != string(before) {
				t.Errorf("the caller's messages were changed:\n%s\nwere\n%s", after, before)
			}
		})
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestFailureKinds: each way a server misbehaves ends in an *Error of the
// right kind, after the retries that kind allows, and every attempt is
// reported to OnAttempt.
func TestFailureKinds(t *testing.T) {
	tests := []struct {
		name     string
		handle   func(w http.ResponseWriter, r *http.Request, calls int32)
		kind     Kind
		attempts int
		want     string
	}{
		{"connection reset", func(w http.ResponseWriter, r *http.Request, _ int32) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, KindReset, 3, "EOF"},
		{"429 with Retry-After then success", func(w http.ResponseWriter, r *http.Request, calls int32) {
			if calls == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error": {"message": "slow down"}}`, http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}`)
		}, KindOK, 2, ""},
		{"429 always", func(w http.ResponseWriter, r *http.Request, _ int32) {
			http.Error(w, `{"error": {"message": "slow down"}}`, http.StatusTooManyRequests)
		}, KindRateLimited, 3, "429 Too Many Requests: slow down"},
		{"503", func(w http.ResponseWriter, r *http.Request, _ int32) {
			http.Error(w, `{"error": {"message": "loading model"}}`, http.StatusServiceUnavailable)
		}, KindServerError, 3, "503 Service Unavailable: loading model"},
		{"a 500 refusing the model's answer is not retried", func(w http.ResponseWriter, r *http.Request, _ int32) {
			http.Error(w, `{"error": {"code": 500, "message": "Failed to parse input at pos 12: <tool_call>{\"name\"", "type": "server_error"}}`, 500)
		}, KindOutputRejected, 1, "Failed to parse input at pos 12"},
		{"400 is not retried", func(w http.ResponseWriter, r *http.Request, _ int32) {
			http.Error(w, `{"error": {"message": "context too long"}}`, http.StatusBadRequest)
		}, KindRejected, 1, "context too long"},
		{"malformed body", func(w http.ResponseWriter, r *http.Request, _ int32) {
			fmt.Fprint(w, `{"choices": [`)
		}, KindMalformed, 1, "not valid JSON"},
		{"hung server", func(w http.ResponseWriter, r *http.Request, _ int32) {
			<-r.Context().Done()
		}, KindTimeout, 3, "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) { tt.handle(w, r, calls.Add(1)) })
			var mu sync.Mutex
			var attempts []Attempt
			c, waits := newClient(t, Config{BaseURL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond,
				OnAttempt: func(a Attempt) { mu.Lock(); attempts = append(attempts, a); mu.Unlock() }})
			_, err := c.Complete(context.Background(), Request{Messages: userX})
			var re *Error
			switch {
			case tt.kind == KindOK && err != nil:
				t.Fatalf("err = %v", err)
			case tt.kind != KindOK && (!errors.As(err, &re) || re.Kind != tt.kind || re.Attempts != tt.attempts || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want an *Error of kind %s after %d attempts containing %q", err, tt.kind, tt.attempts, tt.want)
			}
			if int(calls.Load()) != tt.attempts || len(attempts) != tt.attempts {
				t.Fatalf("%d requests, %d attempts reported; want %d", calls.Load(), len(attempts), tt.attempts)
			}
			if last := attempts[len(attempts)-1]; last.Kind != tt.kind || last.Retry {
				t.Errorf("last attempt reported %+v, want kind %s and no retry", last, tt.kind)
			}
			if tt.name == "429 with Retry-After then success" && (len(*waits) != 1 || (*waits)[0] != time.Second) {
				t.Errorf("waits %v, want the 1 s the server asked", *waits)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {})
		srv.Close()
		c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = c.Stream(context.Background(), Request{Messages: userX})
			} else {
				_, err = c.Complete(context.Background(), Request{Messages: userX})
			}
			if ErrorKind(err) != KindUnreachable || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("stream=%v: err = %v (kind %s), want unreachable", stream, err, ErrorKind(err))
			}
		}
	})
	t.Run("killed mid-stream", func(t *testing.T) {
		srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
			sse(w, `data: {"choices":[{"delta":{"content":"Hel"}}]}`+"\n\n")
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		})
		var got []Attempt
		c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", OnAttempt: func(a Attempt) { got = append(got, a) }})
		s, err := c.Stream(context.Background(), Request{Messages: userX})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		text, _, err := collect(t, s)
		if text != "Hel" || ErrorKind(err) != KindReset {
			t.Fatalf("text %q err %v (kind %s), want the first piece then a reset", text, err, ErrorKind(err))
		}
		if len(got) != 1 || got[0].Kind != KindReset {
			t.Errorf("attempts %+v, want one reset", got)
		}
	})
}

func TestRetriesStopAtTheCallersDeadline(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		calls.Add(1)
		http.Error(w, `{"error": {"message": "overloaded"}}`, http.StatusServiceUnavailable)
	})
	c, err := New(Config{BaseURL: srv.URL, Model: "m", MaxRetries: 100, MinBackoff: 40 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Complete(ctx, Request{Messages: userX})
	// A client that ignored the deadline would retry 100 times, 40 ms
	// apart: 4 s. The bound is loose so that a loaded machine cannot fail
	// a client that stops.
	if took := time.Since(start); took > 2*time.Second || ErrorKind(err) != KindServerError || calls.Load() > 8 {
		t.Fatalf("took %v, %d calls, err %v: want to give up within the deadline with the 503", took, calls.Load(), err)
	}
}

// A retry the caller's deadline cuts short still names the server's failure
// that made it a retry, whichever attempt the deadline lands in.
func TestDeadlineDuringARetryNamesTheServerError(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		if calls.Add(1) == 1 {
			http.Error(w, `{"error": {"message": "overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		<-r.Context().Done()
	})
	c, err := New(Config{BaseURL: srv.URL, Model: "m", MaxRetries: 5, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that the first attempt's 503 always arrives first, on
	// any machine: the second attempt hangs until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = c.Complete(ctx, Request{Messages: userX})
	if ErrorKind(err) != KindServerError || !strings.Contains(err.Error(), "overloaded") || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err %v (kind %s): want the 503 named, cut short by the deadline", err, ErrorKind(err))
	}
}

func TestMaxConcurrent(t *testing.T) {
	var inFlight, most atomic.Int32
	release := make(chan struct{})
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}`)
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", MaxConcurrent: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := c.Complete(context.Background(), Request{Messages: userX})
			errs <- err
		})
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if most.Load() != 2 {
		t.Errorf("%d requests were in flight at once, want the limit 2", most.Load())
	}
	// A request that cannot get a slot before its deadline says so.
	c2, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", MaxConcurrent: 1})
	c2.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c2.Complete(ctx, Request{Messages: userX}); err == nil || !strings.Contains(err.Error(), "request slots") {
		t.Errorf("err = %v, want the wait for a slot named", err)
	}
}

func TestCachedTokens(t *testing.T) {
	tests := []struct{ name, usage string }{
		{"openai", `"usage": {"prompt_tokens": 100, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 96}}`},
		{"llama-server", `"usage": {"prompt_tokens": 100, "completion_tokens": 3}, "timings": {"cache_n": 96}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
				fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}}], `+tt.usage+`}`)
			})
			c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
			resp, err := c.Complete(context.Background(), Request{Messages: userX})
			if err != nil || resp.Usage.CachedTokens != 96 || resp.Usage.PromptTokens != 100 {
				t.Fatalf("usage %+v, err %v", resp.Usage, err)
			}
		})
	}
}
