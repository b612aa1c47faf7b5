package liveroom

import (
	"encoding/json"
	"fmt"
	"strings"
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

// ToolError is a tool failure the agent should handle: a bad argument,
// an unknown item. It is returned to the model as the tool's result.
type ToolError struct{ Msg string }

// Error returns the message the model reads.
func (e *ToolError) Error() string { return e.Msg }

// CallTool runs one of the room's tools on JSON arguments and returns its
// JSON result. Unknown tools and bad arguments give a ToolError, which
// the runtime shows the model as {"error": …}.
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
	item := func() (Item, error) {
		id, err := str("item_id", true)
		if err != nil {
			return Item{}, err
		}
		it, ok := r.Item(strings.TrimSpace(id))
		if !ok {
			return Item{}, &ToolError{fmt.Sprintf("%s: no item with id %q in this stream", name, id)}
		}
		return it, nil
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
		result = lookupResult(it)
	case ToolCheckStock:
		it, err := item()
		if err != nil {
			return nil, err
		}
		variant, err := str("variant", false)
		if err != nil {
			return nil, err
		}
		stock := map[string]int{}
		for _, v := range it.Variants {
			if variant == "" || strings.EqualFold(v.Name, variant) {
				stock[v.Name] = v.Stock
			}
		}
		if len(stock) == 0 {
			return nil, &ToolError{fmt.Sprintf("%s: item %s has no variant %q", name, it.ID, variant)}
		}
		result = map[string]any{"item_id": it.ID, "stock": stock}
	case ToolCouponCheck:
		it, err := item()
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
		result = couponResult(r, it, qty)
	case ToolShippingPolicy:
		it, err := item()
		if err != nil {
			return nil, err
		}
		result = map[string]any{
			"item_id":           it.ID,
			"ships_within_days": it.Shipping.Days,
			"shipping_fee":      Yuan(it.Shipping.Fee),
			"free_shipping":     it.Shipping.Fee == 0,
			"return_days":       it.Shipping.ReturnDays,
		}
	case ToolSendLink:
		it, err := item()
		if err != nil {
			return nil, err
		}
		result = map[string]any{"pinned": true, "item_id": it.ID}
	default:
		return nil, &ToolError{fmt.Sprintf("unknown tool %q", name)}
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("liveroom: encode %s result: %w", name, err)
	}
	return raw, nil
}

func lookupResult(it Item) map[string]any {
	// The layout is the storefront plugin's over the catalog CatalogJSON
	// exports (Chinese name as "name", English as "description", each
	// attribute under its English and its Chinese key, maps for the size
	// chart): the model is trained on what it reads when it serves, and
	// TestRoomToolsMatchPlugins in trainer/eval holds the two together.
	attrs := map[string]string{}
	for _, a := range it.Attributes {
		attrs[a.Key] = a.Value
		attrs[a.KeyZH] = a.ValueZH
	}
	variants := make([]string, len(it.Variants))
	for i, v := range it.Variants {
		variants[i] = v.Name
	}
	out := map[string]any{
		"found":       true,
		"item_id":     it.ID,
		"name":        it.NameZH,
		"description": it.NameEN,
		"price":       Yuan(it.Price()),
		"currency":    "CNY",
		"variants":    variants,
		"attributes":  attrs,
	}
	if it.PromoPercentOff > 0 {
		out["list_price"] = Yuan(it.ListPrice)
		out["promotion"] = fmt.Sprintf("%d%% off during the live stream", it.PromoPercentOff)
	}
	if len(it.SizeChart) > 0 {
		chart := make([]map[string]any, len(it.SizeChart))
		for i, r := range it.SizeChart {
			chart[i] = map[string]any{"size": r.Size, "min_height_cm": r.MinHeight, "max_height_cm": r.MaxHeight,
				"min_weight_kg": r.MinWeight, "max_weight_kg": r.MaxWeight}
		}
		out["size_chart"] = chart
	}
	return out
}

func couponResult(r *Room, it Item, qty int) map[string]any {
	total := it.Price() * int64(qty)
	out := map[string]any{"item_id": it.ID, "quantity": qty, "total": Yuan(total)}
	c, ok := r.Coupon(it.ID)
	if !ok {
		out["coupon"] = nil
		out["eligible"] = false
		out["total_after_coupon"] = Yuan(total)
		return out
	}
	out["coupon"] = map[string]any{"id": c.ID, "amount": Yuan(c.Amount), "min_spend": Yuan(c.MinSpend)}
	eligible := total >= c.MinSpend
	out["eligible"] = eligible
	if eligible {
		out["total_after_coupon"] = Yuan(total - c.Amount)
	} else {
		out["total_after_coupon"] = Yuan(total)
		out["missing_spend"] = Yuan(c.MinSpend - total)
	}
	return out
}
