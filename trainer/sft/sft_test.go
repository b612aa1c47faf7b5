package sft

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/runfolder"
	"github.com/livehat/livehat/trainer/nn/runfolder/runtest"
)

func demo(t testing.TB) *harness.Harness { return testfixture.DemoHarness(t) }

// smallData is a few rooms of one or two items, so examples stay short.
func smallData(augment bool) DataConfig {
	c := DefaultDataConfig()
	c.Rooms, c.Questions, c.Augment = 3, 6, augment
	c.Room = liveroom.RoomConfig{MinItems: 1, MaxItems: 2}
	return c
}

func TestBuildRendersEachTrajectoryUnderItsOwnHarness(t *testing.T) {
	base := demo(t)
	cfg := smallData(true)
	cfg.VariantShare, cfg.RetryShare, cfg.Rooms, cfg.MemoryShare = 1, 1, 6, 0
	trajs, st, err := Build(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Variants == 0 || st.Retries == 0 || st.Kept != len(trajs) {
		t.Fatalf("stats %+v: want variants and kept retries", st)
	}
	for _, tr := range trajs {
		if tr.Record == nil || tr.HarnessVersion == base.Version() {
			t.Fatalf("%s: rendered under the base harness with variant share 1", tr.ID)
		}
		tools := map[string]bool{}
		for _, s := range tr.Tools {
			tools[s.Function.Name] = true
		}
		untrained := 0
		for _, m := range tr.Messages {
			for _, c := range m.ToolCalls {
				if !tools[c.Name] {
					t.Errorf("%s: call to %q, which the variant's tools do not list", tr.ID, c.Name)
				}
			}
			if m.Train != nil && !*m.Train {
				untrained++
			}
		}
		// A kept retry masks exactly the flawed reply; a cut one has none.
		if want := map[bool]int{true: 1, false: 0}[tr.Retry]; untrained != want {
			t.Errorf("%s: %d untrained turns, want %d (retry %v)", tr.ID, untrained, want, tr.Retry)
		}
	}

	fixed, _, err := Build(context.Background(), base, smallData(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range fixed {
		if tr.Record != nil || tr.Retry || tr.HarnessVersion != base.Version() {
			t.Fatalf("%s: fixed-harness data left the base harness", tr.ID)
		}
	}
	again, _, _ := Build(context.Background(), base, smallData(false))
	a, _ := json.Marshal(fixed)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Error("Build is not deterministic")
	}
}

// TestBuildStreamContext checks that ContextShare renders the stream
// context a console live session shows (featured item, items on sale)
// into that share of the live-room trajectories and no others, and that
// MemoryShare starts trajectories with earlier questions and replies that
// are read but not trained.
func TestBuildStreamContext(t *testing.T) {
	base := demo(t)
	for _, share := range []float64{0, 1} {
		cfg := smallData(false)
		cfg.ContextShare = share
		trajs, _, err := Build(context.Background(), base, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trajs {
			sys := tr.Messages[0].Content
			has := strings.Contains(sys, runtime.ItemsOnSaleTitle) && strings.Contains(sys, runtime.FeaturedTitle)
			if has != (share == 1) {
				t.Fatalf("context share %g: %s has the stream context: %v\n%s", share, tr.ID, has, sys)
			}
		}
	}
	cfg := smallData(false)
	cfg.MemoryShare = 1
	trajs, _, err := Build(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	remembered := 0
	for _, tr := range trajs {
		if tr.Question.Text == "" {
			continue // the general corpus and the warm-up
		}
		// The question is the last user turn before the answer; anything
		// before it is memory, and no remembered reply is trained.
		ask := -1
		for i, m := range tr.Messages {
			if m.Role == chat.RoleUser && m.Content == tr.Question.Text {
				ask = i
			}
		}
		if ask < 1 {
			t.Fatalf("%s: question %q not found", tr.ID, tr.Question.Text)
		}
		if ask > 1 {
			remembered++
		}
		for _, m := range tr.Messages[1:ask] {
			if m.Role == chat.RoleAssistant && (m.Train == nil || *m.Train) {
				t.Errorf("%s: remembered reply %q is trained", tr.ID, m.Content)
			}
		}
	}
	if remembered == 0 {
		t.Error("memory share 1: no trajectory begins with the room's earlier questions")
	}
	room := liveroom.NewRoom(4, liveroom.RoomConfig{MinItems: 2, MaxItems: 2})
	items := room.StreamContext()
	want := fmt.Sprintf("%s (%s), %s (%s)", room.Items[0].NameZH, room.Items[0].ID, room.Items[1].NameZH, room.Items[1].ID)
	if len(items) != 2 || items[1].Text != want || !strings.Contains(items[0].Text, room.Featured) {
		t.Errorf("stream context %+v, want the featured item and %q", items, want)
	}
}

func TestExportLayouts(t *testing.T) {
	trajs, _, err := Build(context.Background(), demo(t), smallData(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{FormatTRL, FormatVerl} {
		var buf bytes.Buffer
		if err := WriteJSONL(&buf, trajs, format); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<22)
		lines := 0
		for sc.Scan() {
			var line struct {
				Messages []struct {
					Role      string `json:"role"`
					ToolCalls []struct {
						Type     string `json:"type"`
						Function struct {
							Name      string          `json:"name"`
							Arguments json.RawMessage `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"messages"`
				Tools []struct {
					Type     string `json:"type"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
				HarnessVersion string          `json:"harness_version"`
				DataSource     string          `json:"data_source"`
				ExtraInfo      json.RawMessage `json:"extra_info"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%s line %d: %v", format, lines+1, err)
			}
			if line.Messages[0].Role != "system" || len(line.Tools) == 0 || line.Tools[0].Type != "function" {
				t.Fatalf("%s line %d: want a system prompt and function tools", format, lines+1)
			}
			calls := 0
			for _, m := range line.Messages {
				for _, c := range m.ToolCalls {
					if c.Type != "function" || c.Function.Name == "" || !json.Valid(c.Function.Arguments) {
						t.Fatalf("%s line %d: tool call not in the OpenAI layout: %+v", format, lines+1, c)
					}
					calls++
				}
			}
			if calls == 0 {
				t.Errorf("%s line %d: no tool call", format, lines+1)
			}
			switch format {
			case FormatTRL:
				if !strings.HasPrefix(line.HarnessVersion, "sha256:") {
					t.Errorf("trl line %d: harness version %q", lines+1, line.HarnessVersion)
				}
			case FormatVerl:
				if line.DataSource == "" || !bytes.Contains(line.ExtraInfo, []byte(`"harness_version":"sha256:`)) || !bytes.Contains(line.ExtraInfo, []byte(`"hsa_record"`)) {
					t.Errorf("verl line %d: provenance missing from extra_info", lines+1)
				}
			}
			lines++
		}
		if lines != len(trajs) {
			t.Errorf("%s: %d lines for %d trajectories", format, lines, len(trajs))
		}
	}
}

func TestTokenizeTrainsOnlyAssistantTurns(t *testing.T) {
	cfg := smallData(true)
	cfg.VariantShare, cfg.RetryShare, cfg.Rooms, cfg.MemoryShare = 1, 1, 6, 0
	trajs, _, err := Build(context.Background(), demo(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := TrainTokenizer(context.Background(), trajs, chat.Qwen3, 600)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ScaffoldTokens() {
		if _, ok := tok.TokenID(s); !ok {
			t.Errorf("scaffold %q is not one token", s)
		}
	}
	retried := false
	for _, tr := range trajs {
		ex, err := Tokenize(tok, tr, chat.Qwen3)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := Render(tr, chat.Qwen3)
		if got := tok.Decode(ex.Tokens); got != text {
			t.Fatalf("%s: the pieces do not decode to the rendered text", tr.ID)
		}
		// The trained tokens form one run per learned assistant turn, in
		// order, each holding the turn and closed by <|im_end|>.
		var runs []string
		for i := 0; i < len(ex.Tokens); {
			if !ex.Train[i] {
				i++
				continue
			}
			j := i
			for j < len(ex.Tokens) && ex.Train[j] {
				j++
			}
			runs = append(runs, tok.Decode(ex.Tokens[i:j]))
			i = j
		}
		var learned []chat.Message
		for _, m := range tr.Messages {
			if m.Role != chat.RoleAssistant {
				continue
			}
			if m.Train != nil && !*m.Train {
				retried = true
				continue
			}
			learned = append(learned, m.Message)
		}
		if len(runs) != len(learned) {
			t.Fatalf("%s: %d trained runs for %d learned turns", tr.ID, len(runs), len(learned))
		}
		for k, m := range learned {
			run := runs[k]
			if !strings.HasSuffix(run, "<|im_end|>") || strings.Contains(run, "<|im_start|>") {
				t.Errorf("%s: trained run %q is not one closed assistant turn", tr.ID, run)
			}
			if !strings.Contains(run, m.Content) {
				t.Errorf("%s: run %q lacks the reply %q", tr.ID, run, m.Content)
			}
			for _, c := range m.ToolCalls {
				if !strings.Contains(run, `"name": "`+c.Name+`"`) {
					t.Errorf("%s: run %q lacks the call to %s", tr.ID, run, c.Name)
				}
			}
		}
	}
	if !retried {
		t.Error("no kept retry to check the mask of")
	}
}

// testRun is a tiny run: a few one- or two-item rooms, a small vocabulary.
func testRun(steps int) TrainConfig {
	c := DefaultTrainConfig()
	c.Data = smallData(true)
	c.Data.Rooms, c.Data.Questions = 2, 5
	c.VocabSize, c.MaxLen, c.Steps, c.Batch, c.Warmup, c.SaveEvery, c.LR, c.Threads = 1000, 3072, steps, 2, 3, 2, 1e-2, 2
	c.EvalExamples, c.EvalEvery = 1, 0 // one held-out example, measured at the end
	return c
}

// TestLearningCurve trains the tiny shape on room trajectories and checks
// that the loss on a fixed batch of them falls clearly.
func TestLearningCurve(t *testing.T) {
	base := demo(t)
	cfg := testRun(16)
	out := t.TempDir()
	var log bytes.Buffer
	if err := Train(context.Background(), base, cfg, out, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	tok, err := loadTokenizer(filepath.Join(out, tokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	trajs, _, _ := Build(context.Background(), base, cfg.Data)
	var fixed []nn.Example
	for _, tr := range trajs[:4] {
		ex, err := Tokenize(tok, tr, cfg.Template)
		if err != nil {
			t.Fatal(err)
		}
		fixed = append(fixed, ex)
	}
	cpu := model.NewCPU(2)
	defer cpu.Close()
	mc, _ := ModelPreset(cfg.Model, tok.VocabSize(), cfg.MaxLen)
	init, err := model.NewRandom(mc, cfg.Seed, model.Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := nn.New(init, cpu)
	after, err := nn.Load(filepath.Join(out, checkpointDir), cpu)
	if err != nil {
		t.Fatal(err)
	}
	l0, err := before.Evaluate(context.Background(), fixed)
	if err != nil {
		t.Fatal(err)
	}
	l1, _ := after.Evaluate(context.Background(), fixed)
	t.Logf("loss on a fixed batch: %.3f → %.3f after %d steps", l0.Mean(), l1.Mean(), cfg.Steps)
	if l1.Mean() > 0.6*l0.Mean() {
		t.Errorf("loss fell only from %.3f to %.3f in %d steps\n%s", l0.Mean(), l1.Mean(), cfg.Steps, log.String())
	}
	// The checkpoint is a complete Hugging Face folder the engine can load.
	if _, err := model.Load(filepath.Join(out, checkpointDir), model.Options{Backend: cpu}); err != nil {
		t.Error(err)
	}
	metrics, _ := os.ReadFile(filepath.Join(out, metricsFile))
	lines := bytes.Split(bytes.TrimSpace(metrics), []byte("\n"))
	if len(lines) != cfg.Steps {
		t.Fatalf("%d metric lines, want %d", len(lines), cfg.Steps)
	}
	var last Metrics
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil || last.EvalLoss == nil || !(*last.EvalLoss > 0) {
		t.Errorf("the last metrics line has no held-out loss: %s", lines[len(lines)-1])
	}
}

// TestHelperTrainProcess is the run TestResumeAfterKill kills; it does
// nothing unless the parent test starts it.
func TestHelperTrainProcess(t *testing.T) {
	out := os.Getenv("LIVEHAT_SFT_KILL_RUN")
	if out == "" {
		t.Skip("started by TestResumeAfterKill only")
	}
	if err := Train(context.Background(), demo(t), testRun(8), out, false, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterKill kills a training process with SIGKILL after its first
// checkpoint, resumes it, and compares with an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three short runs")
	}
	base := demo(t)
	cfg := testRun(8)
	killed := filepath.Join(t.TempDir(), "killed")
	runtest.KillAfterCheckpoint(t, killed, cfg.Steps, "TestHelperTrainProcess", "LIVEHAT_SFT_KILL_RUN="+killed)
	var log bytes.Buffer
	if err := Train(context.Background(), base, TrainConfig{}, killed, true, &log); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "starting at step") {
		t.Fatalf("resume log: %s", log.String())
	}

	whole := filepath.Join(t.TempDir(), "whole")
	if err := Train(context.Background(), base, cfg, whole, false, &log); err != nil {
		t.Fatal(err)
	}
	runtest.SameRun(t, killed, whole, cfg.Steps)
}

// TestStopAtKeepsTheFullSchedule stops a run at step 3 of 6 and resumes
// it to the end: only if the first part followed the 6-step learning-rate
// schedule does it end with the weights of an uninterrupted 6-step run.
func TestStopAtKeepsTheFullSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two short runs")
	}
	base := demo(t)
	cfg := testRun(6)
	cfg.Warmup = 1 // past the warm-up the schedule's total sets every rate
	var log bytes.Buffer
	stopped := filepath.Join(t.TempDir(), "stopped")
	first := cfg
	first.StopAt = 3
	if err := Train(context.Background(), base, first, stopped, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if st, err := runfolder.ReadState(stopped); err != nil || st.Step != 3 {
		t.Fatalf("stopped run: checkpoint %+v, %v; want step 3", st, err)
	}
	if err := Train(context.Background(), base, TrainConfig{}, stopped, true, &log); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if err := Train(context.Background(), base, cfg, whole, false, &log); err != nil {
		t.Fatal(err)
	}
	runtest.SameRun(t, stopped, whole, cfg.Steps)

	bad := cfg
	bad.StopAt = 7
	if err := Train(context.Background(), base, bad, filepath.Join(t.TempDir(), "bad"), false, &log); err == nil || !strings.Contains(err.Error(), "stop at step 7") {
		t.Errorf("stop at 7 of 6: err %v, want the step named", err)
	}
}

// TestLoRAFromCheckpoint fine-tunes LoRA adapters on top of a finished run:
// the base weights stay as they were, the adapters move, and the run's
// checkpoint carries them in PEFT's layout.
func TestLoRAFromCheckpoint(t *testing.T) {
	base := demo(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "full")
	var log bytes.Buffer
	if err := Train(context.Background(), base, testRun(1), first, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	cfg := testRun(2)
	cfg.Model, cfg.Init = "", filepath.Join(first, checkpointDir)
	cfg.LoRA = &nn.LoRAConfig{Rank: 4, Alpha: 8, Targets: []string{"q_proj", "v_proj"}}
	second := filepath.Join(dir, "lora")
	if err := Train(context.Background(), base, cfg, second, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	a, _ := os.ReadFile(filepath.Join(first, checkpointDir, "model.safetensors"))
	b, _ := os.ReadFile(filepath.Join(second, checkpointDir, "model.safetensors"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("LoRA training changed the frozen base weights")
	}
	m, err := nn.Load(filepath.Join(second, checkpointDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.LoRA() == nil {
		t.Fatal("the checkpoint lost its adapters")
	}
	moved := false
	for _, p := range m.Params() {
		for _, v := range p.Value {
			if strings.Contains(p.Name, "lora_B") && v != 0 {
				moved = true
			}
		}
	}
	if !moved {
		t.Error("the LoRA B matrices never left zero")
	}
}

// TestContextRaisesTheInit: a continuation with Context trains and saves
// a model of the longer context from a checkpoint of a shorter one; a
// shorter context, or one without a checkpoint, is refused by name.
func TestContextRaisesTheInit(t *testing.T) {
	base := demo(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "short")
	cfg := testRun(1)
	cfg.MaxLen = 2048
	var log bytes.Buffer
	if err := Train(context.Background(), base, cfg, first, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	next := testRun(1)
	next.Model, next.Init, next.MaxLen, next.Context = "", filepath.Join(first, checkpointDir), 4096, 4096
	second := filepath.Join(dir, "long")
	if err := Train(context.Background(), base, next, second, false, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	m, err := nn.Load(filepath.Join(second, checkpointDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MaxPositionEmbeddings != 4096 {
		t.Errorf("the continuation saved context %d, want 4096", m.Config.MaxPositionEmbeddings)
	}
	shorter := next
	shorter.Context = 1024
	if err := Train(context.Background(), base, shorter, filepath.Join(dir, "shorter"), false, &log); err == nil || !strings.Contains(err.Error(), "context 1024 is below") {
		t.Errorf("a shorter context: err %v", err)
	}
	scratch := testRun(1)
	scratch.Context = 4096
	if err := scratch.validate(); err == nil || !strings.Contains(err.Error(), "give --init") {
		t.Errorf("a context without a checkpoint: err %v", err)
	}
}

// TestBuildRejectsBadDataConfig: each unusable setting is named.
func TestBuildRejectsBadDataConfig(t *testing.T) {
	base := demo(t)
	for _, tc := range []struct {
		edit func(*DataConfig)
		want string
	}{
		{func(c *DataConfig) { c.Room.Variety = 6 }, "variety 6"},
		{func(c *DataConfig) { c.Room.Variety = -2 }, "variety -2"},
		{func(c *DataConfig) { c.Rooms = -1 }, "negative data counts"},
		{func(c *DataConfig) { c.ContextShare = 1.5 }, "shares must lie in [0, 1]"},
	} {
		cfg := DefaultDataConfig()
		tc.edit(&cfg)
		if _, _, err := Build(context.Background(), base, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
}
