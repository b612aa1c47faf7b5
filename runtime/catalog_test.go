package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/harness"
)

// couponModel loads the price skill, asks coupon_check about item, then
// answers with what the tool said; it records every request it gets.
type couponModel struct {
	item string
	mu   sync.Mutex
	reqs []Request
}

func (m *couponModel) Generate(_ context.Context, req Request) (Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == harness.RoleUser:
		return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
	case last.Role == harness.RoleTool && last.Name == "load_skill":
		return Response{ToolCalls: []harness.ToolCall{call("coupon_check", `{"item_id":"`+m.item+`"}`)}}, nil
	default:
		return Response{Content: "Coupon: " + last.Content}, nil
	}
}

// itemSchema returns the item_id property of a tool's parameters.
func itemSchema(t *testing.T, specs []harness.FunctionSpec, tool string) map[string]any {
	t.Helper()
	return propertySchema(t, specs, tool, "item_id")
}

// propertySchema returns a property of a tool's parameters.
func propertySchema(t *testing.T, specs []harness.FunctionSpec, tool, property string) map[string]any {
	t.Helper()
	for _, s := range specs {
		if s.Function.Name != tool {
			continue
		}
		var p struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(s.Function.Parameters, &p); err != nil {
			t.Fatal(err)
		}
		return p.Properties[property]
	}
	t.Fatalf("no tool %s among %d", tool, len(specs))
	return nil
}

