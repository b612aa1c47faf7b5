package console

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest writes head (a request line and headers, without the blank
// line) and body on a new connection to base, and reads the answer within
// a few seconds; the answer's body is decoded as a JSON object. The server
// reads up to 8 KiB of a body before any handler sees the request, so a
// body that is to be refused unread still starts with more than that.
func rawRequest(t *testing.T, base, head, body string) (*http.Response, map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The server may answer and close before the body is all sent.
	go func() { io.WriteString(conn, head+"\r\n\r\n"+body) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", strings.SplitN(head, "\r\n", 2)[0], err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp, m
}

// TestBodiesAreBoundedBeforeTheyAreRead is part of finding 3 of issue #21:
// unauthenticated clients each held an unfinished 8 MiB body in memory.
// A body over its route's limit is refused from its declared length or
// as soon as it runs over; a larger route's body is not read before the
// caller is authenticated; a body left unread closes the connection.
func TestBodiesAreBoundedBeforeTheyAreRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	base := serveOnLoopback(t, e)
	limit := e.srv.cfg.BodyLimit
	// A start of a body: the server takes in its first 8 KiB with the
	// headers, and no more of a body it refuses.
	start := strings.Repeat("x", 16<<10)
	for _, c := range []struct {
		name, head, body string
		code             int
		says             string
		closes           bool
	}{
		{"declared over the default limit, before authentication",
			fmt.Sprintf("POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d", 8<<20), start,
			413, fmt.Sprintf("limit of %d bytes", limit), true},
		{"declared over the upload limit",
			fmt.Sprintf("POST /api/plugins HTTP/1.1\r\nHost: x\r\nContent-Length: %d", e.srv.cfg.UploadBodyLimit+1), start,
			413, fmt.Sprintf("limit of %d bytes", e.srv.cfg.UploadBodyLimit), true},
		{"chunked past the default limit",
			"POST /api/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + e.merchant + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked",
			chunked(strings.Repeat("x", limit+1)), 413, fmt.Sprintf("limit of %d bytes", limit), true},
		{"an upload without credentials is not read",
			"POST /api/plugins HTTP/1.1\r\nHost: x\r\nContent-Length: 4000000", start,
			401, "not logged in", true},
		{"an upload with a forged token is not read",
			"POST /api/plugins HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer lh_forged\r\nContent-Length: 4000000", start,
			401, "invalid API token", true},
		{"a small body is read and the connection kept",
			"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2", "{}",
			400, "username", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, m := rawRequest(t, base, c.head, c.body)
			if resp.StatusCode != c.code || !strings.Contains(fmt.Sprint(m["error"]), c.says) {
				t.Errorf("%d %v, want %d saying %q", resp.StatusCode, m, c.code, c.says)
			}
			if resp.Close != c.closes {
				t.Errorf("connection closed: %v, want %v", resp.Close, c.closes)
			}
		})
	}
}

func chunked(body string) string {
	var b strings.Builder
	for len(body) > 0 {
		n := min(len(body), 64<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// TestASlowBodyIsCutOff is part of finding 3 of issue #21: a client that
// stops sending in the middle of a body is answered and disconnected at
// the read timeout, so what it sent does not stay in memory.
func TestASlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	const timeout = 300 * time.Millisecond
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: e.store, Sandbox: e.srv.cfg.Sandbox,
		DataDir: t.TempDir(), ReadTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	base := serveOnLoopback(t, &testEnv{srv: srv})
	for _, c := range []struct{ name, head string }{
		{"default route", "POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000"},
		{"upload route", "POST /api/plugins HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + e.admin + "\r\nContent-Length: 4000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			resp, m := rawRequest(t, base, c.head, strings.Repeat("x", 100000))
			took := time.Since(t0)
			if resp.StatusCode != 408 || m["field"] != "body" || !resp.Close {
				t.Errorf("%d %v (closed %v), want 408 naming the body, and the connection closed", resp.StatusCode, m, resp.Close)
			}
			if took > 20*timeout {
				t.Errorf("answered after %v, with a read timeout of %v", took, timeout)
			}
		})
	}
}

// TestExpectContinueBodiesAreRead: clients such as curl ask before sending
// a large body (Expect: 100-continue); the server says continue and reads
// it under the same limits.
func TestExpectContinueBodiesAreRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	base := serveOnLoopback(t, e)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	body := `{"name":"` + strings.Repeat("n", 20000) + `"}`
	fmt.Fprintf(conn, "POST /api/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		e.admin, len(body))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v %v, want 100 Continue", resp, err)
	}
	io.WriteString(conn, body)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 201 {
		msg, _ := io.ReadAll(resp.Body)
		t.Errorf("after the body: %d %s, want 201", resp.StatusCode, msg)
	}
}
