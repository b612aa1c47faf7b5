package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/remote"
)

// unpairedResult is what a strict server (vLLM, the OpenAI API) refuses in
// a request's messages: an assistant tool call without an id or with the
// id of another call of the same turn, a tool message whose tool_call_id
// answers no open call of the assistant turn before it or names another
// tool, or whose content is not that call's result (the lookups below echo
// their query). Empty when the request is well formed.
func unpairedResult(msgs []any) string {
	type call struct{ name, query string }
	open := map[string]call{}
	for i, m := range msgs {
		m := m.(map[string]any)
		switch m["role"] {
		case "assistant":
			calls, _ := m["tool_calls"].([]any)
			if len(calls) == 0 {
				continue
			}
			open = map[string]call{}
			for j, c := range calls {
				c := c.(map[string]any)
				id, _ := c["id"].(string)
				if _, dup := open[id]; id == "" || dup {
					return fmt.Sprintf("messages[%d].tool_calls[%d]: id %q is missing or repeated", i, j, id)
				}
				fn := c["function"].(map[string]any)
				var args struct{ Query string }
				_ = json.Unmarshal([]byte(fn["arguments"].(string)), &args)
				open[id] = call{fn["name"].(string), args.Query}
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			c, ok := open[id]
			if !ok {
				return fmt.Sprintf("messages[%d]: tool_call_id %q answers no call of the assistant message before it", i, id)
			}
			if m["name"] != c.name {
				return fmt.Sprintf("messages[%d]: name %v, but call %s is %s", i, m["name"], id, c.name)
			}
			if !strings.Contains(m["content"].(string), `"query":"`+c.query+`"`) {
				return fmt.Sprintf("messages[%d]: %v is not the result of call %s (query %s)", i, m["content"], id, c.query)
			}
			delete(open, id)
		default:
			if len(open) > 0 {
				return fmt.Sprintf("messages[%d]: %d tool calls were left unanswered", i, len(open))
			}
		}
	}
	return ""
}

// TestRemoteModelPairsEachResultWithItsCall: a reply with two calls runs
// both, and the next request sends each result with the id of its own call,
// which a strict server checks and refuses with a 400 otherwise. The
// server's ids are kept; a call without one, or with one the turn already
// has, gets one made from the turn. The stored turn carries the same ids.
func TestRemoteModelPairsEachResultWithItsCall(t *testing.T) {
	lookup := func(id, query string) map[string]any {
		c := map[string]any{"type": "function", "function": map[string]any{"name": "product_lookup", "arguments": `{"query":"` + query + `"}`}}
		if id != "" {
			c["id"] = id
		}
		return c
	}
	cases := []struct {
		name    string
		calls   []any
		queries []string
		// want are the calls' ids; "#n" stands for the n-th id the turn made.
		want []string
	}{
		{"the server's ids", []any{lookup("chatcmpl-tool-a1", "serum"), lookup("chatcmpl-tool-b2", "cream")},
			[]string{"serum", "cream"}, []string{"chatcmpl-tool-a1", "chatcmpl-tool-b2"}},
		{"no ids", []any{lookup("", "serum"), lookup("", "cream")}, []string{"serum", "cream"}, []string{"#0", "#1"}},
		{"one id twice", []any{lookup("call_0", "serum"), lookup("call_0", "cream")}, []string{"serum", "cream"}, []string{"call_0", "#0"}},
		{"the same call twice", []any{lookup("x1", "serum"), lookup("x2", "serum")}, []string{"serum", "serum"}, []string{"x1", "x2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := openAIServer(t, func(n int, req map[string]any) map[string]any {
				msgs := req["messages"].([]any)
				if msgs[len(msgs)-1].(map[string]any)["role"] == "user" {
					return map[string]any{"role": "assistant", "content": nil, "tool_calls": tc.calls}
				}
				return map[string]any{"role": "assistant", "content": "The serum is 199 yuan, the cream 99."}
			})
			var refused atomic.Int32
			strict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var req struct{ Messages []any }
				if err := json.Unmarshal(body, &req); err != nil {
					http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
					return
				}
				if problem := unpairedResult(req.Messages); problem != "" {
					refused.Add(1)
					msg, _ := json.Marshal(map[string]any{"error": map[string]any{"message": problem, "type": "BadRequestError"}})
					http.Error(w, string(msg), http.StatusBadRequest)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				srv.Config.Handler.ServeHTTP(w, r)
			}))
			t.Cleanup(strict.Close)
			p := newPlugins()
			p.tools["storefront/product_lookup"] = func(args json.RawMessage) (json.RawMessage, error) {
				var a struct{ Query string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"found":true,"query":"` + a.Query + `"}`), nil
			}
			h := demo(t)
			h.Pipeline.RequireReplySkill = false
			s := startSession(t, Config{Harness: h, Plugins: p, Model: RemoteModel{Client: newRemote(t, strict.URL, remote.Config{})}})
			turn := ask(t, s, s.Listen(64), "serum and cream price?")
			if turn.Outcome != OutcomeReplied || refused.Load() != 0 {
				t.Fatalf("turn %s (%s); the strict server refused %d requests", turn.Outcome, turn.Reason, refused.Load())
			}
			if len(*requests) != 2 {
				t.Fatalf("%d requests reached the model, want 2", len(*requests))
			}
			prefix, _, _ := strings.Cut(turn.ID, "-")
			var want []string
			for _, id := range tc.want {
				if n, ok := strings.CutPrefix(id, "#"); ok {
					id = "call_" + prefix + "_" + n
				}
				want = append(want, id)
			}
			// The stored turn: the assistant's calls, then each result
			// naming its call, in the order the calls were made.
			var calls, results []string
			for _, m := range turn.Messages {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.ID)
				}
				if m.Role == harness.RoleTool {
					results = append(results, m.ToolCallID)
					if m.Name != "product_lookup" || !strings.Contains(m.Content, `"query":"`+tc.queries[len(results)-1]+`"`) {
						t.Errorf("result %d = %+v", len(results), m)
					}
				}
			}
			if strings.Join(calls, " ") != strings.Join(want, " ") || strings.Join(results, " ") != strings.Join(want, " ") {
				t.Errorf("stored ids: calls %q, results %q; want %q", calls, results, want)
			}
			var sent []string
			for _, m := range (*requests)[1]["messages"].([]any) {
				if id, ok := m.(map[string]any)["tool_call_id"].(string); ok {
					sent = append(sent, id)
				}
			}
			if strings.Join(sent, " ") != strings.Join(want, " ") {
				t.Errorf("tool_call_ids sent %q, want %q", sent, want)
			}
		})
	}
}

// TestStrictServerRefusesUnpairedResults holds the fake server above to
// what it checks, so that its silence in the test above means something.
func TestStrictServerRefusesUnpairedResults(t *testing.T) {
	call := func(id, query string) any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "product_lookup", "arguments": `{"query":"` + query + `"}`}}
	}
	result := func(id, query string) any {
		m := map[string]any{"role": "tool", "name": "product_lookup", "content": `{"query":"` + query + `"}`}
		if id != "" {
			m["tool_call_id"] = id
		}
		return m
	}
	user := map[string]any{"role": "user", "content": "q"}
	assistant := func(calls ...any) any { return map[string]any{"role": "assistant", "tool_calls": calls} }
	cases := []struct {
		name string
		msgs []any
		want string
	}{
		{"paired", []any{user, assistant(call("a", "serum"), call("b", "cream")), result("b", "cream"), result("a", "serum")}, ""},
		{"no tool_call_id", []any{user, assistant(call("a", "serum")), result("", "serum")}, "answers no call"},
		{"crossed results", []any{user, assistant(call("a", "serum"), call("b", "cream")), result("a", "cream"), result("b", "serum")}, "is not the result of call a"},
		{"repeated id", []any{user, assistant(call("a", "serum"), call("a", "cream"))}, `id "a" is missing or repeated`},
		{"an earlier turn's id", []any{user, assistant(call("a", "serum")), result("a", "serum"), assistant(call("b", "cream")), result("a", "cream")}, "answers no call"},
		{"unanswered", []any{user, assistant(call("a", "serum")), user}, "left unanswered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := unpairedResult(tc.msgs)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestToolCallIDsStayOutOfChatML: the in-process model's prompt is the
// same bytes whether a turn's calls carry ids or not, so the ids change
// neither what the model reads nor what the prefix cache matches, while
// the chat messages a server gets do carry them.
func TestToolCallIDsStayOutOfChatML(t *testing.T) {
	var seen []Request
	s := startSession(t, Config{Plugins: newPlugins(), Model: scriptedModel(func(req Request) (Response, error) {
		seen = append(seen, req)
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == harness.RoleUser:
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`),
				call("product_lookup", `{"query":"serum"}`)}}, nil
		default:
			return Response{Content: "The serum is 199 yuan."}, nil
		}
	})})
	turn := ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeReplied || len(seen) != 2 {
		t.Fatalf("turn %s (%s) after %d generations", turn.Outcome, turn.Reason, len(seen))
	}
	msgs := seen[1].Messages
	withIDs := toChat(msgs)
	var ids []string
	plain := make([]harness.Message, len(msgs))
	for i, m := range msgs {
		if m.ToolCallID != "" {
			ids = append(ids, m.ToolCallID)
		}
		m.ToolCallID = ""
		m.ToolCalls = append([]harness.ToolCall(nil), m.ToolCalls...)
		for j := range m.ToolCalls {
			m.ToolCalls[j].ID = ""
		}
		plain[i] = m
	}
	if len(ids) != 2 || withIDs[len(withIDs)-1].ToolCallID != ids[1] || withIDs[len(withIDs)-3].ToolCalls[1].ID != ids[1] {
		t.Fatalf("the chat messages do not carry the turn's ids %q", ids)
	}
	opts := chat.RenderOptions{AddGenerationPrompt: true}
	tools := toChatTools(seen[1].Tools)
	got, err := chat.Render(withIDs, tools, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := chat.Render(toChat(plain), tools, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("ids changed the ChatML prompt:\n%s\n--- without ids ---\n%s", got, want)
	}
	for _, id := range ids {
		if strings.Contains(got, id) {
			t.Errorf("id %s is in the ChatML prompt", id)
		}
	}
	if !strings.Contains(got, "<tool_call>\n{\"name\": \"product_lookup\"") || !strings.Contains(got, "<tool_response>") {
		t.Errorf("the prompt lacks the calls and their results:\n%s", got)
	}
}
