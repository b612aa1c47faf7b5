package eval

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/model/remote"
)

// TestServerFailuresAreErrors runs LSQA's first three items through
// Evaluate against servers that refuse, hang or are not there: the two
// that reach the model are errors, counted by the failure's kind; the
// second item, spam the moderation hook denies, never
// asks the server and is no error. A server that answers (whatever it
// says) fails no item.
func TestServerFailuresAreErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins; skipped with -short")
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); hanging.Close() })
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hello there.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(answering.Close)

	var dirs []string
	for _, p := range examples.DemoPlugins() {
		dirs = append(dirs, filepath.Join("..", "..", "examples", "plugins", p))
	}
	cfg := Config{Base: base(t), PluginDirs: dirs, CacheDir: testCacheDir()}
	for _, tt := range []struct {
		name, url string
		kind      remote.Kind // "" for none
	}{
		{"refused", refusing.URL, remote.KindServerError},
		{"hung", hanging.URL, remote.KindTimeout},
		{"unreachable", gone.URL, remote.KindUnreachable},
		{"answering", answering.URL, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := OpenServer(remote.Config{BaseURL: tt.url, Model: "m", Timeout: time.Second, StreamIdleTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Evaluate(context.Background(), cfg, m, Options{Suites: []string{SuiteLSQA}, Limit: 3, Parallel: 2})
			if err != nil || len(res.Reports) != 1 {
				t.Fatalf("results %+v, err %v", res, err)
			}
			got := res.Reports[0]
			failed, kinds := res.ServerFailures()
			if tt.kind == "" {
				if got.Errors != 0 || len(got.ServerErrors) != 0 || failed != 0 {
					t.Errorf("a server that answers: errors %d, server errors %v, failures %d", got.Errors, got.ServerErrors, failed)
				}
				return
			}
			if want := fmt.Sprintf("%s 2", tt.kind); failed != 2 || kinds != want {
				t.Errorf("failures %d (%s), want 2 (%s)", failed, kinds, want)
			}
			if got.Errors != 2 || got.ServerErrors[tt.kind] != 2 || len(got.ServerErrors) != 1 {
				t.Errorf("errors %d, server errors %v: want 2 of kind %s", got.Errors, got.ServerErrors, tt.kind)
			}
		})
	}
}
