package plugins

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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

func TestInspect(t *testing.T) {
	ctx := context.Background()
	shop, err := ReadDir(exampleDir(t, "shop", "shop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Inspect(ctx, shop)
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "shop-tools" || in.Version != "1.0.0" || in.ABI != 1 || !in.Pinned || len(in.Problems) != 0 || in.Size != len(shop.Wasm) ||
		!slices.Contains(in.Declares, "tool:lookup_product") || !slices.Contains(in.Exports, "lookup_product() -> (i32)") ||
		!slices.Contains(in.Imports, "extism:host/user.livehat_catalog_lookup") || in.Limits.MemoryPages == 0 {
		t.Errorf("shop: %+v", in)
	}

	_, key, _ := ed25519.GenerateKey(nil)
	tests := []struct {
		name    string
		change  func(p *Package)
		problem string // a part of one of the problems; "" for none
		signer  string
	}{
		{"unpinned", func(p *Package) { p.Manifest.Wasm.SHA256 = strings.Repeat("0", 64) }, "wasm.sha256 does not match", ""},
		{"undeclared export", func(p *Package) {
			p.Manifest.Hooks = append(slices.Clone(p.Manifest.Hooks), HookSpec{Name: "nope", Event: "after_response"})
		}, `hook:nope: no export "nope" of type () -> i32`, ""},
		{"too little memory", func(p *Package) { p.Manifest.Limits.MemoryPages = 1 }, "limits.memory_pages is 1", ""},
		{"signed", func(p *Package) {
			if err := p.Sign("team", key); err != nil {
				t.Fatal(err)
			}
		}, "", "team"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The shop's Go module asks for more memory than one page.
			m := *shop.Manifest
			pkg := &Package{Manifest: &m, Wasm: shop.Wasm}
			tt.change(pkg)
			in, err := Inspect(ctx, pkg)
			if err != nil {
				t.Fatal(err)
			}
			problems := strings.Join(in.Problems, "\n")
			if tt.problem == "" && problems != "" || !strings.Contains(problems, tt.problem) {
				t.Errorf("problems %q, want %q", in.Problems, tt.problem)
			}
			if in.SignedBy != tt.signer {
				t.Errorf("signed by %q, want %q", in.SignedBy, tt.signer)
			}
		})
	}
	if _, err := Inspect(ctx, &Package{Manifest: shop.Manifest, Wasm: []byte("not wasm")}); err == nil {
		t.Error("a module that does not decode was inspected")
	}
}

func TestManifestDeclared(t *testing.T) {
	m := &Manifest{Tools: []ToolSpec{{Name: "a"}}, Hooks: []HookSpec{{Name: "b"}, {Name: "c"}}, Skills: []SkillSpec{{ID: "d"}}}
	if got, want := m.Declared(), []string{"tool:a", "hook:b", "hook:c", "skill:d"}; !slices.Equal(got, want) {
		t.Errorf("Declared() = %q, want %q", got, want)
	}
	if got := (&Manifest{}).Declared(); len(got) != 0 {
		t.Errorf("empty manifest declares %q", got)
	}
}
