package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/constrain"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/model/tokenizer"
)

// shopTools have schemas whose strings are bounded (enum, maxLength), so a
// random model, which writes string characters almost forever, still closes
// its calls within the token budget.
func shopTools() []chat.Tool {
	return []chat.Tool{
		{Name: "get_price", Description: "Price of an item.", Parameters: json.RawMessage(`{"type": "object",
			"properties": {"item": {"type": "string", "enum": ["jacket", "sneakers", "hat"]},
				"size": {"type": "string", "enum": ["S", "M", "L", "XL"]},
				"quantity": {"type": "integer"}},
			"required": ["item"]}`)},
		{Name: "add_to_cart", Description: "Put an item in the viewer's cart.", Parameters: json.RawMessage(`{"type": "object",
			"properties": {"item": {"type": "string", "maxLength": 10},
				"colors": {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}, "maxItems": 3},
				"gift": {"type": "boolean"},
				"note": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 6}}, "required": ["text"]}},
			"required": ["item", "gift"]}`)},
		{Name: "end_stream", Description: "End the live stream."},
	}
}

// validate checks value against the subset of JSON Schema the test tools
// use, independently of the constrain package.
func validate(schema map[string]any, value any, path string) error {
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, value) {
		return fmt.Errorf("%s: %v not in enum %v", path, value, enum)
	}
	switch schema["type"] {
	case "object":
		obj, ok := value.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", path, value)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, name := range schema["required"].([]any) {
			if _, ok := obj[name.(string)]; !ok {
				return fmt.Errorf("%s: required %q missing", path, name)
			}
		}
		for k, v := range obj {
			sub, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: unknown property %q", path, k)
			}
			if err := validate(sub, v, path+"."+k); err != nil {
				return err
			}
		}
	case "array":
		arr, ok := value.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", path, value)
		}
		if max, ok := schema["maxItems"].(float64); ok && float64(len(arr)) > max {
			return fmt.Errorf("%s: %d items, at most %v allowed", path, len(arr), max)
		}
		for i, v := range arr {
			if err := validate(schema["items"].(map[string]any), v, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "string":
		s, ok := value.(string)
		if !ok {
			return fmt.Errorf("%s: %v is not a string", path, value)
		}
		if max, ok := schema["maxLength"].(float64); ok && float64(utf8.RuneCountInString(s)) > max {
			return fmt.Errorf("%s: %q longer than %v", path, s, max)
		}
	case "integer":
		f, ok := value.(float64)
		if !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: %v is not an integer", path, value)
		}
	case "boolean":
		if _, ok := value.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", path, value)
		}
	}
	return nil
}

// checkCall validates a parsed call against the tools' schemas.
func checkCall(tools []chat.Tool, call chat.ToolCall) error {
	i := slices.IndexFunc(tools, func(t chat.Tool) bool { return t.Name == call.Name })
	if i < 0 {
		return fmt.Errorf("call to unknown tool %q", call.Name)
	}
	schema := map[string]any{"type": "object", "required": []any{}}
	if len(tools[i].Parameters) > 0 {
		if err := json.Unmarshal(tools[i].Parameters, &schema); err != nil {
			return err
		}
		if _, ok := schema["required"]; !ok {
			schema["required"] = []any{}
		}
	}
	var args any
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return fmt.Errorf("%s: arguments %s: %v", call.Name, call.Arguments, err)
	}
	return validate(schema, args, call.Name)
}

