package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

// A tool whose arguments are wrapped in one object names its catalog,
// query and variant arguments inside it; binding, validation and reading
// a call follow the name there.
func TestWrappedArguments(t *testing.T) {
	tool := Tool{Name: "stock", Parameters: json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object",
		"properties":{"item_id":{"type":"string"},"variant":{"type":"string"},"note":{"type":"integer"}},"required":["item_id"]}},"required":["spec"]}`),
		CatalogArgs: []string{"spec.item_id"}, VariantArgs: []string{"spec.variant"}}
	for _, tc := range []struct {
		name     string
		variants []string
		want     string // the bound spec's properties
	}{
		{"held", []string{"M", "L"}, `{"item_id":{"enum":["SE1","CR2"],"type":"string"},"note":{"type":"integer"},"variant":{"enum":["M","L"],"type":"string"}}`},
		{"no variants", []string{}, `{"item_id":{"enum":["SE1","CR2"],"type":"string"},"note":{"type":"integer"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound, err := tool.CatalogParameters([]string{"SE1", "CR2"}, nil, tc.variants)
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Properties struct {
					Spec struct {
						Properties json.RawMessage `json:"properties"`
					} `json:"spec"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(bound, &schema); err != nil {
				t.Fatal(err)
			}
			if got := string(schema.Properties.Spec.Properties); got != tc.want {
				t.Errorf("spec's properties %s, want %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"spec.item_id"}, ""},
		{[]string{"spec.nowhere"}, "not a property"},
		{[]string{"nowhere.item_id"}, "not a property"},
		{[]string{"spec.note"}, "has type \"integer\""},
		{[]string{"spec"}, "has type \"object\""},
	} {
		err := checkCatalogArgs(tool.Parameters, tc.args, "a catalog id")
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
		}
	}
	if !requiredArg(tool.Parameters, "spec.item_id") || requiredArg(tool.Parameters, "spec.variant") {
		t.Error("required inside the wrapper: want item_id, not variant")
	}
	args := map[string]any{"spec": map[string]any{"item_id": "SE1"}, "top": "x"}
	for _, tc := range []struct {
		name string
		want any
		ok   bool
	}{
		{"spec.item_id", "SE1", true},
		{"top", "x", true},
		{"spec.variant", nil, false},
		{"top.item_id", nil, false},
		{"nowhere", nil, false},
	} {
		if got, ok := ArgValue(args, tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("ArgValue(%q) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A count argument is held to the counts the viewer stated, or left out
// where they stated none, so the plugin's default of one stands.
func TestCountParameters(t *testing.T) {
	tool := Tool{Name: "coupon", Parameters: json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"},
		"quantity":{"type":"integer","minimum":1}},"required":["item_id"]}`), CountArgs: []string{"quantity"}}
	for _, tc := range []struct {
		name   string
		counts []int
		want   string
	}{
		{"held", []int{3}, `{"item_id":{"type":"string"},"quantity":{"enum":[3],"minimum":1,"type":"integer"}}`},
		{"left out", nil, `{"item_id":{"type":"string"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tool.CountParameters(tool.Parameters, tc.counts)
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Properties json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(out, &schema); err != nil {
				t.Fatal(err)
			}
			if string(schema.Properties) != tc.want {
				t.Errorf("properties %s, want %s", schema.Properties, tc.want)
			}
		})
	}
	if out, _ := (Tool{Parameters: tool.Parameters}).CountParameters(tool.Parameters, nil); string(out) != string(tool.Parameters) {
		t.Error("a tool without count arguments changed")
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"quantity"}, ""},
		{[]string{"item_id"}, "type \"integer\""},
		{[]string{"nowhere"}, "not a property"},
		{[]string{"quantity", "quantity"}, "twice"},
	} {
		err := checkCountArgs(tool.Parameters, tc.args)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
		}
	}
}
