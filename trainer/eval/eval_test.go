package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/ifeval"
	"github.com/livehat/livehat/trainer/liveroom"
)

var update = flag.Bool("update", false, "rewrite the committed suite files from their seeds")

func base(t testing.TB) *harness.Harness {
	t.Helper()
	return testfixture.DemoHarness(t)
}

// TestSuitesUpToDate regenerates every suite from its seeds and compares
// it with the committed file: generators are deterministic, and a change
// to them (or to the demo harness) shows up here instead of silently
// changing what models are scored on. Run with -update to rewrite.
func TestSuitesUpToDate(t *testing.T) {
	for _, name := range []string{SuiteLSQA, SuiteHVQA, SuiteRobust, SuiteStrategy, SuiteTransfer} {
		s, err := Generate(name, base(t))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.WriteJSONL(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("suites", name+".jsonl")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, buf.Bytes()) {
			t.Errorf("%s: the committed suite differs from its generator; run go test ./trainer/eval -run TestSuitesUpToDate -update if the change is intended", path)
		}
		back, err := ReadSuite(name, bytes.NewReader(buf.Bytes()))
		if err != nil || len(back.Items) != len(s.Items) {
			t.Errorf("%s does not read back: %v", name, err)
		}
	}
}

func TestReadSuiteRejectsBadFiles(t *testing.T) {
	for _, bad := range []string{
		"",
		"{not json}\n",
		`{"id":"a","question":{"text":"x"},"bogus":1}` + "\n",
		`{"id":"","question":{"text":"x"}}` + "\n",
		`{"id":"a","question":{"text":"x"}}` + "\n" + `{"id":"a","question":{"text":"y"}}` + "\n",
	} {
		if _, err := ReadSuite("t", strings.NewReader(bad)); err == nil {
			t.Errorf("ReadSuite(%q) succeeded", bad)
		}
	}
}

// TestExpertThroughTheRuntime runs a slice of both suites with the expert
// policy through the real runtime and the example WASM hooks: the expert
// must score at least 99, so the suites, the runtime and the hooks agree
// on what a correct answer is.
func TestExpertThroughTheRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	sb := hookSandbox(t)
	r := &Runner{Base: base(t), Sandbox: sb, Model: NewExpert, Parallel: 2}
	for _, name := range []string{SuiteLSQA, SuiteHVQA, SuiteRobust, SuiteStrategy} {
		s, err := OpenSuite(name)
		if err != nil {
			t.Fatal(err)
		}
		s.Items = s.Items[:min(60, len(s.Items))]
		rep, err := r.Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Score < 99 || rep.Errors > 0 {
			for _, w := range rep.Worst {
				t.Logf("%s %s %q → %q: %v", w.ID, w.Category, w.Reply, w.Outcome, w.Grade.Deductions)
			}
			t.Errorf("%s: expert scored %.1f with %d errors, want ≥ 99", name, rep.Score, rep.Errors)
		}
		if rep.ToolNames < 99 || rep.CallArgs < 99 || rep.Facts < 99 {
			t.Errorf("%s: expert's tool names %.1f, arguments %.1f, facts %.1f; want ≥ 99", name, rep.ToolNames, rep.CallArgs, rep.Facts)
		}
		if rep.OnAirUnbacked > 0 || rep.OnAir < len(s.Items)/2 {
			for _, it := range rep.UnbackedItems {
				t.Logf("%s %q: %+v", it.ID, it.Reply, it.Grade.Unbacked)
			}
			t.Errorf("%s: %d of the expert's %d replies on air have an unbacked statement, want 0 of most", name, rep.OnAirUnbacked, rep.OnAir)
		}
	}
}

// naiveModel plays the expert's plan without looking at tool results, as
// a model that ignores failures would.
type naiveModel struct{ msgs []harness.Message }

func (m *naiveModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	k := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != harness.RoleUser; i-- {
		if req.Messages[i].Role == harness.RoleAssistant {
			k++
		}
	}
	var turns []harness.Message
	for _, msg := range m.msgs {
		if msg.Role == harness.RoleAssistant {
			turns = append(turns, msg)
		}
	}
	if len(turns) == 0 {
		return runtime.Response{}, nil
	}
	t := turns[min(k, len(turns)-1)]
	return runtime.Response{Content: t.Content, ToolCalls: t.ToolCalls}, nil
}

// randomModel answers every question with one fixed guess, never calling
// a tool.
type randomModel struct{ reply string }

func (m randomModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	return runtime.Response{Content: m.reply}, nil
}

