package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// check adds the rules the JSON Schema cannot state: those that relate
// fields. A rule runs only where the fields it reads have no problem yet,
// so that one mistake is reported once.
func (r *report) check(c *Catalog) {
	ids := map[string]int{}
	idsClean := true
	links := map[int]int{}
	for i, p := range c.Products {
		at := fmt.Sprintf("products[%d]", i)
		if !r.clean(at + ".id") {
			idsClean = false
		} else if first, dup := ids[p.ID]; dup {
			r.add(at+".id", "id_taken", "id %q is already the id of %s[%d]", p.ID, "products", first)
		} else {
			ids[p.ID] = i
		}
		if p.Link > 0 && r.clean(at+".link") {
			if first, dup := links[p.Link]; dup {
				r.add(at+".link", "link_taken", "link %d is already the link of products[%d]", p.Link, first)
			} else {
				links[p.Link] = i
			}
		}
		r.product(at, p)
	}
	refs := refChecker{r: r, ids: ids, clean: idsClean}
	couponIDs := map[string]int{}
	for i, cp := range c.Coupons {
		at := fmt.Sprintf("coupons[%d]", i)
		r.unique(at+".id", cp.ID, "coupons", i, couponIDs)
		r.coupon(at, cp, refs)
	}
	promoIDs := map[string]int{}
	for i, pr := range c.Promotions {
		at := fmt.Sprintf("promotions[%d]", i)
		r.unique(at+".id", pr.ID, "promotions", i, promoIDs)
		r.promotion(at, pr, refs)
	}
}

// unique reports an id seen before in the same list.
func (r *report) unique(path, id, list string, i int, seen map[string]int) {
	if !r.clean(path) {
		return
	}
	if first, dup := seen[id]; dup {
		r.add(path, "id_taken", "id %q is already the id of %s[%d]", id, list, first)
		return
	}
	seen[id] = i
}

// notBlank reports a required text that holds only spaces; the schema
// has already refused an empty one.
func (r *report) notBlank(path, s string) {
	if s != "" && strings.TrimSpace(s) == "" && r.clean(path) {
		r.add(path, "empty", "is blank")
	}
}

func (r *report) product(at string, p Product) {
	r.notBlank(at+".name", p.Name)
	if p.ListPrice > 0 && p.ListPrice < p.Price && r.clean(at+".price", at+".list_price") {
		r.add(at+".list_price", "list_price_below", "list price %s is below the price %s", num(p.ListPrice), num(p.Price))
	}
	r.stockState(at, p.StockState, p.Stock)
	if !p.PresaleShipDate.IsZero() && p.StockState != Presale && r.clean(at+".presale_ship_date", at+".stock_state") {
		r.add(at+".presale_ship_date", "presale_date_not_presale", "is stated but stock_state is not \"presale\"")
	}
	r.variants(at, p)
	r.specs(at, p.Specs)
	r.sizeChart(at, p.SizeChart)
	if rt := p.Returns; rt != nil && !rt.Accepted && r.clean(at+".returns") {
		for _, f := range []struct {
			name   string
			stated bool
		}{{"days", rt.Days > 0}, {"no_reason", rt.NoReason}, {"shipping_insurance", rt.ShippingInsurance}} {
			if f.stated {
				r.add(at+".returns."+f.name, "returns_not_accepted", "is stated but returns are not accepted")
			}
		}
	}
}

// stockState reports a stated state that its own stock count denies.
func (r *report) stockState(at string, state StockState, stock *int) {
	if state == "" || stock == nil || !r.clean(at+".stock_state", at+".stock") {
		return
	}
	switch {
	case state == SoldOut && *stock > 0:
		r.add(at+".stock_state", "sold_out_with_stock", "is \"sold_out\" but stock is %d", *stock)
	case (state == InStock || state == LowStock) && *stock == 0:
		r.add(at+".stock_state", "state_stock0", "is %q but stock is 0", state)
	}
}

