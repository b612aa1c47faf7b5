package runtime

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/model/sample"
)

// toolTemplater is implemented by backends that write the tool listing
// into the prompt themselves (OpenAI-compatible servers apply their chat
// template to the tools), so the harness must not render it twice.
type toolTemplater interface {
	AppliesToolTemplate() bool
}

func appliesToolTemplate(m Model) bool {
	t, ok := m.(toolTemplater)
	return ok && t.AppliesToolTemplate()
}

// RemoteModel serves a session from an OpenAI-compatible server (vLLM,
// SGLang, Ollama, llama.cpp's llama-server, a hosted API) through
// model/remote. The answer is streamed, so a server that stops sending
// fails the turn after the client's idle timeout instead of holding it; the
// time to the first piece is the generation's prefill time.
//
// Tools go to the server in its native format (the "tools" field) and the
// server's chat template renders them; calls come back parsed, or, from a
// server whose template has no tool support, as <tool_call> text in the
// content, which the client recovers. A call whose arguments cannot be read
// reaches the turn with its text as a JSON string, so the tool step fails
// with a schema error the model is shown, instead of the whole turn failing.
type RemoteModel struct {
	Client *remote.Client
	// Temperature, when set, is sent instead of 0: a live room decodes
	// greedily, as the in-process engine does, unless told otherwise.
	Temperature *float64
}

// AppliesToolTemplate reports that the server renders the tools itself.
func (RemoteModel) AppliesToolTemplate() bool { return true }

// Generate streams the answer to the prompt and returns the assistant's
// message.
func (m RemoteModel) Generate(ctx context.Context, req Request) (Response, error) {
	if m.Client == nil {
		return Response{}, fmt.Errorf("runtime: remote model has no client")
	}
	temperature := 0.0
	if m.Temperature != nil {
		temperature = *m.Temperature
	}
	r := remote.Request{Messages: toChat(req.Messages), Tools: toChatTools(req.Tools), MaxTokens: req.MaxTokens, Temperature: &temperature}
	if req.MustCall != "" {
		// The server is asked for a call, any of the tools: a function
		// named in tool_choice is read as "auto" by llama-server
		// (ggml-org/llama.cpp#26535), and offering the one tool alone would
		// change the prompt the server's prefix cache holds.
		if !offered(req.Tools, req.MustCall) {
			return Response{}, fmt.Errorf("runtime: the answer must call %q, which is not among the request's tools", req.MustCall)
		}
		r.ToolChoice = "required"
	}
	start := time.Now()
	s, err := m.Client.Stream(ctx, r)
	if err != nil {
		return Response{}, refused(err)
	}
	defer s.Close()
	var first time.Duration
	for {
		_, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Response{}, refused(err)
		}
		if first == 0 {
			first = time.Since(start)
		}
	}
	resp, err := s.Response()
	if err != nil {
		return Response{}, refused(err)
	}
	out := fromChat(resp.Message, Usage{PromptTokens: resp.Usage.PromptTokens, CachedTokens: resp.Usage.CachedTokens,
		CompletionTokens: resp.Usage.CompletionTokens, Prefill: first, Decode: time.Since(start) - first})
	out.ToolCalls = withUnreadableCalls(out.ToolCalls, resp.ToolCallErrors)
	return out, nil
}

// refused marks a failure that is the server refusing the model's own
// answer with ErrAnswerRefused, so the turn asks again instead of giving up.
func refused(err error) error {
	if remote.ErrorKind(err) == remote.KindOutputRejected {
		return fmt.Errorf("%w: %w", ErrAnswerRefused, err)
	}
	return err
}

