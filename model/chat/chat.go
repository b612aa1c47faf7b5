// Package chat holds the chat message and tool types shared by the model core,
// renders conversations into the ChatML prompt text that Qwen2/Qwen3 models were
// trained on, and parses the tool calls a model writes back.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Roles a Message may have.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is one of RoleSystem, RoleUser, RoleAssistant or RoleTool.
	Role string `json:"role"`
	// Content is the text of the turn. For an assistant turn it excludes the
	// tool calls, which are in ToolCalls.
	Content string `json:"content"`
	// ReasoningContent is an assistant's thinking text (Qwen3 `<think>` block),
	// when it is kept apart from Content. Empty means none was given.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ToolCalls are the calls an assistant turn made, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Name optionally names the tool whose result a tool turn carries.
	Name string `json:"name,omitempty"`
	// ToolCallID optionally names the call a tool turn answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call made by the assistant.
type ToolCall struct {
	// ID identifies the call where a server assigns ids (OpenAI-compatible
	// APIs); the ChatML text itself carries none.
	ID string `json:"id,omitempty"`
	// Name is the called tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments.
	Arguments json.RawMessage `json:"arguments"`
}

// Tool describes a function the model may call.
type Tool struct {
	// Name is the function name the model writes in a call.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// toolCallJSON is the OpenAI / Hugging Face layout of a tool call in a
// message, which TRL and verl datasets use too.
type toolCallJSON struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function,omitempty"`
	// The flat form {"name": ..., "arguments": ...}, also accepted.
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MarshalJSON writes the call as {"id": ..., "type": "function", "function":
// {"name": ..., "arguments": {...}}}, with the arguments as a JSON object.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var out toolCallJSON
	out.ID, out.Type = c.ID, "function"
	out.Function = &struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{c.Name, args}
	return json.Marshal(out)
}

// UnmarshalJSON reads a call in the layout MarshalJSON writes, with the
// arguments as an object or, as OpenAI sends them, as a string holding JSON;
// it also reads the flat form {"name": ..., "arguments": ...}.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var in toolCallJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	name, args := in.Name, in.Arguments
	if in.Function != nil {
		name, args = in.Function.Name, in.Function.Arguments
	}
	if len(args) > 0 && args[0] == '"' {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return err
		}
		if s == "" {
			s = "{}"
		}
		if !json.Valid([]byte(s)) {
			return fmt.Errorf("chat: tool call %q: arguments string is not JSON: %.60q", name, s)
		}
		args = json.RawMessage(s)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	*c = ToolCall{ID: in.ID, Name: name, Arguments: bytes.Clone(args)}
	return nil
}
