package rl

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/liveroom"
)

// TestTasksServeGoldThroughVariantsAndFaults plays each task's gold calls,
// as the task's harness names them, through callTool: the load-skill tool
// answers from the variant, the room's tools through the inverse mapping,
// and the faulty tool fails as its fault says (a transient one only
// once). Graded, the expert's transcript under the variant is perfect.
func TestTasksServeGoldThroughVariantsAndFaults(t *testing.T) {
	base := testfixture.DemoHarness(t)
	cfg := DefaultTaskConfig()
	cfg.VariantShare, cfg.FaultShare = 0.5, 1
	cfg.QuestionTypes = []liveroom.QuestionType{liveroom.QPrice, liveroom.QStock, liveroom.QShipping}
	ts := tasks{base: base, cfg: cfg}
	variants, faults, perfect := 0, 0, 0
	for i := range 24 {
		task, err := ts.at(3, i)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := ts.at(3, i)
		if again.HarnessVersion != task.HarnessVersion || again.Question.Text != task.Question.Text {
			t.Fatalf("task %d is not reproducible", i)
		}
		if task.Record != nil {
			variants++
		}
		if len(task.Faults) != 1 {
			t.Fatalf("task %d (%s) has faults %v", i, task.Question.Type, task.Faults)
		}
		faults++
		f := task.Faults[0]
		inj := &liveroom.FaultInjector{Tools: task.room, Faults: task.Faults}
		var transcript []harness.Message
		failed := 0
		for _, c := range task.GoldCalls {
			args, _ := json.Marshal(c.Arguments)
			res := task.callTool(inj, chat.ToolCall{Name: c.Name, Arguments: args})
			transcript = append(transcript,
				harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{Name: c.Name, Arguments: args}}},
				harness.Message{Role: harness.RoleTool, Name: c.Name, Content: res})
			if c.Name == task.harness.LoadSkillToolName() {
				if strings.Contains(res, `"error"`) {
					t.Errorf("task %d: load %v: %s", i, c.Arguments, res)
				}
				continue
			}
			var v map[string]any
			if json.Unmarshal([]byte(res), &v) != nil || v["error"] != nil || len(v) == 0 {
				failed++
			}
		}
		switch {
		case f.Persistent() && failed < 2:
			t.Errorf("task %d: a persistent %s fault on %s failed %d calls", i, f.Kind, f.Tool, failed)
		case !f.Persistent() && failed != 1:
			t.Errorf("task %d: a transient %s fault on %s failed %d calls", i, f.Kind, f.Tool, failed)
		}
		reply := "ok"
		if f.Persistent() {
			reply = liveroom.UnavailableReply(task.Question.Lang)
		}
		transcript = append(transcript, harness.Message{Role: harness.RoleAssistant, Content: reply})
		g := task.room.GradeTranscript(task.Question, transcript, liveroom.GradeOptions{Mapping: task.mapping})
		if g.ToolRationality == 1 && g.SkillSelection == 1 {
			perfect++
		} else {
			t.Errorf("task %d: the gold calls graded %+v", i, g)
		}
	}
	if variants == 0 || variants == 24 || faults != 24 || perfect != 24 {
		t.Errorf("%d variants, %d faults, %d perfect of 24", variants, faults, perfect)
	}
	// A tool the harness does not have, bad arguments and an unknown
	// skill come back as errors the model reads.
	task, _ := ts.at(3, 0)
	inj := &liveroom.FaultInjector{Tools: task.room}
	for _, c := range []chat.ToolCall{{Name: "no_such_tool", Arguments: json.RawMessage(`{}`)}, {Name: "x", Arguments: json.RawMessage(`[1]`)},
		{Name: task.harness.LoadSkillToolName(), Arguments: json.RawMessage(`{"` + task.harness.LoadSkillParamName() + `": "nope"}`)}} {
		if res := task.callTool(inj, c); !strings.Contains(res, `"error"`) {
			t.Errorf("%s(%s) = %s, want an error", c.Name, c.Arguments, res)
		}
	}
}
