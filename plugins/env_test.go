package plugins

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness/catalog"
)

func everyFieldCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	b, err := os.ReadFile("../examples/catalogs/every-field.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLookupCatalog(t *testing.T) {
	c := everyFieldCatalog(t)
	cases := []struct {
		name, query string
		ids         []string // the product ids answered, in order
		err         string
	}{
		{"by id", `{"kind":"product","id":"p-cream"}`, []string{"p-cream"}, ""},
		{"kind defaults to product", `{"id":"p-cream"}`, []string{"p-cream"}, ""},
		{"by link", `{"kind":"product","link":4}`, []string{"p-flask"}, ""},
		{"no such link", `{"kind":"product","link":9}`, nil, ""},
		{"by alias, any case", `{"kind":"product","name":" Nut Box "}`, []string{"p-nuts"}, ""},
		{"by text, longest name first", `{"kind":"product","text":"耳机和纯棉短袖T恤哪个好"}`, []string{"p-tee", "p-earbuds"}, ""},
		{"limit", `{"kind":"product","text":"耳机和纯棉短袖T恤哪个好","limit":1}`, []string{"p-tee"}, ""},
		{"by a part of a name", `{"kind":"product","text":"不锈钢"}`, []string{"p-flask"}, ""},
		{"by a whole word of an alias", `{"kind":"product","text":"Nut"}`, []string{"p-nuts"}, ""},
		{"by a part of an alias", `{"kind":"product","text":"蓝牙"}`, []string{"p-earbuds"}, ""},
		{"no part of a Latin word", `{"kind":"product","text":"box nu"}`, nil, ""},
		{"no cut word", `{"kind":"product","text":"bud"}`, nil, ""},
		{"a lone character names nothing", `{"kind":"product","text":"杯"}`, nil, ""},
		{"a name occurring wins over parts", `{"kind":"product","text":"保温杯子"}`, []string{"p-flask"}, ""},
		{"id before link", `{"kind":"product","id":"p-tee","link":1}`, []string{"p-tee"}, ""},
		{"unknown kind", `{"kind":"stock"}`, nil, `unknown kind "stock"`},
		{"not JSON", `{`, nil, "catalog query"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := strings.Replace(tc.query, "{", `{"schema":"livehat.catalog/2",`, 1)
			if tc.query == "{" {
				q = tc.query
			}
			out, err := LookupCatalog(c, []byte(q))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one that says %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var res CatalogResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range res.Products {
				ids = append(ids, p.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.ids, ",") || res.Schema != catalog.SchemaVersion || res.Currency != "CNY" {
				t.Errorf("answered %v (schema %q, currency %q), want %v", ids, res.Schema, res.Currency, tc.ids)
			}
		})
	}
}

// TestLookupCatalogNeedsTheLayout: a query that does not name the version
// 2 layout is refused, so that a plugin built before it cannot read an
// unstated stock or return window as 0.
func TestLookupCatalogNeedsTheLayout(t *testing.T) {
	c := everyFieldCatalog(t)
	for _, q := range []string{`{"kind":"product","id":"p-cream"}`, `{"schema":"livehat.catalog/1","kind":"coupons"}`} {
		t.Run(q, func(t *testing.T) {
			_, err := LookupCatalog(c, []byte(q))
			if err == nil || !strings.Contains(err.Error(), `send "schema": "livehat.catalog/2"`) {
				t.Errorf("error %v, want a refusal that names the layout", err)
			}
		})
	}
}

// TestLookupCatalogAnswersVersion2 checks the answer's layout: what the
// merchant did not state is absent, what they stated as zero is there.
func TestLookupCatalogAnswersVersion2(t *testing.T) {
	c, err := catalog.Parse([]byte(`{"schema":"livehat.catalog/2","currency":"CNY","products":[
	 {"id":"a","name":"A","price":5},
	 {"id":"b","name":"B","price":5,"stock":0,"allergens":[],"shipping":{"fee":0}},
	 {"id":"l","link":3,"name":"L","aliases":["the el"],"price":7,"description":"a longer name wins"}],
	 "coupons":[{"id":"c","name":"C","percent":10}],
	 "promotions":[{"id":"m","title":"M","kind":"multi_buy","products":["a"],"quantity":2,"nth_percent":50}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ query, want string }{
		{`{"schema":"livehat.catalog/2","kind":"product","id":"a"}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","products":[{"id":"a","name":"A","price":5}]}`},
		{`{"schema":"livehat.catalog/2","kind":"product","id":"b"}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","products":[{"id":"b","name":"B","price":5,"stock":0,"allergens":[],"shipping":{"fee":0}}]}`},
		{`{"schema":"livehat.catalog/2","kind":"product","id":"b","names_only":true}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","products":[{"id":"b","name":"B"}]}`},
		{`{"schema":"livehat.catalog/2","kind":"product","text":"the el","names_only":true}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","products":[{"id":"l","link":3,"name":"L","aliases":["the el"]}]}`},
		{`{"schema":"livehat.catalog/2","kind":"product","text":"xyz","names_only":true}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY"}`},
		{`{"schema":"livehat.catalog/2","kind":"coupons","names_only":true}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","coupons":[{"id":"c","name":"C","percent":10}]}`},
		{`{"schema":"livehat.catalog/2","kind":"coupons"}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","coupons":[{"id":"c","name":"C","percent":10}]}`},
		{`{"schema":"livehat.catalog/2","kind":"promotions"}`,
			`{"schema":"livehat.catalog/2","stream":"","currency":"CNY","promotions":[{"id":"m","title":"M","kind":"multi_buy","products":["a"],"quantity":2,"nth_percent":50}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			out, err := LookupCatalog(c, []byte(tc.query))
			if err != nil || string(out) != tc.want {
				t.Errorf("got %s, %v\nwant %s", out, err, tc.want)
			}
		})
	}
	if out, err := LookupCatalog(nil, []byte(`{"schema":"livehat.catalog/2","kind":"coupons"}`)); err != nil ||
		string(out) != `{"schema":"livehat.catalog/2","stream":"","currency":""}` {
		t.Errorf("nil catalog: %s, %v", out, err)
	}
}
