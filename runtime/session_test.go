package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// scriptedModel answers with a function of the request: the test decides
// what the model "says" so each path of the loop can be driven.
type scriptedModel func(req Request) (Response, error)

func (f scriptedModel) Generate(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	return f(req)
}

// goPlugins implements the plugin exports in Go, keyed "plugin/export",
// for tests of the loop's logic; plugins_test.go runs real WASM plugins.
type goPlugins struct {
	mu    sync.Mutex
	tools map[string]func(json.RawMessage) (json.RawMessage, error)
	hooks map[string]func(json.RawMessage) (harness.HookDecision, error)
	calls []string
}

func (g *goPlugins) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	g.mu.Lock()
	g.calls = append(g.calls, "tool:"+export+string(args))
	f := g.tools[plugin+"/"+export]
	g.mu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("no export %s/%s", plugin, export)
	}
	return f(args)
}

func (g *goPlugins) Hook(ctx context.Context, plugin, export string, input json.RawMessage) (harness.HookDecision, error) {
	g.mu.Lock()
	g.calls = append(g.calls, "hook:"+export)
	f := g.hooks[plugin+"/"+export]
	g.mu.Unlock()
	if f == nil {
		return harness.HookDecision{Action: harness.ActionAllow}, nil
	}
	return f(input)
}

func (g *goPlugins) Skill(ctx context.Context, plugin, export string, input json.RawMessage) (string, error) {
	return "", nil
}

func demo(t *testing.T) *harness.Harness {
	t.Helper()
	h, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newPlugins() *goPlugins {
	return &goPlugins{
		tools: map[string]func(json.RawMessage) (json.RawMessage, error){
			"storefront/product_lookup": func(json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"found":true,"item_id":"SE1","price":"199"}`), nil
			},
			"storefront/coupon_check": func(json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"eligible":true,"amount":"20"}`), nil
			},
		},
		hooks: map[string]func(json.RawMessage) (harness.HookDecision, error){},
	}
}

