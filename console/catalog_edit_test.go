package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// catalogDoc is a small valid version 2 catalog with the given product
// name for p-tee.
func catalogDoc(name string) string {
	return `{"schema":"livehat.catalog/2","currency":"CNY","products":[` +
		`{"id":"p-tee","link":1,"name":` + fmt.Sprintf("%q", name) + `,"price":59,"stock":30,` +
		`"variants":[{"axis":"size","name":"M","stock":10},{"axis":"size","name":"L","stock":20,"price":69}]},` +
		`{"id":"p-nuts","link":2,"name":"每日坚果","price":99,"allergens":["peanut"],"shelf_life_days":180}],` +
		`"coupons":[{"id":"c-full","name":"满99减10","amount":10,"min_spend":99}],` +
		`"promotions":[{"id":"pr-2","title":"第二件半价","kind":"multi_buy","quantity":2,"nth_percent":50,"products":["p-tee"]}]}`
}

func catalogRevisionOf(t *testing.T, e *testEnv) float64 {
	t.Helper()
	code, got, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/catalog", "", "")
	if code != 200 {
		t.Fatalf("catalog: %d %s", code, raw)
	}
	rev, ok := got["catalog_revision"].(float64)
	if !ok || rev < 1 {
		t.Fatalf("no catalog_revision in %s", raw)
	}
	return rev
}

func saveBody(rev float64, doc string) string {
	return fmt.Sprintf(`{"catalog_revision":%v,"catalog":%s}`, rev, doc)
}

func TestCatalogSave(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream + "/catalog"
	rev := catalogRevisionOf(t, e)

	code, got, raw := e.call(t, e.merchant, "PUT", path, "application/json", saveBody(rev, catalogDoc("纯棉T恤")))
	if code != 200 || got["catalog_revision"] != rev+1 {
		t.Fatalf("save: %d %s", code, raw)
	}
	cat := storedCatalogOf(t, e)
	if len(cat.Products) != 2 || cat.Products[0].Name != "纯棉T恤" || len(cat.Products[0].Variants) != 2 ||
		len(cat.Coupons) != 1 || len(cat.Promotions) != 1 {
		t.Fatalf("stored: %+v", cat)
	}

	// A second editor still on the old revision is refused with the
	// catalog as it is now, and nothing of its edit is stored.
	code, got, raw = e.call(t, e.merchant, "PUT", path, "application/json", saveBody(rev, catalogDoc("旧的名字")))
	if code != 409 || got["code"] != codeCatalogConflict || got["catalog_revision"] != rev+1 {
		t.Fatalf("stale save: %d %s", code, raw)
	}
	theirs, _ := json.Marshal(got["catalog"])
	if !strings.Contains(string(theirs), "纯棉T恤") {
		t.Errorf("the conflict does not carry the current catalog: %s", theirs)
	}
	if storedCatalogOf(t, e).Products[0].Name != "纯棉T恤" {
		t.Error("a stale save changed the catalog")
	}

	// A stream update based on the revision before the save is refused
	// too: it carries the old catalog.
	code, _, raw = e.call(t, e.merchant, "PUT", "/api/streams/"+e.demoStream, "application/json", `{"name":"x","revision":1}`)
	if code != 409 {
		t.Errorf("a stale stream update after a catalog save: %d %s", code, raw)
	}

	cases := []struct {
		name, token, body string
		status            int
		code, problem     string
	}{
		{"problems", e.merchant, saveBody(rev+1, strings.Replace(catalogDoc("x"), `"price":59`, `"price":-1`, 1)), 422, codeCatalogInvalid, "products 1 price"},
		{"variant stock over the product's", e.merchant, saveBody(rev+1, strings.Replace(catalogDoc("x"), `"stock":20`, `"stock":40`, 1)), 422, codeCatalogInvalid, "products 1 "},
		{"coupon names no product", e.merchant, saveBody(rev+1, strings.Replace(catalogDoc("x"), `"min_spend":99}`, `"min_spend":99,"products":["p-gone"]}`, 1)), 422, codeCatalogInvalid, "coupons 1 products"},
		{"no revision", e.merchant, `{"catalog":` + catalogDoc("x") + `}`, 400, codeValidation, ""},
		{"unknown field", e.merchant, `{"catalog_revision":1,"catalog":{},"extra":1}`, 400, codeValidation, ""},
		{"another merchant", e.rival, saveBody(rev+1, catalogDoc("x")), 404, codeNotFound, ""},
		{"developer", e.dev, saveBody(rev+1, catalogDoc("x")), 403, codeForbidden, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, got, raw := e.call(t, c.token, "PUT", path, "application/json", c.body)
			if code != c.status || got["code"] != c.code {
				t.Fatalf("got %d %s, want %d %s", code, raw, c.status, c.code)
			}
			if c.problem != "" && !hasProblem(got, c.problem) {
				t.Errorf("no problem at %q in %s", c.problem, raw)
			}
			if catalogRevisionOf(t, e) != rev+1 {
				t.Error("a refused save moved the catalog revision")
			}
		})
	}
}

