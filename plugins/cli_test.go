package plugins

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

// exampleDir copies an example's manifest and its module built in
// TestMain into a temporary plugin directory.
func exampleDir(t *testing.T, name, wasmFile string) string {
	t.Helper()
	dir := t.TempDir()
	m, err := os.ReadFile(filepath.Join("../examples/plugins", name, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, wasmFile), guestWasm(t, "example/"+name), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cache := filepath.Join(testCacheDir(), "wazero")
	if len(args) > 0 && (args[0] == "build" || args[0] == "test" || args[0] == "pack" || args[0] == "install") {
		args = append(args, "--cache", cache)
	}
	err := PluginMain(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestCLITestAndInspect(t *testing.T) {
	dir := exampleDir(t, "shop", "shop.wasm")
	out, _, err := runCLI(t, "", "inspect", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shop-tools@1.0.0 (abi 1)", "tool:lookup_product", "catalog: Reads products",
		"extism:host/user.livehat_catalog_lookup", "lookup_product() -> (i32)", "livehat_abi_v1() -> (i32)", "pinned true"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PROBLEM") {
		t.Errorf("inspect found problems:\n%s", out)
	}
	out, _, err = runCLI(t, "", "inspect", "--json", filepath.Join(dir, "shop.wasm"))
	var in inspection
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in.Size == 0 || len(in.Problems) != 0 {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}

	out, errOut, err := runCLI(t, "", "test", dir, "--call", "tool:lookup_product", "--input", `{"name":"口红"}`,
		"--catalog", "../examples/plugins/catalog.json")
	if err != nil || !strings.Contains(out, `"id": "p-lipstick"`) || !strings.Contains(errOut, "tool:lookup_product: ok in") {
		t.Fatalf("test: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = runCLI(t, `{"product_id":"p-cream","quantity":2}`, "test", "--call", "tool:best_coupon", "--input", "-",
		"--catalog", "../examples/plugins/catalog.json", "--repeat", "5", dir)
	if err != nil || !strings.Contains(out, `"pay": 466.2`) || !strings.Contains(errOut, "5 calls, p50") {
		t.Fatalf("test --repeat: %v\n%s\n%s", err, out, errOut)
	}
	if _, _, err := runCLI(t, "", "test", dir, "--call", "tool:lookup_product", "--input", `{"id":7}`); !errors.Is(err, ErrBadInput) {
		t.Fatalf("schema failure: %v", err)
	}
	hookDir := exampleDir(t, "speech", "speech.wasm")
	in2, _ := json.Marshal(HookInput{Event: harness.EventAfterResponse, Text: strings.Repeat("很长的回复。", 40), ReplyChars: 30})
	out, _, err = runCLI(t, "", "test", hookDir, "--call", "hook:fit_speech", "--input", string(in2))
	if err != nil || !strings.Contains(out, `"action": "rewrite"`) {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	skillDir := exampleDir(t, "promotion", "promotion.wasm")
	out, _, err = runCLI(t, "", "test", skillDir, "--call", "skill:current_promotion", "--catalog", "../examples/plugins/catalog.json",
		"--now", "2026-11-29T22:50:00Z")
	if err != nil || !strings.Contains(out, "还剩10分钟结束") {
		t.Fatalf("skill: %v\n%s", err, out)
	}
}

func TestCLIPackInstall(t *testing.T) {
	dir := exampleDir(t, "moderation", "moderation.wasm")
	keys := t.TempDir()
	out, _, err := runCLI(t, "", "keygen", "--out", filepath.Join(keys, "team-a"))
	if err != nil || !strings.Contains(out, "public key") {
		t.Fatalf("keygen: %v %s", err, out)
	}
	lhp := filepath.Join(t.TempDir(), "mod.lhp")
	out, _, err = runCLI(t, "", "pack", dir, "--no-build", "--key", filepath.Join(keys, "team-a"), "-o", lhp)
	if err != nil || !strings.Contains(out, "signed by team-a") {
		t.Fatalf("pack: %v %s", err, out)
	}
	out, _, err = runCLI(t, "", "inspect", lhp)
	if err != nil || !strings.Contains(out, "signed by") || strings.Contains(out, "PROBLEM") {
		t.Fatalf("inspect package: %v\n%s", err, out)
	}
	data := t.TempDir()
	if _, _, err := runCLI(t, "", "install", lhp, "--data", data); !errors.Is(err, ErrSignature) {
		t.Fatalf("install without the key: %v", err)
	}
	out, _, err = runCLI(t, "", "install", lhp, "--data", data, "--trust", filepath.Join(keys, "team-a.pub"))
	if err != nil || !strings.Contains(out, "installed moderation@1.0.0") {
		t.Fatalf("install: %v %s", err, out)
	}
	ctx := context.Background()
	pubHex, err := os.ReadFile(filepath.Join(keys, "team-a.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := hex.DecodeString(strings.TrimSpace(string(pubHex)))
	if err != nil {
		t.Fatal(err)
	}
	if err := NewRegistry(newTestHost(t, NewHostConfig())).LoadStore(ctx, data); !errors.Is(err, ErrSignature) {
		t.Fatalf("a host without the key loaded the store: %v", err)
	}
	r := NewRegistry(newTestHost(t, NewHostConfig().WithTrustedKey("team-a", pub)))
	defer r.Close(ctx)
	if err := r.LoadStore(ctx, data); err != nil {
		t.Fatal(err)
	}
	if l := r.List(); len(l) != 1 || l[0].Name != "moderation" || l[0].Active != "1.0.0" {
		t.Fatalf("store: %+v", l)
	}
}

// TestCLIBuild builds a real example from source with the Go toolchain.
func TestCLIBuild(t *testing.T) {
	dir := "../examples/plugins/speech"
	out, _, err := runCLI(t, "", "build", dir)
	t.Cleanup(func() { os.Remove(filepath.Join(dir, "speech.wasm")) })
	if err != nil || !strings.Contains(out, "speech-length@1.0.0: hook:fit_speech") || !strings.Contains(out, "loaded in the sandbox") {
		t.Fatalf("build: %v\n%s", err, out)
	}
}

func TestCLIUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"test", "x"}, {"test", "x", "--call", "gadget:y"}, {"inspect"},
		{"build", "a", "b"}, {"test", "--repeat"}} {
		var u *harness.UsageError
		if _, _, err := runCLI(t, "", args...); !errors.As(err, &u) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if _, _, err := runCLI(t, "", "test", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	if out, _, err := runCLI(t, "", "help"); err != nil || !strings.Contains(out, "inspect FILE") {
		t.Errorf("help: %v %s", err, out)
	}
}

// TestCLISigningFlow runs sdk/README.md's signing flow as written: keygen
// --out team.key, pack --key team.key, then install and test with --trust
// team.key.pub, which must name the same signer.
func TestCLISigningFlow(t *testing.T) {
	dir := t.TempDir()
	man, err := json.Marshal(edgeManifest())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), man, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "edge.wasm"), watWasm(t, "edge"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	key := filepath.Join(keys, "team.key")
	out, _, err := runCLI(t, "", "keygen", "--out", key)
	if err != nil || !strings.Contains(out, "key id team ") {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	lhp := filepath.Join(t.TempDir(), "edge.lhp")
	out, _, err = runCLI(t, "", "pack", dir, "--no-build", "--key", key, "-o", lhp)
	if err != nil || !strings.Contains(out, "signed by team)") {
		t.Fatalf("pack: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "", "install", lhp, "--data", t.TempDir(), "--trust", key+".pub")
	if err != nil || !strings.Contains(out, "installed edge@1.0.0") {
		t.Fatalf("install --trust team.key.pub: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "", "test", lhp, "--call", "hook:allow", "--trust", key+".pub")
	if err != nil || !strings.Contains(out, `"action": "allow"`) {
		t.Fatalf("test --trust team.key.pub: %v\n%s", err, out)
	}
	_, _, err = runCLI(t, "", "test", lhp, "--call", "hook:allow")
	if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), `pass --trust with the public key file of "team"`) {
		t.Fatalf("test of a signed package without --trust: %v", err)
	}
	_, _, err = runCLI(t, "", "test", lhp, "--call", "hook:allow", "--trust", key+".pub", "--trust-id", "other")
	if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), `signed by key "team", which is not trusted`) {
		t.Fatalf("test trusting the key under another name: %v", err)
	}
}

func TestKeyIDFromFile(t *testing.T) {
	for _, c := range []struct{ key, id string }{
		{"team.key", "team"},
		{"keys/team.key", "team"},
		{"team", "team"},
		{"team-a", "team-a"},
		{"acme.prod.key", "acme.prod"},
		{"team.pub", "team"},
	} {
		t.Run(c.key, func(t *testing.T) {
			// pack names the signer from the key, install and test from
			// keygen's public key file beside it: the two must agree.
			if got := keyIDFromFile(c.key); got != c.id {
				t.Errorf("keyIDFromFile(%q) = %q, want %q", c.key, got, c.id)
			}
			if got := keyIDFromFile(c.key + ".pub"); got != c.id {
				t.Errorf("keyIDFromFile(%q) = %q, want %q", c.key+".pub", got, c.id)
			}
		})
	}
}
