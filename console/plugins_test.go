package console

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/plugins"
)

// builtModules holds the example modules built by this test binary; the
// plugin build cache makes a build one `go list` after a machine's first.
var builtModules = struct {
	sync.Mutex
	wasm, archives map[string][]byte
}{wasm: map[string][]byte{}, archives: map[string][]byte{}}

func exampleModule(t *testing.T, name string) (*plugins.Manifest, []byte) {
	t.Helper()
	dir := filepath.Join("..", "examples", "plugins", name)
	m, _, err := plugins.ReadManifestDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	builtModules.Lock()
	defer builtModules.Unlock()
	if wasm, ok := builtModules.wasm[name]; ok {
		return m, wasm
	}
	path, err := plugins.BuildGoCached(context.Background(), dir, plugins.DefaultCacheDir())
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	builtModules.wasm[name] = wasm
	return m, wasm
}

// packExample packs an example plugin as `livehat plugin pack` does, with
// the given version; edit, when set, changes the package before it is
// archived. Unedited archives are packed once per test binary.
func packExample(t *testing.T, name, version string, edit func(*plugins.Package)) []byte {
	t.Helper()
	if edit == nil {
		key := name + "@" + version
		builtModules.Lock()
		archive, ok := builtModules.archives[key]
		builtModules.Unlock()
		if !ok {
			archive = packExample(t, name, version, func(*plugins.Package) {})
			builtModules.Lock()
			builtModules.archives[key] = archive
			builtModules.Unlock()
		}
		return archive
	}
	m, wasm := exampleModule(t, name)
	m.Version = version
	pkg := &plugins.Package{Manifest: m, Wasm: wasm}
	pkg.Pin()
	edit(pkg)
	data, err := pkg.Archive()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (e *testEnv) upload(t *testing.T, token string, archive []byte) (int, map[string]any) {
	t.Helper()
	code, m, _ := e.call(t, token, "POST", "/api/plugins", "application/octet-stream", string(archive))
	return code, m
}

func (e *testEnv) postJSON(t *testing.T, token, path, body string) (int, map[string]any) {
	t.Helper()
	code, m, _ := e.call(t, token, "POST", path, "application/json", body)
	return code, m
}

func listNames(t *testing.T, e *testEnv, token string) []string {
	t.Helper()
	code, _, raw := e.call(t, token, "GET", "/api/plugins", "", "")
	if code != 200 {
		t.Fatalf("list plugins: %d %s", code, raw)
	}
	var list []pluginView
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list {
		names = append(names, p.Name+"@"+p.Version)
	}
	return names
}

func pluginOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	p, ok := m["plugin"].(map[string]any)
	if !ok {
		t.Fatalf("no plugin in %v", m)
	}
	return p
}

