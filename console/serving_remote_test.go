package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/runtime"
)

// fakeModelServer is an OpenAI-compatible server that answers every
// request with reply, streamed, and records the Authorization headers.
func fakeModelServer(t *testing.T, reply string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		b, _ := json.Marshal(reply)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s},\"finish_reason\":\"stop\"}]}\n\n", b)
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auths...) }
}

func TestServingFromAModelServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newTestEnv(t, reg)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	srv, auths := fakeModelServer(t, "Hello from the GPU pool.")
	host := strings.TrimPrefix(srv.URL, "http://")
	const key = "sk-very-secret-42"

	for _, tt := range []struct{ body, want string }{
		{`{"server": {"url": "` + srv.URL + `"}}`, "server.model"},
		{`{"server": {"url": "localhost:1", "model": "m"}}`, "server.url"},
		{`{"server": {"url": "` + srv.URL + `", "model": "m", "concurrency": -1}}`, "server.concurrency"},
		{`{"server": {"url": "` + srv.URL + `", "model": "m", "api_key": "a", "api_key_env": "B"}}`, "not both"},
		{`{"server": {"url": "` + srv.URL + `", "model": "m", "timeout": 5}}`, "unknown field"},
	} {
		if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json", tt.body); code != 400 || !strings.Contains(string(raw), tt.want) {
			t.Errorf("PUT %s: %d %s, want 400 naming %s", tt.body, code, raw, tt.want)
		}
	}
	if code, _, _ := e.call(t, e.merchant, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`", "model": "qwen"}}`); code != 403 && code != 404 {
		t.Errorf("a merchant set the serving model: %d", code)
	}

	code, sv, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`/v1", "model": "qwen", "api_key": "`+key+`", "timeout_s": 5, "concurrency": 4, "retries": 1}}`)
	if code != 200 || sv["spec"] != "qwen at "+host || strings.Contains(string(raw), key) {
		t.Fatalf("PUT serving model: %d %s", code, raw)
	}
	if server, _ := sv["server"].(map[string]any); server["has_api_key"] != true || server["concurrency"] != 4.0 {
		t.Errorf("server view %v", sv["server"])
	}
	st, err := e.store.OrgSetting(ctx, admin.OrgID, servingSetting)
	if err != nil || strings.Contains(st.Value, key) || !strings.Contains(st.Value, "key_sealed") {
		t.Fatalf("stored setting %q (%v): the key must be sealed", st.Value, err)
	}
	// Setting it again without api_key keeps the key.
	if code, sv, _ := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`", "model": "qwen", "timeout_s": 5}}`); code != 200 || sv["server"].(map[string]any)["has_api_key"] != true {
		t.Errorf("re-PUT without a key: %d %v", code, sv)
	}
	if code, sv, raw := e.call(t, e.admin, "GET", "/api/serving-model", "", ""); code != 200 || sv["spec"] != "qwen at "+host || strings.Contains(string(raw), key) {
		t.Errorf("GET serving model: %d %s", code, raw)
	}

	// A stream's chat endpoint answers through the server, with the key.
	// (The demo harness wants a reply skill loaded first, which this fake
	// never does, so the turn asks again and ends on the safe line: what
	// counts here is who answered.)
	code, _, raw = e.call(t, e.admin, "POST", "/v1/chat/completions", "application/json",
		`{"model":"stream:`+e.demoStream+`","messages":[{"role":"user","content":"hello"}],"max_tokens":16}`)
	if code != 200 || !strings.Contains(string(raw), `"model":"qwen at `+host+`"`) || !strings.Contains(string(raw), `"prompt_tokens":100`) {
		t.Fatalf("chat through the server: %d %s", code, raw)
	}
	if a := auths(); len(a) == 0 || a[0] != "Bearer "+key {
		t.Errorf("the server got Authorization %q", a)
	}
	_, _, metrics := e.call(t, "", "GET", "/metrics", "", "")
	if series := `livehat_remote_requests_total{outcome="ok",server="qwen at ` + host + `"}`; !strings.Contains(string(metrics), series) {
		t.Errorf("/metrics lacks %s", series)
	}
	if strings.Contains(string(metrics), key) {
		t.Error("/metrics shows the API key")
	}

	// One stream of its own: its sessions use its server, the others the
	// organisation's.
	other, _ := fakeModelServer(t, "Hello from the stream's own server.")
	path := "/api/serving-model/streams/" + e.demoStream
	if code, sv, raw := e.call(t, e.admin, "PUT", path, "application/json",
		`{"server": {"url": "`+other.URL+`", "model": "big", "api_key_env": "LIVEHAT_TEST_UNSET_KEY"}}`); code != 200 || sv["own"] != true {
		t.Fatalf("PUT stream serving: %d %s", code, raw)
	}
	if _, _, err := e.srv.streamModel(ctx, admin.OrgID, e.demoStream, ""); err == nil || !strings.Contains(err.Error(), "LIVEHAT_TEST_UNSET_KEY") {
		t.Errorf("a key in an unset variable: err = %v, want it named", err)
	}
	t.Setenv("LIVEHAT_TEST_STREAM_KEY", "k2")
	e.call(t, e.admin, "PUT", path, "application/json", `{"server": {"url": "`+other.URL+`", "model": "big", "api_key_env": "LIVEHAT_TEST_STREAM_KEY"}}`)
	m, name, err := e.srv.streamModel(ctx, admin.OrgID, e.demoStream, "")
	if err != nil || name != "big at "+strings.TrimPrefix(other.URL, "http://") {
		t.Fatalf("stream model %q, %v", name, err)
	}
	if _, ok := m.(runtime.RemoteModel); !ok {
		t.Errorf("stream model is %T", m)
	}
	if _, name, _ := e.srv.streamModel(ctx, admin.OrgID, "another-stream", ""); name != "qwen at "+host {
		t.Errorf("another stream is served by %q, want the organisation's server", name)
	}
	if code, _, _ := e.call(t, e.admin, "GET", "/api/serving-model/streams/no-such-stream", "", ""); code != 404 {
		t.Errorf("unknown stream: %d", code)
	}
	if code, sv, _ := e.call(t, e.admin, "DELETE", path, "", ""); code != 200 || sv["own"] != false || sv["spec"] != "qwen at "+host {
		t.Errorf("DELETE stream serving: %d %v", code, sv)
	}
	if code, sv, _ := e.call(t, e.admin, "DELETE", "/api/serving-model", "", ""); code != 200 || sv["default"] != true {
		t.Errorf("reset serving model: %d %v", code, sv)
	}
}