func call(name, args string) harness.ToolCall {
	return harness.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// priceModel loads the price skill, looks the item up, then answers.
func priceModel(reply string) scriptedModel {
	return func(req Request) (Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == harness.RoleUser && !strings.Contains(last.Content, "rejected"):
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
		case last.Role == harness.RoleTool && last.Name == "load_skill":
			return Response{ToolCalls: []harness.ToolCall{call("product_lookup", `{"query":"serum"}`)}}, nil
		default:
			return Response{Content: reply, Reasoning: "the tool said 199", Usage: Usage{PromptTokens: 900, CachedTokens: 800}}, nil
		}
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startSession(t *testing.T, cfg Config) *Session {
	t.Helper()
	if cfg.Harness == nil {
		cfg.Harness = demo(t)
	}
	cfg.Logger = quietLogger()
	s, err := NewSession(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// ask submits one message and waits for its turn record.
func ask(t *testing.T, s *Session, events <-chan Event, text string) *Turn {
	t.Helper()
	if err := s.Submit(Message{Viewer: "v1", Text: text}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == EventTurn {
				return e.Record
			}
		case <-timeout:
			t.Fatal("no turn within 10 s")
		}
	}
}

func TestTurnWithToolsAndSkill(t *testing.T) {
	p := newPlugins()
	s := startSession(t, Config{Model: priceModel("The serum is 199 yuan. Tap the link!"), Plugins: p})
	ev := s.Listen(64)
	turn := ask(t, s, ev, "How much is the serum?")
	if turn.Outcome != OutcomeReplied || turn.Reply != "The serum is 199 yuan. Tap the link!" {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	if want := []string{"The serum is 199 yuan.", "Tap the link!"}; strings.Join(turn.Chunks, "|") != strings.Join(want, "|") {
		t.Errorf("chunks = %q, want %q", turn.Chunks, want)
	}
	if want := []AvatarAction{{Kind: "show_item", Item: "SE1"}}; !slices.Equal(turn.Actions, want) {
		t.Errorf("actions = %v, want %v (the lookup named item SE1)", turn.Actions, want)
	}
	var kinds []string
	for _, st := range turn.Steps {
		kinds = append(kinds, st.Kind+":"+st.Name)
	}
	got := strings.Join(kinds, " ")
	for _, w := range []string{"hook:spam_filter", "skill:price_answer", "tool:product_lookup", "hook:compliance", "hook:speech_length"} {
		if !strings.Contains(got, w) {
			t.Errorf("trace %q lacks %s", got, w)
		}
	}
	if strings.Index(got, "hook:compliance") > strings.Index(got, "hook:speech_length") {
		t.Errorf("after_response hooks out of order: %s", got)
	}
	for _, st := range turn.Steps {
		if st.Kind == "model" && strings.Contains(st.Output, "<think>") && strings.Contains(turn.Reply, "think") {
			t.Error("reasoning leaked into the reply")
		}
	}
	if turn.Timing.Total <= 0 || turn.Timing.FirstChunk <= 0 || turn.Timing.PromptTokens != 900 || turn.Timing.CachedTokens != 800 {
		t.Errorf("timing = %+v", turn.Timing)
	}
	if turn.HarnessVersion != s.Harness().Version() {
		t.Error("turn does not record its harness version")
	}
	if snap := s.Stats().Snapshot(); snap.Turns != 1 || snap.Total.P50 <= 0 {
		t.Errorf("stats = %+v", snap)
	}
}

func TestHookDecisions(t *testing.T) {
	decide := func(d harness.HookDecision) func(json.RawMessage) (harness.HookDecision, error) {
		return func(json.RawMessage) (harness.HookDecision, error) { return d, nil }
	}
	t.Run("viewer_message deny drops the message", func(t *testing.T) {
		p := newPlugins()
		p.hooks["moderation/screen_message"] = decide(harness.HookDecision{Action: harness.ActionDeny, Reason: "spam"})
		s := startSession(t, Config{Model: priceModel("x"), Plugins: p})
		turn := ask(t, s, s.Listen(64), "加微信abc123")
		if turn.Outcome != OutcomeDenied || turn.Reason != "spam" || turn.Reply != "" {
			t.Errorf("turn = %s %q %q", turn.Outcome, turn.Reason, turn.Reply)
		}
	})
	t.Run("viewer_message rewrite and inject reach the model", func(t *testing.T) {
		p := newPlugins()
		p.hooks["moderation/screen_message"] = decide(harness.HookDecision{Action: harness.ActionRewrite, Text: "how much is the serum"})
		var seen []harness.Message
		var mu sync.Mutex
		model := priceModel("199 yuan.")
		s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
			mu.Lock()
			seen = req.Messages
			mu.Unlock()
			return model(req)
		})})
		turn := ask(t, s, s.Listen(64), "HOW MUCH IS THE SERUM!!!")
		mu.Lock()
		defer mu.Unlock()
		if turn.Outcome != OutcomeReplied || turn.Messages[0].Content != "how much is the serum" {
			t.Errorf("model saw %q", turn.Messages[0].Content)
		}
		if seen[0].Role != harness.RoleSystem {
			t.Error("no system prompt")
		}
	})
	t.Run("after_response retry sends the model back, then accepts", func(t *testing.T) {
		p := newPlugins()
		n := 0
		p.hooks["compliance/check_reply"] = func(in json.RawMessage) (harness.HookDecision, error) {
			n++
			var hi struct{ Text string }
			_ = json.Unmarshal(in, &hi)
			if strings.Contains(hi.Text, "best") {
				return harness.HookDecision{Action: harness.ActionRetry, Feedback: "no absolute claims."}, nil
			}
			return harness.HookDecision{Action: harness.ActionAllow}, nil
		}
		replies := []string{"The best serum, 199 yuan.", "It is 199 yuan."}
		i := 0
		base := priceModel("")
		s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
			r, err := base(req)
			if r.Content == "" && len(r.ToolCalls) == 0 {
				last := req.Messages[len(req.Messages)-1]
				if i == 1 && !strings.Contains(last.Content, "no absolute claims.") {
					return Response{}, errors.New("retry feedback not shown to the model")
				}
				r.Content = replies[min(i, 1)]
				i++
			}
			return r, err
		})})
		turn := ask(t, s, s.Listen(64), "serum price?")
		if turn.Outcome != OutcomeReplied || turn.Reply != "It is 199 yuan." || n != 2 {
			t.Errorf("turn = %s %q (%s), hook calls %d", turn.Outcome, turn.Reply, turn.Reason, n)
		}
	})
	t.Run("after_response retry with a call holds the next answer to the tool that runs it", func(t *testing.T) {
		for _, tc := range []struct{ call, want string }{
			{"coupon_check", "coupon_check"},
			{"storefront/coupon_check", "coupon_check"},
			{"other_plugin/coupon_check", ""}, // no tool of the harness runs it: a plain retry
		} {
			p := newPlugins()
			p.hooks["compliance/check_reply"] = func(in json.RawMessage) (harness.HookDecision, error) {
				var hi struct{ Attempt int }
				_ = json.Unmarshal(in, &hi)
				if hi.Attempt == 1 {
					return harness.HookDecision{Action: harness.ActionRetry, Feedback: "check the coupon", Call: tc.call}, nil
				}
				return harness.HookDecision{Action: harness.ActionAllow}, nil
			}
			var musts []string
			base := priceModel("It is 199 yuan.")
			s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
				musts = append(musts, req.MustCall)
				return base(req)
			})})
			turn := ask(t, s, s.Listen(64), "serum price?")
			// The load, the lookup, the answer sent back, the answer.
			if want := []string{"load_skill", "", "", tc.want}; turn.Outcome != OutcomeReplied || !slices.Equal(musts, want) {
				t.Errorf("call %q: turn %s (%s), generations must call %q, want %q", tc.call, turn.Outcome, turn.Reason, musts, want)
			}
		}
	})
	t.Run("an empty last attempt goes to the hooks, which may answer", func(t *testing.T) {
		for _, tc := range []struct {
			rewrite string
			want    Outcome
		}{{"It is 199 yuan.", OutcomeReplied}, {"", OutcomeSafeLine}} {
			p := newPlugins()
			p.hooks["compliance/check_reply"] = func(in json.RawMessage) (harness.HookDecision, error) {
				var hi struct{ Text string }
				_ = json.Unmarshal(in, &hi)
				if hi.Text == "" && tc.rewrite != "" {
					return harness.HookDecision{Action: harness.ActionRewrite, Text: tc.rewrite}, nil
				}
				return harness.HookDecision{Action: harness.ActionAllow}, nil
			}
			s := startSession(t, Config{Plugins: p, Model: priceModel(""), SafeLine: "One moment please."})
			turn := ask(t, s, s.Listen(64), "serum price?")
			if turn.Outcome != tc.want || tc.want == OutcomeReplied && turn.Reply != tc.rewrite {
				t.Errorf("hook rewrite %q: turn %s %q (%s)", tc.rewrite, turn.Outcome, turn.Reply, turn.Reason)
			}
		}
	})
	t.Run("retry budget spent gives the safe line", func(t *testing.T) {
		p := newPlugins()
		p.hooks["compliance/check_reply"] = decide(harness.HookDecision{Action: harness.ActionRetry, Feedback: "still wrong"})
		s := startSession(t, Config{Plugins: p, Model: priceModel("bad"), SafeLine: "One moment please."})
		turn := ask(t, s, s.Listen(64), "serum price?")
		if turn.Outcome != OutcomeSafeLine || turn.Reply != "One moment please." || !strings.Contains(turn.Reason, "retry budget") {
			t.Errorf("turn = %s %q %q", turn.Outcome, turn.Reply, turn.Reason)
		}
		retries := 0
		for _, st := range turn.Steps {
			if st.Kind == "retry" {
				retries++
			}
		}
		if retries != s.Harness().Pipeline.Retries.Value {
			t.Errorf("%d retries, want the budget %d", retries, s.Harness().Pipeline.Retries.Value)
		}
	})
	t.Run("failing fail_closed hook gives the safe line, fail_open passes", func(t *testing.T) {
		p := newPlugins()
		p.hooks["compliance/check_reply"] = func(json.RawMessage) (harness.HookDecision, error) { return harness.HookDecision{}, errors.New("trap") }
		p.hooks["moderation/screen_message"] = func(json.RawMessage) (harness.HookDecision, error) {
			return harness.HookDecision{Action: "explode"}, nil // garbage from a fail_open hook
		}
		s := startSession(t, Config{Plugins: p, Model: priceModel("199 yuan.")})
		turn := ask(t, s, s.Listen(64), "serum price?")
		if turn.Outcome != OutcomeSafeLine || !strings.Contains(turn.Reason, "fail_closed") {
			t.Errorf("turn = %s %q", turn.Outcome, turn.Reason)
		}
	})
	t.Run("after_response sees the turn's calls, message, language, context and attempt", func(t *testing.T) {
		p := newPlugins()
		var seen []plugins.HookInput
		p.hooks["compliance/check_reply"] = func(raw json.RawMessage) (harness.HookDecision, error) {
			var in plugins.HookInput
			if err := json.Unmarshal(raw, &in); err != nil {
				return harness.HookDecision{}, err
			}
			seen = append(seen, in)
			if len(seen) == 1 {
				return harness.HookDecision{Action: harness.ActionRetry, Feedback: "say the price"}, nil
			}
			return harness.HookDecision{Action: harness.ActionAllow}, nil
		}
		ctxItems := []harness.ContextItem{{Title: "Featured item", Text: "玻尿酸精华"}}
		s := startSession(t, Config{Plugins: p, Model: priceModel("199元"), Context: func() []harness.ContextItem { return ctxItems }})
		turn := ask(t, s, s.Listen(64), "精华多少钱")
		if turn.Outcome != OutcomeReplied || len(seen) != 2 {
			t.Fatalf("turn = %s %q, after_response ran %d times", turn.Outcome, turn.Reason, len(seen))
		}
		first := seen[0]
		if first.Message != "精华多少钱" || first.Lang != "zh" || first.Text != "199元" {
			t.Errorf("message %q lang %q text %q", first.Message, first.Lang, first.Text)
		}
		if len(first.Calls) != 1 || first.Calls[0].Name != "product_lookup" || first.Calls[0].Plugin != "storefront" ||
			first.Calls[0].Export != "product_lookup" || string(first.Calls[0].Result) != `{"found":true,"item_id":"SE1","price":"199"}` ||
			string(first.Calls[0].Arguments) != `{"query":"serum"}` {
			t.Errorf("calls %+v (load_skill is not a plugin call and is left out)", first.Calls)
		}
		if !slices.Equal(first.Context, ctxItems) {
			t.Errorf("context %+v", first.Context)
		}
		budget := s.Harness().Pipeline.Retries.Value + 1
		if first.Attempt != 1 || first.Attempts != budget || seen[1].Attempt != 2 || seen[1].Attempts != budget {
			t.Errorf("attempts %d/%d then %d/%d, want 1/%d then 2/%d", first.Attempt, first.Attempts, seen[1].Attempt, seen[1].Attempts, budget, budget)
		}
	})
	t.Run("after_response rewrite is what is spoken", func(t *testing.T) {
		p := newPlugins()
		p.hooks["speech-length/fit_speech"] = decide(harness.HookDecision{Action: harness.ActionRewrite, Text: "199 yuan."})
		s := startSession(t, Config{Plugins: p, Model: priceModel("It is 199 yuan, and let me tell you a long story about it.")})
		turn := ask(t, s, s.Listen(64), "serum price?")
		if turn.Reply != "199 yuan." {
			t.Errorf("reply %q", turn.Reply)
		}
	})
}

