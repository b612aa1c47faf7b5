package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// catalogItems returns what a session knows of a catalog document (its
// items, words and variants).
func catalogItems(t *testing.T, doc []byte) demoCatalog {
	t.Helper()
	c, err := catalog.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out demoCatalog
	for _, p := range c.Products {
		out.names, out.ids = append(out.names, p.Name), append(out.ids, p.ID)
	}
	out.words, out.variants = c.Words(), c.VariantNames()
	return out
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
	stream := demoStream{model: demoModel(t), harness: testfixture.DemoHarness(t),
		plugins: testfixture.DemoPlugins(t, testfixture.QuietLogger(), nil), demoCatalog: catalogItems(t, examples.Catalog)}
	cases := []demoCase{
		{"精华多少钱？", []string{"product_lookup"}, []string{"199"}, ""},
		{"How much is the lipstick?", []string{"product_lookup"}, []string{"89"}, ""},
		// The cream has two coupons: 10 % off everything, which the order
		// reaches (233.10 after it: the rule-based host's answer), and 50
		// off from 300, which it does not. Either is the right answer.
		{"面霜有优惠券吗？", []string{"product_lookup", "coupon_check(p-cream)"}, []string{"300|233.1"}, ""},
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
		for _, p := range stream.ask(t, c) {
			t.Error(p)
		}
	}
}

// demoCase is one viewer question of a demo test and what its answer must
// hold.
type demoCase struct {
	ask string
	// calls are the tool calls the turn must make, as name(argument).
	calls []string
	// want must all be in the reply; a want of several words joined by
	// "|" is met by any of them ("售罄|卖完").
	want []string
	// size, when set, is the one size the reply may name.
	size string
}

// demoModel loads the bundled model, or the checkpoint folder
// LIVEHAT_DEMO_MODEL names: how a candidate for the bundled model is
// judged (issue #19). The engine closes when the test ends.
func demoModel(t *testing.T) runtime.Model {
	t.Helper()
	dir, err := examples.WriteModel(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("LIVEHAT_DEMO_MODEL"); d != "" {
		dir = d
		t.Logf("the checkpoint in %s instead of the bundled model", dir)
	}
	eng, err := engine.Load(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return runtime.LocalModel{Engine: eng, Constrain: true}
}

// demoStream is what a console live session of a stream gives the
// runtime: its model, harness and plugins, the first item featured and
// every item on sale in the prompt, the catalog's ids that item arguments
// are held to and its words that item queries are held to.
type demoStream struct {
	model   runtime.Model
	harness *harness.Harness
	plugins *runtime.PluginSet
	demoCatalog
}

// demoCatalog is what a session knows of its catalog: the items' names and
// ids, in order; the ids, names and aliases (words); the variant names.
type demoCatalog struct {
	names, ids, words, variants []string
}

// ask asks c in a fresh session, as a viewer's first question meets it,
// greedy, and returns what is wrong with the answer (nothing for a right
// one). Whatever the answer, the viewer must get one in words: a turn
// that fails, a normal question refused, or markup spoken (a tool call,
// JSON) is a test error, as it would be on air.
func (d demoStream) ask(t *testing.T, c demoCase) []string {
	t.Helper()
	items := func() []harness.ContextItem {
		return []harness.ContextItem{runtime.FeaturedItem(d.names[0], d.ids[0]), runtime.ItemsOnSale(d.names, d.ids)}
	}
	s, err := runtime.NewSession(context.Background(), runtime.Config{Stream: "demo", Harness: d.harness, Model: d.model,
		Plugins: d.plugins, Logger: testfixture.QuietLogger(), Context: items, CatalogItems: func() []string { return d.ids },
		CatalogWords: func() []string { return d.words }, CatalogVariants: func() []string { return d.variants }})
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
	t.Logf("%q → %s %q (calls %v)", c.ask, turn.Outcome, turn.Reply, calls)
	if turn.Outcome != runtime.OutcomeReplied && turn.Outcome != runtime.OutcomeSafeLine || spokenMarkup.MatchString(turn.Reply) {
		t.Errorf("%q: on air as %s (%s): %q", c.ask, turn.Outcome, turn.Reason, turn.Reply)
	}
	if turn.Outcome != runtime.OutcomeReplied {
		return []string{fmt.Sprintf("%q: outcome %s (%s), reply %q, calls %v", c.ask, turn.Outcome, turn.Reason, turn.Reply, calls)}
	}
	var problems []string
	for _, want := range c.calls {
		if !containsCall(calls, want) {
			problems = append(problems, fmt.Sprintf("%q: no call %s among %v (reply %q)", c.ask, want, calls, turn.Reply))
		}
	}
	for _, w := range c.want {
		if !containsAny(turn.Reply, strings.Split(w, "|")) {
			problems = append(problems, fmt.Sprintf("%q: reply %q lacks %q (calls %v)", c.ask, turn.Reply, w, calls))
		}
	}
	if c.size != "" {
		// "XL" contains "L": read the sizes the reply names as words.
		if got := sizeWords.FindAllStringSubmatch(turn.Reply, -1); len(got) != 1 || got[0][1] != c.size {
			problems = append(problems, fmt.Sprintf("%q: reply %q does not recommend exactly size %s (calls %v)", c.ask, turn.Reply, c.size, calls))
		}
	}
	if len(problems) > 0 && testing.Verbose() {
		// A miss is read from the turn: what each tool gave and what the
		// hooks sent back.
		for _, m := range turn.Messages {
			if m.Role == harness.RoleSystem {
				continue
			}
			line := m.Content
			for _, tc := range m.ToolCalls {
				line += fmt.Sprintf(" [call %s %s]", tc.Name, tc.Arguments)
			}
			t.Logf("    %s: %s", m.Role, line)
		}
	}
	return problems
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// spokenMarkup finds what a viewer must never hear: tool-call tags and
// JSON.
var spokenMarkup = regexp.MustCompile(`</?tool_call>|\{\s*"|"\s*:\s*[\[{"0-9]`)

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

// callsOf lists a turn's tool calls as "name(item_id)", "name[query]"
// for a lookup, or "name" for a call with neither.
func callsOf(turn *runtime.Turn) []string {
	var out []string
	for _, st := range turn.Steps {
		if st.Kind != "tool" {
			continue
		}
		var args struct {
			ItemID string `json:"item_id"`
			Query  string `json:"query"`
		}
		s := st.Name
		if json.Unmarshal(st.Input, &args) == nil && args.ItemID != "" {
			s += "(" + args.ItemID + ")"
		} else if args.Query != "" {
			s += "[" + args.Query + "]"
		}
		out = append(out, s)
	}
	return out
}

// containsCall reports whether calls has want, where a want without
// arguments matches a call of that name with any.
func containsCall(calls []string, want string) bool {
	for _, c := range calls {
		if c == want || (!strings.Contains(want, "(") && strings.TrimRight(strings.SplitN(c, "[", 2)[0], " ") == want) {
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
