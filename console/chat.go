package console

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// Chat-completion limits.
const (
	// maxCompletions bounds the completions the console runs at once.
	maxCompletions = 16
	// maxCompletionTokens bounds a request's max_tokens.
	maxCompletionTokens = 2048
	// streamHeader names the stream when the model field does not.
	streamHeader = "X-LiveHAT-Stream"
	// streamModelPrefix is how the model field names a stream: "stream:<id>".
	streamModelPrefix = "stream:"
)

// chatRoutes serves POST /v1/chat/completions in the OpenAI wire format:
// one turn of a stream's harness (its hooks, tools, persona and catalog)
// answers the last user message. The stream is named in the model field as
// "stream:<id>", or in the X-LiveHAT-Stream header (then model may be
// anything). The caller authenticates like the API (Authorization: Bearer
// lh_…) and must see the stream: a merchant's token drives only that
// merchant's streams. Earlier messages and system messages are not part of
// the turn: the harness writes the system prompt and the stream keeps its
// own context. "user" is the viewer id. With "stream": true the reply
// comes as chat.completion.chunk events, one per speakable chunk, then
// [DONE]. Every response carries a "livehat" object with the turn's trace
// (its timing holds the prompt tokens; no "usage" object is sent, since
// the runtime does not count completion tokens).
func (s *Server) chatRoutes(h *liveHub) {
	sem := make(chan struct{}, maxCompletions)
	v1 := s.app.Group("/v1", openAIErrors, s.authenticate)
	v1.Post("/chat/completions", func(c *fiber.Ctx) error { return h.chatCompletion(c, sem) })
	v1.Use(func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, "no route "+c.Method()+" "+c.Path())
	})
}

// openAIErrors writes errors as OpenAI clients expect them:
// {"error": {"message", "type", "param", "code"}}.
func openAIErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	code, param := fiber.StatusInternalServerError, ""
	var fe *fiber.Error
	var fld *fieldErr
	switch {
	case errors.As(err, &fld):
		code, param = fld.code, fld.field
	case errors.As(err, &fe):
		code = fe.Code
	}
	kind := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		409: "conflict_error", 413: "invalid_request_error", 429: "rate_limit_error"}[code]
	if kind == "" {
		kind = "server_error"
	}
	return c.Status(code).JSON(fiber.Map{"error": fiber.Map{"message": err.Error(), "type": kind, "param": param, "code": nil}})
}

