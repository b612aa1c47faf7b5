package plugins_test

import (
	"fmt"

	"github.com/livehat/livehat/plugins"
)

// A manifest declares what a plugin implements, what it may use and its
// limits; ParseManifest reads JSON or YAML strictly and reports every
// problem at once.
func ExampleParseManifest() {
	m, err := plugins.ParseManifest([]byte(`
abi: 1
name: moderation
version: 1.0.0
wasm: {file: moderation.wasm}
hooks:
  - {name: screen_message, event: viewer_message, on_failure: fail_open}
permissions:
  - {name: kv, reason: Remembers each viewer's last message to catch repeats.}
limits: {timeout_ms: 200}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	export, _ := m.Export(plugins.KindHook, "screen_message")
	fmt.Println(m.Name, m.Version, m.Kinds(), export, m.Has(plugins.PermKV), m.Limits.Timeout())

	_, err = plugins.ParseManifest([]byte(`{"abi": 2, "name": "Bad Name", "version": "1.0", "wasm": {"file": "x.wasm"}}`))
	fmt.Println(err != nil)
	// Output:
	// moderation 1.0.0 [hook] screen_message true 200ms
	// true
}

// DecodeDecision checks a hook's output against the harness's contract.
func ExampleDecodeDecision() {
	d, err := plugins.DecodeDecision([]byte(`{"action":"retry","feedback":"The cream costs ¥259, not ¥199."}`))
	fmt.Println(d.Action, d.Feedback, err)
	_, err = plugins.DecodeDecision([]byte(`{"action":"deny"}`))
	fmt.Println(err)
	// Output:
	// retry The cream costs ¥259, not ¥199. <nil>
	// hook decision deny: reason is empty
}
