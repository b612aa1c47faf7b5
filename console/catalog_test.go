package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
)

const goodCSV = "\xef\xbb\xbf商品ID,名称,aliases,price,list_price,stock,variants,size_chart,attributes,shipping_days,shipping_fee,return_days\n" +
	"p-hoodie,加绒卫衣,卫衣|hoodie,¥159,199,,M:0|L:30,M:155-168:45-60|L:165-178:58-75,material=cotton,2,0,7\n" +
	"p-serum,\"玻尿酸精华, 30ml\",精华|serum,199.00,299,120,,,volume=30ml|skin=all,,,\n"

func importPath(e *testEnv, rev any, extra string) string {
	return fmt.Sprintf("/api/streams/%s/catalog?revision=%v%s", e.demoStream, rev, extra)
}

// catalogProblemsOf lists a 422 answer's problems as "row/column: message".
func catalogProblemsOf(body map[string]any) []string {
	var got []string
	list, _ := body["problems"].([]any)
	for _, p := range list {
		m := p.(map[string]any)
		row := ""
		if r, ok := m["row"].(float64); ok {
			row = fmt.Sprint(r)
		}
		col, _ := m["column"].(string)
		got = append(got, fmt.Sprintf("%s/%s: %v", row, col, m["message"]))
	}
	return got
}

func storedCatalogOf(t *testing.T, e *testEnv) *catalog.Catalog {
	t.Helper()
	code, got, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog", "", "")
	if code != 200 {
		t.Fatalf("catalog: %d %s", code, raw)
	}
	b, _ := json.Marshal(got["catalog"])
	cat, err := catalog.Parse(b)
	if err != nil {
		t.Fatalf("the served catalog is not a valid document: %v\n%s", err, b)
	}
	return cat
}

func TestCatalogImportCSV(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	rev := st["revision"]

	code, dry, raw := e.call(t, e.merchant, "POST", importPath(e, rev, "&dry_run=true"), "text/csv", goodCSV)
	if code != 200 || dry["products"] != float64(2) || dry["dry_run"] != true || dry["revision"] != rev {
		t.Fatalf("dry run: %d %s", code, raw)
	}
	// The demo's coupons and promotions stay; those naming only dropped
	// items are dropped, and said so.
	if w := fmt.Sprint(dry["warnings"]); !strings.Contains(w, "coupon c-cream50 is dropped") || !strings.Contains(w, "promotion lipstick-week is dropped") {
		t.Errorf("warnings = %v", w)
	}
	code, res, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "text/csv", goodCSV)
	if code != 200 || res["revision"] != rev.(float64)+1 || res["coupons"] != float64(3) || res["promotions"] != float64(1) {
		t.Fatalf("import: %d %s", code, raw)
	}
	cat := storedCatalogOf(t, e)
	hoodie, serum := cat.Products[0], cat.Products[1]
	cases := []struct {
		name string
		ok   bool
	}{
		{"ids and prices", hoodie.ID == "p-hoodie" && hoodie.Price == 159 && hoodie.ListPrice == 199},
		{"blank stock is the variants' sum", hoodie.Stock != nil && *hoodie.Stock == 30},
		{"size chart", len(hoodie.SizeChart) == 2 && hoodie.SizeChart[1] == catalog.SizeRow{Size: "L", MinHeightCM: 165, MaxHeightCM: 178, MinWeightKG: 58, MaxWeightKG: 75}},
		{"version 1 shipping columns", hoodie.Shipping.DispatchHours == 48 && *hoodie.Shipping.Fee == 0},
		{"version 1 return days", reflect.DeepEqual(*hoodie.Returns, catalog.Returns{Accepted: true, Days: 7, NoReason: true})},
		{"attributes are text specs", hoodie.Specs[0].Key == "material" && hoodie.Specs[0].Value == catalog.TextValue("cotton")},
		{"aliases", strings.Join(hoodie.Aliases, "|") == "卫衣|hoodie"},
		{"quoted name", serum.Name == "玻尿酸精华, 30ml"},
		{"nothing stated about delivery", serum.Shipping == nil && serum.Returns == nil},
		{"currency", cat.Currency == "CNY"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("hoodie %+v\nserum %+v", hoodie, serum)
			}
		})
	}

	// The export imports again unchanged.
	code, _, csv := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog?format=csv", "", "")
	if code != 200 {
		t.Fatalf("export: %d", code)
	}
	again, _, probs := importCatalogCSV(csv, cat)
	if len(probs) > 0 || !reflect.DeepEqual(again.Products, cat.Products) {
		t.Errorf("export does not read back: %v\n%+v\n%+v", probs, again, cat.Products)
	}

	// A stale revision is a conflict, and nothing changes.
	code, body, _ := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "text/csv", goodCSV)
	if code != 409 {
		t.Errorf("stale import: %d %v", code, body)
	}
}

