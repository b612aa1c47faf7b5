package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestChatWithAServer talks to an in-process OpenAI-compatible server that
// loads the price skill, looks the serum up, then answers: the terminal
// shows both calls with their results, and the reply.
func TestChatWithAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		last := req.Messages[len(req.Messages)-1]
		delta := `{"content": "The serum is 199 yuan."}`
		switch {
		case last["role"] == "user":
			delta = `{"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "load_skill", "arguments": "{\"skill_id\": \"price_answer\"}"}}]}`
		case last["name"] == "load_skill":
			delta = `{"tool_calls": [{"index": 0, "id": "b", "type": "function", "function": {"name": "product_lookup", "arguments": "{\"query\": \"serum\"}"}}]}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\": [{\"delta\": %s, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n", delta)
	}))
	defer srv.Close()
	t.Chdir("../..") // the example plugins are built from the repository's tree
	var stdout, stderr bytes.Buffer
	err := Chat(context.Background(), []string{"--model", srv.URL, "--model-name", "qwen"},
		strings.NewReader("How much is the serum?\n/quit\n"), &stdout, &stderr)
	out := stdout.String()
	if err != nil {
		t.Fatalf("%v: %s\n%s", err, stderr.String(), out)
	}
	for _, want := range []string{"qwen at " + strings.TrimPrefix(srv.URL, "http://"), "[skill] price_answer", `[tool] product_lookup {"query": "serum"} → {`,
		"The serum is 199 yuan."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestChatUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := Chat(context.Background(), []string{"--model", "http://127.0.0.1:1", "extra"}, strings.NewReader(""), &stdout, &stderr); !IsUsage(err) {
		t.Errorf("extra argument: %v, want a usage error (%s)", err, stderr.String())
	}
	if err := Chat(context.Background(), []string{"--model", "http://127.0.0.1:1"}, strings.NewReader(""), &stdout, &stderr); !IsUsage(err) ||
		!strings.Contains(err.Error(), "--model-name") {
		t.Errorf("a server without --model-name: %v, want a usage error naming --model-name", err)
	}
}