func TestReplySkillRuleAndToolErrors(t *testing.T) {
	p := newPlugins()
	step := 0
	var sawFeedback, sawSchemaError, sawUnknown bool
	s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
		last := req.Messages[len(req.Messages)-1]
		step++
		if want := map[int]string{1: "load_skill", 2: "load_skill"}[step]; req.MustCall != want {
			t.Errorf("generation %d must call %q, want %q", step, req.MustCall, want)
		}
		switch step {
		case 1: // answer straight away, without a skill
			return Response{Content: "199 yuan."}, nil
		case 2:
			sawFeedback = strings.Contains(last.Content, "Load a reply skill with load_skill")
			return Response{ToolCalls: []harness.ToolCall{call("coupon_check", `{"item_id": 5}`), call("teleport", `{}`)}}, nil
		case 3:
			prev := req.Messages[len(req.Messages)-2]
			sawSchemaError = strings.Contains(prev.Content, "do not match its schema")
			sawUnknown = strings.Contains(last.Content, `unknown tool \"teleport\"`)
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
		default:
			return Response{Content: "It is 199 yuan."}, nil
		}
	})})
	turn := ask(t, s, s.Listen(64), "serum price?")
	if turn.Outcome != OutcomeReplied || !sawFeedback || !sawSchemaError || !sawUnknown {
		t.Errorf("outcome %s (%s) feedback %v schema %v unknown %v", turn.Outcome, turn.Reason, sawFeedback, sawSchemaError, sawUnknown)
	}
	for _, c := range p.calls {
		if strings.HasPrefix(c, "tool:coupon_check") {
			t.Error("a call with invalid arguments reached the plugin")
		}
	}
}

