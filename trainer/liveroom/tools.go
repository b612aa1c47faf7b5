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
// The tools read the room's catalog (Room.Catalog) and answer as the
// storefront plugin does over it (examples/plugins/storefront and its
// README list every key), so that the model trains on what it reads when
// it serves; TestRoomToolsMatchPlugins in trainer/eval holds the two
// together. For facts a version 1 catalog could state, the results are
// what they always were; a fact only version 2 states adds a key (link,
// specs, variant_details, allergens, best_coupon, multi_buy, returns, …),
// and a fact version 1 always stated but the catalog does not is
// NotStated.
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

// roundFen rounds an amount in yuan to the fen, as a checkout does.
func roundFen(v float64) float64 { return math.Round(v*100) / 100 }

// specText is a spec's value as an attribute reads: the text, the number
// with its unit ("30h", "220g/m²"), or "yes"/"no".
func specText(s catalog.Spec) string {
	if _, ok := s.Value.Number(); ok {
		return s.Value.String() + s.Unit
	}
	if b, ok := s.Value.Bool(); ok {
		if b {
			return "yes"
		}
		return "no"
	}
	return s.Value.String()
}

// typedSpecs reports whether any spec states more than a key and a text,
// which is all a version 1 attribute could state.
func typedSpecs(specs []catalog.Spec) bool {
	for _, s := range specs {
		if _, text := s.Value.Text(); !text || s.Unit != "" || s.Label != "" || s.LabelZh != "" || s.ValueZh != "" {
			return true
		}
	}
	return false
}

func (r *Room) lookupResult(p catalog.Product) map[string]any {
	variants := make([]string, len(p.Variants))
	for i, v := range p.Variants {
		variants[i] = v.Name
	}
	// attributes is null without specs, as the layout has always had it.
	var attrs map[string]string
	for _, s := range p.Specs {
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[s.Key] = specText(s)
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
			// An open bound ("185cm and taller") is left out, never 0.
			row := map[string]any{"size": r.Size}
			for k, v := range map[string]float64{"min_height_cm": r.MinHeightCM, "max_height_cm": r.MaxHeightCM,
				"min_weight_kg": r.MinWeightKG, "max_weight_kg": r.MaxWeightKG} {
				if v > 0 {
					row[k] = v
				}
			}
			chart[i] = row
		}
		out["size_chart"] = chart
	}
	addProductFacts(out, p)
	var promos []map[string]any
	for _, pr := range r.promotionsFor(p.ID) {
		promos = append(promos, promotionTerms(pr))
	}
	if len(promos) > 0 {
		out["promotions"] = promos
	}
	return out
}

// addProductFacts adds to a product_lookup result the facts only version
// 2 catalogs state, each only when the catalog states it.
func addProductFacts(out map[string]any, p catalog.Product) {
	if p.Link > 0 {
		out["link"] = p.Link
	}
	if p.StockState != "" {
		out["stock_state"] = string(p.StockState)
	}
	setDate(out, "restock_date", p.RestockDate)
	setDate(out, "presale_ship_date", p.PresaleShipDate)
	if p.LimitPerBuyer > 0 {
		out["limit_per_buyer"] = p.LimitPerBuyer
	}
	if variantDetails(p.Variants) {
		details := make([]map[string]any, len(p.Variants))
		for i, v := range p.Variants {
			d := map[string]any{"name": v.Name}
			if v.Axis != "" {
				d["axis"] = v.Axis
			}
			if v.Price != nil {
				d["price"] = yuanText(*v.Price)
			}
			if st := variantState(p, v); st != "" {
				d["stock_state"] = string(st)
			}
			setDate(d, "restock_date", v.RestockDate)
			details[i] = d
		}
		out["variant_details"] = details
	}
	if typedSpecs(p.Specs) {
		specs := make([]map[string]any, len(p.Specs))
		for i, s := range p.Specs {
			m := map[string]any{"key": s.Key, "value": s.Value}
			for k, v := range map[string]string{"label": s.Label, "label_zh": s.LabelZh, "value_zh": s.ValueZh, "unit": s.Unit} {
				if v != "" {
					m[k] = v
				}
			}
			specs[i] = m
		}
		out["specs"] = specs
	}
	if len(p.Ingredients) > 0 {
		out["ingredients"] = p.Ingredients
	}
	switch {
	case p.Allergens != nil && len(p.Allergens) == 0:
		out["allergens"] = "none"
	case p.Allergens != nil:
		out["allergens"] = p.Allergens
	case len(p.Ingredients) > 0:
		// Ingredients invite the allergen question; the answer must not
		// be read from their absence.
		out["allergens"] = NotStated
	}
	if p.ShelfLifeDays > 0 {
		out["shelf_life_days"] = p.ShelfLifeDays
	}
	setDate(out, "best_before", p.BestBefore)
	if len(p.Certifications) > 0 {
		out["certifications"] = p.Certifications
	}
}

