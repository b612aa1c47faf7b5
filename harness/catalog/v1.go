package catalog

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"
)

// The version 1 layout (plugins.Catalog's JSON before this package), read
// only to upgrade it. Pointers keep "absent" apart from "zero", so that
// the upgrade states only what the document stated.
type (
	v1Catalog struct {
		Stream     string        `json:"stream"`
		Currency   string        `json:"currency"`
		Products   []v1Product   `json:"products"`
		Coupons    []v1Coupon    `json:"coupons"`
		Promotions []v1Promotion `json:"promotions"`
	}
	v1Product struct {
		ID          string            `json:"id"`
		Name        string            `json:"name"`
		Aliases     []string          `json:"aliases"`
		Category    string            `json:"category"`
		Price       float64           `json:"price"`
		ListPrice   float64           `json:"list_price"`
		Stock       *int              `json:"stock"`
		Description string            `json:"description"`
		Attributes  map[string]string `json:"attributes"`
		Variants    []v1Variant       `json:"variants"`
		SizeChart   []v1SizeRow       `json:"size_chart"`
		Shipping    *v1Shipping       `json:"shipping"`
	}
	v1Variant struct {
		Name  string `json:"name"`
		Stock *int   `json:"stock"`
	}
	v1SizeRow struct {
		Size      string `json:"size"`
		MinHeight int    `json:"min_height_cm"`
		MaxHeight int    `json:"max_height_cm"`
		MinWeight int    `json:"min_weight_kg"`
		MaxWeight int    `json:"max_weight_kg"`
	}
	v1Shipping struct {
		Days       int      `json:"days"`
		Fee        *float64 `json:"fee"`
		ReturnDays *int     `json:"return_days"`
	}
	v1Coupon struct {
		ID             string    `json:"id"`
		Name           string    `json:"name"`
		Amount         float64   `json:"amount"`
		Percent        float64   `json:"percent"`
		MinSpend       float64   `json:"min_spend"`
		Products       []string  `json:"products"`
		NewViewersOnly bool      `json:"new_viewers_only"`
		Remaining      *int      `json:"remaining"`
		Starts         time.Time `json:"starts"`
		Ends           time.Time `json:"ends"`
	}
	v1Promotion struct {
		ID       string    `json:"id"`
		Title    string    `json:"title"`
		Products []string  `json:"products"`
		Price    float64   `json:"price"`
		Percent  float64   `json:"percent"`
		Starts   time.Time `json:"starts"`
		Ends     time.Time `json:"ends"`
		Text     string    `json:"text"`
	}
)

// version1 checks a version 1 document against its own layout and
// upgrades it.
func (r *report) version1() *Catalog {
	schema, err := compiledV1()
	if err != nil {
		r.add("", "internal", "%v", err)
		return nil
	}
	r.validate(schema.Validate(r.doc.root.plain()), reflect.TypeFor[v1Catalog](), "schema")
	var old v1Catalog
	r.decode(&old)
	return r.upgrade(old)
}

// upgrade turns a version 1 catalog into version 2, stating exactly what
// version 1 stated: zero amounts, bounds and times that version 1 used
// for "none" become absent, and the one field that meant two things
// (shipping.return_days: the no-reason window, 0 for no returns) becomes
// returns.
func (r *report) upgrade(old v1Catalog) *Catalog {
	c := &Catalog{Stream: old.Stream, Currency: old.Currency, Products: make([]Product, 0, len(old.Products))}
	for i, op := range old.Products {
		if _, empty := op.Attributes[""]; empty {
			r.add(fmt.Sprintf("products[%d].attributes", i), "v1_attribute_unnamed", "has an attribute without a name; version 2 spec keys must not be empty")
		}
		p := Product{
			ID: op.ID, Name: op.Name, Aliases: op.Aliases, Category: op.Category, Description: op.Description,
			Price: op.Price, ListPrice: op.ListPrice, Stock: op.Stock,
		}
		for _, key := range slices.Sorted(maps.Keys(op.Attributes)) {
			p.Specs = append(p.Specs, Spec{Key: key, Value: TextValue(op.Attributes[key])})
		}
		for _, v := range op.Variants {
			p.Variants = append(p.Variants, Variant{Name: v.Name, Stock: v.Stock})
		}
		for _, row := range op.SizeChart {
			p.SizeChart = append(p.SizeChart, SizeRow{Size: row.Size,
				MinHeightCM: float64(row.MinHeight), MaxHeightCM: float64(row.MaxHeight),
				MinWeightKG: float64(row.MinWeight), MaxWeightKG: float64(row.MaxWeight)})
		}
		if s := op.Shipping; s != nil {
			if s.Days > 0 || s.Fee != nil {
				p.Shipping = &Shipping{DispatchHours: s.Days * 24, Fee: s.Fee}
			}
			switch {
			case s.ReturnDays == nil:
			case *s.ReturnDays > 0:
				p.Returns = &Returns{Accepted: true, Days: *s.ReturnDays, NoReason: true}
			default:
				p.Returns = &Returns{Accepted: false}
			}
		}
		c.Products = append(c.Products, p)
	}
	for _, oc := range old.Coupons {
		c.Coupons = append(c.Coupons, Coupon{
			ID: oc.ID, Name: oc.Name, Amount: oc.Amount, Percent: oc.Percent, MinSpend: oc.MinSpend,
			Products: oc.Products, NewViewersOnly: oc.NewViewersOnly, Remaining: oc.Remaining,
			Starts: oc.Starts, Ends: oc.Ends,
		})
	}
	for i, op := range old.Promotions {
		at := fmt.Sprintf("promotions[%d]", i)
		p := Promotion{ID: op.ID, Title: op.Title, Products: op.Products, Starts: op.Starts, Ends: op.Ends, Text: op.Text}
		switch {
		case op.Price > 0 && op.Percent > 0:
			r.add(at+".percent", "v1_promotion_both", "a version 1 promotion with both price and percent cannot be upgraded: version 2 gives a promotion one kind")
		case op.Price > 0:
			p.Kind, p.Price = PromoPrice, op.Price
		case op.Percent > 0:
			p.Kind, p.Percent = PromoPercent, op.Percent
		default:
			r.add(at, "v1_promotion_kind", "a version 1 promotion needs price or percent to be upgraded")
		}
		if len(op.Products) == 0 && r.clean(at+".products") {
			r.add(at+".products", "v1_promotion_products", "names no products; version 2 needs the products a promotion applies to")
		}
		c.Promotions = append(c.Promotions, p)
	}
	return c
}
