package console

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness/catalog"
)

func TestCSVCellNeutralisesFormulas(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"=HYPERLINK(\"http://evil.example\",\"click\")", "'=HYPERLINK(\"http://evil.example\",\"click\")"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"Vitamin C serum", "Vitamin C serum"},
		{"a=b", "a=b"},
		{"12.5", "12.5"},
		{"'quoted", "'quoted"},
		{"", ""},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got := csvCell(c.in); got != c.want {
				t.Errorf("csvCell(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestCatalogCSVExportNeutralisesFormulas(t *testing.T) {
	products := []catalog.Product{{ID: "p-1", Name: "=HYPERLINK(\"http://evil.example\")", Price: 9.5, Category: "@SUM(1)",
		Description: "+cmd", Aliases: []string{"-alias"}}}
	var buf bytes.Buffer
	if err := writeCatalogCSV(&buf, products); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 {
		t.Fatalf("want a header and one row, got %d records", len(records))
	}
	for _, cell := range records[1] {
		if cell != "" && strings.IndexByte(formulaLeads, cell[0]) >= 0 {
			t.Errorf("cell %q is exported as a formula", cell)
		}
	}
	if !slices.Contains(records[1], "'=HYPERLINK(\"http://evil.example\")") || !slices.Contains(records[1], "'@SUM(1)") {
		t.Errorf("the name and category are not neutralised: %q", records[1])
	}
	if !slices.Contains(records[1], "p-1") || !slices.Contains(records[1], "9.5") {
		t.Errorf("plain cells changed: %q", records[1])
	}
}
