package liveroom

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness/catalog"
)

// CatalogJSON writes the room's catalog as a catalog document (package
// harness/catalog, version 2): the data the stream's plugins read through
// the host's catalog lookup. See Catalog for what it states.
func (r *Room) CatalogJSON() ([]byte, error) {
	data, err := json.Marshal(r.Catalog())
	if err != nil {
		return nil, fmt.Errorf("liveroom: catalog of room %d: %w", r.Seed, err)
	}
	return data, nil
}

// Catalog is the room's catalog, stating exactly the facts the room has.
// An item read from a catalog (RoomFromCatalog) is written back as it was
// read. A generated item states what version 1 catalogs could: its
// Chinese name as the name, its English name as the first alias and as
// the description, the price (and the list price when there is a live
// promotion), the stock as the sum of the variants', every attribute as
// two text specs keyed by its English and its Chinese key, the size chart,
// the dispatch time (days × 24 hours), the fee (0 is free shipping,
// stated), and returns (a no-reason window of ReturnDays, or not
// accepted). Generated coupons are fixed amounts for one item with a
// minimum spend; how many remain is not stated, because the room does not
// know.
func (r *Room) Catalog() *catalog.Catalog {
	c := &catalog.Catalog{Stream: r.Stream, Currency: r.Currency}
	if c.Stream == "" {
		c.Stream = fmt.Sprintf("liveroom-%d", r.Seed)
	}
	if c.Currency == "" {
		c.Currency = "CNY"
	}
	// An alias two items share ("枕头" for two pillows) would point the
	// plugins at the wrong item, so a generated item's ambiguous aliases
	// are not exported.
	uses := map[string]int{}
	for _, it := range r.Items {
		for _, a := range it.Aliases {
			uses[normalizeName(a)]++
		}
	}
	for _, it := range r.Items {
		if it.FromCatalog {
			c.Products = append(c.Products, it.catalogProduct())
			continue
		}
		aliases := []string{it.NameEN}
		for _, a := range it.Aliases {
			if uses[normalizeName(a)] == 1 {
				aliases = append(aliases, a)
			}
		}
		c.Products = append(c.Products, it.generatedProduct(aliases))
	}
	for _, cp := range r.Coupons {
		out := catalog.Coupon{ID: cp.ID, Name: cp.Name, Amount: yuanOf(cp.Amount), Percent: cp.Percent,
			MinSpend: yuanOf(cp.MinSpend), Products: slices.Clone(cp.ItemIDs), NewViewersOnly: cp.NewViewersOnly,
			Remaining: cloneInt(cp.Remaining), PerBuyer: cp.PerBuyer, Starts: cp.Starts, Ends: cp.Ends}
		if cp.ItemID != "" {
			out.Products = []string{cp.ItemID}
		}
		if out.Name == "" {
			out.Name = fmt.Sprintf("满%s减%s", Yuan(cp.MinSpend), Yuan(cp.Amount))
		}
		c.Coupons = append(c.Coupons, out)
	}
	for _, p := range r.Promotions {
		p.Products = slices.Clone(p.Products)
		c.Promotions = append(c.Promotions, p)
	}
	return c
}

// generatedProduct states a generated item's facts, as the version 1
// export stated them.
func (it Item) generatedProduct(aliases []string) catalog.Product {
	stock := it.TotalStock()
	p := catalog.Product{ID: it.ID, Name: it.NameZH, Aliases: aliases, Category: string(it.Category),
		Description: it.NameEN, Price: yuanOf(it.Price()), Stock: &stock}
	if it.PromoPercentOff > 0 {
		p.ListPrice = yuanOf(it.ListPrice)
	}
	for _, v := range it.Variants {
		p.Variants = append(p.Variants, catalog.Variant{Name: v.Name, Stock: &v.Stock})
	}
	attrs := map[string]string{}
	for _, a := range it.Attributes {
		attrs[a.Key] = a.Value
		attrs[a.KeyZH] = a.ValueZH
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		p.Specs = append(p.Specs, catalog.Spec{Key: k, Value: catalog.TextValue(attrs[k])})
	}
	p.SizeChart = sizeChartOf(it.SizeChart)
	fee := yuanOf(it.Shipping.Fee)
	p.Shipping = &catalog.Shipping{DispatchHours: it.Shipping.Days * 24, Fee: &fee}
	p.Returns = &catalog.Returns{Accepted: false}
	if it.Shipping.ReturnDays > 0 {
		p.Returns = &catalog.Returns{Accepted: true, Days: it.Shipping.ReturnDays, NoReason: true}
	}
	return p
}