func TestUploadListAndTryATool(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newTestEnv(t, reg)
	code, m := e.upload(t, e.admin, packExample(t, "shop", "1.0.0", nil))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	p := pluginOf(t, m)
	if p["name"] != "shop-tools" || p["version"] != "1.0.0" || p["enabled"] != true || p["signature"] != "unsigned" {
		t.Errorf("uploaded plugin: %v", p)
	}
	if got := listNames(t, e, e.admin); len(got) != 1 || got[0] != "shop-tools@1.0.0" {
		t.Errorf("operator's list: %v", got)
	}

	// Try a tool against the demo stream's catalog.
	code, m = e.postJSON(t, e.admin, "/api/plugins/shop-tools/try",
		`{"kind":"tool","name":"lookup_product","input":{"query":"serum"},"stream_id":"`+e.demoStream+`"}`)
	if code != 200 || m["ok"] != true {
		t.Fatalf("try: %d %v", code, m)
	}
	out, _ := json.Marshal(m["output"])
	if !strings.Contains(string(out), "p-serum") {
		t.Errorf("lookup_product output does not name the serum: %s", out)
	}
	if m["catalog"] != "stream Demo beauty stream" || m["latency_ms"].(float64) <= 0 {
		t.Errorf("trial: %v", m)
	}
	// Arguments that break the tool's schema are a failed call, shown.
	code, m = e.postJSON(t, e.admin, "/api/plugins/shop-tools/try", `{"kind":"tool","name":"check_stock","input":{"quantity":0}}`)
	if code != 200 || m["ok"] != false || m["outcome"] != "rejected" || m["error"] == "" {
		t.Errorf("rejected arguments: %d %v", code, m)
	}

	code, _, raw := e.call(t, e.admin, "GET", "/api/plugins", "", "")
	var list []pluginView
	if code != 200 || json.Unmarshal(raw, &list) != nil || len(list) != 1 {
		t.Fatalf("list: %d %s", code, raw)
	}
	if st := list[0].Stats; st.Calls != 2 || st.Errors != 1 || st.P50MS <= 0 || st.P95MS < st.P50MS {
		t.Errorf("stats after two trials: %+v", st)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			labels := []string{}
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := mt.GetCounter().GetValue() + float64(mt.GetHistogram().GetSampleCount())
			seen[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	if seen["livehat_plugin_calls_total{export=lookup_product,outcome=ok,plugin=shop-tools}"] != 1 ||
		seen["livehat_plugin_calls_total{export=check_stock,outcome=rejected,plugin=shop-tools}"] != 1 ||
		seen["livehat_plugin_call_seconds{export=lookup_product,plugin=shop-tools}"] != 1 {
		t.Errorf("plugin metrics: %v", seen)
	}

	// The sandbox's own counters of the active version agree.
	_, detail, _ := e.call(t, e.admin, "GET", "/api/plugins/shop-tools", "", "")
	if sb, _ := detail["sandbox"].(map[string]any); sb == nil || sb["calls"].(float64) != 1 || sb["instantiations"].(float64) < 1 {
		t.Errorf("sandbox counters after one call that ran and one refused before it: %v", detail["sandbox"])
	}

	// The package comes back byte for byte.
	code, _, raw = e.call(t, e.admin, "GET", "/api/plugins/shop-tools/versions/1.0.0/package", "", "")
	if code != 200 || !bytes.Equal(raw, packExample(t, "shop", "1.0.0", nil)) {
		t.Errorf("download: %d, %d bytes", code, len(raw))
	}
}

func TestTryAHookAndASkill(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	for _, name := range []string{"moderation", "promotion"} {
		if code, m := e.upload(t, e.admin, packExample(t, name, "1.0.0", nil)); code != 201 {
			t.Fatalf("upload %s: %d %v", name, code, m)
		}
	}
	code, m := e.postJSON(t, e.admin, "/api/plugins/moderation/try",
		`{"kind":"hook","name":"screen_message","input":{"event":"viewer_message","text":"cheap serum at http://spam.example","viewer":{"id":"v1"}}}`)
	if code != 200 || m["ok"] != true {
		t.Fatalf("try hook: %d %v", code, m)
	}
	if d, _ := m["output"].(map[string]any); d["action"] != "deny" {
		t.Errorf("a link is not denied: %v", m["output"])
	}
	// No input: the export's example input is used.
	code, m = e.postJSON(t, e.admin, "/api/plugins/promotion/try", `{"kind":"skill","name":"current_promotion"}`)
	if code != 200 || m["ok"] != true || m["catalog"] != "demo catalog" {
		t.Fatalf("try skill: %d %v", code, m)
	}
	if out, _ := m["output"].(map[string]any); out["text"] == "" {
		t.Errorf("skill text: %v", m)
	}
}

func TestTryRejectsBadRequests(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	if code, m := e.upload(t, e.admin, packExample(t, "shop", "1.0.0", nil)); code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	for _, c := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"kind":"gadget","name":"x"}`, 400, "kind"},
		{`{"kind":"tool","name":"no_such_tool"}`, 422, "name"},
		{`{"kind":"tool","name":"lookup_product","version":"9.9.9"}`, 404, "version"},
		{`{"kind":"tool","name":"lookup_product","catalog":{"products":[{"id":""}]}}`, 422, "catalog"},
		{`{"kind":"tool","name":"lookup_product","stream_id":"nope"}`, 404, "stream_id"},
		{`{"kind":"tool","name":"lookup_product","stream_id":"x","catalog":{}}`, 400, "catalog"},
		{`{"kind":"tool","nme":"typo"}`, 400, "body"},
	} {
		code, m := e.postJSON(t, e.admin, "/api/plugins/shop-tools/try", c.body)
		if code != c.code || m["field"] != c.field {
			t.Errorf("%s: %d %v, want %d naming %q", c.body, code, m, c.code, c.field)
		}
	}
	if code, _ := e.postJSON(t, e.admin, "/api/plugins/no-such-plugin/try", `{"kind":"tool","name":"x"}`); code != 404 {
		t.Errorf("unknown plugin: %d", code)
	}
	// A pasted catalog is what the tool sees.
	code, m := e.postJSON(t, e.admin, "/api/plugins/shop-tools/try",
		`{"kind":"tool","name":"lookup_product","input":{"id":"p-x"},"catalog":{"currency":"EUR","products":[{"id":"p-x","name":"Pasted lamp","price":9,"stock":1}]}}`)
	if out, _ := json.Marshal(m["output"]); code != 200 || !strings.Contains(string(out), "Pasted lamp") {
		t.Errorf("pasted catalog: %d %v", code, m)
	}
}

func TestUploadRejectsBadPackages(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	good := packExample(t, "shop", "1.0.0", nil)

	zipOf := func(files map[string][]byte) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, data := range files {
			w, _ := zw.Create(name)
			w.Write(data)
		}
		zw.Close()
		return buf.String()
	}
	m, wasm := exampleModule(t, "shop")
	manifest, _ := json.Marshal(m)
	limit := e.srv.uploadLimit()
	for _, c := range []struct {
		name, body string
		code       int
		field      string
		says       string
	}{
		{"empty", "", 400, "package", "empty"},
		{"oversized", strings.Repeat("x", limit+1), 413, "package", fmt.Sprintf("limit of %d bytes", limit)},
		{"not a zip", "this is not a plugin", 422, "package", "not a zip"},
		{"no manifest", zipOf(map[string][]byte{"shop.wasm": wasm}), 422, "package", "no manifest.json"},
		{"bad manifest", zipOf(map[string][]byte{"manifest.json": []byte(`{"abi":1,"name":"Shop Tools"}`), "shop.wasm": wasm}), 422, "manifest", "name"},
		{"too many entries", zipOf(map[string][]byte{"manifest.json": manifest, "shop.wasm": wasm, "a": nil, "b": nil}), 422, "package", "at most 3"},
		{"zip bomb", zipOf(map[string][]byte{"manifest.json": manifest, "shop.wasm": make([]byte, 65<<20)}), 413, "package", "unpacks to"},
		{"unpinned", zipOf(map[string][]byte{"manifest.json": manifest, "shop.wasm": wasm}), 422, "sha256", "does not pin"},
		{"hash mismatch", string(packExample(t, "shop", "1.0.0", func(p *plugins.Package) { p.Wasm = append(p.Wasm, 0) })), 422, "sha256", "does not match"},
		{"not wasm", string(packExample(t, "shop", "1.0.0", func(p *plugins.Package) { p.Wasm = []byte("not wasm"); p.Pin() })), 422, "package", "shop-tools"},
	} {
		code, resp, _ := e.call(t, e.admin, "POST", "/api/plugins", "application/octet-stream", c.body)
		if code != c.code || resp["field"] != c.field || !strings.Contains(fmt.Sprint(resp["error"]), c.says) {
			t.Errorf("%s: %d %v, want %d naming %q and saying %q", c.name, code, resp, c.code, c.field, c.says)
		}
	}

	// Over the upload route's body limit the server refuses from the
	// Content-Length, naming the limit, having read no more than the
	// start of the body it takes in with the headers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.srv.Serve(ctx, ln) }()
	// The server answers from the Content-Length alone, before the body.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/plugins HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n",
		e.admin, e.srv.cfg.UploadBodyLimit+1)
	go conn.Write(make([]byte, 16<<10))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var over map[string]any
	json.NewDecoder(resp.Body).Decode(&over)
	resp.Body.Close()
	conn.Close()
	if resp.StatusCode != 413 || over["field"] != "body" || !strings.Contains(fmt.Sprint(over["error"]), fmt.Sprintf("limit of %d bytes", e.srv.cfg.UploadBodyLimit)) {
		t.Errorf("over the body limit: %d %v", resp.StatusCode, over)
	}
	cancel()
	if err := <-served; err != nil {
		t.Error(err)
	}

	// Multipart: the form field "package", as the page sends it.
	body, ctype := multipartBody(t, "package", "shop-tools-1.0.0.lhp", good)
	if code, resp, _ := e.call(t, e.admin, "POST", "/api/plugins", ctype, body); code != 201 {
		t.Fatalf("multipart upload: %d %v", code, resp)
	}
	body, ctype = multipartBody(t, "notes", "", []byte("no file here"))
	if code, resp, _ := e.call(t, e.admin, "POST", "/api/plugins", ctype, body); code != 400 || resp["field"] != "package" {
		t.Errorf("multipart without a file: %d %v", code, resp)
	}
	// The same version again is a conflict, whatever its bytes.
	if code, resp := e.upload(t, e.admin, good); code != 409 || resp["field"] != "version" {
		t.Errorf("same version again: %d %v", code, resp)
	}
	if got := listNames(t, e, e.admin); len(got) != 1 {
		t.Errorf("rejected uploads left plugins behind: %v", got)
	}
}

func multipartBody(t *testing.T, field, filename string, data []byte) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	var w interface{ Write([]byte) (int, error) }
	var err error
	if filename != "" {
		w, err = mw.CreateFormFile(field, filename)
	} else {
		w, err = mw.CreateFormField(field)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	mw.Close()
	return buf.String(), mw.FormDataContentType()
}

func TestSignedPackagesNeedATrustedKey(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signed := packExample(t, "shop", "1.0.0", func(p *plugins.Package) {
		if err := p.Sign("team-a", priv); err != nil {
			t.Fatal(err)
		}
	})
	if code, m := e.upload(t, e.admin, signed); code != 422 || m["field"] != "signature" || !strings.Contains(m["error"].(string), "team-a") {
		t.Errorf("untrusted signer: %d %v", code, m)
	}
	key := `{"key_id":"team-a","public_key":"` + hex.EncodeToString(pub) + `"}`
	if code, m := e.postJSON(t, e.dev, "/api/plugin-keys", key); code != 403 {
		t.Errorf("a developer adds a trusted key: %d %v", code, m)
	}
	if code, m := e.postJSON(t, e.admin, "/api/plugin-keys", `{"key_id":"team-a","public_key":"abcd"}`); code != 400 || m["field"] != "public_key" {
		t.Errorf("short key: %d %v", code, m)
	}
	if code, m := e.postJSON(t, e.admin, "/api/plugin-keys", key); code != 201 {
		t.Fatalf("add key: %d %v", code, m)
	}
	if code, m := e.postJSON(t, e.admin, "/api/plugin-keys", key); code != 409 || m["field"] != "key_id" {
		t.Errorf("same key twice: %d %v", code, m)
	}
	code, m := e.upload(t, e.admin, signed)
	if code != 201 {
		t.Fatalf("signed upload: %d %v", code, m)
	}
	if p := pluginOf(t, m); p["signature"] != "verified" || p["signer"] != "team-a" {
		t.Errorf("signature shown: %v", p)
	}
	// A signature that does not cover the manifest is refused.
	forged := packExample(t, "shop", "1.0.1", func(p *plugins.Package) {
		p.Sign("team-a", priv)
		p.Manifest.Description = "changed after signing"
	})
	if code, m := e.upload(t, e.admin, forged); code != 422 || m["field"] != "signature" {
		t.Errorf("tampered signed package: %d %v", code, m)
	}
	if code, _, raw := e.call(t, e.dev, "GET", "/api/plugin-keys", "", ""); code != 200 || !strings.Contains(string(raw), "team-a") {
		t.Errorf("developer lists keys: %d %s", code, raw)
	}
	if code, _, _ := e.call(t, e.merchant, "GET", "/api/plugin-keys", "", ""); code != 403 {
		t.Errorf("merchant lists keys: %d", code)
	}
	if code, _, _ := e.call(t, e.admin, "DELETE", "/api/plugin-keys/team-a", "", ""); code != 204 {
		t.Errorf("delete key: %d", code)
	}
	if code, _, _ := e.call(t, e.admin, "DELETE", "/api/plugin-keys/team-a", "", ""); code != 404 {
		t.Errorf("delete key twice: %d", code)
	}
}

func TestPluginIsolation(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	admin, _ := e.store.UserByUsername(ctx, "admin")
	other, err := e.store.CreateUser(ctx, store.NewUser{OrgID: admin.OrgID, Username: "dev2", Role: store.RoleDeveloper, PasswordHash: "unused"})
	if err != nil {
		t.Fatal(err)
	}
	_, dev2, err := e.store.CreateAPIToken(ctx, other.Scope(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if code, m := e.upload(t, e.dev, packExample(t, "shop", "1.0.0", nil)); code != 201 {
		t.Fatalf("developer upload: %d %v", code, m)
	}
	if code, m := e.upload(t, e.admin, packExample(t, "promotion", "1.0.0", nil)); code != 201 {
		t.Fatalf("operator upload: %d %v", code, m)
	}
	if got := listNames(t, e, e.dev); len(got) != 1 || got[0] != "shop-tools@1.0.0" {
		t.Errorf("developer sees %v, want only their plugin", got)
	}
	if got := listNames(t, e, dev2); len(got) != 0 {
		t.Errorf("another developer sees %v", got)
	}
	if got := listNames(t, e, e.admin); len(got) != 2 {
		t.Errorf("operator sees %v, want both", got)
	}
	for _, tok := range []string{e.merchant, e.rival} {
		if code, _, _ := e.call(t, tok, "GET", "/api/plugins", "", ""); code != 403 {
			t.Errorf("merchant lists plugins: %d", code)
		}
		if code, _ := e.upload(t, tok, packExample(t, "shop", "2.0.0", nil)); code != 403 {
			t.Errorf("merchant uploads: %d", code)
		}
		if code, _ := e.postJSON(t, tok, "/api/plugins/shop-tools/disable", ``); code != 403 {
			t.Errorf("merchant disables: %d", code)
		}
	}
	// The other developer can neither see nor touch the first one's plugin.
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/plugins/shop-tools", ""},
		{"GET", "/api/plugins/shop-tools/versions", ""},
		{"GET", "/api/plugins/shop-tools/versions/1.0.0/package", ""},
		{"POST", "/api/plugins/shop-tools/disable", ""},
		{"POST", "/api/plugins/shop-tools/enable", ""},
		{"POST", "/api/plugins/shop-tools/rollback", `{"version":"1.0.0"}`},
		{"POST", "/api/plugins/shop-tools/try", `{"kind":"tool","name":"lookup_product"}`},
	} {
		if code, m, _ := e.call(t, dev2, c.method, c.path, "application/json", c.body); code != 404 {
			t.Errorf("other developer %s %s: %d %v", c.method, c.path, code, m)
		}
	}
	// ...nor take its name with an upload.
	if code, m := e.upload(t, dev2, packExample(t, "shop", "2.0.0", nil)); code != 409 || m["field"] != "name" {
		t.Errorf("other developer uploads the same name: %d %v", code, m)
	}
	// The developer cannot see the operator's plugin or use a stream's catalog.
	if code, _, _ := e.call(t, e.dev, "GET", "/api/plugins/promotion", "", ""); code != 404 {
		t.Errorf("developer reads the operator's plugin: %d", code)
	}
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/try",
		`{"kind":"tool","name":"lookup_product","input":{"id":"p-serum"},"stream_id":"`+e.demoStream+`"}`); code != 404 || m["field"] != "stream_id" {
		t.Errorf("developer trial on a merchant's stream: %d %v", code, m)
	}
	// The operator may publish a new version of the developer's plugin; the
	// owner stays.
	code, m := e.upload(t, e.admin, packExample(t, "shop", "1.1.0", nil))
	if code != 201 || pluginOf(t, m)["owner_id"] != mustUser(t, e, "dev").ID {
		t.Errorf("operator upgrades the developer's plugin: %d %v", code, m)
	}
}

func mustUser(t *testing.T, e *testEnv, name string) *store.User {
	t.Helper()
	u, err := e.store.UserByUsername(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestVersionsEnableDisableRollback(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	org := mustUser(t, e, "admin").OrgID
	for _, v := range []string{"1.0.0", "1.2.0"} {
		if code, m := e.upload(t, e.dev, packExample(t, "shop", v, nil)); code != 201 {
			t.Fatalf("upload %s: %d %v", v, code, m)
		}
	}
	// An older version is kept for rollback but does not become active.
	code, m := e.upload(t, e.dev, packExample(t, "shop", "1.1.0", nil))
	if code != 201 || pluginOf(t, m)["version"] != "1.2.0" {
		t.Fatalf("older upload: %d %v", code, m)
	}
	code, _, raw := e.call(t, e.dev, "GET", "/api/plugins/shop-tools/versions", "", "")
	var versions []versionView
	if code != 200 || json.Unmarshal(raw, &versions) != nil || len(versions) != 3 {
		t.Fatalf("versions: %d %s", code, raw)
	}
	for _, v := range versions {
		if v.Active != (v.Version == "1.2.0") || v.Signature != "unsigned" || v.Size == 0 || v.UploadedBy == "" {
			t.Errorf("version %+v", v)
		}
	}

	// Trying a version that is not active leaves the live sandbox alone.
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/try", `{"kind":"tool","name":"lookup_product","version":"1.1.0","input":{"id":"p-serum"}}`); code != 200 || m["ok"] != true || m["version"] != "1.1.0" {
		t.Errorf("try an inactive version: %d %v", code, m)
	}
	old, err := e.store.PluginVersion(ctx, mustUser(t, e, "dev").Scope(), "shop-tools", "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if e.srv.plugins.loadedVersion(old.ID) != nil {
		t.Error("a trial of an inactive version loaded it into the live sandbox")
	}
	if _, err := e.srv.streamPlugins(ctx, org, []byte(`{"products":[{"id":"a"},{"id":"a"}]}`)); err == nil {
		t.Error("a catalog with a repeated product id was accepted")
	}
	if set, err := e.srv.streamPlugins(ctx, org, nil); err != nil || set == nil {
		t.Errorf("a stream without a catalog: %v", err)
	}
	set1, err := e.srv.streamPlugins(ctx, org, examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := e.srv.streamPlugins(ctx, org, examples.Catalog); again != set1 {
		t.Error("an unchanged org got a new plugin set at the next turn")
	}
	if _, err := set1.Tool(ctx, "shop-tools", "lookup_product", json.RawMessage(`{"id":"p-serum"}`)); err != nil {
		t.Errorf("the active version does not run: %v", err)
	}

	_, _, raw = e.call(t, e.dev, "GET", "/api/plugins/shop-tools", "", "")
	var detail struct{ Plugin pluginView }
	json.Unmarshal(raw, &detail)
	rev := detail.Plugin.Revision

	// Rollback with a stale revision is a conflict; with the current one it works.
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/rollback", fmt.Sprintf(`{"version":"1.0.0","revision":%d}`, rev-1)); code != 409 {
		t.Errorf("stale rollback: %d %v", code, m)
	}
	code, m = e.postJSON(t, e.dev, "/api/plugins/shop-tools/rollback", fmt.Sprintf(`{"version":"1.0.0","revision":%d}`, rev))
	if code != 200 || m["version"] != "1.0.0" || m["revision"].(float64) != float64(rev+1) {
		t.Fatalf("rollback: %d %v", code, m)
	}
	for _, c := range []struct{ body, field string }{{`{"version":"9.9.9"}`, "version"}, {`{}`, "version"}, {`{"version":"1.0.0","x":1}`, "body"}} {
		if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/rollback", c.body); code/100 != 4 || m["field"] != c.field {
			t.Errorf("rollback %s: %d %v", c.body, code, m)
		}
	}
	set2, _ := e.srv.streamPlugins(ctx, org, examples.Catalog)
	if set2 == set1 {
		t.Error("a rollback did not reach the next turn's plugin set")
	}

	// Disable: the next turn's set runs without the plugin.
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/disable", `{}`); code != 200 || m["enabled"] != false {
		t.Fatalf("disable: %d %v", code, m)
	}
	off, _ := e.srv.streamPlugins(ctx, org, examples.Catalog)
	if _, err := off.Tool(ctx, "shop-tools", "lookup_product", json.RawMessage(`{"id":"p-serum"}`)); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("a disabled plugin still runs: %v", err)
	}
	// A disabled plugin can still be tried from the page.
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/try", `{"kind":"tool","name":"lookup_product","input":{"id":"p-serum"}}`); code != 200 || m["ok"] != true {
		t.Errorf("try a disabled plugin: %d %v", code, m)
	}
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/enable", `{"version":"1.0.0"}`); code != 400 || m["field"] != "version" {
		t.Errorf("enable with a version: %d %v", code, m)
	}
	if code, m := e.postJSON(t, e.dev, "/api/plugins/shop-tools/enable", ``); code != 200 || m["enabled"] != true {
		t.Fatalf("enable: %d %v", code, m)
	}
	on, _ := e.srv.streamPlugins(ctx, org, examples.Catalog)
	if _, err := on.Tool(ctx, "shop-tools", "lookup_product", json.RawMessage(`{"id":"p-serum"}`)); err != nil {
		t.Errorf("re-enabled plugin: %v", err)
	}
	// Sessions that use sessionPlugins are counted on the page.
	sp, err := e.srv.sessionPlugins(ctx, org, examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	sp.Tool(ctx, "shop-tools", "lookup_product", json.RawMessage(`{"id":"p-serum"}`))
	if st := e.srv.plugins.summary(org, "shop-tools"); st.Calls != 3 {
		t.Errorf("calls after two trials and one session call: %+v", st)
	}
	if code, _ := e.postJSON(t, e.dev, "/api/plugins/no-such/enable", ``); code != 404 {
		t.Errorf("enable an unknown plugin: %d", code)
	}
	if code, _, _ := e.call(t, e.dev, "GET", "/api/plugins/Not_A_Name", "", ""); code != 404 {
		t.Errorf("malformed name: %d", code)
	}
}

func TestInstallExamplesOnce(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	e.srv.cfg.PluginDirs = []string{filepath.Join("..", "examples", "plugins", "moderation")}
	if err := e.srv.InstallExamples(ctx); err != nil {
		t.Fatal(err)
	}
	// A later start installs an example the store never had (a hook a
	// newer demo harness needs) and leaves the held one alone.
	e.srv.cfg.PluginDirs = append(e.srv.cfg.PluginDirs, filepath.Join("..", "examples", "plugins", "storefront"))
	if err := e.srv.InstallExamples(ctx); err != nil {
		t.Fatal(err)
	}
	code, _, raw := e.call(t, e.admin, "GET", "/api/plugins", "", "")
	var list []pluginView
	if code != 200 || json.Unmarshal(raw, &list) != nil || len(list) != 2 {
		t.Fatalf("after first run: %d %s", code, raw)
	}
	for _, p := range list {
		if !p.Enabled || p.Owner != "Administrator" || p.Version == "" || len(p.Exports) == 0 {
			t.Errorf("example plugin %+v", p)
		}
	}
	// Installing loads them, so the first live turn does not compile.
	if _, d, _ := e.call(t, e.admin, "GET", "/api/plugins/storefront", "", ""); d["sandbox"] == nil {
		t.Errorf("example plugin not loaded after install: %v", d)
	}
	// What the store holds is left alone: a disabled example stays
	// disabled, and no version is recorded twice.
	e.postJSON(t, e.admin, "/api/plugins/moderation/disable?override=the+demo+stream+runs+without+it", ``)
	if err := e.srv.InstallExamples(ctx); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, e, e.admin); len(got) != 2 {
		t.Errorf("third start: %v", got)
	}
	_, _, raw = e.call(t, e.admin, "GET", "/api/plugins", "", "")
	list = nil
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		if p.Name == "moderation" && p.Enabled {
			t.Error("a disabled example was enabled again")
		}
	}
	if code, _, raw := e.call(t, e.admin, "GET", "/api/plugins/moderation/versions", "", ""); code != 200 || strings.Count(string(raw), `"version"`) != 1 {
		t.Errorf("versions after three starts: %d %s", code, raw)
	}
	set, err := e.srv.streamPlugins(ctx, mustUser(t, e, "admin").OrgID, examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Tool(ctx, "storefront", "product_lookup", json.RawMessage(`{"query":"serum"}`)); err != nil {
		t.Errorf("installed example does not run: %v", err)
	}

	// A package gone from the data folder is reported on the page, and
	// sessions run without it.
	sf, err := e.store.PluginVersion(ctx, mustUser(t, e, "admin").Scope(), "storefront", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(e.srv.plugins.files.path(sf.PackageSHA256))
	e.srv.plugins.mu.Lock()
	delete(e.srv.plugins.loaded, sf.ID) // as after a restart
	e.srv.plugins.mu.Unlock()
	org := mustUser(t, e, "admin").OrgID
	e.srv.plugins.changed(org)
	set, err = e.srv.streamPlugins(ctx, org, examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Tool(ctx, "storefront", "product_lookup", json.RawMessage(`{"query":"serum"}`)); err == nil {
		t.Error("a plugin whose package is gone still runs")
	}
	_, d, _ := e.call(t, e.admin, "GET", "/api/plugins/storefront", "", "")
	if p, _ := d["plugin"].(map[string]any); !strings.Contains(fmt.Sprint(p["problem"]), "no such file") {
		t.Errorf("a missing package is not reported: %v", d["plugin"])
	}
}

func TestPackageFilesRefuseChangedBytes(t *testing.T) {
	t.Parallel()
	f := packageFiles{dir: t.TempDir()}
	sum, err := f.write([]byte("package bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := f.write([]byte("package bytes")); err != nil || again != sum {
		t.Errorf("second write: %s %v", again, err)
	}
	if got, err := f.read(sum); err != nil || string(got) != "package bytes" {
		t.Errorf("read: %q %v", got, err)
	}
	os.WriteFile(f.path(sum), []byte("tampered"), 0o600)
	if _, err := f.read(sum); err == nil || !strings.Contains(err.Error(), "no longer matches") {
		t.Errorf("tampered file: %v", err)
	}
	if _, err := f.read("../../etc/passwd"); err == nil {
		t.Error("a path was accepted as a hash")
	}
}

func FuzzDecodeUpload(f *testing.F) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("package", "p.lhp")
	w.Write([]byte("PK\x03\x04 archive"))
	mw.Close()
	f.Add(mw.FormDataContentType(), buf.Bytes())
	f.Add("application/octet-stream", []byte("PK\x03\x04"))
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"package\"\r\n\r\nabc\r\n--x--\r\n"))
	f.Add("multipart/form-data", []byte("--"))
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		const limit = 64
		data, err := decodeUpload(contentType, body, limit)
		if err != nil {
			fe, ok := err.(*fieldErr)
			if !ok || fe.field == "" || fe.code < 400 || fe.code >= 500 {
				t.Fatalf("error %v is not a 4xx naming a field", err)
			}
			return
		}
		if len(data) == 0 || len(data) > limit {
			t.Fatalf("accepted %d bytes with limit %d", len(data), limit)
		}
		if !bytes.Contains(body, data) {
			t.Fatal("the package is not part of the body")
		}
	})
}

func TestStreamPluginsUnderConcurrentChanges(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	org := mustUser(t, e, "admin").OrgID
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if code, m := e.upload(t, e.admin, packExample(t, "shop", v, nil)); code != 201 {
			t.Fatalf("upload %s: %d %v", v, code, m)
		}
	}
	catalogs := [][]byte{examples.Catalog, []byte(`{"currency":"EUR","products":[{"id":"p-serum","name":"Other serum","price":1,"stock":1}]}`)}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				set, err := e.srv.sessionPlugins(ctx, org, catalogs[i%2])
				if err == nil {
					_, err = set.Tool(ctx, "shop-tools", "lookup_product", json.RawMessage(`{"id":"p-serum"}`))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 10 {
		version := []string{"1.0.0", "1.1.0"}[i%2]
		if code, m := e.postJSON(t, e.admin, "/api/plugins/shop-tools/rollback", `{"version":"`+version+`"}`); code != 200 {
			t.Errorf("rollback to %s: %d %v", version, code, m)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a turn during plugin changes: %v", err)
	}
	if st := e.srv.plugins.summary(org, "shop-tools"); st.Calls != 90 || st.Errors != 0 {
		t.Errorf("counted %+v, want 90 calls without errors", st)
	}
}

func TestPackagesInstalledFromTheCommandLineAreImported(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	ctx := context.Background()
	pkg, err := plugins.ReadPackage(packExample(t, "promotion", "1.0.0", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plugins.InstallToStore(e.srv.cfg.DataDir, pkg, nil); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(plugins.StoreDir(e.srv.cfg.DataDir), "broken", "1.0.0"+plugins.PackageExt)
	os.MkdirAll(filepath.Dir(broken), 0o755)
	os.WriteFile(broken, []byte("not a package"), 0o644)
	err = e.srv.InstallExamples(ctx)
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a broken installed package is not reported: %v", err)
	}
	if got := listNames(t, e, e.admin); len(got) != 1 || got[0] != "promotion@1.0.0" {
		t.Fatalf("after import: %v", got)
	}
	// A second start imports nothing twice.
	e.srv.InstallExamples(ctx)
	if code, _, raw := e.call(t, e.admin, "GET", "/api/plugins/promotion/versions", "", ""); code != 200 || strings.Count(string(raw), `"version"`) != 1 {
		t.Errorf("versions after a second start: %d %s", code, raw)
	}
}
