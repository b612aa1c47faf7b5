package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

const demoPath = "../examples/harness/demo.json"

func TestLoadDemo(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatalf("Load(%s): %v", demoPath, err)
	}
	if got, want := len(h.Skills), 7; got != want {
		t.Errorf("skills = %d, want %d", got, want)
	}
	size, ok := h.Skill("size_advice")
	if !ok {
		t.Fatal("size_advice skill missing")
	}
	if size.File != "" {
		t.Errorf("size_advice.File = %q, want it cleared after resolving", size.File)
	}
	if size.Version != "2.0.1" || size.Metadata["author"] != "demo-merchant" {
		t.Errorf("size_advice metadata not read from SKILL.md: version %q, metadata %v", size.Version, size.Metadata)
	}
	if len(size.Rules) != 4 || !size.Rules[0].Essential || size.Rules[2].Essential {
		t.Errorf("size_advice rules = %+v, want 4 with the first two essential", size.Rules)
	}
	if !strings.HasPrefix(h.Version(), "sha256:") || len(h.Version()) != len("sha256:")+64 {
		t.Errorf("Version() = %q, want sha256:<64 hex>", h.Version())
	}
}

// TestBrokenHarnesses checks that each broken file in testdata gives an
// error that names its line and says what is wrong.
func TestBrokenHarnesses(t *testing.T) {
	want := map[string]struct {
		line int
		msg  string
	}{
		"01-syntax-trailing-comma.json":      {2, "invalid JSON"},
		"02-unknown-field.json":              {17, `tools[0].descripton: unknown field "descripton" (did you mean "description"?)`},
		"03-wrong-type.json":                 {25, "pipeline.tool_rounds.value: want an integer, got a string"},
		"04-duplicate-tool.json":             {23, `tools[1].name: duplicate tool name "lookup"`},
		"05-bad-schema.json":                 {18, "tools[0].parameters: schema does not compile: at '/properties/q/type'"},
		"06-unknown-hook-event.json":         {24, `hooks[0].event: unknown event "before_reply"`},
		"07-limit-out-of-range.json":         {24, "pipeline.reply_chars.value: is 400, outside the legal range [50, 150]"},
		"08-no-reply-skill.json":             {27, "pipeline.require_reply_skill: is true but the harness has no reply skill"},
		"09-skills-without-section.json":     {5, "layout has no skills section"},
		"10-duplicate-key.json":              {3, `duplicate key "name" (first at line 2)`},
		"11-tool-named-load-skill.json":      {16, `"load_skill" is the built-in load-skill tool's name`},
		"12-missing-limit.json":              {23, "pipeline.retries: is missing"},
		"13-unknown-style.json":              {4, `layout.style: unknown style "html"`},
		"14-parameters-not-object.json":      {18, `must have "type": "object"`},
		"15-truncated.json":                  {16, "unexpected end of input"},
		"16-retry-feedback-placeholder.json": {29, "must contain {feedback}"},
		"17-yaml-bad-indent.yaml":            {4, "invalid YAML"},
		"18-yaml-unknown-field.yaml":         {11, `pipeline.retry_budget: unknown field "retry_budget"`},
		"19-skill-file-missing.json":         {4, "cannot read skills/nowhere/SKILL.md"},
		"20-skill-file-escapes.json":         {4, "must be a relative path inside the harness folder"},
		"21-catalog-arg-not-string.json":     {28, `tools[1].catalog_args: "item" has type "integer"; a catalog id is a string`},
		"22-catalog-arg-unknown.json":        {28, `tools[1].catalog_args: "item" is not a property of the parameters`},
		"23-query-arg-also-catalog.json":     {29, `tools[1].query_args: "item" is a catalog argument too`},
		"24-query-arg-not-string.json":       {28, `tools[1].query_args: "item" has type "array"; an item query is a string`},
		"25-variant-arg-required.json":       {29, `tools[1].variant_args: "size" is required`},
		"26-variant-arg-also-catalog.json":   {29, `tools[1].variant_args: "size" is a catalog or query argument too`},
	}
	files, err := filepath.Glob("testdata/broken/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("testdata/broken has %d files, the test expects %d", len(files), len(want))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			_, err := Load(f)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			msg := err.Error()
			prefix := f + ":" + strconv.Itoa(w.line) + ":"
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("error %q does not start with %q", msg, prefix)
			}
			if !strings.Contains(msg, w.msg) {
				t.Errorf("error %q does not contain %q", msg, w.msg)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	h, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	h.Name = ""
	h.Tools[0].Plugin = ""
	h.Pipeline.Injection.Position = "sideways"
	err = Validate(h)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Validate = %v, want an ErrorList", err)
	}
	var paths []string
	for _, e := range list {
		paths = append(paths, e.Path)
	}
	want := []string{"name", "tools[0].plugin", "pipeline.injection.position"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Errorf("problem paths = %v, want %v", paths, want)
	}
}

