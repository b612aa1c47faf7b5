// Command storefront is the example plugin behind the demo harness's
// tools: product_lookup, check_stock, coupon_check, shipping_policy and
// send_link, answered from the stream's catalog through the host's
// catalog lookup. The logic is plain Go over SDK types, tested natively;
// main_wasm.go binds it to the host. README.md beside this file lists
// what each tool returns.
//
// What the merchant did not state is never filled in: a fact the tools
// always gave is then "not stated", and a fact that only some catalogs
// state (a link number, allergens, a percent coupon, a multi-buy deal…)
// adds its key only when the catalog states it. For a catalog that
// states no more than the version 1 layout could, every result is the
// one the tools gave before version 2, byte for byte: the bundled model
// was trained on those results.
package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/sdk"
)

// notStated is what a tool says for a fact the merchant did not state.
const notStated = "not stated"

// Lookup asks the host's catalog.
type Lookup func(sdk.CatalogQuery) (*sdk.CatalogResult, error)

// LookupRequest are product_lookup's arguments.
type LookupRequest struct {
	Query string `json:"query"`
}

// ItemRequest are the arguments of the tools that take an item id.
type ItemRequest struct {
	ItemID   string `json:"item_id"`
	Variant  string `json:"variant,omitempty"`
	Quantity int    `json:"quantity,omitempty"`
	Region   string `json:"region,omitempty"`
}

// Find resolves a viewer's query to one item: by id, then by exact name
// or alias, then by the link number it names ("3号链接", "link 3", "3号"),
// then by any name mentioned in the text. ok is false when nothing or
// several items match.
func Find(lookup Lookup, query string) (sdk.Product, string, bool, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return sdk.Product{}, "", false, errors.New("product_lookup: query is empty")
	}
	queries := []sdk.CatalogQuery{{Kind: "product", ID: q}, {Kind: "product", Name: q}}
	if n, ok := LinkNumber(q); ok {
		queries = append(queries, sdk.CatalogQuery{Kind: "product", Link: n})
	}
	queries = append(queries, sdk.CatalogQuery{Kind: "product", Text: q, Limit: 2})
	for _, cq := range queries {
		res, err := lookup(cq)
		if err != nil {
			return sdk.Product{}, "", false, err
		}
		if len(res.Products) == 1 {
			return res.Products[0], res.Currency, true, nil
		}
		if len(res.Products) > 1 {
			return sdk.Product{}, res.Currency, false, nil
		}
	}
	return sdk.Product{}, "", false, nil
}

// linkNumber is a link number as viewers write it: ASCII or full-width
// digits, or Chinese numerals up to 九十九.
const linkNumber = `([0-9０-９]{1,3}|[一二两三四五六七八九十]{1,3})`

var (
	// wholeLink matches a query that is nothing but a link reference:
	// "3号", "第3号链接", "3号宝贝", "link 3", "#3", "链接3".
	wholeLink = regexp.MustCompile(`(?i)^(?:第\s*)?` + linkNumber + `\s*号\s*(?:链接|商品|宝贝)?$|^(?:link|item|no\.?|#|链接)\s*#?\s*` + linkNumber + `$`)
	// partLink matches a link reference inside a longer text: "3号链接
	// 多少钱", "what about link 3?".
	partLink = regexp.MustCompile(`(?i)` + linkNumber + `\s*号\s*链接|链接\s*` + linkNumber + `|\blink\s*#?\s*` + linkNumber)
)

// LinkNumber reads the cart position a query names ("3号链接", "link 3",
// "3号", "三号链接"); ok is false when it names none.
func LinkNumber(query string) (n int, ok bool) {
	q := strings.TrimSpace(query)
	m := wholeLink.FindStringSubmatch(q)
	if m == nil {
		if m = partLink.FindStringSubmatch(q); m == nil {
			return 0, false
		}
	}
	for _, g := range m[1:] {
		if g != "" {
			return parseLinkNumber(g)
		}
	}
	return 0, false
}

