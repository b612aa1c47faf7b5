package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// liveEnv is a test console with the rule-based host as its model and the
// example plugins installed (built once and cached by the sandbox),
// listening on a real port for the SSE tests.
type liveEnv struct {
	*testEnv
	base string
}

func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	e := newTestEnv(t, prometheus.NewRegistry())
	e.srv.cfg.Model, e.srv.cfg.ModelName = liveroom.Host{}, liveroom.HostModelName
	e.srv.cfg.PluginDirs = append(e.srv.cfg.PluginDirs, testfixture.DemoPluginDirs()...)
	if err := e.srv.InstallExamples(context.Background()); err != nil {
		t.Fatal(err)
	}
	warmPlugins(t, e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.App().Listener(ln)
	t.Cleanup(func() { _ = e.srv.App().ShutdownWithTimeout(5 * time.Second) })
	return &liveEnv{testEnv: e, base: "http://" + ln.Addr().String()}
}

// warmPlugins starts an instance of each example plugin: the first call of
// a freshly loaded plugin can run past its 300 ms deadline on a busy
// machine, which would turn the fail-closed compliance hook into a safe
// line, and these tests are about what the live room says.
func warmPlugins(t *testing.T, e *testEnv) {
	t.Helper()
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	ps, err := e.srv.streamPlugins(ctx, admin.OrgID, []byte(`{"products":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	hook := func(plugin, export string) error {
		_, err := ps.Hook(ctx, plugin, export, []byte(`{"event":"after_response","text":"hello","viewer":{"id":"warm-up"}}`))
		return err
	}
	calls := []func() error{
		func() error { return hook("moderation", "screen_message") },
		func() error { return hook("compliance", "check_reply") },
		func() error { return hook("speech-length", "fit_speech") },
		func() error {
			_, err := ps.Tool(ctx, "storefront", "product_lookup", []byte(`{"query":"x"}`))
			return err
		},
	}
	for _, call := range calls {
		for try := 0; try < 5 && call() != nil; try++ {
		}
	}
}

// liveSSE is one server-sent event.
type liveSSE struct {
	ID, Kind string
	Data     map[string]any
}

// subscribe opens a stream's live events and returns them as they come.
func (e *liveEnv) subscribe(t *testing.T, token, streamID string) <-chan liveSSE {
	t.Helper()
	return e.resubscribe(t, token, streamID, "")
}

// resubscribe opens a stream's live events as a reconnecting client does,
// with the id of the last event it saw.
func (e *liveEnv) resubscribe(t *testing.T, token, streamID, lastID string) <-chan liveSSE {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/api/streams/"+streamID+"/live/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan liveSSE, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev liveSSE
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Kind != "" {
					out <- ev
				}
				ev = liveSSE{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &ev.Data)
			}
		}
	}()
	t.Cleanup(cancel)
	return out
}

// waitFor returns the first event of the kind, failing after 30 s.
func waitLive(t *testing.T, events <-chan liveSSE, kind string) liveSSE {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("event stream ended before a %q event", kind)
			}
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within 30 s", kind)
		}
	}
}

func traceNames(list any, key string) []string {
	var out []string
	items, _ := list.([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, fmt.Sprint(m[key]))
	}
	return out
}

func TestLiveMessagesAreAnsweredOverSSE(t *testing.T) {
	e := newLiveEnv(t)
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	code, body, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json",
		`{"messages":[{"viewer":"v1","text":"精华多少钱？"}]}`)
	if code != 202 || body["accepted"] != float64(1) {
		t.Fatalf("messages: %d %s", code, raw)
	}
	msg := waitLive(t, events, "message")
	if msg.Data["viewer"] != "v1" || msg.Data["text"] != "精华多少钱？" {
		t.Errorf("message event = %v", msg.Data)
	}
	chunk := waitLive(t, events, "chunk")
	if !strings.Contains(fmt.Sprint(chunk.Data["text"]), "299元") || chunk.Data["lang"] != "zh" {
		t.Errorf("first chunk = %v", chunk.Data)
	}
	if traceNames(chunk.Data["actions"], "kind")[0] != "show_item" {
		t.Errorf("first chunk carries no show_item action: %v", chunk.Data["actions"])
	}
	turn := waitLive(t, events, "turn")
	d := turn.Data
	if d["outcome"] != "replied" || !strings.Contains(fmt.Sprint(d["reply"]), "199元") || d["source"] != "live" {
		t.Fatalf("turn = %v", d)
	}
	if got := strings.Join(traceNames(d["tools"], "name"), ","); got != "price_answer,product_lookup" {
		t.Errorf("tools = %s", got)
	}
	hooks := strings.Join(traceNames(d["hooks"], "name"), ",")
	if !strings.Contains(hooks, "spam_filter") || !strings.Contains(hooks, "compliance") {
		t.Errorf("hook decisions = %s", hooks)
	}
	if d["harness_version"] != e.demo.Version() || d["model"] != liveroom.HostModelName {
		t.Errorf("turn ran %v with %v", d["harness_version"], d["model"])
	}
	if timing, _ := d["timing"].(map[string]any); timing["total_ms"].(float64) <= 0 {
		t.Errorf("timing = %v", d["timing"])
	}

	// A client that reconnects gets what it missed since its last event.
	replay := e.resubscribe(t, e.merchant, e.demoStream, msg.ID)
	if got := waitLive(t, replay, "turn"); got.ID != turn.ID || got.Data["id"] != d["id"] {
		t.Errorf("replayed turn %s (%v), want %s", got.ID, got.Data["id"], turn.ID)
	}

	// The turn is stored and counted.
	code, _, raw = e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/live/turns", "", "")
	var stored []turnTrace
	if err := json.Unmarshal(raw, &stored); code != 200 || err != nil || len(stored) != 1 || stored[0].ID != d["id"] {
		t.Fatalf("turns: %d %s", code, raw)
	}
	if len(stored[0].Tools) != 2 || stored[0].Tools[1].Name != "product_lookup" || stored[0].HarnessVersion != e.demo.Version() {
		t.Errorf("stored trace = %+v", stored[0])
	}
	code, one, _ := e.call(t, e.merchant, "GET", "/api/live/turns/"+stored[0].ID, "", "")
	if code != 200 || one["turn"].(map[string]any)["reply"] != d["reply"] {
		t.Errorf("one turn: %d %v", code, one)
	}
	code, stats, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/live/stats", "", "")
	if code != 200 || stats["turns"] != float64(1) || stats["session"] == "" {
		t.Fatalf("stats: %d %s", code, raw)
	}
	if p := stats["total"].(map[string]any); p["p50_ms"].(float64) <= 0 || p["p95_ms"].(float64) < p["p50_ms"].(float64) {
		t.Errorf("percentiles = %v", p)
	}
	sum := 0.0
	for _, b := range stats["histogram"].([]any) {
		sum += b.(map[string]any)["count"].(float64)
	}
	if sum != 1 || stats["queue"].(map[string]any)["submitted"] != float64(1) {
		t.Errorf("histogram holds %v turns; queue %v", sum, stats["queue"])
	}

	// Nobody else sees or drives the stream.
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/live/events", ""}, {"POST", "/live/messages", `{"messages":[{"viewer":"x","text":"hi"}]}`},
		{"POST", "/live/air", `{"on_air":true}`}, {"GET", "/live/stats", ""}, {"GET", "/live/turns", ""},
	} {
		if code, _, raw := e.call(t, e.rival, c.method, "/api/streams/"+e.demoStream+c.path, "application/json", c.body); code != 404 {
			t.Errorf("rival %s %s: %d %s", c.method, c.path, code, raw)
		}
		if code, _, _ := e.call(t, e.dev, c.method, "/api/streams/"+e.demoStream+c.path, "application/json", c.body); code != 403 {
			t.Errorf("developer %s %s: %d", c.method, c.path, code)
		}
	}
	if code, _, _ := e.call(t, e.rival, "GET", "/api/live/turns/"+stored[0].ID, "", ""); code != 404 {
		t.Errorf("rival reads the turn: %d", code)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/live/turns/"+stored[0].ID, "", ""); code != 200 {
		t.Errorf("operator reads the turn: %d", code)
	}
}

func TestLiveMessagesAreValidated(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream + "/live/messages"
	many := make([]string, maxMessageBatch+1)
	for i := range many {
		many[i] = `{"viewer":"v","text":"hi"}`
	}
	for _, c := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"messages":[]}`, 400, "messages"},
		{`{"messages":[` + strings.Join(many, ",") + `]}`, 413, "messages"},
		{`{"messages":[{"viewer":"v","text":"` + strings.Repeat("a", maxMessageBytes+1) + `"}]}`, 413, "messages[0].text"},
		{`{"messages":[{"viewer":"v","text":"ok"},{"viewer":"","text":"hi"}]}`, 400, "messages[1].viewer"},
		{`{"messages":[{"viewer":"v","text":"   "}]}`, 400, "messages[0].text"},
		{`{"messages":[{"viewer":"v","text":"a\u0000b"}]}`, 400, "messages[0].text"},
		{`{"messages":[{"viewer":"v","text":"hi","at":"2999-01-01T00:00:00Z"}]}`, 400, "messages[0].at"},
		{`{"messages":[{"viewer":"v","text":"hi","colour":"red"}]}`, 400, "body"},
		{`not json`, 400, "body"},
	} {
		code, body, raw := e.call(t, e.merchant, "POST", path, "application/json", c.body)
		if code != c.code || body["field"] != c.field {
			t.Errorf("%.60s: %d %s; want %d naming %s", c.body, code, raw, c.code, c.field)
		}
	}
	// No model configured: a valid batch cannot be answered.
	if code, _, raw := e.call(t, e.merchant, "POST", path, "application/json", `{"messages":[{"viewer":"v","text":"hi"}]}`); code != 503 {
		t.Errorf("without a model: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, "", "POST", path, "application/json", `{"messages":[{"viewer":"v","text":"hi"}]}`); code != 401 {
		t.Errorf("without a token: %d", code)
	}
}

func TestLiveAirSwitchAndViewerTextIsKeptVerbatim(t *testing.T) {
	e := newLiveEnv(t)
	path := "/api/streams/" + e.demoStream + "/live/air"
	if code, body, _ := e.call(t, e.merchant, "POST", path, "application/json", `{}`); code != 400 || body["field"] != "on_air" {
		t.Errorf("air without on_air: %d %v", code, body)
	}
	events := e.subscribe(t, e.merchant, e.demoStream)
	// A merchant goes on air through the checklist only; the unchecked
	// switch is the operator's.
	if code, body, raw := e.call(t, e.merchant, "POST", path, "application/json", `{"on_air":true}`); code != 403 || body["code"] != "golive_required" || body["field"] != "on_air" {
		t.Errorf("merchant on air through the switch: %d %s", code, raw)
	}
	code, st, raw := e.call(t, e.admin, "POST", path, "application/json", `{"on_air":true}`)
	if code != 200 || st["on_air"] != true || st["revision"] != float64(2) {
		t.Fatalf("go on air: %d %s", code, raw)
	}
	if ev := waitLive(t, events, "air"); ev.Data["on_air"] != true {
		t.Errorf("air event = %v", ev.Data)
	}
	evil := `<img src=x onerror=alert(1)>`
	e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json",
		`{"messages":[{"viewer":"<b>v9</b>","text":"`+evil+` how much is the lipstick?"}]}`)
	turn := waitLive(t, events, "turn")
	if turn.Data["input"] != evil+" how much is the lipstick?" || traceNames(turn.Data["viewers"], "")[0] == "" {
		t.Errorf("viewer text changed on its way: %v", turn.Data["input"])
	}
	if !strings.Contains(fmt.Sprint(turn.Data["reply"]), "89") {
		t.Errorf("reply = %v", turn.Data["reply"])
	}
	// On air the stream's strategy runs: three price questions within a
	// minute make the demo strategy announce the coupon on its own.
	e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json",
		`{"messages":[{"viewer":"a","text":"精华多少钱"},{"viewer":"b","text":"面霜多少钱"},{"viewer":"c","text":"口红多少钱"}]}`)
	for {
		ev := waitLive(t, events, "turn")
		if ev.Data["event"] != "narration_tick" {
			continue
		}
		if !strings.Contains(fmt.Sprint(ev.Data["reply"]), "满99减20") || len(ev.Data["viewers"].([]any)) != 0 {
			t.Errorf("strategy turn = %v", ev.Data)
		}
		break
	}
	code, _, metrics := e.call(t, "", "GET", "/metrics", "", "")
	if code != 200 || !strings.Contains(string(metrics), `livehat_turn_total{outcome="replied",stream="`+e.demoStream+`"}`) {
		t.Errorf("/metrics has no turn counter of the stream: %d", code)
	}
	code, st, _ = e.call(t, e.merchant, "POST", path, "application/json", `{"on_air":false}`)
	if code != 200 || st["on_air"] != false {
		t.Fatalf("stop: %d %v", code, st)
	}
	if ev := waitLive(t, events, "closed"); ev.Data["reason"] != "stopped" {
		t.Errorf("closed event = %v", ev.Data)
	}
	code, stats, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/live/stats", "", "")
	if code != 200 || stats["session"] != "" || stats["on_air"] != false {
		t.Errorf("stats after stop: %v", stats)
	}
}

