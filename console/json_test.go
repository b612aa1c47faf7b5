package console

import (
	"testing"
)

// TestErrorCodes checks that the errors merchants meet carry a stable code
// beside the English message, which stays as it was.
func TestErrorCodes(t *testing.T) {
	e := newTestEnv(t, nil)
	cases := []struct {
		name, token, method, path, contentType, body string
		status                                       int
		code, field                                  string
	}{
		{"no credentials", "", "GET", "/api/streams", "", "", 401, codeUnauthenticated, ""},
		{"wrong password", "", "POST", "/api/login", "application/json", `{"username":"admin","password":"nope"}`, 401, codeBadCredentials, ""},
		{"role", e.merchant, "GET", "/api/users", "", "", 403, codeForbidden, ""},
		{"another merchant's stream", e.rival, "GET", "/api/streams/" + e.demoStream, "", "", 404, codeNotFound, ""},
		{"no such route", e.merchant, "GET", "/api/nowhere", "", "", 404, codeNotFound, ""},
		{"field", e.merchant, "POST", "/api/tokens", "application/json", `{"name":""}`, 400, codeValidation, "name"},
		{"stale stream", e.merchant, "PUT", "/api/streams/" + e.demoStream, "application/json", `{"name":"x","revision":99}`, 409, codeConflict, ""},
		{"catalog problems", e.merchant, "POST", "/api/streams/" + e.demoStream + "/catalog?revision=1", "text/csv", "id,name,price\np1,,-1\n", 422, codeCatalogInvalid, "file"},
		{"content type", e.merchant, "POST", "/api/streams/" + e.demoStream + "/catalog?revision=1", "image/png", "x", 415, codeUnsupportedType, "content_type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, m, raw := e.call(t, c.token, c.method, c.path, c.contentType, c.body)
			if status != c.status || m["code"] != c.code {
				t.Fatalf("got %d %s, want %d with code %q", status, raw, c.status, c.code)
			}
			if msg, _ := m["error"].(string); msg == "" {
				t.Errorf("no English message beside the code: %s", raw)
			}
			if c.field != "" && m["field"] != c.field {
				t.Errorf("field %v, want %q", m["field"], c.field)
			}
		})
	}
}

// TestStatusCode checks the code of errors that name none.
func TestStatusCode(t *testing.T) {
	for status, want := range map[int]string{400: codeBadRequest, 401: codeUnauthenticated, 403: codeForbidden, 404: codeNotFound,
		409: codeConflict, 408: codeTimeout, 413: codeTooLarge, 415: codeUnsupportedType, 422: codeValidation,
		429: codeRateLimited, 503: codeUnavailable, 500: codeInternal, 502: codeInternal, 418: codeBadRequest} {
		if got := statusCode(status); got != want {
			t.Errorf("statusCode(%d) = %q, want %q", status, got, want)
		}
	}
}
