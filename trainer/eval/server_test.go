package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/model/remote"
)

// TestServerFailuresAreErrors runs LSQA's first three items through the
// eval command against servers that refuse, hang or are not there: the two
// that reach the model are errors, counted by the failure's kind, and the
// command fails; the second item, spam the moderation hook denies, never
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
			var out, errOut bytes.Buffer
			err := Main(context.Background(), cfg, []string{"--suite", "lsqa", "--n", "3", "--model", tt.url, "--remote-model", "m",
				"--remote-timeout", "1s", "--json"}, &out, &errOut)
			var rep struct {
				Suites []struct {
					Errors       int                 `json:"errors"`
					ServerErrors map[remote.Kind]int `json:"server_errors"`
				} `json:"suites"`
			}
			if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil || len(rep.Suites) != 1 {
				t.Fatalf("report %s: %v (err %v)\n%s", out.String(), jerr, err, errOut.String())
			}
			got := rep.Suites[0]
			if tt.kind == "" {
				if err != nil || got.Errors != 0 || len(got.ServerErrors) != 0 {
					t.Errorf("a server that answers: err %v, errors %d, server errors %v", err, got.Errors, got.ServerErrors)
				}
				return
			}
			if want := fmt.Sprintf("2 items failed on the model server (%s 2)", tt.kind); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
			if got.Errors != 2 || got.ServerErrors[tt.kind] != 2 || len(got.ServerErrors) != 1 {
				t.Errorf("errors %d, server errors %v: want 2 of kind %s", got.Errors, got.ServerErrors, tt.kind)
			}
		})
	}

	// The table names the failures too.
	var out, errOut bytes.Buffer
	err := Main(context.Background(), cfg, []string{"--suite", "lsqa", "--n", "1", "--model", refusing.URL, "--remote-model", "m"}, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "model server failures: 1 items (server_error 1)") {
		t.Errorf("table:\n%s\nerr %v", out.String(), err)
	}
	if err := Main(context.Background(), cfg, []string{"--model", "expert", "--remote-timeout", "1s"}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "only a served model") {
		t.Errorf("--remote-timeout with the expert: %v", err)
	}
}