// TestLiveSessionFollowsTheStream changes the stream under a running
// session: a new harness version applies from the next turn, and an
// imported catalog serves the next tool call.
func TestLiveSessionFollowsTheStream(t *testing.T) {
	e := newLiveEnv(t)
	ctx := context.Background()
	events := e.subscribe(t, e.merchant, e.demoStream)
	ask := func(text string) map[string]any {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"viewer": "v1", "text": text}}})
		if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json", string(body)); code != 202 {
			t.Fatalf("messages: %d %s", code, raw)
		}
		return waitLive(t, events, "turn").Data
	}
	first := ask("口红多少钱")
	if first["harness_version"] != e.demo.Version() {
		t.Fatalf("first turn on %v", first["harness_version"])
	}

	v2 := e.demo.Clone()
	v2.Pipeline.ReplyChars.Value = 100
	doc, _ := harness.Marshal(v2)
	admin, _ := e.store.UserByUsername(ctx, "admin")
	if _, _, err := e.store.PutHarnessVersion(ctx, systemScope(admin.OrgID), store.HarnessVersion{Version: v2.Version(), Name: v2.Name, Document: doc}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetStreamHarness(ctx, admin.Scope(), e.demoStream, v2.Version()); err != nil {
		t.Fatal(err)
	}
	second := ask("口红多少钱")
	if second["harness_version"] != v2.Version() || second["effective_version"] == first["effective_version"] {
		t.Errorf("after the switch the turn ran %v (effective %v)", second["harness_version"], second["effective_version"])
	}

	_, cur, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	csv := "id,name,aliases,price,list_price,stock\np-hoodie,加绒卫衣,卫衣|hoodie,159,199,30\n"
	code, _, raw := e.call(t, e.merchant, "POST", fmt.Sprintf("/api/streams/%s/catalog?revision=%v", e.demoStream, cur["revision"]), "text/csv", csv)
	if code != 200 {
		t.Fatalf("import: %d %s", code, raw)
	}
	third := ask("卫衣多少钱")
	if !strings.Contains(fmt.Sprint(third["reply"]), "159元") {
		t.Errorf("after the import the reply is %v", third["reply"])
	}
}

