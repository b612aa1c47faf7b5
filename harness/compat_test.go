package harness

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
)

// demoPlugins reads what the example plugins of the demo harness declare
// from their manifests, as a console would from the installed versions.
func demoPlugins(t *testing.T) map[string]PluginExports {
	t.Helper()
	out := map[string]PluginExports{}
	for _, dir := range examples.DemoPlugins() {
		raw, err := os.ReadFile("../examples/plugins/" + dir + "/plugin.json")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Name, Version string
			Tools         []struct {
				Name       string
				Parameters json.RawMessage
			}
			Hooks []struct{ Name string }
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		p := PluginExports{Label: m.Name + "@" + m.Version, Tools: map[string]json.RawMessage{}}
		for _, tool := range m.Tools {
			p.Tools[tool.Name] = tool.Parameters
		}
		for _, h := range m.Hooks {
			p.Hooks = append(p.Hooks, h.Name)
		}
		out[m.Name] = p
	}
	return out
}

// toolNamed returns a pointer to h's tool of that name.
func toolNamed(t *testing.T, h *Harness, name string) *Tool {
	t.Helper()
	for i := range h.Tools {
		if h.Tools[i].Name == name {
			return &h.Tools[i]
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func TestCheckPlugins(t *testing.T) {
	demo, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	installed := demoPlugins(t)
	for _, c := range []struct {
		name string
		edit func(t *testing.T, h *Harness)
		drop string   // a plugin to leave uninstalled
		want []string // substrings of the problems, in order; none: compatible
		path string   // the first problem's path
	}{
		{name: "the demo as it ships", edit: func(*testing.T, *Harness) {}},
		{name: "a renamed tool keeps its export", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "product_lookup").Name = "item_lookup"
		}},
		{name: "descriptions are the harness's own", edit: func(t *testing.T, h *Harness) {
			tool := toolNamed(t, h, "product_lookup")
			tool.Description = "Find an item."
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What the viewer called it."}},"required":["query"],"additionalProperties":false}`)
		}},
		{name: "an argument renamed without a map", edit: func(t *testing.T, h *Harness) {
			tool := toolNamed(t, h, "product_lookup")
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"item_name":{"type":"string"}},"required":["item_name"],"additionalProperties":false}`)
			tool.QueryArgs = []string{"item_name"}
		}, want: []string{
			`tool "product_lookup" argument "item_name" (plugin storefront@1.0.0, export "product_lookup"): it reaches the plugin as "item_name", which the plugin does not declare (it declares "query"); if it stands for the plugin's "query", add {"name": "item_name", "plugin": "query"} to argument_map`,
			`tool "product_lookup" (plugin storefront@1.0.0, export "product_lookup"): the plugin requires argument "query", which no argument of the harness tool reaches it as; if "item_name" stands for it, add {"name": "item_name", "plugin": "query"} to argument_map`,
		}, path: "tools[0].parameters.properties.item_name"},
		{name: "an argument renamed through the map", edit: func(t *testing.T, h *Harness) {
			tool := toolNamed(t, h, "product_lookup")
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"item_name":{"type":"string"}},"required":["item_name"],"additionalProperties":false}`)
			tool.ArgumentMap = []ArgumentRename{{Name: "item_name", Plugin: "query"}}
			tool.QueryArgs = []string{"item_name"}
		}},
		{name: "a required argument made optional", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "send_link").Parameters = json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"}},"additionalProperties":false}`)
		}, want: []string{`tool "send_link" argument "item_id" (plugin storefront@1.0.0, export "send_link"): is optional in the harness tool, but the plugin requires it`},
			path: "tools[4].parameters.properties.item_id"},
		{name: "a wider type, enum and bound", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "coupon_check").Parameters = json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"},"quantity":{"type":"number","minimum":0,"maximum":99}},"required":["item_id"],"additionalProperties":false}`)
			toolNamed(t, h, "shipping_policy").Parameters = json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"},"region":{"type":["string","null"],"enum":["mainland","moon"]}},"required":["item_id"],"additionalProperties":false}`)
		}, want: []string{
			`tool "coupon_check" argument "quantity" (plugin storefront@1.0.0, export "coupon_check"): the harness tool allows a number, and the plugin accepts only integer`,
			`argument "quantity" (plugin storefront@1.0.0, export "coupon_check"): the plugin wants minimum 1, and the harness tool allows minimum 0`,
			`tool "shipping_policy" argument "region" (plugin storefront@1.0.0, export "shipping_policy"): the harness tool allows a null, and the plugin accepts only string`,
			`tool "shipping_policy" argument "region" (plugin storefront@1.0.0, export "shipping_policy"): the harness tool allows "moon", which the plugin's enum ["mainland","hk_mo_tw","overseas"] does not`,
		}, path: "tools[2].parameters.properties.quantity"},
		{name: "an enum the harness leaves open", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "shipping_policy").Parameters = json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"},"region":{"type":"string"}},"required":["item_id"],"additionalProperties":false}`)
		}, want: []string{`argument "region" (plugin storefront@1.0.0, export "shipping_policy"): the plugin accepts only ["mainland","hk_mo_tw","overseas"], and the harness tool allows any value`}},
		{name: "extra arguments the plugin refuses", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "send_link").Parameters = json.RawMessage(`{"type":"object","properties":{"item_id":{"type":"string"},"note":{"type":"string"}},"required":["item_id"]}`)
		}, want: []string{
			`tool "send_link" argument "note" (plugin storefront@1.0.0, export "send_link"): it reaches the plugin as "note", which the plugin does not declare`,
			`tool "send_link" (plugin storefront@1.0.0, export "send_link"): the harness tool lets the model send arguments the plugin does not declare`,
		}},
		{name: "an export the plugin does not declare", edit: func(t *testing.T, h *Harness) {
			toolNamed(t, h, "send_link").Export = "pin_link"
		}, want: []string{`tool "send_link": plugin storefront@1.0.0 declares no tool "pin_link" (its tools: "check_stock", "coupon_check", "product_lookup", "send_link", "shipping_policy")`},
			path: "tools[4].export"},
		{name: "a hook export the plugin does not declare", edit: func(t *testing.T, h *Harness) {
			h.Hooks[1].Export = "check"
		}, want: []string{`hook "compliance": plugin compliance@1.0.0 declares no hook "check" (its hooks: "check_reply")`}, path: "hooks[1].export"},
		{name: "a plugin that is not installed", edit: func(*testing.T, *Harness) {}, drop: "storefront",
			want: []string{`tool "product_lookup": plugin "storefront" is not installed and enabled`}, path: "tools[0].plugin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := demo.Clone()
			c.edit(t, h)
			if err := Validate(h); err != nil {
				t.Fatalf("the edit makes the harness invalid: %v", err)
			}
			plugins := map[string]PluginExports{}
			for k, v := range installed {
				if k != c.drop {
					plugins[k] = v
				}
			}
			err := CheckPlugins(h, plugins)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("CheckPlugins: %v", err)
				}
				return
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("CheckPlugins = %v, want an ErrorList", err)
			}
			text := err.Error()
			at := 0
			for _, w := range c.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("problems lack (in order) %q:\n%s", w, text)
				}
				at += i + len(w)
			}
			if c.path != "" && list[0].Path != c.path {
				t.Errorf("first problem at %q, want %q", list[0].Path, c.path)
			}
			if c.drop != "" {
				if len(list) != len(demo.Tools) {
					t.Errorf("%d problems for %d tools of a missing plugin:\n%s", len(list), len(demo.Tools), text)
				}
				if err := CheckInstalledPlugins(h, plugins); err != nil {
					t.Errorf("CheckInstalledPlugins reports a missing plugin: %v", err)
				}
				if got := MissingPlugins(h, plugins); len(got) != 1 || got[0] != c.drop {
					t.Errorf("MissingPlugins = %v, want [%s]", got, c.drop)
				}
			} else if err := CheckInstalledPlugins(h, plugins); err == nil || err.Error() != text {
				t.Errorf("CheckInstalledPlugins = %v, want the same problems as CheckPlugins", err)
			}
		})
	}
}

