package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/remote"
)

// openAIServer is an in-process server speaking the chat-completions wire
// format, streaming as the runtime asks: answer(n, request) gives the
// assistant message of the n-th request (from 1).
func openAIServer(t *testing.T, answer func(n int, req map[string]any) map[string]any) (*httptest.Server, *[]map[string]any) {
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
		msg := answer(n, req)
		usage := map[string]any{"prompt_tokens": 1200, "completion_tokens": 9, "total_tokens": 1209}
		if req["stream"] != true {
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, c := range calls {
				c.(map[string]any)["index"] = i
			}
		}
		for _, chunk := range []map[string]any{
			{"choices": []any{map[string]any{"index": 0, "delta": msg}}},
			{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}},
			{"choices": []any{}, "usage": usage, "timings": map[string]any{"cache_n": 1100}},
		} {
			b, _ := json.Marshal(chunk)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// priceAnswers loads the price skill, looks the serum up, then answers
// with inline reasoning.
func priceAnswers(n int, req map[string]any) map[string]any {
	msgs := req["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	switch {
	case last["role"] == "user":
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("c%d", n), "type": "function", "function": map[string]any{"name": "load_skill", "arguments": `{"skill_id":"price_answer"}`}}}}
	case last["role"] == "tool" && last["name"] == "load_skill":
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("c%d", n), "type": "function", "function": map[string]any{"name": "product_lookup", "arguments": `{"query":"serum"}`}}}}
	default:
		return map[string]any{"role": "assistant", "content": "<think>the tool says 199</think>The serum is 199 yuan."}
	}
}

