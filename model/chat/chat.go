// Package chat holds the chat message and tool types shared by the model core,
// renders conversations into the ChatML prompt text that Qwen2/Qwen3 models were
// trained on, and parses the tool calls a model writes back.
package chat

import "encoding/json"

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
