package catalog

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestUpgradeV1(t *testing.T) {
	got := mustParse(t, readFile(t, "testdata/v1-every-field.json"))
	want := &Catalog{
		Stream:   "v1-stream",
		Currency: "CNY",
		Products: []Product{
			{
				ID: "p-hoodie", Name: "加绒卫衣", Aliases: []string{"卫衣", "hoodie"}, Category: "apparel",
				Description: "fleece-lined cotton hoodie", Price: 159, ListPrice: 199, Stock: ptr(30),
				// Attributes become text specs, sorted by key.
				Specs: []Spec{{Key: "fit", Value: TextValue("relaxed")}, {Key: "material", Value: TextValue("cotton")}},
				// Variant stock was always stated in version 1.
				Variants: []Variant{{Name: "M", Stock: ptr(0)}, {Name: "L", Stock: ptr(30)}},
				// Zero bounds were open and become absent.
				SizeChart: []SizeRow{
					{Size: "M", MinHeightCM: 155, MaxHeightCM: 168, MinWeightKG: 45, MaxWeightKG: 60},
					{Size: "XL", MinHeightCM: 178},
				},
				// days → hours; the fee was stated (0: free shipping).
				Shipping: &Shipping{DispatchHours: 48, Fee: ptr(0.0)},
				// return_days > 0 was the no-reason window.
				Returns: &Returns{Accepted: true, Days: 7, NoReason: true},
			},
			{
				// list_price 0 was "none"; stock 0 is stated.
				ID: "p-snack", Name: "辣条", Price: 9.9, Stock: ptr(0),
				Shipping: &Shipping{DispatchHours: 24, Fee: ptr(8.0)},
				// return_days 0 was "no returns".
				Returns: &Returns{Accepted: false},
			},
			// Nothing stated stays absent: no stock, no shipping, no returns.
			{ID: "p-bare", Name: "无信息商品", Price: 0},
			// A fee without days or return_days states only the fee.
			{ID: "p-fee-only", Name: "只写了运费", Price: 5, Shipping: &Shipping{Fee: ptr(3.0)}},
		},
		Coupons: []Coupon{
			{ID: "c-new20", Name: "新人立减20元", Amount: 20, MinSpend: 99, NewViewersOnly: true, Remaining: ptr(500)},
			{ID: "c-all10", Name: "全场9折", Percent: 10, Products: []string{"p-hoodie", "p-snack"}, Remaining: ptr(0),
				Starts: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Ends: time.Date(2029, 12, 31, 16, 0, 0, 0, time.UTC)},
			// remaining absent: not stated, not 0.
			{ID: "c-open", Name: "不限量券", Amount: 5},
		},
		Promotions: []Promotion{
			{ID: "flash", Title: "卫衣秒杀", Kind: PromoPrice, Products: []string{"p-hoodie"}, Price: 139,
				Starts: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC), Ends: time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)},
			// Zero times were "none"; the text is kept.
			{ID: "snack-week", Title: "辣条周", Kind: PromoPercent, Products: []string{"p-snack"}, Percent: 20, Text: "第二包半价"},
		},
	}
	if g, w := inUTC(got), inUTC(want); !reflect.DeepEqual(g, w) {
		for i := range min(len(g.Products), len(w.Products)) {
			if !reflect.DeepEqual(g.Products[i], w.Products[i]) {
				t.Errorf("products[%d]:\n got %+v\nwant %+v", i, g.Products[i], w.Products[i])
			}
		}
		t.Errorf("upgrade:\n got %+v\nwant %+v", g, w)
	}
	assertRoundTrip(t, got)
}

func TestUpgradeDemoCatalog(t *testing.T) {
	if !strings.Contains(string(readFile(t, demoV1Path)), `"return_days"`) {
		t.Fatalf("%s is not the version 1 demo catalog", demoV1Path)
	}
	c := mustParse(t, readFile(t, demoV1Path))
	lipstick := c.Product("p-lipstick")
	if lipstick == nil || lipstick.Shipping == nil || lipstick.Shipping.Fee == nil || *lipstick.Shipping.Fee != 8 || lipstick.Shipping.DispatchHours != 24 {
		t.Errorf("p-lipstick shipping = %+v, want a fee of 8 and dispatch in 24 hours", lipstick.Shipping)
	}
	if sun := c.Product("p-sunscreen"); sun == nil || StockStateOf(*sun) != SoldOut {
		t.Errorf("p-sunscreen = %+v, want sold out (stock 0)", sun)
	}
	for _, cp := range c.Coupons {
		if cp.Remaining == nil {
			t.Errorf("coupon %s: remaining not stated; version 1 stated it", cp.ID)
		}
	}
	kinds := map[string]PromotionKind{}
	for _, p := range c.Promotions {
		kinds[p.ID] = p.Kind
	}
	if want := map[string]PromotionKind{"flash-serum": PromoPrice, "lipstick-week": PromoPercent, "expired": PromoPrice}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("promotion kinds = %v, want %v", kinds, want)
	}
}

func TestUpgradeV1Problems(t *testing.T) {
	tests := []struct {
		name, data, path, msg string
	}{
		{"unknown field against the version 1 layout", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "stok": 3}]}`,
			"products[0].stok", `did you mean "stock"?`},
		{"version 2 field in version 1", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "link": 1}]}`,
			"products[0].link", `unknown field "link"`},
		{"explicit version 1 is strict too", `{"schema": "livehat.catalog/1", "currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "shipping": {"fee": 1, "free": true}}]}`,
			"products[0].shipping.free", `unknown field "free"`},
		{"no currency", `{"products": []}`, "currency", `required field "currency" is missing`},
		{"no price", `{"currency": "CNY", "products": [{"id": "p1", "name": "x"}]}`, "products[0].price", `required field "price" is missing`},
		{"promotion with price and percent", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1}], "promotions": [{"id": "x", "title": "t", "products": ["p1"], "price": 1, "percent": 5}]}`,
			"promotions[0].percent", "cannot be upgraded"},
		{"promotion with neither", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1}], "promotions": [{"id": "x", "title": "t", "products": ["p1"], "text": "惊喜"}]}`,
			"promotions[0]", "needs price or percent"},
		{"promotion without products", `{"currency": "CNY", "products": [], "promotions": [{"id": "x", "title": "t", "price": 3}]}`,
			"promotions[0].products", "names no products"},
		{"coupon without a discount", `{"currency": "CNY", "products": [], "coupons": [{"id": "c", "name": "券", "remaining": 3}]}`,
			"coupons[0]", "needs amount"},
		{"variant stock sum", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "stock": 9, "variants": [{"name": "M", "stock": 3}]}]}`,
			"products[0].stock", "add up to 3"},
		{"size row of zeros", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "size_chart": [{"size": "M", "min_height_cm": 0, "max_height_cm": 0, "min_weight_kg": 0, "max_weight_kg": 0}]}]}`,
			"products[0].size_chart[0]", "states no bound"},
		{"empty attribute name", `{"currency": "CNY", "products": [{"id": "p1", "name": "x", "price": 1, "attributes": {"": "v"}}]}`,
			"products[0].attributes", "attribute without a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range problemsOf(t, []byte(tt.data)) {
				if p.Path == tt.path && strings.Contains(p.Message, tt.msg) {
					return
				}
			}
			t.Errorf("no problem at %q containing %q; got %v", tt.path, tt.msg, problemsOf(t, []byte(tt.data)))
		})
	}
}