// parseLinkNumber reads a number of one to three digits (ASCII or
// full-width) or a Chinese numeral from 一 to 九十九.
func parseLinkNumber(s string) (int, bool) {
	digits := strings.Map(func(r rune) rune {
		if r >= '０' && r <= '９' {
			return '0' + (r - '０')
		}
		return r
	}, s)
	if n, err := strconv.Atoi(digits); err == nil {
		return n, n > 0
	}
	// unit is a Chinese digit's value, 0 for anything else.
	unit := func(r rune) int {
		if r == '两' {
			return 2
		}
		if i := strings.IndexRune("一二三四五六七八九", r); i >= 0 {
			return i/len("一") + 1
		}
		return 0
	}
	rs := []rune(s)
	n := 0
	switch {
	case len(rs) == 1 && rs[0] == '十':
		n = 10
	case len(rs) == 1:
		n = unit(rs[0])
	case len(rs) == 2 && rs[0] == '十' && unit(rs[1]) > 0:
		n = 10 + unit(rs[1])
	case len(rs) == 2 && rs[1] == '十':
		n = 10 * unit(rs[0])
	case len(rs) == 3 && rs[1] == '十' && unit(rs[0]) > 0 && unit(rs[2]) > 0:
		n = 10*unit(rs[0]) + unit(rs[2])
	}
	return n, n > 0
}

// item fetches an item by its catalog id.
func item(lookup Lookup, tool, id string) (sdk.Product, *sdk.CatalogResult, error) {
	if strings.TrimSpace(id) == "" {
		return sdk.Product{}, nil, fmt.Errorf("%s: item_id is empty", tool)
	}
	res, err := lookup(sdk.CatalogQuery{Kind: "product", ID: strings.TrimSpace(id)})
	if err != nil {
		return sdk.Product{}, nil, err
	}
	if len(res.Products) == 0 {
		return sdk.Product{}, nil, fmt.Errorf("%s: no item with id %q in this stream", tool, id)
	}
	return res.Products[0], res, nil
}

// money writes an amount as the room speaks it: "199", or "179.10".
func money(v float64) string {
	fen := int64(v*100 + 0.5)
	if fen%100 == 0 {
		return strconv.FormatInt(fen/100, 10)
	}
	return fmt.Sprintf("%d.%02d", fen/100, fen%100)
}

// roundFen rounds an amount to the fen, as a checkout does.
func roundFen(v float64) float64 { return math.Round(v*100) / 100 }

// specText is a spec's value as an attribute reads: the text, the number
// with its unit ("30h", "220g/m²"), or "yes"/"no".
func specText(s sdk.Spec) string {
	switch s.Value.Kind {
	case sdk.SpecNumber:
		return s.Value.String() + s.Unit
	case sdk.SpecBool:
		if s.Value.Bool {
			return "yes"
		}
		return "no"
	}
	return s.Value.Text
}

// typedSpecs reports whether any spec states more than a key and a text,
// which is all a version 1 attribute could state.
func typedSpecs(specs []sdk.Spec) bool {
	for _, s := range specs {
		if s.Value.Kind != sdk.SpecText || s.Unit != "" || s.Label != "" || s.LabelZh != "" || s.ValueZh != "" {
			return true
		}
	}
	return false
}

// ProductLookup answers product_lookup: the item's facts, and the
// promotions naming it that run at now.
func ProductLookup(lookup Lookup, req LookupRequest, now time.Time) (map[string]any, error) {
	p, currency, ok, err := Find(lookup, req.Query)
	if err != nil {
		return nil, err
	}
	if !ok {
		return map[string]any{"found": false, "message": fmt.Sprintf("no single item matches %q", req.Query)}, nil
	}
	variants := make([]string, len(p.Variants))
	for i, v := range p.Variants {
		variants[i] = v.Name
	}
	// attributes stays a nil map without specs: the layout has always
	// said null there.
	var attributes map[string]string
	for _, s := range p.Specs {
		if attributes == nil {
			attributes = map[string]string{}
		}
		attributes[s.Key] = specText(s)
	}
	out := map[string]any{"found": true, "item_id": p.ID, "name": p.Name, "price": money(p.Price), "currency": currency,
		"variants": variants, "attributes": attributes}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.ListPrice > p.Price {
		out["list_price"] = money(p.ListPrice)
		out["promotion"] = fmt.Sprintf("%.0f%% off during the live stream", 100*(1-p.Price/p.ListPrice))
	}
	if len(p.SizeChart) > 0 {
		chart := make([]map[string]any, len(p.SizeChart))
		for i, r := range p.SizeChart {
			// An absent bound is open ("185cm and taller"), never 0.
			row := map[string]any{"size": r.Size}
			for _, b := range [...]struct {
				key string
				v   float64
			}{{"min_height_cm", r.MinHeightCM}, {"max_height_cm", r.MaxHeightCM}, {"min_weight_kg", r.MinWeightKG}, {"max_weight_kg", r.MaxWeightKG}} {
				if b.v > 0 {
					row[b.key] = b.v
				}
			}
			chart[i] = row
		}
		out["size_chart"] = chart
	}
	addProductFacts(out, p)
	if promos, err := runningPromotions(lookup, p.ID, now); err != nil {
		return nil, err
	} else if len(promos) > 0 {
		list := make([]map[string]any, len(promos))
		for i, pr := range promos {
			list[i] = promotionTerms(pr)
		}
		out["promotions"] = list
	}
	return out, nil
}