// TestCatalogCSVCarriesEveryField exports the every-field catalog as CSV
// and imports it again: every fact a product states survives.
func TestCatalogCSVCarriesEveryField(t *testing.T) {
	b, err := os.ReadFile("../examples/catalogs/every-field.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := writeCatalogCSV(&csv, cat.Products); err != nil {
		t.Fatal(err)
	}
	again, _, probs := importCatalogCSV(csv.Bytes(), cat)
	if len(probs) > 0 {
		t.Fatalf("the export does not import: %v\n%s", probs, csv.String())
	}
	for i := range cat.Products {
		if !reflect.DeepEqual(again.Products[i], cat.Products[i]) {
			t.Errorf("product %s:\n got  %+v\n want %+v", cat.Products[i].ID, again.Products[i], cat.Products[i])
		}
	}
	if !reflect.DeepEqual(again.Coupons, cat.Coupons) || !reflect.DeepEqual(again.Promotions, cat.Promotions) {
		t.Error("a CSV import changed the coupons or promotions")
	}
}

// TestCatalogCSVBadFields: each kind of bad cell or bad value is reported
// at its row and column.
func TestCatalogCSVBadFields(t *testing.T) {
	const header = "id,name,price,stock,link,stock_state,restock_date,variants,specs,size_chart,allergens,shipping_fee,dispatch_hours,returns,return_conditions,list_price\n"
	cases := []struct {
		name, row, want string
	}{
		{"missing id", ",A,10,,,,,,,,,,,,,", "2/id: "},
		{"id with spaces", "p 1,A,10,,,,,,,,,,,,,", "2/id: "},
		{"missing name", "p1,,10,,,,,,,,,,,,,", "2/name: "},
		{"price not a number", "p1,A,ten,,,,,,,,,,,,,", `2/price: "ten" is not a number`},
		{"price with three decimals", "p1,A,9.999,,,,,,,,,,,,,", `2/price: "9.999" has more than two decimals`},
		{"negative price", "p1,A,-1,,,,,,,,,,,,,", `2/price: "-1" is negative`},
		{"negative stock", "p1,A,10,-3,,,,,,,,,,,,", "2/stock: "},
		{"stock not whole", "p1,A,10,2.5,,,,,,,,,,,,", `2/stock: "2.5" is not a whole number`},
		{"link zero", "p1,A,10,,0,,,,,,,,,,,", "2/link: "},
		{"unknown stock state", "p1,A,10,,,plenty,,,,,,,,,,", `2/stock_state: "plenty" is not a stock state`},
		{"sold out with stock", "p1,A,10,5,,sold_out,,,,,,,,,,", `2/stock_state: is "sold_out" but stock is 5`},
		{"date off the calendar", "p1,A,10,,,,2026-02-30,,,,,,,,,", `2/restock_date: date "2026-02-30" is not a calendar date`},
		{"variant stock not whole", "p1,A,10,,,,,S:x,,,,,,,,", `2/variants: "S:x": stock "x" is not a whole number`},
		{"variants that do not add up", "p1,A,10,9,,,,S:4|M:4,,,,,,,,", "2/stock: is 9 but the variants add up to 8"},
		{"repeated variant", "p1,A,10,,,,,S|S,,,,,,,,", `2/variants: variant "S" repeats`},
		{"spec without a value", "p1,A,10,,,,,,battery,,,,,,,", `2/specs: "battery" is not key=value`},
		{"repeated spec", "p1,A,10,,,,,,a=1|a=2,,,,,,,", `2/specs: key "a" is already the key of specs[0]`},
		{"size row not a range", "p1,A,10,,,,,,,M:tall:50-60,,,,,,", `2/size_chart: "tall" in "M:tall:50-60" is not a range`},
		{"size row without bounds", "p1,A,10,,,,,,,M::,,,,,,", "2/size_chart: states no bound"},
		{"size row upside down", "p1,A,10,,,,,,,M:180-170:,,,,,,", "2/size_chart: 180 is above max_height_cm 170"},
		{"fee not a number", "p1,A,10,,,,,,,,,free,,,,", `2/shipping_fee: "free" is not a number`},
		{"dispatch hours zero", "p1,A,10,,,,,,,,,,0,yes,,", "2/dispatch_hours: "},
		{"unknown returns word", "p1,A,10,,,,,,,,,,,maybe,,", `2/returns: "maybe" is not a word of returns`},
		{"conditions without returns", "p1,A,10,,,,,,,,,,,,unopened,", "2/return_conditions: conditions need a returns cell"},
		{"no returns with a window", "p1,A,10,,,,,,,,,,,no 7,,", "2/returns: is stated but returns are not accepted"},
		{"list price below price", "p1,A,10,,,,,,,,,,,,,8", "2/list_price: list price 8 is below the price 10"},
		{"duplicate id", "p1,A,10,,,,,,,,,,,,,\np1,B,10,,,,,,,,,,,,,", `3/id: id "p1" is already the id of row 2`},
		{"duplicate link", "p1,A,10,,3,,,,,,,,,,,\np2,B,10,,3,,,,,,,,,,,", "3/link: link 3 is already the link of row 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, probs := importCatalogCSV([]byte(header+c.row+"\n"), &catalog.Catalog{Currency: "CNY"})
			var got []string
			for _, p := range probs {
				got = append(got, fmt.Sprintf("%d/%s: %s", p.Row, p.Column, p.Message))
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
				t.Errorf("problems %q, want one that starts %q", got, c.want)
			}
		})
	}
}

