package command

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/safetensors"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/opd"
	"github.com/livehat/livehat/trainer/sft"
)

// writeFile writes data to name in a fresh folder and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrainUsageErrors(t *testing.T) {
	out := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"--bogus"}},
		{"bad value", []string{"--out", out, "--steps", "x"}},
		{"no out", []string{"--steps", "3"}},
		{"extra argument", []string{"--out", out, "extra"}},
		{"unknown stage", []string{"-stage", "dpo", "--out", out}},
		{"rl without init", []string{"--stage", "rl", "--out", out}},
		{"opd without teacher", []string{"--stage=opd", "--out", out, "--init", "x"}},
		{"opd unknown flag", []string{"--stage", "opd", "--bogus"}},
		{"mtp resumed", []string{"--stage", "mtp", "--out", out, "--resume"}},
		{"unknown recipe", []string{"--recipe", "nope", "--out", out}},
		{"recipe without out", []string{"--recipe", "smoke"}},
		{"recipe unknown row", []string{"--recipe", "smoke", "--out", out, "--until", "later"}},
		{"recipe zero scale", []string{"--recipe", "smoke", "--out", out, "--steps-scale", "0"}},
		{"recipe unknown flag", []string{"--recipe", "smoke", "--out", out, "--bogus"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Train(context.Background(), tt.args, nil, io.Discard, io.Discard)
			if !IsUsage(err) {
				t.Errorf("Train(%q) = %v, want a usage error", tt.args, err)
			}
		})
	}
	entries, _ := os.ReadDir(out)
	if len(entries) > 0 {
		t.Errorf("a refused command line wrote %d files to --out", len(entries))
	}
}