// TestGradersCanFail runs policies that must not pass: one that ignores
// tool failures scores far below the expert on the robustness suite, and
// one that guesses without tools scores near zero everywhere, so the
// suites measure something.
func TestGradersCanFail(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	sb := hookSandbox(t)
	robust, err := OpenSuite(SuiteRobust)
	if err != nil {
		t.Fatal(err)
	}
	var faulted []Item
	for _, it := range robust.Items {
		if it.Fault != nil {
			faulted = append(faulted, it)
		}
	}
	naive := &Runner{Base: base(t), Sandbox: sb, Parallel: 2, Model: func(c Case) (runtime.Model, error) {
		msgs, err := c.Room.Expert(c.Harness, c.Mapping, c.Item.Question)
		return &naiveModel{msgs: msgs}, err
	}}
	rep, err := naive.Run(ctx, &Suite{Name: "robust-faults", Items: faulted[:60]})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Score > 60 {
		t.Errorf("a policy that ignores tool failures scored %.1f on faulted items, want far below the expert's 100", rep.Score)
	}
	lsqa, err := OpenSuite(SuiteLSQA)
	if err != nil {
		t.Fatal(err)
	}
	// Every category, chit-chat included: a reply that ends on the safe line
	// earns nothing, so only spam (where silence is right) can score.
	guess := &Runner{Base: base(t), Sandbox: sb, Parallel: 2, Model: func(Case) (runtime.Model, error) {
		return randomModel{reply: "It is 99 yuan and in stock, size M. 有货，99元。"}, nil
	}}
	rep, err = guess.Run(ctx, &Suite{Name: "lsqa-guess", Items: lsqa.Items[:100]})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Score > 10 {
		t.Errorf("a guessing policy scored %.1f on the first 100 LSQA items, want near 0", rep.Score)
	}
	if rep.ToolNames != 0 || rep.CallArgs != 0 {
		t.Errorf("a policy that calls no tool: tool names %.1f, arguments %.1f; want 0", rep.ToolNames, rep.CallArgs)
	}
	if rep.OnAirUnbacked != rep.OnAir {
		t.Errorf("a guess that looks nothing up reached the audience %d times, and only %d were found unbacked", rep.OnAir, rep.OnAirUnbacked)
	}
}

// hookSandbox loads the example hook plugins the demo harness names.
func hookSandbox(t *testing.T) *runtime.Sandbox { return testfixture.DemoSandbox(t, nil) }

// testCacheDir is the plugin cache the test binaries of a run share.
func testCacheDir() string { return testfixture.PluginCacheDir() }

// TestIFEvalWithServedModel generates IFEval responses from an in-process
// OpenAI-compatible server and scores them through Evaluate.
func TestIFEvalWithServedModel(t *testing.T) {
	if _, err := ifeval.DefaultDataDir("."); err != nil {
		t.Skipf("IFEval data not found (%v): ../shared/data/ifeval is needed", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello world. this answer is short."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`)
	}))
	defer srv.Close()
	m, err := OpenModel(srv.URL, "m")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), Config{Base: base(t)}, m, Options{Suites: []string{SuiteIFEval}, Limit: 20, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Others) != 1 || len(res.IFEval) != 1 || len(res.Reports) != 0 {
		t.Fatalf("results %+v", res)
	}
	data, _ := json.Marshal(res.Others[0])
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s["name"] != "ifeval" || s["n"].(float64) != 20 {
		t.Errorf("summary = %v", s)
	}
	for _, k := range []string{"prompt_strict", "inst_strict", "prompt_loose", "inst_loose"} {
		v, ok := s[k].(float64)
		if !ok || v < 0 || v > 100 {
			t.Errorf("%s = %v", k, s[k])
		}
	}
	if s["prompt_strict"].(float64) >= 100 {
		t.Error("a fixed one-line answer cannot follow every instruction")
	}
}

// TestInterruptedRunKeepsFinishedItems cancels a run part way: the report
// holds the items that finished, not a prefix of the suite.
func TestInterruptedRunKeepsFinishedItems(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	sb := hookSandbox(t)
	s, err := OpenSuite(SuiteLSQA)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{Base: base(t), Sandbox: sb, Model: NewExpert, Parallel: 2, Progress: func(done, total int) {
		if done == 10 {
			cancel()
		}
	}}
	rep, err := r.Run(ctx, s)
	if err == nil {
		t.Fatal("a cancelled run reported no error")
	}
	if rep == nil || rep.N < 10 || rep.N >= len(s.Items) {
		t.Fatalf("report of an interrupted run: %+v", rep)
	}
	for _, it := range rep.Items {
		if it.ID == "" || it.Error != "" {
			t.Errorf("interrupted report holds an unfinished item: %+v", it)
		}
	}
}

// callSchemas records, for each request of a run, the item ids the call
// schemas hold item_id to (nil: none).
type callSchemas struct {
	mu   sync.Mutex
	seen [][]string
}