func newRemote(t *testing.T, url string, cfg remote.Config) *remote.Client {
	t.Helper()
	cfg.BaseURL, cfg.Model = url, "qwen"
	client, err := remote.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestRemoteModelInTheLoop(t *testing.T) {
	srv, requests := openAIServer(t, priceAnswers)
	s := startSession(t, Config{Plugins: newPlugins(), Model: RemoteModel{Client: newRemote(t, srv.URL, remote.Config{})}})
	events := s.Listen(64)
	turn := ask(t, s, events, "serum price?")
	if turn.Outcome != OutcomeReplied || turn.Reply != "The serum is 199 yuan." {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	if turn.Timing.PromptTokens != 3600 || turn.Timing.CachedTokens != 3300 {
		t.Errorf("prompt tokens = %d, cached %d; want 3 × 1200 and 3 × 1100", turn.Timing.PromptTokens, turn.Timing.CachedTokens)
	}
	first := (*requests)[0]
	if tools, ok := first["tools"].([]any); !ok || len(tools) != 6 {
		t.Errorf("tools sent = %v", first["tools"])
	}
	if first["tool_choice"] != "required" || (*requests)[1]["tool_choice"] != nil {
		t.Errorf("tool_choice %v then %v: want the turn to open with a call (the reply-skill rule), then the model's choice",
			first["tool_choice"], (*requests)[1]["tool_choice"])
	}
	if first["temperature"] != 0.0 || first["stream"] != true {
		t.Errorf("temperature %v stream %v: want greedy and streamed", first["temperature"], first["stream"])
	}
	system := first["messages"].([]any)[0].(map[string]any)["content"].(string)
	if strings.Contains(system, "<tools>") {
		t.Error("the tool listing was rendered into the prompt although the server templates tools")
	}
	// The third request carries both calls with the server's ids, and the
	// results answer them by id and name.
	var got []string
	for _, m := range (*requests)[2]["messages"].([]any) {
		m := m.(map[string]any)
		if calls, ok := m["tool_calls"].([]any); ok {
			got = append(got, "call "+calls[0].(map[string]any)["id"].(string))
		}
		if m["role"] == "tool" {
			got = append(got, fmt.Sprintf("result %v %v", m["tool_call_id"], m["name"]))
		}
	}
	if want := "call c1|result c1 load_skill|call c2|result c2 product_lookup"; strings.Join(got, "|") != want {
		t.Errorf("ids on the wire: %s, want %s", strings.Join(got, "|"), want)
	}

	// A second turn repeats the first request's prefix byte for byte (the
	// system prompt with the harness, the tools, the first question) and
	// goes on with the first reply, as the session remembers it.
	ask(t, s, events, "and the cream?")
	encode := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	before, next := (*requests)[0], (*requests)[3]
	bm, nm := before["messages"].([]any), next["messages"].([]any)
	if encode(next["tools"]) != encode(before["tools"]) || len(nm) != 4 || encode(nm[:2]) != encode(bm[:2]) ||
		encode(nm[2]) != `{"content":"The serum is 199 yuan.","role":"assistant"}` {
		t.Errorf("the next turn's request does not extend the last one's:\n%s\n%s", encode(nm), encode(bm))
	}
}

func TestRemoteModelSendsItsTemperature(t *testing.T) {
	srv, requests := openAIServer(t, func(int, map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "content": "hi"}
	})
	warm := 0.7
	m := RemoteModel{Client: newRemote(t, srv.URL, remote.Config{}), Temperature: &warm}
	if _, err := m.Generate(context.Background(), Request{Messages: []harness.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := (*requests)[0]["temperature"]; got != 0.7 {
		t.Errorf("temperature = %v, want 0.7", got)
	}
}

// TestRemoteModelMustCall: a call the harness demands goes to the server as
// tool_choice "required" with the tools unchanged, the form llama-server
// enforces, and a prompt its prefix cache already holds.
func TestRemoteModelMustCall(t *testing.T) {
	srv, requests := openAIServer(t, func(int, map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "pick", "arguments": `{"id":"a"}`}}}}
	})
	m := RemoteModel{Client: newRemote(t, srv.URL, remote.Config{})}
	tools := []harness.FunctionSpec{
		{Type: "function", Function: harness.FunctionBody{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}},
		{Type: "function", Function: harness.FunctionBody{Name: "pick", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	msgs := []harness.Message{{Role: "user", Content: "x"}}
	res, err := m.Generate(context.Background(), Request{Messages: msgs, Tools: tools, MustCall: "pick"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "pick" {
		t.Errorf("calls %+v", res.ToolCalls)
	}
	req := (*requests)[0]
	sent, _ := req["tools"].([]any)
	if req["tool_choice"] != "required" || len(sent) != 2 {
		t.Errorf("tool_choice %v, %d tools: want required with both", req["tool_choice"], len(sent))
	}
	if _, err := m.Generate(context.Background(), Request{Messages: msgs, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	if req := (*requests)[1]; req["tool_choice"] != nil || len(req["tools"].([]any)) != 2 {
		t.Errorf("without MustCall: tool_choice %v, %d tools", req["tool_choice"], len(req["tools"].([]any)))
	}
	if _, err := m.Generate(context.Background(), Request{Messages: msgs, Tools: tools, MustCall: "teleport"}); err == nil || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("a tool the request does not offer: err %v", err)
	}
}

// TestRemoteModelRecoversContentToolCalls: a server whose template has no
// tool support passes the model's <tool_call> text through as content; the
// calls still run, and one with raw newlines in its arguments too.
func TestRemoteModelRecoversContentToolCalls(t *testing.T) {
	srv, _ := openAIServer(t, func(n int, req map[string]any) map[string]any {
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		switch {
		case last["role"] == "user":
			return map[string]any{"role": "assistant", "content": "<tool_call>\n{\"name\": \"load_skill\", \"arguments\": {\"skill_id\": \"price_answer\"}}\n</tool_call>"}
		case last["name"] == "load_skill":
			return map[string]any{"role": "assistant", "content": "<tool_call>\n{\"name\": \"product_lookup\", \"arguments\": {\"query\": \"<think>\n\n</think>serum\"}}\n</tool_call>"}
		}
		return map[string]any{"role": "assistant", "content": "The serum is 199 yuan."}
	})
	s := startSession(t, Config{Plugins: newPlugins(), Model: RemoteModel{Client: newRemote(t, srv.URL, remote.Config{})}})
	turn := ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeReplied || turn.Reply != "The serum is 199 yuan." {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	var tools []string
	for _, st := range turn.Steps {
		if st.Kind == "tool" || st.Kind == "skill" {
			tools = append(tools, st.Name+" "+string(st.Input)+" "+st.Error)
		}
	}
	if len(tools) != 2 || !strings.HasPrefix(tools[1], `product_lookup {"query": "<think>\n\n</think>serum"}`) {
		t.Errorf("tool steps = %q", tools)
	}
}

// TestRemoteModelUnreadableCallIsAToolError: a call whose arguments cannot
// be repaired fails its tool step with an error the model is shown; the
// turn goes on and answers.
func TestRemoteModelUnreadableCallIsAToolError(t *testing.T) {
	srv, requests := openAIServer(t, func(n int, req map[string]any) map[string]any {
		if n == 1 {
			return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "bad", "type": "function", "function": map[string]any{"name": "product_lookup", "arguments": `{"query": "serum`}}}}
		}
		return map[string]any{"role": "assistant", "content": "The serum is 199 yuan."}
	})
	h := demo(t)
	h.Pipeline.RequireReplySkill = false
	s := startSession(t, Config{Harness: h, Plugins: newPlugins(), Model: RemoteModel{Client: newRemote(t, srv.URL, remote.Config{})}})
	turn := ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeReplied {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	var step *Step
	for i := range turn.Steps {
		if turn.Steps[i].Kind == "tool" {
			step = &turn.Steps[i]
		}
	}
	if step == nil || step.Name != "product_lookup" || !strings.Contains(step.Error, "schema") {
		t.Fatalf("tool step = %+v, want product_lookup failing its schema", step)
	}
	msgs := (*requests)[1]["messages"].([]any)
	result := msgs[len(msgs)-1].(map[string]any)
	if result["role"] != "tool" || !strings.Contains(result["content"].(string), "error") || result["tool_call_id"] != "bad" {
		t.Errorf("the model was shown %v", result)
	}
}

// TestRemoteModelRefusedAnswerIsAskedAgain: an answer the server's own
// parser refuses after streaming it (llama-server's peg parser meeting a
// broken character) is not sent again unchanged, which would write it
// again, but asked for again with feedback inside the retry budget; with
// the budget spent the turn ends on the safe line naming the refusal.
func TestRemoteModelRefusedAnswerIsAskedAgain(t *testing.T) {
	srv, _ := openAIServer(t, func(n int, req map[string]any) map[string]any {
		msgs := req["messages"].([]any)
		if c, _ := msgs[len(msgs)-1].(map[string]any)["content"].(string); strings.Contains(c, "could not be read") {
			return map[string]any{"role": "assistant", "content": "The serum is 199 yuan."}
		}
		return priceAnswers(n, req)
	})
	var requests atomic.Int32
	refuse := map[int32]bool{3: true, 6: true} // each session's answer after its lookup
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refuse[requests.Add(1)] {
			srv.Config.Handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"玻尿酸\\ufffd\"}}]}\n\n")
		fmt.Fprint(w, `data: {"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`+"\n\n")
	}))
	t.Cleanup(proxy.Close)
	client := newRemote(t, proxy.URL, remote.Config{MaxRetries: 2, MinBackoff: time.Millisecond})

	s := startSession(t, Config{Plugins: newPlugins(), Model: RemoteModel{Client: client}})
	turn := ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeReplied || turn.Reply != "The serum is 199 yuan." {
		t.Fatalf("turn = %s %q (%s), want the answer asked for again", turn.Outcome, turn.Reply, turn.Reason)
	}
	var refusedStep, retry string
	for _, st := range turn.Steps {
		switch {
		case st.Kind == "model" && st.Error != "":
			refusedStep = st.Error
		case st.Kind == "retry":
			retry = st.Output
		}
	}
	if !strings.Contains(refusedStep, "output_rejected after 1 attempt") || !strings.Contains(retry, "could not be read") {
		t.Errorf("model step error %q, retry %q: want the refusal on the trace, once, then the feedback", refusedStep, retry)
	}
	if n := requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4: the refused one is not resent as it was", n)
	}

	h := demo(t)
	h.Pipeline.Retries.Value = 0
	s = startSession(t, Config{Harness: h, Plugins: newPlugins(), Model: RemoteModel{Client: client}})
	turn = ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeSafeLine || !strings.Contains(turn.Reason, "could not be read") || !strings.Contains(turn.Reason, "output_rejected") {
		t.Errorf("no retries left: %s (%s), want the safe line naming the refusal", turn.Outcome, turn.Reason)
	}
}