// variantDetails reports whether any variant states more than a name and
// a stock count, which is all a version 1 variant could state.
func variantDetails(vs []catalog.Variant) bool {
	for _, v := range vs {
		if v.Axis != "" || v.Price != nil || v.StockState != "" || !v.RestockDate.IsZero() {
			return true
		}
	}
	return false
}

// variantState is the stock state a variant is in: its own, or the
// item's when it states no stock of its own; "" when neither is stated.
func variantState(p catalog.Product, v catalog.Variant) catalog.StockState {
	if st := catalog.VariantStockStateOf(v); st != "" {
		return st
	}
	return catalog.StockStateOf(p)
}

func setDate(m map[string]any, key string, d catalog.Date) {
	if !d.IsZero() {
		m[key] = d.String()
	}
}

// promotionTerms is a promotion as the tools state it: its kind and every
// term it states, and no window it does not state.
func promotionTerms(pr catalog.Promotion) map[string]any {
	m := map[string]any{"id": pr.ID, "title": pr.Title, "kind": string(pr.Kind)}
	if pr.Price > 0 {
		m["price"] = yuanText(pr.Price)
	}
	if pr.Percent > 0 {
		m["percent_off"] = pr.Percent
	}
	if pr.Quantity > 0 {
		m["quantity"] = pr.Quantity
	}
	if pr.NthPercent > 0 {
		m["nth_item_percent_off"] = pr.NthPercent
	}
	if pr.Gift != "" {
		m["gift"] = pr.Gift
	}
	if pr.MinSpend > 0 {
		m["min_spend"] = yuanText(pr.MinSpend)
	}
	if pr.Kind == catalog.PromoBundle {
		m["products"] = pr.Products
	}
	if !pr.Ends.IsZero() {
		m["ends"] = pr.Ends.Format(time.RFC3339)
	}
	if pr.Text != "" {
		m["text"] = pr.Text
	}
	return m
}