func TestTrainHelp(t *testing.T) {
	var stderr bytes.Buffer
	if err := Train(context.Background(), []string{"-h"}, nil, io.Discard, &stderr); err != flag.ErrHelp {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(stderr.String(), "Usage: livehat train") || !strings.Contains(stderr.String(), "-augment") {
		t.Errorf("help:\n%s", stderr.String())
	}
}

// TestParseSFT: a config file sets the run and flags on the command line
// override it; a resumed run keeps only what may change.
func TestParseSFT(t *testing.T) {
	conf := writeFile(t, "run.json", `{"steps": 5, "vocab_size": 1000, "data": {"rooms": 2}}`)
	run, err := parseSFT([]string{"--config", conf, "--steps", "1", "--out", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if run.cfg.Steps != 1 || run.cfg.VocabSize != 1000 || run.cfg.Data.Rooms != 2 || run.out != "x" {
		t.Errorf("steps %d, vocabulary %d, rooms %d, out %q; want 1 (flag), 1000 and 2 (file), x", run.cfg.Steps, run.cfg.VocabSize, run.cfg.Data.Rooms, run.out)
	}
	bad := writeFile(t, "run.json", `{"stepz": 3}`)
	if _, err := parseSFT([]string{"--config", bad, "--out", "x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "stepz") || IsUsage(err) {
		t.Errorf("an unknown config field gave %v, want an error naming it", err)
	}
	for _, tt := range []struct {
		name  string
		args  []string
		check func(sftRun) bool
	}{
		{"resume keeps steps and stop-at", []string{"--out", "x", "--resume", "--steps", "9", "--stop-at", "4", "--rooms", "7"},
			func(r sftRun) bool { return r.resume && r.cfg.Steps == 9 && r.cfg.StopAt == 4 && r.cfg.Data.Rooms == 0 }},
		{"resume without steps", []string{"--out", "x", "--resume"},
			func(r sftRun) bool { return r.cfg.Steps == 0 }},
		{"init replaces the model shape", []string{"--out", "x", "--init", "ckpt"},
			func(r sftRun) bool { return r.cfg.Init == "ckpt" && r.cfg.Model == "" }},
		{"lora", []string{"--out", "x", "--lora-rank", "4", "--lora-targets", "q_proj,v_proj"},
			func(r sftRun) bool {
				return r.cfg.LoRA != nil && r.cfg.LoRA.Rank == 4 && slices.Equal(r.cfg.LoRA.Targets, []string{"q_proj", "v_proj"})
			}},
		{"dump needs no out", []string{"--dump-data", "3", "--augment=false"},
			func(r sftRun) bool { return r.dump == 3 && !r.cfg.Data.Augment }},
		{"flags after the harness", []string{"--harness", "h.json", "--out", "x"},
			func(r sftRun) bool { return r.harness == "h.json" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, err := parseSFT(tt.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(run) {
				t.Errorf("%+v", run)
			}
		})
	}
}

// TestTrainDumpData runs the SFT stage's --dump-data: trajectories on
// standard output, a summary on standard error, no run folder.
func TestTrainDumpData(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"--dump-data", "2", "--rooms", "2", "--questions", "4", "--general", "0", "--retrieval", "0"}
	if err := Train(context.Background(), args, nil, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var tr sft.Trajectory
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil || len(tr.Messages) == 0 {
			t.Fatalf("line %d: %v %.200s", lines+1, err, sc.Text())
		}
		lines++
	}
	if lines != 2 || stderr.Len() == 0 {
		t.Errorf("%d trajectories, summary %q; want 2 and a summary", lines, stderr.String())
	}
}

// TestTrainDispatchesStages: the stage comes from --stage, from the
// config file's "stage", or from the run folder's run.json on resume.
func TestTrainDispatchesStages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	conf := filepath.Join(dir, "opd.json")
	if err := os.WriteFile(conf, []byte(`{"stage": "opd", "steps": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Train(ctx, []string{"--config", conf, "--out", filepath.Join(dir, "a")}, nil, io.Discard, io.Discard)
	if !IsUsage(err) || !strings.Contains(err.Error(), "--teacher") {
		t.Errorf("an opd config went to %v, want the opd stage's usage error", err)
	}
	if err := os.WriteFile(conf, []byte(`{"stage": "rl", "stepz": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Train(ctx, []string{"--config=" + conf, "--out", filepath.Join(dir, "b")}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "stepz") {
		t.Errorf("an rl config with an unknown field gave %v", err)
	}
	run := filepath.Join(dir, "rlrun")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"stage": "rl"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Train(ctx, []string{"--resume", "--out", run}, nil, io.Discard, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "rl:") {
		t.Errorf("resuming an rl run folder gave %v, want the rl stage's error", err)
	}
	missing := filepath.Join(dir, "missing.jsonl")
	err = Train(ctx, []string{"--stage", "mtp", "--init", dir, "--prompts", missing, "--out", filepath.Join(dir, "m")}, nil, io.Discard, io.Discard)
	if err == nil || IsUsage(err) || !strings.HasPrefix(err.Error(), "mtp:") {
		t.Errorf("an mtp run gave %v, want the mtp stage's error", err)
	}
}

func TestParseOPD(t *testing.T) {
	conf := writeFile(t, "run.json", `{"stage": "opd", "init": "s", "teacher": "t", "samples": 1, "steps": 3}`)
	cfg, run, err := parseOPD([]string{"--config", conf, "--steps", "1", "--out", "r", "--lora-rank", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Steps != 1 || cfg.Samples != 1 || cfg.Teacher != "t" || cfg.Prompts != opd.DefaultConfig().Prompts || run.out != "r" || cfg.LoRA == nil || cfg.LoRA.Rank != 2 {
		t.Errorf("config %+v, run %+v", cfg, run)
	}
	cfg, run, err = parseOPD([]string{"--resume", "--out", "r", "--steps", "2"}, io.Discard)
	if err != nil || !run.resume || cfg.Steps != 2 || cfg.Init != "" {
		t.Errorf("resume: %+v %+v %v; want only the steps", cfg, run, err)
	}
	for _, args := range [][]string{{"--out", "r"}, {"--init", "a", "--teacher", "b"}, {"--stage", "rl", "--out", "r", "--init", "a", "--teacher", "b"}, {"extra"}} {
		if _, _, err := parseOPD(args, io.Discard); !IsUsage(err) {
			t.Errorf("parseOPD(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestParseRL(t *testing.T) {
	conf := writeFile(t, "run.json", `{"stage": "rl", "init": "p", "group": 3, "steps": 3}`)
	cfg, run, harnessPath, err := parseRL([]string{"--config", conf, "--harness", "h.json", "--steps", "1", "--out", "r", "--variety", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Steps != 1 || cfg.Group != 3 || cfg.Init != "p" || cfg.Tasks.Room.Variety != 2 || harnessPath != "h.json" || run.out != "r" {
		t.Errorf("config %+v, harness %q, run %+v", cfg, harnessPath, run)
	}
	cfg, run, _, err = parseRL([]string{"--resume", "--out", "r"}, io.Discard)
	if err != nil || !run.resume || cfg.Steps != 0 || cfg.Init != "" {
		t.Errorf("resume: %+v %+v %v", cfg, run, err)
	}
	for _, args := range [][]string{{"--out", "r"}, {"--init", "x"}, {"--stage", "opd", "--init", "x", "--out", "r"}} {
		if _, _, _, err := parseRL(args, io.Discard); !IsUsage(err) {
			t.Errorf("parseRL(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestParseMTP(t *testing.T) {
	cfg, _, err := parseMTP([]string{"--init", "c", "--prompts", "p.jsonl", "--out", "r", "--heads", "3", "--draft-vocab", "500"}, io.Discard)
	if err != nil || cfg.Heads != 3 || cfg.DraftVocab != 500 || cfg.Init != "c" {
		t.Fatalf("%+v %v", cfg, err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no init", []string{"--out", "r"}, "--init CHECKPOINT and --prompts"},
		{"resume", []string{"--out", "r", "--resume"}, "--resume"},
		{"no heads", []string{"--init", "c", "--prompts", "p", "--out", "r", "--heads", "0"}, "--heads 0"},
		{"negative draft vocabulary", []string{"--init", "c", "--prompts", "p", "--out", "r", "--draft-vocab", "-1"}, "--draft-vocab -1"},
		{"no rollouts", []string{"--init", "c", "--prompts", "p", "--out", "r", "--rollouts", "0"}, "--rollouts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := parseMTP(tt.args, io.Discard); !IsUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want a usage error naming %q", err, tt.want)
			}
		})
	}
}

func TestOptimizationFlags(t *testing.T) {
	o := runfolder.Optimization{Steps: 4, LR: 1e-3}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	finish := optimizationFlags(&o, fs)
	if err := fs.Parse([]string{"--steps", "9", "--lora-rank", "4", "--lora-targets", "q_proj"}); err != nil {
		t.Fatal(err)
	}
	finish()
	if o.Steps != 9 || o.LR != 1e-3 || o.LoRA == nil || o.LoRA.Rank != 4 || !slices.Equal(o.LoRA.Targets, []string{"q_proj"}) {
		t.Errorf("flags: %+v %+v", o, o.LoRA)
	}
	if got := stepsFlag(fs); got != 9 {
		t.Errorf("stepsFlag = %d, want 9", got)
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"-stage", "rl", "--out=dir", "--config", "c.json", "--", "--recipe", "x"}
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"stage", "rl", true},
		{"out", "dir", true},
		{"config", "c.json", true},
		{"recipe", "", false},
		{"conf", "", false},
	} {
		if got, ok := flagValue(args, tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("flagValue(%s) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTrainRecipeRunsEveryStageAndResumes runs the smoke recipe end to
// end (tokenizer, base, two SFT phases, OPD with the base as teacher, RL,
// two continuations of the second SFT phase, the first stopped early, RL
// after them, and the average of the last two), checks that the exported
// model is that average in bfloat16 with the recipe's tokenizer, that
// running the command again trains nothing, and that --until sft
// --augment=false trains the
// Fixed-Harness SFT row in its own folders and stops there.
func TestTrainRecipeRunsEveryStageAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains five small runs; skipped with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"--recipe", "smoke", "--out", dir, "--threads", "1"}
	if err := Train(ctx, args, nil, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	timesFile := filepath.Join(dir, "recipe-times.jsonl")
	times, err := os.ReadFile(timesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"tokenizer", "base", "sft1", "sft2", "opd", "rl", "sft3", "sft4", "rl4", "avg"} {
		if !strings.Contains(string(times), `"stage":"`+stage+`"`) {
			t.Errorf("no time logged for %s:\n%s", stage, times)
		}
	}
	for _, st := range sft.Recipes()["smoke"].Stages {
		if st.Stage == "average" {
			continue
		}
		_, last := st.LastStep(1)
		if s, err := runfolder.ReadState(filepath.Join(dir, st.Name)); err != nil || s.Step < last {
			t.Errorf("stage %s at %+v (%v), want its %d steps", st.Name, s, err, last)
		}
	}
	// sft3 starts from sft2 (not from rl, the stage before it) and stops
	// at step 2 of a 4-step schedule.
	var sft3 sft.TrainConfig
	if err := runfolder.ReadJSON(filepath.Join(dir, "sft3", runfolder.ConfigFile), &sft3); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "sft2", runfolder.CheckpointDir); sft3.Init != want || sft3.Steps != 4 || sft3.StopAt != 2 {
		t.Errorf("sft3 run: init %s, steps %d, stop at %d; want %s, 4, 2", sft3.Init, sft3.Steps, sft3.StopAt, want)
	}
	eng, err := engine.Load(filepath.Join(dir, "model"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	exported, err := safetensors.Open(filepath.Join(dir, "model", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer exported.Close()
	// The smoke recipe ends, as the bundled one does, with the average of
	// its last two stages.
	trained, err := safetensors.Open(filepath.Join(dir, "rl4", runfolder.CheckpointDir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer trained.Close()
	before, err := safetensors.Open(filepath.Join(dir, "sft4", runfolder.CheckpointDir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	for _, info := range trained.Tensors() {
		got, ok := exported.Tensor(info.Name)
		if !ok || got.DType != safetensors.BF16 {
			t.Fatalf("exported %s: %+v, want a BF16 tensor", info.Name, got)
		}
		_, want, _ := trained.ReadFloat32(info.Name)
		_, other, _ := before.ReadFloat32(info.Name)
		_, have, err := exported.ReadFloat32(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] = (want[i] + other[i]) / 2
			if math.Abs(float64(have[i]-want[i])) > math.Abs(float64(want[i]))/128 {
				t.Fatalf("exported %s[%d] = %g, trained %g: more than bf16 rounding apart", info.Name, i, have[i], want[i])
			}
		}
	}
	recipeTok, _ := os.ReadFile(filepath.Join(dir, runfolder.TokenizerFile))
	modelTok, _ := os.ReadFile(filepath.Join(dir, "model", runfolder.TokenizerFile))
	if len(recipeTok) == 0 || !bytes.Equal(recipeTok, modelTok) {
		t.Error("the exported model's tokenizer is not the recipe's")
	}

	out.Reset()
	if err := Train(ctx, args, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "already trained"); n != 8 || !strings.Contains(out.String(), "avg already averaged") {
		t.Errorf("a second run trained again:\n%s", out.String())
	}
	if again, _ := os.ReadFile(timesFile); !bytes.Equal(times, again) {
		t.Error("a second run logged new stage times")
	}

	fixed := t.TempDir()
	out.Reset()
	if err := Train(ctx, []string{"--recipe", "smoke", "--out", fixed, "--until", "sft", "--augment=false", "--threads", "1"}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	exists := func(parts ...string) bool {
		_, err := os.Stat(filepath.Join(append([]string{fixed}, parts...)...))
		return err == nil
	}
	if !exists("sft2-fixed", runfolder.CheckpointDir) || exists("opd") || exists("opd-fixed") || !exists("model-fixed", "model.safetensors") || exists("model") {
		t.Errorf("--until sft --augment=false: %s", out.String())
	}
	data, err := os.ReadFile(filepath.Join(fixed, "sft2-fixed", "data.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"hsa_record":{`)) {
		t.Error("Fixed-Harness SFT trained under an HSA variant")
	}
}
