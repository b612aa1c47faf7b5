package console

import (
	"encoding/json"
	"testing"
)

// TestLoginAnswersOnlyLocalNextPages is finding 5 of issue #21: the login
// page went to /\evil.example/x after a login; the server now answers the
// page to go to, the asked one only when it is a path of this console.
func TestLoginAnswersOnlyLocalNextPages(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	for _, c := range []struct{ next, want string }{
		{"", "/"},
		{"/live?stream=s-1", "/live?stream=s-1"},
		{"/\\evil.example/x", "/"},
		{"/%5Cevil.example/x", "/"},
		{"//evil.example/x", "/"},
		{"https://evil.example/x", "/"},
		{"/\t/evil.example", "/"},
	} {
		t.Run(c.next, func(t *testing.T) {
			body, _ := json.Marshal(loginRequest{Username: "merchant", Password: testPassword, Next: c.next})
			code, m, _ := e.call(t, "", "POST", "/api/login", "application/json", string(body))
			if code != 200 || m["next"] != c.want {
				t.Errorf("login with next %q: %d %v, want next %q", c.next, code, m, c.want)
			}
		})
	}
}
