package command

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/trainer/livebench"
)

func TestBenchUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no benchmark", nil, "missing benchmark"},
		{"unknown benchmark", []string{"disk"}, `unknown benchmark "disk"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, Bench, "", tt.args...)
			if !IsUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a usage error naming %q", err, tt.want)
			}
		})
	}
}

func TestHasFlag(t *testing.T) {
	args := []string{"-random=tiny", "--batch", "1,8", "--", "--checkpoint"}
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"random", true},      // -name=value
		{"batch", true},       // --name value
		{"checkpoint", false}, // after --
		{"rand", false},       // a prefix of a set flag
		{"gen", false},        // absent
	} {
		if got := hasFlag(args, tt.name); got != tt.want {
			t.Errorf("hasFlag(%q, %q) = %v, want %v", args, tt.name, got, tt.want)
		}
	}
}

func TestBenchModel(t *testing.T) {
	args := []string{"model", "--random", "tiny", "--dtype", "q8", "--batch", "1,3", "--prompt", "8", "--gen", "2", "--prefix", "20", "--question", "4", "--threads", "1", "--repeat", "1"}
	out, err := runCommand(t, Bench, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model: random tiny, q8 weights, ", "; 1 threads, GOMAXPROCS ", "best of 1 runs per phase\n",
		"1      prefill             8 ", "3      decode              6 ", "time to first token, 4-token question after a 20-token prefix: uncached "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	saved := filepath.Join(t.TempDir(), "random")
	out, err = runCommand(t, Bench, "", append(slices.Clone(args), "--save", saved)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Load(saved, model.Options{}); err != nil || !strings.HasPrefix(out, "saved the random tiny weights to "+saved+"\n") {
		t.Errorf("--save: %v\n%s", err, out)
	}

	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	if _, err := runCommand(t, Bench, "", append(slices.Clone(args), "--cpuprofile", profile)...); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(profile); err != nil || st.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}

	// A checkpoint without MTP heads gets random ones for --speculative.
	out, err = runCommand(t, Bench, "", "model", "--checkpoint", saved, "--batch", "2", "--prompt", "4", "--gen", "3", "--prefix", "0", "--repeat", "1", "--speculative", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model: " + saved + ", bf16 weights", "the model has 0 MTP heads: 2 random ones replace them",
		"2      greedy              6 ", "2      spec-2              6 ", "speculative, 2 drafts per step among ", "output identical to plain greedy"} {
		if !strings.Contains(out, want) {
			t.Errorf("--speculative output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "time to first token") {
		t.Errorf("--prefix 0 still ran the time-to-first-token test:\n%s", out)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"random and checkpoint", []string{"--random", "tiny", "--checkpoint", saved}, "either --random or --checkpoint"},
		{"unknown preset", []string{"--random", "nope"}, "nope"},
		{"unknown dtype", []string{"--random", "tiny", "--dtype", "f8"}, "f8"},
		{"zero batch", []string{"--random", "tiny", "--batch", "0"}, `bad batch size "0"`},
		{"past the context", []string{"--random", "tiny", "--prefix", "600"}, "exceed the model's context"},
		{"stray argument", []string{"--random", "tiny", "extra"}, "unexpected arguments"},
		{"save without random", []string{"--checkpoint", saved, "--save", t.TempDir()}, "use it with --random"},
		{"too many drafts", []string{"--random", "tiny", "--speculative", "99"}, "--speculative 99"},
		{"draft vocabulary too large", []string{"--random", "tiny", "--draft-vocab", "1000000"}, "exceeds the vocabulary"},
		{"profile in a missing folder", []string{"--random", "tiny", "--prefix", "0", "--cpuprofile", filepath.Join(saved, "none", "cpu.pprof")}, "--cpuprofile"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, Bench, "", append([]string{"model"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestParsePromotes(t *testing.T) {
	if p, err := parsePromotes("2s, -1s"); err != nil || len(p) != 2 || p[0] != 2*time.Second || p[1] >= 0 {
		t.Errorf("parsePromotes(2s, -1s) = %v, %v", p, err)
	}
	for _, bad := range []string{"", "0", "2", "2s,,3s", "fast"} {
		if _, err := parsePromotes(bad); !IsUsage(err) {
			t.Errorf("parsePromotes(%q): %v, want a usage error", bad, err)
		}
	}
}

func TestParseBatches(t *testing.T) {
	if b, err := parseBatches("1, 4"); err != nil || len(b) != 2 || b[1] != 4 {
		t.Errorf("parseBatches(1, 4) = %v, %v", b, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-2"} {
		if _, err := parseBatches(bad); !IsUsage(err) {
			t.Errorf("parseBatches(%q): %v, want a usage error", bad, err)
		}
	}
}

// TestBenchLive runs bench live from the repository root, as its users
// do, on a random tiny model for a moment, and checks the JSON report.
func TestBenchLive(t *testing.T) {
	t.Chdir("../..")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"bad batch", []string{"--batch", "0"}, "--batch"},
		{"bad promote-after", []string{"--promote-after", "soon"}, "--promote-after"},
		{"negative merge window", []string{"--merge-window", "-1s"}, "--merge-window"},
		{"unknown random size", []string{"--model", "random:huge"}, "random:huge"},
		{"no such model", []string{"--model", "no/such/folder"}, `--model "no/such/folder"`},
		{"server without a model name", []string{"--model", "http://127.0.0.1:1"}, "--remote-model"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, Bench, "", append([]string{"live"}, tt.args...)...)
			if !IsUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a usage error naming %q", err, tt.want)
			}
		})
	}
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	out, err := runCommand(t, Bench, "", "live", "--model", "random:tiny", "--streams", "2", "--rate", "2", "--duration", "2s",
		"--max-tokens", "4", "--batch", "1,2", "--merge-window", "0", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var reps []livebench.Report
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("output is not the JSON reports: %v\n%s", err, out)
	}
	if len(reps) != 2 || reps[0].Batch != 1 || reps[1].Batch != 2 || reps[0].Sent == 0 {
		t.Errorf("reports %+v, want one per --batch size, with messages sent", reps)
	}
}

// TestBenchExperiment runs the bench small and checks its table, and that
// bad flags are usage errors.
func TestBenchExperiment(t *testing.T) {
	args := []string{"experiment", "--viewers", "40", "--rooms", "2", "--plugins", filepath.Join("..", "..", "examples", "plugins"),
		"--plugin-cache", testfixture.PluginCacheDir()}
	for _, bad := range [][]string{{"--arms", "demo,gpt5"}, {"--arms", "demo"}, {"--viewers", "1"}, {"stray"}, {"--analysis", "bayes"}} {
		if err := Bench(context.Background(), append(slices.Clone(args), bad...), nil, io.Discard, io.Discard); !IsUsage(err) {
			t.Errorf("bench experiment %v: %v, want a usage error", bad, err)
		}
	}
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	var out, errOut bytes.Buffer
	if err := Bench(context.Background(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	for _, want := range []string{"demo vs no-coupon", "gmv_per_viewer", "conversion_rate", "latency_p95_s", "sample ratio:", "verdict:", "(primary)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var js bytes.Buffer
	if err := Bench(context.Background(), append(args, "--json", "--arms", "demo,demo", "--viewers", "40"), nil, &js, &errOut); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Report experiment.Report `json:"report"`
	}
	if err := json.Unmarshal(js.Bytes(), &res); err != nil || len(res.Report.Arms) != 2 || res.Report.Arms[0].Arm != "demo-a" {
		t.Errorf("JSON output: %v\n%s", err, js.String())
	}
}
