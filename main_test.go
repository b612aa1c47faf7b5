package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

func TestRunExitCodes(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		output string
	}{
		{[]string{"help"}, 0, "Commands:"},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"harness"}, 2, "missing subcommand"},
		{[]string{"harness", "validate"}, 2, "name at least one harness file"},
		{[]string{"harness", "validate", "examples/harness/demo.json"}, 0, "ok"},
		{[]string{"harness", "validate", "harness/testdata/broken/02-unknown-field.json"}, 1, "did you mean"},
		{[]string{"plugin", "frobnicate"}, 2, `plugin: unknown command "frobnicate"`},
		{[]string{"eval", "--suite", "nonsense"}, 2, `unknown suite "nonsense"`},
		{[]string{"serve", "extra-arg"}, 2, "serve takes no arguments"},
		{[]string{"serve", "--log-level", "loud"}, 2, "--log-level"},
		{[]string{"serve", "--model", "no/such/checkpoint", "--data", "no/such/data"}, 1, "--model no/such/checkpoint"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), c.args, strings.NewReader(""), &out, &errOut)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr: %s)", c.args, code, c.code, errOut.String())
		}
		if all := out.String() + errOut.String(); !strings.Contains(all, c.output) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.output, all)
		}
	}
}

// TestAugmentEveryFamily runs `livehat harness augment` for every HSA
// family on the demo harness, as an operator would from the shell.
func TestAugmentEveryFamily(t *testing.T) {
	for _, f := range hsa.Families() {
		var out, errOut bytes.Buffer
		args := []string{"harness", "augment", "examples/harness/demo.json", "--family", f.Name, "--seed", "11"}
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Errorf("%s: exit %d: %s", f.Name, code, errOut.String())
			continue
		}
		var doc struct {
			Harness json.RawMessage `json:"harness"`
			Mapping json.RawMessage `json:"mapping"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Harness) == 0 {
			t.Errorf("%s: output is not {harness, mapping}: %v", f.Name, err)
			continue
		}
		if _, err := harness.Parse(doc.Harness, harness.FormatJSON); err != nil {
			t.Errorf("%s: variant does not load: %v", f.Name, err)
		}
	}
}

// TestPluginExitStatus: a guest that ends with WASI proc_exit(3) makes
// `livehat plugin test` exit with 3, as Extism's CLI hands it on.
func TestPluginExitStatus(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("plugins", "testdata", "edge.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{"abi": 1, "name": "exits", "version": "1.0.0", "description": "ends with proc_exit(3)",
		"wasm": {"file": "edge.wasm"}, "tools": [{"name": "exit3", "description": "exits", "parameters": {"type": "object"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "edge.wasm"), wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"plugin", "test", dir, "--call", "tool:exit3", "--input", "{}"}, strings.NewReader(""), &out, &errOut)
	if code != 3 || !strings.Contains(errOut.String(), "code 3") {
		t.Fatalf("exit %d, want 3 (stderr: %s)", code, errOut.String())
	}
}