func TestToolRoundLimit(t *testing.T) {
	p := newPlugins()
	var withoutTools int
	var mu sync.Mutex
	s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
		if req.Tools == nil {
			mu.Lock()
			withoutTools++
			mu.Unlock()
		}
		// A model stuck in a loop: always calls a tool.
		return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
	})})
	turn := ask(t, s, s.Listen(64), "serum price?")
	rounds := 0
	for _, st := range turn.Steps {
		if st.Kind == "skill" {
			rounds++
		}
	}
	if limit := s.Harness().Pipeline.ToolRounds.Value; rounds != limit {
		t.Errorf("%d tool rounds ran, want the limit %d", rounds, limit)
	}
	mu.Lock()
	defer mu.Unlock()
	if withoutTools == 0 || turn.Outcome != OutcomeSafeLine {
		t.Errorf("after the limit the model must answer without tools: calls without tools %d, outcome %s", withoutTools, turn.Outcome)
	}
}

func TestModelFailureAndRecovery(t *testing.T) {
	p := newPlugins()
	fail := true
	var mu sync.Mutex
	good := priceModel("199 yuan.")
	s := startSession(t, Config{Plugins: p, SafeLine: "稍等一下哦", Model: scriptedModel(func(req Request) (Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return Response{}, errors.New("backend down")
		}
		return good(req)
	})})
	ev := s.Listen(64)
	turn := ask(t, s, ev, "serum price?")
	if turn.Outcome != OutcomeSafeLine || turn.Reply != "稍等一下哦" {
		t.Errorf("turn = %s %q", turn.Outcome, turn.Reply)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if turn := ask(t, s, ev, "and the price now?"); turn.Outcome != OutcomeReplied {
		t.Errorf("session did not recover: %s %s", turn.Outcome, turn.Reason)
	}
}