// TestCatalogImportReportsEveryBadRow: a file with several problems
// reports them all, in row order, and stores nothing.
func TestCatalogImportReportsEveryBadRow(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	rev := st["revision"]
	bad := "id,name,price,stock,variants\n" +
		"p-ok,Fine,10,5,\n" +
		",No id,10,5,\n" +
		"p-price,Bad price,ten,5,\n" +
		"p-stock,Bad stock,10,-3,\n" +
		"p-ok,Again,10,5,\n" +
		"p-var,Variants,10,9,S:4|M:4\n" +
		"p-dec,Decimals,9.999,1,\n"
	code, body, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "text/csv", bad)
	if code != 422 || body["field"] != "file" {
		t.Fatalf("bad rows: %d %s", code, raw)
	}
	got := catalogProblemsOf(body)
	want := []string{
		"3/id: ",
		`4/price: "ten" is not a number`,
		"5/stock: ",
		`6/id: id "p-ok" is already the id of row 2`,
		"7/stock: is 9 but the variants add up to 8",
		`8/price: "9.999" has more than two decimals`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d is %q, want one that starts %q", i, got[i], want[i])
		}
	}
	_, after, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	if after["revision"] != rev {
		t.Error("a file with problems changed the stream")
	}

	for _, c := range []struct {
		name, ctype, body string
		code              int
		field             string
		says              string
	}{
		{"unknown column", "text/csv", "id,name,price,colour\np,n,1,red\n", 422, "file", `unknown column "colour"`},
		{"misspelt column", "text/csv", "id,name,price,stok\np,n,1,1\n", 422, "file", `did you mean "stock"?`},
		{"old and new column", "text/csv", "id,name,price,dispatch_hours,shipping_days\np,n,1,24,1\n", 422, "file", "not both"},
		{"missing price column", "text/csv", "id,name\np,n\n", 422, "file", `no "price" column`},
		{"not UTF-8", "text/csv", "id,name,price\np,\xff\xfe,1\n", 422, "file", "UTF-8"},
		{"bare quote", "text/csv", "id,name,price\np,a \"quoted\" name,1\n", 422, "file", "quote"},
		{"header only", "text/csv", "id,name,price\n", 422, "file", "no product rows"},
		{"oversized", "text/csv", "id,name,price\n" + strings.Repeat("p,n,1\n", maxCatalogBytes/6+1), 413, "file", ""},
		{"wrong type", "image/png", "x", 415, "content_type", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), c.ctype, c.body)
			if code != c.code || body["field"] != c.field || !strings.Contains(fmt.Sprint(body), c.says) {
				t.Errorf("%d %.300s", code, raw)
			}
		})
	}
	if code, body, _ := e.call(t, e.merchant, "POST", fmt.Sprintf("/api/streams/%s/catalog", e.demoStream), "text/csv", goodCSV); code != 400 || body["field"] != "revision" {
		t.Errorf("no revision: %d %v", code, body)
	}
}

