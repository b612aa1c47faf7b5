package rl_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/rl"
	"github.com/livehat/livehat/trainer/sft"
)

// toyHarness is the demo harness cut to a toy room's needs: the persona
// and skills sections, two skills, one tool, no hooks — a short prompt,
// so a tiny model's rollouts stay short.
func toyHarness(t testing.TB) *harness.Harness {
	t.Helper()
	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
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
		t.Logf("SFT warm start:\n%s", log.String())
	})
	if warm.err != nil {
		t.Fatal(warm.err)
	}
	return warm.dir
}

func toyConfig(init string, steps int) rl.Config {
	c := rl.DefaultConfig()
	c.Init, c.Tasks, c.EvalTasks = init, toyTasks(), 0
	c.PromptsPerStep, c.Group, c.TurnTokens, c.MaxTurns = 4, 6, 48, 3
	c.Steps, c.LR, c.Warmup, c.SaveEvery, c.Threads = steps, 3e-3, 1, 2, 2
	return c
}

func TestRLMeanRewardRises(t *testing.T) {
	init := sftCheckpoint(t)
	c := toyConfig(init, 12)
	out := t.TempDir()
	var log bytes.Buffer
	if err := rl.Train(context.Background(), toyHarness(t), c, out, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Log(log.String())
}

