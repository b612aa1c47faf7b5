package console

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/rehearsal"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// merchantRoutes serves the merchant's path to air on the stream page:
// the strategy builder, its narration preview, the rehearsal and the
// go-live checklist.
//
//	GET  /api/streams/:id/strategy             the builder's plan, the strategy, what the catalog offers
//	PUT  /api/streams/:id/strategy             {"plan", "banned_claims", "revision"} → the stream
//	POST /api/streams/:id/strategy/preview     {"plan", "rule"} → one narration turn of that rule
//	GET  /api/streams/:id/rehearsal/questions  practice questions for the catalog (?lang, ?max)
//	POST /api/streams/:id/rehearsals           {"lang", "questions": [{"text", …}]} → the report
//	GET  /api/streams/:id/rehearsals/latest    {"rehearsal": report or null}
//	GET  /api/streams/:id/golive               the checklist
//	POST /api/streams/:id/golive               {"acknowledge": [codes]} → on air, or 409 with the checklist
func (h *liveHub) merchantRoutes(api fiber.Router) {
	roles := requireRole(store.RoleOperator, store.RoleMerchant)
	api.Get("/streams/:id/strategy", roles, h.s.getStrategy)
	api.Put("/streams/:id/strategy", roles, h.s.putStrategy)
	api.Post("/streams/:id/strategy/preview", roles, h.previewStrategy)
	api.Get("/streams/:id/rehearsal/questions", roles, h.rehearsalQuestions)
	api.Post("/streams/:id/rehearsals", roles, h.runRehearsal)
	api.Get("/streams/:id/rehearsals/latest", roles, h.latestRehearsal)
	api.Get("/streams/:id/golive", roles, h.goLiveChecklist)
	api.Post("/streams/:id/golive", roles, h.goLive)
}

