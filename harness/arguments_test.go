package harness

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// orderTool is a tool with a nested argument: an order of items, each
// with a sku and a quantity, and a top-level note.
func orderTool(renames ...ArgumentRename) Tool {
	return Tool{Name: "place_order", Description: "Place an order.", Plugin: "shop", Export: "order",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"lines":{"type":"array","items":{"type":"object","properties":{"code":{"type":"string"},"count":{"type":"integer"}},"required":["code"]}},
			"remark":{"type":"string"}},"required":["lines"]}`),
		ArgumentMap: renames}
}

func TestPluginArguments(t *testing.T) {
	nested := orderTool(
		ArgumentRename{Name: "lines", Plugin: "items"},
		ArgumentRename{Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}},
		ArgumentRename{Name: "remark", Plugin: "note"},
	)
	for _, c := range []struct {
		name string
		tool Tool
		args string
		want string
	}{
		{"no map leaves the bytes alone", orderTool(), `{"lines": [ ], "remark":"x"}`, `{"lines": [ ], "remark":"x"}`},
		{"top level", nested, `{"lines":[],"remark":"gift"}`, `{"items":[],"note":"gift"}`},
		{"inside array items, parent renamed too", nested, `{"lines":[{"code":"A1","count":2},{"code":"B2"}]}`,
			`{"items":[{"count":2,"sku":"A1"},{"sku":"B2"}]}`},
		{"an absent optional argument is left alone", nested, `{"lines":[{"count":1}]}`, `{"items":[{"count":1}]}`},
		{"numbers keep their text", nested, `{"lines":[{"code":"A","count":12345678901234567890}]}`,
			`{"items":[{"count":12345678901234567890,"sku":"A"}]}`},
		{"a value of another shape is left alone", nested, `{"lines":"none"}`, `{"items":"none"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.tool.PluginArguments(json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("PluginArguments(%s) = %s, want %s", c.args, got, c.want)
			}
		})
	}
	swapped := orderTool(ArgumentRename{Name: "remark", Plugin: "lines"}, ArgumentRename{Name: "lines", Plugin: "remark"})
	if got, err := swapped.PluginArguments(json.RawMessage(`{"lines":[],"remark":"r"}`)); err != nil || string(got) != `{"lines":"r","remark":[]}` {
		t.Errorf("two arguments that swap names: %s, %v", got, err)
	}
	if _, err := nested.PluginArguments(json.RawMessage(`{"remark":"a","note":"b"}`)); err == nil || !strings.Contains(err.Error(), `arguments "note" and "remark" would both be "note"`) {
		t.Errorf("a call with both names: %v", err)
	}
	if _, err := nested.PluginArguments(json.RawMessage(`{`)); err == nil || !strings.Contains(err.Error(), "place_order") {
		t.Errorf("broken JSON: %v", err)
	}
}

func TestHarnessArgumentsInvertsPluginArguments(t *testing.T) {
	tool := orderTool(
		ArgumentRename{Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}},
		ArgumentRename{Name: "lines", Plugin: "items"},
	)
	in := `{"lines":[{"code":"A1","count":2}],"remark":"r"}`
	out, err := tool.PluginArguments(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var plugin map[string]any
	if err := json.Unmarshal(out, &plugin); err != nil {
		t.Fatal(err)
	}
	back, err := tool.HarnessArguments(plugin)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(in), &want)
	if !reflect.DeepEqual(back, want) {
		t.Errorf("round trip = %v, want %v", back, want)
	}
}

