package liveroom

import (
	"encoding/json"
	"fmt"
)

// CatalogJSON writes the room's catalog in the plugin catalog format
// (plugins.Catalog: products with yuan prices, variants, size charts and
// shipping; coupons), the data the stream's plugins read through the
// host's catalog lookup. Attributes are given in both languages.
func (r *Room) CatalogJSON() ([]byte, error) {
	type product struct {
		ID          string            `json:"id"`
		Name        string            `json:"name"`
		Aliases     []string          `json:"aliases,omitempty"`
		Category    string            `json:"category,omitempty"`
		Price       float64           `json:"price"`
		ListPrice   float64           `json:"list_price,omitempty"`
		Stock       int               `json:"stock"`
		Description string            `json:"description,omitempty"`
		Attributes  map[string]string `json:"attributes,omitempty"`
		Variants    []Variant         `json:"variants,omitempty"`
		SizeChart   []SizeRow         `json:"size_chart,omitempty"`
		Shipping    struct {
			Days       int     `json:"days"`
			Fee        float64 `json:"fee"`
			ReturnDays int     `json:"return_days"`
		} `json:"shipping"`
	}
	type coupon struct {
		ID        string   `json:"id"`
		Name      string   `json:"name"`
		Amount    float64  `json:"amount"`
		MinSpend  float64  `json:"min_spend,omitempty"`
		Products  []string `json:"products"`
		Remaining int      `json:"remaining"`
	}
	out := struct {
		Stream   string    `json:"stream"`
		Currency string    `json:"currency"`
		Products []product `json:"products"`
		Coupons  []coupon  `json:"coupons,omitempty"`
	}{Stream: fmt.Sprintf("liveroom-%d", r.Seed), Currency: "CNY"}
	// An alias two items share ("枕头" for two pillows) would point the
	// plugins at the wrong item, so only unambiguous aliases are exported.
	uses := map[string]int{}
	for _, it := range r.Items {
		for _, a := range it.Aliases {
			uses[normalizeName(a)]++
		}
	}
	for _, it := range r.Items {
		aliases := []string{it.NameEN}
		for _, a := range it.Aliases {
			if uses[normalizeName(a)] == 1 {
				aliases = append(aliases, a)
			}
		}
		attrs := map[string]string{}
		for _, a := range it.Attributes {
			attrs[a.Key] = a.Value
			attrs[a.KeyZH] = a.ValueZH
		}
		p := product{ID: it.ID, Name: it.NameZH, Aliases: aliases, Category: string(it.Category),
			Price: float64(it.Price()) / 100, Stock: it.TotalStock(), Description: it.NameEN, Attributes: attrs}
		if it.PromoPercentOff > 0 {
			p.ListPrice = float64(it.ListPrice) / 100
		}
		p.Variants, p.SizeChart = it.Variants, it.SizeChart
		p.Shipping.Days, p.Shipping.Fee, p.Shipping.ReturnDays = it.Shipping.Days, float64(it.Shipping.Fee)/100, it.Shipping.ReturnDays
		out.Products = append(out.Products, p)
	}
	for _, c := range r.Coupons {
		out.Coupons = append(out.Coupons, coupon{ID: c.ID, Name: fmt.Sprintf("满%s减%s", Yuan(c.MinSpend), Yuan(c.Amount)),
			Amount: float64(c.Amount) / 100, MinSpend: float64(c.MinSpend) / 100, Products: []string{c.ItemID}, Remaining: 1000})
	}
	return json.Marshal(out)
}

// ItemIDs returns the ids of the room's items, in catalog order: what a
// live session holds the model's item arguments to.
func (r *Room) ItemIDs() []string {
	ids := make([]string, len(r.Items))
	for i, it := range r.Items {
		ids[i] = it.ID
	}
	return ids
}
