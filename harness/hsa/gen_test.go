package hsa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Random harnesses and gold calls for the property tests.

var genWords = []string{"get", "product", "price", "coupon", "stock", "order", "list", "search", "send",
	"user", "size", "color", "review", "reply", "rule", "live", "item", "brand", "check", "apply", "gift", "note"}

func genName(rng *rand.Rand, style nameStyle) string {
	words := make([]string, 1+rng.IntN(3))
	for i := range words {
		words[i] = genWords[rng.IntN(len(genWords))]
	}
	return joinWords(words, style)
}

func genUnique(rng *rand.Rand, taken map[string]bool, style nameStyle) string {
	for {
		n := genName(rng, style)
		if !taken[n] {
			taken[n] = true
			return n
		}
		if rng.IntN(4) == 0 {
			n += fmt.Sprint(rng.IntN(100))
			if !taken[n] {
				taken[n] = true
				return n
			}
		}
	}
}

var (
	enRules = []string{"You must mention the price of the product.", "Do not promise delivery dates.",
		"Always greet viewers politely.", "Keep your reply short, under 80 characters.", "If a viewer asks about coupons, recommend the voucher.",
		"Avoid exaggerating the effects of a product.", "Please answer questions immediately.", "Never make false claims."}
	zhRules = []string{"务必说明商品的价格。", "不要承诺发货时间。", "请礼貌地回复观众。", "回复要简短，不超过80字。",
		"如果观众问到优惠券，立即介绍优惠券。", "禁止夸大商品效果。", "要不要下单由观众决定，不得不停催促。", "例如提到库存时要准确。"}
)

// genSchema returns a random object schema as decoded JSON (maps), so it
// can be marshalled with sorted keys; depth bounds nesting.
func genSchema(rng *rand.Rand, depth int, style nameStyle) map[string]any {
	props := map[string]any{}
	var order []string
	taken := map[string]bool{}
	for range rng.IntN(5) {
		name := genUnique(rng, taken, style)
		props[name] = genProp(rng, depth, style)
		order = append(order, name)
	}
	s := map[string]any{"type": "object", "properties": props}
	var req []any
	for _, n := range order {
		if rng.IntN(2) == 0 {
			req = append(req, n)
		}
	}
	if len(req) > 0 {
		s["required"] = req
	}
	if rng.IntN(2) == 0 {
		s["additionalProperties"] = false
	}
	return s
}

func genProp(rng *rand.Rand, depth int, style nameStyle) map[string]any {
	k := rng.IntN(8)
	if depth <= 0 && k >= 6 {
		k = rng.IntN(6)
	}
	var p map[string]any
	switch k {
	case 0:
		p = map[string]any{"type": "string"}
	case 1:
		p = map[string]any{"type": "string", "enum": []any{"red", "blue", "红色"}}
	case 2:
		p = map[string]any{"type": "integer", "minimum": 1, "maximum": 99}
	case 3:
		p = map[string]any{"type": "number"}
	case 4:
		p = map[string]any{"type": "boolean"}
	case 5:
		p = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 3}
	case 6:
		p = genSchema(rng, depth-1, style)
	default:
		p = map[string]any{"type": "array", "items": genSchema(rng, depth-1, style), "minItems": 1}
	}
	if rng.IntN(2) == 0 {
		p["description"] = enRules[rng.IntN(len(enRules))]
	}
	return p
}

