package sft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

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

// writeTrajectories stores a run's data in its own layout, so that a
// resumed run trains on exactly the same examples even when a remote
// teacher would answer differently the second time.
func writeTrajectories(path string, trajs []Trajectory) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, t := range trajs {
		if err := enc.Encode(t); err != nil {
			f.Close()
			return fmt.Errorf("sft: write %s: %w", t.ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("sft: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sft: %w", err)
	}
	return nil
}

// readTrajectories reads what writeTrajectories wrote; errors name the line.
func readTrajectories(path string) ([]Trajectory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sft: %w", err)
	}
	defer f.Close()
	var out []Trajectory
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var t Trajectory
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("sft: %s line %d: %w", path, line, err)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sft: %s: %w", path, err)
	}
	return out, nil
}
