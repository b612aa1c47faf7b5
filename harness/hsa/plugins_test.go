package hsa

import (
	"encoding/json"
	"testing"

	"github.com/livehat/livehat/harness"
)

// TestFromPlugins maps the live room's gold calls, written in the
// plugins' names, to an operator's renamed harness and back.
func TestFromPlugins(t *testing.T) {
	tool := func(name, export, params string, renames ...harness.ArgumentRename) harness.Tool {
		return harness.Tool{Name: name, Description: "d", Plugin: "storefront", Export: export, Parameters: json.RawMessage(params), ArgumentMap: renames}
	}
	lookup := `{"type":"object","properties":{"item_name":{"type":"string"}},"required":["item_name"]}`
	pair := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`
	for _, c := range []struct {
		name  string
		tools []harness.Tool
		gold  Call
		want  Call
	}{
		{"nothing renamed", []harness.Tool{tool("product_lookup", "product_lookup", `{"type":"object","properties":{"query":{"type":"string"}}}`)},
			Call{Name: "product_lookup", Arguments: map[string]any{"query": "serum"}}, Call{Name: "product_lookup", Arguments: map[string]any{"query": "serum"}}},
		{"tool and argument renamed", []harness.Tool{tool("item_lookup", "product_lookup", lookup, harness.ArgumentRename{Name: "item_name", Plugin: "query"})},
			Call{Name: "product_lookup", Arguments: map[string]any{"query": "serum"}}, Call{Name: "item_lookup", Arguments: map[string]any{"item_name": "serum"}}},
		{"two tools swap names", []harness.Tool{tool("check_stock", "send_link", pair), tool("send_link", "check_stock", pair)},
			Call{Name: "send_link", Arguments: map[string]any{"a": "x"}}, Call{Name: "check_stock", Arguments: map[string]any{"a": "x"}}},
		{"two arguments swap names", []harness.Tool{tool("pair", "pair", pair, harness.ArgumentRename{Name: "a", Plugin: "b"}, harness.ArgumentRename{Name: "b", Plugin: "a"})},
			Call{Name: "pair", Arguments: map[string]any{"a": "1", "b": "2"}}, Call{Name: "pair", Arguments: map[string]any{"a": "2", "b": "1"}}},
		{"the load-skill tool renamed", nil,
			Call{Name: "load_skill", Arguments: map[string]any{"skill_id": "price"}}, Call{Name: "open_skill", Arguments: map[string]any{"id": "price"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &harness.Harness{Tools: c.tools, Skills: []harness.Skill{{ID: "price"}},
				Pipeline: harness.Pipeline{LoadSkillTool: "open_skill", LoadSkillParam: "id"}}
			if c.tools != nil {
				h.Pipeline = harness.Pipeline{}
			}
			m := FromPlugins(h)
			got, err := m.Map(c.gold)
			if err != nil {
				t.Fatal(err)
			}
			if !SameCall(got, c.want) {
				t.Errorf("Map(%v) = %v, want %v", c.gold, got, c.want)
			}
			back, err := m.Inverse(got)
			if err != nil || !SameCall(back, c.gold) {
				t.Errorf("Inverse(%v) = %v, %v; want %v", got, back, err, c.gold)
			}
			if len(m.ExceptArgumentRenames().Steps) != len(m.Steps)-countOp(m, OpRenameParam) {
				t.Error("ExceptArgumentRenames kept an argument rename")
			}
		})
	}
}

func countOp(m Mapping, op Op) int {
	n := 0
	for _, s := range m.Steps {
		if s.Op == op {
			n++
		}
	}
	return n
}
