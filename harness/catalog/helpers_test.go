package catalog

import (
	"slices"
	"testing"
	"time"
)

func TestProductAndByLink(t *testing.T) {
	c := mustParse(t, readFile(t, everyFieldPath))
	tests := []struct {
		name   string
		got    *Product
		wantID string
	}{
		{"Product by id", c.Product("p-tee"), "p-tee"},
		{"Product unknown", c.Product("p-none"), ""},
		{"ByLink 1", c.ByLink(1), "p-earbuds"},
		{"ByLink 5", c.ByLink(5), "p-nuts"},
		{"ByLink 6", c.ByLink(6), ""},
		{"ByLink 0 is no link", c.ByLink(0), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.wantID == "" && tt.got != nil:
				t.Errorf("got %s, want none", tt.got.ID)
			case tt.wantID != "" && (tt.got == nil || tt.got.ID != tt.wantID):
				t.Errorf("got %v, want %s", tt.got, tt.wantID)
			}
		})
	}
	// No link is not link 0: a product without one is never found by it.
	c.Products[0].Link = 0
	if p := c.ByLink(0); p != nil {
		t.Errorf("ByLink(0) = %s, want none", p.ID)
	}
}

func TestWords(t *testing.T) {
	c := &Catalog{Products: []Product{
		{ID: "p-a", Name: "修护面霜", Aliases: []string{"面霜", "cream"}},
		{ID: "p-b", Name: "Cream Jar", Aliases: []string{"cream", ""}},
	}}
	want := []string{"p-a", "修护面霜", "面霜", "cream", "p-b", "Cream Jar"}
	if got := c.Words(); !slices.Equal(got, want) {
		t.Errorf("Words() = %q, want %q (each once, none empty, in catalog order)", got, want)
	}
	if got := (&Catalog{}).Words(); len(got) != 0 {
		t.Errorf("an empty catalog has words %q", got)
	}
}

func TestVariantNames(t *testing.T) {
	c := &Catalog{Products: []Product{
		{ID: "p-a", Variants: []Variant{{Name: "M"}, {Name: "L"}}},
		{ID: "p-b"},
		{ID: "p-c", Variants: []Variant{{Name: "黑色"}, {Name: "M"}, {Name: ""}}},
	}}
	want := []string{"M", "L", "黑色"}
	if got := c.VariantNames(); !slices.Equal(got, want) {
		t.Errorf("VariantNames() = %q, want %q (each once, none empty, in catalog order)", got, want)
	}
	if got := (&Catalog{Products: []Product{{ID: "p-b"}}}).VariantNames(); len(got) != 0 {
		t.Errorf("a catalog without variants has variants %q", got)
	}
}

func TestStockStateOf(t *testing.T) {
	tests := []struct {
		name  string
		state StockState
		stock *int
		want  StockState
	}{
		{"nothing stated", "", nil, ""},
		{"stated wins", Presale, ptr(500), Presale},
		{"stated without count", SoldOut, nil, SoldOut},
		{"zero", "", ptr(0), SoldOut},
		{"one", "", ptr(1), LowStock},
		{"below the threshold", "", ptr(LowStockBelow - 1), LowStock},
		{"at the threshold", "", ptr(LowStockBelow), InStock},
		{"plenty", "", ptr(300), InStock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StockStateOf(Product{StockState: tt.state, Stock: tt.stock}); got != tt.want {
				t.Errorf("StockStateOf = %q, want %q", got, tt.want)
			}
			if got := VariantStockStateOf(Variant{StockState: tt.state, Stock: tt.stock}); got != tt.want {
				t.Errorf("VariantStockStateOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCouponsAndPromotionsFor(t *testing.T) {
	c := mustParse(t, readFile(t, everyFieldPath))
	cst := time.FixedZone("CST", 8*3600)
	before := time.Date(2026, 11, 30, 12, 0, 0, 0, cst)
	during := time.Date(2026, 12, 12, 21, 0, 0, 0, cst)
	after := time.Date(2026, 12, 13, 0, 0, 0, 0, cst)
	tests := []struct {
		product         string
		now             time.Time
		coupons, promos []string
	}{
		// The percent coupon and the gift run from Dec 1; the fixed coupon
		// and the new-viewer coupon (every product) have no window.
		{"p-earbuds", before, []string{"c-earbuds-20", "c-new10"}, []string{"set-earbuds-tee"}},
		{"p-earbuds", during, []string{"c-earbuds-pct10", "c-earbuds-20", "c-new10"}, []string{"set-earbuds-tee", "earbuds-gift"}},
		{"p-earbuds", after, []string{"c-earbuds-20", "c-new10"}, []string{"set-earbuds-tee"}},
		// The nut coupon is all claimed (remaining 0).
		{"p-nuts", during, []string{"c-new10"}, []string{"nuts-pct"}},
		// The flash sale runs 20:00-22:00 on Dec 12 only.
		{"p-cream", during, []string{"c-new10"}, []string{"cream-flash"}},
		{"p-cream", after, []string{"c-new10"}, nil},
		{"p-tee", during, []string{"c-new10"}, []string{"tee-2", "tee-3", "set-earbuds-tee"}},
		{"p-none", during, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.product+" "+tt.now.Format(time.DateTime), func(t *testing.T) {
			var coupons, promos []string
			for _, cp := range c.CouponsFor(tt.product, tt.now) {
				coupons = append(coupons, cp.ID)
			}
			for _, p := range c.PromotionsFor(tt.product, tt.now) {
				promos = append(promos, p.ID)
			}
			if !slices.Equal(coupons, tt.coupons) {
				t.Errorf("CouponsFor = %v, want %v", coupons, tt.coupons)
			}
			if !slices.Equal(promos, tt.promos) {
				t.Errorf("PromotionsFor = %v, want %v", promos, tt.promos)
			}
		})
	}
	// A window's end is not inside it; its start is.
	end := c.Promotions[2].Ends
	if got := c.PromotionsFor("p-cream", end); len(got) != 0 {
		t.Errorf("at the end of cream-flash: %v, want none", got)
	}
	if got := c.PromotionsFor("p-cream", c.Promotions[2].Starts); len(got) != 1 {
		t.Errorf("at the start of cream-flash: %v, want it", got)
	}
}

func TestFits(t *testing.T) {
	m := SizeRow{Size: "M", MinHeightCM: 160, MaxHeightCM: 170, MinWeightKG: 50, MaxWeightKG: 60}
	xxl := SizeRow{Size: "XXL", MinHeightCM: 185}
	tests := []struct {
		name           string
		row            SizeRow
		height, weight float64
		want           bool
	}{
		{"inside", m, 165, 55, true},
		{"on the lower bounds", m, 160, 50, true},
		{"on the upper bounds", m, 170, 60, true},
		{"too tall", m, 171, 55, false},
		{"too heavy", m, 165, 61, false},
		{"too light", m, 165, 49, false},
		{"height unknown", m, 0, 55, true},
		{"weight unknown, height outside", m, 180, 0, false},
		{"open row above", xxl, 195, 120, true},
		{"open row at its bound", xxl, 185, 0, true},
		{"open row below", xxl, 184, 90, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.row.Fits(tt.height, tt.weight); got != tt.want {
				t.Errorf("%+v.Fits(%v, %v) = %v, want %v", tt.row, tt.height, tt.weight, got, tt.want)
			}
		})
	}
}
