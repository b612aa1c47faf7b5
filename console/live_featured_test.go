package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// TestFeatureScheduleFollowsTheStrategy: the stream context features the
// item the builder's featured rules feature at that moment of their
// schedule, the catalog's first without one, and the switch of a sold-out
// item.
func TestFeatureScheduleFollowsTheStrategy(t *testing.T) {
	cat, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	// The demo catalog: p-serum first, p-sunscreen sold out.
	for _, tc := range []struct {
		name    string
		plan    strategyPlan
		elapsed time.Duration
		want    string
	}{
		{"no featured rule: the catalog's first", strategyPlan{}, time.Hour, "p-serum"},
		{"one rule, before it fired", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}}, 0, "p-cream"},
		{"one rule, later", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}}, time.Hour, "p-cream"},
		{"two rules: the one fired last", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 3}, {Item: "p-lipstick", EveryMinutes: 5}}},
			5 * time.Minute, "p-lipstick"},
		{"two rules: the first again", strategyPlan{Featured: []featureRule{{Item: "p-cream", EveryMinutes: 3}, {Item: "p-lipstick", EveryMinutes: 5}}},
			6 * time.Minute, "p-cream"},
		{"a sold-out item with a switch: the item presented instead", strategyPlan{
			Featured: []featureRule{{Item: "p-sunscreen", EveryMinutes: 5}}, SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-lipstick"}}}, 0, "p-lipstick"},
		{"a switch of an item in stock changes nothing", strategyPlan{
			Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}}, SoldOut: []switchRule{{Item: "p-cream", To: "p-serum"}}}, 0, "p-cream"},
		{"a sold-out item without a switch stays featured", strategyPlan{Featured: []featureRule{{Item: "p-sunscreen", EveryMinutes: 5}}}, 0, "p-sunscreen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			strat, err := tc.plan.compile(cat, "zh")
			if err != nil {
				t.Fatal(err)
			}
			src := contextSource{cat: cat, feature: featureScheduleOf(cat, strat)}
			ctx := src.at(tc.elapsed)
			want := runtime.FeaturedItem(cat.Product(tc.want).Name, tc.want)
			if len(ctx) != 2 || ctx[0] != want || ctx[1].Title != runtime.ItemsOnSaleTitle {
				t.Errorf("context at %v = %+v, want the featured line %+v", tc.elapsed, ctx, want)
			}
		})
	}
	// A rule the builder did not write (an expert's own instruction)
	// features nothing.
	custom := runtime.Strategy{Rules: []runtime.StrategyRule{{Name: "featured:p-cream", Every: time.Minute, Instruction: "Talk about anything."}}}
	if got := featureScheduleOf(cat, custom).at(time.Hour); got != "p-serum" {
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
