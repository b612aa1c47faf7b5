package hsa

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMappingNestedRenameWrapFlatten(t *testing.T) {
	m := Mapping{Steps: []Step{
		{Op: OpRenameTool, Tool: "get_price", To: "fetchCost"},
		{Op: OpRenameParam, Tool: "fetchCost", Path: []string{"items", ArrayItems}, From: "sku", To: "code"},
		{Op: OpWrap, Tool: "fetchCost", Param: "payload"},
		{Op: OpAddParam, Tool: "fetchCost", Param: "note"},
		{Op: OpFlatten, Tool: "send", Param: "target", Keys: []string{"room", "user"}},
		{Op: OpRenameSkill, From: "price", To: "sk_9x", LoadTool: "load_skill", LoadParam: "skill_id"},
		{Op: OpRenameTool, Tool: "load_skill", To: "open_guide"},
		{Op: OpRenameParam, Tool: "open_guide", From: "skill_id", To: "guide"},
	}}
	cases := []struct{ in, want Call }{
		{Call{"get_price", map[string]any{"items": []any{map[string]any{"sku": "a1", "n": 2.0}}, "cur": "CNY"}},
			Call{"fetchCost", map[string]any{"payload": map[string]any{"items": []any{map[string]any{"code": "a1", "n": 2.0}}, "cur": "CNY"}}}},
		{Call{"send", map[string]any{"target": map[string]any{"room": "r1"}, "text": "hi"}},
			Call{"send", map[string]any{"room": "r1", "text": "hi"}}},
		{Call{"load_skill", map[string]any{"skill_id": "price"}},
			Call{"open_guide", map[string]any{"guide": "sk_9x"}}},
		{Call{"load_skill", map[string]any{"skill_id": "other"}},
			Call{"open_guide", map[string]any{"guide": "other"}}},
		{Call{"untouched", nil}, Call{"untouched", map[string]any{}}},
	}
	for _, c := range cases {
		orig, _ := json.Marshal(c.in)
		got, err := m.Map(c.in)
		if err != nil {
			t.Fatalf("Map(%v): %v", c.in, err)
		}
		if !SameCall(got, c.want) {
			t.Errorf("Map(%v) = %v, want %v", c.in, got, c.want)
		}
		if after, _ := json.Marshal(c.in); string(after) != string(orig) {
			t.Errorf("Map changed its input: %s", after)
		}
		back, err := m.Inverse(got)
		if err != nil {
			t.Fatalf("Inverse(%v): %v", got, err)
		}
		if !SameCall(back, c.in) {
			t.Errorf("Inverse(Map(%v)) = %v", c.in, back)
		}
	}
	// The inverse drops an added optional parameter the model set.
	back, err := m.Inverse(Call{"fetchCost", map[string]any{"payload": map[string]any{}, "note": "x"}})
	if err != nil || !SameCall(back, Call{"get_price", map[string]any{}}) {
		t.Errorf("inverse with added param = %v, %v", back, err)
	}
}

func TestMappingErrors(t *testing.T) {
	m := Mapping{Steps: []Step{
		{Op: OpDropSkill, From: "gone", LoadTool: "load_skill", LoadParam: "skill_id"},
		{Op: OpAddTool, Tool: "get_price_history"},
		{Op: OpAddSkill, To: "weather-tips", LoadTool: "load_skill", LoadParam: "skill_id"},
		{Op: OpFlatten, Tool: "send", Param: "target", Keys: []string{"room"}},
		{Op: OpWrap, Tool: "w", Param: "p"},
	}}
	for _, c := range []Call{
		{"load_skill", map[string]any{"skill_id": "gone"}},
		{"send", map[string]any{"target": map[string]any{"undeclared": 1}}},
		{"send", map[string]any{"target": "not an object"}},
	} {
		if _, err := m.Map(c); err == nil {
			t.Errorf("Map(%v): want an error", c)
		}
	}
	for _, c := range []Call{
		{"get_price_history", nil},
		{"load_skill", map[string]any{"skill_id": "weather-tips"}},
		{"w", map[string]any{"p": map[string]any{}, "extra": 1}},
	} {
		if _, err := m.Inverse(c); err == nil {
			t.Errorf("Inverse(%v): want an error", c)
		} else if !strings.Contains(err.Error(), c.Name) {
			t.Errorf("Inverse(%v): error %q does not name the call", c, err)
		}
	}
}

func TestMappingThenLimitsAndJSON(t *testing.T) {
	a := Mapping{Steps: []Step{{Op: OpLimit, Limit: &LimitChange{Name: "reply_chars", From: 80, To: 60}}}}
	b := Mapping{Steps: []Step{
		{Op: OpLimit, Limit: &LimitChange{Name: "reply_chars", From: 60, To: 50}},
		{Op: OpLimit, Limit: &LimitChange{Name: "tool_rounds", From: 3, To: 4}},
		{Op: OpLimit, Limit: &LimitChange{Name: "retries", From: 1, To: 2}},
		{Op: OpLimit, Limit: &LimitChange{Name: "retries", From: 2, To: 1}},
		{Op: OpCorrection, Correction: &Correction{Flaw: FlawTooLong, Hook: "len", Seed: 3}},
	}}
	ab := a.Then(b)
	want := []LimitChange{{"reply_chars", 80, 50}, {"tool_rounds", 3, 4}}
	if got := ab.Limits(); !reflect.DeepEqual(got, want) {
		t.Errorf("Limits() = %v, want %v", got, want)
	}
	if got := ab.Corrections(); len(got) != 1 || got[0].Flaw != FlawTooLong {
		t.Errorf("Corrections() = %v", got)
	}
	raw, err := json.Marshal(ab)
	if err != nil {
		t.Fatal(err)
	}
	var back Mapping
	if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, ab) {
		t.Errorf("mapping does not survive JSON: %v\n%s", err, raw)
	}
	if len(a.Steps) != 1 {
		t.Error("Then changed its receiver")
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	in := `{"z":1,"a":{"y":[true,null,"<b>"],"b":2.50},"m":"x"}`
	v, err := parseValue([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := encodeValue(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip = %s, want %s", out, in)
	}
	o := v.(*object)
	o.rename("a", "k")
	o.del("z")
	o.set("new", "v")
	out, _ = encodeValue(o)
	if want := `{"k":{"y":[true,null,"<b>"],"b":2.50},"m":"x","new":"v"}`; string(out) != want {
		t.Errorf("edited = %s, want %s", out, want)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `{"a":`} {
		if _, err := parseValue([]byte(bad)); err == nil {
			t.Errorf("parseValue(%s): want an error", bad)
		}
	}
}
