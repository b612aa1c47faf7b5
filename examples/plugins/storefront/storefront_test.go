package main

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/sdk"
)

// testCatalog has an item with variants, a size chart and shipping, one
// without, and a coupon limited to the first with a minimum spend.
const testCatalog = `{"stream": "t", "currency": "CNY",
 "products": [
  {"id": "AP101", "name": "云朵卫衣", "aliases": ["Cloud Hoodie", "1号链接"], "price": 179.1, "list_price": 199, "stock": 12,
   "variants": [{"name": "S", "stock": 0}, {"name": "M", "stock": 12}],
   "size_chart": [{"size": "S", "min_height_cm": 150, "max_height_cm": 160, "min_weight_kg": 40, "max_weight_kg": 50}],
   "shipping": {"days": 2, "fee": 0, "return_days": 7}},
  {"id": "FO102", "name": "每日坚果", "aliases": ["Nut Mix"], "price": 59, "stock": 300}
 ],
 "coupons": [{"id": "C1", "name": "满300减20", "amount": 20, "min_spend": 300, "products": ["AP101"], "remaining": 10}]}`

// lookup answers catalog queries the way the host's catalog does, over
// the test catalog: by id, by exact name or alias (case-insensitive), or
// by names mentioned in text.
func lookup(t *testing.T) Lookup {
	t.Helper()
	cat, err := sdk.DecodeCatalogResult([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	return func(q sdk.CatalogQuery) (*sdk.CatalogResult, error) {
		out := &sdk.CatalogResult{Stream: cat.Stream, Currency: cat.Currency}
		if q.Kind == "coupons" {
			out.Coupons = cat.Coupons
			return out, nil
		}
		for _, p := range cat.Products {
			match := false
			for _, n := range p.Names() {
				switch {
				case q.ID != "":
					match = p.ID == q.ID
				case q.Name != "":
					match = match || strings.EqualFold(n, q.Name)
				case q.Text != "":
					match = match || strings.Contains(strings.ToLower(q.Text), strings.ToLower(n))
				}
			}
			if match {
				out.Products = append(out.Products, p)
			}
		}
		return out, nil
	}
}

func TestProductLookup(t *testing.T) {
	l := lookup(t)
	for _, q := range []string{"AP101", "cloud hoodie", "1号链接", "is the 云朵卫衣 warm?"} {
		out, err := ProductLookup(l, LookupRequest{Query: q})
		if err != nil || out["found"] != true || out["item_id"] != "AP101" {
			t.Errorf("%q: %v, %v", q, out, err)
		}
	}
	out, _ := ProductLookup(l, LookupRequest{Query: "AP101"})
	if out["price"] != "179.10" || out["list_price"] != "199" || out["promotion"] != "10% off during the live stream" {
		t.Errorf("prices: %v", out)
	}
	if chart, ok := out["size_chart"].([]map[string]any); !ok || chart[0]["size"] != "S" {
		t.Errorf("size chart: %v", out["size_chart"])
	}
	if out, _ := ProductLookup(l, LookupRequest{Query: "teapot"}); out["found"] != false {
		t.Errorf("unknown item: %v", out)
	}
	if _, err := ProductLookup(l, LookupRequest{Query: " "}); err == nil {
		t.Error("empty query accepted")
	}
}

func TestStockCouponShippingLink(t *testing.T) {
	l := lookup(t)
	st, err := CheckStock(l, ItemRequest{ItemID: "AP101", Variant: "s"})
	if err != nil || st["stock"].(map[string]int)["S"] != 0 {
		t.Errorf("variant stock: %v %v", st, err)
	}
	if st, _ := CheckStock(l, ItemRequest{ItemID: "FO102"}); st["stock"].(map[string]int)["standard"] != 300 {
		t.Errorf("item without variants: %v", st)
	}
	if _, err := CheckStock(l, ItemRequest{ItemID: "AP101", Variant: "XL"}); err == nil {
		t.Error("unknown variant accepted")
	}
	c, err := CouponCheck(l, ItemRequest{ItemID: "AP101"})
	if err != nil || c["eligible"] != false || c["missing_spend"] != "120.90" {
		t.Errorf("one hoodie is below the minimum spend: %v %v", c, err)
	}
	c, _ = CouponCheck(l, ItemRequest{ItemID: "AP101", Quantity: 2})
	if c["eligible"] != true || c["total_after_coupon"] != "338.20" {
		t.Errorf("two hoodies reach it: %v", c)
	}
	if c, _ := CouponCheck(l, ItemRequest{ItemID: "FO102"}); c["coupon"] != nil || c["eligible"] != false {
		t.Errorf("no coupon for nuts: %v", c)
	}
	if _, err := CouponCheck(l, ItemRequest{ItemID: "AP101", Quantity: 100}); err == nil {
		t.Error("quantity 100 accepted")
	}
	sh, err := ShippingPolicy(l, ItemRequest{ItemID: "AP101"})
	if err != nil || sh["ships_within_days"] != 2 || sh["free_shipping"] != true || sh["return_days"] != 7 {
		t.Errorf("shipping: %v %v", sh, err)
	}
	if _, err := ShippingPolicy(l, ItemRequest{ItemID: "FO102"}); err == nil {
		t.Error("an item without a policy got one")
	}
	if out, err := SendLink(l, ItemRequest{ItemID: "AP101"}); err != nil || out["pinned"] != true {
		t.Errorf("send_link: %v %v", out, err)
	}
	if _, err := SendLink(l, ItemRequest{ItemID: "nope"}); err == nil || !strings.Contains(err.Error(), `no item with id "nope"`) {
		t.Errorf("unknown item: %v", err)
	}
}
