package examples_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/runtime"
)

// demoCatalog returns the demo catalog's item names and ids, in order.
func demoCatalog(t *testing.T) (names, ids []string) {
	t.Helper()
	c, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Products {
		names, ids = append(names, p.Name), append(ids, p.ID)
	}
	return names, ids
}

// TestBundledModelAnswersTheDemoStream loads the bundled model and asks it
// the demo stream's common questions — price, coupon, size, stock,
// shipping and link, in Chinese and English — through the real runtime
// with the example plugins over the demo catalog (item arguments held to
// its ids, as a console live session holds them), greedy, one fresh
// session per question as a viewer's first question meets it.
func TestBundledModelAnswersTheDemoStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins and runs the bundled model; skipped with -short")
	}
	ctx := context.Background()
	dir, err := examples.WriteModel(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// LIVEHAT_DEMO_MODEL asks the same questions of another checkpoint
	// folder: how a candidate for the bundled model is judged (issue #19).
	if d := os.Getenv("LIVEHAT_DEMO_MODEL"); d != "" {
		dir = d
		t.Logf("the checkpoint in %s instead of the bundled model", dir)
	}
	eng, err := engine.Load(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	h := testfixture.DemoHarness(t)
	quiet := testfixture.QuietLogger()
	ps := testfixture.DemoPlugins(t, quiet, nil)
	model := runtime.LocalModel{Engine: eng, Constrain: true}
	// What a console live session of the demo stream gives the runtime:
	// the featured item and the items on sale in the prompt, and the
	// catalog's ids that item arguments are held to.
	names, ids := demoCatalog(t)
	demoContext := func() []harness.ContextItem {
		return []harness.ContextItem{runtime.FeaturedItem(names[0], ids[0]), runtime.ItemsOnSale(names, ids)}
	}
	demoItems := func() []string { return ids }
	cases := []struct {
		ask string
		// calls are the tool calls the turn must make, as name(argument).
		calls []string
		// want must all be in the reply.
		want []string
		// size, when set, is the one size the reply may name.
		size string
	}{
		{"精华多少钱？", []string{"product_lookup"}, []string{"199"}, ""},
		{"How much is the lipstick?", []string{"product_lookup"}, []string{"89"}, ""},
		{"面霜有优惠券吗？", []string{"product_lookup", "coupon_check(p-cream)"}, []string{"300"}, ""},
		{"Is there a coupon for the serum? What's the final price?", []string{"product_lookup", "coupon_check(p-serum)"}, []string{"179"}, ""},
		{"身高170体重65，卫衣穿什么码？", []string{"product_lookup"}, nil, "L"},
		{"I'm 160cm and 50kg, which size of the hoodie should I get?", []string{"product_lookup"}, nil, "M"},
		{"防晒还有货吗？", []string{"product_lookup", "check_stock(p-sunscreen)"}, []string{"售罄"}, ""},
		{"Is the lipstick in stock?", []string{"product_lookup", "check_stock(p-lipstick)"}, []string{"in stock"}, ""},
		{"卫衣几天发货？", []string{"product_lookup", "shipping_policy(p-hoodie)"}, []string{"2天"}, ""},
		{"How long does shipping take for the serum?", []string{"product_lookup", "shipping_policy(p-serum)"}, []string{"2 days"}, ""},
		{"口红的链接在哪", []string{"product_lookup", "send_link(p-lipstick)"}, []string{"置顶"}, ""},
		{"Where is the link for the cream?", []string{"product_lookup", "send_link(p-cream)"}, []string{"link"}, ""},
	}
	for _, c := range cases {
		s, err := runtime.NewSession(ctx, runtime.Config{Stream: "demo", Harness: h, Model: model, Plugins: ps, Logger: quiet,
			Context: demoContext, CatalogItems: demoItems})
		if err != nil {
			t.Fatal(err)
		}
		ev := s.Listen(64)
		if err := s.Submit(runtime.Message{Viewer: "v1", Text: c.ask}); err != nil {
			t.Fatal(err)
		}
		turn := nextTurn(t, ev)
		s.Close()
		calls := callsOf(turn)
		if turn.Outcome != runtime.OutcomeReplied {
			t.Errorf("%q: outcome %s (%s), reply %q, calls %v", c.ask, turn.Outcome, turn.Reason, turn.Reply, calls)
			continue
		}
		for _, want := range c.calls {
			if !containsCall(calls, want) {
				t.Errorf("%q: no call %s among %v (reply %q)", c.ask, want, calls, turn.Reply)
			}
		}
		for _, w := range c.want {
			if !strings.Contains(turn.Reply, w) {
				t.Errorf("%q: reply %q lacks %q (calls %v)", c.ask, turn.Reply, w, calls)
			}
		}
		if c.size != "" {
			// "XL" contains "L": read the sizes the reply names as words.
			if got := sizeWords.FindAllStringSubmatch(turn.Reply, -1); len(got) != 1 || got[0][1] != c.size {
				t.Errorf("%q: reply %q does not recommend exactly size %s (calls %v)", c.ask, turn.Reply, c.size, calls)
			}
		}
	}
}

// sizeWords finds clothing sizes named as words ("L码", "size M").
var sizeWords = regexp.MustCompile(`(?:^|[^A-Za-z])(XXL|XL|XS|S|M|L)(?:[^A-Za-z]|$)`)

func nextTurn(t *testing.T, ev <-chan runtime.Event) *runtime.Turn {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Kind == runtime.EventTurn {
				return e.Record
			}
		case <-timeout:
			t.Fatal("no turn within 60 s")
		}
	}
}

// callsOf lists a turn's tool calls as "name(item_id)", or "name" for a
// call without an item id.
func callsOf(turn *runtime.Turn) []string {
	var out []string
	for _, st := range turn.Steps {
		if st.Kind != "tool" {
			continue
		}
		var args struct {
			ItemID string `json:"item_id"`
		}
		s := st.Name
		if json.Unmarshal(st.Input, &args) == nil && args.ItemID != "" {
			s += "(" + args.ItemID + ")"
		}
		out = append(out, s)
	}
	return out
}

// containsCall reports whether calls has want, where a want without
// arguments matches a call of that name with any.
func containsCall(calls []string, want string) bool {
	for _, c := range calls {
		if c == want || (!strings.Contains(want, "(") && strings.HasPrefix(c, want)) {
			return true
		}
	}
	return false
}

// TestWriteModelIsPrivate: serve writes the bundled model into the data
// folder before the store opens it, so a folder it creates is private
// (0700) and so are the files (0600), as the store's own.
func TestWriteModelIsPrivate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "livehat-data")
	folder, err := examples.WriteModel(data)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data folder %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	entries, err := os.ReadDir(folder)
	if err != nil || len(entries) == 0 {
		t.Fatalf("model folder: %v %v", entries, err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want 0600", e.Name(), fi.Mode().Perm(), err)
		}
	}
}