// constrainedCalls runs forced tool calls on a random model and checks
// that every call parses and matches its tool's schema.
func constrainedCalls(t *testing.T, e *Engine, requests int) {
	tools := shopTools()
	msgs := question("You are a live-stream host. Use the tools.", "Put a red jacket in my cart as a gift, please.")
	results := make([]Result, requests)
	streamed := make([][]chat.ToolCall, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			req := Request{Messages: msgs, Tools: tools, Constrain: true, Prefix: chat.ToolCallOpen, MaxTokens: 400,
				Sampling: sample.Config{Temperature: 1, Seed: uint64(i)}}
			if i == 0 {
				req.Sampling = greedy()
			}
			res, err := e.Generate(context.Background(), req, func(d Delta) error {
				if d.ToolCall != nil {
					streamed[i] = append(streamed[i], *d.ToolCall)
				}
				return nil
			})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	names := map[string]int{}
	for i, res := range results {
		if res.ToolCallError != nil {
			t.Errorf("request %d (%s after %d tokens): %v in %q", i, res.FinishReason, res.Usage.CompletionTokens, res.ToolCallError, res.Text)
			continue
		}
		if len(res.ToolCalls) == 0 || res.FinishReason != FinishToolCalls {
			t.Errorf("request %d: %d calls, finish %q: %q", i, len(res.ToolCalls), res.FinishReason, res.Text)
		}
		if res.Content != "" {
			t.Errorf("request %d: text around the calls: %q", i, res.Content)
		}
		if len(streamed[i]) != len(res.ToolCalls) {
			t.Errorf("request %d: %d calls streamed, %d in the result", i, len(streamed[i]), len(res.ToolCalls))
		}
		for _, call := range res.ToolCalls {
			names[call.Name]++
			if err := checkCall(tools, call); err != nil {
				t.Errorf("request %d: %v in %q", i, err, res.Text)
			}
		}
		t.Logf("request %d: %d prompt tokens (%d cached), %d generated: %q", i, res.Usage.PromptTokens, res.Usage.CachedTokens, res.Usage.CompletionTokens, res.Text)
	}
	t.Logf("calls by tool: %v", names)
}

func TestConstrainedToolCalls(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := randomModel(t, "tiny", tok, 9)
	constrainedCalls(t, startEngine(t, m, tok, Options{}), 8)
}

// Without the constraint the same forced calls from a random model are
// almost never valid, which is what makes the constraint's test meaningful.
func TestUnconstrainedCallsFail(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := randomModel(t, "tiny", tok, 9)
	e := startEngine(t, m, tok, Options{})
	valid := 0
	for i := range 4 {
		res, err := e.Generate(context.Background(), Request{Messages: question("host", "cart"), Tools: shopTools(), Prefix: chat.ToolCallOpen,
			MaxTokens: 60, Sampling: sample.Config{Temperature: 1, Seed: uint64(i)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ToolCallError == nil && len(res.ToolCalls) > 0 {
			valid++
		}
	}
	if valid == 4 {
		t.Error("every unconstrained random call was valid; the constrained test proves nothing")
	}
}

// qwen3Tokenizer loads the real Qwen3 tokenizer from
// ../shared/data/tokenizers/qwen3 relative to the repository root.
func qwen3Tokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("no go.mod above the package directory")
		}
		dir = filepath.Dir(dir)
	}
	path := filepath.Join(dir, "..", "shared", "data", "tokenizers", "qwen3", "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Qwen3 tokenizer not present at %s: %v", path, err)
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// With the real Qwen3 vocabulary (151k tokens, <tool_call> a single
// ordinary added token) the constraint holds too.
func TestConstrainedToolCallsQwen3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model over the 151k-token Qwen3 vocabulary")
	}
	tok := qwen3Tokenizer(t)
	m := randomModel(t, "tiny", tok, 10)
	constrainedCalls(t, startEngine(t, m, tok, Options{}), 3)
}

// The guard enters the constraint when the model itself opens a call in its
// answer (not in its reasoning), allows every token of a valid call, and
// then only a little white space, another call or the end of the turn.
func TestCallGuardFollowsReply(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := randomModel(t, "tiny", tok, 11)
	e := startEngine(t, m, tok, Options{})
	g, err := constrain.Compile(shopTools())
	if err != nil {
		t.Fatal(err)
	}
	vocab, after := e.constraintVocabulary()
	guard := newCallGuard(vocab, g, after)
	reply := newReplyText(tok, e.special, nil, false)
	push := func(text string) {
		t.Helper()
		for _, id := range tok.EncodeWithSpecial(text) {
			if mask := guard.allowed(); mask != nil && mask[id/64]&(1<<(id%64)) == 0 {
				t.Fatalf("token %d %q of %q not allowed", id, tok.TokenBytes(id), text)
			}
			reply.pushToken(id)
			if err := guard.accept(id, reply.raw, reply.contentStart()); err != nil {
				t.Fatal(err)
			}
		}
	}
	push("<think>\nMaybe <tool_call> is needed.\n</think>\n\nSure, one moment. ")
	if guard.call != nil || guard.allowed() != nil {
		t.Fatal("a tag inside the reasoning started the constraint")
	}
	push("<tool_call>")
	if guard.call == nil {
		t.Fatal("<tool_call> in the answer did not start the constraint")
	}
	push("\n" + `{"name": "get_price", "arguments": {"item": "hat", "size": "XL"}}` + "\n</tool_call>")
	if guard.call != nil || !guard.called {
		t.Fatal("the call did not complete")
	}
	im, _ := tok.TokenID("<|im_end|>")
	open, _ := tok.TokenID(chat.ToolCallOpen)
	nl := tok.EncodeWithSpecial("\n")[0]
	letter := tok.EncodeWithSpecial("a")[0]
	has := func(id int) bool { mask := guard.allowed(); return mask[id/64]&(1<<(id%64)) != 0 }
	if !has(im) || !has(open) || !has(nl) || has(letter) {
		t.Errorf("after a call: end %v, <tool_call> %v, newline %v, letter %v", has(im), has(open), has(nl), has(letter))
	}
	push("\n\n")
	if has(nl) || !has(im) || !has(open) {
		t.Error("white space still allowed after two tokens of it")
	}
	push("<tool_call>")
	if guard.call == nil {
		t.Error("a second call did not start the constraint")
	}
}

