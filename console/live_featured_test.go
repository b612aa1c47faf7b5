package console

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// TestFeatureScheduleFollowsTheStrategy: the stream context features the
// item the featuring rule that fired last presented, the strategy's first
// featured item before any fired, the catalog's first without one, and the
// switch of a sold-out item.
func TestFeatureScheduleFollowsTheStrategy(t *testing.T) {
	cat, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	two := strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 3}, {Item: "p-lipstick", EveryMinutes: 5}}}
	// The demo catalog: p-serum first, p-sunscreen sold out.
	for _, tc := range []struct {
		name  string
		plan  strategyPlan
		fired []string // rule names or their beginnings, in the order they fired
		want  string
	}{
		{"no featured rule: the catalog's first", strategyPlan{}, nil, "p-serum"},
		{"one rule, before it fired", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}}, nil, "p-cream"},
		{"one rule, fired", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}}, []string{"featured:p-cream"}, "p-cream"},
		{"two rules, before any fired: the first", two, nil, "p-cream"},
		{"two rules: the one fired last", two, []string{"featured:p-cream", "featured:p-lipstick"}, "p-lipstick"},
		{"two rules: the first again", two, []string{"featured:p-lipstick", "featured:p-cream"}, "p-cream"},
		{"a rule that features nothing keeps the item", strategyPlan{Featured: two.Featured, Coupons: []couponPush{{Coupon: "c-new20", When: pushOnSchedule, EveryMinutes: 5}}},
			[]string{"featured:p-lipstick", "coupon:c-new20:"}, "p-lipstick"},
		{"a sold-out item with a switch: the item presented instead", strategyPlan{
			Featured: []featureRule{{Item: "p-sunscreen", EveryMinutes: 5}}, SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-lipstick"}}}, nil, "p-lipstick"},
		{"the switch fired: its item", strategyPlan{
			Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}, SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-lipstick"}}},
			[]string{"featured:p-cream", "sold_out:p-sunscreen:p-lipstick"}, "p-lipstick"},
		{"a switch of an item in stock changes nothing", strategyPlan{
			Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}, SoldOut: []switchRule{{Item: "p-cream", To: "p-serum"}}}, nil, "p-cream"},
		{"a sold-out item without a switch stays featured", strategyPlan{Featured: []featureRule{{Item: "p-sunscreen", EveryMinutes: 5}}}, nil, "p-sunscreen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			strat, err := tc.plan.compile(cat, "zh")
			if err != nil {
				t.Fatal(err)
			}
			src := contextSource{cat: cat, feature: featureScheduleOf(cat, strat)}
			presented := ""
			for _, name := range tc.fired {
				i := slices.IndexFunc(strat.Rules, func(r runtime.StrategyRule) bool { return strings.HasPrefix(r.Name, name) })
				if i < 0 {
					t.Fatalf("the plan has no rule %q: %+v", name, strat.Rules)
				}
				if item := src.feature.presents(strat.Rules[i]); item != "" {
					presented = item
				}
			}
			ctx := src.at(presented)
			want := runtime.FeaturedItem(cat.Product(tc.want).Name, tc.want)
			if len(ctx) != 2 || ctx[0] != want || ctx[1].Title != runtime.ItemsOnSaleTitle {
				t.Errorf("context after %q = %+v, want the featured line %+v", tc.fired, ctx, want)
			}
		})
	}
	// A rule the builder did not write (an expert's own instruction)
	// features nothing.
	custom := runtime.Strategy{Rules: []runtime.StrategyRule{{Name: "featured:p-cream", Every: time.Minute, Instruction: "Talk about anything."}}}
	f := featureScheduleOf(cat, custom)
	if got := f.presents(custom.Rules[0]); got != "" {
		t.Errorf("a custom rule presents %q, want nothing", got)
	}
	if got := f.at(""); got != "p-serum" {
		t.Errorf("a custom rule features %q, want the catalog's first", got)
	}
}

// TestLiveSessionFeaturesTheStrategysItem: on air, a question that names
// no item is answered about the item the featured rule features, not the
// catalog's first.
func TestLiveSessionFeaturesTheStrategysItem(t *testing.T) {
	e := newLiveEnv(t)
	e.saveStrategy(t, e.demoStream, strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 60}}})
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/streams/"+e.demoStream+"/live/air", "application/json", `{"on_air": true}`); code != 200 {
		t.Fatalf("on air: %d %s", code, raw)
	}
	if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json",
		`{"messages":[{"viewer":"v1","text":"这个多少钱？"}]}`); code != 202 {
		t.Fatalf("ask: %d %s", code, raw)
	}
	var turn liveSSE
	for turn = waitLive(t, events, "turn"); turn.Data["event"] == "narration_tick"; turn = waitLive(t, events, "turn") {
	}
	if reply := turn.Data["reply"].(string); !strings.Contains(reply, "259") || strings.Contains(reply, "199") {
		t.Errorf("reply about the featured item = %q, want the cream's price 259", reply)
	}
	// The host reads the featured item from the stream context only: the
	// catalog's first (p-serum) would be looked up otherwise.
	if actions := fmt.Sprint(turn.Data["actions"]); !strings.Contains(actions, "p-cream") {
		t.Errorf("the avatar shows %s, want the featured p-cream", actions)
	}
}

// TestRuleFiredMovesTheFeaturedLine: a live session's featured line
// follows the rule that fired, only while its strategy runs, and starts
// over when the strategy restarts.
func TestRuleFiredMovesTheFeaturedLine(t *testing.T) {
	cat, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	strat, err := strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 3}, {Item: "p-lipstick", EveryMinutes: 5}}}.compile(cat, "en")
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveSession{}
	ls.context.Store(&contextSource{cat: cat, feature: featureScheduleOf(cat, strat)})
	featured := func() string { return ls.streamContext()[0].Text }
	lipstick := runtime.FeaturedItem(cat.Product("p-lipstick").Name, "p-lipstick").Text
	cream := runtime.FeaturedItem(cat.Product("p-cream").Name, "p-cream").Text

	ls.ruleFired(strat.Rules[1])
	if got := featured(); got != cream {
		t.Errorf("no strategy runs, a rule fired: featured %q, want the first %q", got, cream)
	}
	ls.strategy = func() {}
	ls.ruleFired(strat.Rules[1])
	if got := featured(); got != lipstick {
		t.Errorf("after the lipstick rule fired: featured %q, want %q", got, lipstick)
	}
	ls.stopStrategy()
	if got := featured(); got != cream {
		t.Errorf("after the strategy stopped: featured %q, want the first %q", got, cream)
	}
}