func TestCatalogArgumentsAreHeldToTheStreamsItems(t *testing.T) {
	items := []string{"SE1", "CR2"}
	t.Run("call schemas", func(t *testing.T) {
		m := &couponModel{item: "CR2"}
		p := newPlugins()
		s := startSession(t, Config{Model: m, Plugins: p, CatalogItems: func() []string { return items }})
		turn := ask(t, s, s.Listen(64), "Is there a coupon for the cream?")
		if turn.Outcome != OutcomeReplied || !strings.Contains(turn.Reply, `"amount":"20"`) {
			t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
		}
		for _, req := range m.reqs {
			shown := itemSchema(t, req.Tools, "coupon_check")
			if _, ok := shown["enum"]; ok {
				t.Errorf("the prompt's schema shows the catalog: %v", shown)
			}
			bound := itemSchema(t, req.CallTools, "coupon_check")
			if enum, _ := bound["enum"].([]any); len(enum) != 2 || enum[0] != "SE1" || enum[1] != "CR2" {
				t.Errorf("call schema of coupon_check: %v, want item_id held to %v", bound, items)
			}
			if look := itemSchema(t, req.CallTools, "product_lookup"); look != nil {
				t.Errorf("product_lookup has no catalog argument but its call schema changed: %v", look)
			}
		}
	})
	t.Run("refused before the plugin", func(t *testing.T) {
		m := &couponModel{item: "p-cleanser"}
		p := newPlugins()
		s := startSession(t, Config{Model: m, Plugins: p, CatalogItems: func() []string { return items }})
		turn := ask(t, s, s.Listen(64), "Is there a coupon for the cream?")
		if slices.ContainsFunc(p.calls, func(c string) bool { return strings.HasPrefix(c, "tool:coupon_check") }) {
			t.Errorf("the plugin ran with an id outside the catalog: %v", p.calls)
		}
		var refused bool
		for _, st := range turn.Steps {
			if st.Kind == "tool" && st.Name == "coupon_check" {
				refused = strings.Contains(st.Error, `item_id p-cleanser is not an item of this stream; the items are SE1, CR2`)
			}
		}
		if !refused {
			t.Errorf("no refusal naming the id and the items in the trace: %+v", turn.Steps)
		}
		if !strings.Contains(turn.Reply, "SE1, CR2") {
			t.Errorf("the model was not told the items: reply %q", turn.Reply)
		}
	})
	t.Run("query words", func(t *testing.T) {
		words := []string{"SE1", "CR2", "玻尿酸精华", "修护面霜", "serum"}
		for _, tc := range []struct {
			name, message string
			spans         []string // what the query is held to
		}{
			// Of the viewer's spans only "面霜" finds an item ("有券" none),
			// and it alone may be looked up: the viewer named the item.
			{"the spans that find an item", "面霜有券吗？", []string{"面霜"}},
			// No span finds an item, so all stay beside the catalog's
			// words: a lookup of the viewer's words finds nothing, where a
			// catalog word would find an item.
			{"a message that names no item", "主播是骗子", append(slices.Clone(words), "主播", "主播是", "主播是骗", "主播是骗子", "播是", "播是骗", "播是骗子", "是骗", "是骗子", "骗子")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				m := &couponModel{item: "CR2"}
				s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
					CatalogWords: func() []string { return words }})
				ask(t, s, s.Listen(64), tc.message)
				if len(m.reqs) == 0 {
					t.Fatal("the model was never asked")
				}
				for _, req := range m.reqs {
					shown := propertySchema(t, req.Tools, "product_lookup", "query")
					if _, ok := shown["enum"]; ok {
						t.Errorf("the prompt's schema shows the query words: %v", shown)
					}
					var enum []string
					for _, v := range propertySchema(t, req.CallTools, "product_lookup", "query")["enum"].([]any) {
						enum = append(enum, v.(string))
					}
					if !slices.Equal(enum, tc.spans) {
						t.Errorf("query held to %q, want %q", enum, tc.spans)
					}
				}
			})
		}
	})
	t.Run("variants", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			variants func() []string
			want     any // the call schema's variant property: nil (left out), or its enum
		}{
			{"held to the catalog's", func() []string { return []string{"M", "黑色"} }, []any{"M", "黑色"}},
			{"left out where no item has one", func() []string { return []string{} }, nil},
			{"as they are when the stream gives none", nil, "free"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				m := &couponModel{item: "CR2"}
				s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
					CatalogVariants: tc.variants})
				ask(t, s, s.Listen(64), "Is there a coupon for the cream?")
				if len(m.reqs) == 0 {
					t.Fatal("the model was never asked")
				}
				for _, req := range m.reqs {
					if shown := propertySchema(t, req.Tools, "check_stock", "variant"); shown == nil || shown["enum"] != nil {
						t.Errorf("the prompt's schema of the variant changed: %v", shown)
					}
					bound := propertySchema(t, req.CallTools, "check_stock", "variant")
					switch want := tc.want.(type) {
					case nil:
						if bound != nil {
							t.Errorf("variant = %v, want it left out", bound)
						}
					case string:
						if bound == nil || bound["enum"] != nil {
							t.Errorf("variant = %v, want its own schema", bound)
						}
					default:
						if fmt.Sprint(bound["enum"]) != fmt.Sprint(want) {
							t.Errorf("variant enum = %v, want %v", bound["enum"], want)
						}
					}
				}
			})
		}
	})
	t.Run("variants the viewer named", func(t *testing.T) {
		m := &couponModel{item: "CR2"}
		s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
			CatalogVariants: func() []string { return []string{"S", "M", "黑色", "白色"} }})
		ask(t, s, s.Listen(64), "面霜白色M码有货吗")
		for _, req := range m.reqs {
			if got := fmt.Sprint(propertySchema(t, req.CallTools, "check_stock", "variant")["enum"]); got != "[M 白色]" {
				t.Errorf("variant enum = %s, want the two the viewer named", got)
			}
		}
	})
	t.Run("counts the viewer stated", func(t *testing.T) {
		for _, tc := range []struct{ message, want string }{
			{"面霜买3件有券吗", "[3]"},
			{"面霜有券吗？", "left out"},
		} {
			m := &couponModel{item: "CR2"}
			s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items }})
			ask(t, s, s.Listen(64), tc.message)
			for _, req := range m.reqs {
				q := propertySchema(t, req.CallTools, "coupon_check", "quantity")
				got := "left out"
				if q != nil {
					got = fmt.Sprint(q["enum"])
				}
				if got != tc.want {
					t.Errorf("%q: quantity %s, want %s", tc.message, got, tc.want)
				}
				if shown := propertySchema(t, req.Tools, "coupon_check", "quantity"); shown == nil || shown["enum"] != nil {
					t.Errorf("%q: the prompt's quantity changed: %v", tc.message, shown)
				}
			}
		}
	})
	t.Run("a viewer's turn loads a reply skill", func(t *testing.T) {
		m := &couponModel{item: "CR2"}
		s := startSession(t, Config{Model: m, Plugins: newPlugins()})
		ask(t, s, s.Listen(64), "Is there a coupon for the cream?")
		if got := fmt.Sprint(propertySchema(t, m.reqs[0].CallTools, "load_skill", "skill_id")["enum"]); strings.Contains(got, "coupon_push") || !strings.Contains(got, "price_answer") {
			t.Errorf("the first load is held to %s, want the reply skills alone", got)
		}
		if shown := fmt.Sprint(propertySchema(t, m.reqs[0].Tools, "load_skill", "skill_id")["enum"]); !strings.Contains(shown, "coupon_push") {
			t.Errorf("the prompt's skills changed: %s", shown)
		}
		if m.reqs[1].CallTools != nil {
			t.Errorf("after the reply skill's load (no catalog), the call schemas are still held: %v", m.reqs[1].CallTools)
		}
	})
	t.Run("no catalog", func(t *testing.T) {
		m := &couponModel{item: "p-cleanser"}
		p := newPlugins()
		s := startSession(t, Config{Model: m, Plugins: p})
		ask(t, s, s.Listen(64), "Is there a coupon for the cream?")
		for _, req := range m.reqs {
			if req.CallTools == nil {
				continue
			}
			if bound := itemSchema(t, req.CallTools, "coupon_check"); bound["enum"] != nil {
				t.Errorf("item ids held without a catalog: %v", bound)
			}
		}
		if !slices.Contains(p.calls, `tool:coupon_check{"item_id":"p-cleanser"}`) {
			t.Errorf("without a catalog the plugin decides; calls %v", p.calls)
		}
	})
}