// CallTools narrow what the constraint allows without changing the prompt:
// a free-text item id shown to the model is held to the catalog's ids.
func TestCallToolsNarrowTheConstraintNotThePrompt(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := randomModel(t, "tiny", tok, 9)
	e := startEngine(t, m, tok, Options{})
	shown := []chat.Tool{{Name: "send_link", Description: "Pin an item's link.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}`)}}
	narrow := []chat.Tool{{Name: "send_link", Description: "Pin an item's link.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"item_id": {"type": "string", "enum": ["p-cream", "p-serum"]}}, "required": ["item_id"]}`)}}
	ctx := context.Background()
	var prompt []int
	for i := range 6 {
		req := Request{Messages: question("host", "cart"), Tools: shown, Prefix: chat.ToolCallOpen, MaxTokens: 60,
			Sampling: sample.Config{Temperature: 1, Seed: uint64(i)}, Constrain: true}
		free, err := e.Generate(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.CallTools = narrow
		res, err := e.Generate(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		prompt = append(prompt, free.Usage.PromptTokens, res.Usage.PromptTokens)
		// A random model may start a second call and run out of tokens
		// in it; every id it wrote, finished or not, must be the schema's.
		ids := regexp.MustCompile(`"item_id"\s*:\s*"([^"]*)"`).FindAllStringSubmatch(res.Text, -1)
		if len(ids) == 0 {
			t.Fatalf("seed %d: no item id written: %q", i, res.Text)
		}
		for _, id := range ids {
			if id[1] != "p-cream" && id[1] != "p-serum" {
				t.Errorf("seed %d: item_id %q is not one of the call schema's ids in %q (free call: %q)", i, id[1], res.Text, free.Text)
			}
		}
	}
	for _, n := range prompt[1:] {
		if n != prompt[0] {
			t.Errorf("prompt lengths %v: the call schemas changed what the model reads", prompt)
			break
		}
	}
	for _, bad := range [][]chat.Tool{{}, {{Name: "other", Parameters: narrow[0].Parameters}}} {
		_, err := e.Generate(ctx, Request{Messages: question("host", "cart"), Tools: shown, CallTools: bad, Constrain: true}, nil)
		if err == nil || !strings.Contains(err.Error(), "call schema") {
			t.Errorf("call schemas %v for tools %v: err %v, want a mismatch named", bad, shown, err)
		}
	}
}

// MustCall makes the reply a call of the one tool named, whatever the
// model would have called, and refuses a tool the prompt does not show.
func TestMustCallHoldsTheReplyToTheTool(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := randomModel(t, "tiny", tok, 9)
	e := startEngine(t, m, tok, Options{})
	ctx := context.Background()
	tools := shopTools()
	want := tools[len(tools)-1].Name
	for i := range 6 {
		res, err := e.Generate(ctx, Request{Messages: question("host", "cart"), Tools: tools, MustCall: want, Constrain: true,
			MaxTokens: 120, Sampling: sample.Config{Temperature: 1, Seed: uint64(i)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := regexp.MustCompile(`"name"\s*:\s*"([^"]*)"`).FindAllStringSubmatch(res.Text, -1)
		if !strings.HasPrefix(res.Text, chat.ToolCallOpen) || len(names) == 0 {
			t.Fatalf("seed %d: %q does not open with a call", i, res.Text)
		}
		for _, n := range names {
			if n[1] != want {
				t.Errorf("seed %d: a call of %q in %q, want only %q", i, n[1], res.Text, want)
			}
		}
	}
	for _, tc := range []struct {
		name string
		req  Request
		err  string
	}{
		{"not shown", Request{Messages: question("host", "cart"), Tools: tools, MustCall: "teleport"}, "teleport"},
		{"with a prefix", Request{Messages: question("host", "cart"), Tools: tools, MustCall: want, Prefix: "Sure"}, "Prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.Generate(ctx, tc.req, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want one naming %q", err, tc.err)
			}
		})
	}
}
