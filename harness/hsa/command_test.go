package hsa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

const demoHarness = "../../examples/harness/demo.json"

func runAugment(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := AugmentMain(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func decodeOutput(t *testing.T, out string) (*harness.Harness, augmentOutput) {
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

func TestAugmentMainEveryFamilyOnDemo(t *testing.T) {
	if _, err := os.Stat(demoHarness); err != nil {
		t.Skipf("no demo harness: %v", err)
	}
	for _, f := range Families() {
		out, err := runAugment(t, "", demoHarness, "--family", f.Name, "--seed", "7")
		if err != nil {
			t.Errorf("family %s: %v", f.Name, err)
			continue
		}
		_, got := decodeOutput(t, out)
		if len(got.Mapping.Steps) == 0 || len(got.Record.Transforms) != 1 || got.Record.Transforms[0].Family != f.Name {
			t.Errorf("family %s: mapping %+v, record %+v", f.Name, got.Mapping, got.Record)
		}
		again, _ := runAugment(t, "", "--seed", "7", "--family", f.Name, demoHarness)
		if again != out {
			t.Errorf("family %s: same seed printed a different variant", f.Name)
		}
	}
}

func TestAugmentMainPoolAndGold(t *testing.T) {
	dir := t.TempDir()
	h := genHarness(t, newRand(3))
	data, err := harness.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	gold := genCalls(t, newRand(4), h)
	goldJSON, _ := json.Marshal(gold)
	goldPath := filepath.Join(dir, "gold.json")
	if err := os.WriteFile(goldPath, goldJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runAugment(t, string(data), "-", "--pool", "heldout", "--n", "2", "--seed", "11", "--gold", goldPath)
	if err != nil {
		t.Fatal(err)
	}
	nh, got := decodeOutput(t, out)
	if len(got.Record.Transforms) != 2 {
		t.Fatalf("want 2 transforms, got %+v", got.Record.Transforms)
	}
	for _, tr := range got.Record.Transforms {
		if tr.Pool != PoolHeldOut {
			t.Errorf("transform %s is from pool %s", tr.Family, tr.Pool)
		}
	}
	sc, err := schemas(nh)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Gold) != len(gold) {
		t.Fatalf("printed %d mapped gold calls, want %d", len(got.Gold), len(gold))
	}
	for i, c := range got.Gold {
		if err := checkCall(sc, c); err != nil {
			t.Errorf("printed gold call %d: %v", i, err)
		}
	}
}

func TestAugmentMainErrors(t *testing.T) {
	var usage *harness.UsageError
	_, err := runAugment(t, "", demoHarness, "--family", "no-such-family")
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "tool-rename") {
		t.Errorf("unknown family: want a usage error listing the families, got %v", err)
	}
	if _, err := runAugment(t, "", demoHarness); !errors.As(err, &usage) {
		t.Errorf("no family or pool: want a usage error, got %v", err)
	}
	if _, err := runAugment(t, "", "--family", "tool-rename"); !errors.As(err, &usage) {
		t.Errorf("no file: want a usage error, got %v", err)
	}
	if _, err := runAugment(t, "", demoHarness, "--family", "tool-rename", "--pool", "heldout"); !errors.As(err, &usage) {
		t.Errorf("family outside pool: want a usage error, got %v", err)
	}
	if _, err := runAugment(t, "", demoHarness, "--pool", "other"); !errors.As(err, &usage) {
		t.Errorf("unknown pool: want a usage error, got %v", err)
	}
	if _, err := runAugment(t, "{", "-", "--family", "tool-rename"); err == nil {
		t.Error("broken harness on stdin: want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := AugmentMain(ctx, []string{demoHarness, "--family", "tool-rename"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestAugmentMainList(t *testing.T) {
	out, err := runAugment(t, "", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Families() {
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