func TestListIDs(t *testing.T) {
	var ids []string
	for i := range 25 {
		ids = append(ids, fmt.Sprintf("p-%d", i))
	}
	if got := listIDs(ids[:3]); got != "p-0, p-1, p-2" {
		t.Errorf("listIDs(3) = %q", got)
	}
	got := listIDs(ids)
	if !strings.HasPrefix(got, "p-0, p-1,") || !strings.HasSuffix(got, "p-19, … (25 in all)") || strings.Contains(got, "p-20") {
		t.Errorf("listIDs(25) = %q, want the first 20 and the count", got)
	}
}

// TestTheTurnOpensWithTheSkillAndTheLookup: under the reply-skill rule the
// first answer of a turn is the skill's load; with a bound catalog, a
// message that names an item makes the next one its lookup. A message that
// names none, or a stream without catalog words, leaves the model free.
func TestTheTurnOpensWithTheSkillAndTheLookup(t *testing.T) {
	items := []string{"SE1", "CR2"}
	words := []string{"SE1", "CR2", "玻尿酸精华", "修护面霜", "serum"}
	for _, tc := range []struct {
		name, message string
		words         func() []string
		want          []string // MustCall of each generation
	}{
		{"names an item", "面霜有券吗？", func() []string { return words }, []string{"load_skill", "product_lookup", ""}},
		{"names a link", "link 2 has a coupon?", func() []string { return words }, []string{"load_skill", "product_lookup", ""}},
		{"names none", "主播是骗子", func() []string { return words }, []string{"load_skill", "", ""}},
		{"no catalog words", "面霜有券吗？", nil, []string{"load_skill", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &couponModel{item: "CR2"}
			s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
				CatalogWords: tc.words})
			turn := ask(t, s, s.Listen(64), tc.message)
			var got []string
			for _, req := range m.reqs {
				got = append(got, req.MustCall)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("generations must call %q, want %q (turn %s: %s)", got, tc.want, turn.Outcome, turn.Reason)
			}
		})
	}
	t.Run("without the rule", func(t *testing.T) {
		h := demo(t)
		h.Pipeline.RequireReplySkill = false
		m := &couponModel{item: "CR2"}
		s := startSession(t, Config{Harness: h, Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
			CatalogWords: func() []string { return words }})
		ask(t, s, s.Listen(64), "面霜有券吗？")
		if len(m.reqs) == 0 || m.reqs[0].MustCall != "" {
			t.Errorf("without require_reply_skill the first answer is the model's: %+v", m.reqs)
		}
	})
}

