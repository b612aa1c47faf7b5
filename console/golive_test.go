package console

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// checkLevels maps a checklist's codes to their levels.
func checkLevels(t *testing.T, list map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	checks, ok := list["checks"].([]any)
	if !ok {
		t.Fatalf("no checks in %v", list)
	}
	for _, c := range checks {
		c := c.(map[string]any)
		out[c["code"].(string)] = c["level"].(string)
	}
	return out
}

func codesAt(levels map[string]string, level string) []string {
	var out []string
	for code, l := range levels {
		if l == level {
			out = append(out, code)
		}
	}
	sort.Strings(out)
	return out
}

// saveStrategy stores a builder plan on a stream.
func (e *liveEnv) saveStrategy(t *testing.T, streamID string, plan strategyPlan) {
	t.Helper()
	_, view, _ := e.call(t, e.merchant, "GET", "/api/streams/"+streamID+"/strategy", "", "")
	b, _ := json.Marshal(map[string]any{"plan": plan, "banned_claims": view["banned_claims"], "revision": view["revision"]})
	if code, _, raw := e.call(t, e.merchant, "PUT", "/api/streams/"+streamID+"/strategy", "application/json", string(b)); code != 200 {
		t.Fatalf("save strategy: %d %s", code, raw)
	}
}

func TestGoLiveChecklistOfAnEmptyStream(t *testing.T) {
	e := newLiveEnv(t)
	code, st, raw := e.call(t, e.merchant, "POST", "/api/streams", "application/json", `{"name": "新直播间"}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := st["id"].(string)
	code, list, raw := e.call(t, e.merchant, "GET", "/api/streams/"+id+"/golive", "", "")
	if code != 200 || list["ready"] != false {
		t.Fatalf("checklist: %d %s", code, raw)
	}
	blocks := codesAt(checkLevels(t, list), checkBlock)
	want := []string{"catalog_empty", "harness_missing", "rehearsal_missing"}
	if fmt.Sprint(blocks) != fmt.Sprint(want) {
		t.Errorf("blocking = %v, want %v", blocks, want)
	}
	for _, c := range list["checks"].([]any) {
		c := c.(map[string]any)
		if c["level"] == checkBlock && c["fix"] == nil {
			t.Errorf("blocking check %v has no fix link", c["code"])
		}
		if c["code"] == "catalog_empty" && c["fix"] != "/catalog?stream="+id {
			t.Errorf("catalog fix = %v", c["fix"])
		}
	}
	code, body, raw := e.call(t, e.merchant, "POST", "/api/streams/"+id+"/golive", "application/json", `{"acknowledge": []}`)
	if code != 409 || body["code"] != "golive_blocked" || body["checklist"] == nil {
		t.Errorf("go live on an empty stream: %d %s", code, raw)
	}
	_, st, _ = e.call(t, e.merchant, "GET", "/api/streams/"+id, "", "")
	if st["on_air"] != false {
		t.Error("a blocked stream went on air")
	}
}

// TestGoLiveThroughTheChecklist walks the demo stream to air: its
// warnings name the catalog's gaps, the rehearsal unblocks it, warnings
// must be acknowledged, and a catalog change after the rehearsal blocks
// again.
func TestGoLiveThroughTheChecklist(t *testing.T) {
	e := newLiveEnv(t)
	base := "/api/streams/" + e.demoStream
	e.saveStrategy(t, e.demoStream, strategyPlan{
		Featured: []featureRule{{Item: "p-cream", EveryMinutes: 5}},
		Urgency:  []urgencyRule{{Item: "p-cream", AtMost: 10}},
	})
	_, list, _ := e.call(t, e.merchant, "GET", base+"/golive", "", "")
	levels := checkLevels(t, list)
	if fmt.Sprint(codesAt(levels, checkBlock)) != "[rehearsal_missing]" {
		t.Errorf("blocking = %v", codesAt(levels, checkBlock))
	}
	// The demo catalog: a sold-out sunscreen, coupons without a minimum
	// spend, skincare without ingredients, no link numbers. The featured
	// rule names an item that is not the catalog's first, which is fine:
	// the live session features the rule's item.
	for _, code := range []string{"sold_out", "coupon_no_min_spend", "ingredients_missing"} {
		if levels[code] != checkWarn {
			t.Errorf("%s = %q, want a warning (checks %v)", code, levels[code], levels)
		}
	}
	for _, code := range []string{"stock_unstated", "size_chart_missing", "shipping_missing", "returns_missing", "urgency_uncounted", "featured_missing", "featured_not_first"} {
		if _, ok := levels[code]; ok {
			t.Errorf("%s listed for the demo catalog, which states it", code)
		}
	}
	for _, c := range list["checks"].([]any) {
		if c := c.(map[string]any); c["code"] == "sold_out" && fmt.Sprint(c["items"]) != "[p-sunscreen]" {
			t.Errorf("sold out items = %v", c["items"])
		}
	}
	body, _ := json.Marshal(map[string]any{"questions": []map[string]string{{"text": "精华多少钱？"}, {"text": "面霜还有货吗？"}, {"text": "卫衣165cm穿什么码？"}}})
	if code, _, raw := e.call(t, e.merchant, "POST", base+"/rehearsals", "application/json", string(body)); code != 201 {
		t.Fatalf("rehearsal: %d %s", code, raw)
	}
	_, list, _ = e.call(t, e.merchant, "GET", base+"/golive", "", "")
	levels = checkLevels(t, list)
	if list["ready"] != true || levels["rehearsal_passed"] != checkOK && levels["rehearsal_rewritten"] != checkWarn {
		t.Fatalf("after the rehearsal: ready %v, checks %v", list["ready"], levels)
	}
	warnings := codesAt(levels, checkWarn)
	// Warnings not acknowledged: nothing goes on air.
	code, resp, raw := e.call(t, e.merchant, "POST", base+"/golive", "application/json", `{"acknowledge": ["sold_out"]}`)
	if code != 409 || resp["code"] != "golive_unacknowledged" || resp["field"] != "acknowledge" {
		t.Errorf("unacknowledged: %d %s", code, raw)
	}
	ack, _ := json.Marshal(map[string]any{"acknowledge": warnings})
	code, st, raw := e.call(t, e.merchant, "POST", base+"/golive", "application/json", string(ack))
	if code != 200 || st["on_air"] != true {
		t.Fatalf("go live: %d %s", code, raw)
	}
	// Off air, a catalog change blocks until the rehearsal runs again.
	if code, _, raw := e.call(t, e.merchant, "POST", base+"/live/air", "application/json", `{"on_air": false}`); code != 200 {
		t.Fatalf("off air: %d %s", code, raw)
	}
	_, st, _ = e.call(t, e.merchant, "GET", base, "", "")
	cat := st["catalog"].(map[string]any)
	cat["products"].([]any)[0].(map[string]any)["price"] = 189
	b, _ := json.Marshal(map[string]any{"name": st["name"], "persona": st["persona"], "strategy": st["strategy"], "catalog": cat,
		"banned_claims": st["banned_claims"], "currency": st["currency"], "harness_version": st["harness_version"], "revision": st["revision"]})
	if code, _, raw := e.call(t, e.merchant, "PUT", base, "application/json", string(b)); code != 200 {
		t.Fatalf("edit: %d %s", code, raw)
	}
	_, list, _ = e.call(t, e.merchant, "GET", base+"/golive", "", "")
	if levels := checkLevels(t, list); levels["rehearsal_stale"] != checkBlock || list["ready"] != false {
		t.Errorf("after a price change: %v", levels)
	}
}

func TestGoLiveChecklistFindsMissingFactsAndStaleRules(t *testing.T) {
	e := newLiveEnv(t)
	base := "/api/streams/" + e.demoStream
	_, st, _ := e.call(t, e.merchant, "GET", base, "", "")
	doc := `{"schema": "livehat.catalog/2", "currency": "CNY", "products": [
		{"id": "p-serum", "name": "玻尿酸精华", "category": "护肤", "price": 199, "stock": 50, "ingredients": ["水"],
		 "shipping": {"fee": 0}, "returns": {"accepted": true}},
		{"id": "p-dress", "name": "碎花连衣裙", "category": "女装", "price": 259, "shipping": {"dispatch_hours": 48}, "returns": {"accepted": true}},
		{"id": "p-jam", "name": "草莓果酱", "category": "食品", "price": 29, "stock": 12}
	], "coupons": [{"id": "c-5", "name": "满50减5", "amount": 5, "min_spend": 50}]}`
	b, _ := json.Marshal(map[string]any{"name": st["name"], "persona": st["persona"], "strategy": st["strategy"], "catalog": json.RawMessage(doc),
		"banned_claims": st["banned_claims"], "currency": st["currency"], "harness_version": st["harness_version"], "revision": st["revision"]})
	if code, _, raw := e.call(t, e.merchant, "PUT", base, "application/json", string(b)); code != 200 {
		t.Fatalf("edit: %d %s", code, raw)
	}
	e.saveStrategy(t, e.demoStream, strategyPlan{Featured: []featureRule{{Item: "p-serum", EveryMinutes: 5}},
		Urgency: []urgencyRule{{Item: "p-jam", AtMost: 3}}})
	// Dropping the jam later leaves the urgency rule on an item the
	// catalog lost.
	_, st, _ = e.call(t, e.merchant, "GET", base, "", "")
	_, list, _ := e.call(t, e.merchant, "GET", base+"/golive", "", "")
	items := map[string]string{}
	for _, c := range list["checks"].([]any) {
		c := c.(map[string]any)
		items[c["code"].(string)] = fmt.Sprint(c["items"])
	}
	want := map[string]string{
		"stock_unstated":      "[p-dress]",
		"size_chart_missing":  "[p-dress]",
		"ingredients_missing": "[p-jam]",
		"allergens_missing":   "[p-jam]",
		"shipping_missing":    "[p-jam]",
		"returns_missing":     "[p-jam]",
	}
	for code, ids := range want {
		if items[code] != ids {
			t.Errorf("%s items = %s, want %s", code, items[code], ids)
		}
	}
	if _, ok := items["coupon_no_min_spend"]; ok {
		t.Error("a coupon with a minimum spend listed")
	}
	cat := st["catalog"].(map[string]any)
	cat["products"] = cat["products"].([]any)[:2]
	b, _ = json.Marshal(map[string]any{"name": st["name"], "persona": st["persona"], "strategy": st["strategy"], "catalog": cat,
		"banned_claims": st["banned_claims"], "currency": st["currency"], "harness_version": st["harness_version"], "revision": st["revision"]})
	if code, _, raw := e.call(t, e.merchant, "PUT", base, "application/json", string(b)); code != 200 {
		t.Fatalf("edit: %d %s", code, raw)
	}
	_, list, _ = e.call(t, e.merchant, "GET", base+"/golive", "", "")
	if levels := checkLevels(t, list); levels["strategy_stale"] != checkBlock {
		t.Errorf("a rule on a dropped item: %v", levels)
	}
}

// TestStrategyPreviewRunsOneNarration: the preview sends the rule's
// instruction as the runtime's narration line and answers what the host
// said, with its trace.
func TestStrategyPreviewRunsOneNarration(t *testing.T) {
	e := newLiveEnv(t)
	plan := strategyPlan{Featured: []featureRule{{Item: "p-serum", EveryMinutes: 3}}, Urgency: []urgencyRule{{Item: "p-cream", AtMost: 10}}}
	body, _ := json.Marshal(map[string]any{"plan": plan, "rule": "featured:p-serum"})
	code, out, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/strategy/preview", "application/json", string(body))
	if code != 200 {
		t.Fatalf("preview: %d %s", code, raw)
	}
	line := out["prompt_line"].(string)
	if !strings.HasPrefix(line, "(host strategy, no viewer asked)") || !strings.Contains(line, "介绍主推商品p-serum和直播间价格。") {
		t.Errorf("prompt line = %q", line)
	}
	if out["outcome"] != "replied" || !strings.Contains(out["reply"].(string), "199") || out["fires_now"] != nil {
		t.Errorf("preview = %s", raw)
	}
	if !slicesHave(traceNames(out["tools"], "name"), "product_lookup") {
		t.Errorf("tools = %v", traceNames(out["tools"], "name"))
	}
	body, _ = json.Marshal(map[string]any{"plan": plan, "rule": "urgency:p-cream"})
	_, out, raw = e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/strategy/preview", "application/json", string(body))
	if out["fires_now"] != true {
		t.Errorf("urgency on 8 in stock at most 10 does not fire now: %s", raw)
	}
	// A featured rule on an item that is not the catalog's first narrates
	// that item, as it does on air.
	cream := strategyPlan{Featured: []featureRule{{Item: "p-serum", EveryMinutes: 3}, {Item: "p-cream", EveryMinutes: 5}}}
	body, _ = json.Marshal(map[string]any{"plan": cream, "rule": "featured:p-cream"})
	if _, out, raw = e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/strategy/preview", "application/json", string(body)); !strings.Contains(fmt.Sprint(out["reply"]), "259") {
		t.Errorf("preview of the cream's rule: %s", raw)
	}
	body, _ = json.Marshal(map[string]any{"plan": plan, "rule": "featured:p-cream"})
	if code, errBody, _ := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/strategy/preview", "application/json", string(body)); code != 400 || errBody["field"] != "rule" {
		t.Errorf("unknown rule: %d %v", code, errBody)
	}
}

// TestStrategyUrgencyFiresOnAir: on air, the live session reads the
// builder's stock signal from the catalog and narrates the urgency rule.
func TestStrategyUrgencyFiresOnAir(t *testing.T) {
	e := newLiveEnv(t)
	e.saveStrategy(t, e.demoStream, strategyPlan{Urgency: []urgencyRule{{Item: "p-cream", AtMost: 10, RepeatMinutes: 60}}})
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	if code, _, raw := e.call(t, e.admin, "POST", "/api/streams/"+e.demoStream+"/live/air", "application/json", `{"on_air": true}`); code != 200 {
		t.Fatalf("on air: %d %s", code, raw)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Kind != "turn" || ev.Data["event"] != "narration_tick" {
				continue
			}
			if !strings.Contains(fmt.Sprint(ev.Data["input"]), "提醒观众主推商品p-cream的库存情况") {
				t.Errorf("narration = %v", ev.Data["input"])
			}
			return
		case <-deadline:
			t.Fatal("the urgency rule did not narrate within 30 s")
		}
	}
}
