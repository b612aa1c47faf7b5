package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

func catalog(t *testing.T) *sdk.CatalogResult {
	t.Helper()
	b, err := os.ReadFile("../catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func findProduct(t *testing.T, c *sdk.CatalogResult, id string) sdk.Product {
	for _, p := range c.Products {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no product %s", id)
	return sdk.Product{}
}

func TestLookupRequest(t *testing.T) {
	for in, want := range map[string]sdk.CatalogQuery{
		`{"id":" p-serum "}`:         {Kind: "product", ID: "p-serum"},
		`{"name":"面霜"}`:              {Kind: "product", Name: "面霜"},
		`{"query":"那个防晒多少钱", "x":1}`: {Kind: "product", Text: "那个防晒多少钱", Limit: 3},
	} {
		var r LookupRequest
		if err := r.DecodeJSON(jsonx.NewReader([]byte(in))); err != nil {
			t.Fatal(err)
		}
		q, err := r.CatalogQuery()
		if err != nil || q != want {
			t.Errorf("%s: %+v, %v; want %+v", in, q, err, want)
		}
	}
	var empty LookupRequest
	if _, err := empty.CatalogQuery(); err == nil {
		t.Error("an empty request was accepted")
	}
}

func TestLookupResponse(t *testing.T) {
	c := catalog(t)
	res := Lookup(&sdk.CatalogResult{Currency: "CNY", Products: []sdk.Product{findProduct(t, c, "p-serum"), findProduct(t, c, "p-sunscreen")}})
	if !res.Found || res.Products[0].DiscountPercent != 33 || res.Products[0].State != sdk.InStock || res.Products[1].State != sdk.SoldOut {
		t.Fatalf("%+v", res)
	}
	var back map[string]any
	if err := json.Unmarshal(res.AppendJSON(nil), &back); err != nil {
		t.Fatal(err)
	}
	if back["currency"] != "CNY" || len(back["products"].([]any)) != 2 {
		t.Fatalf("%v", back)
	}
	if none := Lookup(&sdk.CatalogResult{Currency: "CNY"}); none.Found || string(none.AppendJSON(nil)) != `{"found":false,"currency":"CNY","products":[]}` {
		t.Fatalf("%s", none.AppendJSON(nil))
	}
}

func TestLookupResponseNotStated(t *testing.T) {
	res := Lookup(&sdk.CatalogResult{Currency: "CNY", Products: []sdk.Product{{ID: "a", Link: 3, Name: "A", Price: 5}}})
	want := `{"found":true,"currency":"CNY","products":[{"id":"a","link":3,"name":"A","price":5,"list_price":0,"discount_percent":0,` +
		`"stock":"not stated","stock_state":"not stated","in_stock":"not stated","description":""}]}`
	if got := string(res.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStockNotStated(t *testing.T) {
	five := 5
	cases := []struct {
		name   string
		p      sdk.Product
		qty    int
		status string
		canBuy bool
		says   string
	}{
		{"nothing stated", sdk.Product{Name: "A"}, 1, "not_stated", false, "not stated"},
		{"state without a count", sdk.Product{Name: "A", StockState: sdk.InStock}, 50, "in_stock", true, "in stock"},
		{"presale", sdk.Product{Name: "A", StockState: sdk.Presale, PresaleShipDate: sdk.Date{Year: 2026, Month: 12, Day: 20}}, 1, "presale", true, "2026-12-20"},
		{"sold out with a restock date", sdk.Product{Name: "A", StockState: sdk.SoldOut, RestockDate: sdk.Date{Year: 2026, Month: 12, Day: 10}}, 1, "sold_out", false, "2026-12-10"},
		{"limit per buyer", sdk.Product{Name: "A", Stock: &five, LimitPerBuyer: 2}, 3, "low_stock", false, "at most 2 per buyer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Stock(c.p, c.qty)
			if r.Status != c.status || r.CanBuy != c.canBuy || !strings.Contains(r.Message, c.says) {
				t.Errorf("%+v", r)
			}
		})
	}
}

func TestStock(t *testing.T) {
	c := catalog(t)
	cases := []struct {
		id     string
		qty    int
		status string
		canBuy bool
	}{
		{"p-serum", 2, "in_stock", true},
		{"p-cream", 1, "low_stock", true},
		{"p-cream", 9, "low_stock", false},
		{"p-sunscreen", 1, "sold_out", false},
	}
	for _, k := range cases {
		r := Stock(findProduct(t, c, k.id), k.qty)
		if r.Status != k.status || r.CanBuy != k.canBuy || r.Message == "" {
			t.Errorf("%s x%d: %+v", k.id, k.qty, r)
		}
	}
}

func TestCoupons(t *testing.T) {
	c := catalog(t)
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	// A new viewer buying two creams (518): 10% off (51.8) beats both the
	// cream coupon (50) and the new-viewer coupon (20).
	r := Coupons(findProduct(t, c, "p-cream"), 2, 0, c.Coupons, now, "CNY")
	if r.Total != 518 || r.Best == nil || r.Best.ID != "c-all10" || r.Best.Discount != 51.8 || r.Pay != 466.2 {
		t.Fatalf("%+v best %+v", r, r.Best)
	}
	reasons := map[string]string{}
	for _, o := range r.Coupons {
		reasons[o.ID] = o.Reason
	}
	if reasons["c-gone"] != "no coupons left" || reasons["c-new20"] != "" {
		t.Fatalf("%v", reasons)
	}
	// A returning viewer buying one lipstick (89): nothing applies.
	r = Coupons(findProduct(t, c, "p-lipstick"), 1, 3, c.Coupons, now, "CNY")
	if r.Best != nil || r.Pay != 89 {
		t.Fatalf("%+v", r)
	}
	// The 10% coupon ends in 2030.
	r = Coupons(findProduct(t, c, "p-serum"), 1, 0, c.Coupons, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), "CNY")
	if r.Best == nil || r.Best.ID != "c-new20" || r.Pay != 179 {
		t.Fatalf("%+v", r)
	}
}