// catalogProduct states an item read from a catalog as it was read.
func (it Item) catalogProduct() catalog.Product {
	p := catalog.Product{ID: it.ID, Link: it.Link, Name: it.NameZH, Aliases: slices.Clone(it.Aliases),
		Category: string(it.Category), Description: it.Description, Price: yuanOf(it.LivePrice),
		ListPrice: yuanOf(it.ListPrice), Stock: cloneInt(it.Stock), StockState: it.StockState,
		RestockDate: it.RestockDate, PresaleShipDate: it.PresaleShipDate, LimitPerBuyer: it.LimitPerBuyer,
		Specs: slices.Clone(it.Specs), Ingredients: slices.Clone(it.Ingredients), Allergens: slices.Clone(it.Allergens),
		ShelfLifeDays: it.ShelfLifeDays, BestBefore: it.BestBefore, Certifications: slices.Clone(it.Certifications),
		SizeChart: sizeChartOf(it.SizeChart)}
	for _, v := range it.Variants {
		cv := catalog.Variant{Name: v.Name, Axis: v.Axis, StockState: v.StockState, RestockDate: v.RestockDate}
		if v.Price != nil {
			price := yuanOf(*v.Price)
			cv.Price = &price
		}
		if !v.NoOwnStock {
			cv.Stock = &v.Stock
		}
		p.Variants = append(p.Variants, cv)
	}
	if d := it.Delivery; d != nil {
		p.Shipping = &catalog.Shipping{ShipFrom: d.ShipFrom, DispatchHours: d.DispatchHours, Fee: cloneFloat(d.Fee),
			Carrier: d.Carrier, ExcludedRegions: slices.Clone(d.ExcludedRegions)}
	}
	if rt := it.Returns; rt != nil {
		p.Returns = &catalog.Returns{Accepted: rt.Accepted, Days: rt.Days, NoReason: rt.NoReason,
			Conditions: slices.Clone(rt.Conditions), ShippingInsurance: rt.ShippingInsurance}
	}
	return p
}

func sizeChartOf(rows []SizeRow) []catalog.SizeRow {
	var out []catalog.SizeRow
	for _, r := range rows {
		out = append(out, catalog.SizeRow{Size: r.Size, MinHeightCM: float64(r.MinHeight), MaxHeightCM: float64(r.MaxHeight),
			MinWeightKG: float64(r.MinWeight), MaxWeightKG: float64(r.MaxWeight)})
	}
	return out
}

