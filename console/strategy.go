package console

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// The strategy builder (the stream page's forms) writes the rules the
// runtime runs (runtime.Strategy) from a plan of four kinds of rule. Each
// builder rule is an ordinary runtime rule whose name says its kind and
// parameters ("featured:p-serum") and whose instruction is the builder's
// template for them, so a stored strategy reads back into the plan with
// nothing but the strategy itself: a rule that does not match its
// template exactly (an expert edited its instruction) is kept as a custom
// rule, never rewritten.
//
// The instructions name items and coupons by id only, in the phrasing the
// bundled model was trained on for strategy turns, so a renamed product
// keeps its rules and the host reads the id it looks up.

// Signal families the console reports to a stream's live session for
// builder rules (liveSession.strategySignals), read from the stream's
// current catalog: "stock_at_most:ITEM:N" is 1 while the item's stated
// count is 1 to N; "sold_out:ITEM" is 1 while the item is sold out.
const (
	signalStockAtMost = "stock_at_most"
	signalSoldOut     = "sold_out"
	signalPriceAsked  = "price_questions"
)

// Rule-name prefixes of the builder's kinds.
const (
	ruleFeatured = "featured"
	ruleCoupon   = "coupon"
	ruleUrgency  = "urgency"
	ruleSoldOut  = "sold_out"
)

// Defaults of the builder's forms, in minutes.
const (
	defaultUrgencyRepeat = 5
	defaultSoldOutRepeat = 10
	defaultPriceWindow   = 1
)

// strategyPlan is the builder's form of a stream's strategy.
type strategyPlan struct {
	// Featured introduces items on a schedule.
	Featured []featureRule `json:"featured"`
	// Coupons announce a coupon on a schedule or when price questions
	// pile up.
	Coupons []couponPush `json:"coupons"`
	// Urgency reminds viewers of an item's stock once its stated count
	// falls to a threshold.
	Urgency []urgencyRule `json:"urgency"`
	// SoldOut moves the host to another item when one sells out.
	SoldOut []switchRule `json:"sold_out"`
	// Custom are rules the builder did not write, kept as they are.
	Custom []runtime.StrategyRule `json:"custom"`
}

// featureRule introduces an item and its live price every EveryMinutes.
type featureRule struct {
	Item         string  `json:"item"`
	EveryMinutes float64 `json:"every_minutes"`
}

// couponPush announces a catalog coupon for an item (by default the
// coupon's first product, else the stream's featured item): every
// EveryMinutes when When is "schedule", or when Questions price
// questions arrive within WindowMinutes when When is "price_questions",
// at most once per CooldownMinutes (default: the schedule, or one minute).
type couponPush struct {
	Coupon          string  `json:"coupon"`
	Item            string  `json:"item,omitempty"`
	When            string  `json:"when"`
	EveryMinutes    float64 `json:"every_minutes,omitempty"`
	Questions       int     `json:"questions,omitempty"`
	WindowMinutes   float64 `json:"window_minutes,omitempty"`
	CooldownMinutes float64 `json:"cooldown_minutes,omitempty"`
}

// Coupon push triggers.
const (
	pushOnSchedule = "schedule"
	pushOnPrice    = "price_questions"
)

// urgencyRule reminds viewers of an item's stock while its stated count
// is 1 to AtMost, at most once per RepeatMinutes (default 5).
type urgencyRule struct {
	Item          string  `json:"item"`
	AtMost        int     `json:"at_most"`
	RepeatMinutes float64 `json:"repeat_minutes,omitempty"`
}

// switchRule says an item sold out and introduces To instead, at most
// once per RepeatMinutes (default 10) while it stays sold out.
type switchRule struct {
	Item          string  `json:"item"`
	To            string  `json:"to"`
	RepeatMinutes float64 `json:"repeat_minutes,omitempty"`
}

// minutes converts a form's minutes to a duration, rounded to the second.
func minutes(m float64) time.Duration {
	return time.Duration(math.Round(m*60)) * time.Second
}

