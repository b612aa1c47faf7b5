package console

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHarnessAPI(t *testing.T) {
	e := newTestEnv(t, nil)
	demo := e.demo
	code, _, raw := e.call(t, e.admin, "GET", "/api/harnesses", "", "")
	if code != 200 || !strings.Contains(string(raw), demo.Version()) {
		t.Fatalf("list: %d %s", code, raw)
	}
	code, m, _ := e.call(t, e.admin, "GET", "/api/harnesses/"+demo.ShortVersion(), "", "")
	if code != 200 || m["version"] != demo.Version() {
		t.Fatalf("get by short version: %d %v", code, m)
	}
	code, _, _ = e.call(t, e.admin, "GET", "/api/harnesses/deadbeefdeadbeef", "", "")
	if code != 404 {
		t.Errorf("unknown version: %d, want 404", code)
	}
	code, m, _ = e.call(t, e.admin, "POST", "/api/harnesses/"+demo.Version()+"/render", "application/json",
		`{"messages":[{"role":"user","content":"这个多少钱"}],"injected":[{"source":"crm","text":"VIP"}]}`)
	if code != 200 {
		t.Fatalf("render: %d %v", code, m)
	}
	msgs := m["messages"].([]any)
	if sys := msgs[0].(map[string]any)["content"].(string); !strings.Contains(sys, `<context source="crm">VIP</context>`) {
		t.Errorf("render: system prompt lacks the injection:\n%s", sys)
	}
	code, _, _ = e.call(t, e.admin, "POST", "/api/harnesses/"+demo.Version()+"/render", "application/json", `{"mesages":[]}`)
	if code != 400 {
		t.Errorf("render with a typo: %d, want 400", code)
	}
	code, m, _ = e.call(t, e.admin, "POST", "/api/harness/diff", "application/json", `{"old":"`+demo.Version()+`","new":"`+demo.Version()+`"}`)
	if code != 200 || m["changes"] == nil {
		t.Errorf("diff: %d %v", code, m)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "livehat_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	code, _, raw := newTestEnv(t, reg).call(t, "", "GET", "/metrics", "", "")
	if code != 200 || !strings.Contains(string(raw), "livehat_test_total 3") {
		t.Errorf("/metrics: %d %s", code, raw)
	}
	if code, _, _ := newTestEnv(t, nil).call(t, "", "GET", "/metrics", "", ""); code != 404 {
		t.Errorf("/metrics without a registry: %d, want 404", code)
	}
}

func TestValidateEndpoint(t *testing.T) {
	e := newTestEnv(t, nil)
	good, err := os.ReadFile("../harness/testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	code, m, _ := e.call(t, e.admin, "POST", "/api/harness/validate", "application/json", string(good))
	if code != 200 || m["name"] != "minimal" {
		t.Errorf("valid harness: %d %v", code, m)
	}
	bad, err := os.ReadFile("../harness/testdata/broken/18-yaml-unknown-field.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, m, raw := e.call(t, e.admin, "POST", "/api/harness/validate", "application/yaml", string(bad))
	if code != 422 {
		t.Fatalf("invalid harness: %d %s", code, raw)
	}
	p := m["problems"].([]any)[0].(map[string]any)
	if p["line"].(float64) != 11 || p["path"] != "pipeline.retry_budget" {
		t.Errorf("problem = %v", p)
	}
}
