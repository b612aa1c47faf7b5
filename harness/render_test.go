package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

func loadMinimal(t *testing.T) *Harness {
	t.Helper()
	h, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRenderPlainGolden(t *testing.T) {
	h := loadMinimal(t)
	p, err := Render(h, Conversation{
		Context:  []ContextItem{{Title: "Featured", Text: "Serum 30 ml, ¥199"}},
		Messages: []Message{{Role: RoleUser, Content: "多少钱？"}},
		Injected: []InjectedContext{{Source: "spam_filter", Text: "viewer is a first-time buyer"}},
	}, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `Who you are:
You are a live-stream host.

Skills:
Load a skill with load_skill.
- price: Answer price questions.

Tools:
<tools>
{"type": "function", "function": {"name": "load_skill", "description": "Load the full instructions of a skill by its id before using it.", "parameters": {"type": "object", "properties": {"skill_id": {"type": "string", "description": "Id of the skill to load.", "enum": ["price"]}}, "required": ["skill_id"], "additionalProperties": false}}}
{"type": "function", "function": {"name": "lookup", "description": "Look up an item.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>

<context source="spam_filter">viewer is a first-time buyer</context>`
	if got := p.Messages[0].Content; got != want {
		t.Errorf("system prompt:\n%s\n--- want ---\n%s", got, want)
	}
	if len(p.Messages) != 2 || p.Messages[1].Content != "多少钱？" {
		t.Errorf("messages = %+v", p.Messages)
	}
	if len(p.Tools) != 2 || p.Tools[0].Function.Name != "load_skill" || p.Tools[1].Type != "function" {
		t.Errorf("tools = %+v", p.Tools)
	}
	// The context section is not in this layout, so the context is not shown.
	if strings.Contains(p.Messages[0].Content, "Serum") {
		t.Error("context rendered without a context section")
	}
}

func TestRenderStylesAndPositions(t *testing.T) {
	h := loadMinimal(t)
	h.Layout.Sections = append(h.Layout.Sections, Section{Kind: SectionContext, Title: "Now"})
	conv := Conversation{
		Context:  []ContextItem{{Title: "Featured", Text: "Serum"}},
		Messages: []Message{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "hello"}, {Role: RoleUser, Content: "price?"}},
		Injected: []InjectedContext{{Source: "crm", Text: "VIP"}},
	}
	cases := []struct {
		style    LayoutStyle
		format   InjectFormat
		position InjectPosition
		system   []string
		lastUser string
	}{
		{StyleMarkdown, InjectProse, InjectAfterUser, []string{"## Who you are\n\nYou are a live-stream host.", "## Now\n\nFeatured: Serum"}, "price?\n\nNote from crm: VIP"},
		{StyleXML, InjectJSON, InjectBeforeUser, []string{"<persona title=\"Who you are\">\nYou are a live-stream host.\n</persona>", "<context title=\"Now\">\nFeatured: Serum\n</context>"}, "{\"source\": \"crm\", \"context\": \"VIP\"}\n\nprice?"},
		{StylePlain, InjectTags, InjectSystem, []string{"Who you are:\nYou are a live-stream host.", "<context source=\"crm\">VIP</context>"}, "price?"},
	}
	for _, c := range cases {
		h.Layout.Style = c.style
		h.Pipeline.Injection = Injection{Format: c.format, Position: c.position}
		p, err := Render(h, conv, RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.system {
			if !strings.Contains(p.Messages[0].Content, s) {
				t.Errorf("%s: system prompt lacks %q:\n%s", c.style, s, p.Messages[0].Content)
			}
		}
		if got := p.Messages[3].Content; got != c.lastUser {
			t.Errorf("%s/%s: last user message = %q, want %q", c.format, c.position, got, c.lastUser)
		}
		if p.Messages[1].Content != "hi" {
			t.Errorf("earlier user message changed: %q", p.Messages[1].Content)
		}
		again, _ := Render(h, conv, RenderOptions{})
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Error("rendering is not deterministic")
		}
	}
	if conv.Messages[2].Content != "price?" {
		t.Error("Render modified the caller's conversation")
	}
}

func TestRenderOmitToolsAndRejectsBadInput(t *testing.T) {
	h := loadMinimal(t)
	p, err := Render(h, Conversation{}, RenderOptions{OmitToolsSection: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Messages[0].Content, "<tools>") || len(p.Tools) != 2 {
		t.Errorf("OmitToolsSection: system has tools or specs missing (%d)", len(p.Tools))
	}
	if _, err := Render(h, Conversation{Messages: []Message{{Role: "system", Content: "x"}}}, RenderOptions{}); err == nil {
		t.Error("a second system message was accepted")
	}
	h.Pipeline.Injection.Position = InjectBeforeUser
	if _, err := Render(h, Conversation{Injected: []InjectedContext{{Source: "a", Text: "b"}}}, RenderOptions{}); err == nil {
		t.Error("injection before a user message that does not exist was accepted")
	}
	h.Layout.Style = "html"
	if _, err := Render(h, Conversation{}, RenderOptions{}); err == nil {
		t.Error("an invalid harness rendered")
	}
}

// TestRenderCarriesToolCallIDs: the ids of calls and of the results that
// answer them pass through Render untouched, for a server that pairs them,
// and change nothing else: the same conversation without ids renders the
// same system prompt and turns. The JSON names are the OpenAI format's.
func TestRenderCarriesToolCallIDs(t *testing.T) {
	h := loadMinimal(t)
	withIDs := []Message{
		{Role: RoleUser, Content: "price of the serum and the cream?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "call_a", Name: "lookup", Arguments: json.RawMessage(`{"q":"serum"}`)},
			{ID: "call_b", Name: "lookup", Arguments: json.RawMessage(`{"q":"cream"}`)}}},
		{Role: RoleTool, Name: "lookup", ToolCallID: "call_a", Content: `{"price":199}`},
		{Role: RoleTool, Name: "lookup", ToolCallID: "call_b", Content: `{"price":99}`},
	}
	withoutIDs := make([]Message, len(withIDs))
	for i, m := range withIDs {
		m.ToolCallID = ""
		m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
		for j := range m.ToolCalls {
			m.ToolCalls[j].ID = ""
		}
		withoutIDs[i] = m
	}
	got, err := Render(h, Conversation{Messages: withIDs}, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Render(h, Conversation{Messages: withoutIDs}, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages[0].Content != plain.Messages[0].Content || len(got.Messages) != len(withIDs)+1 {
		t.Errorf("ids changed the system prompt or the turns:\n%+v\nwant\n%+v", got.Messages, plain.Messages)
	}
	for i, m := range got.Messages[1:] {
		want := withIDs[i]
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("message %d: got %s, want %s", i+1, a, b)
		}
	}
	call, _ := json.Marshal(got.Messages[2])
	result, _ := json.Marshal(got.Messages[3])
	if !strings.Contains(string(call), `"tool_calls":[{"id":"call_a","name":"lookup"`) ||
		!strings.Contains(string(result), `"tool_call_id":"call_a"`) {
		t.Errorf("JSON names: call %s, result %s", call, result)
	}
	if noID, _ := json.Marshal(plain.Messages[3]); strings.Contains(string(noID), "tool_call_id") {
		t.Errorf("a result without an id writes one: %s", noID)
	}
}

func TestFormatList(t *testing.T) {
	items := []string{"Quote the price", "不要猜测", "Be brief!"}
	cases := map[ListFormat]string{
		ListBullets:  "- Quote the price\n- 不要猜测\n- Be brief!",
		ListNumbered: "1. Quote the price\n2. 不要猜测\n3. Be brief!",
		ListProse:    "Quote the price. 不要猜测。Be brief!",
	}
	for f, want := range cases {
		if got := FormatList(items, f); got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
}

func TestSkillContentAndRetryMessage(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := h.Skill("chitchat")
	if got, want := SkillContent(s), "Thank the viewer by name in one short sentence. Invite them to look at the featured item."; got != want {
		t.Errorf("SkillContent = %q, want %q", got, want)
	}
	if got := h.RetryMessage("price is wrong."); !strings.Contains(got, "rejected your last reply: price is wrong. Answer again") {
		t.Errorf("RetryMessage = %q", got)
	}
	var empty Harness
	if got := empty.RetryMessage("x"); got != strings.ReplaceAll(DefaultRetryFeedback, "{feedback}", "x") {
		t.Errorf("default RetryMessage = %q", got)
	}
}

func TestSkillMarkdownRoundTrip(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Skills {
		back, err := ParseSkillMarkdown(FormatSkillMarkdown(s))
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if s.Format == ListProse {
			back.Format = ListProse // prose is written as a list to keep rules apart
		}
		if s.Format == "" && back.Format == ListBullets {
			back.Format = ""
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Errorf("%s: round trip\n got %s\nwant %s", s.ID, b, a)
		}
	}
	for _, bad := range []string{"no front matter", "---\nname: x\n", "---\ndescription: no name\n---\n", "---\nname: x\nbogus: 1\n---\n", "---\nname: x\n---\n- rule\n\ntext after the list\n"} {
		if _, err := ParseSkillMarkdown([]byte(bad)); err == nil {
			t.Errorf("ParseSkillMarkdown(%q) succeeded", bad)
		}
	}
}

func TestHookDecisionValidate(t *testing.T) {
	good := []HookDecision{
		{Action: ActionAllow},
		{Action: ActionDeny, Reason: "spam"},
		{Action: ActionRewrite, Text: "shorter"},
		{Action: ActionRewrite, Arguments: json.RawMessage(`{"q":"x"}`)},
		{Action: ActionInject, Context: "VIP viewer"},
		{Action: ActionRetry, Feedback: "too long"},
		{Action: ActionRetry, Feedback: "check the stock", Call: "check_stock"},
	}
	for _, d := range good {
		if err := d.Validate(); err != nil {
			t.Errorf("%+v: %v", d, err)
		}
	}
	bad := []HookDecision{
		{Action: "block"},
		{Action: ActionDeny},
		{Action: ActionRewrite},
		{Action: ActionRewrite, Arguments: json.RawMessage(`{`)},
		{Action: ActionInject},
		{Action: ActionRetry},
		{Action: ActionRewrite, Text: "x", Call: "check_stock"},
		{Action: ActionRetry, Call: "check_stock"},
	}
	for _, d := range bad {
		if err := d.Validate(); err == nil {
			t.Errorf("%+v: accepted", d)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	v := h.Version()
	c := h.Clone()
	c.Skills[0].Rules[0].Text = "changed"
	c.Skills[1].Metadata["author"] = "changed"
	c.Tools[0].Parameters[0] = ' '
	c.Hooks[1].Config[0] = ' '
	c.Layout.Sections[1].Items[0] = "changed"
	if h.Version() != v {
		t.Error("changing the clone changed the original")
	}
}

// Catalog arguments narrow the call schema, never what the model reads.
func TestCatalogParameters(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := h.Tool("coupon_check")
	if !ok || len(tool.CatalogArgs) != 1 {
		t.Fatalf("demo coupon_check = %+v, want one catalog argument", tool)
	}
	bound, err := tool.CatalogParameters([]string{"p-serum", "p-cream"}, []string{"面霜"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(bound, &schema); err != nil {
		t.Fatal(err)
	}
	if p := schema.Properties["item_id"]; p.Type != "string" || strings.Join(p.Enum, ",") != "p-serum,p-cream" {
		t.Errorf("item_id = %+v, want a string held to the two ids", p)
	}
	if p := schema.Properties["quantity"]; len(p.Enum) != 0 || p.Type != "integer" {
		t.Errorf("quantity changed: %+v", p)
	}
	if unchanged, _ := tool.CatalogParameters(nil, []string{"面霜"}, nil); string(unchanged) != string(tool.Parameters) {
		t.Error("with no ids the parameters changed")
	}
	p, err := Render(h, Conversation{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Tools {
		if strings.Contains(string(f.Function.Parameters), "enum\": [\"p-") || strings.Contains(string(f.Function.Parameters), "catalog_args") {
			t.Errorf("rendered %s shows the catalog binding: %s", f.Function.Name, f.Function.Parameters)
		}
	}
	tool.CatalogArgs = []string{"nowhere"}
	if _, err := tool.CatalogParameters([]string{"p-serum"}, nil, nil); err == nil || !strings.Contains(err.Error(), `"nowhere"`) {
		t.Errorf("unknown catalog argument: err %v", err)
	}
}

// Query arguments are held to the words given, apart from catalog ids.
func TestQueryParameters(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := h.Tool("product_lookup")
	if !ok || len(tool.QueryArgs) != 1 {
		t.Fatalf("demo product_lookup = %+v, want one query argument", tool)
	}
	bound, err := tool.CatalogParameters([]string{"p-serum"}, []string{"面霜", "repair cream"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(bound, &schema); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(schema.Properties["query"].Enum, ","); got != "面霜,repair cream" {
		t.Errorf("query enum = %q, want the two words", got)
	}
	if unchanged, _ := tool.CatalogParameters([]string{"p-serum"}, nil, nil); string(unchanged) != string(tool.Parameters) {
		t.Error("with no words the lookup's parameters changed")
	}
	p, err := Render(h, Conversation{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Tools {
		if f.Function.Name == "product_lookup" && strings.Contains(string(f.Function.Parameters), "enum") || strings.Contains(string(f.Function.Parameters), "query_args") {
			t.Errorf("rendered %s shows the query binding: %s", f.Function.Name, f.Function.Parameters)
		}
	}
	if strings.Contains(p.Messages[0].Content, "query_args") {
		t.Error("the system prompt shows the query binding")
	}
}

// Variant arguments are held to the catalog's variants, and left out of
// the call schema when no item has one (an empty list, not an unknown one).
func TestVariantParameters(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := h.Tool("check_stock")
	if !ok || len(tool.VariantArgs) != 1 {
		t.Fatalf("demo check_stock = %+v, want one variant argument", tool)
	}
	props := func(raw json.RawMessage) map[string]struct {
		Enum []string `json:"enum"`
	} {
		var schema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		return schema.Properties
	}
	bound, err := tool.CatalogParameters([]string{"p-serum"}, nil, []string{"M", "黑色"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(props(bound)["variant"].Enum, ","); got != "M,黑色" {
		t.Errorf("variant enum = %q, want the catalog's two variants", got)
	}
	if unknown, _ := tool.CatalogParameters([]string{"p-serum"}, nil, nil); len(props(unknown)["variant"].Enum) != 0 || len(props(unknown)) != 2 {
		t.Errorf("with the variants unknown the schema is %s, want the variant argument as it is", unknown)
	}
	none, err := tool.CatalogParameters([]string{"p-serum"}, nil, []string{})
	if err != nil {
		t.Fatal(err)
	}
	if p := props(none); len(p) != 1 || len(p["item_id"].Enum) != 1 {
		t.Errorf("with no variants the schema keeps %v, want item_id alone", p)
	}
	if unchanged, _ := tool.CatalogParameters(nil, nil, []string{"M"}); string(unchanged) != string(tool.Parameters) {
		t.Error("with no catalog the parameters changed")
	}
}

// A hook names a tool by what runs it; the harness may call it anything.
func TestToolRunning(t *testing.T) {
	h, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	h.Tools[0].Name = "xq_find"
	for _, tc := range []struct {
		ref, want string
		ok        bool
	}{
		{"lookup", "xq_find", true},
		{"catalog/lookup", "xq_find", true},
		{"other/lookup", "", false},
		{"xq_find", "", false},
		{"", "", false},
	} {
		if got, ok := h.ToolRunning(tc.ref); got != tc.want || ok != tc.ok {
			t.Errorf("ToolRunning(%q) = %q, %v; want %q, %v", tc.ref, got, ok, tc.want, tc.ok)
		}
	}
}