// previewStrategy runs one narration turn of a rule of the plan (saved
// or not) with the serving model, in a session of its own set up as the
// stream's live one, and answers the prompt line the runtime sent, the
// spoken reply with its trace and the grounding verdict, and whether
// the rule's stock signal holds now.
func (h *liveHub) previewStrategy(c *fiber.Ctx) error {
	var req struct {
		Plan strategyPlan `json:"plan"`
		Rule string       `json:"rule"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"plan\", \"rule\"}: "+err.Error())
	}
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	cat, err := storedCatalog(st)
	if err != nil {
		return err
	}
	strat, err := req.Plan.compile(cat, catalogLang(cat))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(strat.Rules, func(r runtime.StrategyRule) bool { return r.Name == req.Rule })
	if i < 0 {
		return badRequest("rule", fmt.Sprintf("the plan has no rule %q", req.Rule))
	}
	rule := strat.Rules[i]
	setup, err := h.setupOf(c.UserContext(), st)
	if err != nil {
		return err
	}
	// On air a featured rule fires with its item featured (and a switch
	// presents its item), which is what the host reads: so here too.
	if item := featuredBy(rule.Name); item != "" {
		shown := *setup
		shown.context = catalogContext(cat, item)
		setup = &shown
	}
	turn, model, err := h.soloTurn(c.UserContext(), st, setup, rule.Instruction, true)
	if err != nil {
		return fiber.NewError(fiber.StatusServiceUnavailable, "the narration did not run: "+err.Error())
	}
	out := fiber.Map{"rule": rule, "model": model, "harness_version": setup.bound, "reply": turn.Reply,
		"outcome": string(turn.Outcome), "reason": turn.Reason, "prompt_line": "", "fires_now": nil}
	for _, m := range turn.Messages {
		if m.Role == "user" {
			out["prompt_line"] = m.Content
			break
		}
	}
	out["hooks"], out["tools"], _ = traceSteps(turn.Steps)
	out["verdict"], out["why"] = verdictOf(turn, groundingHooks(setup.harness))
	if v, ok := stockSignal(cat, rule.Signal); ok {
		out["fires_now"] = v >= rule.Threshold
	}
	return c.JSON(out)
}

// featuredBy is the item a builder's rule makes the featured one when it
// fires: a featured rule's item, a sold-out switch's replacement; "" for
// other rules.
func featuredBy(rule string) string {
	parts := strings.Split(rule, ":")
	switch {
	case parts[0] == ruleFeatured && len(parts) == 2:
		return parts[1]
	case parts[0] == ruleSoldOut && len(parts) == 3:
		return parts[2]
	}
	return ""
}

// Levels of a checklist entry.
const (
	checkOK    = "ok"    // nothing to do
	checkWarn  = "warn"  // a risk the merchant may acknowledge
	checkBlock = "block" // the stream cannot go on air until it is fixed
)

// checkEntry is one line of the go-live checklist. Message is English;
// the page words it from Code and Params. Fix links to where it is
// fixed.
type checkEntry struct {
	Code    string         `json:"code"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Params  map[string]any `json:"params,omitempty"`
	Items   []string       `json:"items,omitempty"`
	Fix     string         `json:"fix,omitempty"`
}

// goLiveList is a stream's checklist: Ready when nothing blocks.
type goLiveList struct {
	StreamID string       `json:"stream_id"`
	Revision int64        `json:"revision"`
	OnAir    bool         `json:"on_air"`
	Ready    bool         `json:"ready"`
	Blocking int          `json:"blocking"`
	Warnings int          `json:"warnings"`
	Checks   []checkEntry `json:"checks"`
}

// Where the checklist's fixes are.
func catalogFix(streamID string, item string) string {
	u := "/catalog?stream=" + url.QueryEscape(streamID)
	if item != "" {
		u += "&item=" + url.QueryEscape(item)
	}
	return u
}

func streamFix(streamID, section string) string {
	return "/streams?focus=" + section + "#" + url.PathEscape(streamID)
}

// checklist checks what a stream needs to go on air and what is risky.
func (h *liveHub) checklist(ctx context.Context, st *store.Stream) (goLiveList, error) {
	list := goLiveList{StreamID: st.ID, Revision: st.Revision, OnAir: st.OnAir, Checks: []checkEntry{}}
	add := func(e checkEntry) { list.Checks = append(list.Checks, e) }
	cat, err := storedCatalog(st)
	if err != nil {
		return list, err
	}
	// The harness and the model: what answers on air.
	switch _, setupErr := h.setupOf(ctx, st); {
	case st.HarnessVersion == "":
		add(checkEntry{Code: "harness_missing", Level: checkBlock, Fix: streamFix(st.ID, "harness"),
			Message: "No harness version is released to this stream: ask an operator for one."})
	case setupErr != nil:
		add(checkEntry{Code: "harness_unusable", Level: checkBlock, Fix: streamFix(st.ID, "harness"), Params: map[string]any{"error": setupErr.Error()},
			Message: "The stream's harness version cannot run: " + setupErr.Error()})
	default:
		add(checkEntry{Code: "harness_released", Level: checkOK, Params: map[string]any{"version": st.HarnessVersion},
			Message: "A harness version is released to the stream."})
	}
	if _, name, err := h.s.streamModel(ctx, st.OrgID, st.ID, ""); err != nil {
		add(checkEntry{Code: "model_missing", Level: checkBlock, Message: "No model serves live sessions: " + err.Error()})
	} else {
		add(checkEntry{Code: "model_ready", Level: checkOK, Params: map[string]any{"model": name}, Message: "The serving model is " + name + "."})
	}
	// The catalog: what the host can state.
	if len(cat.Products) == 0 {
		add(checkEntry{Code: "catalog_empty", Level: checkBlock, Fix: catalogFix(st.ID, ""), Message: "The catalog has no products."})
	} else {
		add(checkEntry{Code: "catalog_products", Level: checkOK, Params: map[string]any{"count": len(cat.Products)},
			Message: fmt.Sprintf("The catalog has %d products.", len(cat.Products))})
	}
	itemCheck := func(code, message string, bad func(p *catalog.Product) bool) {
		var ids []string
		for i := range cat.Products {
			if bad(&cat.Products[i]) {
				ids = append(ids, cat.Products[i].ID)
			}
		}
		if len(ids) == 0 {
			return
		}
		add(checkEntry{Code: code, Level: checkWarn, Items: ids, Fix: catalogFix(st.ID, ids[0]), Params: map[string]any{"items": strings.Join(ids, ", ")},
			Message: message + ": " + strings.Join(ids, ", ") + "."})
	}
	itemCheck("stock_unstated", "Items without a stock count or state (the host can only say it is not stated)", func(p *catalog.Product) bool {
		_, counted := totalStock(p)
		return !counted && catalog.StockStateOf(*p) == ""
	})
	itemCheck("sold_out", "Items sold out", soldOut)
	itemCheck("size_chart_missing", "Clothing without a size chart (viewers ask which size)", func(p *catalog.Product) bool {
		return rehearsal.Apparel(p) && len(p.SizeChart) == 0
	})
	itemCheck("ingredients_missing", "Food or cosmetics without ingredients", func(p *catalog.Product) bool {
		return rehearsal.Consumable(p) && len(p.Ingredients) == 0
	})
	itemCheck("allergens_missing", "Food without allergens stated", func(p *catalog.Product) bool {
		return rehearsal.Food(p) && p.Allergens == nil
	})
	itemCheck("shipping_missing", "Items without shipping terms (dispatch time or fee)", func(p *catalog.Product) bool {
		return p.Shipping == nil || (p.Shipping.DispatchHours == 0 && p.Shipping.Fee == nil)
	})
	itemCheck("returns_missing", "Items without return terms", func(p *catalog.Product) bool { return p.Returns == nil })
	var noMin []string
	for _, cp := range cat.Coupons {
		if cp.MinSpend == 0 {
			noMin = append(noMin, cp.ID)
		}
	}
	if len(noMin) > 0 {
		add(checkEntry{Code: "coupon_no_min_spend", Level: checkWarn, Items: noMin, Fix: catalogFix(st.ID, ""),
			Params:  map[string]any{"items": strings.Join(noMin, ", ")},
			Message: "Coupons without a minimum spend (any order gets them): " + strings.Join(noMin, ", ") + "."})
	}
	h.strategyChecks(st, cat, add)
	if err := h.rehearsalChecks(ctx, st, add); err != nil {
		return list, err
	}
	for _, e := range list.Checks {
		switch e.Level {
		case checkBlock:
			list.Blocking++
		case checkWarn:
			list.Warnings++
		}
	}
	list.Ready = list.Blocking == 0
	return list, nil
}

// strategyChecks checks the strategy against the catalog: a featured
// item for narration, rules that name what the catalog still has, stock
// rules on items with a stated count. A featured rule on any item is
// fine: live sessions feature the item its schedule features now.
func (h *liveHub) strategyChecks(st *store.Stream, cat *catalog.Catalog, add func(checkEntry)) {
	fix := streamFix(st.ID, "strategy")
	strat, err := streamStrategy(st.Strategy)
	if err != nil {
		add(checkEntry{Code: "strategy_invalid", Level: checkBlock, Fix: fix, Message: err.Error()})
		return
	}
	plan := planOf(strat)
	if _, err := plan.compile(cat, catalogLang(cat)); err != nil {
		add(checkEntry{Code: "strategy_stale", Level: checkBlock, Fix: fix, Params: map[string]any{"error": err.Error()},
			Message: "The strategy names what the catalog no longer has: " + err.Error()})
	}
	if len(plan.Featured) == 0 {
		add(checkEntry{Code: "featured_missing", Level: checkWarn, Fix: fix,
			Message: "No featured item for narration: the host speaks only when asked."})
	} else {
		add(checkEntry{Code: "featured_rule", Level: checkOK, Params: map[string]any{"item": plan.Featured[0].Item},
			Message: "The host introduces featured items on a schedule."})
	}
	var uncounted []string
	for _, u := range plan.Urgency {
		if p := cat.Product(u.Item); p != nil {
			if _, ok := totalStock(p); !ok {
				uncounted = append(uncounted, u.Item)
			}
		}
	}
	if len(uncounted) > 0 {
		add(checkEntry{Code: "urgency_uncounted", Level: checkWarn, Items: uncounted, Fix: catalogFix(st.ID, uncounted[0]),
			Params:  map[string]any{"items": strings.Join(uncounted, ", ")},
			Message: "Urgency rules on items without a stock count never fire: " + strings.Join(uncounted, ", ") + "."})
	}
}

// rehearsalChecks checks the stream's latest rehearsal: run, current,
// and every answer backed.
func (h *liveHub) rehearsalChecks(ctx context.Context, st *store.Stream, add func(checkEntry)) error {
	fix := streamFix(st.ID, "rehearsal")
	rep, err := h.s.lastRehearsal(ctx, st)
	if err != nil {
		return err
	}
	switch {
	case rep == nil:
		add(checkEntry{Code: "rehearsal_missing", Level: checkBlock, Fix: fix, Message: "No rehearsal has been run."})
		return nil
	case !rep.Current:
		add(checkEntry{Code: "rehearsal_stale", Level: checkBlock, Fix: fix,
			Message: "The catalog, persona, banned claims or harness changed since the last rehearsal: run it again."})
		return nil
	}
	count := func(verdicts ...string) (n int, questions []string) {
		for _, a := range rep.Answers {
			if slices.Contains(verdicts, a.Verdict) {
				n++
				questions = append(questions, a.Text)
			}
		}
		return n, questions
	}
	if n, qs := count(verdictSafeLine, verdictFailed, verdictDenied); n > 0 {
		add(checkEntry{Code: "rehearsal_unanswered", Level: checkBlock, Fix: fix, Items: qs, Params: map[string]any{"count": n},
			Message: fmt.Sprintf("%d practice questions got no backed answer.", n)})
	}
	if n, qs := count(verdictRewritten); n > 0 {
		add(checkEntry{Code: "rehearsal_rewritten", Level: checkWarn, Fix: fix, Items: qs, Params: map[string]any{"count": n},
			Message: fmt.Sprintf("%d practice answers stated what nothing backed and were rewritten by the grounding check.", n)})
	}
	if n, qs := count(verdictUnchecked); n > 0 {
		add(checkEntry{Code: "rehearsal_unchecked", Level: checkWarn, Fix: streamFix(st.ID, "harness"), Items: qs, Params: map[string]any{"count": n},
			Message: fmt.Sprintf("%d practice answers were not checked against the catalog (no grounding check ran).", n)})
	}
	if n, _ := count(verdictAllow, verdictRetried); n == len(rep.Answers) {
		add(checkEntry{Code: "rehearsal_passed", Level: checkOK, Params: map[string]any{"count": n},
			Message: fmt.Sprintf("All %d practice answers were backed by the catalog.", n)})
	}
	return nil
}

// goLiveChecklist answers a stream's checklist.
func (h *liveHub) goLiveChecklist(c *fiber.Ctx) error {
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	list, err := h.checklist(c.UserContext(), st)
	if err != nil {
		return err
	}
	return c.JSON(list)
}

// goLive puts a stream on air through its checklist: nothing may block,
// and every warning must be in "acknowledge". Otherwise it answers 409
// with code golive_blocked or golive_unacknowledged and the checklist.
func (h *liveHub) goLive(c *fiber.Ctx) error {
	var req struct {
		Acknowledge []string `json:"acknowledge"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"acknowledge\": [codes of the warnings]}: "+err.Error())
	}
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	list, err := h.checklist(c.UserContext(), st)
	if err != nil {
		return err
	}
	var blocking, unacknowledged []string
	for _, e := range list.Checks {
		switch {
		case e.Level == checkBlock:
			blocking = append(blocking, e.Code)
		case e.Level == checkWarn && !slices.Contains(req.Acknowledge, e.Code):
			unacknowledged = append(unacknowledged, e.Code)
		}
	}
	switch {
	case len(blocking) > 0:
		return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "the checklist blocks going on air: " + strings.Join(blocking, ", "),
			"code": "golive_blocked", "field": "checklist", "checklist": list})
	case len(unacknowledged) > 0:
		return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "acknowledge these warnings first: " + strings.Join(unacknowledged, ", "),
			"code": "golive_unacknowledged", "field": "acknowledge", "checklist": list})
	}
	// The same session opening and air event as the operator's switch
	// (POST /live/air), so both paths stay one behaviour.
	return h.setAir(c, st, true)
}