func TestPersonalizeAppliesPersonaAndBannedClaims(t *testing.T) {
	e := newTestEnv(t, nil)
	h, err := personalize(e.demo, "Speaks like a big sister.", []string{"cures acne", "100% effective"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Version() == e.demo.Version() {
		t.Fatal("personalize changed nothing")
	}
	if !strings.Contains(h.Layout.Sections[0].Text, "Speaks like a big sister.") {
		t.Errorf("persona section = %q", h.Layout.Sections[0].Text)
	}
	var cfg struct {
		Banned []string `json:"banned"`
	}
	for _, k := range h.Hooks {
		if k.Name == "compliance" {
			_ = json.Unmarshal(k.Config, &cfg)
		}
	}
	if strings.Join(cfg.Banned, "|") != "best in the world|100% effective|最便宜|全网第一|cures acne" {
		t.Errorf("compliance banned list = %v", cfg.Banned)
	}
	if e.demo.Hooks[1].Config == nil || strings.Contains(string(e.demo.Hooks[1].Config), "cures acne") {
		t.Error("personalize changed the shared base version")
	}
	same, _ := personalize(e.demo, "", nil)
	if same != e.demo {
		t.Error("a stream without persona or banned claims runs a copy")
	}
}

// itemIDModel is the rule-based host, recording the item ids each
// request's call schemas hold item_id to, and the words they hold the
// lookup's query to.
type itemIDModel struct {
	liveroom.Host
	mu      sync.Mutex
	seen    [][]string
	queries [][]string
}

func (m *itemIDModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	var ids, queries []string
	for _, s := range req.CallTools {
		var p struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if json.Unmarshal(s.Function.Parameters, &p) != nil {
			continue
		}
		if e := p.Properties["item_id"].Enum; len(e) > 0 && ids == nil {
			ids = e
		}
		if e := p.Properties["query"].Enum; len(e) > 0 && s.Function.Name == "product_lookup" {
			queries = e
		}
	}
	m.mu.Lock()
	if ids != nil {
		m.seen = append(m.seen, ids)
	}
	if queries != nil {
		m.queries = append(m.queries, queries)
	}
	m.mu.Unlock()
	return m.Host.Generate(ctx, req)
}

// firstQueries returns the words of the first request since reset that
// held the query.
func (m *itemIDModel) firstQueries() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queries) == 0 {
		return nil
	}
	return m.queries[0]
}