// inMinutes is a duration as a form's minutes.
func inMinutes(d time.Duration) float64 { return d.Minutes() }

// instructionFor is the builder's instruction of a rule kind in a
// language ("zh" or "en"); args are the ids the kind names.
func instructionFor(kind, lang string, args ...string) string {
	zh := lang == "zh"
	pick := func(en, zhText string) string {
		if zh {
			return zhText
		}
		return en
	}
	switch kind {
	case ruleFeatured:
		return pick("Introduce the featured item "+args[0]+" and its live price.", "介绍主推商品"+args[0]+"和直播间价格。")
	case ruleCoupon + ":" + pushOnSchedule:
		return pick("Announce the coupon "+args[0]+" of the featured item "+args[1]+": its amount and the minimum spend.",
			"播报主推商品"+args[1]+"的优惠券"+args[0]+"：面额和使用门槛。")
	case ruleCoupon + ":" + pushOnPrice:
		return pick("Many viewers ask about price: announce the coupon "+args[0]+" of the featured item "+args[1]+".",
			"很多观众在问价格：播报主推商品"+args[1]+"的优惠券"+args[0]+"。")
	case ruleUrgency:
		return pick("Remind viewers of the stock of the featured item "+args[0]+".", "提醒观众主推商品"+args[0]+"的库存情况。")
	case ruleSoldOut:
		return pick("The featured item "+args[0]+" is sold out: say so, and introduce "+args[1]+" and its live price instead.",
			"主推商品"+args[0]+"已售罄：告诉观众，并改为介绍"+args[1]+"和直播间价格。")
	}
	return ""
}

// planField names a field of the plan in errors: "coupons[1].coupon".
func planField(list string, i int, field string) string {
	return fmt.Sprintf("%s[%d].%s", list, i, field)
}

