package constrain

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/sample"
)

var testTools = []chat.Tool{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type": "object", "properties": {
		"city": {"type": "string"},
		"unit": {"type": "string", "enum": ["c", "f"]},
		"days": {"type": "integer"},
		"detailed": {"type": "boolean"}},
		"required": ["city"], "additionalProperties": false}`)},
	{Name: "lookup_price", Parameters: json.RawMessage(`{"type": "object", "properties": {
		"sku": {"type": "string", "minLength": 2, "maxLength": 8},
		"discount": {"type": "number"},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["new", "hot", "sale\"x"]}, "minItems": 1, "maxItems": 3},
		"meta": {"type": "object", "properties": {
			"note": {"type": ["string", "null"]},
			"level": {"enum": [1, 2, 10, "high", null, {"a": [true]}]}},
			"required": ["note"], "additionalProperties": false},
		"options": {"type": "object", "additionalProperties": {"type": "integer"}},
		"choice": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}, {"type": "null"}]}},
		"required": ["sku", "tags"], "additionalProperties": false}`)},
	{Name: "now"},
	{Name: "note_anything", Description: "free-form", Parameters: json.RawMessage(`{"type": "object"}`)},
	// As Pydantic writes a model with nested models and an optional field.
	{Name: "create_order", Parameters: json.RawMessage(`{"$defs": {
		"Address": {"title": "Address", "type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string", "maxLength": 6}},
			"required": ["city"], "additionalProperties": false},
		"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku", "qty"], "additionalProperties": false}},
		"type": "object", "properties": {
			"ship_to": {"$ref": "#/$defs/Address"},
			"bill_to": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": null},
			"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1, "maxItems": 2}},
		"required": ["ship_to", "items"], "additionalProperties": false}`)},
}

// testVocab is a synthetic byte-level vocabulary: every single byte, the
// pieces of JSON and of the test schemas that a BPE vocabulary would merge,
// whole and partial UTF-8 characters, and a special token with no text.
func testVocab() [][]byte {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	for _, s := range []string{
		`{"`, `":`, `": `, `": "`, `", "`, `","`, `"}`, `}}`, `"}}`, `, "`, `": {"`, `": [`, `"]`, `],`, `},`, `{}`, `[]`,
		`"name"`, `name`, `arguments`, `"arguments": {`, `get_weather`, `_weather`, `lookup`, `_price`, `now`, `note_anything`,
		`city`, `unit`, `days`, `detailed`, `sku`, `discount`, `tags`, `meta`, `note`, `level`, `options`, `choice`,
		`true`, `false`, `null`, `tr`, `ue`, `12`, `123`, `0.`, `.5`, `e+`, `-1`, `1000`, `hot`, `new`, `sale`, `\"`, `\n`, `\u00`,
		`\ud83d`, `high`, ` Paris`, `Hang`, `zhou`, "杭州", "城市", "\xe6\x9d", "\xad", "你好", "😀",
		"\n{", "}\n", "\n", "</", "</tool_call>", "tool", "_call", ">", "<", "  ", "\t", "\n\n", "a\"b", "\"\n",
	} {
		toks = append(toks, []byte(s))
	}
	return append(toks, nil) // a special token such as <|im_end|>
}

func compileTest(t testing.TB) (*Vocabulary, *Grammar, [][]byte) {
	t.Helper()
	g, err := Compile(testTools)
	if err != nil {
		t.Fatal(err)
	}
	toks := testVocab()
	return NewVocabulary(toks), g, toks
}

