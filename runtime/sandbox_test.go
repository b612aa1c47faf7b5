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
	"github.com/livehat/livehat/plugins"
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
	// The example catalog's flash sale runs on the evening of 2026-11-29.
	ps := demoPluginSet(t, time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC), examples.DemoPlugins()...)
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
// demoPluginSet loads the named example plugins (built from source, with
// the test build cache) over the example catalog at the stream time now,
// with a deadline floor: tests check decisions, not latency, and a busy
// CI machine (or -race) must not turn a hook's deadline into a failure.
func demoPluginSet(tb testing.TB, now time.Time, names ...string) *PluginSet {
	tb.Helper()
	ctx := context.Background()
	sb, err := OpenSandbox(ctx, testCacheDir(), quietLogger())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sb.Close(ctx) })
	sb.SetTimeoutFloor(5 * time.Second)
	for _, name := range names {
		if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "examples", "plugins", name)); err != nil {
			tb.Fatalf("load %s: %v", name, err)
		}
	}
	catalog, err := os.ReadFile("../examples/plugins/catalog.json")
	if err != nil {
		tb.Fatal(err)
	}
	ps, err := sb.Plugins(catalog, func() time.Time { return now })
	if err != nil {
		tb.Fatal(err)
	}
	return ps
}

func testCacheDir() string { return filepath.Join(os.TempDir(), "livehat-test-plugin-cache") }

// TestTimeoutFloorReachesPackages loads a packaged plugin, the way the
// console loads what an organisation installed: the sandbox's floor
// raises the deadline it runs under and leaves its manifest as written.
func TestTimeoutFloorReachesPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WASM plugin; skipped with -short")
	}
	ctx := context.Background()
	dir := filepath.Join("..", "examples", "plugins", "speech")
	m, _, err := plugins.ReadManifestDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := plugins.BuildGoCached(ctx, dir, testCacheDir())
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m.Wasm.SHA256 = ""
	pkg := &plugins.Package{Manifest: m, Wasm: wasm}
	pkg.Pin()
	stated := m.Limits.WithDefaults().Timeout()
	sb, err := OpenSandbox(ctx, testCacheDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	for _, c := range []struct {
		floor, want time.Duration
	}{{0, stated}, {stated / 2, stated}, {5 * time.Second, 5 * time.Second}} {
		sb.SetTimeoutFloor(c.floor)
		p, err := sb.Load(ctx, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if p.Timeout() != c.want || p.Manifest().Limits.WithDefaults().Timeout() != stated {
			t.Errorf("floor %v: runs under %v (want %v), manifest says %v (want %v)", c.floor, p.Timeout(), c.want,
				p.Manifest().Limits.WithDefaults().Timeout(), stated)
		}
	}
}
