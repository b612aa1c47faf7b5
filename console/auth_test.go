package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEveryAPIRouteNeedsCredentials(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, r := range e.srv.App().GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Path == "/api/login" || r.Method == "HEAD" {
			continue
		}
		path := strings.NewReplacer(":id", "x", ":version", "x", ":name", "x", "*", "x").Replace(r.Path)
		code, m, _ := e.call(t, "", r.Method, path, "application/json", "{}")
		if code != 401 || m["error"] == nil {
			t.Errorf("%s %s without credentials: %d %v, want 401 with a JSON error", r.Method, r.Path, code, m)
		}
		if code, _, _ := e.call(t, "lh_forged", r.Method, path, "application/json", "{}"); code != 401 {
			t.Errorf("%s %s with a forged token: %d, want 401", r.Method, r.Path, code)
		}
	}
}

func TestLoginSessionAndCSRF(t *testing.T) {
	e := newTestEnv(t, nil)
	code, m, _ := e.call(t, "", "POST", "/api/login", "application/json", `{"username":"merchant","password":"wrong password"}`)
	if code != 401 {
		t.Fatalf("wrong password: %d %v", code, m)
	}
	if code, m, _ = e.call(t, "", "POST", "/api/login", "application/json", `{"username":"merchant"`); code != 400 || m["field"] != "body" {
		t.Errorf("malformed login: %d %v", code, m)
	}
	req := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"username":"merchant","password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.App().Test(req, -1)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login: %v %v", resp.StatusCode, err)
	}
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			cookie = c.Name + "=" + c.Value
			if !c.HttpOnly || !c.Secure || c.SameSite != 3 {
				t.Errorf("session cookie lacks HttpOnly/Secure/SameSite=Strict: %+v", c)
			}
		}
	}
	_, me, _ := e.do(t, withCookie(httptest.NewRequest("GET", "/api/me", nil), cookie))
	csrf, _ := me["csrf"].(string)
	if me["user"].(map[string]any)["role"] != "merchant" || csrf == "" {
		t.Fatalf("/api/me: %v", me)
	}
	body := `{"name":"evening"}`
	post := func(csrfValue string) int {
		req := withCookie(httptest.NewRequest("POST", "/api/streams", strings.NewReader(body)), cookie)
		req.Header.Set("Content-Type", "application/json")
		if csrfValue != "" {
			req.Header.Set(csrfHeader, csrfValue)
		}
		code, _, _ := e.do(t, req)
		return code
	}
	if code := post(""); code != 403 {
		t.Errorf("cookie POST without CSRF token: %d, want 403", code)
	}
	if code := post("forged"); code != 403 {
		t.Errorf("cookie POST with a wrong CSRF token: %d, want 403", code)
	}
	if code := post(csrf); code != 201 {
		t.Errorf("cookie POST with the CSRF token: %d, want 201", code)
	}
	logout := withCookie(httptest.NewRequest("POST", "/api/logout", nil), cookie)
	logout.Header.Set(csrfHeader, csrf)
	if code, _, _ := e.do(t, logout); code != 204 {
		t.Errorf("logout: %d", code)
	}
	if code, _, _ := e.do(t, withCookie(httptest.NewRequest("GET", "/api/me", nil), cookie)); code != 401 {
		t.Errorf("session still valid after logout: %d", code)
	}
}

func withCookie(req *http.Request, cookie string) *http.Request {
	req.Header.Set("Cookie", cookie)
	return req
}

