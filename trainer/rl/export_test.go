package rl_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/rl"
)

func TestExportRLPrompts(t *testing.T) {
	base := testfixture.DemoHarness(t)
	cfg := rl.DefaultTaskConfig()
	cfg.VariantShare, cfg.FaultShare = 0.5, 0.5
	ts, err := rl.ExportTasks(base, cfg, 24)
	if err != nil {
		t.Fatal(err)
	}
	var verl, trl bytes.Buffer
	if err := rl.WriteJSONL(&verl, ts, rl.FormatVerl, "train"); err != nil {
		t.Fatal(err)
	}
	if err := rl.WriteJSONL(&trl, ts, rl.FormatTRL, "train"); err != nil {
		t.Fatal(err)
	}
	vlines := strings.Split(strings.TrimSpace(verl.String()), "\n")
	tlines := strings.Split(strings.TrimSpace(trl.String()), "\n")
	if len(vlines) != len(ts) || len(tlines) != len(ts) {
		t.Fatalf("%d verl and %d trl lines for %d tasks", len(vlines), len(tlines), len(ts))
	}
	variants, faulty := 0, 0
	for i, line := range vlines {
		var row struct {
			DataSource  string            `json:"data_source"`
			Prompt      []harness.Message `json:"prompt"`
			Ability     string            `json:"ability"`
			RewardModel struct {
				Style       string `json:"style"`
				GroundTruth struct {
					Gold      liveroom.Gold    `json:"gold"`
					GoldCalls []hsa.Call       `json:"gold_calls"`
					Faults    []liveroom.Fault `json:"faults"`
					RoomSeed  uint64           `json:"room_seed"`
					Catalog   json.RawMessage  `json:"catalog"`
				} `json:"ground_truth"`
			} `json:"reward_model"`
			ExtraInfo struct {
				Index           int                        `json:"index"`
				HarnessVersion  string                     `json:"harness_version"`
				HSARecord       *hsa.Record                `json:"hsa_record"`
				ToolsKwargs     map[string]json.RawMessage `json:"tools_kwargs"`
				NeedToolsKwargs bool                       `json:"need_tools_kwargs"`
			} `json:"extra_info"`
			AgentName string                 `json:"agent_name"`
			Tools     []harness.FunctionSpec `json:"tools"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		task := ts[i]
		switch {
		case row.DataSource == "" || row.Ability == "" || row.AgentName != "tool_agent" || row.RewardModel.Style != "rule":
			t.Errorf("line %d: %s", i, line[:200])
		case len(row.Prompt) != 2 || row.Prompt[0].Role != harness.RoleSystem || row.Prompt[1].Content != task.Question.Text:
			t.Errorf("line %d: prompt %+v", i, row.Prompt)
		case row.ExtraInfo.HarnessVersion != task.HarnessVersion || row.ExtraInfo.Index != i || !row.ExtraInfo.NeedToolsKwargs:
			t.Errorf("line %d: extra_info %+v", i, row.ExtraInfo)
		case len(row.RewardModel.GroundTruth.Catalog) == 0 || row.RewardModel.GroundTruth.RoomSeed != task.RoomSeed:
			t.Errorf("line %d: ground truth without the room", i)
		case len(row.Tools) == 0 || len(row.ExtraInfo.ToolsKwargs) != len(row.Tools):
			t.Errorf("line %d: %d tools, %d tools_kwargs", i, len(row.Tools), len(row.ExtraInfo.ToolsKwargs))
		}
		if row.ExtraInfo.HSARecord != nil {
			variants++
			// The gold is given as the variant names it: mapping the
			// canonical gold through the record gives it back.
			m := row.ExtraInfo.HSARecord.Mapping()
			for j, c := range row.RewardModel.GroundTruth.Gold.Calls {
				shown, err := m.Map(c)
				if err != nil || !hsa.SameCall(shown, row.RewardModel.GroundTruth.GoldCalls[j]) {
					t.Errorf("line %d: gold call %d maps to %+v, exported %+v (%v)", i, j, shown, row.RewardModel.GroundTruth.GoldCalls[j], err)
				}
			}
			// The tools are the variant's.
			names := map[string]bool{}
			for _, s := range row.Tools {
				names[s.Function.Name] = true
			}
			for _, c := range row.RewardModel.GroundTruth.GoldCalls {
				if !names[c.Name] {
					t.Errorf("line %d: gold call %s is not among the variant's tools", i, c.Name)
				}
			}
		}
		if len(row.RewardModel.GroundTruth.Faults) > 0 {
			faulty++
		}
	}
	if variants == 0 || variants == len(ts) || faulty == 0 {
		t.Errorf("%d of %d tasks under variants, %d with faults", variants, len(ts), faulty)
	}
	var first map[string]json.RawMessage
	if err := json.Unmarshal([]byte(tlines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"prompt", "tools", "gold", "gold_calls", "faults", "reply_chars", "catalog", "harness_version", "hsa_record"} {
		if _, ok := first[col]; !ok {
			t.Errorf("TRL row has no %q column", col)
		}
	}
	if err := rl.WriteJSONL(&trl, ts, "parquet", ""); err == nil {
		t.Error("unknown format accepted")
	}
}