func (r *report) variants(at string, p Product) {
	type key struct{ axis, name string }
	seen := map[key]int{}
	axes := []string{}
	byAxis := map[string][]Variant{}
	for j, v := range p.Variants {
		vat := fmt.Sprintf("%s.variants[%d]", at, j)
		r.notBlank(vat+".name", v.Name)
		if r.clean(vat+".name", vat+".axis") {
			k := key{v.Axis, v.Name}
			if first, dup := seen[k]; dup {
				r.addParams(vat+".name", "variant_repeats", []string{v.Name, strconv.Itoa(first), v.Axis}, "variant %q repeats variants[%d]%s", v.Name, first, onAxis(v.Axis))
			} else {
				seen[k] = j
			}
		}
		r.stockState(vat, v.StockState, v.Stock)
		if p.StockState == SoldOut && v.Stock != nil && *v.Stock > 0 && r.clean(vat+".stock", at+".stock_state") {
			r.add(vat+".stock", "variant_stock_sold_out", "is %d but the product's stock_state is \"sold_out\"", *v.Stock)
		}
		if _, ok := byAxis[v.Axis]; !ok {
			axes = append(axes, v.Axis)
		}
		byAxis[v.Axis] = append(byAxis[v.Axis], v)
	}
	if p.Stock == nil || !r.clean(at+".stock", at+".variants") {
		return
	}
	// Every axis splits the same total: a full axis sums to the product's
	// stock, a partly stated one cannot exceed it.
	for _, axis := range axes {
		sum, all, some := 0, true, false
		for _, v := range byAxis[axis] {
			if v.Stock == nil {
				all = false
				continue
			}
			sum, some = sum+*v.Stock, true
		}
		switch {
		case all && sum != *p.Stock:
			r.addParams(at+".stock", "variants_sum", []string{strconv.Itoa(*p.Stock), strconv.Itoa(sum), axis}, "is %d but the variants%s add up to %d", *p.Stock, onAxis(axis), sum)
		case !all && some && sum > *p.Stock:
			r.addParams(at+".stock", "variants_over", []string{strconv.Itoa(*p.Stock), strconv.Itoa(sum), axis}, "is %d but the variants%s that state stock already add up to %d", *p.Stock, onAxis(axis), sum)
		}
	}
}

// onAxis names an axis in a message, if it has a name.
func onAxis(axis string) string {
	if axis == "" {
		return ""
	}
	return fmt.Sprintf(" on axis %q", axis)
}

func (r *report) specs(at string, specs []Spec) {
	seen := map[string]int{}
	for j, s := range specs {
		sat := fmt.Sprintf("%s.specs[%d]", at, j)
		r.notBlank(sat+".key", s.Key)
		if r.clean(sat + ".key") {
			if first, dup := seen[s.Key]; dup {
				r.add(sat+".key", "spec_key_taken", "key %q is already the key of specs[%d]", s.Key, first)
			} else {
				seen[s.Key] = j
			}
		}
		if !r.clean(sat + ".value") {
			continue
		}
		if _, isNumber := s.Value.Number(); s.Unit != "" && !isNumber && r.clean(sat+".unit") {
			r.addParams(sat+".unit", "unit_needs_number", []string{s.Unit, s.Value.String()}, "unit %q goes only with a number value; the value is %s", s.Unit, describeValue(s.Value))
		}
		if _, isText := s.Value.Text(); s.ValueZh != "" && !isText && r.clean(sat+".value_zh") {
			r.addParams(sat+".value_zh", "value_zh_needs_text", []string{s.Value.String()}, "goes only with a text value; the value is %s", describeValue(s.Value))
		}
	}
}

// describeValue names a spec value's kind and value for a message.
func describeValue(v SpecValue) string {
	if s, ok := v.Text(); ok {
		return fmt.Sprintf("the text %q", s)
	}
	if _, ok := v.Number(); ok {
		return "the number " + v.String()
	}
	return "the yes/no " + v.String()
}

func (r *report) sizeChart(at string, rows []SizeRow) {
	seen := map[string]int{}
	for j, row := range rows {
		rat := fmt.Sprintf("%s.size_chart[%d]", at, j)
		r.notBlank(rat+".size", row.Size)
		if r.clean(rat + ".size") {
			if first, dup := seen[row.Size]; dup {
				r.add(rat+".size", "size_taken", "size %q already has size_chart[%d]", row.Size, first)
			} else {
				seen[row.Size] = j
			}
		}
		if !r.clean(rat) {
			continue
		}
		if row.MinHeightCM == 0 && row.MaxHeightCM == 0 && row.MinWeightKG == 0 && row.MaxWeightKG == 0 {
			r.add(rat, "no_bound", "states no bound; give at least one of min_height_cm, max_height_cm, min_weight_kg and max_weight_kg")
		}
		if row.MaxHeightCM > 0 && row.MinHeightCM > row.MaxHeightCM {
			r.add(rat+".min_height_cm", "height_order", "%s is above max_height_cm %s", num(row.MinHeightCM), num(row.MaxHeightCM))
		}
		if row.MaxWeightKG > 0 && row.MinWeightKG > row.MaxWeightKG {
			r.add(rat+".min_weight_kg", "weight_order", "%s is above max_weight_kg %s", num(row.MinWeightKG), num(row.MaxWeightKG))
		}
	}
}

