package catalog

import (
	"errors"
	"testing"
)

// FuzzParse holds Parse to its contract on any input: it never panics, a
// refusal is a *Problems whose every problem has a place, a message and a code,
// and every accepted document round-trips through json.Marshal.
func FuzzParse(f *testing.F) {
	for _, path := range []string{everyFieldPath, demoPath, demoV1Path, "testdata/v1-every-field.json"} {
		f.Add(readFile(f, path))
	}
	f.Add(edgeValues)
	for _, seed := range []string{
		`{"schema": "livehat.catalog/2", "currency": "CNY", "products": []}`,
		string(doc(`, "stock": 3, "variants": [{"name": "M", "stock": 3, "axis": "size"}], "specs": [{"key": "k", "value": 1.5, "unit": "h"}]`, "",
			`{"id": "c", "name": "券", "percent": 10, "starts": "2026-12-01T20:00:00+08:00"}`,
			`{"id": "x", "title": "t", "kind": "multi_buy", "quantity": 2, "nth_percent": 50, "products": ["p1"]}`)),
		string(doc(`, "pirce": 1, "stock": 1e30`, `{"id": "p1", "name": " ", "price": -1}`, "", "")),
		`{"currency": "CNY", "products": [{"id": "p", "name": "x", "price": 1, "shipping": {"days": 2, "return_days": 0}}]}`,
		`[`, ``, `{"schema": 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error %v is a %T, want *Problems", err, err)
			}
			if len(ps.List) == 0 || len(ps.List) > MaxProblems {
				t.Fatalf("%d problems listed", len(ps.List))
			}
			for _, p := range ps.List {
				if p.Message == "" || p.Code == "" || p.Line < 1 || p.Column < 1 {
					t.Fatalf("problem without a place, a message or a code: %#v", p)
				}
			}
			return
		}
		assertRoundTrip(t, c)
	})
}
