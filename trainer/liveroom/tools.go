package liveroom

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/harness/catalog"
)

// Canonical tool and skill names: those of the demo harness
// (examples/harness/demo.json). Gold calls use them; a variant harness
// reaches them through its HSA mapping.
const (
	ToolProductLookup  = "product_lookup"
	ToolCheckStock     = "check_stock"
	ToolCouponCheck    = "coupon_check"
	ToolShippingPolicy = "shipping_policy"
	ToolSendLink       = "send_link"
	ToolLoadSkill      = "load_skill"

	SkillPrice    = "price_answer"
	SkillSize     = "size_advice"
	SkillFacts    = "product_facts"
	SkillShipping = "shipping_returns"
	SkillChitchat = "chitchat"
	SkillLink     = "purchase_link"
	SkillCoupon   = "coupon_push"
)

// NotStated is what a tool says for a fact the catalog does not state,
// where catalogs of version 1 always stated it (a shipping fee, a dispatch
// time, a return window, a stock count).
const NotStated = "not stated"

// ToolError is a tool failure the agent should handle: a bad argument,
// an unknown item. It is returned to the model as the tool's result.
type ToolError struct{ Msg string }

// Error returns the message the model reads.
func (e *ToolError) Error() string { return e.Msg }

// CallTool runs one of the room's tools on JSON arguments and returns its
// JSON result. Unknown tools and bad arguments give a ToolError, which
// the runtime shows the model as {"error": …}.
//
// The tools read the room's catalog (Room.Catalog) and answer in the
// storefront plugin's layout, so that the model trains on what it reads
// when it serves (TestRoomToolsMatchPlugins in trainer/eval holds the
// two together). For facts a version 1 catalog could state, the keys are
// the ones they always were; a fact only version 2 can state adds a key,
// and a fact version 1 always stated but the catalog does not says
// NotStated:
//
//	product_lookup  found, item_id, name, description, price, currency,
//	                variants (names), attributes (text facts without
//	                unit or labels), list_price and promotion (when the
//	                list price is higher), size_chart; and when stated:
//	                link, specs (typed facts: key, label, label_zh,
//	                value, unit, value_zh), variant_prices, ingredients,
//	                allergens ([] is "none"), shelf_life_days,
//	                best_before, certifications, limit_per_buyer,
//	                presale_ship_date, offers (running promotions with
//	                their terms)
//	check_stock     item_id, stock (stated counts by variant; an item
//	                without variants has one, "standard"); stock_state
//	                (by variant, when any is stated or a count is not),
//	                restock_date (by variant), presale_ship_date
//	coupon_check    item_id, quantity, total, coupon (id, amount,
//	                min_spend; a percent coupon: id, percent, min_spend,
//	                amount off this order; new_viewers_only), eligible,
//	                total_after_coupon, missing_spend; multi_buy (running
//	                multi-buy offers: title, quantity, terms, applies,
//	                total_with_offer)
//	shipping_policy item_id, ships_within_days, shipping_fee,
//	                free_shipping, return_days (each NotStated when not
//	                stated); dispatch_hours (when not whole days),
//	                ship_from, carrier, excluded_regions, returns_accepted,
//	                no_reason_returns, return_conditions,
//	                return_shipping_insurance
//	send_link       pinned, item_id, link
func (r *Room) CallTool(name string, args map[string]any) (json.RawMessage, error) {
	str := func(key string, required bool) (string, error) {
		v, ok := args[key]
		if !ok {
			if required {
				return "", &ToolError{fmt.Sprintf("%s: missing argument %q", name, key)}
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", &ToolError{fmt.Sprintf("%s: argument %q must be a string", name, key)}
		}
		return s, nil
	}
	item := func() (catalog.Product, error) {
		id, err := str("item_id", true)
		if err != nil {
			return catalog.Product{}, err
		}
		it, ok := r.Item(strings.TrimSpace(id))
		if !ok {
			return catalog.Product{}, &ToolError{fmt.Sprintf("%s: no item with id %q in this stream", name, id)}
		}
		return r.productOf(it), nil
	}
	var result any
	switch name {
	case ToolProductLookup:
		q, err := str("query", true)
		if err != nil {
			return nil, err
		}
		it, ok := r.Resolve(q)
		if !ok {
			result = map[string]any{"found": false, "message": fmt.Sprintf("no single item matches %q", q)}
			break
		}
		result = r.lookupResult(r.productOf(it))
	case ToolCheckStock:
		p, err := item()
		if err != nil {
			return nil, err
		}
		variant, err := str("variant", false)
		if err != nil {
			return nil, err
		}
		if result, err = stockResult(p, variant); err != nil {
			return nil, err
		}
	case ToolCouponCheck:
		p, err := item()
		if err != nil {
			return nil, err
		}
		qty := 1
		if v, ok := args["quantity"]; ok {
			f, ok := v.(float64)
			if !ok || f != float64(int(f)) || f < 1 || f > 99 {
				return nil, &ToolError{fmt.Sprintf("%s: quantity must be an integer from 1 to 99", name)}
			}
			qty = int(f)
		}
		result = r.couponResult(p, qty)
	case ToolShippingPolicy:
		p, err := item()
		if err != nil {
			return nil, err
		}
		if p.Shipping == nil && p.Returns == nil {
			return nil, &ToolError{fmt.Sprintf("%s: the catalog has no shipping policy for %s", name, p.ID)}
		}
		result = shippingResult(p)
	case ToolSendLink:
		p, err := item()
		if err != nil {
			return nil, err
		}
		out := map[string]any{"pinned": true, "item_id": p.ID}
		if p.Link > 0 {
			out["link"] = p.Link
		}
		result = out
	default:
		return nil, &ToolError{fmt.Sprintf("unknown tool %q", name)}
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("liveroom: encode %s result: %w", name, err)
	}
	return raw, nil
}

// productOf is the item as its catalog states it.
func (r *Room) productOf(it Item) catalog.Product {
	if it.FromCatalog {
		return it.catalogProduct()
	}
	return it.generatedProduct(nil)
}

// currency is the room's currency code.
func (r *Room) currency() string {
	if r.Currency == "" {
		return "CNY"
	}
	return r.Currency
}

// yuanText writes an amount in yuan as the room speaks it: "199", or
// "179.10" (the storefront plugin's form).
func yuanText(v float64) string { return Yuan(fen(v)) }

// fen is an amount in yuan as whole fen.
func fen(v float64) int64 { return int64(math.Round(v * 100)) }

// v1Attribute reports whether a spec is a plain text fact, the only kind
// version 1 catalogs had (their "attributes").
func v1Attribute(s catalog.Spec) bool {
	_, text := s.Value.Text()
	return text && s.Unit == "" && s.Label == "" && s.LabelZh == "" && s.ValueZh == ""
}

func (r *Room) lookupResult(p catalog.Product) map[string]any {
	variants := make([]string, len(p.Variants))
	prices := map[string]string{}
	for i, v := range p.Variants {
		variants[i] = v.Name
		if v.Price != nil {
			prices[v.Name] = yuanText(*v.Price)
		}
	}
	attrs := map[string]string{}
	var specs []map[string]any
	for _, s := range p.Specs {
		if v1Attribute(s) {
			attrs[s.Key] = s.Value.String()
			continue
		}
		spec := map[string]any{"key": s.Key, "value": s.Value}
		for k, v := range map[string]string{"label": s.Label, "label_zh": s.LabelZh, "unit": s.Unit, "value_zh": s.ValueZh} {
			if v != "" {
				spec[k] = v
			}
		}
		specs = append(specs, spec)
	}
	out := map[string]any{
		"found":      true,
		"item_id":    p.ID,
		"name":       p.Name,
		"price":      yuanText(p.Price),
		"currency":   r.currency(),
		"variants":   variants,
		"attributes": attrs,
	}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.ListPrice > p.Price {
		out["list_price"] = yuanText(p.ListPrice)
		out["promotion"] = fmt.Sprintf("%.0f%% off during the live stream", 100*(1-p.Price/p.ListPrice))
	}
	if len(p.SizeChart) > 0 {
		chart := make([]map[string]any, len(p.SizeChart))
		for i, r := range p.SizeChart {
			chart[i] = map[string]any{"size": r.Size, "min_height_cm": r.MinHeightCM, "max_height_cm": r.MaxHeightCM,
				"min_weight_kg": r.MinWeightKG, "max_weight_kg": r.MaxWeightKG}
		}
		out["size_chart"] = chart
	}
	if p.Link > 0 {
		out["link"] = p.Link
	}
	if len(specs) > 0 {
		out["specs"] = specs
	}
	if len(prices) > 0 {
		out["variant_prices"] = prices
	}
	if p.Ingredients != nil {
		out["ingredients"] = p.Ingredients
	}
	if p.Allergens != nil {
		out["allergens"] = p.Allergens
	}
	if p.ShelfLifeDays > 0 {
		out["shelf_life_days"] = p.ShelfLifeDays
	}
	if !p.BestBefore.IsZero() {
		out["best_before"] = p.BestBefore.String()
	}
	if p.Certifications != nil {
		out["certifications"] = p.Certifications
	}
	if p.LimitPerBuyer > 0 {
		out["limit_per_buyer"] = p.LimitPerBuyer
	}
	if !p.PresaleShipDate.IsZero() {
		out["presale_ship_date"] = p.PresaleShipDate.String()
	}
	var offers []map[string]any
	for _, pr := range r.promotionsFor(p.ID) {
		offers = append(offers, offerTerms(pr))
	}
	if len(offers) > 0 {
		out["offers"] = offers
	}
	return out
}

// offerTerms are a promotion's stated terms.
func offerTerms(pr catalog.Promotion) map[string]any {
	o := map[string]any{"title": pr.Title, "kind": string(pr.Kind)}
	if pr.Price > 0 {
		o["price"] = yuanText(pr.Price)
	}
	if pr.Percent > 0 {
		o["percent"] = pr.Percent
	}
	if pr.Quantity > 0 {
		o["quantity"] = pr.Quantity
	}
	if pr.NthPercent > 0 {
		o["nth_percent"] = pr.NthPercent
	}
	if pr.Gift != "" {
		o["gift"] = pr.Gift
	}
	if pr.MinSpend > 0 {
		o["min_spend"] = yuanText(pr.MinSpend)
	}
	if pr.Kind == catalog.PromoBundle {
		o["products"] = pr.Products
	}
	if pr.Text != "" {
		o["text"] = pr.Text
	}
	return o
}

// stockResult answers check_stock: the stated count of every variant, or
// of the one the viewer named, with stock states and restock dates where
// the catalog states them. A variant without its own count has the
// item's state.
func stockResult(p catalog.Product, variant string) (map[string]any, error) {
	variants := p.Variants
	if len(variants) == 0 {
		variants = []catalog.Variant{{Name: "standard", Stock: p.Stock}}
	}
	stock := map[string]int{}
	states := map[string]string{}
	restock := map[string]string{}
	needStates, matched := false, false
	for _, v := range variants {
		if variant != "" && !strings.EqualFold(v.Name, variant) {
			continue
		}
		matched = true
		state, date := catalog.VariantStockStateOf(v), v.RestockDate
		switch {
		case v.Stock != nil:
			stock[v.Name] = *v.Stock
		case state == "":
			state = catalog.StockStateOf(p)
			if date.IsZero() {
				date = p.RestockDate
			}
		}
		if v.StockState != "" || v.Stock == nil || (len(p.Variants) == 0 && p.StockState != "") {
			needStates = true
		}
		if state == "" {
			state = NotStated
		}
		states[v.Name] = string(state)
		if !date.IsZero() {
			restock[v.Name] = date.String()
		}
	}
	if !matched {
		return nil, &ToolError{fmt.Sprintf("check_stock: item %s has no variant %q", p.ID, variant)}
	}
	out := map[string]any{"item_id": p.ID, "stock": stock}
	if needStates {
		out["stock_state"] = states
	}
	if len(restock) > 0 {
		out["restock_date"] = restock
	}
	if !p.PresaleShipDate.IsZero() {
		out["presale_ship_date"] = p.PresaleShipDate.String()
	}
	return out, nil
}

// BestCoupon is the coupon coupon_check applies to qty of the item: of
// the coupons for it that run at the room's clock and are not stated to be
// all claimed, the one that takes the most off an order it is eligible
// for, else the one nearest to eligible; the earliest listed on a tie.
// It reports false when no coupon is for the item.
func (r *Room) BestCoupon(itemID string, qty int) (Coupon, bool) {
	it, ok := r.Item(itemID)
	if !ok {
		return Coupon{}, false
	}
	total := it.Price() * int64(qty)
	var best Coupon
	found := false
	bestOff, bestMissing := int64(-1), int64(math.MaxInt64)
	for _, c := range r.Coupons {
		if !c.AppliesTo(itemID) || (c.Remaining != nil && *c.Remaining <= 0) || !r.running(c.Starts, c.Ends) {
			continue
		}
		if total >= c.MinSpend {
			if off := c.Off(total); off > bestOff {
				best, bestOff, found = c, off, true
			}
		} else if bestOff < 0 && c.MinSpend-total < bestMissing {
			best, bestMissing, found = c, c.MinSpend-total, true
		}
	}
	return best, found
}

// running reports whether a window with optional bounds holds the room's
// clock.
func (r *Room) running(starts, ends time.Time) bool {
	return (starts.IsZero() || !r.Now.Before(starts)) && (ends.IsZero() || r.Now.Before(ends))
}

// promotionsFor returns the promotions naming the item that run at the
// room's clock.
func (r *Room) promotionsFor(itemID string) []catalog.Promotion {
	var out []catalog.Promotion
	for _, p := range r.Promotions {
		if slices.Contains(p.Products, itemID) && r.running(p.Starts, p.Ends) {
			out = append(out, p)
		}
	}
	return out
}

// Off is what the coupon takes off an order of total fen: its amount, or
// its percent of the total rounded to the fen.
func (c Coupon) Off(total int64) int64 {
	if c.Percent > 0 {
		return int64(math.Round(float64(total) * c.Percent / 100))
	}
	return c.Amount
}

func (r *Room) couponResult(p catalog.Product, qty int) map[string]any {
	total := fen(p.Price) * int64(qty)
	out := map[string]any{"item_id": p.ID, "quantity": qty, "total": Yuan(total)}
	if offers := r.multiBuy(p, qty); len(offers) > 0 {
		out["multi_buy"] = offers
	}
	c, ok := r.BestCoupon(p.ID, qty)
	if !ok {
		out["coupon"] = nil
		out["eligible"] = false
		out["total_after_coupon"] = Yuan(total)
		return out
	}
	coupon := map[string]any{"id": c.ID, "amount": Yuan(c.Off(total)), "min_spend": Yuan(c.MinSpend)}
	if c.Percent > 0 {
		coupon["percent"] = c.Percent
	}
	if c.NewViewersOnly {
		coupon["new_viewers_only"] = true
	}
	out["coupon"] = coupon
	eligible := total >= c.MinSpend
	out["eligible"] = eligible
	if eligible {
		out["total_after_coupon"] = Yuan(total - c.Off(total))
	} else {
		out["total_after_coupon"] = Yuan(total)
		out["missing_spend"] = Yuan(c.MinSpend - total)
	}
	return out
}

// multiBuy lists the running multi-buy offers for the item, with what qty
// of it costs under each.
func (r *Room) multiBuy(p catalog.Product, qty int) []map[string]any {
	var out []map[string]any
	for _, pr := range r.promotionsFor(p.ID) {
		if pr.Kind != catalog.PromoMultiBuy {
			continue
		}
		o := offerTerms(pr)
		delete(o, "kind")
		total, applies := MultiBuyTotal(pr, fen(p.Price), qty)
		o["applies"] = applies
		if applies {
			o["total_with_offer"] = Yuan(total)
		}
		out = append(out, o)
	}
	return out
}

// MultiBuyTotal is what qty items at unit fen each cost under a multi-buy
// offer, and whether the offer applies (qty reaches its quantity): every
// full group of Quantity items at the offer's Price, or NthPercent off
// each group's last item, or Percent off every item.
func MultiBuyTotal(pr catalog.Promotion, unit int64, qty int) (int64, bool) {
	plain := unit * int64(qty)
	if pr.Kind != catalog.PromoMultiBuy || pr.Quantity <= 0 || qty < pr.Quantity {
		return plain, false
	}
	groups, rest := int64(qty/pr.Quantity), int64(qty%pr.Quantity)
	switch {
	case pr.Price > 0:
		return groups*fen(pr.Price) + rest*unit, true
	case pr.NthPercent > 0:
		return plain - groups*int64(math.Round(float64(unit)*pr.NthPercent/100)), true
	case pr.Percent > 0:
		return int64(math.Round(float64(plain) * (100 - pr.Percent) / 100)), true
	}
	return plain, false
}

// shippingResult answers shipping_policy from what the catalog states.
func shippingResult(p catalog.Product) map[string]any {
	out := map[string]any{"item_id": p.ID, "ships_within_days": NotStated, "shipping_fee": NotStated,
		"free_shipping": NotStated, "return_days": NotStated}
	if s := p.Shipping; s != nil {
		switch {
		case s.DispatchHours > 0 && s.DispatchHours%24 == 0:
			out["ships_within_days"] = s.DispatchHours / 24
		case s.DispatchHours > 0:
			out["dispatch_hours"] = s.DispatchHours
		}
		if s.Fee != nil {
			out["shipping_fee"], out["free_shipping"] = yuanText(*s.Fee), *s.Fee == 0
		}
		if s.ShipFrom != "" {
			out["ship_from"] = s.ShipFrom
		}
		if s.Carrier != "" {
			out["carrier"] = s.Carrier
		}
		if s.ExcludedRegions != nil {
			out["excluded_regions"] = s.ExcludedRegions
		}
	}
	rt := p.Returns
	if rt == nil {
		return out
	}
	switch {
	case !rt.Accepted:
		out["return_days"] = 0
	case rt.Days > 0:
		out["return_days"] = rt.Days
	}
	// A version 1 catalog's return_days was a no-reason window or 0 for
	// no returns; anything else it could not say gets keys of its own.
	v1 := rt.Conditions == nil && !rt.ShippingInsurance && (!rt.Accepted || (rt.Days > 0 && rt.NoReason))
	if v1 {
		return out
	}
	out["returns_accepted"] = rt.Accepted
	if rt.NoReason {
		out["no_reason_returns"] = true
	}
	if rt.Conditions != nil {
		out["return_conditions"] = rt.Conditions
	}
	if rt.ShippingInsurance {
		out["return_shipping_insurance"] = true
	}
	return out
}
