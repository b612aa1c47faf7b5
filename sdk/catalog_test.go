package sdk

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// everyField is the example catalog that states every field of the
// layout; the host answers lookups in this layout.
const everyField = "../examples/catalogs/every-field.json"

func readEveryField(t *testing.T) ([]byte, *CatalogResult) {
	t.Helper()
	b, err := os.ReadFile(everyField)
	if err != nil {
		t.Fatal(err)
	}
	res, err := DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, res
}

// TestDecodeCarriesEveryField re-encodes the every-field catalog and
// compares it with the file as plain JSON: a field the decoder dropped,
// or a value it changed, shows as a difference.
func TestDecodeCarriesEveryField(t *testing.T) {
	b, res := readEveryField(t)
	var want, got any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.AppendJSON(nil), &got); err != nil {
		t.Fatalf("re-encoded JSON is invalid: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("re-encoded catalog differs from %s:\n%s\nwant:\n%s", everyField, g, w)
	}
}

func TestDecodeEveryFieldValues(t *testing.T) {
	_, res := readEveryField(t)
	product := func(id string) Product {
		t.Helper()
		for _, p := range res.Products {
			if p.ID == id {
				return p
			}
		}
		t.Fatalf("no product %s", id)
		return Product{}
	}
	earbuds, tee, cream, flask, nuts := product("p-earbuds"), product("p-tee"), product("p-cream"), product("p-flask"), product("p-nuts")
	cases := []struct {
		name string
		ok   bool
	}{
		{"stream and currency", res.Stream == "merchant-42-双12专场" && res.Currency == "CNY"},
		{"link", earbuds.Link == 1 && nuts.Link == 5},
		{"stated stock", earbuds.Stock != nil && *earbuds.Stock == 120},
		{"stated zero stock", flask.Stock != nil && *flask.Stock == 0 && flask.State() == SoldOut},
		{"derived low stock", cream.State() == LowStock},
		{"stated state", nuts.StockState == Presale && nuts.PresaleShipDate == Date{2026, time.December, 20}},
		{"restock date", flask.RestockDate.String() == "2026-12-10"},
		{"limit per buyer", earbuds.LimitPerBuyer == 2},
		{"variant own price", earbuds.Variants[1].Price != nil && *earbuds.Variants[1].Price == 209 && earbuds.Variants[0].Price == nil},
		{"variant axis and stock", tee.Variants[2].Axis == "colour" && *tee.Variants[2].Stock == 8 && tee.Variants[2].StockState == LowStock},
		{"variant without stock", tee.Variants[3].Name == "M" && tee.Variants[3].Stock == nil && tee.Variants[3].State() == ""},
		{"variant restock", flask.Variants[1].RestockDate.String() == "2026-12-18"},
		{"number spec with unit", earbuds.Specs[0].Value == SpecValue{Kind: SpecNumber, Number: 30} && earbuds.Specs[0].Unit == "h" && earbuds.Specs[0].LabelZh == "总续航"},
		{"yes/no spec", earbuds.Specs[1].Value == SpecValue{Kind: SpecBool, Bool: true}},
		{"text spec that looks like a number", earbuds.Specs[2].Value == SpecValue{Kind: SpecText, Text: "5.3"}},
		{"text spec in Chinese", tee.Specs[0].ValueZh == "纯棉" && tee.Specs[0].Value.String() == "cotton"},
		{"ingredients", len(cream.Ingredients) == 5 && cream.Ingredients[2] == "神经酰胺NP"},
		{"no allergens stated as none", cream.Allergens != nil && len(cream.Allergens) == 0},
		{"allergens not stated", earbuds.Allergens == nil},
		{"allergens", strings.Join(nuts.Allergens, ",") == "peanut,tree_nut"},
		{"shelf life and best before", cream.ShelfLifeDays == 1095 && cream.BestBefore.String() == "2029-03-31"},
		{"certifications", strings.Join(earbuds.Certifications, ",") == "CCC,SRRC"},
		{"open size row", tee.SizeChart[3] == SizeRow{Size: "XXL", MinHeightCM: 185, MinWeightKG: 80}},
		{"open row fits a tall body", tee.SizeChart[3].Fits(192, 0) && !tee.SizeChart[3].Fits(180, 0)},
		{"free shipping stated", earbuds.Shipping.Fee != nil && *earbuds.Shipping.Fee == 0},
		{"shipping", earbuds.Shipping.ShipFrom == "广东深圳" && earbuds.Shipping.DispatchHours == 48 && earbuds.Shipping.Carrier == "顺丰" && len(earbuds.Shipping.ExcludedRegions) == 2},
		{"fee", *flask.Shipping.Fee == 6},
		{"returns", earbuds.Returns.Accepted && earbuds.Returns.Days == 7 && earbuds.Returns.NoReason && earbuds.Returns.ShippingInsurance},
		{"conditional returns", cream.Returns.Accepted && !cream.Returns.NoReason && cream.Returns.Conditions[0] == "未拆封可退，拆封后不支持退换"},
		{"no returns", !nuts.Returns.Accepted && len(nuts.Returns.Conditions) == 1},
		{"percent coupon", res.Coupons[0].Percent == 10 && res.Coupons[0].PerBuyer == 1 && *res.Coupons[0].Remaining == 200},
		{"remaining not stated", res.Coupons[1].Remaining == nil && res.Coupons[1].Amount == 20 && res.Coupons[1].MinSpend == 199},
		{"all claimed", *res.Coupons[3].Remaining == 0 && !res.Coupons[3].Running(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))},
		{"new viewers", res.Coupons[2].NewViewersOnly},
		{"coupon window", res.Coupons[0].Running(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)) && !res.Coupons[0].Running(time.Date(2026, 12, 13, 0, 0, 0, 0, time.UTC))},
		{"multi-buy nth", res.Promotions[0].Kind == PromoMultiBuy && res.Promotions[0].Quantity == 2 && res.Promotions[0].NthPercent == 50},
		{"multi-buy price", res.Promotions[1].Quantity == 3 && res.Promotions[1].Price == 199},
		{"price promotion", res.Promotions[2].Kind == PromoPrice && res.Promotions[2].Price == 229 && !res.Promotions[2].Ends.IsZero()},
		{"percent promotion", res.Promotions[3].Kind == PromoPercent && res.Promotions[3].Percent == 15 && res.Promotions[3].MinSpend == 300},
		{"bundle", res.Promotions[4].Kind == PromoBundle && len(res.Promotions[4].Products) == 2},
		{"gift", res.Promotions[5].Kind == PromoGift && res.Promotions[5].Gift == "耳机收纳袋" && res.Promotions[5].Text != ""},
		{"promotion without an end runs", res.Promotions[0].Running(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Error("not as the catalog states it")
			}
		})
	}
}

