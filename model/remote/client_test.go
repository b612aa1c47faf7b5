package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livehat/livehat/model/chat"
)

// fakeServer is an in-process OpenAI-compatible server; handle answers each
// POST to /v1/chat/completions after the request is decoded.
func fakeServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req map[string]any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error": {"message": "no route", "type": "invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error": {"message": "bad json"}}`, http.StatusBadRequest)
			return
		}
		handle(w, r, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T, cfg Config) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

func ptr[T any](v T) *T { return &v }

var weatherTool = chat.Tool{Name: "get_weather", Description: "Weather for a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func TestCompleteWireFormat(t *testing.T) {
	var got map[string]any
	var auth string
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		got, auth = req, r.Header.Get("Authorization")
		fmt.Fprint(w, `{"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen3-0.6b",
			"choices": [{"index": 0, "finish_reason": "tool_calls",
				"message": {"role": "assistant", "content": "Checking.", "reasoning_content": "need data",
					"tool_calls": [{"id": "call_9", "type": "function",
						"function": {"name": "get_weather", "arguments": "{\"city\": \"Hangzhou\"}"}}]},
				"logprobs": {"content": [{"token": "Check", "logprob": -0.25, "bytes": [67, 104, 101, 99, 107],
					"top_logprobs": [{"token": "Check", "logprob": -0.25}, {"token": "Let", "logprob": -1.5}]}]}}],
			"usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}}`)
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "default-model"})
	resp, err := c.Complete(context.Background(), Request{
		Model: "qwen3-0.6b",
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "Be brief."},
			{Role: chat.RoleUser, Content: "Weather?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: chat.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: "sunny"},
		},
		Tools:       []chat.Tool{weatherTool},
		Temperature: ptr(0.7), TopP: ptr(0.9), MaxTokens: 64, Stop: []string{"</s>"}, Seed: ptr(int64(42)),
		Logprobs: true, TopLogprobs: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q", auth)
	}
	want := map[string]any{
		"model": "qwen3-0.6b",
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": "Weather?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
			map[string]any{"role": "tool", "content": "sunny", "tool_call_id": "call_1", "name": "get_weather"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "get_weather", "description": "Weather for a city",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}}},
		"temperature": 0.7, "top_p": 0.9, "max_tokens": 64.0, "stop": []any{"</s>"}, "seed": 42.0,
		"logprobs": true, "top_logprobs": 2.0,
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("request body:\n%s", gj)
	}
	wantResp := &Response{ID: "chatcmpl-1", Model: "qwen3-0.6b", FinishReason: "tool_calls",
		Message: chat.Message{Role: chat.RoleAssistant, Content: "Checking.", ReasoningContent: "need data",
			ToolCalls: []chat.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Hangzhou"}`)}}},
		Usage: Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42},
		Logprobs: []TokenLogprob{{Token: "Check", Logprob: -0.25, Bytes: []int{67, 104, 101, 99, 107},
			TopLogprobs: []TopLogprob{{Token: "Check", Logprob: -0.25}, {Token: "Let", Logprob: -1.5}}}},
	}
	if !reflect.DeepEqual(resp, wantResp) {
		t.Errorf("response = %+v\nwant %+v", resp, wantResp)
	}
}

