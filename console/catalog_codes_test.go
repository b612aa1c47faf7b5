package console

import (
	"fmt"
	"testing"
)

// TestCatalogProblemsCarryCodes: the editor's check, a JSON import and a
// CSV import give each catalog problem its stable code and params, with
// the positions they name as rows like the problem's own.
func TestCatalogProblemsCarryCodes(t *testing.T) {
	e := newTestEnv(t, nil)
	_, st, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	rev := st["revision"]
	twoLinks := `{"schema": "livehat.catalog/2", "products": [{"id": "p-a", "name": "A", "price": 1, "link": 1},` +
		` {"id": "p-b", "name": "B", "price": 2, "link": 1, "stock": -1}]}`
	for _, tc := range []struct {
		name, method, path, contentType, body string
		want                                  map[string]string // "row column" → "code params"
	}{
		{"editor check", "POST", "/api/streams/" + e.demoStream + "/catalog/check", "application/json", twoLinks,
			map[string]string{"2 link": "link_taken [1 1]", "2 stock": "negative [-1]"}},
		{"JSON import", "POST", importPath(e, rev, "&dry_run=true"), "application/json", twoLinks,
			map[string]string{"2 link": "link_taken [1 1]", "2 stock": "negative [-1]"}},
		{"CSV import", "POST", importPath(e, rev, "&dry_run=true"), "text/csv", "id,name,price,link\np-a,A,1,1\np-b,B,2,1\np-a,C,3,\n",
			map[string]string{"3 link": "link_taken [1 2]", "4 id": "id_taken [p-a products 2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body, raw := e.call(t, e.merchant, tc.method, tc.path, tc.contentType, tc.body)
			got := map[string]string{}
			list, _ := body["problems"].([]any)
			for _, x := range list {
				p := x.(map[string]any)
				got[fmt.Sprintf("%v %v", p["row"], p["column"])] = fmt.Sprintf("%v %v", p["code"], p["params"])
			}
			for where, want := range tc.want {
				if got[where] != want {
					t.Errorf("%s: %q, want %q (%s)", where, got[where], want, raw)
				}
			}
		})
	}
}