func validators(t testing.TB) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, tool := range testTools {
		params := string(tool.Parameters)
		if params == "" {
			params = `{"type": "object", "additionalProperties": false}`
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(params))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if out[tool.Name], err = c.Compile(url); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkCall parses text (what followed <tool_call>) as the model's call and
// validates its arguments against the tool's schema.
func checkCall(t *testing.T, text string, schemas map[string]*jsonschema.Schema) chat.ToolCall {
	t.Helper()
	if !strings.HasSuffix(text, chat.ToolCallClose) {
		t.Fatalf("call %q does not end with %s", text, chat.ToolCallClose)
	}
	body := strings.TrimSuffix(text, chat.ToolCallClose)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatalf("call %q is not a JSON object: %v", body, err)
	}
	if len(raw) != 2 {
		t.Fatalf("call %q has keys other than name and arguments", body)
	}
	_, calls, err := chat.ParseAssistant(chat.ToolCallOpen + text)
	if err != nil || len(calls) != 1 {
		t.Fatalf("chat.ParseAssistant(%q) = %v, %v", text, calls, err)
	}
	call := calls[0]
	sch, ok := schemas[call.Name]
	if !ok {
		t.Fatalf("call %q names an unknown tool", text)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(call.Arguments)))
	if err != nil {
		t.Fatalf("arguments %s: %v", call.Arguments, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("arguments %s do not match the schema of %s: %v", call.Arguments, call.Name, err)
	}
	return call
}

// TestRandomWalksProduceValidCalls follows random tokens from the allowed
// sets: every finished walk must be a valid call matching its schema, the
// allowed set must never be empty before the end, and each allowed set must
// agree with feeding tokens one by one.
func TestRandomWalksProduceValidCalls(t *testing.T) {
	vocab, g, toks := compileTest(t)
	schemas := validators(t)
	r := rand.New(rand.NewPCG(1, 2))
	named := map[string]int{}
	const walks = 400
	for w := range walks {
		c := NewToolCallConstraint(vocab, g)
		var text strings.Builder
		var allowed TokenSet
		for step := 0; !c.Done(); step++ {
			if step > 4000 {
				t.Fatalf("walk %d did not finish in 4000 steps: %q", w, text.String())
			}
			allowed = c.Allowed(allowed)
			ids := members(allowed)
			if len(ids) == 0 {
				t.Fatalf("walk %d: dead end after %q", w, text.String())
			}
			if w < 8 { // the check feeds every token: keep it to a few walks
				checkAgainstFeeding(t, c, allowed, text.String())
			}
			// Prefer structural tokens half the time so that walks end
			// instead of filling strings with random bytes, and closing ones
			// once a walk grows long, since free-form values may nest.
			id := ids[r.IntN(len(ids))]
			if r.IntN(2) == 0 {
				if s := slices.DeleteFunc(slices.Clone(ids), func(id int) bool { return vocab.inString.Has(id) }); len(s) > 0 {
					id = s[r.IntN(len(s))]
				}
			}
			if step > 100 && r.IntN(10) > 0 {
				closing := slices.DeleteFunc(slices.Clone(ids), func(id int) bool {
					return !strings.ContainsAny(string(toks[id]), `"}]`) && string(toks[id]) != chat.ToolCallClose
				})
				if len(closing) > 0 {
					id = closing[r.IntN(len(closing))]
				}
			}
			if err := c.Accept(id); err != nil {
				t.Fatalf("walk %d: allowed token refused: %v", w, err)
			}
			text.Write(toks[id])
		}
		if got := c.Allowed(allowed); got.Len() != 0 {
			t.Fatalf("walk %d: %d tokens allowed after the call ended", w, got.Len())
		}
		call := checkCall(t, strings.TrimLeft(text.String(), " \n"), schemas)
		named[call.Name]++
	}
	for _, tool := range testTools {
		if named[tool.Name] == 0 {
			t.Errorf("no walk called %s; walks named %v", tool.Name, named)
		}
	}
}