// TestDecodeKeepsNotStatedApart checks that absent, null and zero stay
// three different answers where the layout makes them so.
func TestDecodeKeepsNotStatedApart(t *testing.T) {
	b := []byte(`{"schema":"livehat.catalog/2","stream":"s","currency":"CNY","products":[
	 {"id":"a","name":"A","price":1},
	 {"id":"b","name":"B","price":1,"stock":0,"allergens":[],"shipping":{"fee":0},"variants":[{"name":"x","stock":null,"price":0}]},
	 {"id":"c","name":"C","price":1,"stock":null,"allergens":null,"shipping":null,"returns":{"accepted":false}}],
	 "coupons":[{"id":"k","name":"K","amount":5},{"id":"z","name":"Z","amount":5,"remaining":0}]}`)
	res, err := DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	a, bb, c := res.Products[0], res.Products[1], res.Products[2]
	cases := []struct {
		name string
		ok   bool
	}{
		{"absent stock", a.Stock == nil && a.State() == ""},
		{"zero stock", bb.Stock != nil && *bb.Stock == 0},
		{"null stock", c.Stock == nil},
		{"absent allergens", a.Allergens == nil},
		{"empty allergens", bb.Allergens != nil && len(bb.Allergens) == 0},
		{"null allergens", c.Allergens == nil},
		{"absent shipping", a.Shipping == nil && c.Shipping == nil},
		{"free shipping", bb.Shipping != nil && bb.Shipping.Fee != nil && *bb.Shipping.Fee == 0 && bb.Shipping.DispatchHours == 0},
		{"variant stock null, price zero", bb.Variants[0].Stock == nil && bb.Variants[0].Price != nil && *bb.Variants[0].Price == 0},
		{"no returns", c.Returns != nil && !c.Returns.Accepted && a.Returns == nil},
		{"remaining absent", res.Coupons[0].Remaining == nil && res.Coupons[0].Running(time.Now())},
		{"remaining zero", res.Coupons[1].Remaining != nil && !res.Coupons[1].Running(time.Now())},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Error("not told apart")
			}
		})
	}
}