func (r *report) coupon(at string, c Coupon, refs refChecker) {
	r.notBlank(at+".name", c.Name)
	if r.clean(at+".amount", at+".percent") {
		switch {
		case c.Amount == 0 && c.Percent == 0:
			r.add(at, "coupon_needs", "needs amount (a fixed amount off) or percent (a percent off)")
		case c.Amount > 0 && c.Percent > 0:
			r.add(at+".percent", "coupon_both", "a coupon takes amount or percent, not both")
		}
	}
	refs.check(at+".products", c.Products)
	r.window(at, c.Starts, c.Ends)
}

func (r *report) promotion(at string, p Promotion, refs refChecker) {
	r.notBlank(at+".title", p.Title)
	r.notBlank(at+".gift", p.Gift)
	refs.check(at+".products", p.Products)
	r.window(at, p.Starts, p.Ends)
	fields := []struct {
		name   string
		stated bool
	}{
		{"price", p.Price > 0},
		{"percent", p.Percent > 0},
		{"quantity", p.Quantity > 0},
		{"nth_percent", p.NthPercent > 0},
		{"gift", p.Gift != ""},
		{"min_spend", p.MinSpend > 0},
	}
	paths := []string{at + ".kind"}
	for _, f := range fields {
		paths = append(paths, at+"."+f.name)
	}
	if !r.clean(paths...) {
		return
	}
	// need: fields the kind requires; oneOf: fields of which it takes
	// exactly one; allowed: everything it accepts.
	var need, oneOf, allowed []string
	switch p.Kind {
	case PromoPrice:
		need, allowed = []string{"price"}, []string{"price", "min_spend"}
	case PromoPercent:
		need, allowed = []string{"percent"}, []string{"percent", "min_spend"}
	case PromoMultiBuy:
		need, oneOf = []string{"quantity"}, []string{"price", "percent", "nth_percent"}
		allowed = []string{"quantity", "price", "percent", "nth_percent"}
	case PromoBundle:
		need, allowed = []string{"price"}, []string{"price"}
		if len(p.Products) < 2 && r.clean(at+".products") {
			r.add(at+".products", "bundle", "a bundle needs two or more products; it names %d", len(p.Products))
		}
	case PromoGift:
		need, allowed = []string{"gift"}, []string{"gift", "min_spend"}
	default:
		return // the schema has refused any other kind
	}
	stated := map[string]bool{}
	for _, f := range fields {
		stated[f.name] = f.stated
		if f.stated && !slices.Contains(allowed, f.name) {
			r.add(at+"."+f.name, "kind_takes", "does not go with kind %q (it takes %s)", p.Kind, strings.Join(allowed, ", "))
		}
	}
	for _, f := range need {
		if !stated[f] {
			r.add(at+"."+f, "kind_needs", "kind %q needs %s", p.Kind, f)
		}
	}
	if len(oneOf) > 0 {
		var given []string
		for _, f := range oneOf {
			if stated[f] {
				given = append(given, f)
			}
		}
		switch {
		case len(given) == 0:
			r.add(at, "kind_needs_one", "kind %q needs one of %s", p.Kind, strings.Join(oneOf, ", "))
		case len(given) > 1:
			r.add(at+"."+given[1], "kind_one_of", "kind %q takes one of %s, not %s together", p.Kind, strings.Join(oneOf, ", "), strings.Join(given, " and "))
		}
	}
}

// window reports a start that is not before the end.
func (r *report) window(at string, starts, ends time.Time) {
	if starts.IsZero() || ends.IsZero() || starts.Before(ends) || !r.clean(at+".starts", at+".ends") {
		return
	}
	r.add(at+".starts", "not_before", "%s is not before ends %s", starts.Format(time.RFC3339), ends.Format(time.RFC3339))
}

// refChecker reports references to products the catalog does not have.
type refChecker struct {
	r   *report
	ids map[string]int
	// clean is false when some product id is itself wrong: a reference to
	// it may be right, so none is reported.
	clean bool
}

func (c refChecker) check(path string, refs []string) {
	if !c.clean {
		return
	}
	for j, id := range refs {
		at := fmt.Sprintf("%s[%d]", path, j)
		if _, ok := c.ids[id]; ok || !c.r.clean(at) {
			continue
		}
		if hint := suggest(id, slices.Sorted(maps.Keys(c.ids))); hint != "" {
			c.r.add(at, "unknown_product_hint", "names product %q, which the catalog does not have; did you mean %q?", id, hint)
		} else {
			c.r.add(at, "unknown_product", "names product %q, which the catalog does not have", id)
		}
	}
}

// num writes an amount or measure as the merchant would: 199, 19.9.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
