package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/plugins"
)

const goodCSV = "\xef\xbb\xbf商品ID,名称,aliases,price,list_price,stock,variants,size_chart,attributes,shipping_days,shipping_fee,return_days\n" +
	"p-hoodie,加绒卫衣,卫衣|hoodie,¥159,199,,M:0|L:30,M:155-168:45-60|L:165-178:58-75,material=cotton,2,0,7\n" +
	"p-serum,\"玻尿酸精华, 30ml\",精华|serum,199.00,299,120,,,volume=30ml|skin=all,,,\n"

func importPath(e *testEnv, rev any, extra string) string {
	return fmt.Sprintf("/api/streams/%s/catalog?revision=%v%s", e.demoStream, rev, extra)
}

func TestCatalogImportCSV(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	rev := st["revision"]

	code, dry, raw := e.call(t, e.merchant, "POST", importPath(e, rev, "&dry_run=true"), "text/csv", goodCSV)
	if code != 200 || dry["products"] != float64(2) || dry["dry_run"] != true || dry["revision"] != rev {
		t.Fatalf("dry run: %d %s", code, raw)
	}
	// The demo's coupons and promotions stay; those naming dropped items are reported.
	if w := dry["warnings"].([]any); len(w) == 0 || !strings.Contains(fmt.Sprint(w), "p-cream") {
		t.Errorf("warnings = %v", w)
	}
	code, res, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "text/csv", goodCSV)
	if code != 200 || res["revision"] != rev.(float64)+1 || res["coupons"] != float64(4) {
		t.Fatalf("import: %d %s", code, raw)
	}
	code, got, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog", "", "")
	if code != 200 {
		t.Fatalf("catalog: %d %s", code, raw)
	}
	var cat plugins.Catalog
	b, _ := json.Marshal(got["catalog"])
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatal(err)
	}
	hoodie := cat.Products[0]
	if hoodie.ID != "p-hoodie" || hoodie.Price != 159 || hoodie.Stock != 30 || len(hoodie.SizeChart) != 2 || hoodie.Shipping.ReturnDays != 7 ||
		hoodie.Attributes["material"] != "cotton" || strings.Join(hoodie.Aliases, "|") != "卫衣|hoodie" {
		t.Errorf("hoodie = %+v", hoodie)
	}
	if cat.Products[1].Name != "玻尿酸精华, 30ml" || cat.Products[1].Shipping != nil || cat.Currency != "CNY" {
		t.Errorf("serum = %+v (currency %s)", cat.Products[1], cat.Currency)
	}

	// The export imports again unchanged.
	code, _, csv := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog?format=csv", "", "")
	if code != 200 {
		t.Fatalf("export: %d", code)
	}
	again, probs := parseCatalogCSV(csv)
	if len(probs) > 0 || !reflect.DeepEqual(again, cat.Products) {
		t.Errorf("export does not read back: %v\n%+v\n%+v", probs, again, cat.Products)
	}

	// A stale revision is a conflict, and nothing changes.
	code, body, _ := e.call(t, e.merchant, "POST", importPath(e, rev, ""), "text/csv", goodCSV)
	if code != 409 {
		t.Errorf("stale import: %d %v", code, body)
	}
}

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
	var got []string
	for _, p := range body["problems"].([]any) {
		m := p.(map[string]any)
		got = append(got, fmt.Sprintf("%v/%v: %v", m["row"], m["column"], m["message"]))
	}
	want := []string{
		"3/id: missing id",
		`4/price: "ten" is not a number`,
		"5/stock: negative stock -3",
		`6/id: duplicate id "p-ok" (first on row 2)`,
		"7/stock: stock 9 is not the sum of the variants' stock 8",
		`8/price: "9.999" has more than two decimals`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, after, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	if after["revision"] != rev {
		t.Error("a file with problems changed the stream")
	}

	for _, c := range []struct {
		name, ctype, body string
		code              int
		field             string
	}{
		{"unknown column", "text/csv", "id,name,price,colour\np,n,1,red\n", 422, "file"},
		{"missing price column", "text/csv", "id,name\np,n\n", 422, "file"},
		{"not UTF-8", "text/csv", "id,name,price\np,\xff\xfe,1\n", 422, "file"},
		{"bare quote", "text/csv", "id,name,price\np,a \"quoted\" name,1\n", 422, "file"},
		{"header only", "text/csv", "id,name,price\n", 422, "file"},
		{"oversized", "text/csv", "id,name,price\n" + strings.Repeat("p,n,1\n", maxCatalogBytes/6+1), 413, "file"},
		{"wrong type", "image/png", "x", 415, "content_type"},
		{"json string price", "application/json", `{"products":[{"id":"a","name":"A","price":1,"stock":1},{"id":"b","name":"B","price":"12","stock":1}]}`, 422, "file"},
		{"json unknown coupon product", "application/json", `{"products":[{"id":"a","name":"A","price":1,"stock":1}],"coupons":[{"id":"c","amount":5,"products":["zz"],"remaining":1}]}`, 422, "file"},
		{"json syntax", "application/json", "{\n\"products\": [,]}", 422, "file"},
	} {
		code, body, raw := e.call(t, e.merchant, "POST", importPath(e, rev, ""), c.ctype, c.body)
		if code != c.code || body["field"] != c.field {
			t.Errorf("%s: %d %.300s", c.name, code, raw)
		}
	}
	_, body, _ = e.call(t, e.merchant, "POST", importPath(e, rev, ""), "application/json",
		`{"products":[{"id":"a","name":"A","price":1,"stock":1},{"id":"b","name":"B","price":"12","stock":1}]}`)
	if p := body["problems"].([]any)[0].(map[string]any); p["row"] != float64(2) || p["column"] != "price" || !strings.Contains(p["message"].(string), "non-numeric") {
		t.Errorf("json problem = %v", p)
	}
	if code, body, _ := e.call(t, e.merchant, "POST", fmt.Sprintf("/api/streams/%s/catalog", e.demoStream), "text/csv", goodCSV); code != 400 || body["field"] != "revision" {
		t.Errorf("no revision: %d %v", code, body)
	}
}