// TestLiveViewAnswersThroughTheStreamsOwnServer sets a model server for the
// organisation and another for the demo stream: the stream's live view
// answers its viewers through the stream's server, the organisation's is
// never asked, and the live view names the stream's server.
func TestLiveViewAnswersThroughTheStreamsOwnServer(t *testing.T) {
	e := newLiveEnv(t)
	orgServer, orgRequests := fakeModelServer(t, "Hello from the organisation's server.")
	streamServer, streamRequests := fakeModelServer(t, "Hello from the stream's own server.")
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+orgServer.URL+`", "model": "org-model"}}`); code != 200 {
		t.Fatalf("PUT serving model: %d %s", code, raw)
	}
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model/streams/"+e.demoStream, "application/json",
		`{"server": {"url": "`+streamServer.URL+`", "model": "stream-model", "api_key": "sk-stream"}}`); code != 200 {
		t.Fatalf("PUT stream serving model: %d %s", code, raw)
	}
	want := "stream-model at " + strings.TrimPrefix(streamServer.URL, "http://")

	events := e.subscribe(t, e.merchant, e.demoStream)
	if code, _, raw := e.call(t, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages", "application/json",
		`{"messages":[{"viewer":"v1","text":"How much is the lipstick?"}]}`); code != 202 {
		t.Fatalf("messages: %d %s", code, raw)
	}
	turn := waitLive(t, events, "turn").Data
	if turn["model"] != want {
		t.Errorf("the turn ran on %v, want %s", turn["model"], want)
	}
	if got := streamRequests(); len(got) == 0 || got[0] != "Bearer sk-stream" {
		t.Errorf("the stream's server got requests with Authorization %q, want the stream's key", got)
	}
	if got := orgRequests(); len(got) != 0 {
		t.Errorf("the organisation's server got %d requests for a stream with its own", len(got))
	}
	if code, stats, raw := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/live/stats", "", ""); code != 200 || stats["model"] != want {
		t.Errorf("live stats: %d %s, want the model %s", code, raw, want)
	}
}

// TestConsolePathsWithAServingServer serves the organisation from a model
// server: an evaluation of the serving model asks that server; a server
// named as a checkpoint (evaluations, experiment arms, release gates all
// resolve checkpoints the same way) is refused as no checkpoint rather than
// opened as a folder.
func TestConsolePathsWithAServingServer(t *testing.T) {
	e := evalEnv(t)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	srv, requests := fakeModelServer(t, "Hello from the GPU pool.")
	name := "qwen at " + strings.TrimPrefix(srv.URL, "http://")
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`", "model": "qwen"}}`); code != 200 {
		t.Fatalf("PUT serving model: %d %s", code, raw)
	}

	code, ev, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", `{"suite":"lsqa","n":1,"model":"serving"}`)
	if code != 201 || ev["model_name"] != name {
		t.Fatalf("evaluate the serving model: %d %s", code, raw)
	}
	if ev = waitEval(t, e, ev["id"].(string)); ev["state"] != "done" || len(requests()) == 0 {
		t.Errorf("the evaluation of a served model ended %v after %d requests to the server", ev, len(requests()))
	}

	for _, tt := range []struct{ checkpoint, want string }{
		{name, "is the organisation's model server, not a checkpoint"},
		{srv.URL, "is a model server's URL, not a checkpoint"},
	} {
		if _, _, err := e.srv.checkpointModel(ctx, admin.OrgID, tt.checkpoint); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkpointModel(%q): %v, want %q", tt.checkpoint, err, tt.want)
		}
		body, _ := json.Marshal(map[string]any{"suite": "lsqa", "n": 1, "model": "checkpoint", "checkpoint": tt.checkpoint})
		if code, _, raw := e.call(t, e.admin, "POST", "/api/evals", "application/json", string(body)); code != 422 || !strings.Contains(string(raw), tt.want) {
			t.Errorf("evaluate checkpoint %q: %d %s, want 422 saying %q", tt.checkpoint, code, raw, tt.want)
		}
	}
	// The serving model itself still serves, by no checkpoint.
	if _, got, err := e.srv.checkpointModel(ctx, admin.OrgID, ""); err != nil || got != name {
		t.Errorf("checkpointModel(\"\") = %q, %v; want the server", got, err)
	}
}