// TestCatalogImportJSONProblems: each kind of bad JSON field is reported
// with its list, position, field, and line and column in the file.
func TestCatalogImportJSONProblems(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	rev := st["revision"]
	v2 := `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"A","price":1}]`
	cases := []struct {
		name, body string
		want       []string // "section row column: message" prefixes, in order
	}{
		{"string price", `{"currency":"CNY","products":[{"id":"a","name":"A","price":1,"stock":1},{"id":"b","name":"B","price":"12","stock":1}]}`,
			[]string{"products 2 price: is a string; want a number"}},
		{"unknown field with a suggestion", `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"A","price":1,"stok":1}]}`,
			[]string{`products 1 stok: unknown field "stok"; did you mean "stock"? (line 1, column `}},
		{"unknown coupon product", v2 + `,"coupons":[{"id":"c","name":"C","amount":5,"products":["zz"]}]}`,
			[]string{`coupons 1 products[0]: names product "zz", which the catalog does not have`}},
		{"coupon with amount and percent", v2 + `,"coupons":[{"id":"c","name":"C","amount":5,"percent":10}]}`,
			[]string{"coupons 1 percent: a coupon takes amount or percent, not both"}},
		{"promotion kind fields", v2 + `,"promotions":[{"id":"m","title":"M","kind":"multi_buy","products":["a"],"price":9}]}`,
			[]string{`promotions 1 quantity: kind "multi_buy" needs quantity`}},
		{"bundle of one", v2 + `,"promotions":[{"id":"b","title":"B","kind":"bundle","products":["a"],"price":9}]}`,
			[]string{"promotions 1 products: a bundle needs two or more products"}},
		{"bad date", `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"A","price":1,"best_before":"2026-13-01"}]}`,
			[]string{"products 1 best_before: "}},
		{"returns refused with a window", `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"A","price":1,"returns":{"accepted":false,"days":7}}]}`,
			[]string{"products 1 returns.days: is stated but returns are not accepted"}},
		{"unknown version", `{"schema":"livehat.catalog/9","currency":"CNY","products":[]}`,
			[]string{`file 0 schema: unknown version "livehat.catalog/9"`}},
		{"syntax", "{\n\"products\": [,]}", []string{"file 0 : invalid JSON"}},
		{"several problems, all reported",
			"{\"schema\":\"livehat.catalog/2\",\"currency\":\"CNY\",\n\"products\":[\n {\"id\":\"a\",\"name\":\"A\",\"price\":-1},\n {\"id\":\"a\",\"name\":\"\",\"price\":1,\"shipping\":{\"fees\":1}}]}",
			[]string{"products 1 price: ", "products 2 id: ", "products 2 name: ", `products 2 shipping.fees: unknown field "fees"; did you mean "fee"? (line 4, column`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "application/json", c.body)
			if code != 422 || body["field"] != "file" {
				t.Fatalf("%d %s", code, raw)
			}
			var got []string
			for _, p := range body["problems"].([]any) {
				m := p.(map[string]any)
				row, _ := m["row"].(float64)
				got = append(got, fmt.Sprintf("%v %v %v: %v", m["section"], row, valueOr(m["column"]), m["message"]))
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for i := range c.want {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("problem %d is %q, want one that starts %q", i, got[i], c.want[i])
				}
			}
		})
	}
	// A file without a currency is in the stream's: columns on the first
	// line are not shifted by it.
	_, body, _ := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "application/json", `{"products":[{"id":"a","name":"A","price":1,"stok":1}]}`)
	if p := body["problems"].([]any)[0].(map[string]any); p["line"] != float64(1) || p["char"] != float64(45) {
		t.Errorf("problem place = %v", p)
	}
}

