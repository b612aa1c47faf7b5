package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
)

// TestExamplePluginsInTheLoop runs turns through the real WASM hooks of
// the example plugins (moderation, compliance, speech length) against the
// demo harness and the example catalog: spam is dropped before the model,
// a wrong price is sent back to the model with feedback, and the corrected
// reply is spoken.
func TestExamplePluginsInTheLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	sb, err := OpenSandbox(ctx, testCacheDir(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	// The test checks decisions, not latency: a busy CI machine (or -race)
	// must not turn the compliance hook's 300 ms deadline into a failure.
	sb.SetTimeoutFloor(5 * time.Second)
	for _, name := range examples.DemoPlugins() {
		if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "examples", "plugins", name)); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	catalog, err := os.ReadFile("../examples/plugins/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	// The example catalog's flash sale runs on the evening of 2026-11-29.
	streamTime := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	ps, err := sb.Plugins(catalog, func() time.Time { return streamTime })
	if err != nil {
		t.Fatal(err)
	}
	h := demo(t)
	replies := []string{"The serum is only ¥9 today!", "The serum is ¥169 in the flash sale."}
	n := 0
	s := startSession(t, Config{Harness: h, Plugins: ps, Model: scriptedModel(func(req Request) (Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == harness.RoleUser && !strings.Contains(last.Content, "rejected"):
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
		case last.Role == harness.RoleTool && last.Name == "load_skill":
			return Response{ToolCalls: []harness.ToolCall{call("product_lookup", `{"query":"serum"}`)}}, nil
		default:
			r := replies[min(n, 1)]
			n++
			return Response{Content: r}, nil
		}
	})})
	ev := s.Listen(64)

	spam := ask(t, s, ev, "加微信 abc12345 低价代购 http://spam.example")
	if spam.Outcome != OutcomeDenied {
		t.Errorf("spam: outcome %s (%s), want denied by the moderation plugin", spam.Outcome, spam.Reason)
	}
	turn := ask(t, s, ev, "How much is the serum?")
	if turn.Outcome != OutcomeReplied || !strings.Contains(turn.Reply, "169") {
		t.Fatalf("turn = %s %q (%s)", turn.Outcome, turn.Reply, turn.Reason)
	}
	looked := false
	for _, st := range turn.Steps {
		if st.Kind == "tool" && st.Name == "product_lookup" && strings.Contains(st.Output, `"item_id":"p-serum"`) {
			looked = true
		}
	}
	if !looked {
		t.Errorf("the storefront plugin did not answer the lookup; steps: %+v", turn.Steps)
	}
	retried := false
	for _, st := range turn.Steps {
		if st.Kind == "hook" && st.Name == "compliance" && st.Decision != nil && st.Decision.Action == harness.ActionRetry {
			retried = true
		}
	}
	if !retried {
		t.Errorf("the compliance plugin did not send the wrong price back; steps: %+v", turn.Steps)
	}
}

// testCacheDir is shared by the test binaries of a run, so the example
// plugins are compiled once (the cache is keyed by a hash of their sources
// and written atomically).
func testCacheDir() string { return filepath.Join(os.TempDir(), "livehat-test-plugin-cache") }
