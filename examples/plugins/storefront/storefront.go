// Command storefront is the example plugin behind the demo harness's
// tools: product_lookup, check_stock, coupon_check, shipping_policy and
// send_link, answered from the stream's catalog through the host's
// catalog lookup. The logic is plain Go over SDK types, tested natively;
// main_wasm.go binds it to the host.
package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/livehat/livehat/sdk"
)

// Lookup asks the catalog for an item the way viewers name it: by id,
// then by exact name or alias, then by any name mentioned in the text.
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

// Find resolves a viewer's query to one item; ok is false when nothing or
// several items match.
func Find(lookup Lookup, query string) (sdk.Product, string, bool, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return sdk.Product{}, "", false, errors.New("product_lookup: query is empty")
	}
	for _, cq := range []sdk.CatalogQuery{{Kind: "product", ID: q}, {Kind: "product", Name: q}, {Kind: "product", Text: q, Limit: 2}} {
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

// ProductLookup answers product_lookup.
func ProductLookup(lookup Lookup, req LookupRequest) (map[string]any, error) {
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
	out := map[string]any{"found": true, "item_id": p.ID, "name": p.Name, "price": money(p.Price), "currency": currency,
		"variants": variants, "attributes": p.Attributes}
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
			chart[i] = map[string]any{"size": r.Size, "min_height_cm": r.MinHeight, "max_height_cm": r.MaxHeight,
				"min_weight_kg": r.MinWeight, "max_weight_kg": r.MaxWeight}
		}
		out["size_chart"] = chart
	}
	return out, nil
}

// CheckStock answers check_stock: the stock of every variant, or of the
// one the viewer named. An item without variants has one, "standard".
func CheckStock(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "check_stock", req.ItemID)
	if err != nil {
		return nil, err
	}
	variants := p.Variants
	if len(variants) == 0 {
		variants = []sdk.Variant{{Name: "standard", Stock: p.Stock}}
	}
	stock := map[string]int{}
	for _, v := range variants {
		if req.Variant == "" || strings.EqualFold(v.Name, req.Variant) {
			stock[v.Name] = v.Stock
		}
	}
	if len(stock) == 0 {
		return nil, fmt.Errorf("check_stock: item %s has no variant %q", p.ID, req.Variant)
	}
	return map[string]any{"item_id": p.ID, "stock": stock}, nil
}

// CouponCheck answers coupon_check: the coupon for the item (one limited
// to it, else one for every item), whether the order reaches its minimum
// spend, and the total after it.
func CouponCheck(lookup Lookup, req ItemRequest) (map[string]any, error) {
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
	var best *sdk.Coupon
	for i := range res.Coupons {
		c := &res.Coupons[i]
		if c.Remaining <= 0 || c.Amount <= 0 {
			continue
		}
		forItem := false
		for _, id := range c.Products {
			forItem = forItem || id == p.ID
		}
		if forItem || (len(c.Products) == 0 && best == nil) {
			best = c
		}
		if forItem {
			break
		}
	}
	if best == nil {
		out["coupon"], out["eligible"], out["total_after_coupon"] = nil, false, money(total)
		return out, nil
	}
	out["coupon"] = map[string]any{"id": best.ID, "amount": money(best.Amount), "min_spend": money(best.MinSpend)}
	eligible := total+0.005 >= best.MinSpend
	out["eligible"] = eligible
	if eligible {
		out["total_after_coupon"] = money(total - best.Amount)
	} else {
		out["total_after_coupon"] = money(total)
		out["missing_spend"] = money(best.MinSpend - total)
	}
	return out, nil
}

// ShippingPolicy answers shipping_policy.
func ShippingPolicy(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "shipping_policy", req.ItemID)
	if err != nil {
		return nil, err
	}
	if p.Shipping == nil {
		return nil, fmt.Errorf("shipping_policy: the catalog has no shipping policy for %s", p.ID)
	}
	return map[string]any{"item_id": p.ID, "ships_within_days": p.Shipping.Days, "shipping_fee": money(p.Shipping.Fee),
		"free_shipping": p.Shipping.Fee == 0, "return_days": p.Shipping.ReturnDays}, nil
}

// SendLink answers send_link: the item must exist; pinning is the shop
// front end's job, which reads the result.
func SendLink(lookup Lookup, req ItemRequest) (map[string]any, error) {
	p, _, err := item(lookup, "send_link", req.ItemID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"pinned": true, "item_id": p.ID}, nil
}

func main() {}