// A second lookup in a turn is held off the first one's words: the same
// query gives the same result, and a comparison's second lookup is of the
// other item.
func TestALaterLookupIsOfAnotherItem(t *testing.T) {
	items := []string{"SE1", "CR2"}
	words := []string{"SE1", "CR2", "玻尿酸精华", "修护面霜", "serum", "cream"}
	var enums [][]string
	m := scriptedModel(func(req Request) (Response, error) {
		var enum []string
		for _, v := range propertySchema(t, req.CallTools, "product_lookup", "query")["enum"].([]any) {
			enum = append(enum, v.(string))
		}
		enums = append(enums, enum)
		switch last := req.Messages[len(req.Messages)-1]; {
		case last.Role == harness.RoleUser:
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
		case last.Role == harness.RoleTool && last.Name == "load_skill":
			return Response{ToolCalls: []harness.ToolCall{call("product_lookup", `{"query":"面霜"}`)}}, nil
		case len(enums) == 3:
			return Response{ToolCalls: []harness.ToolCall{call("product_lookup", `{"query":"精华"}`)}}, nil
		default:
			return Response{Content: "精华199元，面霜199元。"}, nil
		}
	})
	s := startSession(t, Config{Model: m, Plugins: newPlugins(), CatalogItems: func() []string { return items },
		CatalogWords: func() []string { return words }})
	ask(t, s, s.Listen(64), "面霜和精华哪个便宜？")
	if len(enums) < 3 {
		t.Fatalf("%d generations", len(enums))
	}
	if !slices.Contains(enums[1], "面霜") || !slices.Contains(enums[1], "精华") {
		t.Errorf("first lookup held to %q, want both items' words", enums[1])
	}
	if slices.Contains(enums[2], "面霜") || !slices.Contains(enums[2], "精华") {
		t.Errorf("second lookup held to %q, want the other item's words only", enums[2])
	}
	if last := enums[len(enums)-1]; !slices.Contains(last, "面霜") || !slices.Contains(last, "精华") {
		t.Errorf("after both lookups the query is held to %q; with nothing new left, every word is offered again", last)
	}
}

// After the turn's lookup found an item, a catalog argument is held to
// what it found: the model's next call is about the item asked of.
func TestCallsAfterALookupAreAboutWhatItFound(t *testing.T) {
	items := []string{"SE1", "CR2"}
	var reqs []Request
	base := priceModel("It is 199 yuan.")
	s := startSession(t, Config{Plugins: newPlugins(), CatalogItems: func() []string { return items },
		Model: scriptedModel(func(req Request) (Response, error) {
			reqs = append(reqs, req)
			return base(req)
		})})
	ask(t, s, s.Listen(64), "serum price?")
	if len(reqs) != 3 {
		t.Fatalf("%d generations, want the load, the lookup and the answer", len(reqs))
	}
	for i, want := range []string{"[SE1 CR2]", "[SE1 CR2]", "[SE1]"} {
		if got := fmt.Sprint(itemSchema(t, reqs[i].CallTools, "coupon_check")["enum"]); got != want {
			t.Errorf("generation %d: coupon_check's item_id held to %s, want %s", i+1, got, want)
		}
	}
}