// compile writes the plan as the runtime's strategy for a catalog, in
// lang ("zh" or "en"). Every item and coupon it names must be in the
// catalog; the first problem is a 400 naming its field.
func (p strategyPlan) compile(cat *catalog.Catalog, lang string) (runtime.Strategy, error) {
	var st runtime.Strategy
	item := func(field, id string) error {
		if strings.TrimSpace(id) == "" {
			return badRequest(field, "choose an item")
		}
		if cat.Product(id) == nil {
			return badRequest(field, fmt.Sprintf("no item %q in the stream's catalog", id))
		}
		return nil
	}
	positive := func(field string, v float64) error {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return badRequest(field, "want a number of minutes above 0")
		}
		if minutes(v) < time.Second {
			return badRequest(field, "shorter than a second")
		}
		return nil
	}
	optional := func(field string, v float64) error {
		if v == 0 {
			return nil
		}
		return positive(field, v)
	}
	for i, f := range p.Featured {
		if err := item(planField("featured", i, "item"), f.Item); err != nil {
			return st, err
		}
		if err := positive(planField("featured", i, "every_minutes"), f.EveryMinutes); err != nil {
			return st, err
		}
		st.Rules = append(st.Rules, runtime.StrategyRule{Name: ruleFeatured + ":" + f.Item, Every: minutes(f.EveryMinutes),
			Instruction: instructionFor(ruleFeatured, lang, f.Item)})
	}
	for i, c := range p.Coupons {
		coupon := couponByID(cat, c.Coupon)
		if coupon == nil {
			return st, badRequest(planField("coupons", i, "coupon"), fmt.Sprintf("no coupon %q in the stream's catalog", c.Coupon))
		}
		target := c.Item
		if target == "" {
			target = couponItem(cat, coupon)
		}
		if err := item(planField("coupons", i, "item"), target); err != nil {
			return st, err
		}
		if len(coupon.Products) > 0 && !contains(coupon.Products, target) {
			return st, badRequest(planField("coupons", i, "item"), fmt.Sprintf("coupon %q does not apply to %q", c.Coupon, target))
		}
		if err := optional(planField("coupons", i, "cooldown_minutes"), c.CooldownMinutes); err != nil {
			return st, err
		}
		r := runtime.StrategyRule{Name: ruleCoupon + ":" + c.Coupon + ":" + target, Cooldown: minutes(c.CooldownMinutes),
			Instruction: instructionFor(ruleCoupon+":"+c.When, lang, c.Coupon, target)}
		switch c.When {
		case pushOnSchedule:
			if err := positive(planField("coupons", i, "every_minutes"), c.EveryMinutes); err != nil {
				return st, err
			}
			r.Every = minutes(c.EveryMinutes)
		case pushOnPrice:
			if c.Questions < 1 {
				return st, badRequest(planField("coupons", i, "questions"), "want at least 1 price question")
			}
			window := c.WindowMinutes
			if window == 0 {
				window = defaultPriceWindow
			}
			if err := positive(planField("coupons", i, "window_minutes"), window); err != nil {
				return st, err
			}
			r.Signal, r.Threshold, r.Window = signalPriceAsked, float64(c.Questions), minutes(window)
		default:
			return st, badRequest(planField("coupons", i, "when"), fmt.Sprintf("want %q or %q", pushOnSchedule, pushOnPrice))
		}
		st.Rules = append(st.Rules, r)
	}
	for i, u := range p.Urgency {
		if err := item(planField("urgency", i, "item"), u.Item); err != nil {
			return st, err
		}
		if u.AtMost < 1 {
			return st, badRequest(planField("urgency", i, "at_most"), "want a stock count of 1 or more")
		}
		repeat := u.RepeatMinutes
		if repeat == 0 {
			repeat = defaultUrgencyRepeat
		}
		if err := positive(planField("urgency", i, "repeat_minutes"), repeat); err != nil {
			return st, err
		}
		st.Rules = append(st.Rules, runtime.StrategyRule{Name: ruleUrgency + ":" + u.Item,
			Signal: signalStockAtMost + ":" + u.Item + ":" + strconv.Itoa(u.AtMost), Threshold: 1, Cooldown: minutes(repeat),
			Instruction: instructionFor(ruleUrgency, lang, u.Item)})
	}
	for i, s := range p.SoldOut {
		if err := item(planField("sold_out", i, "item"), s.Item); err != nil {
			return st, err
		}
		if err := item(planField("sold_out", i, "to"), s.To); err != nil {
			return st, err
		}
		if s.To == s.Item {
			return st, badRequest(planField("sold_out", i, "to"), "switch to another item than the one that sold out")
		}
		repeat := s.RepeatMinutes
		if repeat == 0 {
			repeat = defaultSoldOutRepeat
		}
		if err := positive(planField("sold_out", i, "repeat_minutes"), repeat); err != nil {
			return st, err
		}
		st.Rules = append(st.Rules, runtime.StrategyRule{Name: ruleSoldOut + ":" + s.Item + ":" + s.To,
			Signal: signalSoldOut + ":" + s.Item, Threshold: 1, Cooldown: minutes(repeat),
			Instruction: instructionFor(ruleSoldOut, lang, s.Item, s.To)})
	}
	for i, r := range p.Custom {
		if _, ok := builderRule(r); ok {
			return st, badRequest(planField("custom", i, "name"), fmt.Sprintf("%q is the name of a builder rule: use the builder's form", r.Name))
		}
		st.Rules = append(st.Rules, r)
	}
	if err := st.Validate(); err != nil {
		return st, badRequest("plan", err.Error())
	}
	return st, nil
}

