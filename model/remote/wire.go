package remote

import (
	"encoding/json"
	"fmt"

	"github.com/livehat/livehat/model/chat"
)

// The OpenAI chat-completions wire format, as far as this client uses it.

type wireRequest struct {
	Model            string            `json:"model"`
	Messages         []wireMessage     `json:"messages"`
	Tools            []wireTool        `json:"tools,omitempty"`
	ToolChoice       string            `json:"tool_choice,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	TopP             *float64          `json:"top_p,omitempty"`
	MaxTokens        int               `json:"max_tokens,omitempty"`
	Stop             []string          `json:"stop,omitempty"`
	Seed             *int64            `json:"seed,omitempty"`
	PresencePenalty  *float64          `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64          `json:"frequency_penalty,omitempty"`
	Logprobs         bool              `json:"logprobs,omitempty"`
	TopLogprobs      int               `json:"top_logprobs,omitempty"`
	Stream           bool              `json:"stream,omitempty"`
	StreamOptions    *wireStreamOption `json:"stream_options,omitempty"`
}

type wireStreamOption struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// Servers with a reasoning parser (vLLM, SGLang) return the thinking
	// text apart from the answer, under one of these names.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	Reasoning        string `json:"reasoning,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type wireResponse struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"` // some servers report errors inside a stream
	// Timings is llama-server's account of the request; cache_n is how
	// many prompt tokens its prefix cache served.
	Timings *struct {
		CacheN int `json:"cache_n"`
	} `json:"timings"`
}

type wireUsage struct {
	Usage
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usage is the response's token count, zero when it has none.
func (w *wireResponse) usage() Usage {
	var u Usage
	if w.Usage != nil {
		u = w.Usage.Usage
		if d := w.Usage.PromptTokensDetails; d != nil {
			u.CachedTokens = d.CachedTokens
		}
	}
	if w.Timings != nil && u.CachedTokens == 0 {
		u.CachedTokens = w.Timings.CacheN
	}
	return u
}

type wireChoice struct {
	Index        int           `json:"index"`
	Message      *wireMessage  `json:"message"`
	Delta        *wireMessage  `json:"delta"`
	FinishReason *string       `json:"finish_reason"`
	Logprobs     *wireLogprobs `json:"logprobs"`
}

type wireLogprobs struct {
	Content []TokenLogprob `json:"content"`
}

type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func toWireMessages(msgs []chat.Message) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(msgs))
	for i, m := range msgs {
		content := m.Content
		// A tool message names its tool: llama.cpp's and vLLM's templates
		// read it, and servers that do not take it ignore it.
		w := wireMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == chat.RoleAssistant && m.ReasoningContent != "" {
			w.ReasoningContent = m.ReasoningContent
		}
		for j, c := range m.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("message %d: tool call %d has no name", i, j)
			}
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			} else if !json.Valid(c.Arguments) {
				return nil, fmt.Errorf("message %d: tool call %d %q: arguments are not valid JSON", i, j, c.Name)
			}
			w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
				Function: wireFunction{Name: c.Name, Arguments: args}})
		}
		if len(w.ToolCalls) > 0 && content == "" {
			w.Content = nil // an assistant turn that only calls tools
		}
		out = append(out, w)
	}
	return out, nil
}

func toWireTools(tools []chat.Tool) []wireTool {
	var out []wireTool
	for _, t := range tools {
		out = append(out, wireTool{Type: "function", Function: wireFunctionDef{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return out
}
