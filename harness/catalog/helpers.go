package catalog

import (
	"slices"
	"time"
)

// LowStockBelow is the count under which a stock with no stated state is
// derived to be LowStock.
const LowStockBelow = 20

// Product returns the product with id, or nil when the catalog has none.
func (c *Catalog) Product(id string) *Product {
	for i := range c.Products {
		if c.Products[i].ID == id {
			return &c.Products[i]
		}
	}
	return nil
}

// ByLink returns the product at link position n ("n号链接"), or nil when
// no product has that link.
func (c *Catalog) ByLink(n int) *Product {
	if n <= 0 {
		return nil
	}
	for i := range c.Products {
		if c.Products[i].Link == n {
			return &c.Products[i]
		}
	}
	return nil
}

// StockStateOf returns the product's stock state: the stated one, else
// the one its stock count implies (0: SoldOut, below LowStockBelow:
// LowStock, else InStock), else "" — not stated.
func StockStateOf(p Product) StockState { return deriveState(p.StockState, p.Stock) }

// VariantStockStateOf is StockStateOf for a variant; "" means the variant
// states no stock of its own.
func VariantStockStateOf(v Variant) StockState { return deriveState(v.StockState, v.Stock) }

func deriveState(stated StockState, stock *int) StockState {
	switch {
	case stated != "":
		return stated
	case stock == nil:
		return ""
	case *stock == 0:
		return SoldOut
	case *stock < LowStockBelow:
		return LowStock
	}
	return InStock
}

// CouponsFor returns the coupons a viewer can use on the product at now:
// those for every product or naming it, running at now (Starts at or
// before, Ends after), and not stated to be all claimed. It returns nil
// when the catalog has no such product.
func (c *Catalog) CouponsFor(productID string, now time.Time) []Coupon {
	if c.Product(productID) == nil {
		return nil
	}
	var out []Coupon
	for _, cp := range c.Coupons {
		if (len(cp.Products) == 0 || slices.Contains(cp.Products, productID)) &&
			running(cp.Starts, cp.Ends, now) && (cp.Remaining == nil || *cp.Remaining > 0) {
			out = append(out, cp)
		}
	}
	return out
}

// PromotionsFor returns the promotions naming the product that run at
// now.
func (c *Catalog) PromotionsFor(productID string, now time.Time) []Promotion {
	var out []Promotion
	for _, p := range c.Promotions {
		if slices.Contains(p.Products, productID) && running(p.Starts, p.Ends, now) {
			out = append(out, p)
		}
	}
	return out
}

// running reports whether a window with optional bounds holds now.
func running(starts, ends, now time.Time) bool {
	return (starts.IsZero() || !now.Before(starts)) && (ends.IsZero() || now.Before(ends))
}

// Fits reports whether a body fits the row: each stated bound holds
// (bounds are inclusive, absent ones open). A height or weight of 0 or
// less is not known and is not held to the row's bounds for it.
func (r SizeRow) Fits(heightCM, weightKG float64) bool {
	inside := func(x, lo, hi float64) bool {
		return x <= 0 || ((lo == 0 || x >= lo) && (hi == 0 || x <= hi))
	}
	return inside(heightCM, r.MinHeightCM, r.MaxHeightCM) && inside(weightKG, r.MinWeightKG, r.MaxWeightKG)
}

// Words lists what the catalog calls its items by, each once, in catalog
// order: every product's id, name and aliases. A lookup's query held to
// these (and to the viewer's own words) names something that exists.
func (c *Catalog) Words() []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, p := range c.Products {
		add(p.ID)
		add(p.Name)
		for _, a := range p.Aliases {
			add(a)
		}
	}
	return out
}

// VariantNames returns the names of the catalog's variants (sizes,
// colours), each once, in catalog order.
func (c *Catalog) VariantNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Products {
		for _, v := range p.Variants {
			if v.Name != "" && !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, v.Name)
			}
		}
	}
	return out
}