// first returns the ids of the first request since reset that had call
// schemas.
func (m *itemIDModel) first() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) == 0 {
		return nil
	}
	return m.seen[0]
}

// reset forgets the requests seen.
func (m *itemIDModel) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen, m.queries = nil, nil
}

// last returns the ids of the last request that had call schemas.
func (m *itemIDModel) last() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) == 0 {
		return nil
	}
	return m.seen[len(m.seen)-1]
}

// A live session holds item arguments to the stream's catalog (after the
// turn's lookup, to what it found), and to the new one after an import;
// its lookups' queries to the viewer's words that find an item.
func TestLiveSessionHoldsItemIDsToTheCatalog(t *testing.T) {
	e := newLiveEnv(t)
	model := &itemIDModel{}
	e.srv.cfg.Model = model
	events := e.subscribe(t, e.merchant, e.demoStream)
	ask := func(text string) {
		t.Helper()
		model.reset()
		body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"viewer": "v1", "text": text}}})
		if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json", string(body)); code != 202 {
			t.Fatalf("messages: %d %s", code, raw)
		}
		waitLive(t, events, "turn")
	}
	ask("口红多少钱")
	if got, want := model.first(), catalogItems(examples.Catalog); !slices.Equal(got, want) {
		t.Errorf("item_id held to %v, want the demo catalog's %v", got, want)
	}
	if got := model.last(); !slices.Equal(got, []string{"p-lipstick"}) {
		t.Errorf("after the lookup item_id is held to %v, want what it found, [p-lipstick]", got)
	}
	if got, want := model.firstQueries(), []string{"口红", "口红多", "口红多少", "口红多少钱"}; !slices.Equal(got, want) {
		t.Errorf("query held to %q, want the viewer's words that find an item, %q", got, want)
	}
	_, cur, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream, "", "")
	csv := "id,name,aliases,price,list_price,stock\np-hoodie,加绒卫衣,卫衣|hoodie,159,199,30\n"
	if code, _, raw := e.call(t, e.merchant, "POST", fmt.Sprintf("/api/streams/%s/catalog?revision=%v", e.demoStream, cur["revision"]), "text/csv", csv); code != 200 {
		t.Fatalf("import: %d %s", code, raw)
	}
	ask("卫衣多少钱")
	if got := model.first(); !slices.Equal(got, []string{"p-hoodie"}) {
		t.Errorf("after the import item_id is held to %v, want [p-hoodie]", got)
	}
	if got, want := model.firstQueries(), []string{"卫衣", "卫衣多", "卫衣多少", "卫衣多少钱"}; !slices.Equal(got, want) {
		t.Errorf("after the import the query is held to %q, want %q", got, want)
	}
}

func TestStreamLang(t *testing.T) {
	for _, c := range []struct {
		context []harness.ContextItem
		want    string
	}{
		{[]harness.ContextItem{{Title: "Featured item", Text: "修护面霜 (p-cream)"}}, "zh"},
		{[]harness.ContextItem{{Title: "Featured item", Text: "Repair Cream (p-cream)"}, {Title: "Items on sale", Text: "口红 (p-1)"}}, "zh"},
		{[]harness.ContextItem{{Title: "Featured item", Text: "Repair Cream (p-cream)"}}, "en"},
		{nil, "en"},
	} {
		if got := streamLang(c.context); got != c.want {
			t.Errorf("streamLang(%v) = %q, want %q", c.context, got, c.want)
		}
	}
}
