package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livehat/livehat/model/chat"
)

// sse writes server-sent events as an OpenAI-compatible server does, one
// "data:" event per chunk, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprint(w, e)
		w.(http.Flusher).Flush()
	}
}

func collect(t *testing.T, s *Stream) (text string, deltas []Delta, err error) {
	t.Helper()
	var b strings.Builder
	for {
		d, err := s.Recv()
		if err != nil {
			return b.String(), deltas, err
		}
		b.WriteString(d.Content)
		deltas = append(deltas, d)
	}
}

var userX = []chat.Message{{Role: chat.RoleUser, Content: "x"}}

func TestStreamAssemblesToolCalls(t *testing.T) {
	var got map[string]any
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		got = req
		sse(w,
			": keep-alive\n\n",
			`data: {"id":"c1","model":"qwen","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`+"\n\n",
			"event: message\r\ndata: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"},"+
				"\"logprobs\":{\"content\":[{\"token\":\"Let\",\"logprob\":-0.1,\"top_logprobs\":[]}]}}]}\r\n\r\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"content":"check."}}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"now","arguments":"{}"}}]}}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"杭州\"}"}}]}}]}`+"\n\n",
			`data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n",
			`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`+"\n\n",
			"data: [DONE]\n\n")
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "qwen"})
	s, err := c.Stream(context.Background(), Request{Messages: userX, Tools: []chat.Tool{weatherTool}, Logprobs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Response(); err == nil {
		t.Error("Response before the end of the stream did not fail")
	}
	text, deltas, err := collect(t, s)
	if err != io.EOF {
		t.Fatalf("Recv err = %v, want io.EOF", err)
	}
	if text != "Let me check." {
		t.Errorf("streamed text %q", text)
	}
	if len(deltas) != 7 || deltas[0].Reasoning != "think" || len(deltas[1].Logprobs) != 1 ||
		!reflect.DeepEqual(deltas[3].ToolCalls, []ToolCallDelta{{Index: 0, ID: "call_a", Name: "get_weather"}}) {
		t.Errorf("deltas = %+v", deltas)
	}
	if got["stream"] != true || !reflect.DeepEqual(got["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("request stream fields: stream=%v stream_options=%v", got["stream"], got["stream_options"])
	}
	resp, err := s.Response()
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{ID: "c1", Model: "qwen", FinishReason: "tool_calls",
		Message: chat.Message{Role: chat.RoleAssistant, Content: "Let me check.", ReasoningContent: "think", ToolCalls: []chat.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city": "杭州"}`)},
			{ID: "call_b", Name: "now", Arguments: json.RawMessage(`{}`)}}},
		Usage:    Usage{PromptTokens: 5, CompletionTokens: 9, TotalTokens: 14},
		Logprobs: []TokenLogprob{{Token: "Let", Logprob: -0.1, TopLogprobs: []TopLogprob{}}},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v\nwant %+v", resp, want)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Errorf("Recv after the end = %v, want io.EOF", err)
	}
}

// TestStreamWholeCallsWithoutIndex covers servers that send each tool call
// complete in one chunk, without an index.
func TestStreamWholeCallsWithoutIndex(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		sse(w,
			`data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}`+"\n\n",
			`data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n")
		// The body ends without [DONE] after a finish_reason: accepted.
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", NoStreamUsage: true})
	s, err := c.Stream(context.Background(), Request{Messages: userX})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := collect(t, s); err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	resp, err := s.Response()
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0].Name != "f" || resp.Message.ToolCalls[1].Name != "g" {
		t.Errorf("calls = %+v", resp.Message.ToolCalls)
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		want   string
		is     error
		kind   Kind
	}{
		{"malformed chunk", []string{`data: {"choices":[{"delta":{"content":"hi"}}]}` + "\n\n", "data: {\"choices\": [\n\n"}, "malformed stream chunk", nil, KindMalformed},
		{"error event", []string{`data: {"error": {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}}` + "\n\n"},
			`error in the stream: CUDA out of memory (type "InternalServerError", code "500")`, nil, KindServerError},
		// llama-server's peg parser refusing the model's own draft after
		// streaming it: not the server failing, the answer.
		{"answer refused by the server's parser", []string{`data: {"choices":[{"delta":{"content":"玻尿酸"}}]}` + "\n\n",
			`data: {"error": {"code": 500, "message": "The model produced output that does not match the expected peg-native format", "type": "server_error"}}` + "\n\n"},
			"does not match the expected peg-native format", nil, KindOutputRejected},
		{"plain JSON error body", []string{`{"error": {"message": "model not loaded", "type": "NotFoundError"}}` + "\n"},
			"error in the stream: model not loaded", nil, KindServerError},
		{"ends early", []string{`data: {"choices":[{"delta":{"content":"hi"}}]}` + "\n\n"}, "ended before [DONE]", io.ErrUnexpectedEOF, KindReset},
		{"tool call index gap", []string{`data: {"choices":[{"delta":{"tool_calls":[{"index":1000000000,"function":{"name":"f"}}]}}]}` + "\n\n"},
			"tool call index 1000000000", nil, KindMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) { sse(w, tt.events...) })
			c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
			s, err := c.Stream(context.Background(), Request{Messages: userX})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, _, err = collect(t, s)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if ErrorKind(err) != tt.kind {
				t.Errorf("kind %s, want %s", ErrorKind(err), tt.kind)
			}
			if _, again := s.Recv(); again != err {
				t.Errorf("Recv after a failure = %v, want the same error", again)
			}
		})
	}
}

func TestStreamRetriesBeforeStart(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error": {"message": "slow down"}}`)
			return
		}
		sse(w, `data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
	})
	c, waits := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	s, err := c.Stream(context.Background(), Request{Messages: userX})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, _, err := collect(t, s)
	if err != io.EOF || text != "ok" || calls.Load() != 2 || len(*waits) != 1 || (*waits)[0] != time.Second {
		t.Errorf("text %q err %v after %d calls, waits %v", text, err, calls.Load(), *waits)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		sse(w, `data: {"choices":[{"delta":{"content":"hi"}}]}`+"\n\n")
		<-r.Context().Done() // stalls
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", StreamIdleTimeout: 300 * time.Millisecond})
	s, err := c.Stream(context.Background(), Request{Messages: userX})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, _, err := collect(t, s)
	if text != "hi" || err == nil || !strings.Contains(err.Error(), "idle") {
		t.Fatalf("text %q, err %v; want the first piece then an idle timeout", text, err)
	}
}

func TestStreamHeaderTimeout(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		<-r.Context().Done()
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond, MaxRetries: -1})
	_, err := c.Stream(context.Background(), Request{Messages: userX})
	if err == nil || !strings.Contains(err.Error(), "no response headers") {
		t.Fatalf("err = %v, want a header timeout", err)
	}
}

func TestStreamCancelMidStream(t *testing.T) {
	serverSaw := make(chan struct{})
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		sse(w, `data: {"choices":[{"delta":{"content":"first"}}]}`+"\n\n")
		<-r.Context().Done()
		close(serverSaw)
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Stream(ctx, Request{Messages: userX})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Recv()
	if err != nil || d.Content != "first" {
		t.Fatalf("first Recv = %+v, %v", d, err)
	}
	go cancel()
	if _, err := s.Recv(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv after cancel = %v, want context.Canceled", err)
	}
	select {
	case <-serverSaw:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request end")
	}
}

func TestStreamCloseFromAnotherGoroutine(t *testing.T) {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		sse(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n")
		<-r.Context().Done()
	})
	c, _ := newClient(t, Config{BaseURL: srv.URL, Model: "m"})
	s, err := c.Stream(context.Background(), Request{Messages: userX})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(10*time.Millisecond, func() { s.Close() })
	if _, err := s.Recv(); err == nil || !strings.Contains(err.Error(), "stream closed") {
		t.Fatalf("Recv after Close = %v", err)
	}
}
