package eval

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

var update = flag.Bool("update", false, "rewrite the committed suite files from their seeds")

func base(t testing.TB) *harness.Harness {
	t.Helper()
	h, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSuitesUpToDate regenerates every suite from its seeds and compares
// it with the committed file: generators are deterministic, and a change
// to them (or to the demo harness) shows up here instead of silently
// changing what models are scored on. Run with -update to rewrite.
func TestSuitesUpToDate(t *testing.T) {
	for _, name := range []string{SuiteLSQA, SuiteHVQA} {
		s, err := Generate(name, base(t))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.WriteJSONL(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("suites", name+".jsonl")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, buf.Bytes()) {
			t.Errorf("%s: the committed suite differs from its generator; run go test ./trainer/eval -run TestSuitesUpToDate -update if the change is intended", path)
		}
		back, err := ReadSuite(name, bytes.NewReader(buf.Bytes()))
		if err != nil || len(back.Items) != len(s.Items) {
			t.Errorf("%s does not read back: %v", name, err)
		}
	}
}

func TestReadSuiteRejectsBadFiles(t *testing.T) {
	for _, bad := range []string{
		"",
		"{not json}\n",
		`{"id":"a","question":{"text":"x"},"bogus":1}` + "\n",
		`{"id":"","question":{"text":"x"}}` + "\n",
		`{"id":"a","question":{"text":"x"}}` + "\n" + `{"id":"a","question":{"text":"y"}}` + "\n",
	} {
		if _, err := ReadSuite("t", strings.NewReader(bad)); err == nil {
			t.Errorf("ReadSuite(%q) succeeded", bad)
		}
	}
}

// TestExpertThroughTheRuntime runs a slice of both suites with the expert
// policy through the real runtime and the example WASM hooks: the expert
// must score at least 99, so the suites, the runtime and the hooks agree
// on what a correct answer is.
func TestExpertThroughTheRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	sb, err := runtime.OpenSandbox(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	for _, p := range []string{"moderation", "compliance", "speech"} {
		if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "..", "examples", "plugins", p)); err != nil {
			t.Fatal(err)
		}
	}
	r := &Runner{Base: base(t), Sandbox: sb, Model: NewExpert, Parallel: 2}
	for _, name := range []string{SuiteLSQA, SuiteHVQA} {
		s, err := OpenSuite(name)
		if err != nil {
			t.Fatal(err)
		}
		s.Items = s.Items[:60]
		rep, err := r.Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Score < 99 || rep.Errors > 0 {
			for _, w := range rep.Worst {
				t.Logf("%s %s %q → %q: %v", w.ID, w.Category, w.Reply, w.Outcome, w.Grade.Deductions)
			}
			t.Errorf("%s: expert scored %.1f with %d errors, want ≥ 99", name, rep.Score, rep.Errors)
		}
	}
}