// TestServingConnectionTest asks servers for one token through the
// settings' "test connection": nothing is stored, a stored key is used
// when the body gives none, and a failure says its kind.
func TestServingConnectionTest(t *testing.T) {
	e := newTestEnv(t, nil)
	srv, auths := fakeModelServer(t, "OK")
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
	}))
	t.Cleanup(refusing.Close)
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`", "model": "qwen", "api_key": "sk-stored"}}`); code != 200 {
		t.Fatalf("PUT serving model: %d %s", code, raw)
	}
	for _, tt := range []struct {
		path, body string
		ok         bool
		kind, auth string
	}{
		{"/api/serving-model/test", `{"server": {"url": "` + srv.URL + `", "model": "qwen"}}`, true, "", "Bearer sk-stored"},
		{"/api/serving-model/test", `{"server": {"url": "` + srv.URL + `", "model": "qwen", "api_key": "sk-new"}}`, true, "", "Bearer sk-new"},
		{"/api/serving-model/streams/" + e.demoStream + "/test", `{"server": {"url": "` + srv.URL + `", "model": "qwen"}}`, true, "", ""},
		{"/api/serving-model/test", `{"server": {"url": "` + refusing.URL + `", "model": "nope"}}`, false, "rejected", ""},
	} {
		before := len(auths())
		code, res, raw := e.call(t, e.admin, "POST", tt.path, "application/json", tt.body)
		if code != 200 || res["ok"] != tt.ok || (tt.kind != "" && res["kind"] != tt.kind) || strings.Contains(string(raw), "sk-") {
			t.Errorf("POST %s %s: %d %s", tt.path, tt.body, code, raw)
			continue
		}
		if a := auths(); tt.ok && (len(a) != before+1 || a[len(a)-1] != tt.auth) {
			t.Errorf("POST %s %s: the server got Authorization %q, want %q", tt.path, tt.body, a[before:], tt.auth)
		}
	}
	if code, _, raw := e.call(t, e.admin, "POST", "/api/serving-model/test", "application/json", `{"server": {"url": "`+srv.URL+`"}}`); code != 400 || !strings.Contains(string(raw), "server.model") {
		t.Errorf("a test without a model: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, e.merchant, "POST", "/api/serving-model/test", "application/json", `{"server": {"url": "`+srv.URL+`", "model": "qwen"}}`); code != 403 && code != 404 {
		t.Errorf("a merchant tested a server: %d", code)
	}
	if code, sv, _ := e.call(t, e.admin, "GET", "/api/serving-model", "", ""); code != 200 || sv["server"].(map[string]any)["has_api_key"] != true {
		t.Errorf("after the tests the stored setting is %v", sv)
	}
}

// TestShipRefusesToReplaceAServingServer ships a checkpoint winner while
// the organisation is served by a model server: the ship is refused naming
// the server, and the server still serves.
func TestShipRefusesToReplaceAServingServer(t *testing.T) {
	e := newShipEnv(t)
	folder := e.promoteFixture(t, "run-a", 4)
	x := e.stoppedWinner(t, map[string]any{"checkpoint": filepath.Base(folder)})
	srv, _ := fakeModelServer(t, "Hello.")
	if code, _, raw := e.call(t, e.admin, "PUT", "/api/serving-model", "application/json",
		`{"server": {"url": "`+srv.URL+`", "model": "qwen"}}`); code != 200 {
		t.Fatalf("PUT serving model: %d %s", code, raw)
	}
	code, m, raw := e.ship(t, x.ID, `{"override": "ship anyway"}`)
	if code != 409 || m["field"] != "checkpoint" || !strings.Contains(m["error"].(string), "served by the model server qwen at ") {
		t.Errorf("ship over a model server: %d %s", code, raw)
	}
	if _, sv, _ := e.call(t, e.admin, "GET", "/api/serving-model", "", ""); sv["server"] == nil {
		t.Errorf("after the refused ship the serving model is %v", sv)
	}
}