// stockResult answers check_stock: the count of every variant, or of the
// one the viewer named ("not stated" when the catalog gives none), with
// the stock states and restock dates the catalog states. A variant
// without a count of its own is in the item's state.
func stockResult(p catalog.Product, variant string) (map[string]any, error) {
	variants := p.Variants
	if len(variants) == 0 {
		variants = []catalog.Variant{{Name: "standard", Stock: p.Stock, StockState: p.StockState}}
	}
	stock, states, restock := map[string]any{}, map[string]string{}, map[string]string{}
	for _, v := range variants {
		if variant != "" && !strings.EqualFold(v.Name, variant) {
			continue
		}
		if v.Stock != nil {
			stock[v.Name] = *v.Stock
		} else {
			stock[v.Name] = NotStated
		}
		switch item := catalog.StockStateOf(p); {
		case v.StockState != "":
			states[v.Name] = string(v.StockState)
		case v.Stock == nil && item != "":
			states[v.Name] = string(item)
		case v.Stock == nil:
			states[v.Name] = NotStated
		}
		if !v.RestockDate.IsZero() {
			restock[v.Name] = v.RestockDate.String()
		}
	}
	if len(stock) == 0 {
		return nil, &ToolError{fmt.Sprintf("check_stock: item %s has no variant %q", p.ID, variant)}
	}
	out := map[string]any{"item_id": p.ID, "stock": stock}
	if len(states) > 0 {
		out["stock_state"] = states
	}
	if len(p.Variants) > 0 && p.StockState != "" {
		out["item_stock_state"] = string(p.StockState)
	}
	setDate(out, "restock_date", p.RestockDate)
	if len(restock) > 0 {
		out["variant_restock_dates"] = restock
	}
	setDate(out, "presale_ship_date", p.PresaleShipDate)
	if p.LimitPerBuyer > 0 {
		out["limit_per_buyer"] = p.LimitPerBuyer
	}
	return out, nil
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

// CouponOffer is a coupon judged for an order: what it takes off and
// whether the order reaches its minimum spend.
type CouponOffer struct {
	Coupon Coupon
	// Off is what the coupon takes off the order, in fen: its amount, or
	// its percent of the order rounded to the fen, at most the order.
	Off      int64
	Eligible bool
}

// CouponsFor judges the coupons coupon_check considers for qty of an item:
// those for it or for every item that run at the room's clock and are
// not stated to be all claimed. First is the coupon the tool reports (the
// first for the item, else the first for every item); Best, when it is
// another one, takes more off this order. ok is false when no coupon is
// for the item.
func (r *Room) CouponsFor(itemID string, qty int) (first, best CouponOffer, ok bool) {
	it, found := r.Item(itemID)
	if !found {
		return CouponOffer{}, CouponOffer{}, false
	}
	offers := r.couponOffers(it.ID, yuanOf(it.Price())*float64(qty))
	if len(offers) == 0 {
		return CouponOffer{}, CouponOffer{}, false
	}
	f, b := pickCoupons(offers, itemID)
	if b < 0 {
		return offers[f], offers[f], true
	}
	return offers[f], offers[b], true
}

// couponOffers judges the coupons for an item on an order of total yuan,
// the way the storefront plugin computes it.
func (r *Room) couponOffers(itemID string, total float64) []CouponOffer {
	var out []CouponOffer
	for _, c := range r.Coupons {
		if !c.AppliesTo(itemID) || !r.running(c.Starts, c.Ends) || (c.Remaining != nil && *c.Remaining <= 0) ||
			(c.Amount <= 0 && c.Percent <= 0) {
			continue
		}
		d := yuanOf(c.Amount)
		if c.Percent > 0 {
			d = roundFen(total * c.Percent / 100)
		}
		out = append(out, CouponOffer{Coupon: c, Off: fen(min(d, total)), Eligible: total+0.005 >= yuanOf(c.MinSpend)})
	}
	return out
}

// pickCoupons returns the index of the coupon coupon_check reports and of
// a better one for the order, or -1 when there is none.
func pickCoupons(offers []CouponOffer, itemID string) (first, best int) {
	first, best = -1, -1
	for i, o := range offers {
		forItem := o.Coupon.ItemID == itemID || slices.Contains(o.Coupon.ItemIDs, itemID)
		if first < 0 || (forItem && !forItemOf(offers[first].Coupon, itemID)) {
			first = i
		}
		if o.Eligible && (best < 0 || o.Off > offers[best].Off) {
			best = i
		}
	}
	if best == first || (best >= 0 && offers[first].Eligible && offers[best].Off <= offers[first].Off) {
		best = -1
	}
	return first, best
}

func forItemOf(c Coupon, itemID string) bool {
	return c.ItemID == itemID || slices.Contains(c.ItemIDs, itemID)
}

// terms is a coupon as coupon_check states it: a fixed coupon with the
// keys it always had and per_buyer, a percent coupon with its percent,
// what it takes off this order and its end, and a new-viewer coupon's
// condition in words, as the storefront plugin states them.
func (o CouponOffer) terms() map[string]any {
	c := o.Coupon
	m := map[string]any{"id": c.ID, "min_spend": Yuan(c.MinSpend)}
	if c.Percent > 0 {
		m["percent_off"] = c.Percent
		m["discount"] = Yuan(o.Off)
		if !c.Ends.IsZero() {
			m["ends"] = c.Ends.Format(time.RFC3339)
		}
	} else {
		m["amount"] = Yuan(c.Amount)
	}
	if c.NewViewersOnly {
		m["condition"] = "new viewers only"
	}
	if c.PerBuyer > 0 {
		m["per_buyer"] = c.PerBuyer
	}
	return m
}

func (r *Room) couponResult(p catalog.Product, qty int) map[string]any {
	total := p.Price * float64(qty)
	out := map[string]any{"item_id": p.ID, "quantity": qty, "total": yuanText(total)}
	offers := r.couponOffers(p.ID, total)
	first, best := pickCoupons(offers, p.ID)
	if first < 0 {
		out["coupon"], out["eligible"], out["total_after_coupon"] = nil, false, yuanText(total)
	} else {
		f := offers[first]
		out["coupon"], out["eligible"] = f.terms(), f.Eligible
		if f.Eligible {
			out["total_after_coupon"] = Yuan(fen(total) - f.Off)
		} else {
			out["total_after_coupon"] = yuanText(total)
			out["missing_spend"] = Yuan(f.Coupon.MinSpend - fen(total))
		}
	}
	if best >= 0 {
		// The best coupon is one the order reaches: its minimum spend is
		// met and not stated.
		b := offers[best].terms()
		delete(b, "min_spend")
		b["total_after_coupon"] = Yuan(fen(total) - offers[best].Off)
		out["best_coupon"] = b
	}
	if deals := r.multiBuy(p, qty); len(deals) > 0 {
		out["multi_buy"] = deals
	}
	return out
}

// multiBuy states the running multi-buy deals on the item for qty: the
// total with the deal once qty reaches its quantity, else how many more
// items it needs.
func (r *Room) multiBuy(p catalog.Product, qty int) []map[string]any {
	var out []map[string]any
	for _, pr := range r.promotionsFor(p.ID) {
		if pr.Kind != catalog.PromoMultiBuy || pr.Quantity < 2 {
			continue
		}
		m := promotionTerms(pr)
		if total, ok := MultiBuyTotal(pr, p.Price, qty); ok {
			m["total_with_deal"] = yuanText(total)
		} else {
			m["missing_quantity"] = pr.Quantity - qty
		}
		out = append(out, m)
	}
	return out
}

// MultiBuyTotal is what qty items at price yuan each cost under a
// multi-buy deal, and whether the deal applies (qty reaches its
// quantity): each full group of Quantity items at the deal's Price, or
// Percent off the group, or NthPercent off one item of the group; the
// rest at the price.
func MultiBuyTotal(pr catalog.Promotion, price float64, qty int) (float64, bool) {
	if pr.Kind != catalog.PromoMultiBuy || pr.Quantity < 2 || qty < pr.Quantity {
		return price * float64(qty), false
	}
	groups, rest := qty/pr.Quantity, qty%pr.Quantity
	group := price * float64(pr.Quantity)
	switch {
	case pr.Price > 0:
		group = pr.Price
	case pr.Percent > 0:
		group = roundFen(group * (1 - pr.Percent/100))
	case pr.NthPercent > 0:
		group -= roundFen(price * pr.NthPercent / 100)
	}
	return float64(groups)*group + float64(rest)*price, true
}

// shippingResult answers shipping_policy: dispatch time, fee, ship-from,
// carrier, excluded regions and the return rule, each NotStated or
// absent when the catalog does not state it.
func shippingResult(p catalog.Product) map[string]any {
	out := map[string]any{"item_id": p.ID, "ships_within_days": NotStated, "shipping_fee": NotStated,
		"free_shipping": NotStated, "return_days": NotStated}
	if s := p.Shipping; s != nil {
		if h := s.DispatchHours; h > 0 {
			if h%24 == 0 {
				out["ships_within_days"] = h / 24
			} else {
				out["ships_within_days"] = float64(h) / 24
				out["dispatch_hours"] = h
			}
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
		if len(s.ExcludedRegions) > 0 {
			out["excluded_regions"] = s.ExcludedRegions
		}
	}
	if rt := p.Returns; rt != nil {
		switch {
		case !rt.Accepted:
			out["return_days"] = 0 // what "no returns" has always read
		case rt.Days > 0:
			out["return_days"] = rt.Days
		}
		if !plainReturns(*rt) {
			out["returns"] = returnRule(*rt)
		}
	}
	return out
}

// plainReturns reports whether a return rule says no more than
// return_days alone has always said: no returns, or returns within the
// days without a reason.
func plainReturns(rt catalog.Returns) bool {
	if len(rt.Conditions) > 0 || rt.ShippingInsurance {
		return false
	}
	return !rt.Accepted || (rt.Days > 0 && rt.NoReason)
}

// returnRule states a return rule with its conditions.
func returnRule(rt catalog.Returns) map[string]any {
	m := map[string]any{"accepted": rt.Accepted}
	switch {
	case !rt.Accepted:
		m["rule"] = "no returns"
	case rt.Days > 0 && rt.NoReason:
		m["rule"] = fmt.Sprintf("returns within %d days, no reason needed", rt.Days)
	case rt.Days > 0:
		m["rule"] = fmt.Sprintf("returns within %d days", rt.Days)
		m["no_reason"] = NotStated
	default:
		m["rule"] = "returns accepted; the window is not stated"
	}
	if len(rt.Conditions) > 0 {
		m["conditions"] = rt.Conditions
	}
	if rt.ShippingInsurance {
		m["shipping_insurance"] = true
	}
	return m
}
