package console

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestChatCompletionsRunOneTurnOfAStream(t *testing.T) {
	e := newLiveEnv(t)
	body := `{"model":"stream:` + e.demoStream + `","messages":[{"role":"system","content":"ignored"},{"role":"user","content":"How much is the serum?"}],"user":"viewer-7","temperature":0.2}`
	code, resp, raw := e.call(t, e.merchant, "POST", "/v1/chat/completions", "application/json", body)
	if code != 200 || resp["object"] != "chat.completion" {
		t.Fatalf("completion: %d %s", code, raw)
	}
	choice := resp["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if msg["role"] != "assistant" || !strings.Contains(msg["content"].(string), "199 yuan") || choice["finish_reason"] != "stop" {
		t.Errorf("choice = %v", choice)
	}
	lh := resp["livehat"].(map[string]any)
	turn := lh["turn"].(map[string]any)
	if lh["outcome"] != "replied" || turn["source"] != "api" || strings.Join(traceNames(turn["tools"], "name"), ",") != "price_answer,product_lookup" {
		t.Errorf("livehat = %v", lh)
	}
	if traceNames(turn["viewers"], "")[0] == "" {
		t.Errorf("viewers = %v", turn["viewers"])
	}
	// The API turn is stored with the stream's traces.
	_, _, list := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/live/turns?source=api", "", "")
	var stored []turnTrace
	if err := json.Unmarshal(list, &stored); err != nil || len(stored) != 1 || stored[0].Viewers[0] != "viewer-7" {
		t.Errorf("stored api turns: %s", list)
	}

	// The same turn streamed, with the stream named in the header.
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(
		`{"model":"livehat","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"口红多少钱"}]}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.merchant)
	req.Header.Set(streamHeader, e.demoStream)
	code, _, raw = e.do(t, req)
	if code != 200 {
		t.Fatalf("streamed completion: %d %s", code, raw)
	}
	var content strings.Builder
	var finish any
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	if lines[len(lines)-1] != "data: [DONE]" {
		t.Errorf("stream does not end with [DONE]: %q", lines[len(lines)-1])
	}
	for i, l := range lines[:len(lines)-1] {
		var ch map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &ch); err != nil || ch["object"] != "chat.completion.chunk" {
			t.Fatalf("event %d = %q", i, l)
		}
		c := ch["choices"].([]any)[0].(map[string]any)
		delta := c["delta"].(map[string]any)
		if i == 0 && delta["role"] != "assistant" {
			t.Errorf("first delta = %v", delta)
		}
		if s, ok := delta["content"].(string); ok {
			content.WriteString(s)
		}
		finish = c["finish_reason"]
	}
	if finish != "stop" || !strings.Contains(content.String(), "89元") || len(lines) < 3 {
		t.Errorf("streamed %d events, content %q, finish %v", len(lines), content.String(), finish)
	}
}

func TestChatCompletionsAreAuthenticatedAndScoped(t *testing.T) {
	e := newTestEnv(t, nil)
	body := `{"model":"stream:` + e.demoStream + `","messages":[{"role":"user","content":"hi"}]}`
	code, resp, raw := e.call(t, "", "POST", "/v1/chat/completions", "application/json", body)
	if code != 401 || resp["error"].(map[string]any)["type"] != "authentication_error" {
		t.Errorf("without a token: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, "lh_not-a-token", "POST", "/v1/chat/completions", "application/json", body); code != 401 {
		t.Errorf("with a bad token: %d", code)
	}
	for name, tok := range map[string]string{"rival": e.rival, "developer": e.dev} {
		if code, _, raw := e.call(t, tok, "POST", "/v1/chat/completions", "application/json", body); code != 404 {
			t.Errorf("%s drives the demo stream: %d %s", name, code, raw)
		}
	}
	for _, c := range []struct{ body, param string }{
		{`{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{`{"model":"stream:` + e.demoStream + `","messages":[]}`, "messages"},
		{`{"model":"stream:` + e.demoStream + `","n":2,"messages":[{"role":"user","content":"hi"}]}`, "n"},
		{`{"model":"stream:` + e.demoStream + `","tools":[{"type":"function"}],"messages":[{"role":"user","content":"hi"}]}`, "tools"},
		{`{"model":"stream:` + e.demoStream + `","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`, "messages[1].role"},
		{`{"model":"stream:` + e.demoStream + `","messages":[{"role":"user","content":""}]}`, "messages[0].content"},
		{`{"model":"stream:` + e.demoStream + `","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "messages[0].content"},
		{`{"model":"stream:` + e.demoStream + `","max_tokens":100000,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{`[1,2]`, "body"},
	} {
		code, resp, raw := e.call(t, e.merchant, "POST", "/v1/chat/completions", "application/json", c.body)
		errObj, _ := resp["error"].(map[string]any)
		if code != 400 || errObj["param"] != c.param {
			t.Errorf("%s: %d %s; want 400 naming %s", c.body, code, raw, c.param)
		}
	}
	// The merchant's own stream, but no model is configured.
	if code, _, raw := e.call(t, e.merchant, "POST", "/v1/chat/completions", "application/json", body); code != 503 {
		t.Errorf("without a model: %d %s", code, raw)
	}
}