func TestHotSwapBetweenTurns(t *testing.T) {
	p := newPlugins()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	first := true
	var mu sync.Mutex
	model := priceModel("199 yuan.")
	s := startSession(t, Config{Plugins: p, Model: scriptedModel(func(req Request) (Response, error) {
		mu.Lock()
		wait := first
		first = false
		mu.Unlock()
		if wait {
			entered <- struct{}{}
			<-release
		}
		return model(req)
	})})
	ev := s.Listen(64)
	old := s.Harness()
	if err := s.Submit(Message{Viewer: "a", Text: "serum price?"}); err != nil {
		t.Fatal(err)
	}
	<-entered
	next := old.Clone()
	next.Pipeline.ReplyChars.Value = 90
	if err := s.Swap(next); err != nil {
		t.Fatal(err)
	}
	close(release)
	var turns []*Turn
	if err := s.Submit(Message{Viewer: "b", Text: "what about the cream price?"}); err != nil {
		t.Fatal(err)
	}
	for len(turns) < 2 {
		if e := <-ev; e.Kind == EventTurn {
			turns = append(turns, e.Record)
		}
	}
	if turns[0].HarnessVersion != old.Version() || turns[1].HarnessVersion != next.Version() {
		t.Error("in-flight turn must finish on its version and the next must use the new one")
	}
	bad := next.Clone()
	bad.Layout.Style = "html"
	if err := s.Swap(bad); err == nil || s.Harness() != next {
		t.Error("an invalid harness was swapped in")
	}
}

