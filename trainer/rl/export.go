package rl

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/trainer/liveroom"
)

// RL export formats.
const (
	// FormatTRL is TRL's GRPO dataset: a conversational "prompt", the
	// "tools", and every verifier input as a column of its own (TRL passes
	// each column to the reward functions by name).
	FormatTRL = "trl-rl"
	// FormatVerl is verl's RL layout: "data_source", "prompt", "ability",
	// "reward_model" {"style": "rule", "ground_truth"}, "extra_info" (split,
	// index, provenance, tools_kwargs) and "agent_name".
	FormatVerl = "verl-rl"
)

// groundTruth is what an external reward function needs to re-implement
// the room's grader for one task: the gold in canonical names and as the
// task's harness names it, the faults, the speech limit, and the room
// (its seed and catalog snapshot) the tools answer from.
type groundTruth struct {
	Gold       liveroom.Gold       `json:"gold"`
	GoldCalls  []hsa.Call          `json:"gold_calls"`
	Faults     []liveroom.Fault    `json:"faults"`
	ReplyChars int                 `json:"reply_chars"`
	RoomSeed   uint64              `json:"room_seed"`
	Room       liveroom.RoomConfig `json:"room_config"`
	Catalog    json.RawMessage     `json:"catalog"`
}

// provenance names where a task came from.
type provenance struct {
	ID             string      `json:"id"`
	QuestionID     string      `json:"question_id"`
	QuestionType   string      `json:"question_type"`
	Lang           string      `json:"lang"`
	Harness        string      `json:"harness"`
	HarnessVersion string      `json:"harness_version"`
	HSARecord      *hsa.Record `json:"hsa_record"`
}

type trlRow struct {
	Prompt []harness.Message      `json:"prompt"`
	Tools  []harness.FunctionSpec `json:"tools"`
	provenance
	groundTruth
}

type rewardModel struct {
	Style       string      `json:"style"`
	GroundTruth groundTruth `json:"ground_truth"`
}

type verlExtra struct {
	Split string `json:"split"`
	Index int    `json:"index"`
	provenance
	// ToolsKwargs gives each tool of the task's harness what its verl
	// tool needs to serve the task: the room and the faults.
	ToolsKwargs     map[string]toolKwargs `json:"tools_kwargs"`
	NeedToolsKwargs bool                  `json:"need_tools_kwargs"`
}

type toolKwargs struct {
	CreateKwargs map[string]any `json:"create_kwargs"`
}

type verlRow struct {
	DataSource  string                 `json:"data_source"`
	Prompt      []harness.Message      `json:"prompt"`
	Ability     string                 `json:"ability"`
	RewardModel rewardModel            `json:"reward_model"`
	ExtraInfo   verlExtra              `json:"extra_info"`
	AgentName   string                 `json:"agent_name"`
	Tools       []harness.FunctionSpec `json:"tools"`
}

// ExportTasks returns n RL tasks drawn from base as the training stream
// draws them (fresh variants and faults per task).
func ExportTasks(base *harness.Harness, cfg TaskConfig, n int) ([]Task, error) {
	if base == nil {
		return nil, fmt.Errorf("rl: no base harness")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ts := tasks{base: base, cfg: cfg}
	out := make([]Task, n)
	for i := range out {
		var err error
		if out[i], err = ts.at(1, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WriteJSONL writes one RL prompt per task in format (FormatTRL or
// FormatVerl): the rendered harness (system prompt and tools of the
// task's own variant), the viewer's question, the harness version and
// HSA record, and the verifier's inputs, so a team can run the same HSA-RL
// on TRL or verl with a reward function that mirrors the room's grader.
func WriteJSONL(w io.Writer, ts []Task, format, split string) error {
	if format != FormatTRL && format != FormatVerl {
		return fmt.Errorf("rl: unknown export format %q (want %s or %s)", format, FormatTRL, FormatVerl)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, t := range ts {
		conv := harness.Conversation{Messages: []harness.Message{{Role: harness.RoleUser, Content: t.Question.Text}}}
		// External engines list the tools through their chat template.
		p, err := harness.Render(t.harness, conv, harness.RenderOptions{OmitToolsSection: true})
		if err != nil {
			return fmt.Errorf("rl: render %s: %w", t.ID, err)
		}
		catalog, err := t.room.CatalogJSON()
		if err != nil {
			return fmt.Errorf("rl: %s: %w", t.ID, err)
		}
		faults := t.Faults
		if faults == nil {
			faults = []liveroom.Fault{}
		}
		gt := groundTruth{Gold: t.Question.Gold, GoldCalls: t.GoldCalls, Faults: faults, ReplyChars: t.harness.Pipeline.ReplyChars.Value,
			RoomSeed: t.RoomSeed, Room: t.RoomConfig, Catalog: catalog}
		prov := provenance{ID: t.ID, QuestionID: t.Question.ID, QuestionType: string(t.Question.Type), Lang: string(t.Question.Lang),
			Harness: t.harness.Name, HarnessVersion: t.HarnessVersion, HSARecord: t.Record}
		var row any = trlRow{Prompt: p.Messages, Tools: p.Tools, provenance: prov, groundTruth: gt}
		if format == FormatVerl {
			kw := map[string]toolKwargs{}
			for _, s := range p.Tools {
				kw[s.Function.Name] = toolKwargs{CreateKwargs: map[string]any{"room_seed": t.RoomSeed, "room_config": gt.Room,
					"faults": faults, "hsa_record": t.Record}}
			}
			row = verlRow{DataSource: "livehat/liveroom", Prompt: p.Messages, Ability: "live_stream_qa",
				RewardModel: rewardModel{Style: "rule", GroundTruth: gt},
				ExtraInfo:   verlExtra{Split: split, Index: i, provenance: prov, ToolsKwargs: kw, NeedToolsKwargs: true},
				AgentName:   "tool_agent", Tools: p.Tools}
		}
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("rl: write %s: %w", t.ID, err)
		}
	}
	return nil
}
