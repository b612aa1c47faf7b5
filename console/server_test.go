package console

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
)

func newTestServer(t *testing.T) (*Server, *harness.Harness) {
	t.Helper()
	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(Config{Logger: log, Harnesses: []*harness.Harness{demo}}), demo
}

func call(t *testing.T, s *Server, method, path, contentType, body string) (int, map[string]any, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.App().Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

func TestHarnessAPI(t *testing.T) {
	s, demo := newTestServer(t)
	code, _, raw := call(t, s, "GET", "/api/harnesses", "", "")
	if code != 200 || !strings.Contains(string(raw), demo.Version()) {
		t.Fatalf("list: %d %s", code, raw)
	}
	code, m, _ := call(t, s, "GET", "/api/harnesses/"+demo.ShortVersion(), "", "")
	if code != 200 || m["version"] != demo.Version() {
		t.Fatalf("get by short version: %d %v", code, m)
	}
	code, _, _ = call(t, s, "GET", "/api/harnesses/deadbeefdeadbeef", "", "")
	if code != 404 {
		t.Errorf("unknown version: %d, want 404", code)
	}
	code, m, _ = call(t, s, "POST", "/api/harnesses/"+demo.Version()+"/render", "application/json",
		`{"messages":[{"role":"user","content":"这个多少钱"}],"injected":[{"source":"crm","text":"VIP"}]}`)
	if code != 200 {
		t.Fatalf("render: %d %v", code, m)
	}
	msgs := m["messages"].([]any)
	if sys := msgs[0].(map[string]any)["content"].(string); !strings.Contains(sys, `<context source="crm">VIP</context>`) {
		t.Errorf("render: system prompt lacks the injection:\n%s", sys)
	}
	code, _, _ = call(t, s, "POST", "/api/harnesses/"+demo.Version()+"/render", "application/json", `{"mesages":[]}`)
	if code != 400 {
		t.Errorf("render with a typo: %d, want 400", code)
	}
	code, m, _ = call(t, s, "POST", "/api/harness/diff", "application/json", `{"old":"`+demo.Version()+`","new":"`+demo.Version()+`"}`)
	if code != 200 || m["changes"] == nil {
		t.Errorf("diff: %d %v", code, m)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "livehat_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Harnesses: []*harness.Harness{demo}, Metrics: reg})
	code, _, raw := call(t, s, "GET", "/metrics", "", "")
	if code != 200 || !strings.Contains(string(raw), "livehat_test_total 3") {
		t.Errorf("/metrics: %d %s", code, raw)
	}
	plain, _ := newTestServer(t)
	if code, _, _ := call(t, plain, "GET", "/metrics", "", ""); code != 404 {
		t.Errorf("/metrics without a registry: %d, want 404", code)
	}
}

func TestValidateEndpoint(t *testing.T) {
	s, _ := newTestServer(t)
	good, err := os.ReadFile("../harness/testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	code, m, _ := call(t, s, "POST", "/api/harness/validate", "application/json", string(good))
	if code != 200 || m["name"] != "minimal" {
		t.Errorf("valid harness: %d %v", code, m)
	}
	bad, err := os.ReadFile("../harness/testdata/broken/18-yaml-unknown-field.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, m, raw := call(t, s, "POST", "/api/harness/validate", "application/yaml", string(bad))
	if code != 422 {
		t.Fatalf("invalid harness: %d %s", code, raw)
	}
	p := m["problems"].([]any)[0].(map[string]any)
	if p["line"].(float64) != 11 || p["path"] != "pipeline.retry_budget" {
		t.Errorf("problem = %v", p)
	}
}