func TestCloseCancelsAndLeaksNothing(t *testing.T) {
	before := goruntime.NumGoroutine()
	for range 5 {
		entered := make(chan struct{}, 1)
		s, err := NewSession(context.Background(), Config{Harness: demo(t), Plugins: newPlugins(), Logger: quietLogger(),
			Model: ctxModel(func(ctx context.Context) (Response, error) {
				entered <- struct{}{}
				<-ctx.Done()
				return Response{}, ctx.Err()
			})})
		if err != nil {
			t.Fatal(err)
		}
		ev := s.Listen(8)
		if err := s.Submit(Message{Viewer: "a", Text: "price?"}); err != nil {
			t.Fatal(err)
		}
		<-entered
		s.Close()
		for e := range ev { // closed when the session ends
			if e.Kind == EventTurn && e.Record.Outcome != OutcomeCancelled {
				t.Errorf("outcome %s, want cancelled", e.Record.Outcome)
			}
		}
		if err := s.Submit(Message{Viewer: "a", Text: "again"}); err == nil {
			t.Error("Submit after Close succeeded")
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > before {
		t.Errorf("goroutines: %d before, %d after closing sessions", before, n)
	}
}

type ctxModel func(ctx context.Context) (Response, error)

func (f ctxModel) Generate(ctx context.Context, req Request) (Response, error) { return f(ctx) }

func TestBadMessages(t *testing.T) {
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("x")})
	for _, m := range []Message{
		{Viewer: "a", Text: "   "},
		{Viewer: "a", Text: strings.Repeat("长", 1000)},
		{Viewer: "a", Text: "\xff\xfe"},
		{Viewer: "a", Text: "nul\x00byte"},
	} {
		if err := s.Submit(m); err == nil {
			t.Errorf("Submit(%q…) accepted", m.Text[:min(len(m.Text), 10)])
		}
	}
	if st := s.QueueStats(); st.Rejected != 4 {
		t.Errorf("rejected = %d, want 4", st.Rejected)
	}
	if _, err := NewSession(context.Background(), Config{Harness: demo(t)}); err == nil {
		t.Error("a session without model and plugins started")
	}
}