// callSchemaModel passes the turn to the expert and records its requests.
type callSchemaModel struct {
	expert runtime.Model
	rec    *callSchemas
}

func (m *callSchemaModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	var ids []string
	for _, s := range req.CallTools {
		var p struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if json.Unmarshal(s.Function.Parameters, &p) == nil && len(p.Properties["item_id"].Enum) > 0 {
			ids = p.Properties["item_id"].Enum
		}
	}
	m.rec.mu.Lock()
	m.rec.seen = append(m.rec.seen, ids)
	m.rec.mu.Unlock()
	return m.expert.Generate(ctx, req)
}

// With BindCatalog the runtime holds item_id to the room's items, as a
// live session does; without it the model sees its tools' own schemas.
func TestBindCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	sb := hookSandbox(t)
	lsqa, err := OpenSuite(SuiteLSQA)
	if err != nil {
		t.Fatal(err)
	}
	for _, bind := range []bool{false, true} {
		var mu sync.Mutex
		rec := &callSchemas{}
		rooms := map[string][]string{} // every room's ids, by item
		r := &Runner{Base: base(t), Sandbox: sb, Parallel: 2, BindCatalog: bind, Model: func(c Case) (runtime.Model, error) {
			expert, err := NewExpert(c)
			mu.Lock()
			rooms[c.Item.ID] = c.Room.ItemIDs()
			mu.Unlock()
			return &callSchemaModel{expert: expert, rec: rec}, err
		}}
		rep, err := r.Run(context.Background(), &Suite{Name: "lsqa-bind", Items: lsqa.Items[:20]})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Score < 99 {
			t.Errorf("bind %v: the expert scored %.1f", bind, rep.Score)
		}
		bound := 0
		for _, ids := range rec.seen {
			if ids == nil {
				continue
			}
			bound++
			if !bind {
				t.Fatalf("ids free, but a call schema holds item_id to %v", ids)
			}
			// A room's items, or after the turn's lookup the items it
			// found.
			known := false
			for _, room := range rooms {
				known = known || !slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(room, id) })
			}
			if !known {
				t.Errorf("item_id held to %v, which is no room's items", ids)
			}
		}
		if bind && bound == 0 {
			t.Error("ids bound, but no request carried call schemas")
		}
	}
}

// TestTransferThroughTheRuntime runs a slice of the transfer suite with
// the expert policy through the runtime and the example plugins, on the
// catalogs the items carry: the gold, the room read from each catalog and
// the storefront plugin agree (every gold call made, every fact stated).
// Accuracy is the grader's, whose checks of unbacked statements are
// reported by the suite, not held here.
func TestTransferThroughTheRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	s, err := OpenSuite(SuiteTransfer)
	if err != nil {
		t.Fatal(err)
	}
	s.Items = s.Items[:60]
	r := &Runner{Base: base(t), Sandbox: hookSandbox(t), Model: NewExpert, Parallel: 2}
	rep, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors > 0 || rep.Effectiveness < 99 || rep.ToolNames < 99 || rep.CallArgs < 99 || rep.Facts < 99 {
		for _, w := range rep.Worst {
			t.Logf("%s %s %q: %v", w.ID, w.Category, w.Reply, w.Grade.Deductions)
		}
		t.Errorf("transfer: expert effectiveness %.1f, tool names %.1f, arguments %.1f, facts %.1f, %d errors; want ≥ 99 and none",
			rep.Effectiveness, rep.ToolNames, rep.CallArgs, rep.Facts, rep.Errors)
	}
	t.Logf("transfer through the runtime: expert score %.1f, accuracy %.1f, unbacked on air %d", rep.Score, rep.Accuracy, rep.OnAirUnbacked)
}

func TestItemRoomFromItsCatalog(t *testing.T) {
	good, err := json.Marshal(liveroom.TransferCatalog(7))
	if err != nil {
		t.Fatal(err)
	}
	room, data, err := Item{Room: 7, Catalog: good}.room()
	if err != nil || room.Seed != 7 || !bytes.Equal(data, good) || len(room.Items) == 0 || !room.Items[0].FromCatalog {
		t.Fatalf("room from a transfer catalog: %v", err)
	}
	if _, _, err := (Item{Catalog: json.RawMessage(`{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"x","price":-1}]}`)}).room(); err == nil ||
		!strings.Contains(err.Error(), "products[0].price") {
		t.Errorf("a bad catalog gave %v, want an error naming products[0].price", err)
	}
	generated, data, err := Item{Room: 3}.room()
	if want, _ := liveroom.NewRoom(3, roomConfig()).CatalogJSON(); err != nil || !bytes.Equal(data, want) || generated.Seed != 3 {
		t.Errorf("an item without a catalog does not get its generated room: %v", err)
	}
}