// planOf reads a stored strategy back into the builder's plan: each rule
// that is exactly what the builder writes for its name goes to its form,
// every other rule to Custom, unchanged.
func planOf(st runtime.Strategy) strategyPlan {
	p := strategyPlan{Featured: []featureRule{}, Coupons: []couponPush{}, Urgency: []urgencyRule{}, SoldOut: []switchRule{},
		Custom: []runtime.StrategyRule{}}
	for _, r := range st.Rules {
		b, ok := builderRule(r)
		switch {
		case !ok:
			p.Custom = append(p.Custom, r)
		case b.featured != nil:
			p.Featured = append(p.Featured, *b.featured)
		case b.coupon != nil:
			p.Coupons = append(p.Coupons, *b.coupon)
		case b.urgency != nil:
			p.Urgency = append(p.Urgency, *b.urgency)
		case b.soldOut != nil:
			p.SoldOut = append(p.SoldOut, *b.soldOut)
		}
	}
	return p
}

// parsedRule is one builder rule read from a runtime rule.
type parsedRule struct {
	featured *featureRule
	coupon   *couponPush
	urgency  *urgencyRule
	soldOut  *switchRule
}

// builderRule reads a runtime rule as the builder rule its name says, if
// the rule is exactly what the builder writes for it (in either
// language).
func builderRule(r runtime.StrategyRule) (parsedRule, bool) {
	parts := strings.Split(r.Name, ":")
	var b parsedRule
	var want runtime.StrategyRule
	var kind string
	var args []string
	switch {
	case parts[0] == ruleFeatured && len(parts) == 2:
		b.featured = &featureRule{Item: parts[1], EveryMinutes: inMinutes(r.Every)}
		want = runtime.StrategyRule{Name: r.Name, Every: r.Every}
		kind, args = ruleFeatured, parts[1:]
	case parts[0] == ruleCoupon && len(parts) == 3:
		c := couponPush{Coupon: parts[1], Item: parts[2], CooldownMinutes: inMinutes(r.Cooldown)}
		want = runtime.StrategyRule{Name: r.Name, Cooldown: r.Cooldown}
		if r.Signal == signalPriceAsked {
			c.When, c.Questions, c.WindowMinutes = pushOnPrice, int(r.Threshold), inMinutes(r.Window)
			want.Signal, want.Threshold, want.Window = signalPriceAsked, float64(c.Questions), r.Window
		} else {
			c.When, c.EveryMinutes = pushOnSchedule, inMinutes(r.Every)
			want.Every = r.Every
		}
		b.coupon = &c
		kind, args = ruleCoupon+":"+c.When, parts[1:]
	case parts[0] == ruleUrgency && len(parts) == 2:
		n, err := strconv.Atoi(strings.TrimPrefix(r.Signal, signalStockAtMost+":"+parts[1]+":"))
		if err != nil || n < 1 {
			return b, false
		}
		b.urgency = &urgencyRule{Item: parts[1], AtMost: n, RepeatMinutes: inMinutes(r.Cooldown)}
		want = runtime.StrategyRule{Name: r.Name, Signal: signalStockAtMost + ":" + parts[1] + ":" + strconv.Itoa(n), Threshold: 1, Cooldown: r.Cooldown}
		kind, args = ruleUrgency, parts[1:]
	case parts[0] == ruleSoldOut && len(parts) == 3:
		b.soldOut = &switchRule{Item: parts[1], To: parts[2], RepeatMinutes: inMinutes(r.Cooldown)}
		want = runtime.StrategyRule{Name: r.Name, Signal: signalSoldOut + ":" + parts[1], Threshold: 1, Cooldown: r.Cooldown}
		kind, args = ruleSoldOut, parts[1:]
	default:
		return b, false
	}
	// The forms hold whole seconds, a window and the stock rules' repeat
	// are never zero, and a question count is whole: a rule the forms
	// would write back differently stays custom.
	whole := func(d time.Duration) bool { return d >= 0 && minutes(inMinutes(d)) == d }
	switch {
	case !whole(r.Every) || !whole(r.Cooldown) || !whole(r.Window):
		return b, false
	case (b.urgency != nil || b.soldOut != nil) && r.Cooldown == 0:
		return b, false
	case b.coupon != nil && b.coupon.When == pushOnPrice && (r.Window == 0 || b.coupon.Questions < 1):
		return b, false
	}
	for _, lang := range []string{"zh", "en"} {
		want.Instruction = instructionFor(kind, lang, args...)
		if want == r {
			return b, true
		}
	}
	return b, false
}