func TestSpeakableChunks(t *testing.T) {
	cases := map[string][]string{
		"现在199元。喜欢就拍！有问题吗？":                {"现在199元。", "喜欢就拍！", "有问题吗？"},
		"It is 179.10 yuan. Tap the link!": {"It is 179.10 yuan.", "Tap the link!"},
		"No punctuation at the end":        {"No punctuation at the end"},
		"":                                 nil,
		"Line one\nLine two.":              {"Line one", "Line two."},
	}
	for in, want := range cases {
		if got := SpeakableChunks(in); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("SpeakableChunks(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestActionsOf(t *testing.T) {
	cases := map[string][]AvatarAction{
		`{"found":true,"item_id":"A1","price":"9"}`:                          {{Kind: "show_item", Item: "A1"}},
		`{"pinned":true,"item_id":"A1"}`:                                     {{Kind: "point_at_link", Item: "A1"}},
		`{"avatar_action":{"kind":"hold_up","item_id":"B2"},"item_id":"A1"}`: {{Kind: "hold_up", Item: "B2"}},
		`{"stock":{"M":3}}`:                                                  nil,
		`not json`:                                                           nil,
	}
	for in, want := range cases {
		if got := actionsOf([]byte(in)); !slices.Equal(got, want) {
			t.Errorf("actionsOf(%s) = %v, want %v", in, got, want)
		}
	}
}

// TestConcurrentTurns: with Concurrency 2 the next question is generated
// while the first is still in the model, and both are answered.
func TestConcurrentTurns(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	release := make(chan struct{})
	model := priceModel("199 yuan.")
	s := startSession(t, Config{Plugins: newPlugins(), Concurrency: 2, Model: scriptedModel(func(req Request) (Response, error) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if last := req.Messages[len(req.Messages)-1]; last.Role == harness.RoleUser {
			<-release // hold the first generation of each turn
		}
		return model(req)
	})})
	ev := s.Listen(64)
	for _, q := range []string{"serum price?", "what is the cream made of?"} {
		if err := s.Submit(Message{Viewer: "v", Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := inFlight
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	turns := 0
	for turns < 2 {
		select {
		case e := <-ev:
			if e.Kind == EventTurn {
				turns++
				if e.Record.Outcome != OutcomeReplied {
					t.Errorf("turn %s: %s", e.Record.Input, e.Record.Outcome)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("turns did not finish")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 2 {
		t.Errorf("at most %d generations ran at once, want 2", most)
	}
}

// TestBatchedTurn: with Queue.Batch 3, the product questions queued while
// a turn runs are answered in the next turn, one user message addressed
// to each viewer; the moderation hook still screens every message, and a
// denied one is left out of the prompt and recorded as denied.
func TestBatchedTurn(t *testing.T) {
	p := newPlugins()
	p.hooks["moderation/screen_message"] = func(in json.RawMessage) (harness.HookDecision, error) {
		var hi struct{ Text string }
		if err := json.Unmarshal(in, &hi); err != nil {
			return harness.HookDecision{}, err
		}
		if strings.Contains(hi.Text, "微信") {
			return harness.HookDecision{Action: harness.ActionDeny, Reason: "spam"}, nil
		}
		return harness.HookDecision{Action: harness.ActionAllow}, nil
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var prompts []string
	var bounds []int
	model := priceModel("Answered.")
	s := startSession(t, Config{Plugins: p, Queue: QueueConfig{Batch: 3}, Model: scriptedModel(func(req Request) (Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == harness.RoleUser {
			mu.Lock()
			prompts = append(prompts, last.Content)
			bounds = append(bounds, req.MaxTokens)
			first := len(prompts) == 1
			mu.Unlock()
			if first {
				<-release // hold the first turn while the burst queues
			}
		}
		return model(req)
	})})
	ev := s.Listen(64)
	submit := func(v, text string) {
		if err := s.Submit(Message{Viewer: v, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	submit("v0", "精华多少钱？")
	for {
		mu.Lock()
		n := len(prompts)
		mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	submit("v1", "口红多少钱？")
	submit("v2", "口红多少钱呀") // near-duplicate of v1's
	submit("v3", "面霜多少钱？加微信abc123")
	submit("v4", "what size for 170cm?")
	submit("v5", "链接在哪") // another class: its own turn
	close(release)
	var turns []*Turn
	for len(turns) < 3 {
		select {
		case e := <-ev:
			if e.Kind == EventTurn {
				turns = append(turns, e.Record)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d turns finished, want 3", len(turns))
		}
	}
	b := turns[1]
	if b.Outcome != OutcomeReplied || strings.Join(b.Viewers, ",") != "v1,v2,v4" {
		t.Fatalf("batched turn = %s, viewers %v; want replied to v1, v2, v4", b.Outcome, b.Viewers)
	}
	want := "(2 viewer questions at once; answer each, naming who asked)\n" +
		"1. (asked by 2 viewers: v1, v2) 口红多少钱？\n" +
		"2. (v4) what size for 170cm?"
	if b.Messages[0].Content != want {
		t.Errorf("batched user message:\n%s\nwant:\n%s", b.Messages[0].Content, want)
	}
	mu.Lock()
	if len(bounds) < 2 || bounds[0] != 512 || bounds[1] != 1024 {
		t.Errorf("generation bounds %v, want 512 for one question and 1024 for two", bounds)
	}
	mu.Unlock()
	var asked []string
	for _, a := range b.Asked {
		asked = append(asked, fmt.Sprintf("%s:%d:%s", a.Viewer, a.Question, a.Denied))
	}
	if got := strings.Join(asked, " "); got != "v1:0: v2:0: v3:1:spam v4:2:" {
		t.Errorf("asked = %s", got)
	}
	var hookViewers []string
	for _, st := range b.Steps {
		if st.Kind == "hook" && st.Event == harness.EventViewerMessage && st.Name == "spam_filter" {
			hookViewers = append(hookViewers, st.Viewer)
		}
	}
	if strings.Join(hookViewers, ",") != "v1,v2,v3,v4" {
		t.Errorf("moderation ran for %v, want each message", hookViewers)
	}
	if turns[2].Viewers[0] != "v5" || len(turns[2].Asked) != 1 {
		t.Errorf("third turn = %v, want v5's purchase question alone", turns[2].Viewers)
	}
	if st := s.QueueStats(); st.Started != 3 || st.Batched != 2 || st.Merged != 1 {
		t.Errorf("queue stats = %+v", st)
	}
}

// TestBatchedTurnAllDenied: a turn whose every message is denied says
// nothing and records each denial.
func TestBatchedTurnAllDenied(t *testing.T) {
	p := newPlugins()
	p.hooks["moderation/screen_message"] = func(json.RawMessage) (harness.HookDecision, error) {
		return harness.HookDecision{Action: harness.ActionDeny, Reason: "spam"}, nil
	}
	s := startSession(t, Config{Plugins: p, Model: priceModel("x"), Queue: QueueConfig{Batch: 4}})
	turn := ask(t, s, s.Listen(64), "加微信abc123")
	if turn.Outcome != OutcomeDenied || turn.Reason != "spam" || len(turn.Asked) != 1 || turn.Asked[0].Denied != "spam" {
		t.Errorf("turn = %s %q %+v", turn.Outcome, turn.Reason, turn.Asked)
	}
}

// TestCloseDropsQueuedWithReason: messages still queued when a session
// closes are reported as dropped, each with its reason.
func TestCloseDropsQueuedWithReason(t *testing.T) {
	started := make(chan struct{}, 1)
	s := startSession(t, Config{Plugins: newPlugins(), Model: ctxModel(func(ctx context.Context) (Response, error) {
		started <- struct{}{}
		<-ctx.Done() // the first turn holds until Close cancels it
		return Response{}, ctx.Err()
	})})
	ev := s.Listen(64)
	for _, q := range []string{"serum price?", "cream price?", "cream price??", "lipstick price?"} {
		if err := s.Submit(Message{Viewer: "v", Text: q}); err != nil {
			t.Fatal(err)
		}
		if q == "serum price?" {
			<-started
		}
	}
	s.Close()
	var dropped []string
	for e := range ev {
		if e.Kind == EventDropped {
			dropped = append(dropped, e.Message.Text+": "+e.Reason)
		}
	}
	want := []string{"cream price?: session closed: still queued", "cream price??: session closed: still queued", "lipstick price?: session closed: still queued"}
	if !slices.Equal(dropped, want) {
		t.Errorf("dropped = %q, want %q", dropped, want)
	}
	if st := s.QueueStats(); st.Closed != 2 || st.Merged != 1 || st.Started != 1 {
		t.Errorf("queue stats = %+v", st)
	}
}

// TestGenerationsCarryTheQuestionsArrival checks that every generation of
// a turn tells the backend when its question arrived, so that a shared
// engine serves a turn's later rounds before newer questions.
func TestGenerationsCarryTheQuestionsArrival(t *testing.T) {
	var mu sync.Mutex
	var since []time.Time
	price := priceModel("The serum is 199 yuan.")
	m := scriptedModel(func(req Request) (Response, error) {
		mu.Lock()
		since = append(since, req.Since)
		mu.Unlock()
		return price(req)
	})
	s := startSession(t, Config{Model: m, Plugins: newPlugins()})
	ev := s.Listen(64)
	before := time.Now()
	turn := ask(t, s, ev, "How much is the serum?")
	if turn.Outcome != OutcomeReplied {
		t.Fatalf("turn = %s (%s)", turn.Outcome, turn.Reason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(since) != 3 {
		t.Fatalf("%d generations, want 3 (skill, lookup, reply)", len(since))
	}
	for i, at := range since {
		if at.Before(before.Add(-time.Second)) || at.After(time.Now()) || !at.Equal(since[0]) {
			t.Errorf("generation %d: Since %v, want the question's arrival (after %v), the same for every round", i, at, before)
		}
	}
}

func TestReplyLang(t *testing.T) {
	history := []harness.Message{
		{Role: harness.RoleUser, Content: "how much is the cream"},
		{Role: harness.RoleAssistant, Content: "259 yuan."},
		{Role: harness.RoleUser, Content: "面霜有货吗"},
		{Role: harness.RoleUser, Content: narrationPrefix + "Announce the coupon."},
	}
	for _, c := range []struct {
		message string
		history []harness.Message
		stream  string
		want    string
	}{
		{"面霜多少钱", nil, "en", "zh"},
		{"3号链接 how much", nil, "", "zh"},
		{"how much is the cream?", nil, "zh", "en"},
		{"", nil, "", "en"},
		{narrationPrefix + "Announce the coupon.", history, "en", "zh"},
		{narrationPrefix + "Announce the coupon.", history[:2], "zh", "en"},
		{narrationPrefix + "Announce the coupon.", nil, "zh", "zh"},
		{narrationPrefix + "Announce the coupon.", nil, "", "en"},
		{narrationPrefix + "介绍主推商品。", nil, "", "zh"},
	} {
		if got := replyLang(c.message, c.history, c.stream); got != c.want {
			t.Errorf("replyLang(%q, %d messages, stream %q) = %q, want %q", c.message, len(c.history), c.stream, got, c.want)
		}
	}
}
