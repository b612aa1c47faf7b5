package console

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCSVProblemsCarryCodes: every problem the CSV reader finds has a
// stable code, and the catalog editor words each code in Chinese (its
// text in catalog.js), so a merchant reading the page in zh-CN sees no
// English message from an import.
func TestCSVProblemsCarryCodes(t *testing.T) {
	js, err := web.ReadFile("web/static/catalog.js")
	if err != nil {
		t.Fatal(err)
	}
	worded := map[string]bool{}
	for _, m := range regexp.MustCompile(`'catalog\.msg\.([a-z0-9_]+)'`).FindAllStringSubmatch(string(js), -1) {
		worded[m[1]] = true
	}
	header := "id,name,price,stock,stock_state,restock_date,limit_per_buyer,specs,size_chart,variants,returns,return_conditions"
	for _, tc := range []struct {
		name, csv string
		want      []string
	}{
		{"not UTF-8", "id,name,price\n\xff\xfe,x,1\n", []string{"csv_not_utf8"}},
		{"empty", "  \n", []string{"csv_empty"}},
		{"header only", "id,name,price\n", []string{"csv_no_rows"}},
		{"header problems", "id,name,prise,,name,shipping_days,dispatch_hours\n", []string{"csv_unknown_column_hint",
			"csv_empty_column", "csv_column_twice", "csv_missing_column", "csv_both_columns"}},
		{"unknown column far from any", "id,name,price,zzzzzzzzzz\n", []string{"csv_unknown_column"}},
		{"too many fields", "id,name,price\np-a,A,1,extra\n", []string{"csv_too_many_fields"}},
		{"unreadable quote", "id,name,price\np-a,\"A,1\n", []string{"csv_unreadable"}},
		{"bad cells", header + "\n" + `p-a,A,1.2.3,many,sometimes,12/31,0,"k",S:abc,"a:b:c:d:e:f|b:x|c:1:free",maybe,` + "\n",
			[]string{"csv_bad_money", "csv_not_whole", "csv_bad_stock_state", "csv_bad_date", "csv_not_positive",
				"csv_bad_spec", "csv_bad_size_row", "csv_variant_fields", "csv_variant_stock",
				"csv_variant_price", "csv_bad_returns_word"}},
		{"version 1 attributes", "id,name,price,attributes\np-a,A,1,weight\n", []string{"csv_bad_attribute"}},
		{"returns unsaid", "id,name,price,returns,return_conditions\np-a,A,1,退货,\n", []string{"csv_returns_unsaid"}},
		{"conditions alone", "id,name,price,return_conditions\np-a,A,1,仅质量问题\n", []string{"csv_conditions_without_returns"}},
		{"negative days", "id,name,price,return_days\np-a,A,1,-3\n", []string{"csv_negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, probs := parseCatalogCSV([]byte(tc.csv))
			var codes []string
			for _, p := range probs {
				if p.Code == "" {
					t.Errorf("no code: %s", p)
				}
				if !worded[p.Code] {
					t.Errorf("code %s has no Chinese text in catalog.js (%s)", p.Code, p)
				}
				codes = append(codes, p.Code)
			}
			for _, w := range tc.want {
				if !slices.Contains(codes, w) {
					t.Errorf("codes %s, want %s among them", strings.Join(codes, " "), w)
				}
			}
		})
	}
}
