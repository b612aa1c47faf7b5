package console

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSecurityHeaders: every answer, page or API, keeps the UI out of
// frames, stops content sniffing and limits the page to its own scripts.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	oversized := strings.Repeat("x", e.srv.cfg.BodyLimit+1)
	for _, path := range []string{"/login", "/healthz", "/api/me", "/static/app.js", "/no-such-page", "/api/login"} {
		t.Run(path, func(t *testing.T) {
			req := httptest.NewRequest("GET", path, nil)
			if path == "/api/login" {
				// A body refused before any route runs.
				req = httptest.NewRequest("POST", path, strings.NewReader(oversized))
			}
			resp, err := e.srv.App().Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for header, want := range map[string]string{
				"X-Frame-Options":         "DENY",
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "same-origin",
				"Content-Security-Policy": "script-src 'self'",
			} {
				if got := resp.Header.Get(header); !strings.Contains(got, want) {
					t.Errorf("%s: %q, want %q", header, got, want)
				}
			}
		})
	}
}

// TestLoginIsRateLimited: password guessing from one address is slowed to
// 20 attempts a minute.
func TestLoginIsRateLimited(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	body, _ := json.Marshal(loginRequest{Username: "nobody", Password: "guess"})
	codes := map[int]int{}
	for range 21 {
		code, _, _ := e.call(t, "", "POST", "/api/login", "application/json", string(body))
		codes[code]++
	}
	if codes[401] != 20 || codes[429] != 1 {
		t.Errorf("21 wrong logins answered %v, want 20 × 401 then 429", codes)
	}
}
