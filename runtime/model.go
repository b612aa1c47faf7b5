// Package runtime is the live agent: for each merchant's stream a Session
// turns viewer messages into the avatar's speech through the current
// harness version, its hooks and tools (sandboxed plugins) and the model.
//
// One turn: hooks viewer_message → render the prompt → hooks before_model →
// generate → on tool calls: hooks before_tool → run the tool → hooks
// after_tool → feed the result back → … (bounded rounds, a deadline) →
// hooks after_response (may rewrite, deny or send the model back with
// feedback) → emit speakable chunks. Every step is traced and timed.
package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/livehat/livehat/harness"
)

// Model generates the assistant's next message. The local model core and
// the remote OpenAI-compatible backend both serve it through adapters.
type Model interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// ErrAnswerRefused marks a Generate error for an answer the model did write
// but its server could not read, as llama-server's tool-call parser refuses
// a draft with a broken character in it. Sent again unchanged, a greedy
// request writes the same answer; a turn with retries left asks again with
// feedback instead of ending on the safe line. A Model wraps it with %w.
var ErrAnswerRefused = errors.New("the model's answer could not be read")

// Request is one generation: the rendered prompt and the tools.
type Request struct {
	Messages []harness.Message
	Tools    []harness.FunctionSpec
	// CallTools, when set, are Tools with narrower argument schemas (ids
	// bound to the stream's catalog): a backend that constrains tool calls
	// holds them to these, while the prompt shows Tools.
	CallTools []harness.FunctionSpec
	// MustCall names a tool the answer must be a call of, because a harness
	// rule demands that call before the turn goes on (a reply skill loaded
	// before the reply): the model still writes the call's arguments, as
	// OpenAI's tool_choice naming a function leaves them to the model. The
	// local engine holds the answer to that tool; a remote server is asked
	// for a call of any tool (tool_choice "required"), since servers do not
	// all honour a named one. Empty leaves the choice to the model.
	MustCall string
	// MaxTokens bounds the completion; 0 leaves it to the backend.
	MaxTokens int
	// Since is when the question the generation serves arrived (for a turn
	// of several, the oldest). A backend shared by many sessions serves the
	// earliest first, so a turn's later rounds and long-queued questions
	// are not put behind newer work; zero means now.
	Since time.Time
}

// Response is the model's message: text, tool calls, or both.
type Response struct {
	// Content is the reply text with any reasoning removed.
	Content string
	// Reasoning is what the model wrote inside <think>…</think>; it is
	// kept in the trace and never spoken.
	Reasoning string
	ToolCalls []harness.ToolCall
	Usage     Usage
}

// Usage is what a generation cost.
type Usage struct {
	PromptTokens     int           `json:"prompt_tokens"`
	CachedTokens     int           `json:"cached_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	Prefill          time.Duration `json:"prefill_ns"`
	Decode           time.Duration `json:"decode_ns"`
}

// Plugins runs the exports that implement a harness's tools, hooks and
// plugin-computed skills. PluginSet serves it from loaded WASM plugins.
type Plugins interface {
	Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error)
	Hook(ctx context.Context, plugin, export string, input json.RawMessage) (harness.HookDecision, error)
	Skill(ctx context.Context, plugin, export string, input json.RawMessage) (string, error)
}