// TestCheckPluginsNested compares schemas below the top level, through a
// renamed parent and array items.
func TestCheckPluginsNested(t *testing.T) {
	plugin := map[string]PluginExports{"shop": {Label: "shop@2.0.0", Tools: map[string]json.RawMessage{"order": json.RawMessage(`{"type":"object",
		"properties":{"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"count":{"type":"integer","maximum":5}},"required":["sku"],"additionalProperties":false}}},
		"required":["items"],"additionalProperties":false}`)}}}
	for _, c := range []struct {
		name    string
		renames []ArgumentRename
		count   string
		want    string
	}{
		{"mapped at both levels", []ArgumentRename{{Name: "lines", Plugin: "items"}, {Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}}}, `{"type":"integer","maximum":5}`, ""},
		{"the nested rename missing", []ArgumentRename{{Name: "lines", Plugin: "items"}}, `{"type":"integer","maximum":5}`,
			`tool "place_order" argument "lines[].code" (plugin shop@2.0.0, export "order"): it reaches the plugin as "code"`},
		{"a nested bound wider", []ArgumentRename{{Name: "lines", Plugin: "items"}, {Name: "code", Plugin: "sku", In: []string{"lines", ArrayItems}}}, `{"type":"integer","maximum":50}`,
			`argument "lines[].count" (plugin shop@2.0.0, export "order"): the plugin wants maximum 5, and the harness tool allows maximum 50`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := Tool{Name: "place_order", Description: "d", Plugin: "shop", Export: "order", ArgumentMap: c.renames,
				Parameters: json.RawMessage(`{"type":"object","properties":{"lines":{"type":"array","items":{"type":"object","properties":{"code":{"type":"string"},"count":` + c.count +
					`},"required":["code"],"additionalProperties":false}}},"required":["lines"],"additionalProperties":false}`)}
			h := minimalWithTool(t, tool)
			if err := Validate(h); err != nil {
				t.Fatal(err)
			}
			err := CheckPlugins(h, plugin)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckPlugins: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckPlugins = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestLocate places compatibility problems in the document they came from.
func TestLocate(t *testing.T) {
	demo, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	h := demo.Clone()
	toolNamed(t, h, "send_link").Export = "pin_link"
	for _, format := range []Format{FormatJSON, FormatYAML} {
		t.Run(string(format), func(t *testing.T) {
			doc, err := Marshal(h)
			if format == FormatYAML {
				doc, err = MarshalYAML(h)
			}
			if err != nil {
				t.Fatal(err)
			}
			located := Locate(doc, format, CheckPlugins(h, demoPlugins(t)))
			var list ErrorList
			if !errors.As(located, &list) || len(list) != 1 {
				t.Fatalf("Locate = %v", located)
			}
			line := strings.Split(string(doc), "\n")[list[0].Line-1]
			if !strings.Contains(line, "pin_link") {
				t.Errorf("problem placed at line %d %q, not at the export", list[0].Line, line)
			}
		})
	}
}

// FuzzCheckPlugins compares arbitrary parameter schemas with arbitrary
// declared ones: the check never panics, and a schema always fits itself.
func FuzzCheckPlugins(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"q":{"type":"string","enum":["a"]}},"required":["q"],"additionalProperties":false}`),
		[]byte(`{"type":"object","properties":{"query":{"type":["string","null"],"maxLength":5}},"required":["query"]}`))
	f.Add([]byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}}}}`),
		[]byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"number","minimum":2}}}}}}`))
	f.Add([]byte(`{"type":"object","anyOf":[{}]}`), []byte(`{"type":"object","properties":{"x":{"$ref":"#"}}}`))
	f.Fuzz(func(t *testing.T, params, declared []byte) {
		if !json.Valid(params) {
			return
		}
		tool := Tool{Name: "t", Description: "d", Plugin: "p", Export: "e", Parameters: params}
		h := &Harness{Tools: []Tool{tool}}
		_ = CheckPlugins(h, map[string]PluginExports{"p": {Label: "p@1.0.0", Tools: map[string]json.RawMessage{"e": declared}}})
		var obj map[string]any
		if json.Unmarshal(params, &obj) != nil {
			return
		}
		if err := CheckPlugins(h, map[string]PluginExports{"p": {Label: "p@1.0.0", Tools: map[string]json.RawMessage{"e": params}}}); err != nil {
			t.Fatalf("a schema does not fit itself: %s\n%v", params, err)
		}
	})
}
