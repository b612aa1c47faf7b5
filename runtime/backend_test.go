package runtime

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/model/remote"
)

// openAIServer is an in-process server speaking the chat-completions wire
// format: it answers a tool call first, then a reply with inline reasoning.
func openAIServer(t *testing.T) (*httptest.Server, *[]map[string]any) {
	var mu sync.Mutex
	var requests []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		var msg map[string]any
		switch {
		case last["role"] == "user" && n == 1:
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "load_skill", "arguments": `{"skill_id":"price_answer"}`}}}}
		case last["role"] == "tool" && n == 2:
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c2", "type": "function", "function": map[string]any{"name": "product_lookup", "arguments": `{"query":"serum"}`}}}}
		default:
			msg = map[string]any{"role": "assistant", "content": "<think>the tool says 199</think>The serum is 199 yuan."}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 1200, "completion_tokens": 9, "total_tokens": 1209}})
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestRemoteModelInTheLoop(t *testing.T) {
	srv, requests := openAIServer(t)
	client, err := remote.New(remote.Config{BaseURL: srv.URL, Model: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	s := startSession(t, Config{Plugins: newPlugins(), Model: RemoteModel{Client: client}})
	turn := ask(t, s, s.Listen(16), "serum price?")
	if turn.Outcome != OutcomeReplied || turn.Reply != "The serum is 199 yuan." {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	if turn.Timing.PromptTokens != 3600 {
		t.Errorf("prompt tokens = %d, want 3 × 1200", turn.Timing.PromptTokens)
	}
	first := (*requests)[0]
	if tools, ok := first["tools"].([]any); !ok || len(tools) != 6 {
		t.Errorf("tools sent = %v", first["tools"])
	}
	system := first["messages"].([]any)[0].(map[string]any)["content"].(string)
	if strings.Contains(system, "<tools>") {
		t.Error("the tool listing was rendered into the prompt although the server templates tools")
	}
}

func TestSplitThink(t *testing.T) {
	cases := []struct{ in, content, reasoning string }{
		{"plain", "plain", ""},
		{"<think>a</think>b", "b", "a"},
		{"x<think>a</think>y<think>c</think>z", "xyz", "ac"},
		{"answer<think>cut off", "answer", "cut off"},
	}
	for _, c := range cases {
		content, reasoning := splitThink(c.in)
		if content != c.content || reasoning != c.reasoning {
			t.Errorf("splitThink(%q) = %q, %q", c.in, content, reasoning)
		}
	}
}