// RoomFromCatalog builds a room from a catalog — a merchant's own, or one
// of the transfer family — so that questions, the expert, the host, the
// room's tools and the grader work on catalogs nobody here generated. Its
// items are FromCatalog; the first is featured; Room.Catalog gives the
// catalog back. What the room cannot hold exactly is an error: an amount
// finer than a fen, a size-chart bound that is not a whole centimetre or
// kilogram.
func RoomFromCatalog(c *catalog.Catalog) (*Room, error) {
	if c == nil || len(c.Products) == 0 {
		return nil, fmt.Errorf("liveroom: the catalog has no products")
	}
	r := &Room{Stream: c.Stream, Currency: c.Currency,
		Merchant: Merchant{Name: c.Stream, BannedClaims: bannedClaims()}}
	var bad []string
	fenOf := func(what string, yuan float64) int64 {
		fen := math.Round(yuan * 100)
		if math.Abs(fen-yuan*100) > 1e-6 {
			bad = append(bad, fmt.Sprintf("%s %v is finer than a fen", what, yuan))
		}
		return int64(fen)
	}
	whole := func(what string, x float64) int {
		if x != math.Trunc(x) {
			bad = append(bad, fmt.Sprintf("%s %v is not a whole number", what, x))
		}
		return int(x)
	}
	for i, p := range c.Products {
		at := fmt.Sprintf("products[%d]", i)
		it := Item{FromCatalog: true, ID: p.ID, Link: p.Link, Category: Category(p.Category), NameZH: p.Name,
			Aliases: slices.Clone(p.Aliases), Description: p.Description,
			LivePrice: fenOf(at+".price", p.Price), ListPrice: fenOf(at+".list_price", p.ListPrice),
			Stock: cloneInt(p.Stock), StockState: p.StockState, RestockDate: p.RestockDate,
			PresaleShipDate: p.PresaleShipDate, LimitPerBuyer: p.LimitPerBuyer, Specs: slices.Clone(p.Specs),
			Ingredients: slices.Clone(p.Ingredients), Allergens: slices.Clone(p.Allergens),
			ShelfLifeDays: p.ShelfLifeDays, BestBefore: p.BestBefore, Certifications: slices.Clone(p.Certifications)}
		for j, v := range p.Variants {
			vat := fmt.Sprintf("%s.variants[%d]", at, j)
			iv := Variant{Name: v.Name, Axis: v.Axis, StockState: v.StockState, RestockDate: v.RestockDate, NoOwnStock: v.Stock == nil}
			if v.Stock != nil {
				iv.Stock = *v.Stock
			}
			if v.Price != nil {
				fen := fenOf(vat+".price", *v.Price)
				iv.Price = &fen
			}
			it.Variants = append(it.Variants, iv)
		}
		for j, row := range p.SizeChart {
			rat := fmt.Sprintf("%s.size_chart[%d]", at, j)
			it.SizeChart = append(it.SizeChart, SizeRow{Size: row.Size,
				MinHeight: whole(rat+".min_height_cm", row.MinHeightCM), MaxHeight: whole(rat+".max_height_cm", row.MaxHeightCM),
				MinWeight: whole(rat+".min_weight_kg", row.MinWeightKG), MaxWeight: whole(rat+".max_weight_kg", row.MaxWeightKG)})
		}
		if s := p.Shipping; s != nil {
			it.Delivery = &catalog.Shipping{ShipFrom: s.ShipFrom, DispatchHours: s.DispatchHours, Fee: cloneFloat(s.Fee),
				Carrier: s.Carrier, ExcludedRegions: slices.Clone(s.ExcludedRegions)}
			if s.Fee != nil {
				fenOf(at+".shipping.fee", *s.Fee)
			}
		}
		if rt := p.Returns; rt != nil {
			it.Returns = &catalog.Returns{Accepted: rt.Accepted, Days: rt.Days, NoReason: rt.NoReason,
				Conditions: slices.Clone(rt.Conditions), ShippingInsurance: rt.ShippingInsurance}
		}
		r.Items = append(r.Items, it)
	}
	for i, cp := range c.Coupons {
		at := fmt.Sprintf("coupons[%d]", i)
		r.Coupons = append(r.Coupons, Coupon{ID: cp.ID, Name: cp.Name, ItemIDs: slices.Clone(cp.Products),
			Amount: fenOf(at+".amount", cp.Amount), Percent: cp.Percent, MinSpend: fenOf(at+".min_spend", cp.MinSpend),
			NewViewersOnly: cp.NewViewersOnly, Remaining: cloneInt(cp.Remaining), PerBuyer: cp.PerBuyer,
			Starts: cp.Starts, Ends: cp.Ends})
	}
	for _, p := range c.Promotions {
		p.Products = slices.Clone(p.Products)
		r.Promotions = append(r.Promotions, p)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("liveroom: the catalog cannot be held exactly: %s", strings.Join(bad, "; "))
	}
	r.Featured = r.Items[0].ID
	return r, nil
}

// yuanOf is an amount in fen as the catalog's yuan.
func yuanOf(fen int64) float64 { return float64(fen) / 100 }

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneFloat(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ItemWords returns what the room's catalog calls its items by, each
// once, in catalog order (catalog.Catalog.Words of Catalog: ids, names,
// the English names and the aliases no other item shares) — what a live
// session holds the model's item queries to (runtime.Config.CatalogWords).
func (r *Room) ItemWords() []string { return r.Catalog().Words() }

// ItemVariants returns the names of the room's variants.
func (r *Room) ItemVariants() []string { return r.Catalog().VariantNames() }

// ItemIDs returns the ids of the room's items, in catalog order: what a
// live session holds the model's item arguments to.
func (r *Room) ItemIDs() []string {
	ids := make([]string, len(r.Items))
	for i, it := range r.Items {
		ids[i] = it.ID
	}
	return ids
}