func TestValidateArgumentMap(t *testing.T) {
	for _, c := range []struct {
		name    string
		renames []ArgumentRename
		want    string // "" when valid
	}{
		{"valid nested", []ArgumentRename{{Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}}, {Name: "remark", Plugin: "note"}}, ""},
		{"unknown argument", []ArgumentRename{{Name: "item_name", Plugin: "query"}},
			`tools[0].argument_map[0]: tool "place_order": argument "item_name" is not a property of the parameters (it has "lines", "remark")`},
		{"bad path", []ArgumentRename{{Name: "code", Plugin: "sku", In: []string{"lines"}}},
			`tools[0].argument_map[0]: tool "place_order": argument "code" is not a property of lines`},
		{"path through a missing property", []ArgumentRename{{Name: "code", Plugin: "sku", In: []string{"rows", ArrayItems}}},
			`in: "rows" is not a property of the parameters`},
		{"empty plugin name", []ArgumentRename{{Name: "remark", Plugin: ""}}, `plugin is empty`},
		{"renamed to itself", []ArgumentRename{{Name: "remark", Plugin: "remark"}}, `renamed to itself`},
		{"renamed twice", []ArgumentRename{{Name: "remark", Plugin: "note"}, {Name: "remark", Plugin: "memo"}}, `tools[0].argument_map[1]: tool "place_order": argument "remark" is renamed twice`},
		{"two reach the plugin under one name", []ArgumentRename{{Name: "remark", Plugin: "x"}, {Name: "lines", Plugin: "x"}}, `two arguments reach the plugin as "x"`},
		{"takes the name of an argument left alone", []ArgumentRename{{Name: "remark", Plugin: "lines"}},
			`"remark" would reach the plugin as "lines", which the argument "lines" of the same name also does`},
		{"swapping two names is fine", []ArgumentRename{{Name: "remark", Plugin: "lines"}, {Name: "lines", Plugin: "remark"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := minimalWithTool(t, orderTool(c.renames...))
			err := Validate(h)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestArgumentMapIsStrictAndRoundTrips checks the file form: the map is
// decoded strictly, survives a marshal round trip and changes the version.
func TestArgumentMapIsStrictAndRoundTrips(t *testing.T) {
	h := minimalWithTool(t, orderTool(ArgumentRename{Name: "remark", Plugin: "note"}))
	doc, err := Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"argument_map": [`) {
		t.Fatalf("marshalled without the map:\n%s", doc)
	}
	back, err := Parse(doc, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version() != h.Version() {
		t.Error("the version changed in a round trip")
	}
	plain := minimalWithTool(t, orderTool())
	if plain.Version() == h.Version() {
		t.Error("the argument map does not change the version")
	}
	typo := strings.Replace(string(doc), `"plugin": "note"`, `"plugins": "note"`, 1)
	if _, err := Parse([]byte(typo), FormatJSON); err == nil || !strings.Contains(err.Error(), `unknown field "plugins"`) {
		t.Errorf("a typo in the map: %v", err)
	}
	c := h.Clone()
	c.Tools[0].ArgumentMap[0].Plugin = "changed"
	if h.Tools[0].ArgumentMap[0].Plugin != "note" {
		t.Error("Clone shares the argument map")
	}
}

// minimalWithTool is testdata/minimal.json with tool as its only tool.
func minimalWithTool(t *testing.T, tool Tool) *Harness {
	t.Helper()
	h, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	h.Tools = []Tool{tool}
	has := false
	for _, s := range h.Layout.Sections {
		has = has || s.Kind == SectionTools
	}
	if !has {
		h.Layout.Sections = append(h.Layout.Sections, Section{Kind: SectionTools})
	}
	return h
}

// FuzzPluginArguments feeds arbitrary arguments to the rename: it never
// panics, returns JSON, and what it gives the plugin reads back the same
// after a trip through the harness's names.
func FuzzPluginArguments(f *testing.F) {
	tool := orderTool(
		ArgumentRename{Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}},
		ArgumentRename{Name: "lines", Plugin: "items"},
		ArgumentRename{Name: "remark", Plugin: "note"},
	)
	f.Add([]byte(`{"lines":[{"code":"A1","count":2}],"remark":"r"}`))
	f.Add([]byte(`{"lines":{"code":1}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"remark":"a","note":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := tool.PluginArguments(data)
		if err != nil {
			return
		}
		var plugin, first any
		if err := decodeNumbers(out, &plugin); err != nil {
			t.Fatalf("PluginArguments returned broken JSON %q: %v", out, err)
		}
		_ = decodeNumbers(out, &first)
		m, ok := plugin.(map[string]any)
		if !ok {
			return
		}
		back, err := tool.HarnessArguments(m)
		if err != nil {
			t.Fatalf("HarnessArguments(%s): %v", out, err)
		}
		raw, _ := json.Marshal(back)
		again, err := tool.PluginArguments(raw)
		if err != nil {
			t.Fatalf("PluginArguments(%s) after a round trip: %v", raw, err)
		}
		var second any
		_ = decodeNumbers(again, &second)
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("%s reached the plugin as %s, and after a round trip as %s", data, out, again)
		}
	})
}

// decodeNumbers decodes JSON keeping numbers as their text, which
// arguments may hold beyond float64's range.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
