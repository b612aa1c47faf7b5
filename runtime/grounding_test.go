package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
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
	ctx := context.Background()
	sb, err := OpenSandbox(ctx, testCacheDir(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sb.SetTimeoutFloor(5 * time.Second)
	for _, name := range examples.DemoPlugins() {
		if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "examples", "plugins", name)); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	catalog, err := os.ReadFile("../examples/plugins/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	streamTime := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC) // no flash sale running
	ps, err := sb.Plugins(catalog, func() time.Time { return streamTime })
	if err != nil {
		t.Fatal(err)
	}
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