func TestCatalogImportJSONAndIsolation(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	code, res, raw := e.call(t, e.merchant, "POST", importPath(e, st["revision"], ""), "application/json", string(examples.Catalog))
	if code != 200 || res["products"] != float64(5) || res["promotions"] != float64(3) {
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

// FuzzParseCatalogCSV checks that the CSV parser never panics, that what
// it accepts is a valid catalog, and that its export reads back the same.
func FuzzParseCatalogCSV(f *testing.F) {
	f.Add([]byte(goodCSV))
	f.Add([]byte("id,name,price,stock\np,n,1,1\n"))
	f.Add([]byte("id;name;price;stock\np;n;1,5;1\n"))
	f.Add([]byte("id\tname\tprice\tvariants\np\tn\t1\tS:1|M:2\n"))
	f.Add([]byte("id,name,price,stock,size_chart\np,n,1,1,M:1-2:3-4\n"))
	f.Add([]byte("id,name,price,stock\n\"p\",\"a\"\"b\",1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		products, probs := parseCatalogCSV(data)
		if len(probs) > 0 {
			if len(probs) > maxCatalogProblems {
				t.Fatalf("%d problems reported", len(probs))
			}
			return
		}
		raw, err := json.Marshal(plugins.Catalog{Products: products})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plugins.ParseCatalog(raw); err != nil {
			t.Fatalf("accepted a catalog the plugins reject: %v", err)
		}
		var b bytes.Buffer
		if err := writeCatalogCSV(&b, products); err != nil {
			t.Fatal(err)
		}
		again, probs := parseCatalogCSV(b.Bytes())
		if len(probs) > 0 || !reflect.DeepEqual(again, products) {
			t.Fatalf("export does not read back: %v\n%q", probs, b.String())
		}
	})
}
