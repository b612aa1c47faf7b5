package console

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// serveOnLoopback serves e's console on a real listener on 127.0.0.1 until
// the test ends, and returns its base URL.
func serveOnLoopback(t *testing.T, e *testEnv) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// oneConnClient is an HTTP client that keeps one connection alive and
// counts how many it dialled.
func oneConnClient(dials *atomic.Int32) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// TestMetricsSurviveAPluginTrialOnAKeptAliveConnection is finding 2 of
// issue #21: the plugin name of a trial, taken from the route, was kept as
// a metrics label and a stats key while it still pointed into the request
// buffer, which later requests on the connection overwrote.
func TestMetricsSurviveAPluginTrialOnAKeptAliveConnection(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newTestEnv(t, reg)
	if code, m := e.upload(t, e.admin, packExample(t, "shop", "1.0.0", nil)); code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	base := serveOnLoopback(t, e)
	var dials atomic.Int32
	client := oneConnClient(&dials)
	send := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.admin)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, raw
	}
	if code, raw := send("POST", "/api/plugins/shop-tools/try", `{"kind":"tool","name":"lookup_product","input":{"query":"serum"}}`); code != 200 {
		t.Fatalf("trial: %d %s", code, raw)
	}
	// Later requests on the same connection, with paths as long as the
	// trial's, are read into the buffers the trial's request was.
	for _, path := range []string{
		"/api/plugins/abcd-efghi/xyz",
		"/api/plugins/qqqq-qqqqq/versions",
		"/api/plugins/shop-tools",
		"/api/plugins/zzzzzzzzzzzzzz",
	} {
		send("GET", path, "")
	}
	code, raw := send("GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("/metrics after a trial: %d %s", code, raw)
	}
	var plugins []string
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "livehat_plugin_calls_total{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `plugin="`)
		name, _, _ := strings.Cut(rest, `"`)
		plugins = append(plugins, name)
	}
	if len(plugins) != 1 || plugins[0] != "shop-tools" {
		t.Errorf("livehat_plugin_calls_total names plugins %q, want the trial's shop-tools only", plugins)
	}
	code, raw = send("GET", "/api/plugins", "")
	var list []pluginView
	if code != 200 || json.Unmarshal(raw, &list) != nil || len(list) != 1 {
		t.Fatalf("plugins: %d %s", code, raw)
	}
	if list[0].Stats.Calls != 1 {
		t.Errorf("the Plugins page's stats lost the trial: %+v", list[0].Stats)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the requests took %d connections, want 1 kept alive", n)
	}
}
