package chat

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestToolCallJSON(t *testing.T) {
	c := ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"杭州"}`)}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city":"杭州"}}}`
	if string(b) != want {
		t.Errorf("Marshal = %s\nwant %s", b, want)
	}
	for _, in := range []string{
		want,
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"杭州\"}"}}`,
		`{"id":"call_1","name":"get_weather","arguments":{"city":"杭州"}}`,
	} {
		var got ToolCall
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", in, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", in, got, c)
		}
	}
	var empty ToolCall
	if err := json.Unmarshal([]byte(`{"function":{"name":"now","arguments":""}}`), &empty); err != nil || string(empty.Arguments) != "{}" {
		t.Errorf("empty arguments string: %+v, %v", empty, err)
	}
	if err := json.Unmarshal([]byte(`{"function":{"name":"f","arguments":"{bad"}}`), &empty); err == nil {
		t.Error("arguments string holding invalid JSON accepted")
	}
	// A message round-trips through the dataset layout.
	m := Message{Role: RoleAssistant, Content: "ok", ToolCalls: []ToolCall{c}}
	b, _ = json.Marshal(m)
	var back Message
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("message round trip: %+v, %v (json %s)", back, err, b)
	}
}