func TestYAMLAndJSONAgree(t *testing.T) {
	h, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	y, err := MarshalYAML(h)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := Parse(y, FormatYAML)
	if err != nil {
		t.Fatalf("Parse(YAML form): %v\n%s", err, y)
	}
	if fromYAML.Version() != h.Version() {
		t.Errorf("YAML round trip changed the version: %s → %s", h.ShortVersion(), fromYAML.ShortVersion())
	}
	j, err := Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := Parse(j, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if fromJSON.Version() != h.Version() {
		t.Errorf("JSON round trip changed the version")
	}
}

func TestVersionIgnoresFormattingButNotOrder(t *testing.T) {
	data, err := os.ReadFile("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse(data, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	squeezed := strings.Join(strings.Fields(string(data)), " ")
	b, err := Parse([]byte(squeezed), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if a.Version() != b.Version() {
		t.Error("whitespace changed the version")
	}
	// Property order is what the model reads, so it is part of the version.
	reordered := strings.Replace(string(data),
		`{ "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] }`,
		`{ "required": ["q"], "type": "object", "properties": { "q": { "type": "string" } } }`, 1)
	c, err := Parse([]byte(reordered), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if a.Version() == c.Version() {
		t.Error("reordering schema keys kept the version")
	}
}

func TestSaveIsAtomicAndRefusesInvalid(t *testing.T) {
	h, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "h.yaml")
	if err := Save(path, h); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := h.Clone()
	bad.Layout.Style = "html"
	if err := Save(path, bad); err == nil {
		t.Fatal("Save accepted an invalid harness")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("a refused Save changed the stored file")
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version() != h.Version() {
		t.Error("Save/Load changed the harness")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Save left %d files behind, want 1", len(entries))
	}
}

func TestLoadFSResolvesSkillFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"h/harness.yaml": {Data: []byte(`name: fs
layout:
  style: markdown
  sections: [{kind: skills}]
skills:
  - file: s/SKILL.md
pipeline:
  reply_chars: {value: 100, min: 50, max: 150}
  tool_rounds: {value: 3, min: 1, max: 5}
  retries: {value: 1, min: 0, max: 2}
`)},
		"h/s/SKILL.md": {Data: []byte("---\nname: greet\ndescription: Greet viewers.\nmetadata:\n  kind: reply\n---\n\nSay hello.\n\n1. Use the viewer's name.\n2. **Keep it short.**\n")},
	}
	h, err := LoadFS(fsys, "h/harness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := h.Skills[0]
	if s.ID != "greet" || s.Kind != SkillReply || s.Instructions != "Say hello." || s.Format != ListNumbered {
		t.Errorf("skill = %+v", s)
	}
	if len(s.Rules) != 2 || s.Rules[0].Essential || !s.Rules[1].Essential || s.Rules[1].Text != "Keep it short." {
		t.Errorf("rules = %+v", s.Rules)
	}
}

func TestParseRejectsSkillFilesWithoutDirectory(t *testing.T) {
	data, err := os.ReadFile("testdata/broken/19-skill-file-missing.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(data, FormatJSON)
	if err == nil || !strings.Contains(err.Error(), "only be read when loading from a file") {
		t.Errorf("Parse = %v", err)
	}
}

func TestHostileDocuments(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	for name, doc := range map[string]struct {
		data   string
		format Format
	}{
		"deep json":       {`{"name": ` + deep + `}`, FormatJSON},
		"deep yaml":       {"name: " + deep, FormatYAML},
		"yaml alias bomb": {"a: &a [x, x]\nb: &b [*a, *a]\nname: *b\n", FormatYAML},
		"two documents":   {"name: a\n---\nname: b\n", FormatYAML},
		"not an object":   {`[1, 2]`, FormatJSON},
		"empty":           {``, FormatJSON},
		"empty yaml":      {``, FormatYAML},
		"huge number":     {`{"pipeline": {"retries": {"value": 1e400}}}`, FormatJSON},
		"fraction limit":  {`{"pipeline": {"retries": {"value": 1.5}}}`, FormatJSON},
		"null everywhere": {`{"name": null, "layout": null, "skills": null}`, FormatJSON},
		"trailing data":   {`{} {}`, FormatJSON},
		"bad utf8 key":    {"{\"\xff\": 1}", FormatJSON},
		"unknown format":  {`{}`, Format("toml")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc.data), doc.format); err == nil {
				t.Errorf("Parse accepted %s", name)
			}
		})
	}
}

// TestLoadRefusesLinkedSkillFiles puts real symbolic links where a skill
// file is expected: Load must refuse each, naming the file, and never read
// through it.
func TestLoadRefusesLinkedSkillFiles(t *testing.T) {
	const skill = "---\nname: size\ndescription: Size advice.\nmetadata:\n  kind: reply\n---\n\nAsk for height and weight.\n"
	outside := t.TempDir()
	secret := filepath.Join(outside, "SKILL.md")
	if err := os.WriteFile(secret, []byte(strings.Replace(skill, "Ask for", "SECRET", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		file string // the skill's "file"
		make func(t *testing.T, dir string)
		says string // "" when the load must succeed
	}{
		{"regular file", "skills/size.md", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "skills", "size.md"), skill)
		}, ""},
		{"link to a file outside", "skills/size.md", func(t *testing.T, dir string) {
			symlinkOrSkip(t, secret, filepath.Join(dir, "skills", "size.md"))
		}, "skills/size.md is a symbolic link"},
		{"link to a file inside", "skills/size.md", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "real.md"), skill)
			symlinkOrSkip(t, filepath.Join(dir, "real.md"), filepath.Join(dir, "skills", "size.md"))
		}, "skills/size.md is a symbolic link"},
		{"relative link out of the folder", "size.md", func(t *testing.T, dir string) {
			rel, err := filepath.Rel(dir, secret)
			if err != nil {
				t.Fatal(err)
			}
			symlinkOrSkip(t, rel, filepath.Join(dir, "size.md"))
		}, "size.md is a symbolic link"},
		{"linked folder", "skills/SKILL.md", func(t *testing.T, dir string) {
			symlinkOrSkip(t, outside, filepath.Join(dir, "skills"))
		}, "skills is a symbolic link"},
		{"a folder, not a file", "skills", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "skills", "x.md"), skill)
		}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.make(t, dir)
			path := filepath.Join(dir, "harness.json")
			writeTestFile(t, path, `{"name": "links",
  "layout": {"style": "markdown", "sections": [{"kind": "skills"}]},
  "skills": [{"file": "`+c.file+`"}],
  "pipeline": {"reply_chars": {"value": 100, "min": 50, "max": 150},
    "tool_rounds": {"value": 3, "min": 1, "max": 5}, "retries": {"value": 1, "min": 0, "max": 2}}}`)
			h, err := Load(path)
			if c.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				if h.Skills[0].Instructions != "Ask for height and weight." {
					t.Fatalf("skill = %+v", h.Skills[0])
				}
				return
			}
			if err == nil {
				t.Fatalf("Load followed the link: skill %+v", h.Skills[0])
			}
			for _, want := range []string{path, "skills[0].file", c.says} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error quotes the linked file: %q", err)
			}
		})
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlinkOrSkip(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symbolic links are not available here: %v", err)
	}
}
