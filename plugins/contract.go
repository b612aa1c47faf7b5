package plugins

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/livehat/livehat/harness"
)

// HookInput is the JSON a hook export receives (see sdk/ABI.md).
type HookInput struct {
	Event   harness.HookEvent `json:"event"`
	Stream  string            `json:"stream,omitempty"`
	Session string            `json:"session,omitempty"`
	// Viewer is who sent the message (viewer_message) or is addressed.
	Viewer *Viewer `json:"viewer,omitempty"`
	// Text is the viewer's message or the model's reply, per event.
	Text string `json:"text,omitempty"`
	// Tool is the tool call of before_tool and after_tool.
	Tool *ToolCall `json:"tool,omitempty"`
	// ReplyChars is the harness's reply length limit, in characters.
	ReplyChars int `json:"reply_chars,omitempty"`
	// Config is the hook's configuration from the harness or manifest.
	Config json.RawMessage `json:"config,omitempty"`

	// What an after_response hook needs to check a reply against the
	// facts the model was given (a grounding check).

	// Message is the viewer's message of the turn as the model read it.
	Message string `json:"message,omitempty"`
	// Lang is the language the reply must be in: "zh" or "en", the
	// viewer's (for a narration, the last viewer's or the stream's).
	Lang string `json:"lang,omitempty"`
	// Calls are the turn's tool calls in order, each with its result
	// (an {"error": …} object when the call failed).
	Calls []ToolCall `json:"calls,omitempty"`
	// Context is the stream context the model saw.
	Context []harness.ContextItem `json:"context,omitempty"`
	// Attempt is the reply's attempt in the turn, 1 for the first;
	// Attempts is the most the turn allows (the retry budget plus one).
	// A retry decided on the last attempt puts the safe line on air.
	Attempt  int `json:"attempt,omitempty"`
	Attempts int `json:"attempts,omitempty"`
}

// Viewer is a viewer of the stream.
type Viewer struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Orders is how many orders the viewer placed before.
	Orders int `json:"orders,omitempty"`
}

// ToolCall is a tool call as hooks see it; Result is set after the tool ran.
type ToolCall struct {
	// Name is the harness's name for the tool, as the model called it.
	Name string `json:"name"`
	// Plugin and Export are what ran the call: stable under a harness
	// that renames the tool.
	Plugin    string          `json:"plugin,omitempty"`
	Export    string          `json:"export,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// SkillInput is the JSON a skill export receives.
type SkillInput struct {
	Skill   string          `json:"skill"`
	Stream  string          `json:"stream,omitempty"`
	Session string          `json:"session,omitempty"`
	Config  json.RawMessage `json:"config,omitempty"`
}

// DecodeDecision decodes a hook's output into a decision and checks it
// against the harness's contract. Unknown fields are ignored so that
// plugins built against a newer ABI minor version still load.
func DecodeDecision(out []byte) (harness.HookDecision, error) {
	var d harness.HookDecision
	if len(out) == 0 {
		return d, errors.New("hook decision: empty output (want a JSON object with an action)")
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return harness.HookDecision{}, fmt.Errorf("hook decision: %w", err)
	}
	if err := d.Validate(); err != nil {
		return harness.HookDecision{}, err
	}
	return d, nil
}

// DecodeSkillOutput decodes a skill's output, {"text": "..."}, and
// returns the text, which must not be empty.
func DecodeSkillOutput(out []byte) (string, error) {
	var s struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return "", fmt.Errorf("skill output: %w", err)
	}
	if s.Text == nil || *s.Text == "" {
		return "", errors.New(`skill output: "text" is missing or empty`)
	}
	return *s.Text, nil
}
