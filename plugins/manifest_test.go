package plugins

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

const validManifest = `{
  "abi": 1, "name": "shop-tools", "version": "1.2.3-rc.1+build.5",
  "wasm": {"file": "shop.wasm", "sha256": ""},
  "tools": [{"name": "lookup_product", "description": "Find a product.",
    "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}],
  "hooks": [{"name": "check", "event": "after_response", "export": "check_reply", "on_failure": "fail_closed", "config": {"x": 1}}],
  "skills": [{"id": "promo", "kind": "strategy", "description": "Promotions."}],
  "permissions": [{"name": "catalog", "reason": "reads products"}],
  "limits": {"memory_pages": 256, "timeout_ms": 200}
}`

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest([]byte(validManifest))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := m.Export(KindHook, "check"); e != "check_reply" {
		t.Fatalf("hook export %q", e)
	}
	if e, _ := m.Export(KindTool, "lookup_product"); e != "lookup_product" {
		t.Fatalf("tool export %q", e)
	}
	if got := m.Kinds(); len(got) != 3 || !m.Has(PermCatalog) || m.Has(PermKV) {
		t.Fatalf("kinds %v", got)
	}
	if sk := m.HarnessSkills(); sk[0].Plugin != "shop-tools" || sk[0].Export != "promo" || sk[0].Kind != harness.SkillStrategy {
		t.Fatalf("harness skills %+v", sk)
	}
	tools, hooks := m.HarnessTools(), m.HarnessHooks()
	if tools[0].Plugin != "shop-tools" || hooks[0].OnFailure != harness.FailClosed || hooks[0].Event != harness.EventAfterResponse {
		t.Fatalf("harness view %+v %+v", tools, hooks)
	}
	l := m.Limits.WithDefaults()
	if l.MemoryPages != 256 || l.Instances != DefaultInstances || m.Limits.Timeout().Milliseconds() != 200 {
		t.Fatalf("limits %+v", l)
	}
	yamlForm := `
abi: 1
name: yaml-plugin
version: 0.1.0
wasm: {file: p.wasm}
hooks:
  - {name: screen, event: viewer_message}
`
	if _, err := ParseManifest([]byte(yamlForm)); err != nil {
		t.Fatalf("yaml: %v", err)
	}
}

func TestParseManifestRejects(t *testing.T) {
	edit := func(from, to string) string {
		if !strings.Contains(validManifest, from) {
			t.Fatalf("fixture lacks %q", from)
		}
		return strings.Replace(validManifest, from, to, 1)
	}
	cases := []struct{ doc, says string }{
		{``, "empty"},
		{`{"abi":1`, "manifest"},
		{`[1,2]`, "yaml"},
		{edit(`"abi": 1`, `"abi": 2`), "abi 2 is not supported"},
		{edit(`"name": "shop-tools"`, `"name": "Shop Tools"`), `name "Shop Tools"`},
		{edit(`1.2.3-rc.1+build.5`, `1.2`), "want MAJOR.MINOR.PATCH"},
		{edit(`1.2.3-rc.1+build.5`, `01.2.3`), "leading zeros"},
		{edit(`"file": "shop.wasm"`, `"file": "../shop.wasm"`), "plain file name"},
		{edit(`"sha256": ""`, `"sha256": "abc"`), "64 lower-case hex"},
		{edit(`"event": "after_response"`, `"event": "after_lunch"`), `unknown event "after_lunch"`},
		{edit(`"on_failure": "fail_closed"`, `"on_failure": "explode"`), "on_failure"},
		{edit(`"export": "check_reply"`, `"export": "lookup_product"`), "already used"},
		{edit(`"export": "check_reply"`, `"export": "livehat_abi_v1"`), "reserved"},
		{edit(`"export": "check_reply"`, `"export": "bad-name"`), "not a valid identifier"},
		{edit(`"type": "object", "properties"`, `"type": "objekt", "properties"`), "parameters"},
		{edit(`"parameters": {`, `"parameters": [1], "x": {`), "unknown field"},
		{edit(`"name": "catalog"`, `"name": "filesystem"`), `permission "filesystem" is unknown`},
		{edit(`"reason": "reads products"`, `"reason": ""`), "reason is empty"},
		{edit(`"memory_pages": 256`, `"memory_pages": 100000`), "memory_pages"},
		{edit(`"timeout_ms": 200`, `"timeout_ms": -1`), "timeout_ms"},
		{edit(`"description": "Promotions."`, `"description": ""`), "description is empty"},
		{validManifest + `{}`, "trailing data"},
	}
	for _, c := range cases {
		_, err := ParseManifest([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q…: error %v, want %q", firstN(c.doc, 40), err, c.says)
		}
	}
	// Every problem is reported at once.
	_, err := ParseManifest([]byte(`{"abi":9,"name":"X","version":"x","wasm":{"file":""}}`))
	for _, want := range []string{"abi 9", `name "X"`, "semver", "wasm.file", "no tools, hooks or skills"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("joined errors %v lack %q", err, want)
		}
	}
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func TestSemver(t *testing.T) {
	order := []string{"0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "2.0.0"}
	for i := 1; i < len(order); i++ {
		a, err1 := ParseSemver(order[i-1])
		b, err2 := ParseSemver(order[i])
		if err1 != nil || err2 != nil || a.Compare(b) != -1 || b.Compare(a) != 1 {
			t.Errorf("%s < %s: %v %v %d", order[i-1], order[i], err1, err2, a.Compare(b))
		}
	}
	for _, bad := range []string{"", "1", "1.2", "v1.2.3", "1.2.3-", "1.2.3+", "1.2.3-01", "1.2.3-a..b", "-1.2.3", "1.2.3.4"} {
		if _, err := ParseSemver(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Add([]byte("abi: 1\nname: a-b\nversion: 1.0.0\nwasm: {file: x.wasm}\nskills: [{id: s, description: d}]\n"))
	f.Add([]byte(`{"abi":1,"tools":[{"parameters":{"$ref":"#"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		// A manifest that parsed re-encodes to one that parses the same.
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		m2, err := ParseManifest(again)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", again, err)
		}
		if m2.Name != m.Name || m2.Version != m.Version || len(m2.Kinds()) != len(m.Kinds()) {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}

func FuzzParseSemver(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.0.0-rc.1+b", "0.0.0-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSemver(s)
		if err != nil {
			return
		}
		if v.String() != s {
			t.Fatalf("%q formats back as %q", s, v.String())
		}
		if v.Compare(v) != 0 {
			t.Fatalf("%q is not equal to itself", s)
		}
	})
}

func FuzzDecodeDecision(f *testing.F) {
	for _, s := range []string{`{"action":"allow"}`, `{"action":"deny","reason":"x"}`, `{"action":"rewrite","arguments":{"a":1}}`,
		`{"action":"retry","feedback":"f","extra":[1]}`, `{"action":"inject"}`, `null`, `{"action":"rewrite","arguments":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDecision(b)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("%s decoded into an invalid decision: %v", b, err)
		}
		enc, _ := json.Marshal(d)
		d2, err := DecodeDecision(enc)
		if err != nil || d2.Action != d.Action || d2.Text != d.Text || d2.Reason != d.Reason {
			t.Fatalf("round trip of %s: %+v, %v", enc, d2, err)
		}
	})
}

func FuzzDecodeSkillOutput(f *testing.F) {
	f.Add([]byte(`{"text":"hi"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeSkillOutput(b); err == nil && s == "" {
			t.Fatalf("%s decoded to an empty text", b)
		}
	})
}