// genHarness returns a valid random harness.
func genHarness(t testing.TB, rng *rand.Rand) *harness.Harness {
	t.Helper()
	zh := rng.IntN(2) == 0
	rules := enRules
	if zh {
		rules = zhRules
	}
	pick := func() string { return rules[rng.IntN(len(rules))] }
	style := nameStyle(rng.IntN(int(numStyles)))
	h := &harness.Harness{Name: "gen", Layout: harness.Layout{Style: []harness.LayoutStyle{harness.StyleMarkdown, harness.StyleXML, harness.StylePlain}[rng.IntN(3)]}}
	h.Layout.Sections = []harness.Section{
		{Kind: harness.SectionPersona, Title: "Persona", Text: pick()},
		{Kind: harness.SectionRules, Title: "规则", Items: []string{pick(), pick(), pick()}},
		{Kind: harness.SectionSkills, Title: "Skills"},
		{Kind: harness.SectionTools, Title: "Tools", Text: "Call {load_skill} before replying."},
		{Kind: harness.SectionOutputFormat, Items: []string{pick()}},
	}
	taken := map[string]bool{}
	for range 1 + rng.IntN(5) {
		s := harness.Skill{ID: genUnique(rng, taken, style), Kind: harness.SkillStrategy, Description: pick()}
		if rng.IntN(2) == 0 {
			s.Kind = harness.SkillReply
		}
		for range 1 + rng.IntN(4) {
			s.Rules = append(s.Rules, harness.Rule{Text: pick(), Essential: rng.IntN(3) == 0})
		}
		h.Skills = append(h.Skills, s)
	}
	h.Skills[0].Kind = harness.SkillReply
	toolTaken := map[string]bool{harness.DefaultLoadSkillTool: true}
	for range 1 + rng.IntN(4) {
		schema := genSchema(rng, 2, nameStyle(rng.IntN(2)))
		if rng.IntN(4) == 0 {
			// A reference into $defs, which structural edits must keep resolvable.
			schema["$defs"] = map[string]any{"money": map[string]any{"type": "object",
				"properties": map[string]any{"amount": map[string]any{"type": "number"}}, "required": []any{"amount"}}}
			schema["properties"].(map[string]any)["budget_zz"] = map[string]any{"$ref": "#/$defs/money"}
		}
		raw, err := json.Marshal(schema)
		if err != nil {
			t.Fatal(err)
		}
		name := genUnique(rng, toolTaken, nameStyle(rng.IntN(2)))
		h.Tools = append(h.Tools, harness.Tool{Name: name, Description: pick() + " Uses `" + name + "`.",
			Parameters: raw, Plugin: "shop", Export: "tool_" + fmt.Sprint(len(h.Tools))})
	}
	if rng.IntN(3) == 0 {
		// A required object parameter, which tool-wrap-flatten can lift.
		h.Tools = append(h.Tools, harness.Tool{Name: "set_filter", Description: "Filter the catalog.", Plugin: "shop", Export: "filter",
			Parameters: json.RawMessage(`{"type":"object","properties":{"filter":{"type":"object","properties":{"brand":{"type":"string"},"max_price":{"type":"number"}},"required":["brand"],"additionalProperties":false},"page":{"type":"integer"}},"required":["filter"]}`)})
	}
	if rng.IntN(2) == 0 {
		cfg, _ := json.Marshal(map[string]any{"tools": []string{h.Tools[0].Name}, "max": 3})
		h.Hooks = append(h.Hooks, harness.Hook{Name: "compliance", Event: harness.EventAfterResponse, Plugin: "guard", Export: "check", Config: cfg})
	}
	if rng.IntN(3) == 0 {
		h.Hooks = append(h.Hooks, harness.Hook{Name: "classify", Event: harness.EventViewerMessage, Plugin: "guard", Export: "classify"})
	}
	h.Pipeline = harness.Pipeline{
		ReplyChars:        harness.Limit{Value: 80, Min: 20, Max: 200},
		ToolRounds:        harness.Limit{Value: 3, Min: 1, Max: 6},
		Retries:           harness.Limit{Value: 1, Min: 0, Max: 3},
		RequireReplySkill: rng.IntN(2) == 0,
		Injection:         harness.Injection{Format: []harness.InjectFormat{"", harness.InjectTags, harness.InjectJSON, harness.InjectProse}[rng.IntN(4)]},
	}
	if rng.IntN(3) == 0 {
		h.Pipeline.LoadSkillTool, h.Pipeline.LoadSkillParam = "read_skill", "name"
	}
	if err := harness.Validate(h); err != nil {
		t.Fatalf("generated harness is invalid: %v", err)
	}
	return h
}

// genValue returns a random instance of schema s (decoded JSON); root
// resolves local references.
func genValue(rng *rand.Rand, s, root map[string]any) any {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return genValue(rng, root["$defs"].(map[string]any)[name].(map[string]any), root)
	}
	if enum, ok := s["enum"].([]any); ok {
		return enum[rng.IntN(len(enum))]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, x := range r {
				req[x.(string)] = true
			}
		}
		for k, ps := range props {
			if req[k] || rng.IntN(2) == 0 {
				out[k] = genValue(rng, ps.(map[string]any), root)
			}
		}
		return out
	case "array":
		n := rng.IntN(3)
		if min, ok := s["minItems"].(float64); ok && n < int(min) {
			n = int(min)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = genValue(rng, s["items"].(map[string]any), root)
		}
		return out
	case "integer":
		return float64(1 + rng.IntN(99))
	case "number":
		return rng.Float64() * 100
	case "boolean":
		return rng.IntN(2) == 0
	}
	return genWords[rng.IntN(len(genWords))]
}

// genCalls returns random gold calls valid under h: two calls of most
// tools (some are left out, so masking has something to drop) and a
// load-skill call.
func genCalls(t testing.TB, rng *rand.Rand, h *harness.Harness) []Call {
	t.Helper()
	var calls []Call
	for i, tool := range h.Tools {
		if i > 0 && rng.IntN(4) == 0 {
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(tool.Parameters, &s); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			calls = append(calls, Call{Name: tool.Name, Arguments: genValue(rng, s, s).(map[string]any)})
		}
	}
	id := h.Skills[rng.IntN(len(h.Skills))].ID
	calls = append(calls, Call{Name: h.LoadSkillToolName(), Arguments: map[string]any{h.LoadSkillParamName(): id}})
	return calls
}

// schemas compiles every tool schema of h (the load-skill tool's
// included) with jsonschema/v6 directly, not through package harness.
func schemas(h *harness.Harness) (map[string]*jsonschema.Schema, error) {
	return schemaCache{}.schemas(h)
}

// schemaCache reuses compiled schemas across the variants of one
// harness, most of whose tools a family leaves byte-identical.
type schemaCache map[string]*jsonschema.Schema

func (c schemaCache) schemas(h *harness.Harness) (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for _, tool := range h.AllTools() {
		if sch, ok := c[string(tool.Parameters)]; ok {
			out[tool.Name] = sch
			continue
		}
		sch, err := compileSchema(tool.Parameters)
		if err == nil {
			c[string(tool.Parameters)] = sch
		}
		if err != nil {
			return nil, fmt.Errorf("tool %q: schema does not compile: %w\n%s", tool.Name, err, tool.Parameters)
		}
		out[tool.Name] = sch
	}
	return out, nil
}

// checkCall validates a call against the compiled tool schemas.
func checkCall(schemas map[string]*jsonschema.Schema, c Call) error {
	sch, ok := schemas[c.Name]
	if !ok {
		return fmt.Errorf("no tool %q", c.Name)
	}
	raw, err := json.Marshal(c.Arguments)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("call %s %s: %w", c.Name, raw, err)
	}
	return nil
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://params.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem://params.json")
}