func TestCompleteReportsBadToolArgumentsPerCall(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": null,
			"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\": "}},
				{"id": "d", "type": "function", "function": {"name": "g", "arguments": "{\"b\": 1}"}}]}}]}`)
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	resp, err := c.Complete(context.Background(), Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatalf("a bad call lost the whole answer: %v", err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "g" {
		t.Errorf("calls = %+v, want the good call g only", resp.Message.ToolCalls)
	}
	if len(resp.ToolCallErrors) != 1 || !strings.Contains(resp.ToolCallErrors[0].Error(), `tool call 0 "f": arguments`) ||
		!strings.Contains(resp.ToolCallErrors[0].Error(), "not valid JSON") {
		t.Fatalf("tool call errors = %v, want one naming call 0 f", resp.ToolCallErrors)
	}
	if call := resp.ToolCallErrors[0].Call(); call.ID != "c" || call.Name != "f" || string(call.Arguments) != `"{\"a\": "` {
		t.Errorf("Call() = %+v, want the text as a JSON string with the server's id", call)
	}
}

func TestRequestErrors(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted an empty base URL")
	}
	if _, err := New(Config{BaseURL: "localhost:8000"}); err == nil {
		t.Error("New accepted a base URL without a scheme")
	}
	c, _ := newClient(t, Config{BaseURL: "http://127.0.0.1:1"})
	if _, err := c.Complete(context.Background(), Request{Messages: []chat.Message{{Role: "user"}}}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("missing model: err = %v", err)
	}
	bad := []chat.Message{{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Name: "f", Arguments: json.RawMessage(`{`)}}}}
	if _, err := c.Complete(context.Background(), Request{Model: "m", Messages: bad}); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad arguments: err = %v", err)
	}
}

func TestErrorsNameStatusAndMessage(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   []string
	}{
		{400, `{"error": {"message": "max_tokens is too large", "type": "invalid_request_error", "code": "context_length_exceeded"}}`,
			[]string{"400 Bad Request", "max_tokens is too large", "invalid_request_error", "context_length_exceeded"}},
		{404, `{"error": "model \"x\" not found, try pulling it first"}`, []string{"404 Not Found", `model "x" not found`}},
		{422, `{"detail": "Field required"}`, []string{"422 Unprocessable Entity", "Field required"}},
		{401, `Unauthorized: bad key`, []string{"401 Unauthorized", "bad key"}},
		{400, `{"object": "error", "message": "vLLM says no", "code": 400}`, []string{"400", "vLLM says no"}},
	}
	for _, tt := range tests {
		var calls atomic.Int32
		srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
			calls.Add(1)
			w.WriteHeader(tt.status)
			fmt.Fprint(w, tt.body)
		})
		c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
		_, err := c.Complete(context.Background(), Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
			t.Fatalf("err = %v, want an *APIError with status %d", err, tt.status)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
		if calls.Load() != 1 {
			t.Errorf("status %d was sent %d times, want no retry", tt.status, calls.Load())
		}
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error": {"message": "rate limited", "type": "rate_limit_error"}}`)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error": {"message": "overloaded"}}`)
		default:
			fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}`)
		}
	})
	c, waits := newClient(t, Config{BaseURL: srv.URL, Model: "m", MinBackoff: 100 * time.Millisecond})
	resp, err := c.Complete(context.Background(), Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || calls.Load() != 3 {
		t.Fatalf("content %q after %d calls", resp.Message.Content, calls.Load())
	}
	if len(*waits) != 2 || (*waits)[0] != 2*time.Second {
		t.Fatalf("waits = %v, want 2s (Retry-After) then a backoff", *waits)
	}
	if w := (*waits)[1]; w < 100*time.Millisecond || w > 200*time.Millisecond {
		t.Errorf("second backoff %v, want within [100ms, 200ms] (MinBackoff*2 with jitter)", w)
	}

	// Out of retries: the last error is returned.
	calls.Store(0)
	srv2 := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, `{"error": {"message": "upstream down"}}`)
	})
	c2, waits2 := newClient(t, Config{BaseURL: srv2.URL, Model: "m", MaxRetries: 3})
	_, err = c2.Complete(context.Background(), Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway: upstream down") || calls.Load() != 4 || len(*waits2) != 3 {
		t.Errorf("err = %v after %d calls and waits %v; want the 502 after 4 calls", err, calls.Load(), *waits2)
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if d := retryAfter(now.Add(7*time.Second).Format(http.TimeFormat), now); d != 7*time.Second {
		t.Errorf("HTTP-date Retry-After = %v, want 7s", d)
	}
	if d := retryAfter("1.5", now); d != 1500*time.Millisecond {
		t.Errorf("Retry-After 1.5 = %v", d)
	}
	if d := retryAfter("soon", now); d != 0 {
		t.Errorf("Retry-After soon = %v, want 0", d)
	}
}

func TestAttemptTimeout(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		calls.Add(1)
		<-r.Context().Done() // never answers
	})
	c, waits := newClient(t, Config{BaseURL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond, MaxRetries: 1})
	_, err := c.Complete(context.Background(), Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if calls.Load() != 2 || len(*waits) != 1 {
		t.Errorf("%d calls, waits %v: a timed-out attempt should be retried once", calls.Load(), *waits)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	c, err := New(Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = c.Complete(ctx, Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = c.Complete(ctx, Request{Messages: []chat.Message{{Role: "user", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "would pass the deadline") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v, want a refusal to wait 30s past a 1s deadline naming the 429", err)
	}
}

func TestRetriesFailedConnections(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {})
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, waits := newClient(t, Config{BaseURL: url, Model: "m", MaxRetries: 2})
	_, err := c.Complete(context.Background(), Request{Messages: userX})
	if err == nil || !strings.Contains(err.Error(), "POST "+url+"/v1/chat/completions") {
		t.Fatalf("err = %v, want the failed POST named", err)
	}
	if len(*waits) != 2 {
		t.Errorf("waits %v, want 2 retries", *waits)
	}
	_, err = c.Stream(context.Background(), Request{Messages: userX})
	if err == nil || len(*waits) != 4 {
		t.Errorf("stream: err %v after waits %v", err, *waits)
	}
}
