package console

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// exampleCatalog is the demo stream's catalog: p-serum first (featured),
// p-cream with 8 in stock, p-sunscreen sold out, p-hoodie with sizes.
func exampleCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// fullPlan has one rule of every builder kind plus a custom one.
func fullPlan() strategyPlan {
	return strategyPlan{
		Featured: []featureRule{{Item: "p-serum", EveryMinutes: 3}},
		Coupons: []couponPush{
			{Coupon: "c-cream50", Item: "p-cream", When: pushOnPrice, Questions: 3, WindowMinutes: 2, CooldownMinutes: 10},
			{Coupon: "c-all10", Item: "p-serum", When: pushOnSchedule, EveryMinutes: 7.5},
		},
		Urgency: []urgencyRule{{Item: "p-cream", AtMost: 10, RepeatMinutes: 5}},
		SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-lipstick", RepeatMinutes: 10}},
		Custom:  []runtime.StrategyRule{{Name: "greet", Every: time.Minute, Instruction: "Welcome new viewers."}},
	}
}

func TestStrategyPlanCompilesToRuntimeRulesAndReadsBack(t *testing.T) {
	cat := exampleCatalog(t)
	for _, lang := range []string{"zh", "en"} {
		t.Run(lang, func(t *testing.T) {
			st, err := fullPlan().compile(cat, lang)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Validate(); err != nil {
				t.Fatalf("compiled strategy is not valid for the runtime: %v", err)
			}
			byName := map[string]runtime.StrategyRule{}
			for _, r := range st.Rules {
				byName[r.Name] = r
			}
			feat := byName["featured:p-serum"]
			if feat.Every != 3*time.Minute || !strings.Contains(feat.Instruction, "p-serum") {
				t.Errorf("featured rule = %+v", feat)
			}
			price := byName["coupon:c-cream50:p-cream"]
			if price.Signal != "price_questions" || price.Threshold != 3 || price.Window != 2*time.Minute || price.Cooldown != 10*time.Minute {
				t.Errorf("price-question coupon rule = %+v", price)
			}
			if sched := byName["coupon:c-all10:p-serum"]; sched.Every != 450*time.Second || sched.Signal != "" {
				t.Errorf("scheduled coupon rule = %+v", sched)
			}
			if u := byName["urgency:p-cream"]; u.Signal != "stock_at_most:p-cream:10" || u.Threshold != 1 || u.Cooldown != 5*time.Minute {
				t.Errorf("urgency rule = %+v", u)
			}
			if s := byName["sold_out:p-sunscreen:p-lipstick"]; s.Signal != "sold_out:p-sunscreen" || !strings.Contains(s.Instruction, "p-lipstick") {
				t.Errorf("sold-out rule = %+v", s)
			}
			zhText := strings.Contains(feat.Instruction, "主推商品")
			if zhText != (lang == "zh") {
				t.Errorf("instruction %q is not in %s", feat.Instruction, lang)
			}
			// The stored form (JSON) reads back into the same plan.
			raw, _ := json.Marshal(st)
			var back runtime.Strategy
			if err := decodeStrict(raw, &back); err != nil {
				t.Fatal(err)
			}
			if got := planOf(back); !reflect.DeepEqual(got, fullPlan()) {
				t.Errorf("plan read back = %+v\nwant %+v", got, fullPlan())
			}
		})
	}
}

func TestStrategyPlanDefaultsAndItsTarget(t *testing.T) {
	cat := exampleCatalog(t)
	plan := strategyPlan{
		Coupons: []couponPush{{Coupon: "c-cream50", When: pushOnPrice, Questions: 2}, {Coupon: "c-new20", When: pushOnSchedule, EveryMinutes: 5}},
		Urgency: []urgencyRule{{Item: "p-cream", AtMost: 5}},
		SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-serum"}},
	}
	st, err := plan.compile(cat, "en")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, r := range st.Rules {
		names = append(names, r.Name)
	}
	// A coupon for one product presents it; one for all presents the
	// featured item (the catalog's first).
	want := []string{"coupon:c-cream50:p-cream", "coupon:c-new20:p-serum", "urgency:p-cream", "sold_out:p-sunscreen:p-serum"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("rules = %v, want %v", names, want)
	}
	if st.Rules[0].Window != time.Minute || st.Rules[2].Cooldown != 5*time.Minute || st.Rules[3].Cooldown != 10*time.Minute {
		t.Errorf("defaults not applied: %+v", st.Rules)
	}
}

