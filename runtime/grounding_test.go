package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// TestGroundingBeforeSpeech runs the demo harness's grounding hook (the
// example WASM plugin) on replies a model really wrote on a merchant's
// stream: whatever the model says twice, what goes on air is backed by
// the turn's tool results — the catalog's facts for what was asked — and
// a backed reply passes untouched.
func TestGroundingBeforeSpeech(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	// No flash sale runs at this stream time.
	ps := demoPluginSet(t, time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), examples.DemoPlugins()...)
	cases := []struct {
		name     string
		question string
		skill    string
		calls    []harness.ToolCall
		reply    string // what the model says on every attempt
		onAir    []string
		notOnAir []string
		retried  bool
	}{
		{name: "another item's coupon", question: "面霜多少钱", skill: "price_answer",
			calls: []harness.ToolCall{call("product_lookup", `{"query":"面霜"}`)},
			reply: "可以用30元券，券后128元！", onAir: []string{"259"}, notOnAir: []string{"128", "30元"}, retried: true},
		{name: "in stock claimed for a sold-out item", question: "防晒还有货吗", skill: "product_facts",
			calls: []harness.ToolCall{call("check_stock", `{"item_id":"p-sunscreen"}`)},
			reply: "有货的，喜欢抓紧拍！", notOnAir: []string{"有货的"}, retried: true},
		{name: "tool-call markup", question: "精华多少钱", skill: "price_answer",
			calls: []harness.ToolCall{call("product_lookup", `{"query":"精华"}`)},
			reply: `<tool_call>{"name": "coupon_check", "arguments": {"item_id": "p-serum"}}</tool_call>`,
			onAir: []string{"199"}, notOnAir: []string{"tool_call", "{"}, retried: true},
		{name: "a pinned link without send_link", question: "口红链接在哪", skill: "purchase_link",
			calls: []harness.ToolCall{call("product_lookup", `{"query":"口红"}`)},
			reply: "链接已经帮您置顶啦！", notOnAir: []string{"置顶"}, retried: true},
		{name: "a backed reply passes as written", question: "精华多少钱", skill: "price_answer",
			calls: []harness.ToolCall{call("product_lookup", `{"query":"精华"}`)},
			reply: "玻尿酸精华现在199元，原价299元。", onAir: []string{"玻尿酸精华现在199元，原价299元。"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startSession(t, Config{Harness: demo(t), Plugins: ps, Model: scriptedModel(func(req Request) (Response, error) {
				// The model loads the skill, makes the calls, then keeps
				// saying the same thing whatever the feedback.
				var done int
				for _, m := range req.Messages {
					if m.Role == harness.RoleTool {
						done++
					}
				}
				switch {
				case done == 0:
					return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"`+c.skill+`"}`)}}, nil
				case done <= len(c.calls):
					return Response{ToolCalls: []harness.ToolCall{c.calls[done-1]}}, nil
				}
				return Response{Content: c.reply}, nil
			})})
			turn := ask(t, s, s.Listen(64), c.question)
			t.Logf("%s -> on air %q", c.question, turn.Reply)
			if turn.Outcome != OutcomeReplied {
				t.Fatalf("outcome %s (%s), reply %q", turn.Outcome, turn.Reason, turn.Reply)
			}
			for _, w := range c.onAir {
				if !strings.Contains(turn.Reply, w) {
					t.Errorf("on air %q, want it to say %q", turn.Reply, w)
				}
			}
			for _, w := range c.notOnAir {
				if strings.Contains(turn.Reply, w) {
					t.Errorf("on air %q says %q", turn.Reply, w)
				}
			}
			retried := false
			for _, st := range turn.Steps {
				retried = retried || st.Kind == "retry"
			}
			if retried != c.retried {
				t.Errorf("retried %v, want %v; steps %+v", retried, c.retried, turn.Steps)
			}
		})
	}
}

// TestGroundingKnowsTheViewer: a live session passes a viewer's chat
// handle as the hook input's viewer id; the grounding hook reads it as the
// viewer's name, so an English greeting of "大猫" is no Chinese in an
// English reply (the expert's chitchat answers were rewritten for it).
func TestGroundingKnowsTheViewer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ps := demoPluginSet(t, time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), examples.DemoPlugins()...)
	const reply = "Welcome 大猫! Glad you're here, ask me anything."
	s := startSession(t, Config{Harness: demo(t), Plugins: ps, Model: scriptedModel(func(req Request) (Response, error) {
		if req.Messages[len(req.Messages)-1].Role == harness.RoleUser {
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"chitchat"}`)}}, nil
		}
		return Response{Content: reply}, nil
	})})
	events := s.Listen(64)
	if err := s.Submit(Message{Viewer: "大猫", Text: "Hi host, first time here"}); err != nil {
		t.Fatal(err)
	}
	for e := range events {
		if e.Kind != EventTurn {
			continue
		}
		if e.Record.Outcome != OutcomeReplied || e.Record.Reply != reply {
			t.Fatalf("%s %q (%s), want the greeting on air as written", e.Record.Outcome, e.Record.Reply, e.Record.Reason)
		}
		return
	}
}

// BenchmarkGroundingHook is the grounding hook's cost per call through
// the plugin host, as a turn pays it: a price answer with its product
// lookup and coupon check, backed (allow) and unbacked (retry with
// feedback, or on the last attempt the rewrite to backed facts).
func BenchmarkGroundingHook(b *testing.B) {
	ctx := context.Background()
	ps := demoPluginSet(b, time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), "grounding")
	input := func(reply string, attempt int) json.RawMessage {
		in := plugins.HookInput{Event: harness.EventAfterResponse, Stream: "demo", Session: "s1", Viewer: &plugins.Viewer{ID: "v1"},
			Text: reply, Message: "面霜多少钱，有券吗", Lang: "zh", Attempt: attempt, Attempts: 2,
			Context: []harness.ContextItem{{Title: "Featured item", Text: "玻尿酸精华 (id p-serum)"}},
			Calls: []plugins.ToolCall{
				{Name: "product_lookup", Plugin: "storefront", Export: "product_lookup", Arguments: json.RawMessage(`{"query":"面霜"}`),
					Result: json.RawMessage(`{"found":true,"item_id":"p-cream","name":"修护面霜","price":"259","currency":"CNY","variants":[],"attributes":{"volume":"50g"},"description":"50g barrier repair cream with ceramides","list_price":"359","promotion":"28% off during the live stream"}`)},
				{Name: "coupon_check", Plugin: "storefront", Export: "coupon_check", Arguments: json.RawMessage(`{"item_id":"p-cream"}`),
					Result: json.RawMessage(`{"item_id":"p-cream","quantity":1,"total":"259","coupon":{"id":"c-cream50","amount":"50","min_spend":"300"},"eligible":false,"total_after_coupon":"259","missing_spend":"41"}`)},
			}}
		raw, err := json.Marshal(in)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	for _, c := range []struct {
		name  string
		input json.RawMessage
		want  harness.Action
	}{
		{"backed", input("修护面霜现在259元，满300减50的券还差41元。", 1), harness.ActionAllow},
		{"unbacked-retry", input("可以用30元券，券后128元！", 1), harness.ActionRetry},
		{"unbacked-rewrite", input("可以用30元券，券后128元！", 2), harness.ActionRewrite},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				d, err := ps.Hook(ctx, "grounding", "check_grounding", c.input)
				if err != nil || d.Action != c.want {
					b.Fatalf("decision %+v, %v; want %s", d, err, c.want)
				}
			}
		})
	}
}