func valueOr(v any) any {
	if v == nil {
		return ""
	}
	return v
}

func TestCatalogImportJSONAndIsolation(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	code, res, raw := e.call(t, e.merchant, "POST", importPath(e, st["revision"], ""), "application/json", string(examples.Catalog))
	if code != 200 || res["products"] != float64(5) || res["promotions"] != float64(3) || res["coupons"] != float64(4) {
		t.Fatalf("json import: %d %s", code, raw)
	}
	for name, tok := range map[string]string{"rival": e.rival} {
		if code, _, _ := e.call(t, tok, "GET", "/api/streams/"+e.demoStream+"/catalog", "", ""); code != 404 {
			t.Errorf("%s reads the catalog: %d", name, code)
		}
		if code, _, _ := e.call(t, tok, "POST", importPath(e, res["revision"], ""), "text/csv", goodCSV); code != 404 {
			t.Errorf("%s imports a catalog: %d", name, code)
		}
	}
	if code, _, _ := e.call(t, e.dev, "GET", "/api/streams/"+e.demoStream+"/catalog", "", ""); code != 403 {
		t.Errorf("developer reads the catalog: %d", code)
	}
	if code, _, _ := e.call(t, "", "GET", "/api/streams/"+e.demoStream+"/catalog", "", ""); code != 401 {
		t.Errorf("anonymous reads the catalog: %d", code)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/streams/"+e.demoStream+"/catalog?format=xml", "", ""); code != 400 {
		t.Errorf("unknown format: %d", code)
	}
}

// TestStoredVersion1CatalogReadsAsVersion2: a catalog stored before
// version 2 is served, exported and used as version 2, stating what it
// stated.
func TestStoredVersion1CatalogReadsAsVersion2(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := context.Background()
	admin, err := e.store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.store.Stream(ctx, admin.Scope(), e.demoStream)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("../examples/testdata/demo-catalog-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	st.Catalog = old
	if _, err := e.store.UpdateStream(ctx, admin.Scope(), *st); err != nil {
		t.Fatal(err)
	}
	code, got, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog", "", "")
	if code != 200 || !strings.Contains(string(raw), `"schema":"livehat.catalog/2"`) {
		t.Fatalf("catalog: %d %s", code, raw)
	}
	b, _ := json.Marshal(got["catalog"])
	served, err := catalog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, want) {
		t.Errorf("the stored version 1 demo reads as\n%+v\nnot as the version 2 demo\n%+v", served, want)
	}
	if items := catalogItems(old); strings.Join(items, ",") != "p-serum,p-cream,p-sunscreen,p-lipstick,p-hoodie" {
		t.Errorf("items = %v", items)
	}
	code, _, csv := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog?format=csv", "", "")
	if code != 200 || !bytes.Contains(csv, []byte("p-serum,,玻尿酸精华,199,299,120,")) || !bytes.Contains(csv, []byte(",48,0,,,7 no_reason,")) {
		t.Errorf("export: %d %s", code, csv)
	}
}

