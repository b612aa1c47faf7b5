package sdk

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecisionJSONMatchesHarnessContract(t *testing.T) {
	cases := []Decision{Allow(), Deny("spam"), Rewrite("新的文本"), RewriteArguments([]byte(`{"id":"p1"}`)),
		Inject("viewer is new"), Retry("price is ¥99, not ¥89"), RetryCall("check the coupon first", "coupon_check")}
	for _, d := range cases {
		if err := d.Validate(); err != nil {
			t.Fatalf("%+v: %v", d, err)
		}
		b := d.AppendJSON(nil)
		// The host decodes with encoding/json into harness.HookDecision,
		// whose JSON names are these.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for k := range m {
			switch k {
			case "action", "reason", "text", "arguments", "context", "feedback", "call":
			default:
				t.Fatalf("%s: unknown field %q", b, k)
			}
		}
		back, err := DecodeDecision(b)
		if err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("round trip %s: %+v, %v", b, back, err)
		}
	}
	for _, bad := range []Decision{{}, {Action: "maybe"}, Deny(""), {Action: ActionRewrite}, RewriteArguments([]byte("{")), Inject(""), Retry(""), RetryCall("", "coupon_check"),
		{Action: ActionRewrite, Text: "x", Call: "coupon_check"}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestHookInputRoundTrip(t *testing.T) {
	in := &HookInput{Event: EventBeforeTool, Stream: "s1", Session: "x", Viewer: &Viewer{ID: "v1", Name: "小明", Orders: 2},
		Text: "多少钱?", Tool: &ToolCall{Name: "lookup", Arguments: []byte(`{"id":"p1"}`), Result: []byte(`[1]`)},
		ReplyChars: 120, Config: []byte(`{"max":3}`), Message: "面霜多少钱", Lang: "zh",
		Calls: []ToolCall{{Name: "find_item", Plugin: "storefront", Export: "product_lookup", Arguments: []byte(`{"query":"面霜"}`),
			Result: []byte(`{"price":"259"}`)}, {Name: "pin", Result: []byte(`{"error":"x"}`)}},
		Context: []ContextItem{{Title: "Featured", Text: "修护面霜"}}, Attempt: 2, Attempts: 2}
	b := in.AppendJSON(nil)
	if !json.Valid(b) {
		t.Fatalf("invalid JSON %s", b)
	}
	back, err := DecodeHookInput(b)
	if err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip %s: %+v, %v", b, back, err)
	}
}

// FuzzDecodeHookInput: any bytes decode or fail cleanly, and what
// decodes re-encodes to an equal input.
func FuzzDecodeHookInput(f *testing.F) {
	f.Add([]byte(`{"event":"viewer_message","viewer":{"id":"v"},"text":"hi","tool":null,"config":{"a":[1]}}`))
	f.Add([]byte(`{"tool":{"name":"x","arguments":{}}}`))
	f.Add([]byte(`{"event":"after_response","text":"¥199","message":"多少钱","lang":"zh","calls":[{"name":"a","plugin":"p","export":"e","result":{"price":"199"}}],"context":[{"title":"t","text":"x"}],"attempt":1,"attempts":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeHookInput(b)
		if err != nil {
			return
		}
		again, err := DecodeHookInput(in.AppendJSON(nil))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", in.AppendJSON(nil), err)
		}
		if !bytes.Equal(again.AppendJSON(nil), in.AppendJSON(nil)) {
			t.Fatalf("unstable: %s vs %s", again.AppendJSON(nil), in.AppendJSON(nil))
		}
	})
}