// TestRemoteModelServerFailures: whatever the server does wrong, the turn
// ends on the safe line within its deadline, the trace and the reason name
// the failure's kind, and /metrics counts it; the next turn works once the
// server does.
func TestRemoteModelServerFailures(t *testing.T) {
	var mode atomic.Value // "down", "hang", "500", "ok"
	mode.Store("ok")
	var stop chan struct{}
	srv, _ := openAIServer(t, func(int, map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "content": "Hello there."}
	})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case "down":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "hang":
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		case "500":
			http.Error(w, `{"error":{"message":"CUDA error"}}`, 500)
		default:
			srv.Config.Handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(proxy.Close)
	stop = make(chan struct{})
	t.Cleanup(func() { close(stop) }) // runs before proxy.Close
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	remoteMetrics, err := NewRemoteMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := NewRemoteMetrics(reg); err != nil || again.attempts != remoteMetrics.attempts {
		t.Fatalf("a second NewRemoteMetrics on the registry: %v; want the same collectors", err)
	}
	client := newRemote(t, proxy.URL, remote.Config{Timeout: 200 * time.Millisecond, MaxRetries: 1,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, OnAttempt: remoteMetrics.Observer("gpu-pool")})
	h := demo(t)
	h.Pipeline.RequireReplySkill = false
	s := startSession(t, Config{Harness: h, Plugins: newPlugins(), Model: RemoteModel{Client: client}, Metrics: metrics,
		Stream: "s1", TurnTimeout: 3 * time.Second})
	events := s.Listen(64)
	for _, tt := range []struct{ mode, kind string }{{"down", "reset"}, {"hang", "timeout"}, {"500", "server_error"}, {"ok", ""}} {
		mode.Store(tt.mode)
		start := time.Now()
		turn := ask(t, s, events, "hello "+tt.mode)
		if tt.mode == "ok" {
			if turn.Outcome != OutcomeReplied {
				t.Fatalf("after the server recovered: %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
			}
			continue
		}
		if turn.Outcome != OutcomeSafeLine || !strings.Contains(turn.Reason, "["+tt.kind+" after 2 attempts]") {
			t.Errorf("%s: turn %s, reason %q; want the safe line naming %s", tt.mode, turn.Outcome, turn.Reason, tt.kind)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: the turn took %v", tt.mode, took)
		}
		var modelErr string
		for _, st := range turn.Steps {
			if st.Kind == "model" {
				modelErr = st.Error
			}
		}
		if !strings.Contains(modelErr, tt.kind) {
			t.Errorf("%s: model step error %q, want the kind shown on the trace", tt.mode, modelErr)
		}
	}
	for outcome, want := range map[string]float64{"reset": 2, "timeout": 2, "server_error": 2, "ok": 1} {
		if got := testutil.ToFloat64(remoteMetrics.attempts.WithLabelValues("gpu-pool", outcome)); got != want {
			t.Errorf("livehat_remote_requests_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
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
