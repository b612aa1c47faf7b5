package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// everyFieldPath is the example catalog that uses every field.
const everyFieldPath = "../../examples/catalogs/every-field.json"

// demoPath is the demo stream's catalog, in whichever version it is now.
const demoPath = "../../examples/plugins/catalog.json"

// demoV1Path is the demo stream's catalog as it was in version 1, kept so
// that the upgrade stays tested when the demo moves to version 2.
const demoV1Path = "testdata/v1-demo-catalog.json"

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustParse parses data and fails the test with every problem if any.
func mustParse(t testing.TB, data []byte) *Catalog {
	t.Helper()
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// problemsOf parses data, which must fail, and returns its problems.
func problemsOf(t *testing.T, data []byte) []Problem {
	t.Helper()
	_, err := Parse(data)
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v (%T), want *Problems", err, err)
	}
	return ps.List
}

// doc builds a version 2 document: a valid first product whose fields
// are extended by product (a JSON members fragment), more products,
// coupons and promotions as JSON list contents.
func doc(product, more, coupons, promotions string) []byte {
	p := `{"id": "p1", "name": "耳机", "price": 199` + product + `}`
	if more != "" {
		p += ", " + more
	}
	return []byte(fmt.Sprintf(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [%s], "coupons": [%s], "promotions": [%s]}`,
		p, coupons, promotions))
}

func TestParseExamples(t *testing.T) {
	t.Run("every-field", func(t *testing.T) {
		c := mustParse(t, readFile(t, everyFieldPath))
		if len(c.Products) != 5 {
			t.Fatalf("%d products, want 5", len(c.Products))
		}
		for i, p := range c.Products {
			if p.Link != i+1 {
				t.Errorf("products[%d] %s: link %d, want %d", i, p.ID, p.Link, i+1)
			}
		}
		nuts := c.Product("p-nuts")
		if nuts == nil || !reflect.DeepEqual(nuts.Allergens, []string{"peanut", "tree_nut"}) || nuts.Returns == nil || nuts.Returns.Accepted {
			t.Errorf("p-nuts = %+v, want allergens peanut and tree_nut and no returns", nuts)
		}
		cream := c.Product("p-cream")
		if cream == nil || cream.Allergens == nil || len(cream.Allergens) != 0 {
			t.Errorf("p-cream allergens = %#v, want stated as none (empty, not nil)", cream.Allergens)
		}
		flask := c.Product("p-flask")
		if flask == nil || StockStateOf(*flask) != SoldOut || flask.RestockDate != (Date{2026, time.December, 10}) {
			t.Errorf("p-flask = %+v, want sold out until 2026-12-10", flask)
		}
	})
	for _, path := range []string{demoPath, demoV1Path} {
		t.Run(path, func(t *testing.T) {
			c := mustParse(t, readFile(t, path))
			if len(c.Products) != 5 || len(c.Coupons) != 4 || len(c.Promotions) != 3 {
				t.Fatalf("demo catalog: %d products, %d coupons, %d promotions; want 5, 4, 3",
					len(c.Products), len(c.Coupons), len(c.Promotions))
			}
		})
	}
}

// edgeValues is a valid document of values whose JSON form could drift:
// offsets, fractional seconds, a negative zero, tiny and huge numbers,
// stated zeros and empty lists that must not turn into absent ones.
var edgeValues = doc(`, "stock": 0, "list_price": 1e300, "allergens": [], "aliases": [], "specs": [{"key": "a", "value": -0}, {"key": "b", "value": 1e-300}, {"key": "c", "value": false}], "shipping": {"fee": 0}`, "",
	`{"id": "c", "name": "券", "percent": 0.5, "remaining": 0, "products": [], "starts": "2026-12-01T20:00:00.123456789-03:30", "ends": "2026-12-01T23:59:59+00:00"}`,
	`{"id": "x", "title": "t", "kind": "price", "price": 1e-9, "products": ["p1"], "starts": "2026-12-01T00:00:00Z"}`)

func TestRoundTrip(t *testing.T) {
	inputs := map[string][]byte{"edge values": edgeValues}
	for _, path := range []string{everyFieldPath, demoPath, demoV1Path} {
		inputs[path] = readFile(t, path)
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			assertRoundTrip(t, mustParse(t, data))
		})
	}
	c := mustParse(t, edgeValues)
	p := c.Products[0]
	if p.Stock == nil || *p.Stock != 0 || p.Allergens == nil || p.Shipping.Fee == nil || c.Coupons[0].Remaining == nil {
		t.Errorf("stated zeros or an empty allergen list were lost: %+v, %+v", p, c.Coupons[0])
	}
	b, _ := json.Marshal(c)
	if !strings.Contains(string(b), `"allergens":[]`) {
		t.Errorf("allergens [] did not marshal as []: %s", b)
	}
}

// assertRoundTrip checks that c marshals to a document that parses back
// to an equal catalog.
func assertRoundTrip(t testing.TB, c *Catalog) {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Marshal(c)): %v\n%s", err, b)
	}
	if !reflect.DeepEqual(inUTC(c), inUTC(back)) {
		t.Fatalf("round trip changed the catalog:\nbefore %+v\nafter  %+v\n%s", c, back, b)
	}
	again, err := json.Marshal(back)
	if err != nil || string(again) != string(b) {
		t.Fatalf("second marshal differs (err %v):\n%s\n%s", err, b, again)
	}
}

// inUTC returns a copy of c whose times are in UTC: the same instants,
// comparable with reflect.DeepEqual (parsed offsets get fresh zones).
func inUTC(c *Catalog) Catalog {
	out := *c
	out.Coupons = append([]Coupon(nil), c.Coupons...)
	for i := range out.Coupons {
		out.Coupons[i].Starts, out.Coupons[i].Ends = utc(out.Coupons[i].Starts), utc(out.Coupons[i].Ends)
	}
	out.Promotions = append([]Promotion(nil), c.Promotions...)
	for i := range out.Promotions {
		out.Promotions[i].Starts, out.Promotions[i].Ends = utc(out.Promotions[i].Starts), utc(out.Promotions[i].Ends)
	}
	if c.Coupons == nil {
		out.Coupons = nil
	}
	if c.Promotions == nil {
		out.Promotions = nil
	}
	return out
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		path string
		msg  string // a part of the message
	}{
		{"unknown field", doc(`, "pirce": 1`, "", "", ""), "products[0].pirce", `unknown field "pirce"; did you mean "price"?`},
		{"unknown field without a near name", doc(`, "colourway": 1`, "", "", ""), "products[0].colourway", `unknown field "colourway"`},
		{"version 1 field in version 2", doc(`, "attributes": {}`, "", "", ""), "products[0].attributes", `version 2 calls it "specs"`},
		{"missing required field", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [{"id": "p1", "price": 1}]}`),
			"products[0].name", `required field "name" is missing`},
		{"missing currency", []byte(`{"schema": "livehat.catalog/2", "products": []}`), "currency", `required field "currency" is missing`},
		{"wrong type", doc(`, "stock": "12"`, "", "", ""), "products[0].stock", "is a string; want an integer"},
		{"currency not three capitals", []byte(`{"schema": "livehat.catalog/2", "currency": "rmb", "products": []}`), "currency", "three capital letters"},
		{"bad id", doc("", `{"id": "p 2", "name": "x", "price": 1}`, "", ""), "products[1].id", `"p 2" is not an id`},
		{"repeated id", doc("", `{"id": "p1", "name": "x", "price": 1}`, "", ""), "products[1].id", `id "p1" is already the id of products[0]`},
		{"repeated link", doc(`, "link": 1`, `{"id": "p2", "name": "x", "price": 1, "link": 1}`, "", ""), "products[1].link", "link 1 is already the link of products[0]"},
		{"link zero", doc(`, "link": 0`, "", "", ""), "products[0].link", "must be at least 1"},
		{"blank name", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [{"id": "p1", "name": "  ", "price": 1}]}`), "products[0].name", "is blank"},
		{"negative price", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [{"id": "p1", "name": "x", "price": -1}]}`),
			"products[0].price", "is -1; must not be negative"},
		{"negative stock", doc(`, "stock": -3`, "", "", ""), "products[0].stock", "must not be negative"},
		{"fractional stock", doc(`, "stock": 1.5`, "", "", ""), "products[0].stock", "want an integer"},
		{"stock with a decimal point", doc(`, "stock": 5.0`, "", "", ""), "products[0].stock", "write a whole number"},
		{"stock too large", doc(`, "stock": 1e30`, "", "", ""), "products[0].stock", "too large"},
		{"price too large", doc(`, "list_price": 1e400`, "", "", ""), "products[0].list_price", "too large"},
		{"list price below price", doc(`, "list_price": 99`, "", "", ""), "products[0].list_price", "list price 99 is below the price 199"},
		{"sold out with stock", doc(`, "stock": 5, "stock_state": "sold_out"`, "", "", ""), "products[0].stock_state", `is "sold_out" but stock is 5`},
		{"in stock with none", doc(`, "stock": 0, "stock_state": "in_stock"`, "", "", ""), "products[0].stock_state", `is "in_stock" but stock is 0`},
		{"unknown stock state", doc(`, "stock_state": "soldout"`, "", "", ""), "products[0].stock_state", `did you mean "sold_out"?`},
		{"presale date without presale", doc(`, "presale_ship_date": "2026-12-20"`, "", "", ""), "products[0].presale_ship_date", `stock_state is not "presale"`},
		{"invalid date", doc(`, "restock_date": "2026-02-30"`, "", "", ""), "products[0].restock_date", `"2026-02-30" is not a calendar date`},
		{"date with a time", doc(`, "best_before": "2026-12-01T00:00:00Z"`, "", "", ""), "products[0].best_before", "YYYY-MM-DD"},
		{"variant stock sum", doc(`, "stock": 10, "variants": [{"name": "M", "stock": 3}, {"name": "L", "stock": 4}]`, "", "", ""),
			"products[0].stock", "is 10 but the variants add up to 7"},
		{"variant stock sum on an axis", doc(`, "stock": 10, "variants": [{"name": "黑", "axis": "colour", "stock": 5}, {"name": "白", "axis": "colour", "stock": 6}, {"name": "M", "axis": "size"}]`, "", "", ""),
			"products[0].stock", `variants on axis "colour" add up to 11`},
		{"partial variant stock above the total", doc(`, "stock": 4, "variants": [{"name": "M", "stock": 5}, {"name": "L"}]`, "", "", ""),
			"products[0].stock", "already add up to 5"},
		{"variant stock on a sold-out product", doc(`, "stock_state": "sold_out", "variants": [{"name": "M", "stock": 2}]`, "", "", ""),
			"products[0].variants[0].stock", `product's stock_state is "sold_out"`},
		{"repeated variant", doc(`, "variants": [{"name": "M", "axis": "size"}, {"name": "M", "axis": "size"}]`, "", "", ""),
			"products[0].variants[1].name", `variant "M" repeats variants[0] on axis "size"`},
		{"repeated spec key", doc(`, "specs": [{"key": "k", "value": 1}, {"key": "k", "value": 2}]`, "", "", ""), "products[0].specs[1].key", `key "k" is already the key of specs[0]`},
		{"unit with text", doc(`, "specs": [{"key": "k", "value": "cotton", "unit": "g"}]`, "", "", ""), "products[0].specs[0].unit", `unit "g" goes only with a number value`},
		{"value_zh with number", doc(`, "specs": [{"key": "k", "value": 3, "value_zh": "三"}]`, "", "", ""), "products[0].specs[0].value_zh", "goes only with a text value"},
		{"spec value object", doc(`, "specs": [{"key": "k", "value": {"a": 1}}]`, "", "", ""), "products[0].specs[0].value", "is an object; want a boolean, a number or a string"},
		{"spec value null", doc(`, "specs": [{"key": "k", "value": null}]`, "", "", ""), "products[0].specs[0].value", "is null"},
		{"size row min above max", doc(`, "size_chart": [{"size": "M", "min_height_cm": 170, "max_height_cm": 160}]`, "", "", ""),
			"products[0].size_chart[0].min_height_cm", "170 is above max_height_cm 160"},
		{"size row weight min above max", doc(`, "size_chart": [{"size": "M", "min_weight_kg": 70, "max_weight_kg": 60}]`, "", "", ""),
			"products[0].size_chart[0].min_weight_kg", "70 is above max_weight_kg 60"},
		{"size row without a bound", doc(`, "size_chart": [{"size": "M"}]`, "", "", ""), "products[0].size_chart[0]", "states no bound"},
		{"size bound zero", doc(`, "size_chart": [{"size": "M", "min_height_cm": 0}]`, "", "", ""), "products[0].size_chart[0].min_height_cm", "must be above 0"},
		{"repeated size", doc(`, "size_chart": [{"size": "M", "min_height_cm": 150}, {"size": "M", "min_height_cm": 160}]`, "", "", ""),
			"products[0].size_chart[1].size", `size "M" already has size_chart[0]`},
		{"negative fee", doc(`, "shipping": {"fee": -5}`, "", "", ""), "products[0].shipping.fee", "must not be negative"},
		{"returns days when not accepted", doc(`, "returns": {"accepted": false, "days": 7}`, "", "", ""), "products[0].returns.days", "returns are not accepted"},
		{"returns without accepted", doc(`, "returns": {"days": 7}`, "", "", ""), "products[0].returns.accepted", `required field "accepted" is missing`},
		{"coupon for a missing product", doc("", "", `{"id": "c1", "name": "券", "amount": 10, "products": ["p2"]}`, ""),
			"coupons[0].products[0]", `names product "p2", which the catalog does not have; did you mean "p1"?`},
		{"coupon lists a product twice", doc("", "", `{"id": "c1", "name": "券", "amount": 10, "products": ["p1", "p1"]}`, ""),
			"coupons[0].products[1]", "repeats item 0"},
		{"coupon amount and percent", doc("", "", `{"id": "c1", "name": "券", "amount": 10, "percent": 10}`, ""), "coupons[0].percent", "not both"},
		{"coupon neither amount nor percent", doc("", "", `{"id": "c1", "name": "券", "min_spend": 99}`, ""), "coupons[0]", "needs amount"},
		{"coupon negative amount", doc("", "", `{"id": "c1", "name": "券", "amount": -10}`, ""), "coupons[0].amount", "must be above 0"},
		{"coupon percent out of range", doc("", "", `{"id": "c1", "name": "券", "percent": 120}`, ""), "coupons[0].percent", "is 120; must be below 100"},
		{"coupon starts after ends", doc("", "", `{"id": "c1", "name": "券", "amount": 5, "starts": "2026-12-02T00:00:00+08:00", "ends": "2026-12-01T00:00:00+08:00"}`, ""),
			"coupons[0].starts", "is not before ends"},
		{"coupon invalid time", doc("", "", `{"id": "c1", "name": "券", "amount": 5, "starts": "2026-12-01 20:00"}`, ""), "coupons[0].starts", "is not an RFC 3339 time"},
		{"repeated coupon id", doc("", "", `{"id": "c1", "name": "券", "amount": 5}, {"id": "c1", "name": "券2", "amount": 6}`, ""), "coupons[1].id", `id "c1" is already the id of coupons[0]`},
		{"promotion for a missing product", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "price": 99, "products": ["p9"]}`),
			"promotions[0].products[0]", `names product "p9"`},
		{"promotion without products", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "price": 99, "products": []}`), "promotions[0].products", "is empty"},
		{"promotion percent zero", doc("", "", "", `{"id": "x", "title": "t", "kind": "percent", "percent": 0, "products": ["p1"]}`), "promotions[0].percent", "must be above 0"},
		{"promotion unknown kind", doc("", "", "", `{"id": "x", "title": "t", "kind": "flash", "price": 99, "products": ["p1"]}`), "promotions[0].kind", `"flash" is not one of`},
		{"price promotion without price", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "products": ["p1"]}`), "promotions[0].price", `kind "price" needs price`},
		{"price promotion with percent", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "price": 99, "percent": 10, "products": ["p1"]}`),
			"promotions[0].percent", `does not go with kind "price"`},
		{"percent promotion without percent", doc("", "", "", `{"id": "x", "title": "t", "kind": "percent", "products": ["p1"]}`), "promotions[0].percent", `kind "percent" needs percent`},
		{"multi-buy without quantity", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "nth_percent": 50, "products": ["p1"]}`), "promotions[0].quantity", `kind "multi_buy" needs quantity`},
		{"multi-buy quantity one", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 1, "nth_percent": 50, "products": ["p1"]}`), "promotions[0].quantity", "must be at least 2"},
		{"multi-buy without a deal", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 2, "products": ["p1"]}`), "promotions[0]", "needs one of price, percent, nth_percent"},
		{"multi-buy with two deals", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 2, "price": 150, "nth_percent": 50, "products": ["p1"]}`),
			"promotions[0].nth_percent", "not price and nth_percent together"},
		{"multi-buy nth percent above 100", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 2, "nth_percent": 150, "products": ["p1"]}`),
			"promotions[0].nth_percent", "must be at most 100"},
		{"multi-buy with min spend", doc("", "", "", `{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 2, "nth_percent": 50, "min_spend": 100, "products": ["p1"]}`),
			"promotions[0].min_spend", `does not go with kind "multi_buy"`},
		{"bundle of one product", doc("", "", "", `{"id": "x", "title": "t", "kind": "bundle", "price": 300, "products": ["p1"]}`), "promotions[0].products", "a bundle needs two or more products"},
		{"bundle without price", doc("", `{"id": "p2", "name": "x", "price": 1}`, "", `{"id": "x", "title": "t", "kind": "bundle", "products": ["p1", "p2"]}`),
			"promotions[0].price", `kind "bundle" needs price`},
		{"gift without gift", doc("", "", "", `{"id": "x", "title": "t", "kind": "gift", "min_spend": 199, "products": ["p1"]}`), "promotions[0].gift", `kind "gift" needs gift`},
		{"gift with quantity", doc("", "", "", `{"id": "x", "title": "t", "kind": "gift", "gift": "袋子", "quantity": 2, "products": ["p1"]}`), "promotions[0].quantity", `does not go with kind "gift"`},
		{"promotion starts after ends", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "price": 99, "products": ["p1"], "starts": "2026-12-02T00:00:00Z", "ends": "2026-12-02T00:00:00Z"}`),
			"promotions[0].starts", "is not before ends"},
		{"repeated promotion id", doc("", "", "", `{"id": "x", "title": "t", "kind": "price", "price": 99, "products": ["p1"]}, {"id": "x", "title": "u", "kind": "price", "price": 98, "products": ["p1"]}`),
			"promotions[1].id", `id "x" is already the id of promotions[0]`},
		{"repeated key", doc(`, "price": 200`, "", "", ""), "products[0].price", `field "price" appears twice`},
		{"unknown version", []byte(`{"schema": "livehat.catalog/3", "currency": "CNY", "products": []}`), "schema", `unknown version "livehat.catalog/3"`},
		{"version not a string", []byte(`{"schema": 2, "currency": "CNY", "products": []}`), "schema", "is a number"},
		{"not an object", []byte(`[1, 2]`), "", "a catalog is a JSON object, not a list"},
		{"empty document", []byte("  \n"), "", "the document is empty"},
		{"syntax error", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY",, "products": []}`), "", "invalid JSON"},
		{"cut short", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [`), "", "ends before"},
		{"trailing data", []byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": []} {}`), "", "unexpected data after"},
		{"too deep", []byte(`{"schema": "livehat.catalog/2", "stream": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`), "", "nest deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := problemsOf(t, tt.data)
			for _, p := range list {
				if p.Path == tt.path && strings.Contains(p.Message, tt.msg) {
					if p.Line <= 0 || p.Column <= 0 {
						t.Errorf("problem %v has no place in the document", p)
					}
					return
				}
			}
			t.Errorf("no problem at %q containing %q; got:\n%v", tt.path, tt.msg, (&Problems{List: list}).Error())
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	data := []byte(`{"schema": "livehat.catalog/2", "currency": "cny", "products": [
  {"id": "p1", "name": "耳机", "price": 199, "list_price": 99, "stokc": 3},
  {"id": "p1", "name": "T恤", "price": 89, "size_chart": [{"size": "XXL"}]}
], "coupons": [
  {"id": "c1", "name": "券", "amount": 10, "percent": 10, "products": ["p1"]}
], "promotions": [
  {"id": "x", "title": "第二件半价", "kind": "multi_buy", "quantity": 2, "products": ["p1"]}
]}`)
	want := []string{
		"currency",
		"products[0].list_price",
		"products[0].stokc",
		"products[1].id",
		"products[1].size_chart[0]",
		"coupons[0].percent",
		"promotions[0]",
	}
	var got []string
	for _, p := range problemsOf(t, data) {
		got = append(got, p.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems at %q,\nwant %q", got, want)
	}
}

func TestProblemPlace(t *testing.T) {
	multiline := "{\n" +
		`  "schema": "livehat.catalog/2", "currency": "CNY",` + "\n" +
		`  "products": [{"id": "p1", "name": "降噪耳机", "pirce": 1}]` + "\n" +
		"}"
	tests := []struct {
		name, data, path string
		line, column     int
	}{
		// The unknown key itself; the column counts "降噪耳机" with its
		// quotes as six characters, not fourteen bytes.
		{"unknown key", multiline, "products[0].pirce", 3, 45},
		// A missing field is placed at the object that lacks it.
		{"missing field", multiline, "products[0].price", 3, 16},
		{"second comma", `{"a": 1,, }`, "", 1, 9},
		{"bad literal", `{"a": tru}`, "", 1, 10},
		{"control character in a string", "{\"a\": \"\x01\"}", "", 1, 8},
		{"bracket closed by a brace", "{\n  \"products\": [}", "", 2, 16},
		{"trailing value", `[1] 2`, "", 1, 5},
		{"cut short", `{"a": `, "", 1, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := problemsOf(t, []byte(tt.data))
			for _, p := range list {
				if p.Path == tt.path {
					if p.Line != tt.line || p.Column != tt.column {
						t.Errorf("%v: want line %d, column %d", p, tt.line, tt.column)
					}
					return
				}
			}
			t.Errorf("no problem at %q in %v", tt.path, list)
		})
	}
}

func TestProblemsCap(t *testing.T) {
	var products []string
	for i := range MaxProblems + 30 {
		products = append(products, fmt.Sprintf(`{"id": "p%d", "name": "x", "price": -1}`, i))
	}
	_, err := Parse([]byte(`{"schema": "livehat.catalog/2", "currency": "CNY", "products": [` + strings.Join(products, ",") + `]}`))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want *Problems", err)
	}
	if len(ps.List) != MaxProblems || ps.Omitted != 30 {
		t.Errorf("%d listed and %d omitted, want %d and 30", len(ps.List), ps.Omitted, MaxProblems)
	}
	if msg := ps.Error(); !strings.Contains(msg, fmt.Sprintf("catalog: %d problems:", MaxProblems+30)) || !strings.HasSuffix(msg, "and 30 more") {
		t.Errorf("Error() = ...%s, want the total and the count left out", msg[max(0, len(msg)-80):])
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "products[0].price", Line: 3, Column: 5, Message: "is -1"}, "products[0].price (line 3, column 5): is -1"},
		{Problem{Line: 1, Column: 2, Message: "invalid JSON"}, "(line 1, column 2): invalid JSON"},
		{Problem{Path: "currency", Message: "is empty"}, "currency: is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
	one := &Problems{List: []Problem{tests[0].p}}
	if got, want := one.Error(), "catalog: "+tests[0].want; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestSuggest(t *testing.T) {
	fields := []string{"id", "name", "price", "list_price", "stock", "stock_state", "restock_date"}
	tests := []struct{ name, want string }{
		{"pirce", "price"},
		{"Price", "price"},
		{"listPrice", "list_price"},
		{"stok", "stock"},
		{"stock-state", "stock_state"},
		{"restock_dat", "restock_date"},
		{"x", ""},
		{"colour", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := suggest(tt.name, fields); got != tt.want {
				t.Errorf("suggest(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
