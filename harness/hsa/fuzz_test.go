package hsa

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fuzzHarness is a small fixed harness with nested, array, enum and
// reference parameters, zh and en text, hooks and custom conventions.
func fuzzHarness() *harness.Harness {
	return &harness.Harness{
		Name: "fuzz",
		Layout: harness.Layout{Style: harness.StyleMarkdown, Sections: []harness.Section{
			{Kind: harness.SectionPersona, Title: "人设", Text: "你是直播间主播小美。"},
			{Kind: harness.SectionRules, Title: "Rules", Items: []string{"Do not promise delivery dates.", "回复不超过80字。"}},
			{Kind: harness.SectionSkills, Title: "Skills", Text: "Call {load_skill} first."},
			{Kind: harness.SectionTools, Title: "Tools"},
			{Kind: harness.SectionOutputFormat, Title: "Output", Items: []string{"Keep it under 80 characters."}, Format: harness.ListNumbered},
		}},
		Skills: []harness.Skill{
			{ID: "price_reply", Kind: harness.SkillReply, Description: "Answer price questions.", Rules: []harness.Rule{{Text: "You must state the price.", Essential: true}, {Text: "Mention coupons if any."}}},
			{ID: "coupon-push", Kind: harness.SkillStrategy, Description: "如果很多观众问价格，推送优惠券。", Rules: []harness.Rule{{Text: "务必先调用 `send_coupon`。"}}},
		},
		Tools: []harness.Tool{
			{Name: "get_price", Description: "Get the current price of an item.", Plugin: "shop", Export: "price",
				Parameters: json.RawMessage(`{"type":"object","properties":{"item":{"type":"object","properties":{"sku":{"type":"string"},"color":{"enum":["red","blue"]}},"required":["sku"],"additionalProperties":false},"qty":{"type":"integer","minimum":1}},"required":["item"],"additionalProperties":false}`)},
			{Name: "send_coupon", Description: "推送优惠券给观众。", Plugin: "shop", Export: "coupon",
				Parameters: json.RawMessage(`{"type":"object","$defs":{"c":{"type":"string"}},"properties":{"codes":{"type":"array","items":{"type":"object","properties":{"code":{"$ref":"#/$defs/c"}},"required":["code"]}},"loud":{"type":"boolean"}},"required":["codes"]}`)},
		},
		Hooks: []harness.Hook{{Name: "compliance", Event: harness.EventAfterResponse, Plugin: "guard", Export: "check", Config: json.RawMessage(`{"tools":["send_coupon"]}`)}},
		Pipeline: harness.Pipeline{
			ReplyChars: harness.Limit{Value: 80, Min: 30, Max: 160}, ToolRounds: harness.Limit{Value: 2, Min: 1, Max: 4},
			Retries: harness.Limit{Value: 1, Min: 0, Max: 2}, RequireReplySkill: true,
			LoadSkillTool: "open_skill", Injection: harness.Injection{Format: harness.InjectTags, Position: harness.InjectSystem},
		},
	}
}

func fuzzGold() []Call {
	return []Call{
		{Name: "get_price", Arguments: map[string]any{"item": map[string]any{"sku": "A1", "color": "red"}, "qty": 2.0}},
		{Name: "send_coupon", Arguments: map[string]any{"codes": []any{map[string]any{"code": "X"}}, "loud": true}},
		{Name: "open_skill", Arguments: map[string]any{"skill_id": "price_reply"}},
	}
}

// FuzzFamilies applies random families with random seeds, alone and
// composed through Augment: no panic, and every variant validates, its
// schemas compile and the gold survives the round trip.
func FuzzFamilies(f *testing.F) {
	for i := range 8 {
		f.Add(int64(i), uint8(i*5), uint8(i%4))
	}
	base := fuzzHarness()
	if err := harness.Validate(base); err != nil {
		f.Fatalf("fuzz harness is invalid: %v", err)
	}
	baseSchemas, err := schemas(base)
	if err != nil {
		f.Fatal(err)
	}
	fams := Families()
	f.Fuzz(func(t *testing.T, seed int64, fam uint8, n uint8) {
		gold := fuzzGold()
		// send_coupon is left unprotected, so tool-mask may drop it.
		opts := Options{Gold: []Call{gold[0], gold[2]}}
		var (
			nh *harness.Harness
			m  Mapping
		)
		if n == 0 {
			family := fams[int(fam)%len(fams)]
			var err error
			nh, m, err = family.Apply(base, seed, opts)
			if errors.Is(err, ErrNotApplicable) {
				return
			}
			if err != nil {
				t.Fatalf("%s seed %d: %v", family.Name, seed, err)
			}
		} else {
			pool := []Pool{PoolTrain, PoolHeldOut}[fam%2]
			var rec Record
			var err error
			nh, rec, err = Augment(base, pool, seed, 1+int(n%5), opts)
			if err != nil {
				t.Fatalf("augment %s seed %d n %d: %v", pool, seed, 1+n%5, err)
			}
			m = rec.Mapping()
		}
		checkVariantFuzz(t, baseSchemas, nh, m, gold)
	})
}

func checkVariantFuzz(t *testing.T, base map[string]*jsonschema.Schema, nh *harness.Harness, m Mapping, gold []Call) {
	t.Helper()
	if err := harness.Validate(nh); err != nil {
		t.Fatalf("invalid variant: %v\nsteps %+v", err, m.Steps)
	}
	compiled, err := schemas(nh)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range gold {
		mc, err := m.Map(c)
		if err != nil {
			if c.Name == "send_coupon" && slices.ContainsFunc(m.Steps, func(s Step) bool { return s.Op == OpDropTool }) {
				continue // the unprotected tool was masked: its gold has no counterpart
			}
			t.Fatalf("map %v: %v", c, err)
		}
		if err := checkCall(compiled, mc); err != nil {
			t.Fatalf("mapped gold: %v\nsteps %+v", err, m.Steps)
		}
		back, err := m.Inverse(mc)
		if err != nil || !SameCall(back, c) {
			t.Fatalf("Inverse(Map(%v)) = %v, %v", c, back, err)
		}
		if err := checkCall(base, back); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzToolSchema feeds arbitrary parameter schemas to the families (the
// seed picks one): no panic on any input, and a valid harness always
// gives a valid variant whose schemas compile.
func FuzzToolSchema(f *testing.F) {
	fams := Families()
	for i, s := range []string{
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["a"]}`,
		`{"type":"object","properties":{"x":{"$ref":"#/properties/y"},"y":{"type":"integer"}}}`,
		`{"type":"object","properties":5}`,
		`{"type":"object","required":["a","a"],"properties":{"a":{}}}`,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"k":{}}}}}}}`,
		`[]`, `{`, ``,
	} {
		for j := range fams {
			f.Add(s, int64(i*len(fams)+j))
		}
	}
	f.Fuzz(func(t *testing.T, schema string, seed int64) {
		h := fuzzHarness()
		h.Tools[0].Parameters = json.RawMessage(schema)
		fam := fams[int(uint64(seed)%uint64(len(fams)))]
		nh, _, err := fam.Apply(h, seed, Options{})
		if err != nil || harness.Validate(h) != nil {
			return
		}
		if err := harness.Validate(nh); err != nil {
			t.Fatalf("%s: valid input, invalid variant: %v\nschema %s", fam.Name, err, schema)
		}
		if _, err := schemas(nh); err != nil {
			t.Fatalf("%s: %v", fam.Name, err)
		}
	})
}