func TestCatalogSchemaRoute(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, tok := range []string{e.merchant, e.dev, e.admin} {
		req := httptest.NewRequest("GET", "/api/catalog/schema", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := e.srv.App().Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/schema+json" || !bytes.Equal(body, catalog.Schema()) {
			t.Errorf("schema: %d %q %.100s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if code, _, _ := e.call(t, "", "GET", "/api/catalog/schema", "", ""); code != 401 {
		t.Errorf("anonymous reads the schema: %d", code)
	}
}

// TestStreamCatalogIsStoredAsVersion2: a catalog given with a stream is
// checked and stored as a version 2 document in the stream's currency.
func TestStreamCatalogIsStoredAsVersion2(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	body := fmt.Sprintf(`{"name":"x","revision":%v,"currency":"EUR","catalog":{"products":[{"id":"a","name":"A","price":1,"stock":2}]}}`, st["revision"])
	code, out, raw := e.call(t, e.merchant, "PUT", "/api/streams/"+e.demoStream, "application/json", body)
	if code != 200 {
		t.Fatalf("update: %d %s", code, raw)
	}
	var want any
	_ = json.Unmarshal([]byte(`{"schema":"livehat.catalog/2","currency":"EUR","products":[{"id":"a","name":"A","price":1,"stock":2}]}`), &want)
	if !reflect.DeepEqual(out["catalog"], want) {
		t.Errorf("stored catalog %v", out["catalog"])
	}
	body = fmt.Sprintf(`{"name":"x","revision":%v,"catalog":{"schema":"livehat.catalog/2","currency":"EUR","products":[{"id":"a","nam":"A","price":1}]}}`, out["revision"])
	if code, res, _ := e.call(t, e.merchant, "PUT", "/api/streams/"+e.demoStream, "application/json", body); code != 400 || res["field"] != "catalog" ||
		!strings.Contains(fmt.Sprint(res["error"]), `did you mean "name"?`) {
		t.Errorf("bad catalog: %d %v", code, res)
	}
}

// FuzzParseCatalogCSV checks that the CSV import never panics, that what
// it accepts is a valid catalog, and that its export reads back the same.
func FuzzParseCatalogCSV(f *testing.F) {
	f.Add([]byte(goodCSV))
	f.Add([]byte("id,name,price,stock\np,n,1,1\n"))
	f.Add([]byte("id;name;price;stock\np;n;1,5;1\n"))
	f.Add([]byte("id\tname\tprice\tvariants\np\tn\t1\tS:1|M:2\n"))
	f.Add([]byte("id,name,price,stock,size_chart\np,n,1,1,M:1-2:3-4|L:5-:\n"))
	f.Add([]byte("id,name,price,stock\n\"p\",\"a\"\"b\",1,1\n"))
	f.Add([]byte("id,link,name,price,specs,allergens,returns,variants\np,2,n,1,\"a[x;y]=30 h|b=yes|c=\"\"5.3\"\"|d=cotton / 棉\",none,7 no_reason insured,colour=red:1:2:low:2026-01-02|blue\n"))
	empty := &catalog.Catalog{Currency: "CNY"}
	f.Fuzz(func(t *testing.T, data []byte) {
		cat, _, probs := importCatalogCSV(data, empty)
		if len(probs) > 0 {
			if len(probs) > maxCatalogProblems {
				t.Fatalf("%d problems reported", len(probs))
			}
			return
		}
		if _, err := reparse(cat); err != nil {
			t.Fatalf("accepted a catalog the schema rejects: %v", err)
		}
		var b bytes.Buffer
		if err := writeCatalogCSV(&b, cat.Products); err != nil {
			t.Fatal(err)
		}
		again, _, probs := importCatalogCSV(b.Bytes(), empty)
		if len(probs) > 0 || !reflect.DeepEqual(again.Products, cat.Products) {
			t.Fatalf("export does not read back: %v\n%q\n%+v\n%+v", probs, b.String(), again, cat.Products)
		}
	})
}
