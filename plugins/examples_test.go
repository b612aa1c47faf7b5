package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
)

// streamNow is the stream clock of the example tests: the serum flash
// sale runs until 23:00, the lipstick week until midnight.
var streamNow = time.Date(2026, 11, 29, 21, 40, 0, 0, time.UTC)

func demoCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	b, err := os.ReadFile("../examples/plugins/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func demoEnv(t testing.TB, log *bytes.Buffer) *LocalEnv {
	var logger *slog.Logger
	if log != nil {
		logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return NewLocalEnv(demoCatalog(t), logger, func() time.Time { return streamNow })
}

// loadExample loads examples/plugins/<dir> with the module built in TestMain.
func loadExample(t testing.TB, h *Host, dir string) *Plugin {
	t.Helper()
	m, _, err := ReadManifestDir(filepath.Join("../examples/plugins", dir))
	if err != nil {
		t.Fatal(err)
	}
	return load(t, h, m, guestWasm(t, "example/"+dir))
}

func hookInput(t testing.TB, in HookInput) []byte {
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExampleShop(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := loadExample(t, h, "shop")
	env := demoEnv(t, nil)
	ctx := context.Background()
	type product struct {
		ID       string  `json:"id"`
		Price    float64 `json:"price"`
		Discount int     `json:"discount_percent"`
		InStock  bool    `json:"in_stock"`
	}
	var look struct {
		Found    bool      `json:"found"`
		Currency string    `json:"currency"`
		Products []product `json:"products"`
	}
	for _, c := range [][2]string{
		{`{"id":"p-serum"}`, "p-serum"},
		{`{"name":"面霜"}`, "p-cream"},
		{`{"name":"Repair Cream"}`, "p-cream"},
		{`{"query":"那个防晒还有吗"}`, "p-sunscreen"},
	} {
		args, want := c[0], c[1]
		out, err := p.Tool(ctx, env, "lookup_product", []byte(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if err := json.Unmarshal(out, &look); err != nil || !look.Found || look.Products[0].ID != want || look.Currency != "CNY" {
			t.Fatalf("%s: %s", args, out)
		}
	}
	if look.Products[0].InStock {
		t.Fatalf("the sunscreen is sold out: %+v", look)
	}
	out, err := p.Tool(ctx, env, "lookup_product", []byte(`{"id":"nope"}`))
	if err != nil || !strings.Contains(string(out), `"found":false`) {
		t.Fatalf("unknown id: %s, %v", out, err)
	}
	out, err = p.Tool(ctx, env, "check_stock", []byte(`{"name":"面霜","quantity":9}`))
	if err != nil || !strings.Contains(string(out), `"status":"low_stock"`) || !strings.Contains(string(out), `"can_buy":false`) {
		t.Fatalf("check_stock: %s, %v", out, err)
	}
	out, err = p.Tool(ctx, env, "best_coupon", []byte(`{"product_id":"p-cream","quantity":2,"viewer_orders":0}`))
	var coupon struct {
		Best struct{ ID string } `json:"best"`
		Pay  float64             `json:"pay"`
	}
	if err != nil || json.Unmarshal(out, &coupon) != nil || coupon.Best.ID != "c-all10" || coupon.Pay != 466.2 {
		t.Fatalf("best_coupon: %s, %v", out, err)
	}
	// The host checks arguments against the manifest's schema first.
	for _, bad := range []string{`{"id":1}`, `{}`, `{"sku":"x"}`, `not json`} {
		if _, err := p.Tool(ctx, env, "lookup_product", []byte(bad)); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: %v, want ErrBadInput", bad, err)
		}
	}
	// A guest error comes back as ErrGuest with the guest's message.
	if _, err := p.Tool(ctx, env, "check_stock", []byte(`{"id":"p-none"}`)); !errors.Is(err, ErrGuest) || !strings.Contains(err.Error(), "no product") {
		t.Fatalf("unknown product: %v", err)
	}
}

func TestExampleCompliance(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := loadExample(t, h, "compliance")
	env := demoEnv(t, nil)
	cases := map[string]harness.Action{
		"玻尿酸精华秒杀价¥169，原价299元。":     harness.ActionAllow,
		"修护面霜只要199元！":              harness.ActionRetry,
		"这款面霜是全网第一。":               harness.ActionRewrite,
		"This cream cures eczema.": harness.ActionRetry,
	}
	for text, want := range cases {
		d, err := p.Hook(context.Background(), env, "check_reply", hookInput(t, HookInput{Event: harness.EventAfterResponse, Text: text,
			Config: p.Manifest().Hooks[0].Config}))
		if err != nil || d.Action != want {
			t.Errorf("%q: %+v, %v; want %s", text, d, err, want)
		}
	}
}

func TestExampleSpeech(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := loadExample(t, h, "speech")
	long := strings.Repeat("这款面霜修护屏障，适合敏感肌。", 20)
	d, err := p.Hook(context.Background(), nil, "fit_speech", hookInput(t, HookInput{Event: harness.EventAfterResponse, Text: long, ReplyChars: 60}))
	if err != nil || d.Action != harness.ActionRewrite || len([]rune(d.Text)) > 60 {
		t.Fatalf("%+v, %v", d, err)
	}
	d, err = p.Hook(context.Background(), nil, "fit_speech", hookInput(t, HookInput{Event: harness.EventAfterResponse, Text: "好的。"}))
	if err != nil || d.Action != harness.ActionAllow {
		t.Fatalf("%+v, %v", d, err)
	}
}

func TestExampleModeration(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := loadExample(t, h, "moderation")
	var logs bytes.Buffer
	env := demoEnv(t, &logs)
	call := func(viewer, text string) harness.HookDecision {
		t.Helper()
		d, err := p.Hook(context.Background(), env, "screen_message", hookInput(t, HookInput{Event: harness.EventViewerMessage,
			Viewer: &Viewer{ID: viewer}, Text: text, Config: p.Manifest().Hooks[0].Config}))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := call("v1", "加微信 abc12345 领券"); d.Action != harness.ActionDeny {
		t.Fatalf("contact spam: %+v", d)
	}
	if d := call("v2", "垃圾主播"); d.Action != harness.ActionInject {
		t.Fatalf("abuse: %+v", d)
	}
	// Repeats are counted across calls (and instances) in the kv scope.
	var d harness.HookDecision
	for range 4 {
		d = call("v3", "多少钱")
	}
	if d.Action != harness.ActionDeny || !strings.Contains(d.Reason, "4 times") {
		t.Fatalf("4th repeat: %+v", d)
	}
	if d := call("v4", "多少钱"); d.Action != harness.ActionAllow {
		t.Fatalf("another viewer: %+v", d)
	}
	if v, ok, _ := env.KVGet(context.Background(), "moderation", "viewer:v3"); !ok || !strings.HasSuffix(string(v), ":4") {
		t.Fatalf("kv scope: %q %v", v, ok)
	}
	if !strings.Contains(logs.String(), "dropped message of viewer:v1") || !strings.Contains(logs.String(), "plugin=moderation") {
		t.Fatalf("logs: %s", logs.String())
	}
}

func TestExamplePromotion(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	p := loadExample(t, h, "promotion")
	text, err := p.Skill(context.Background(), demoEnv(t, nil), "current_promotion", []byte(`{"skill":"current_promotion"}`))
	if err != nil || !strings.Contains(text, "玻尿酸精华 活动价¥169") || !strings.Contains(text, "还剩1小时20分钟结束") {
		t.Fatalf("%q, %v", text, err)
	}
	// Without an environment the host function fails; the manifest's
	// fallback text comes back with the error.
	text, err = p.Skill(context.Background(), nil, "current_promotion", []byte(`{}`))
	if !errors.Is(err, ErrHostEnv) || !strings.Contains(text, "No promotion data") {
		t.Fatalf("%q, %v", text, err)
	}
}

// TestOfficialPDK runs a plugin built with the official Extism Go PDK
// alone: input, JSON output, errors, config, vars, logs and a user host
// function all work unmodified.
func TestOfficialPDK(t *testing.T) {
	h := newTestHost(t, NewHostConfig())
	m := &Manifest{ABI: ABIVersion, Name: "pdk-compat", Version: "0.1.0", Wasm: WasmRef{File: "p.wasm"},
		Hooks: []HookSpec{{Name: "count_vowels", Event: harness.EventViewerMessage}, {Name: "lookup", Event: harness.EventViewerMessage},
			{Name: "fail", Event: harness.EventViewerMessage}},
		Permissions: []PermissionRequest{{Name: PermKV, Reason: "t"}, {Name: PermLog, Reason: "t"}, {Name: PermCatalog, Reason: "t"}},
		Config:      map[string]string{"greeting": "你好"}}
	p := load(t, h, m, guestWasm(t, "pdkcompat"))
	var logs bytes.Buffer
	env := demoEnv(t, &logs)
	ctx := context.Background()
	var got struct {
		Count, Total int
		Greeting     string
	}
	for i, want := range []int{5, 10} {
		out, err := p.Call(ctx, env, KindHook, "count_vowels", []byte("Hello, Extism PDK! éa"))
		if err != nil || json.Unmarshal(out, &got) != nil || got.Count != 5 || got.Total != want || got.Greeting != "你好" {
			t.Fatalf("call %d: %s, %v", i, out, err)
		}
	}
	if !strings.Contains(logs.String(), "counted Hello") {
		t.Fatalf("logs: %q", logs.String())
	}
	out, err := p.Call(ctx, env, KindHook, "lookup", []byte(`{"schema":"livehat.catalog/2","kind":"product","name":"口红"}`))
	if err != nil || !strings.Contains(string(out), `"id":"p-lipstick"`) {
		t.Fatalf("lookup: %s, %v", out, err)
	}
	if _, err := p.Call(ctx, env, KindHook, "fail", []byte("why")); !errors.Is(err, ErrGuest) || !strings.Contains(err.Error(), "nope: why") {
		t.Fatalf("fail: %v", err)
	}
}
