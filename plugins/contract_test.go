package plugins

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/sdk"
)

// TestHookInputReachesTheSDK: every field the host sends a hook arrives in
// the SDK's HookInput with the same value, so a guest sees what the ABI
// documents.
func TestHookInputReachesTheSDK(t *testing.T) {
	in := HookInput{Event: harness.EventAfterResponse, Stream: "s1", Session: "x1",
		Viewer: &Viewer{ID: "v1", Name: "小明", Orders: 3}, Text: "修护面霜259元", ReplyChars: 120,
		Config: json.RawMessage(`{"language":true}`), Message: "面霜多少钱", Lang: "zh",
		Calls: []ToolCall{{Name: "find_item", Plugin: "storefront", Export: "product_lookup",
			Arguments: json.RawMessage(`{"query":"面霜"}`), Result: json.RawMessage(`{"price":"259"}`)}},
		Context: []harness.ContextItem{{Title: "Featured item", Text: "修护面霜"}}, Attempt: 1, Attempts: 2}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sdk.DecodeHookInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := &sdk.HookInput{Event: sdk.EventAfterResponse, Stream: "s1", Session: "x1",
		Viewer: &sdk.Viewer{ID: "v1", Name: "小明", Orders: 3}, Text: "修护面霜259元", ReplyChars: 120,
		Config: []byte(`{"language":true}`), Message: "面霜多少钱", Lang: "zh",
		Calls: []sdk.ToolCall{{Name: "find_item", Plugin: "storefront", Export: "product_lookup",
			Arguments: []byte(`{"query":"面霜"}`), Result: []byte(`{"price":"259"}`)}},
		Context: []sdk.ContextItem{{Title: "Featured item", Text: "修护面霜"}}, Attempt: 1, Attempts: 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the SDK decoded\n%+v\nwant\n%+v", got, want)
	}
	// Every field of the host's struct is covered above: a new one must
	// be added to the SDK and to this test.
	if n := reflect.TypeFor[HookInput]().NumField(); n != 14 {
		t.Fatalf("HookInput has %d fields; extend the SDK's decoder and this test", n)
	}
}
