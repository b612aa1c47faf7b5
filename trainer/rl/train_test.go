package rl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
	"github.com/livehat/livehat/trainer/rl"
	"github.com/livehat/livehat/trainer/sft"
)

// toyHarness is the demo harness cut to a toy room's needs: the persona
// and skills sections, two skills, one tool, no hooks — a short prompt,
// so a tiny model's rollouts stay short.
func toyHarness(t testing.TB) *harness.Harness {
	t.Helper()
	demo := testfixture.DemoHarness(t)
	h := demo.Clone()
	h.Name = "toy-room"
	var sections []harness.Section
	for _, s := range h.Layout.Sections {
		if s.Kind == harness.SectionPersona || s.Kind == harness.SectionSkills || s.Kind == harness.SectionTools {
			sections = append(sections, s)
		}
	}
	h.Layout.Sections = sections
	var skills []harness.Skill
	for _, s := range h.Skills {
		if s.ID == liveroom.SkillChitchat || s.ID == liveroom.SkillPrice {
			skills = append(skills, s)
		}
	}
	h.Skills = skills
	var tools []harness.Tool
	for _, tl := range h.Tools {
		if tl.Name == liveroom.ToolProductLookup {
			tools = append(tools, tl)
		}
	}
	h.Tools, h.Hooks = tools, nil
	if err := harness.Validate(h); err != nil {
		t.Fatal(err)
	}
	return h
}

// toyTasks are chit-chat and off-topic questions in one-item rooms: the
// gold is to load the chitchat skill and answer briefly.
func toyTasks() rl.TaskConfig {
	c := rl.DefaultTaskConfig()
	c.Rooms, c.Room = 4, liveroom.RoomConfig{MinItems: 1, MaxItems: 1}
	c.QuestionTypes = []liveroom.QuestionType{liveroom.QChitchat, liveroom.QOffTopic}
	c.Langs = []liveroom.Lang{liveroom.LangEN}
	return c
}

type warmStart struct {
	dir string
	err error
}

var (
	warmOnce sync.Once
	warm     warmStart
)

// sftCheckpoint is a tiny policy after a short HSA-SFT on the toy room:
// it has seen the expert load the skill and answer, but not often enough
// to do it every time.
func sftCheckpoint(t *testing.T) string {
	t.Helper()
	warmOnce.Do(func() {
		dir, err := os.MkdirTemp("", "livehat-rl-sft-*")
		if err != nil {
			warm.err = err
			return
		}
		c := sft.DefaultTrainConfig()
		tc := toyTasks()
		c.Data.Rooms, c.Data.Questions, c.Data.Room = 8, 6, tc.Room
		c.Data.QuestionTypes, c.Data.Langs = tc.QuestionTypes, tc.Langs
		c.VocabSize, c.MaxLen, c.Steps, c.Batch, c.Warmup, c.SaveEvery, c.LR, c.Threads = 1200, 1024, 12, 8, 2, 0, 1e-2, 2
		c.EvalExamples = 0
		var log bytes.Buffer
		if err := sft.Train(context.Background(), toyHarness(t), c, dir, false, &log); err != nil {
			warm.err = err
			return
		}
		warm.dir = filepath.Join(dir, runfolder.CheckpointDir)
	})
	if warm.err != nil {
		t.Fatal(warm.err)
	}
	return warm.dir
}

func toyConfig(init string, steps int) rl.Config {
	c := rl.DefaultConfig()
	c.Init, c.Tasks, c.EvalTasks, c.EvalSamples = init, toyTasks(), 8, 4
	c.PromptsPerStep, c.Group, c.TurnTokens, c.MaxTurns = 4, 6, 48, 3
	c.Steps, c.LR, c.Warmup, c.SaveEvery, c.EvalEvery, c.Threads = steps, 1e-3, 1, 2, 0, 2
	return c
}

// TestRLMeanRewardRises trains the warm-started policy for a few GRPO
// steps in the toy room and checks that the mean reward rises, on the
// held-out tasks (4 seeded samples of 8 tasks, before and after) and
// along the run.
func TestRLMeanRewardRises(t *testing.T) {
	init := sftCheckpoint(t)
	base := toyHarness(t)
	c := toyConfig(init, 6)
	c.LR = 2e-3
	ctx := context.Background()
	before, err := rl.Evaluate(ctx, base, c, init, c.EvalSamples)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var log bytes.Buffer
	if err := rl.Train(ctx, base, c, out, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	after, err := rl.Evaluate(ctx, base, c, filepath.Join(out, runfolder.CheckpointDir), c.EvalSamples)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out reward %.3f → %.3f (effectiveness %.3f → %.3f, unparseable calls %.3f → %.3f, reasoning penalty %.3f → %.3f)",
		before["reward"], after["reward"], before[rl.Effectiveness], after[rl.Effectiveness],
		before["format_errors"], after["format_errors"], before[rl.ReasoningLength], after[rl.ReasoningLength])
	// The rise depends on the kernels' summation order, which moves this
	// tiny run's trajectory: 0.296 → 0.347 on the AVX2 kernels, → 0.334
	// on the AVX-512 ones (same seeds); both are learning, the floor is
	// set below either.
	if !(after["reward"] > before["reward"]+0.03) {
		t.Errorf("held-out mean reward %.3f → %.3f\n%s", before["reward"], after["reward"], log.String())
	}
	data, _ := os.ReadFile(filepath.Join(out, runfolder.MetricsFile))
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != c.Steps {
		t.Fatalf("%d metric lines, want %d", len(lines), c.Steps)
	}
	var rewards []float64
	for _, l := range lines {
		var m runfolder.Metrics
		if err := json.Unmarshal(l, &m); err != nil || m.RewardMean == nil || m.RewardStd == nil || m.ClipFrac == nil || m.KL == nil ||
			!(m.TokensPerSec > 0) || m.Rewards[rl.SkillSelection] < 0 {
			t.Fatalf("metrics line %s: %v", l, err)
		}
		rewards = append(rewards, *m.RewardMean)
	}
	first := (rewards[0] + rewards[1] + rewards[2]) / 3
	last := (rewards[len(rewards)-1] + rewards[len(rewards)-2] + rewards[len(rewards)-3]) / 3
	if !(last > first) {
		t.Errorf("training reward %.3f over the first steps, %.3f over the last", first, last)
	}
	var final runfolder.Metrics
	json.Unmarshal(lines[len(lines)-1], &final)
	if final.Eval == nil || final.Eval["reward"] == 0 && final.Eval[rl.Accuracy] == 0 {
		t.Errorf("no evaluation at the last step: %s", lines[len(lines)-1])
	}
}

