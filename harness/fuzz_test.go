package harness

import (
	"os"
	"testing"
)

// FuzzParse feeds mutated harness documents to the loader: it must never
// panic, and whatever it accepts must validate, render and survive a
// marshal round trip with the same version.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/minimal.json", "testdata/broken/03-wrong-type.json", "testdata/broken/18-yaml-unknown-field.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, p[len(p)-4:] == "yaml")
	}
	f.Add([]byte(`{"name":"x","layout":{"style":"xml","sections":[{"kind":"persona","text":"t"}]},"pipeline":{"reply_chars":{"value":1,"min":1,"max":1},"tool_rounds":{"value":1,"min":1,"max":1},"retries":{"value":0,"min":0,"max":0}}}`), false)
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		format := FormatJSON
		if yaml {
			format = FormatYAML
		}
		h, err := Parse(data, format)
		if err != nil {
			return
		}
		if err := Validate(h); err != nil {
			t.Fatalf("Parse accepted a harness that does not validate: %v", err)
		}
		if _, err := Render(h, Conversation{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, RenderOptions{}); err != nil {
			t.Fatalf("accepted harness does not render: %v", err)
		}
		out, err := Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(out, FormatJSON)
		if err != nil {
			t.Fatalf("marshalled harness does not parse: %v\n%s", err, out)
		}
		if back.Version() != h.Version() {
			t.Fatal("marshal round trip changed the version")
		}
	})
}
