package catalog

import (
	"errors"
	"slices"
	"testing"
)

// TestProblemsCarryCodes: each problem names its kind by a stable code
// with the values its message names, so that a page can word it in its
// reader's language.
func TestProblemsCarryCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    []byte
		path   string
		code   string
		params []string
	}{
		{"required", []byte(`{"schema": "livehat.catalog/2", "products": [{"id": "p1", "price": 1}]}`), "products[0].name", "required", []string{"name"}},
		{"negative", doc(`, "stock": -3`, "", "", ""), "products[0].stock", "negative", []string{"-3"}},
		{"want a type", doc(`, "stock": "ten"`, "", "", ""), "products[0].stock", "want_type", []string{"string", "integer"}},
		{"id taken", doc("", `{"id": "p1", "name": "b", "price": 2}`, "", ""), "products[1].id", "id_taken", []string{"p1", "products", "0"}},
		{"link taken", doc(`, "link": 1`, `{"id": "p2", "name": "b", "price": 2, "link": 1}`, "", ""), "products[1].link", "link_taken", []string{"1", "0"}},
		{"list price below", doc(`, "list_price": 99`, "", "", ""), "products[0].list_price", "list_price_below", []string{"99", "199"}},
		{"variants sum", doc(`, "stock": 5, "variants": [{"axis": "size", "name": "M", "stock": 2}, {"axis": "size", "name": "L", "stock": 2}]`, "", "", ""),
			"products[0].stock", "variants_sum", []string{"5", "4", "size"}},
		{"unit on a text", doc(`, "specs": [{"key": "k", "value": "soft", "unit": "h"}]`, "", "", ""), "products[0].specs[0].unit", "unit_needs_number", []string{"h", "soft"}},
		{"unknown product with a hint", doc("", "", `{"id": "c", "name": "券", "amount": 5, "products": ["p2"]}`, ""), "coupons[0].products[0]", "unknown_product_hint", []string{"p2", "p1"}},
		{"unknown field with a hint", doc(`, "stokc": 1`, "", "", ""), "products[0].stokc", "unknown_field_hint", []string{"stokc", "stock"}},
		{"not one of", doc(`, "stock_state": "gone"`, "", "", ""), "products[0].stock_state", "not_one_of", []string{`"gone"`, "in_stock, low, sold_out, presale"}},
		{"bad date", doc(`, "restock_date": "2026-13-01"`, "", "", ""), "products[0].restock_date", "bad_date", []string{`"2026-13-01"`}},
		{"coupon needs", doc("", "", `{"id": "c", "name": "券"}`, ""), "coupons[0]", "coupon_needs", []string{}},
		{"duplicate field", []byte(`{"schema": "livehat.catalog/2", "products": [], "products": []}`), "products", "duplicate_field", []string{"products"}},
		{"invalid JSON", []byte(`{"products": [}`), "", "invalid_json", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.doc)
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse: %v, want problems", err)
			}
			for _, p := range ps.List {
				if p.Path != tc.path {
					continue
				}
				if p.Code != tc.code || (tc.params != nil && !slices.Equal(p.Params, tc.params)) {
					t.Errorf("%s: code %q params %q, want %q %q (%s)", p.Path, p.Code, p.Params, tc.code, tc.params, p.Message)
				}
				return
			}
			t.Errorf("no problem at %q: %v", tc.path, ps.List)
		})
	}
}
