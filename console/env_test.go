package console

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/runtime"
)

// testEnv is a console over a fresh store seeded like a first run, plus a
// second merchant and a developer, with an API token for each account.
type testEnv struct {
	srv   *Server
	store *store.Store
	demo  *harness.Harness
	// Tokens by account: admin (operator), merchant (the demo merchant),
	// rival (another merchant of the same org), dev (developer).
	admin, merchant, rival, dev string
	demoStream                  string
}

const testPassword = "correct horse battery"

func newTestEnv(t *testing.T, reg *prometheus.Registry) *testEnv {
	t.Helper()
	ctx := context.Background()
	demo := testfixture.DemoHarness(t)
	st, err := OpenStore(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := Bootstrap(ctx, st, Demo{AdminPassword: testPassword, MerchantPassword: testPassword,
		Catalog: examples.Catalog, HarnessVersion: demo.Version()}, io.Discard); err != nil {
		t.Fatal(err)
	}
	sb, err := runtime.OpenSandbox(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: st, Sandbox: sb,
		Harnesses: []*harness.Harness{demo}, Metrics: reg, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{srv: srv, store: st, demo: demo}
	admin, _ := st.UserByUsername(ctx, "admin")
	merchant, _ := st.UserByUsername(ctx, "merchant")
	rivalShop, err := st.CreateMerchant(ctx, admin.Scope(), "Rival Shop")
	if err != nil {
		t.Fatal(err)
	}
	rival, err := st.CreateUser(ctx, store.NewUser{OrgID: admin.OrgID, Username: "rival", Role: store.RoleMerchant,
		MerchantID: rivalShop.ID, PasswordHash: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := st.CreateUser(ctx, store.NewUser{OrgID: admin.OrgID, Username: "dev", Role: store.RoleDeveloper, PasswordHash: "unused"})
	for _, x := range []struct {
		u   *store.User
		tok *string
	}{{admin, &e.admin}, {merchant, &e.merchant}, {rival, &e.rival}, {dev, &e.dev}} {
		_, plain, err := st.CreateAPIToken(ctx, x.u.Scope(), "test")
		if err != nil {
			t.Fatal(err)
		}
		*x.tok = plain
	}
	streams, _ := st.Streams(ctx, merchant.Scope())
	e.demoStream = streams[0].ID
	return e
}

// call sends a request with the given API token ("" for none) and returns
// the status, the body decoded as a JSON object (nil if it is not one) and
// the raw body.
func (e *testEnv) call(t *testing.T, token, method, path, contentType, body string) (int, map[string]any, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(t, req)
}

func (e *testEnv) do(t *testing.T, req *http.Request) (int, map[string]any, []byte) {
	t.Helper()
	resp, err := e.srv.App().Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}