// chatMessage is a message of a chat-completion request; content is a
// string or a list of parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text reads the message's text content.
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", errors.New("content must be a string or a list of {\"type\": \"text\", \"text\"} parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q: only text is supported", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// chatRequest is what the endpoint reads of an OpenAI request; other
// sampling fields are accepted and ignored (the stream's harness and model
// decide), except those it cannot honour, which are errors.
type chatRequest struct {
	Model     string          `json:"model"`
	Messages  []chatMessage   `json:"messages"`
	Stream    bool            `json:"stream"`
	User      string          `json:"user"`
	MaxTokens int             `json:"max_tokens"`
	N         int             `json:"n"`
	Tools     json.RawMessage `json:"tools"`
	Functions json.RawMessage `json:"functions"`
}

// streamOf is the stream id the request names.
func (r *chatRequest) streamOf(header string) (string, error) {
	fromModel, named := strings.CutPrefix(r.Model, streamModelPrefix)
	switch {
	case named && header != "" && header != fromModel:
		return "", badRequest("model", fmt.Sprintf("model names stream %q but %s names %q", fromModel, streamHeader, header))
	case named && strings.TrimSpace(fromModel) != "":
		return strings.TrimSpace(fromModel), nil
	case header != "":
		return header, nil
	}
	return "", badRequest("model", `name the stream: "model": "stream:<stream id>", or the `+streamHeader+" header")
}

// viewerText validates the request and returns the last user message.
func (r *chatRequest) viewerText() (string, error) {
	switch {
	case len(r.Messages) == 0:
		return "", badRequest("messages", "at least one message is required")
	case r.N > 1:
		return "", badRequest("n", "one choice per request")
	case len(r.Tools) > 0 && string(r.Tools) != "null", len(r.Functions) > 0 && string(r.Functions) != "null":
		return "", badRequest("tools", "the stream's harness defines the tools; send none")
	case r.MaxTokens < 0 || r.MaxTokens > maxCompletionTokens:
		return "", badRequest("max_tokens", fmt.Sprintf("want 1 to %d", maxCompletionTokens))
	case len(r.User) > maxViewerID:
		return "", badRequest("user", fmt.Sprintf("longer than %d characters", maxViewerID))
	}
	last := len(r.Messages) - 1
	m := r.Messages[last]
	field := fmt.Sprintf("messages[%d].content", last)
	if m.Role != "user" {
		return "", badRequest(fmt.Sprintf("messages[%d].role", last), "the last message must be the viewer's (role user)")
	}
	text, err := m.text()
	switch {
	case err != nil:
		return "", badRequest(field, err.Error())
	case strings.TrimSpace(text) == "":
		return "", badRequest(field, "the message is empty")
	case len(text) > maxMessageBytes:
		return "", fieldError(fiber.StatusRequestEntityTooLarge, field, fmt.Sprintf("%d bytes is over the %d-byte limit", len(text), maxMessageBytes))
	case strings.ContainsRune(text, 0):
		return "", badRequest(field, "contains a NUL character")
	}
	return text, nil
}

// chatChoice is a choice of a non-streamed completion.
type chatChoice struct {
	Index        int            `json:"index"`
	Message      map[string]any `json:"message"`
	FinishReason string         `json:"finish_reason"`
}

// completionLivehat is the LiveHAT extension of a completion: what the
// turn did.
type completionLivehat struct {
	Stream  string    `json:"stream"`
	Outcome string    `json:"outcome"`
	Turn    turnTrace `json:"turn"`
}

func (h *liveHub) chatCompletion(c *fiber.Ctx, sem chan struct{}) error {
	var req chatRequest
	if err := json.Unmarshal(c.Body(), &req); err != nil {
		return badRequest("body", "not a chat completion request: "+err.Error())
	}
	id, err := req.streamOf(strings.TrimSpace(c.Get(streamHeader)))
	if err != nil {
		return err
	}
	text, err := req.viewerText()
	if err != nil {
		return err
	}
	st, err := h.s.store.Stream(c.UserContext(), scopeOf(c), id)
	if err != nil {
		return storeError(err, "stream")
	}
	select {
	case sem <- struct{}{}:
	default:
		return fiber.NewError(fiber.StatusTooManyRequests, "too many completions at once: retry shortly")
	}
	setup, err := h.setupOf(c.UserContext(), st)
	if err != nil {
		<-sem
		return err
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = 512
	}
	// A session of its own: the turn runs the stream's harness, plugins
	// and catalog without queueing behind (or merging with) live viewers.
	sess, _, modelName, err := h.newSession(h.ctx, st, setup, "", runtime.Config{MaxTokens: maxTokens,
		Context: func() []harness.ContextItem { return setup.context }, CatalogItems: func() []string { return setup.items }})
	if err != nil {
		<-sem
		return err
	}
	events := sess.Listen(256)
	viewer := req.User
	if viewer == "" {
		viewer = "api:" + userOf(c).Username
	}
	if err := sess.Submit(runtime.Message{Viewer: viewer, Text: text}); err != nil {
		sess.Close()
		<-sem
		return badRequest(fmt.Sprintf("messages[%d].content", len(req.Messages)-1), err.Error())
	}
	model := streamModelPrefix + st.ID
	created := time.Now().Unix()
	finish := func(t *runtime.Turn) (turnTrace, string) {
		trace := h.record(st.ID, store.TurnSourceAPI, setup.bound, modelName, t)
		if r := h.existing(st.ID); r != nil {
			r.publish("turn", trace)
		}
		reason := "stop"
		if t.Outcome == runtime.OutcomeDenied {
			reason = "content_filter"
		}
		return trace, reason
	}
	done := func() { sess.Close(); <-sem }
	deadline := time.NewTimer(45 * time.Second)
	if !req.Stream {
		defer done()
		defer deadline.Stop()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return fiber.NewError(fiber.StatusServiceUnavailable, "the session closed before the turn finished")
				}
				if e.Kind == runtime.EventDropped {
					return fiber.NewError(fiber.StatusServiceUnavailable, "the message was dropped: "+e.Reason)
				}
				if e.Kind != runtime.EventTurn {
					continue
				}
				trace, reason := finish(e.Record)
				return c.JSON(fiber.Map{
					"id": "chatcmpl-" + e.Record.ID, "object": "chat.completion", "created": created, "model": model,
					"choices": []chatChoice{{Message: map[string]any{"role": "assistant", "content": e.Record.Reply}, FinishReason: reason}},
					"livehat": completionLivehat{Stream: st.ID, Outcome: string(e.Record.Outcome), Turn: trace},
				})
			case <-deadline.C:
				return fiber.NewError(fiber.StatusGatewayTimeout, "the turn did not finish in time")
			}
		}
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer done()
		defer deadline.Stop()
		base := fiber.Map{"id": "", "object": "chat.completion.chunk", "created": created, "model": model}
		send := func(delta map[string]any, finish any, extra map[string]any) bool {
			ev := fiber.Map{}
			for k, v := range base {
				ev[k] = v
			}
			ev["choices"] = []fiber.Map{{"index": 0, "delta": delta, "finish_reason": finish}}
			for k, v := range extra {
				ev[k] = v
			}
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "data: %s\n\n", b)
			return w.Flush() == nil
		}
		started := false
		var spoken strings.Builder
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				switch e.Kind {
				case runtime.EventChunk:
					base["id"] = "chatcmpl-" + e.Turn
					delta := map[string]any{"content": e.Text}
					if started {
						delta["content"] = joinSpoken(spoken.String(), e.Text)
					} else {
						delta["role"], started = "assistant", true
					}
					spoken.WriteString(delta["content"].(string))
					var extra map[string]any
					if len(e.Actions) > 0 {
						extra = map[string]any{"livehat": fiber.Map{"actions": e.Actions}}
					}
					if !send(delta, nil, extra) {
						return
					}
				case runtime.EventDropped:
					send(map[string]any{"role": "assistant", "content": ""}, "error", map[string]any{"livehat": fiber.Map{"error": "the message was dropped: " + e.Reason}})
					return
				case runtime.EventTurn:
					base["id"] = "chatcmpl-" + e.Record.ID
					trace, reason := finish(e.Record)
					delta := map[string]any{}
					if !started {
						delta["role"], delta["content"] = "assistant", ""
					}
					send(delta, reason, map[string]any{"livehat": completionLivehat{Stream: st.ID, Outcome: string(e.Record.Outcome), Turn: trace}})
					fmt.Fprint(w, "data: [DONE]\n\n")
					_ = w.Flush()
					return
				}
			case <-deadline.C:
				send(map[string]any{}, "error", map[string]any{"livehat": fiber.Map{"error": "the turn did not finish in time"}})
				return
			}
		}
	})
	return nil
}

// joinSpoken returns next as it continues what was said: chunks lose the
// space between English sentences, Chinese needs none.
func joinSpoken(said, next string) string {
	if said == "" || next == "" {
		return next
	}
	last, _ := utf8.DecodeLastRuneInString(said)
	first, _ := utf8.DecodeRuneInString(next)
	if last < 0x2E80 && first < 0x2E80 {
		return " " + next
	}
	return next
}
