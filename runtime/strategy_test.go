package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/livehat/livehat/harness"
)

func TestStrategyValidate(t *testing.T) {
	bad := []Strategy{
		{Rules: []StrategyRule{{Instruction: "x", Every: time.Minute}}},
		{Rules: []StrategyRule{{Name: "a", Every: time.Minute}}},
		{Rules: []StrategyRule{{Name: "a", Instruction: "x"}}},
		{Rules: []StrategyRule{{Name: "a", Instruction: "x", Every: time.Millisecond}}},
		{Rules: []StrategyRule{{Name: "a", Instruction: "x", Every: time.Minute}, {Name: "a", Instruction: "y", Every: time.Minute}}},
	}
	for i, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("strategy %d accepted", i)
		}
	}
}

// TestSignalRuleNarrates: after enough price questions the coupon rule
// fires once (cooldown), and the narration runs through the turn loop as
// a narration_tick with its hooks.
func TestSignalRuleNarrates(t *testing.T) {
	p := newPlugins()
	s := startSession(t, Config{Plugins: p, Model: priceModel("A 20 yuan coupon is live now!")})
	ev := s.Listen(256)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		n, _ := s.RunStrategy(ctx, Strategy{Rules: []StrategyRule{{
			Name: "coupon_on_price_questions", Signal: "price_questions", Threshold: 3, Window: time.Minute, Cooldown: time.Hour,
			Instruction: "Many viewers ask about price: announce the active coupon.",
		}}}, 10*time.Millisecond)
		done <- n
	}()
	for i, q := range []string{"how much is the serum", "价格多少", "cream price?", "any discount?"} {
		if err := s.Submit(Message{Viewer: string(rune('a' + i)), Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Kind == EventTurn && e.Record.Event == harness.EventNarrationTick {
				if !strings.Contains(e.Record.Input, "announce the active coupon") || e.Record.Outcome != OutcomeReplied {
					t.Errorf("narration turn = %+v", e.Record)
				}
				cancel()
				if n := <-done; n != 1 {
					t.Errorf("rule fired %d times, want 1 (cooldown)", n)
				}
				return
			}
		case <-deadline:
			t.Fatal("no narration within 10 s")
		}
	}
}

// TestRuleFiredBeforeItsNarration: RuleFired names each rule as it fires,
// before the narration turn is built, so the turn's context can already
// show what the narration presents.
func TestRuleFiredBeforeItsNarration(t *testing.T) {
	var mu sync.Mutex
	var fired []string
	featured := "none"
	var prompt string // the system prompt of the narration's first request
	reply := priceModel("Here is the cream!")
	model := scriptedModel(func(req Request) (Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == harness.RoleUser && strings.Contains(last.Content, "Introduce the cream") {
			mu.Lock()
			prompt = req.Messages[0].Content
			mu.Unlock()
		}
		return reply(req)
	})
	cfg := Config{Plugins: newPlugins(), Model: model,
		RuleFired: func(r StrategyRule) { mu.Lock(); fired = append(fired, r.Name); featured = r.Name; mu.Unlock() },
		Context: func() []harness.ContextItem {
			mu.Lock()
			defer mu.Unlock()
			return []harness.ContextItem{{Title: "Featured", Text: featured}}
		}}
	s := startSession(t, cfg)
	ev := s.Listen(256)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.RunStrategy(ctx, Strategy{Rules: []StrategyRule{{Name: "featured:p-cream", Every: time.Second, Cooldown: time.Hour,
		Instruction: "Introduce the cream."}}}, 5*time.Millisecond)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Kind != EventTurn || e.Record.Event != harness.EventNarrationTick {
				continue
			}
			cancel()
			mu.Lock()
			defer mu.Unlock()
			if len(fired) != 1 || fired[0] != "featured:p-cream" {
				t.Fatalf("RuleFired saw %q, want the one rule once", fired)
			}
			if !strings.Contains(prompt, "featured:p-cream") {
				t.Errorf("the narration's prompt does not show the context RuleFired set:\n%s", prompt)
			}
			return
		case <-deadline:
			t.Fatal("no narration within 10 s")
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := startSession(t, Config{Stream: "demo", Plugins: newPlugins(), Model: priceModel("199 yuan."), Metrics: m})
	ask(t, s, s.Listen(16), "serum price?")
	if got := testutil.ToFloat64(m.turns.WithLabelValues("demo", "replied")); got != 1 {
		t.Errorf("replied turns = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(m.turnSeconds); n != 1 {
		t.Errorf("turn histogram series = %d", n)
	}
	if got := testutil.ToFloat64(m.queueDepth.WithLabelValues("demo")); got != 0 {
		t.Errorf("queue depth after the answer = %v, want 0", got)
	}
	if got := testutil.CollectAndCount(m.completionTokens) + testutil.CollectAndCount(m.decodeSeconds); got != 2 {
		t.Errorf("token and decode-time series = %d, want one each", got)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice succeeded")
	}
}

func TestReplay(t *testing.T) {
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("199 yuan.")})
	log := `{"t": 0, "viewer": "a", "text": "serum price?"}
{"t": 0.5, "viewer": "b", "text": "   "}

{"t": 1, "viewer": "c", "text": "链接在哪"}
`
	res, err := Replay(context.Background(), s, strings.NewReader(log), 0)
	if err != nil || res.Sent != 2 || res.Rejected != 1 || res.Lines != 4 {
		t.Errorf("replay = %+v, %v", res, err)
	}
	if _, err := Replay(context.Background(), s, strings.NewReader(`{"t": 2}`+"\n"+`{"t": 1}`), 0); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("time going back: %v", err)
	}
	if _, err := Replay(context.Background(), s, strings.NewReader(`not json`), 0); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed line: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, s, strings.NewReader(`{"t": 5, "viewer": "a", "text": "hi"}`), 1); err == nil {
		t.Error("cancelled replay succeeded")
	}
}