// addProductFacts adds to a product_lookup result the facts only the
// version 2 layout states, each only when the catalog states it.
func addProductFacts(out map[string]any, p sdk.Product) {
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
				d["price"] = money(*v.Price)
			}
			// A variant without stock of its own is in the product's state.
			if st := variantState(p, v); st != "" {
				d["stock_state"] = st
			}
			setDate(d, "restock_date", v.RestockDate)
			details[i] = d
		}
		out["variant_details"] = details
	}
	if typedSpecs(p.Specs) {
		specs := make([]map[string]any, len(p.Specs))
		for i, s := range p.Specs {
			m := map[string]any{"key": s.Key}
			switch s.Value.Kind {
			case sdk.SpecNumber:
				m["value"] = s.Value.Number
			case sdk.SpecBool:
				m["value"] = s.Value.Bool
			default:
				m["value"] = s.Value.Text
			}
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
		out["allergens"] = notStated
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
func variantDetails(vs []sdk.Variant) bool {
	for _, v := range vs {
		if v.Axis != "" || v.Price != nil || v.StockState != "" || !v.RestockDate.IsZero() {
			return true
		}
	}
	return false
}

// variantState is the stock state a variant is in: its own, or the
// product's when it states no stock of its own; "" when neither is
// stated.
func variantState(p sdk.Product, v sdk.Variant) sdk.StockState {
	if st := v.State(); st != "" {
		return st
	}
	return p.State()
}

func setDate(m map[string]any, key string, d sdk.Date) {
	if !d.IsZero() {
		m[key] = d.String()
	}
}

// runningPromotions returns the promotions naming the product that run
// at now.
func runningPromotions(lookup Lookup, id string, now time.Time) ([]sdk.Promotion, error) {
	res, err := lookup(sdk.CatalogQuery{Kind: "promotions"})
	if err != nil {
		return nil, err
	}
	var out []sdk.Promotion
	for _, pr := range res.Promotions {
		if slices.Contains(pr.Products, id) && pr.Running(now) {
			out = append(out, pr)
		}
	}
	return out, nil
}

// promotionTerms is a promotion as the tools state it: its kind and
// every term it states, and no window it does not state.
func promotionTerms(pr sdk.Promotion) map[string]any {
	m := map[string]any{"id": pr.ID, "title": pr.Title, "kind": string(pr.Kind)}
	if pr.Price > 0 {
		m["price"] = money(pr.Price)
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
		m["min_spend"] = money(pr.MinSpend)
	}
	if pr.Kind == sdk.PromoBundle {
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

// CheckStock answers check_stock: the stock of every variant, or of the
// one the viewer named. An item without variants has one, "standard".
// A count the merchant did not state is "not stated", and its state
// (the variant's, else the product's) is given instead.
func CheckStock(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "check_stock", req.ItemID)
	if err != nil {
		return nil, err
	}
	variants := p.Variants
	if len(variants) == 0 {
		variants = []sdk.Variant{{Name: "standard", Stock: p.Stock, StockState: p.StockState}}
	}
	stock, states, restock := map[string]any{}, map[string]string{}, map[string]string{}
	for _, v := range variants {
		if req.Variant != "" && !strings.EqualFold(v.Name, req.Variant) {
			continue
		}
		if v.Stock != nil {
			stock[v.Name] = *v.Stock
		} else {
			stock[v.Name] = notStated
		}
		switch {
		case v.StockState != "":
			states[v.Name] = string(v.StockState)
		case v.Stock == nil && p.State() != "":
			states[v.Name] = string(p.State())
		case v.Stock == nil:
			states[v.Name] = notStated
		}
		if !v.RestockDate.IsZero() {
			restock[v.Name] = v.RestockDate.String()
		}
	}
	if len(stock) == 0 {
		return nil, fmt.Errorf("check_stock: item %s has no variant %q", p.ID, req.Variant)
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

// couponFor is one coupon judged for an order.
type couponFor struct {
	c        sdk.Coupon
	discount float64
	eligible bool
}

// judge judges coupon c for an order of total.
func judge(c sdk.Coupon, total float64) couponFor {
	d := c.Amount
	if c.Percent > 0 {
		d = roundFen(total * c.Percent / 100)
	}
	return couponFor{c: c, discount: min(d, total), eligible: total+0.005 >= c.MinSpend}
}

// terms is a coupon as coupon_check states it. A fixed coupon keeps the
// keys it always had ({"id", "amount", "min_spend"}), and a condition
// on who may use it is added only where the catalog states one
// ("condition": "new viewers only", per_buyer), so a coupon without one
// answers byte for byte as before: the bundled model reads these keys as
// it was trained to. The new-viewer condition is stated in words, as the
// model answers it right; a flag "new_viewers_only": true made it say
// "not eligible yet" where the coupon applies. A percent coupon, new to
// the tools, states its percent, what it takes off this order, and its
// end.
func (j couponFor) terms() map[string]any {
	m := map[string]any{"id": j.c.ID, "min_spend": money(j.c.MinSpend)}
	if j.c.Percent > 0 {
		m["percent_off"] = j.c.Percent
		m["discount"] = money(j.discount)
		if !j.c.Ends.IsZero() {
			m["ends"] = j.c.Ends.Format(time.RFC3339)
		}
	} else {
		m["amount"] = money(j.c.Amount)
	}
	if j.c.NewViewersOnly {
		// Whether this viewer is new is not known to the tools: the
		// condition is stated, and eligible says only whether the order
		// reaches the minimum spend.
		m["condition"] = "new viewers only"
	}
	if j.c.PerBuyer > 0 {
		m["per_buyer"] = j.c.PerBuyer
	}
	return m
}

// CouponCheck answers coupon_check for an order of the item at now: the
// item's coupon (the first limited to it, else the first for every item)
// with whether the order reaches its minimum spend and the total after
// it; the best coupon for this quantity when another one takes more
// off; and the running multi-buy deals on the item for this quantity.
func CouponCheck(lookup Lookup, req ItemRequest, now time.Time) (map[string]any, error) {
	p, _, err := item(lookup, "coupon_check", req.ItemID)
	if err != nil {
		return nil, err
	}
	qty := req.Quantity
	if qty == 0 {
		qty = 1
	}
	if qty < 1 || qty > 99 {
		return nil, errors.New("coupon_check: quantity must be from 1 to 99")
	}
	res, err := lookup(sdk.CatalogQuery{Kind: "coupons"})
	if err != nil {
		return nil, err
	}
	total := p.Price * float64(qty)
	out := map[string]any{"item_id": p.ID, "quantity": qty, "total": money(total)}
	var first, best *couponFor
	for _, c := range res.Coupons {
		forItem := slices.Contains(c.Products, p.ID)
		if !c.Running(now) || (!forItem && len(c.Products) > 0) || (c.Amount <= 0 && c.Percent <= 0) {
			continue
		}
		j := judge(c, total)
		if forItem && (first == nil || len(first.c.Products) == 0) || first == nil {
			first = &j
		}
		if j.eligible && (best == nil || j.discount > best.discount+0.005) {
			best = &j
		}
	}
	if first == nil {
		out["coupon"], out["eligible"], out["total_after_coupon"] = nil, false, money(total)
	} else {
		out["coupon"] = first.terms()
		out["eligible"] = first.eligible
		if first.eligible {
			out["total_after_coupon"] = money(total - first.discount)
		} else {
			out["total_after_coupon"] = money(total)
			out["missing_spend"] = money(first.c.MinSpend - total)
		}
	}
	if best != nil && (first == nil || best.c.ID != first.c.ID) && (first == nil || !first.eligible || best.discount > first.discount+0.005) {
		// The best coupon is one this order reaches: its minimum spend is
		// met, and stating it beside the item's coupon's made the bundled
		// model quote the wrong threshold.
		b := best.terms()
		delete(b, "min_spend")
		b["total_after_coupon"] = money(total - best.discount)
		out["best_coupon"] = b
	}
	deals, err := multiBuys(lookup, p, qty, now)
	if err != nil {
		return nil, err
	}
	if len(deals) > 0 {
		out["multi_buy"] = deals
	}
	return out, nil
}

// multiBuys states the running multi-buy deals on the item for qty: the
// total with the deal once qty reaches its quantity (the rest at the
// price), else how many more items it needs.
func multiBuys(lookup Lookup, p sdk.Product, qty int, now time.Time) ([]map[string]any, error) {
	promos, err := runningPromotions(lookup, p.ID, now)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, pr := range promos {
		if pr.Kind != sdk.PromoMultiBuy || pr.Quantity < 2 {
			continue
		}
		m := promotionTerms(pr)
		if qty < pr.Quantity {
			m["missing_quantity"] = pr.Quantity - qty
			out = append(out, m)
			continue
		}
		groups, rest := qty/pr.Quantity, qty%pr.Quantity
		group := p.Price * float64(pr.Quantity)
		switch {
		case pr.Price > 0:
			group = pr.Price
		case pr.Percent > 0:
			group = roundFen(group * (1 - pr.Percent/100))
		case pr.NthPercent > 0:
			group -= roundFen(p.Price * pr.NthPercent / 100)
		}
		m["total_with_deal"] = money(float64(groups)*group + float64(rest)*p.Price)
		out = append(out, m)
	}
	return out, nil
}

// ShippingPolicy answers shipping_policy: dispatch time, fee, ship-from,
// carrier, excluded regions and the return rule, each "not stated" or
// absent when the merchant did not state it. An item the merchant
// stated nothing about is an error, as it always was.
func ShippingPolicy(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "shipping_policy", req.ItemID)
	if err != nil {
		return nil, err
	}
	if p.Shipping == nil && p.Returns == nil {
		return nil, fmt.Errorf("shipping_policy: the catalog has no shipping policy for %s", p.ID)
	}
	out := map[string]any{"item_id": p.ID, "ships_within_days": notStated, "shipping_fee": notStated,
		"free_shipping": notStated, "return_days": notStated}
	if sh := p.Shipping; sh != nil {
		if h := sh.DispatchHours; h > 0 {
			if h%24 == 0 {
				out["ships_within_days"] = h / 24
			} else {
				out["ships_within_days"] = float64(h) / 24
				out["dispatch_hours"] = h
			}
		}
		if sh.Fee != nil {
			out["shipping_fee"], out["free_shipping"] = money(*sh.Fee), *sh.Fee == 0
		}
		if sh.ShipFrom != "" {
			out["ship_from"] = sh.ShipFrom
		}
		if sh.Carrier != "" {
			out["carrier"] = sh.Carrier
		}
		if len(sh.ExcludedRegions) > 0 {
			out["excluded_regions"] = sh.ExcludedRegions
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
	return out, nil
}

// plainReturns reports whether a return rule says no more than
// return_days alone has always said: no returns, or returns within the
// days without a reason.
func plainReturns(rt sdk.Returns) bool {
	if len(rt.Conditions) > 0 || rt.ShippingInsurance {
		return false
	}
	return !rt.Accepted || (rt.Days > 0 && rt.NoReason)
}

// returnRule states a return rule with its conditions.
func returnRule(rt sdk.Returns) map[string]any {
	m := map[string]any{"accepted": rt.Accepted}
	switch {
	case !rt.Accepted:
		m["rule"] = "no returns"
	case rt.Days > 0 && rt.NoReason:
		m["rule"] = fmt.Sprintf("returns within %d days, no reason needed", rt.Days)
	case rt.Days > 0:
		m["rule"] = fmt.Sprintf("returns within %d days", rt.Days)
		m["no_reason"] = notStated
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

// SendLink answers send_link: the item must exist; pinning is the shop
// front end's job, which reads the result.
func SendLink(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "send_link", req.ItemID)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"pinned": true, "item_id": p.ID}
	if p.Link > 0 {
		out["link"] = p.Link
	}
	return out, nil
}

func main() {}
