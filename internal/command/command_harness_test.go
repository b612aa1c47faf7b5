package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

const (
	demoHarnessFile    = "../../examples/harness/demo.json"
	minimalHarnessFile = "../../harness/testdata/minimal.json"
	brokenHarnessFile  = "../../harness/testdata/broken/02-unknown-field.json"
)

func TestHarness(t *testing.T) {
	conv := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(conv, []byte(`{"messages": [{"role": "user", "content": "口红多少钱"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	badConv := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badConv, []byte(`{"messagez": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		wantOut   []string // all of them in stdout
		wantErr   string   // part of the error; "" for success
		wantUsage bool
	}{
		{"validate ok", []string{"validate", demoHarnessFile, minimalHarnessFile}, []string{demoHarnessFile + `: ok — "`, minimalHarnessFile + `: ok — "minimal" version `, "(1 skills, 1 tools, 0 hooks)"}, "", false},
		{"validate broken", []string{"validate", minimalHarnessFile, brokenHarnessFile}, []string{"did you mean"}, "1 of 2 harness files are invalid", false},
		{"validate nothing", []string{"validate"}, nil, "name at least one harness file", true},
		{"render", []string{"render", minimalHarnessFile}, []string{"<|im_start|>system\n", "You are a live-stream host.", "<|im_start|>user\nHow much is the serum today?<|im_end|>\n"}, "", false},
		{"render conversation as JSON", []string{"render", "--json", "--conversation", conv, minimalHarnessFile}, []string{`"content": "口红多少钱"`}, "", false},
		{"render unknown conversation field", []string{"render", "--conversation", badConv, minimalHarnessFile}, nil, badConv + `: json: unknown field "messagez"`, false},
		{"render two files", []string{"render", minimalHarnessFile, demoHarnessFile}, nil, "render: name exactly one harness file", true},
		{"diff", []string{"diff", minimalHarnessFile, demoHarnessFile}, []string{minimalHarnessFile + " (", ") → " + demoHarnessFile + " ("}, "", false},
		{"diff as JSON", []string{"diff", "--json", minimalHarnessFile, minimalHarnessFile}, []string{`"changes": []`}, "", false},
		{"diff one file", []string{"diff", minimalHarnessFile}, nil, "diff: name two harness files, OLD and NEW", true},
		{"no subcommand", nil, nil, "missing subcommand", true},
		{"unknown subcommand", []string{"lint"}, nil, `unknown subcommand "lint"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Harness(context.Background(), tt.args, strings.NewReader(""), &out, &errOut)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v\n%s", err, errOut.String())
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || IsUsage(err) != tt.wantUsage) {
				t.Fatalf("err = %v, want one naming %q (usage error: %v)", err, tt.wantErr, tt.wantUsage)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	var errOut bytes.Buffer
	if err := Harness(context.Background(), []string{"render", "-h"}, nil, &bytes.Buffer{}, &errOut); !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut.String(), "usage: livehat harness render") {
		t.Errorf("render -h: %v\n%s", err, errOut.String())
	}
}

func runAugment(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Harness(context.Background(), append([]string{"augment"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func decodeAugmentOutput(t *testing.T, out string) (*harness.Harness, augmentOutput) {
	t.Helper()
	var got augmentOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	h, err := harness.Parse(got.Harness, harness.FormatJSON)
	if err != nil {
		t.Fatalf("printed variant does not load: %v", err)
	}
	return h, got
}

func TestAugmentEveryFamilyOnDemo(t *testing.T) {
	for _, f := range hsa.Families() {
		t.Run(f.Name, func(t *testing.T) {
			out, err := runAugment(t, "", demoHarnessFile, "--family", f.Name, "--seed", "7")
			if err != nil {
				t.Fatal(err)
			}
			_, got := decodeAugmentOutput(t, out)
			if len(got.Mapping.Steps) == 0 || len(got.Record.Transforms) != 1 || got.Record.Transforms[0].Family != f.Name {
				t.Errorf("mapping %+v, record %+v", got.Mapping, got.Record)
			}
			again, _ := runAugment(t, "", "--seed", "7", "--family", f.Name, demoHarnessFile)
			if again != out {
				t.Error("the same seed printed a different variant")
			}
		})
	}
}

// TestAugmentPoolAndGold draws two held-out families for the demo harness
// and checks that every printed gold call is valid against the variant's
// own tool schemas.
func TestAugmentPoolAndGold(t *testing.T) {
	gold := []hsa.Call{
		{Name: "product_lookup", Arguments: map[string]any{"query": "口红"}},
		{Name: "coupon_check", Arguments: map[string]any{"item_id": "p-lipstick", "quantity": 2}},
		{Name: "shipping_policy", Arguments: map[string]any{"item_id": "p-cream", "region": "overseas"}},
	}
	goldJSON, _ := json.Marshal(gold)
	goldPath := filepath.Join(t.TempDir(), "gold.json")
	if err := os.WriteFile(goldPath, goldJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runAugment(t, "", demoHarnessFile, "--pool", "heldout", "--n", "2", "--seed", "11", "--gold", goldPath)
	if err != nil {
		t.Fatal(err)
	}
	variant, got := decodeAugmentOutput(t, out)
	if len(got.Record.Transforms) != 2 {
		t.Fatalf("want 2 transforms, got %+v", got.Record.Transforms)
	}
	for _, tr := range got.Record.Transforms {
		if tr.Pool != hsa.PoolHeldOut {
			t.Errorf("transform %s is from pool %s", tr.Family, tr.Pool)
		}
	}
	if len(got.Gold) != len(gold) {
		t.Fatalf("printed %d mapped gold calls, want %d", len(got.Gold), len(gold))
	}
	tools := map[string]harness.Tool{}
	for _, tool := range variant.AllTools() {
		tools[tool.Name] = tool
	}
	for i, c := range got.Gold {
		tool, ok := tools[c.Name]
		if !ok {
			t.Errorf("gold call %d names %q, which the variant lacks", i, c.Name)
			continue
		}
		sch, err := harness.CompileSchema(tool.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(c.Arguments)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("gold call %d %s %s does not fit the variant: %v", i, c.Name, raw, err)
		}
	}
}

func TestAugmentErrors(t *testing.T) {
	goldNoName := filepath.Join(t.TempDir(), "gold.json")
	if err := os.WriteFile(goldNoName, []byte(`[{"arguments": {}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		stdin     string
		args      []string
		want      string
		wantUsage bool
	}{
		{"unknown family lists the families", "", []string{demoHarnessFile, "--family", "no-such-family"}, "tool-rename", true},
		{"no family or pool", "", []string{demoHarnessFile}, "give --family NAME", true},
		{"no file", "", []string{"--family", "tool-rename"}, "name exactly one harness file (got 0)", true},
		{"family outside pool", "", []string{demoHarnessFile, "--family", "tool-rename", "--pool", "heldout"}, "family tool-rename is in pool", true},
		{"unknown pool", "", []string{demoHarnessFile, "--pool", "other"}, `unknown pool "other"`, true},
		{"broken harness on stdin", "{", []string{"-", "--family", "tool-rename"}, "", false},
		{"gold call without a name", "", []string{demoHarnessFile, "--family", "tool-rename", "--gold", goldNoName}, "call 0 has no name", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runAugment(t, tt.stdin, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || IsUsage(err) != tt.wantUsage {
				t.Errorf("err = %v, want one naming %q (usage error: %v)", err, tt.want, tt.wantUsage)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Harness(ctx, []string{"augment", demoHarnessFile, "--family", "tool-rename"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

// TestAugmentStdin: FILE "-" reads the harness from standard input.
func TestAugmentStdin(t *testing.T) {
	data, err := os.ReadFile(minimalHarnessFile)
	if err != nil {
		t.Fatal(err)
	}
	fromStdin, err := runAugment(t, string(data), "-", "--family", "tool-rename", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := runAugment(t, "", minimalHarnessFile, "--family", "tool-rename", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	if fromStdin != fromFile {
		t.Errorf("stdin and file give different variants:\n%s\n%s", fromStdin, fromFile)
	}
	decodeAugmentOutput(t, fromStdin)
}

func TestAugmentList(t *testing.T) {
	out, err := runAugment(t, "", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range hsa.Families() {
		if !strings.Contains(out, f.Name) {
			t.Errorf("--list misses %s", f.Name)
		}
	}
	out, err = runAugment(t, "", "--list", "--pool", "heldout")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "skill-reword") || !strings.Contains(out, "tool-wrap-flatten") {
		t.Errorf("--list --pool heldout:\n%s", out)
	}
}