func members(s TokenSet) []int {
	var ids []int
	for id := range len(s) * 64 {
		if s.Has(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// checkAgainstFeeding checks the trie walk against the definition: a token
// is allowed exactly when feeding its bytes to the state succeeds.
func checkAgainstFeeding(t *testing.T, c *ToolCallConstraint, allowed TokenSet, prefix string) {
	t.Helper()
	for id := range c.vocab.size {
		probe := &ToolCallConstraint{vocab: c.vocab, m: c.m, state: slices.Clone(c.state)}
		ok := probe.Accept(id) == nil
		if ok != allowed.Has(id) {
			t.Fatalf("after %q token %d %q: Allowed says %v, feeding says %v", prefix, id, c.vocab.token(id), allowed.Has(id), ok)
		}
	}
}

// TestAllowedMatchesFeedingInStrings checks the string shortcut in the
// states it treats specially: length budgets, minLength, partial
// </tool_call>, unfinished characters and escapes.
func TestAllowedMatchesFeedingInStrings(t *testing.T) {
	vocab, g, _ := compileTest(t)
	for _, prefix := range []string{
		`{"name": "get_weather", "arguments": {"city": "`,
		`{"name": "get_weather", "arguments": {"city": "a<`,
		`{"name": "get_weather", "arguments": {"city": "a</tool_c`,
		`{"name": "get_weather", "arguments": {"city": "` + "\xe6\x9d",
		`{"name": "get_weather", "arguments": {"city": "\`,
		`{"name": "get_weather", "arguments": {"city": "\u00`,
		`{"name": "lookup_price", "arguments": {"sku": "`,
		`{"name": "lookup_price", "arguments": {"sku": "x`,
		`{"name": "lookup_price", "arguments": {"sku": "1234567`,
		`{"name": "lookup_price", "arguments": {"sku": "12345678`,
		`{"name": "lookup_price", "arguments": {"sku": "123<`,
		`{"name": "lookup_price", "arguments": {"choice": "ab`,
		`{"name": "lookup_price", "arguments": {"meta": {"note": "`,
		`{"name": "note_anything", "arguments": {"`,
		`{"name": "note_anything", "arguments": {"k": ["`,
	} {
		c := NewToolCallConstraint(vocab, g)
		if err := c.AcceptText(prefix); err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		checkAgainstFeeding(t, c, c.Allowed(nil), prefix)
	}
}

func TestClosingTagOnlyAfterCompleteJSON(t *testing.T) {
	vocab, g, toks := compileTest(t)
	closeID := slices.IndexFunc(toks, func(b []byte) bool { return string(b) == chat.ToolCallClose })
	full := "\n" + `{"name": "get_weather", "arguments": {"city": "杭州", "days": 3}}` + "\n"
	for i := 0; i < len(full); i++ {
		c := NewToolCallConstraint(vocab, g)
		if err := c.AcceptText(full[:i]); err != nil {
			// Cutting inside 杭州 leaves a partial character, fine to feed;
			// any other refusal is a bug.
			t.Fatalf("prefix %q refused: %v", full[:i], err)
		}
		wantClose := i >= len(full)-1 // after the final } (and its optional newline)
		if got := c.Allowed(nil).Has(closeID); got != wantClose {
			t.Errorf("after %q: </tool_call> allowed = %v, want %v", full[:i], got, wantClose)
		}
	}
	c := NewToolCallConstraint(vocab, g)
	if err := c.AcceptText(full + chat.ToolCallClose); err != nil {
		t.Fatal(err)
	}
	if !c.Done() {
		t.Error("not done after </tool_call>")
	}
}

func TestRefusesInvalidText(t *testing.T) {
	vocab, g, _ := compileTest(t)
	tests := []struct{ text, why string }{
		{`{"name": "unknown"`, "unknown tool"},
		{`{"arguments": {}`, "arguments before name"},
		{`{"name": "now", "arguments": {"x": 1}`, "property of a tool without parameters"},
		{`{"name": "get_weather", "arguments": {}}`, "required city missing"},
		{`{"name": "get_weather", "arguments": {"city": 3`, "wrong type"},
		{`{"name": "get_weather", "arguments": {"city": "a", "city"`, "duplicate property"},
		{`{"name": "get_weather", "arguments": {"unit": "k"`, "value outside enum"},
		{`{"name": "get_weather", "arguments": {"days": 1.5`, "fraction in an integer"},
		{`{"name": "get_weather", "arguments": {"days": 01`, "leading zero"},
		{`{"name": "get_weather", "arguments": {"city": "a` + "\x01", "control character in a string"},
		{`{"name": "get_weather", "arguments": {"city": "\q`, "bad escape"},
		{`{"name": "get_weather", "arguments": {"city": "\ud800`, "surrogate escape"},
		{`{"name": "get_weather", "arguments": {"city": "` + "\xc0\xaf", "overlong UTF-8"},
		{`{"name": "get_weather", "arguments": {"city": "x",}`, "trailing comma"},
		{`{  "name"`, "two spaces"},
		{`{"name":  "now"`, "two spaces after colon"},
		{`{"name": "lookup_price", "arguments": {"sku": "a"}`, "minLength"},
		{`{"name": "lookup_price", "arguments": {"sku": "123456789`, "maxLength"},
		{`{"name": "lookup_price", "arguments": {"tags": []`, "minItems"},
		{`{"name": "lookup_price", "arguments": {"tags": ["new", "hot", "new", `, "maxItems"},
		{`{"name": "lookup_price", "arguments": {"choice": "abcd`, "anyOf string maxLength"},
		{`{"name": "lookup_price", "arguments": {"choice": tr`, "anyOf alternative"},
		{`{"name": "now", "arguments": {}}}`, "extra brace"},
		{`{"name": "now", "arguments": {}} </tool_call>x`, "text after the closing tag"},
		{`{"name": "note_anything", "arguments": ` + strings.Repeat("[", 30), "nesting deeper than the limit"},
		{`{"name": "lookup_price", "arguments": {"discount": 1` + strings.Repeat("0", 30), "number too long"},
	}
	for _, tt := range tests {
		c := NewToolCallConstraint(vocab, g)
		if err := c.AcceptText(tt.text); err == nil {
			t.Errorf("%s: %q was accepted", tt.why, tt.text)
		}
	}
	c := NewToolCallConstraint(vocab, g)
	ok := `{"name": "lookup_price", "arguments": {"sku": "ab\n\u00e9😀", "tags": ["sale\"x"], "discount": -0.5e+3, ` +
		`"meta": {"note": null, "level": {"a":[true]}}, "options": {"x": 1, "y": -2}, "choice": null}} </tool_call>`
	if err := c.AcceptText(ok); err != nil || !c.Done() {
		t.Errorf("valid call refused: %v (done %v)", err, c.Done())
	}
	c = NewToolCallConstraint(vocab, g)
	order := `{"name": "create_order", "arguments": {"items": [{"qty": 2, "sku": "A1"}], "ship_to": {"city": "杭州", "zip": "310000"}, "bill_to": null}}</tool_call>`
	if err := c.AcceptText(order); err != nil || !c.Done() {
		t.Errorf("valid order refused: %v", err)
	}
	for _, bad := range []string{
		`{"name": "create_order", "arguments": {"ship_to": {"zip": "1"}}`,
		`{"name": "create_order", "arguments": {"ship_to": {"city": "x", "zip": "1234567`,
		`{"name": "create_order", "arguments": {"items": [{"sku": "a"}]`,
		`{"name": "create_order", "arguments": {"bill_to": 3`,
	} {
		if err := NewToolCallConstraint(vocab, g).AcceptText(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c = NewToolCallConstraint(vocab, g)
	if err := c.Accept(len(testVocab()) - 1); err == nil {
		t.Error("special token with no text accepted")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		params, want string
	}{
		{`{"type": "object", "properties": {"a": {"$ref": "#/x"}}}`, `$ref "#/x" does not resolve`},
		{`{"type": "object", "properties": {"a": {"$ref": "#"}}}`, "recursive"},
		{`{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`, "only references inside the schema"},
		{`{"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "type": "string"}}, "$defs": {"A": {}}}`, "next to other keywords"},
		{`{"type": "object", "properties": {"a": {"allOf": [{}]}}}`, `keyword "allOf"`},
		{`{"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"enum": ["x"]}]}}}`, "overlap"},
		{`{"type": "object", "properties": {"a": {}}, "required": ["b"]}`, `required property "b" is not declared`},
		{`{"type": "object", "properties": {"a": {"type": "date"}}}`, `unknown type "date"`},
		{`{"type": "object", "properties": {"a": false}}`, "admits no value"},
		{`{"type": "string"}`, "must be an object schema"},
		{`{"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}`, "no enum value"},
		{`{"type": "object", "properties": {"a": {"type": "array", "minItems": 3, "maxItems": 1}}}`, "maxItems 1 < minItems 3"},
		{`{"type": "object"`, "parameters"},
		{strings.Repeat(`{"type": "object", "properties": {"a": `, 20) + `{"type": "string"}` + strings.Repeat(`}}`, 20), "nested deeper than 16"},
	}
	for _, tt := range tests {
		_, err := Compile([]chat.Tool{{Name: "f", Parameters: json.RawMessage(tt.params)}})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `tool "f"`) {
			t.Errorf("Compile(%s) err = %v, want it to name the tool and contain %q", tt.params, err, tt.want)
		}
	}
	if _, err := Compile([]chat.Tool{{Name: "f"}, {Name: "f"}}); err == nil {
		t.Error("duplicate tool names accepted")
	}
	if _, err := Compile(nil); err == nil {
		t.Error("empty tool list accepted")
	}
	g, err := Compile([]chat.Tool{{Name: "f", Parameters: json.RawMessage(
		`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "description": "count"}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Unenforced(); !slices.Equal(got, []string{"f:/n: minimum"}) {
		t.Errorf("Unenforced = %q", got)
	}
}

func TestVocabularyTrie(t *testing.T) {
	toks := [][]byte{[]byte("ab"), []byte("a"), nil, []byte("b\""), []byte("ab"), []byte("\xe6\x9d")}
	v := NewVocabulary(toks)
	if v.Size() != 6 {
		t.Fatalf("Size = %d", v.Size())
	}
	for id, tok := range toks {
		if string(v.token(id)) != string(tok) {
			t.Errorf("token %d = %q, want %q", id, v.token(id), tok)
		}
	}
	// Inside a string: "ab" and "a" stay, `b"` closes with nothing after
	// its quote, the partial character stays and needs one more character.
	wantIn := []bool{true, true, false, false, true, true}
	wantNeed := []uint16{2, 1, 0, 1, 2, 1}
	for id := range toks {
		if v.inString.Has(id) != wantIn[id] || v.strNeed[id] != wantNeed[id] {
			t.Errorf("token %q: in string %v need %d, want %v %d", toks[id], v.inString.Has(id), v.strNeed[id], wantIn[id], wantNeed[id])
		}
	}
	if !slices.Equal(v.closeSuffix, []string{""}) || !slices.Equal(v.closeIDs[0], []int32{3}) {
		t.Errorf("closers %q %v, want token 3 with an empty suffix", v.closeSuffix, v.closeIDs)
	}
	// Walk the trie: every non-empty token must be found at the end of its path.
	for id, tok := range toks {
		if len(tok) == 0 {
			continue
		}
		n := int32(0)
		for _, b := range tok {
			e := slices.Index(v.edgeByte[v.edgeStart[n]:v.edgeStart[n+1]], b)
			if e < 0 {
				t.Fatalf("no edge %q on the path of %q", b, tok)
			}
			n = v.edgeNode[int(v.edgeStart[n])+e]
		}
		if !slices.Contains(v.ids[v.idStart[n]:v.idStart[n+1]], int32(id)) {
			t.Errorf("token %d %q not at the end of its path", id, tok)
		}
	}
}

// benchVocab is a 151,643-token synthetic vocabulary shaped like Qwen's:
// bytes, ASCII words with and without a leading space, CJK characters and
// pairs, partial UTF-8 pieces, and punctuation runs with quotes and braces.
func benchVocab() [][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	seen := map[string]bool{}
	var toks [][]byte
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			toks = append(toks, []byte(s))
		}
	}
	for b := range 256 {
		add(string([]byte{byte(b)}))
	}
	for _, s := range []string{`{"`, `":`, `": "`, `", "`, `"}`, `}}`, `"name"`, `arguments`, `get_weather`, "</tool_call>"} {
		add(s)
	}
	letters := "abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	punct := `"{}[],:.;!?()<>/\-+=*'` + "`\n\t "
	for len(toks) < 151643 {
		var b strings.Builder
		switch k := r.IntN(20); {
		case k < 11:
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
			for range 2 + r.IntN(9) {
				b.WriteByte(letters[r.IntN(len(letters))])
			}
		case k < 16:
			for range 1 + r.IntN(3) {
				b.WriteRune(rune(0x4E00 + r.IntN(0x5000)))
			}
		case k < 18:
			s := string(rune(0x4E00 + r.IntN(0x5000)))
			b.WriteString(s[:1+r.IntN(2)])
		default:
			for range 1 + r.IntN(4) {
				b.WriteByte(punct[r.IntN(len(punct))])
			}
		}
		add(b.String())
	}
	return toks
}

// benchStates are the positions in a call where the masking step is timed.
var benchStates = []struct{ name, prefix string }{
	{"start", "\n"},
	{"tool_name", `{"name": "`},
	{"key", `{"name": "lookup_price", "arguments": {"sku": "ab", `},
	{"string_value", `{"name": "get_weather", "arguments": {"city": "Hang`},
	{"bounded_string", `{"name": "lookup_price", "arguments": {"sku": "A`},
	{"number", `{"name": "lookup_price", "arguments": {"discount": 12`},
	{"free_form_value", `{"name": "note_anything", "arguments": {"k": [1, {"x": `},
}

func BenchmarkAllowed(b *testing.B) {
	toks := benchVocab()
	vocab := NewVocabulary(toks)
	g, err := Compile(testTools)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range benchStates {
		b.Run(s.name, func(b *testing.B) {
			c := NewToolCallConstraint(vocab, g)
			if err := c.AcceptText(s.prefix); err != nil {
				b.Fatal(err)
			}
			var set TokenSet
			cpu := startCPU()
			for b.Loop() {
				c.cache = nil // measure the trie walk, not the cache
				set = c.Allowed(set)
			}
			cpu.report(b, b.N, "cpu-µs/op")
			b.ReportMetric(float64(set.Len()), "allowed")
		})
	}
}

// BenchmarkCallSteps generates a whole call token by token, as a decoder
// does: Allowed then Accept at every step. It reports the mean cost per step.
func BenchmarkCallSteps(b *testing.B) {
	toks := benchVocab()
	vocab := NewVocabulary(toks)
	g, err := Compile(testTools)
	if err != nil {
		b.Fatal(err)
	}
	benchCallSteps(b, toks, vocab, g)
}

func benchCallSteps(b *testing.B, toks [][]byte, vocab *Vocabulary, g *Grammar) {
	call := "\n" + `{"name": "lookup_price", "arguments": {"sku": "A1-77", "discount": 0.85, "tags": ["hot", "new"], ` +
		`"meta": {"note": "主播推荐的限时优惠，今晚八点开抢，库存有限 — limited stock tonight", "level": "high"}, ` +
		`"options": {"size": 42, "count": 3}, "choice": null}}` + "\n</tool_call>"
	ids := greedyTokenize(toks, call)
	var set TokenSet
	cpu := startCPU()
	for b.Loop() {
		c := NewToolCallConstraint(vocab, g)
		for _, id := range ids {
			set = c.Allowed(set)
			if !set.Has(id) {
				b.Fatalf("token %q not allowed", toks[id])
			}
			if err := c.Accept(id); err != nil {
				b.Fatal(err)
			}
		}
		if !c.Done() {
			b.Fatal("call not finished")
		}
	}
	cpu.report(b, b.N*len(ids), "cpu-µs/step")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids))/1e3, "µs/step")
	b.ReportMetric(float64(len(ids)), "steps")
}

// cpuClock measures the process CPU time over a benchmark loop.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuClock {
	t, ok := processCPU()
	return cpuClock{t, ok}
}

// report adds the CPU microseconds per unit of work as a metric.
func (c cpuClock) report(b *testing.B, n int, unit string) {
	end, ok := processCPU()
	if c.ok && ok && n > 0 {
		b.ReportMetric(float64((end-c.start).Nanoseconds())/float64(n)/1e3, unit)
	}
}

// greedyTokenize splits text into the longest vocabulary tokens, a stand-in
// for a real tokenizer that is enough to drive the benchmark.
func greedyTokenize(toks [][]byte, text string) []int {
	index := map[string]int{}
	longest := 0
	for id, t := range toks {
		if _, dup := index[string(t)]; !dup && len(t) > 0 {
			index[string(t)] = id
			longest = max(longest, len(t))
		}
	}
	var ids []int
	for len(text) > 0 {
		for n := min(longest, len(text)); n > 0; n-- {
			if id, ok := index[text[:n]]; ok {
				ids = append(ids, id)
				text = text[n:]
				break
			}
		}
	}
	return ids
}

func ExampleToolCallConstraint() {
	tokens := [][]byte{[]byte(`{"name": "`), []byte(`now`), []byte(`", "arguments": {}}`), []byte("</tool_call>"), []byte("x")}
	g, _ := Compile([]chat.Tool{{Name: "now"}})
	c := NewToolCallConstraint(NewVocabulary(tokens), g)
	for !c.Done() {
		allowed := c.Allowed(nil)
		for id := range tokens {
			if allowed.Has(id) {
				fmt.Printf("%s", tokens[id])
				_ = c.Accept(id)
				break
			}
		}
	}
	fmt.Println()
	// Output: {"name": "now", "arguments": {}}</tool_call>
}

// TestSampledCallsAreValid drives the constraint as a decoder does, with
// model/sample picking tokens from random logits under the allowed set.
func TestSampledCallsAreValid(t *testing.T) {
	vocab, g, toks := compileTest(t)
	schemas := validators(t)
	r := rand.New(rand.NewPCG(11, 12))
	logits := make([]float32, len(toks))
	for i := range 50 {
		s, err := sample.New(sample.Config{Temperature: 1, TopK: 40, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		c := NewToolCallConstraint(vocab, g)
		var text strings.Builder
		var allowed TokenSet
		for steps := 0; !c.Done(); steps++ {
			if steps > 3000 {
				t.Fatalf("call %d did not finish: %q", i, text.String())
			}
			for j := range logits {
				logits[j] = float32(r.NormFloat64())
				if strings.ContainsAny(string(toks[j]), `"}]`) {
					logits[j] += 2 // a model that tends to finish what it opens
				}
			}
			allowed = c.Allowed(allowed)
			id, err := s.Sample(logits, nil, allowed)
			if err != nil {
				t.Fatalf("call %d after %q: %v", i, text.String(), err)
			}
			if err := c.Accept(id); err != nil {
				t.Fatal(err)
			}
			text.Write(toks[id])
		}
		checkCall(t, strings.TrimLeft(text.String(), " \n"), schemas)
	}
}

// TestDeepestNestingCompletes checks that the deepest schema Compile accepts
// still fits the automaton: a call requiring every level can be written out
// with a token allowed at each step.
func TestDeepestNestingCompletes(t *testing.T) {
	schema := strings.Repeat(`{"type": "object", "properties": {"a": `, maxNesting-1) + `{"type": "array", "items": {"type": "integer"}, "minItems": 1}` +
		strings.Repeat(`}, "required": ["a"]}`, maxNesting-1)
	g, err := Compile([]chat.Tool{{Name: "deep", Parameters: json.RawMessage(schema)}})
	if err != nil {
		t.Fatal(err)
	}
	toks := testVocab()
	c := NewToolCallConstraint(NewVocabulary(toks), g)
	text := `{"name": "deep", "arguments": ` + strings.Repeat(`{"a": `, maxNesting-1) + "[7]" + strings.Repeat("}", maxNesting-1) + "}</tool_call>"
	for i := 0; i < len(text); i++ {
		if !c.Allowed(nil).Has(int(text[i])) { // single-byte tokens have their byte as id
			t.Fatalf("byte %q not allowed after %q", text[i], text[:i])
		}
		if err := c.Accept(int(text[i])); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Done() {
		t.Error("not done")
	}
}