func TestMerchantsCannotReachEachOthersStreams(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream
	if code, _, raw := e.call(t, e.merchant, "GET", path, "", ""); code != 200 {
		t.Fatalf("owner reads own stream: %d %s", code, raw)
	}
	_, own, _ := e.call(t, e.merchant, "GET", path, "", "")
	edit := fmt.Sprintf(`{"name":"hijacked","revision":%v}`, own["revision"])
	for _, tok := range []string{e.rival, e.dev} {
		for _, c := range []struct{ method, body string }{{"GET", ""}, {"PUT", edit}, {"DELETE", ""}} {
			code, _, _ := e.call(t, tok, c.method, path, "application/json", c.body)
			if code != 404 && code != 403 {
				t.Errorf("%s %s by an outsider: %d, want 404 or 403", c.method, path, code)
			}
		}
	}
	_, list, raw := e.call(t, e.rival, "GET", "/api/streams", "", "")
	if list != nil || strings.Contains(string(raw), e.demoStream) {
		t.Errorf("rival lists the demo stream: %s", raw)
	}
	code, m, _ := e.call(t, e.rival, "POST", "/api/streams", "application/json", `{"name":"x","merchant_id":"`+own["merchant_id"].(string)+`"}`)
	if code != 404 {
		t.Errorf("rival created a stream for the demo merchant: %d %v", code, m)
	}
	_, after, _ := e.call(t, e.admin, "GET", path, "", "")
	if after["name"] != own["name"] {
		t.Errorf("the stream changed: %v", after["name"])
	}
}

func TestStreamEditsConflictInsteadOfOverwriting(t *testing.T) {
	e := newTestEnv(t, nil)
	path := "/api/streams/" + e.demoStream
	_, s, _ := e.call(t, e.merchant, "GET", path, "", "")
	rev := s["revision"]
	first := fmt.Sprintf(`{"name":"Demo beauty stream","persona":"first","revision":%v}`, rev)
	second := fmt.Sprintf(`{"name":"Demo beauty stream","persona":"second","revision":%v}`, rev)
	if code, m, _ := e.call(t, e.merchant, "PUT", path, "application/json", first); code != 200 {
		t.Fatalf("first save: %d %v", code, m)
	}
	if code, _, _ := e.call(t, e.admin, "PUT", path, "application/json", second); code != 409 {
		t.Errorf("stale save: %d, want 409", code)
	}
	_, after, _ := e.call(t, e.merchant, "GET", path, "", "")
	if after["persona"] != "first" {
		t.Errorf("persona = %v, want the first save kept", after["persona"])
	}
	for _, c := range []struct{ body, field string }{
		{`{"name":"","revision":2}`, "name"},
		{`{"name":"x"}`, "revision"},
		{`{"name":"x","revision":2,"strategy":{"rules":[{"name":"r"}]}}`, "strategy"},
		{`{"name":"x","revision":2,"catalog":{"products":[{"id":""}]}}`, "catalog"},
		{`{"name":"x","revision":2,"currency":"yuan"}`, "currency"},
		{`{"name":"x","revision":2,"colour":"red"}`, "body"},
	} {
		code, m, _ := e.call(t, e.merchant, "PUT", path, "application/json", c.body)
		if code != 400 || m["field"] != c.field {
			t.Errorf("PUT %s: %d %v, want 400 naming %q", c.body, code, m, c.field)
		}
	}
}

func TestRolesLimitRoutes(t *testing.T) {
	e := newTestEnv(t, nil)
	if code, _, _ := e.call(t, e.merchant, "GET", "/api/users", "", ""); code != 403 {
		t.Errorf("merchant lists users: %d, want 403", code)
	}
	if code, _, _ := e.call(t, e.dev, "GET", "/api/streams", "", ""); code != 403 {
		t.Errorf("developer lists streams: %d, want 403", code)
	}
	code, m, _ := e.call(t, e.admin, "POST", "/api/users", "application/json", `{"username":"m2","role":"merchant","password":"longenough"}`)
	if code != 400 || m["field"] != "merchant_id" {
		t.Errorf("merchant account without merchant: %d %v", code, m)
	}
	code, m, _ = e.call(t, e.admin, "POST", "/api/users", "application/json", `{"username":"ops2","role":"operator","password":"short"}`)
	if code != 400 || m["field"] != "password" {
		t.Errorf("short password: %d %v", code, m)
	}
	if code, _, _ := e.call(t, e.admin, "POST", "/api/users", "application/json", `{"username":"ops2","role":"operator","password":"longenough"}`); code != 201 {
		t.Errorf("create operator: %d", code)
	}
	if code, _, _ := e.call(t, e.admin, "POST", "/api/users", "application/json", `{"username":"ops2","role":"operator","password":"longenough"}`); code != 409 {
		t.Errorf("duplicate username: %d, want 409", code)
	}
}