// hasProblem reports whether an answer lists a problem whose
// "section row column" starts with want.
func hasProblem(body map[string]any, want string) bool {
	list, _ := body["problems"].([]any)
	for _, p := range list {
		m := p.(map[string]any)
		row, _ := m["row"].(float64)
		col, _ := m["column"].(string)
		if strings.HasPrefix(fmt.Sprintf("%v %v %s", m["section"], row, col), want) {
			return true
		}
	}
	return false
}

func TestCatalogCheck(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream + "/catalog/check"
	cases := []struct {
		name, doc string
		problems  []string
	}{
		{"valid", catalogDoc("T恤"), nil},
		{"negative price", strings.Replace(catalogDoc("T恤"), `"price":99`, `"price":-5`, 1), []string{"products 2 price"}},
		{"blank name", catalogDoc(" "), []string{"products 1 name"}},
		{"duplicate link", strings.Replace(catalogDoc("T恤"), `"link":2`, `"link":1`, 1), []string{"products 2 link"}},
		{"coupon with both kinds", strings.Replace(catalogDoc("T恤"), `"amount":10`, `"amount":10,"percent":10`, 1), []string{"coupons 1 "}},
		{"not JSON", `{"products":`, []string{"file 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, got, raw := e.call(t, e.merchant, "POST", path, "application/json", c.doc)
			if code != 200 {
				t.Fatalf("check: %d %s", code, raw)
			}
			list, _ := got["problems"].([]any)
			if len(c.problems) == 0 && len(list) != 0 {
				t.Fatalf("problems in a valid catalog: %s", raw)
			}
			for _, want := range c.problems {
				if !hasProblem(got, want) {
					t.Errorf("no problem at %q in %s", want, raw)
				}
			}
		})
	}
	if code, _, _ := e.call(t, e.rival, "POST", path, "application/json", catalogDoc("x")); code != 404 {
		t.Errorf("another merchant's stream: %d, want 404", code)
	}
}

func TestCatalogParseStoresNothing(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream + "/catalog/parse"
	rev := catalogRevisionOf(t, e)
	before := storedCatalogOf(t, e)

	code, got, raw := e.call(t, e.merchant, "POST", path, "text/csv", "id,name,price,stock\np1,卫衣,159,\np2,,abc,-3\np3,帽子,29,5\n")
	if code != 422 || got["code"] != codeCatalogInvalid {
		t.Fatalf("a CSV with problems: %d %s", code, raw)
	}
	for _, want := range []string{"products 3 name", "products 3 price", "products 3 stock"} {
		if !hasProblem(got, want) {
			t.Errorf("no problem at %q in %s", want, raw)
		}
	}

	code, got, raw = e.call(t, e.merchant, "POST", path, "text/csv", "id,name,price,link\np1,卫衣,159,2\np3,帽子,29,1\n")
	if code != 200 {
		t.Fatalf("a good CSV: %d %s", code, raw)
	}
	doc, _ := json.Marshal(got["catalog"])
	if !strings.Contains(string(doc), `"卫衣"`) || !strings.Contains(string(doc), `"link":1`) {
		t.Errorf("parsed catalog: %s", doc)
	}

	code, got, raw = e.call(t, e.merchant, "POST", path, "application/json", `{"schema":"livehat.catalog/2","products":[{"id":"p1","name":"x","pirce":3}]}`)
	if code != 422 || !hasProblem(got, "products 1 pirce") {
		t.Fatalf("a JSON file with a typo: %d %s", code, raw)
	}

	if catalogRevisionOf(t, e) != rev || len(storedCatalogOf(t, e).Products) != len(before.Products) {
		t.Error("parsing a file changed the stored catalog")
	}
	if code, _, _ := e.call(t, e.merchant, "POST", path, "image/png", "x"); code != 415 {
		t.Errorf("a PNG: %d, want 415", code)
	}
}

// TestCatalogImportMovesCatalogRevision checks that an import seen by an
// open editor makes that editor's save a conflict.
func TestCatalogImportMovesCatalogRevision(t *testing.T) {
	e := newTestEnv(t, nil)
	rev := catalogRevisionOf(t, e)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	code, _, raw := e.call(t, e.merchant, "POST", importPath(e, st["revision"], ""), "text/csv", goodCSV)
	if code != 200 {
		t.Fatalf("import: %d %s", code, raw)
	}
	if got := catalogRevisionOf(t, e); got != rev+1 {
		t.Fatalf("catalog revision after an import: %v, want %v", got, rev+1)
	}
	code, got, _ := e.call(t, e.merchant, "PUT", "/api/streams/"+e.demoStream+"/catalog", "application/json", saveBody(rev, catalogDoc("x")))
	if code != 409 || got["code"] != codeCatalogConflict {
		t.Errorf("a save from before the import: %d %v", code, got)
	}
}