func TestStrategyPlanRefusesWhatTheCatalogLacks(t *testing.T) {
	cat := exampleCatalog(t)
	tests := []struct {
		name  string
		plan  strategyPlan
		field string
	}{
		{"unknown item", strategyPlan{Featured: []featureRule{{Item: "p-nope", EveryMinutes: 3}}}, "featured[0].item"},
		{"no item", strategyPlan{Featured: []featureRule{{EveryMinutes: 3}}}, "featured[0].item"},
		{"no schedule", strategyPlan{Featured: []featureRule{{Item: "p-serum"}}}, "featured[0].every_minutes"},
		{"negative minutes", strategyPlan{Featured: []featureRule{{Item: "p-serum", EveryMinutes: -1}}}, "featured[0].every_minutes"},
		{"unknown coupon", strategyPlan{Coupons: []couponPush{{Coupon: "c-x", When: pushOnSchedule, EveryMinutes: 1}}}, "coupons[0].coupon"},
		{"coupon for another item", strategyPlan{Coupons: []couponPush{{Coupon: "c-cream50", Item: "p-serum", When: pushOnSchedule, EveryMinutes: 1}}}, "coupons[0].item"},
		{"no trigger", strategyPlan{Coupons: []couponPush{{Coupon: "c-new20", When: "sometimes"}}}, "coupons[0].when"},
		{"no question count", strategyPlan{Coupons: []couponPush{{Coupon: "c-new20", When: pushOnPrice}}}, "coupons[0].questions"},
		{"zero threshold", strategyPlan{Urgency: []urgencyRule{{Item: "p-cream"}}}, "urgency[0].at_most"},
		{"switch to itself", strategyPlan{SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-sunscreen"}}}, "sold_out[0].to"},
		{"switch to nothing", strategyPlan{SoldOut: []switchRule{{Item: "p-sunscreen"}}}, "sold_out[0].to"},
		{"same item twice", strategyPlan{Featured: []featureRule{{Item: "p-serum", EveryMinutes: 3}, {Item: "p-serum", EveryMinutes: 4}}}, "plan"},
		{"custom rule under a builder name", strategyPlan{Custom: []runtime.StrategyRule{{Name: "featured:p-serum", Every: time.Minute,
			Instruction: instructionFor(ruleFeatured, "en", "p-serum")}}}, "custom[0].name"},
		{"invalid custom rule", strategyPlan{Custom: []runtime.StrategyRule{{Name: "x", Instruction: "say hi"}}}, "plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.plan.compile(cat, "en")
			fe, ok := err.(*fieldErr)
			if !ok || fe.field != tt.field || fe.code != 400 {
				t.Fatalf("compile error = %v (%T), want a 400 naming %s", err, err, tt.field)
			}
		})
	}
}

func TestStrategyKeepsEditedRulesAsCustom(t *testing.T) {
	edited := []runtime.StrategyRule{
		// An expert reworded the builder's instruction.
		{Name: "featured:p-serum", Every: time.Minute, Instruction: "Talk up the serum."},
		// The signal's item does not match the name's.
		{Name: "urgency:p-cream", Signal: "stock_at_most:p-serum:5", Threshold: 1, Cooldown: time.Minute,
			Instruction: instructionFor(ruleUrgency, "en", "p-cream")},
		// A name with too many parts.
		{Name: "sold_out:a:b:c", Signal: "sold_out:a", Threshold: 1, Instruction: "x"},
		// A repeat the forms cannot hold (not whole seconds), and none.
		{Name: "urgency:a", Signal: "stock_at_most:a:1", Threshold: 1, Cooldown: 59999999935,
			Instruction: instructionFor(ruleUrgency, "zh", "a")},
		{Name: "sold_out:b:c", Signal: "sold_out:b", Threshold: 1, Instruction: instructionFor(ruleSoldOut, "en", "b", "c")},
		// A threshold the builder never writes.
		{Name: "sold_out:p-sunscreen:p-serum", Signal: "sold_out:p-sunscreen", Threshold: 2, Cooldown: time.Minute,
			Instruction: instructionFor(ruleSoldOut, "zh", "p-sunscreen", "p-serum")},
	}
	plan := planOf(runtime.Strategy{Rules: edited})
	if !reflect.DeepEqual(plan.Custom, edited) || len(plan.Featured)+len(plan.Urgency)+len(plan.SoldOut)+len(plan.Coupons) != 0 {
		t.Errorf("plan = %+v, want every rule kept as custom", plan)
	}
}

func TestStrategySignalsFollowTheCatalogStock(t *testing.T) {
	cat := exampleCatalog(t)
	plan := strategyPlan{
		Urgency: []urgencyRule{{Item: "p-cream", AtMost: 10}, {Item: "p-serum", AtMost: 10}, {Item: "p-sunscreen", AtMost: 10}},
		SoldOut: []switchRule{{Item: "p-sunscreen", To: "p-serum"}, {Item: "p-cream", To: "p-serum"}},
	}
	st, err := plan.compile(cat, "en")
	if err != nil {
		t.Fatal(err)
	}
	got := strategySignals(cat, st)
	want := map[string]float64{
		"stock_at_most:p-cream:10":     1, // 8 left
		"stock_at_most:p-serum:10":     0, // 120 left
		"stock_at_most:p-sunscreen:10": 0, // none left is sold out, not urgent
		"sold_out:p-sunscreen":         1,
		"sold_out:p-cream":             0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("signals = %v, want %v", got, want)
	}
	// A restock moves the signals.
	n := 50
	cat.Product("p-cream").Stock = &n
	cat.Product("p-sunscreen").Stock = &n
	got = strategySignals(cat, st)
	if got["stock_at_most:p-cream:10"] != 0 || got["sold_out:p-sunscreen"] != 0 || got["stock_at_most:p-sunscreen:10"] != 0 {
		t.Errorf("signals after a restock = %v", got)
	}
	if _, ok := stockSignal(cat, "price_questions"); ok {
		t.Error("the runtime's own signal read as a stock signal")
	}
}

// FuzzStrategyRuleNames: whatever rule a stored strategy holds, reading
// it into the plan keeps it (as a builder rule or a custom one), and a
// rule read as a builder rule compiles back to exactly itself.
func FuzzStrategyRuleNames(f *testing.F) {
	f.Add("featured:p-serum", "", 1.0, int64(time.Minute), int64(0), int64(0), instructionFor(ruleFeatured, "en", "p-serum"))
	f.Add("urgency:a", "stock_at_most:a:3", 1.0, int64(0), int64(time.Minute), int64(0), instructionFor(ruleUrgency, "zh", "a"))
	f.Add("coupon:c:i", "price_questions", 3.0, int64(0), int64(0), int64(time.Minute), instructionFor(ruleCoupon+":"+pushOnPrice, "en", "c", "i"))
	f.Add("sold_out:x:y", "sold_out:x", 1.0, int64(0), int64(time.Minute), int64(0), instructionFor(ruleSoldOut, "en", "x", "y"))
	f.Fuzz(func(t *testing.T, name, signal string, threshold float64, every, cooldown, window int64, instruction string) {
		r := runtime.StrategyRule{Name: name, Signal: signal, Threshold: threshold, Every: time.Duration(every),
			Cooldown: time.Duration(cooldown), Window: time.Duration(window), Instruction: instruction}
		plan := planOf(runtime.Strategy{Rules: []runtime.StrategyRule{r}})
		n := len(plan.Featured) + len(plan.Coupons) + len(plan.Urgency) + len(plan.SoldOut) + len(plan.Custom)
		if n != 1 {
			t.Fatalf("rule %+v read as %d rules", r, n)
		}
		if len(plan.Custom) == 1 {
			if !reflect.DeepEqual(plan.Custom[0], r) {
				t.Fatalf("custom rule changed: %+v → %+v", r, plan.Custom[0])
			}
			return
		}
		// Build a catalog with the ids the rule names, so it compiles.
		parts := strings.Split(name, ":")
		cat := &catalog.Catalog{Currency: "CNY"}
		for _, id := range parts[1:] {
			cat.Products = append(cat.Products, catalog.Product{ID: id, Name: id, Price: 1})
			cat.Coupons = append(cat.Coupons, catalog.Coupon{ID: id, Name: id, Amount: 1, Products: []string{parts[len(parts)-1]}})
		}
		lang := "en"
		if strings.ContainsAny(instruction, "主") {
			lang = "zh"
		}
		st, err := plan.compile(cat, lang)
		if err != nil {
			return // e.g. a schedule under a second: refused, never rewritten
		}
		if len(st.Rules) != 1 || st.Rules[0] != r {
			t.Fatalf("builder rule %+v compiles back to %+v", r, st.Rules)
		}
	})
}

func TestStrategyAPI(t *testing.T) {
	e := newTestEnv(t, prometheus.NewRegistry())
	path := "/api/streams/" + e.demoStream + "/strategy"
	code, view, raw := e.call(t, e.merchant, "GET", path, "", "")
	if code != 200 {
		t.Fatalf("GET strategy: %d %s", code, raw)
	}
	// The demo's coupon rule is not one the builder writes: it stays custom.
	plan := view["plan"].(map[string]any)
	if custom := plan["custom"].([]any); len(custom) != 1 || custom[0].(map[string]any)["name"] != "coupon_push" {
		t.Errorf("demo plan = %v", plan)
	}
	if view["lang"] != "zh" || view["featured"] != "p-serum" || len(view["items"].([]any)) != 5 || len(view["coupons"].([]any)) != 4 {
		t.Errorf("view = %v", view)
	}
	rev := view["revision"].(float64)
	body := func(p strategyPlan, rev float64) string {
		b, _ := json.Marshal(map[string]any{"plan": p, "banned_claims": []string{"最便宜", " 全网最低 "}, "revision": rev})
		return string(b)
	}
	p := fullPlan()
	code, st, raw := e.call(t, e.merchant, "PUT", path, "application/json", body(p, rev))
	if code != 200 {
		t.Fatalf("PUT strategy: %d %s", code, raw)
	}
	if banned := fmt.Sprint(st["banned_claims"]); banned != "[最便宜 全网最低]" {
		t.Errorf("banned claims = %s", banned)
	}
	// The stream stores runtime rules, which the stream's own PUT accepts.
	rules := st["strategy"].(map[string]any)["rules"].([]any)
	if len(rules) != 6 || !strings.HasPrefix(rules[0].(map[string]any)["instruction"].(string), "介绍主推商品p-serum") {
		t.Errorf("stored rules = %v", rules)
	}
	_, view, _ = e.call(t, e.merchant, "GET", path, "", "")
	b, _ := json.Marshal(view["plan"])
	var back strategyPlan
	_ = json.Unmarshal(b, &back)
	if !reflect.DeepEqual(back, p) {
		t.Errorf("plan after save = %+v", back)
	}
	// A stale revision stores nothing.
	if code, _, raw := e.call(t, e.merchant, "PUT", path, "application/json", body(strategyPlan{}, rev)); code != 409 {
		t.Errorf("stale save: %d %s", code, raw)
	}
	// A bad form names its field.
	bad := strategyPlan{Urgency: []urgencyRule{{Item: "p-nope", AtMost: 3}}}
	code, errBody, _ := e.call(t, e.merchant, "PUT", path, "application/json", body(bad, st["revision"].(float64)))
	if code != 400 || errBody["field"] != "urgency[0].item" {
		t.Errorf("bad plan: %d %v", code, errBody)
	}
	// Another merchant's stream is not found; a developer may not.
	if code, _, _ := e.call(t, e.rival, "GET", path, "", ""); code != 404 {
		t.Errorf("rival GET: %d", code)
	}
	if code, _, _ := e.call(t, e.dev, "GET", path, "", ""); code != 403 {
		t.Errorf("developer GET: %d", code)
	}
}