func TestDecodeCatalogResultErrors(t *testing.T) {
	cases := []struct {
		name, json, says string
	}{
		{"other layout", `{"schema":"livehat.catalog/3","products":[]}`, `catalog layout "livehat.catalog/3"`},
		{"string stock", `{"products":[{"id":"p1","name":"A","price":1,"stock":"5"}]}`, "product p1: stock:"},
		{"fractional link", `{"products":[{"id":"p1","link":1.5}]}`, "link:"},
		{"bad date", `{"products":[{"id":"p1","restock_date":"2026-02-30"}]}`, `restock_date: date "2026-02-30"`},
		{"bad stock state", `{"products":[{"id":"p1","stock_state":"plenty"}]}`, `unknown stock state "plenty"`},
		{"spec value object", `{"products":[{"id":"p1","specs":[{"key":"k","value":{}}]}]}`, "specs: value:"},
		{"variant price string", `{"products":[{"id":"p1","variants":[{"name":"x","price":"1"}]}]}`, "variants: price:"},
		{"coupon time", `{"coupons":[{"id":"c1","ends":"tomorrow"}]}`, "coupon c1: ends:"},
		{"promotion quantity", `{"promotions":[{"id":"x","quantity":"2"}]}`, "promotion x: quantity:"},
		{"trailing data", `{} {}`, "after the value"},
		{"not an object", `[1]`, "catalog result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCatalogResult([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %v, want one that says %q", err, c.says)
			}
		})
	}
}

func TestCatalogQueryJSON(t *testing.T) {
	cases := []struct {
		q    CatalogQuery
		want string
	}{
		{CatalogQuery{Kind: "product", ID: "p1"}, `{"schema":"livehat.catalog/2","kind":"product","id":"p1"}`},
		{CatalogQuery{Kind: "product", Link: 3}, `{"schema":"livehat.catalog/2","kind":"product","link":3}`},
		{CatalogQuery{Kind: "product", Name: "面霜", Text: "x", Limit: 2}, `{"schema":"livehat.catalog/2","kind":"product","name":"面霜","text":"x","limit":2}`},
		{CatalogQuery{Kind: "coupons"}, `{"schema":"livehat.catalog/2","kind":"coupons"}`},
		{CatalogQuery{Kind: "product", Text: "面霜", NamesOnly: true}, `{"schema":"livehat.catalog/2","kind":"product","text":"面霜","names_only":true}`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := string(c.q.AppendJSON(nil)); got != c.want {
				t.Errorf("got %s", got)
			}
		})
	}
}

// FuzzDecodeCatalogResult: any bytes decode or fail cleanly, and what
// decodes re-encodes to JSON that decodes to the same encoding.
func FuzzDecodeCatalogResult(f *testing.F) {
	if b, err := os.ReadFile(everyField); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"products":[{"id":"a","stock":null,"allergens":[],"specs":[{"key":"k","value":1.5,"unit":"h"},{"key":"b","value":false}]}]}`))
	f.Add([]byte(`{"coupons":[{"id":"c","percent":10,"remaining":0,"starts":"2026-01-01T00:00:00+08:00"}],"promotions":[{"kind":"gift","gift":"g"}]}`))
	f.Add([]byte(`{"products":[{"variants":[{"name":"x","price":0,"restock_date":"2026-12-01"}],"returns":{"accepted":true,"days":7}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := DecodeCatalogResult(b)
		if err != nil {
			return
		}
		enc := res.AppendJSON(nil)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON %s", enc)
		}
		again, err := DecodeCatalogResult(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if !bytes.Equal(again.AppendJSON(nil), enc) {
			t.Fatalf("unstable: %s vs %s", again.AppendJSON(nil), enc)
		}
	})
}