// withUnreadableCalls puts the calls the client could not read back among
// the others, in the order the model wrote them, with their arguments' text
// as a JSON string: the turn's tool step then fails on the schema and tells
// the model what it sent. A call without a name cannot be attributed to a
// tool and is left out.
func withUnreadableCalls(calls []harness.ToolCall, bad []*remote.ToolCallError) []harness.ToolCall {
	for _, b := range bad {
		if b.Name == "" {
			continue
		}
		c := b.Call()
		calls = slices.Insert(calls, min(b.Index, len(calls)), harness.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return calls
}

// toChat converts harness messages to the model core's chat messages,
// tool-call ids included: a server pairs results with calls by them, and
// the chat template leaves them out of ChatML.
func toChat(msgs []harness.Message) []chat.Message {
	out := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm := chat.Message{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out[i] = cm
	}
	return out
}

func toChatTools(specs []harness.FunctionSpec) []chat.Tool {
	if specs == nil {
		return nil
	}
	out := make([]chat.Tool, len(specs))
	for i, s := range specs {
		out[i] = chat.Tool{Name: s.Function.Name, Description: s.Function.Description, Parameters: s.Function.Parameters}
	}
	return out
}

// fromChat converts an assistant message back, separating reasoning the
// backend left inline in <think>…</think>.
func fromChat(m chat.Message, u Usage) Response {
	content, reasoning := splitThink(m.Content)
	if m.ReasoningContent != "" {
		reasoning = strings.TrimSpace(m.ReasoningContent + "\n" + reasoning)
	}
	r := Response{Content: content, Reasoning: reasoning, Usage: u}
	for _, c := range m.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, harness.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return r
}

// splitThink removes <think>…</think> blocks from text and returns them
// apart; an unclosed block runs to the end (the model was cut off while
// thinking, so nothing after it is speakable).
func splitThink(text string) (content, reasoning string) {
	var c, r strings.Builder
	for {
		i := strings.Index(text, "<think>")
		if i < 0 {
			c.WriteString(text)
			break
		}
		c.WriteString(text[:i])
		rest := text[i+len("<think>"):]
		j := strings.Index(rest, "</think>")
		if j < 0 {
			r.WriteString(rest)
			break
		}
		r.WriteString(rest[:j])
		text = rest[j+len("</think>"):]
	}
	return strings.TrimSpace(c.String()), strings.TrimSpace(r.String())
}

// LocalModel serves a session from the in-process engine: the compact
// model on this machine's CPU (or GPU), batched with every other session.
type LocalModel struct {
	Engine *engine.Engine
	// Sampling chooses how tokens are picked; the zero value is greedy.
	Sampling sample.Config
	// Constrain makes every tool call valid JSON for its schema.
	Constrain bool
}

// AppliesToolTemplate reports that the engine's chat template writes the
// tools into the prompt, as Qwen models were trained to read them.
func (LocalModel) AppliesToolTemplate() bool { return true }

// Generate renders the prompt with the model's chat template and returns
// the assistant's message.
func (m LocalModel) Generate(ctx context.Context, req Request) (Response, error) {
	if m.Engine == nil {
		return Response{}, fmt.Errorf("runtime: local model has no engine")
	}
	tools := toChatTools(req.Tools)
	r := engine.Request{Messages: toChat(req.Messages), Tools: tools, MaxTokens: req.MaxTokens, Sampling: m.Sampling,
		Constrain: m.Constrain && len(tools) > 0, Since: req.Since}
	if r.Constrain && req.CallTools != nil {
		r.CallTools = toChatTools(req.CallTools)
	}
	r.MustCall = req.MustCall
	res, err := m.Engine.Generate(ctx, r, nil)
	if err != nil {
		return Response{}, err
	}
	out := Response{Content: res.Content, Reasoning: res.Reasoning, Usage: Usage{
		PromptTokens: res.Usage.PromptTokens, CachedTokens: res.Usage.CachedTokens, CompletionTokens: res.Usage.CompletionTokens,
		Prefill: res.Usage.Queued + res.Usage.Prefill, Decode: res.Usage.Decode,
	}}
	for _, c := range res.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, harness.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out, nil
}