// TestHelperRLProcess is the run TestResumeAfterKill kills.
func TestHelperRLProcess(t *testing.T) {
	out := os.Getenv("LIVEHAT_RL_KILL_RUN")
	if out == "" {
		t.Skip("started by TestResumeAfterKill only")
	}
	var c rl.Config
	if err := json.Unmarshal([]byte(os.Getenv("LIVEHAT_RL_KILL_CONFIG")), &c); err != nil {
		t.Fatal(err)
	}
	if err := rl.Train(context.Background(), toyHarness(t), c, out, false, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// resumeConfig is a small run with two policy updates a step, so the
// ratio and the clip act and the optimizer's update count is checked.
func resumeConfig(init string) rl.Config {
	c := toyConfig(init, 4)
	c.PromptsPerStep, c.Group, c.TurnTokens, c.Epochs, c.SaveEvery, c.EvalTasks = 2, 2, 24, 2, 1, 0
	return c
}

// TestResumeAfterKill kills an RL process with SIGKILL after a
// checkpoint, resumes it, and compares with an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three short runs")
	}
	base := toyHarness(t)
	c := resumeConfig(sftCheckpoint(t))
	raw, _ := json.Marshal(c)
	killed := filepath.Join(t.TempDir(), "killed")
	runtest.KillAfterCheckpoint(t, killed, c.Steps, "TestHelperRLProcess", "LIVEHAT_RL_KILL_RUN="+killed, "LIVEHAT_RL_KILL_CONFIG="+string(raw))
	var log bytes.Buffer
	if err := rl.Train(context.Background(), base, rl.Config{}, killed, true, &log); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "starting at step") {
		t.Errorf("resume log: %s", log.String())
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if err := rl.Train(context.Background(), base, c, whole, false, &log); err != nil {
		t.Fatal(err)
	}
	runtest.SameRun(t, killed, whole, c.Steps)
	// A resumed run must be given the harness it started with.
	other := base.Clone()
	other.Name = "another"
	if err := rl.Train(context.Background(), other, rl.Config{}, killed, true, &log); err == nil {
		t.Error("resumed with a different harness")
	}
}

// TestTrainResumesLonger runs one step, then resumes the run to a
// longer schedule, as `livehat train --resume --steps 2` does.
func TestTrainResumesLonger(t *testing.T) {
	base := toyHarness(t)
	c := resumeConfig(sftCheckpoint(t))
	c.Epochs, c.Steps = 1, 1
	run := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	ctx := context.Background()
	if err := rl.Train(ctx, base, c, run, false, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var saved rl.Config
	if err := runfolder.ReadJSON(filepath.Join(run, runfolder.ConfigFile), &saved); err != nil {
		t.Fatal(err)
	}
	if saved.Steps != 1 || saved.Group != c.Group || saved.Stage != "rl" || saved.BaseHarness == "" {
		t.Errorf("run.json: steps %d, group %d, stage %q, harness %q", saved.Steps, saved.Group, saved.Stage, saved.BaseHarness)
	}
	longer := rl.Config{}
	longer.Steps = 2
	if err := rl.Train(ctx, base, longer, run, true, &out); err != nil {
		t.Fatalf("resume: %v\n%s", err, out.String())
	}
	metrics, _ := os.ReadFile(filepath.Join(run, runfolder.MetricsFile))
	if n := bytes.Count(metrics, []byte("\n")); n != 2 {
		t.Errorf("%d metric lines after resuming to 2 steps", n)
	}
	if !strings.Contains(out.String(), "step 2/2  reward") {
		t.Errorf("progress: %s", out.String())
	}
	bad := c
	bad.Tasks.Room.Variety = 6
	if err := rl.Train(ctx, base, bad, filepath.Join(t.TempDir(), "bad"), false, &out); err == nil || !strings.Contains(err.Error(), "room variety 6") {
		t.Errorf("variety 6: err %v, want the level named", err)
	}
}
