package sft

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// Export formats.
const (
	// FormatTRL is TRL's conversational dataset: "messages" (OpenAI-style
	// turns with tool_calls) and "tools" (function specs) per line, the
	// provenance as extra columns.
	FormatTRL = "trl"
	// FormatVerl is verl's multi-turn SFT layout: "messages" and "tools",
	// with the provenance under "extra_info" and a "data_source".
	FormatVerl = "verl"
)

// provenance says where an example came from.
type provenance struct {
	ID             string      `json:"id"`
	QuestionID     string      `json:"question_id"`
	QuestionType   string      `json:"question_type"`
	Lang           string      `json:"lang"`
	Harness        string      `json:"harness"`
	HarnessVersion string      `json:"harness_version"`
	HSARecord      *hsa.Record `json:"hsa_record"`
	Retry          bool        `json:"retry"`
}

type trlLine struct {
	Messages []Message              `json:"messages"`
	Tools    []harness.FunctionSpec `json:"tools"`
	provenance
}

type verlLine struct {
	DataSource string                 `json:"data_source"`
	Messages   []Message              `json:"messages"`
	Tools      []harness.FunctionSpec `json:"tools"`
	ExtraInfo  provenance             `json:"extra_info"`
}

// WriteJSONL writes one JSON object per trajectory in format (FormatTRL or
// FormatVerl), each with its harness version and HSA record, so a team can
// train a large model on a distributed engine with the same data.
func WriteJSONL(w io.Writer, trajs []Trajectory, format string) error {
	if format != FormatTRL && format != FormatVerl {
		return fmt.Errorf("sft: unknown export format %q (want %s or %s)", format, FormatTRL, FormatVerl)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, t := range trajs {
		p := provenance{ID: t.ID, QuestionID: t.Question.ID, QuestionType: string(t.Question.Type), Lang: string(t.Question.Lang),
			Harness: t.Harness, HarnessVersion: t.HarnessVersion, HSARecord: t.Record, Retry: t.Retry}
		var line any = trlLine{Messages: t.Messages, Tools: t.Tools, provenance: p}
		if format == FormatVerl {
			line = verlLine{DataSource: "livehat/liveroom", Messages: t.Messages, Tools: t.Tools, ExtraInfo: p}
		}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("sft: write %s: %w", t.ID, err)
		}
	}
	return nil
}