// couponByID is the catalog's coupon with the id, or nil.
func couponByID(cat *catalog.Catalog, id string) *catalog.Coupon {
	for i := range cat.Coupons {
		if cat.Coupons[i].ID == id {
			return &cat.Coupons[i]
		}
	}
	return nil
}

// couponItem is the item a coupon push presents by default: the
// coupon's first product, else the stream's featured item (the catalog's
// first); "" for an empty catalog.
func couponItem(cat *catalog.Catalog, c *catalog.Coupon) string {
	if len(c.Products) > 0 {
		return c.Products[0]
	}
	if len(cat.Products) > 0 {
		return cat.Products[0].ID
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// totalStock is an item's stated count: its own, else the sum of its
// variants' when every variant states one; ok is false when the catalog
// states no count.
func totalStock(p *catalog.Product) (int, bool) {
	if p.Stock != nil {
		return *p.Stock, true
	}
	if len(p.Variants) == 0 {
		return 0, false
	}
	n := 0
	for _, v := range p.Variants {
		if v.Stock == nil {
			return 0, false
		}
		n += *v.Stock
	}
	return n, true
}

// soldOut reports whether an item is sold out as its catalog entry says:
// its stated state, else a stated count of zero.
func soldOut(p *catalog.Product) bool {
	if s := catalog.StockStateOf(*p); s != "" {
		return s == catalog.SoldOut
	}
	n, ok := totalStock(p)
	return ok && n == 0
}

// strategySignals are the values of the builder's stock signals that the
// strategy's rules read, from the catalog: what a live session's
// runtime.Config.Signals reports.
func strategySignals(cat *catalog.Catalog, st runtime.Strategy) map[string]float64 {
	out := map[string]float64{}
	for _, r := range st.Rules {
		if v, ok := stockSignal(cat, r.Signal); ok {
			out[r.Signal] = v
		}
	}
	return out
}

// stockSignal is the value of one of the builder's stock signals; ok is
// false for a signal of another family.
func stockSignal(cat *catalog.Catalog, signal string) (float64, bool) {
	parts := strings.Split(signal, ":")
	switch {
	case parts[0] == signalStockAtMost && len(parts) == 3:
		n, err := strconv.Atoi(parts[2])
		if err != nil {
			return 0, false
		}
		p := cat.Product(parts[1])
		if p == nil {
			return 0, true
		}
		count, ok := totalStock(p)
		if ok && count >= 1 && count <= n {
			return 1, true
		}
		return 0, true
	case parts[0] == signalSoldOut && len(parts) == 2:
		if p := cat.Product(parts[1]); p != nil && soldOut(p) {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// strategySignals reports the builder's stock signals from the session's
// current catalog, so urgency and sold-out rules follow catalog edits at
// the next refresh.
func (ls *liveSession) strategySignals() map[string]float64 {
	ls.mu.Lock()
	doc, st := ls.setup.catalog, ls.setup.strategy
	ls.mu.Unlock()
	cat, err := catalog.Parse([]byte(doc))
	if err != nil {
		return nil
	}
	return strategySignals(cat, st)
}

// streamStrategy decodes a stream's stored strategy; none is empty.
func streamStrategy(raw json.RawMessage) (runtime.Strategy, error) {
	var st runtime.Strategy
	if len(raw) == 0 || string(raw) == "null" {
		return st, nil
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("stored strategy: %w", err)
	}
	return st, nil
}

// strategyView is what the builder reads: the plan, the strategy it
// stands for, the language its instructions are written in, and what
// the stream's catalog offers to choose from.
type strategyView struct {
	Revision     int64            `json:"revision"`
	Lang         string           `json:"lang"`
	Plan         strategyPlan     `json:"plan"`
	Strategy     runtime.Strategy `json:"strategy"`
	BannedClaims []string         `json:"banned_claims"`
	Featured     string           `json:"featured"`
	Items        []strategyItem   `json:"items"`
	Coupons      []strategyCoupon `json:"coupons"`
}

// strategyItem is a catalog item as the builder lists it.
type strategyItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Link  int    `json:"link,omitempty"`
	Stock *int   `json:"stock"`
	State string `json:"stock_state"`
}

// strategyCoupon is a catalog coupon as the builder lists it.
type strategyCoupon struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Amount   float64  `json:"amount,omitempty"`
	Percent  float64  `json:"percent,omitempty"`
	MinSpend float64  `json:"min_spend,omitempty"`
	Products []string `json:"products"`
}

// catalogLang is the language a stream's host speaks unasked: Chinese
// when its items are named in Chinese (as live sessions decide).
func catalogLang(cat *catalog.Catalog) string {
	return streamLang(catalogContext(cat, ""))
}

// getStrategy answers the builder's view of a stream's strategy.
func (s *Server) getStrategy(c *fiber.Ctx) error {
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	cat, err := storedCatalog(st)
	if err != nil {
		return err
	}
	strat, err := streamStrategy(st.Strategy)
	if err != nil {
		return err
	}
	v := strategyView{Revision: st.Revision, Lang: catalogLang(cat), Plan: planOf(strat), Strategy: strat,
		BannedClaims: orEmpty(st.BannedClaims), Items: []strategyItem{}, Coupons: []strategyCoupon{}}
	if v.Strategy.Rules == nil {
		v.Strategy.Rules = []runtime.StrategyRule{}
	}
	if len(cat.Products) > 0 {
		v.Featured = cat.Products[0].ID
	}
	for i := range cat.Products {
		p := &cat.Products[i]
		it := strategyItem{ID: p.ID, Name: p.Name, Link: p.Link, State: string(catalog.StockStateOf(*p))}
		if n, ok := totalStock(p); ok {
			it.Stock = &n
		}
		if soldOut(p) {
			it.State = string(catalog.SoldOut)
		}
		v.Items = append(v.Items, it)
	}
	for _, cp := range cat.Coupons {
		v.Coupons = append(v.Coupons, strategyCoupon{ID: cp.ID, Name: cp.Name, Amount: cp.Amount, Percent: cp.Percent,
			MinSpend: cp.MinSpend, Products: orEmpty(cp.Products)})
	}
	return c.JSON(v)
}

// strategyBody is a save of the builder: the plan, the banned claims and
// the stream revision the form was loaded at.
type strategyBody struct {
	Plan         strategyPlan `json:"plan"`
	BannedClaims []string     `json:"banned_claims"`
	Revision     int64        `json:"revision"`
}

// putStrategy compiles the plan against the stream's catalog and stores
// the strategy and banned claims, based on the revision the form was
// loaded at (a stale one is a conflict and nothing is stored).
func (s *Server) putStrategy(c *fiber.Ctx) error {
	var req strategyBody
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"plan\", \"banned_claims\", \"revision\"}: "+err.Error())
	}
	if req.Revision <= 0 {
		return badRequest("revision", "send the revision your edit is based on")
	}
	banned := []string{}
	for i, b := range req.BannedClaims {
		if b = strings.TrimSpace(b); b == "" {
			return badRequest(fmt.Sprintf("banned_claims[%d]", i), "the claim is empty")
		}
		banned = append(banned, b)
	}
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	cat, err := storedCatalog(st)
	if err != nil {
		return err
	}
	strat, err := req.Plan.compile(cat, catalogLang(cat))
	if err != nil {
		return err
	}
	raw, err := json.Marshal(strat)
	if err != nil {
		return err
	}
	next := *st
	next.Strategy, next.BannedClaims, next.Revision = raw, banned, req.Revision
	out, err := s.store.UpdateStream(c.UserContext(), scopeOf(c), next)
	if err != nil {
		return storeError(err, "stream")
	}
	return c.JSON(out)
}
