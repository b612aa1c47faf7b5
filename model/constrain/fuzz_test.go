package constrain

import (
	"strings"
	"testing"
)

// FuzzConstraint feeds arbitrary text to the automaton: it must never panic;
// wherever it has accepted a prefix, some token must be allowed next (no dead
// ends) unless the call is done; and a finished call must be valid against
// its schema.
func FuzzConstraint(f *testing.F) {
	f.Add(`{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>`)
	f.Add("\n" + `{"name": "lookup_price", "arguments": {"sku": "ab", "tags": ["hot"], "meta": {"note": null}}}` + "\n</tool_call>")
	f.Add(`{"name": "note_anything", "arguments": {"a": [1, -2.5e+3, {"b": "\u00e9"}], "c": true}} </tool_call>`)
	f.Add(`{"name": "now", "arguments": {}}</tool_call>`)
	f.Add(`{"name": "lookup_price", "arguments": {"choice": "a<</tool`)
	vocab, g, _ := compileTest(f)
	schemas := validators(f)
	f.Fuzz(func(t *testing.T, text string) {
		c := NewToolCallConstraint(vocab, g)
		accepted := 0
		for accepted < len(text) && c.AcceptText(text[accepted:accepted+1]) == nil {
			accepted++
		}
		if c.Done() {
			checkCall(t, strings.TrimLeft(text[:accepted], " \n"), schemas)
			return
		}
		if c.Allowed(nil).Len() == 0 {
			t.Fatalf("dead end after %q", text[:accepted])
		}
	})
}
