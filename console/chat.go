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

// The response wire format, as OpenAI's clients read it. Fields are
// declared in the order the console has always written them (it used to
// build these objects as maps, which encoding/json writes with sorted
// keys), so that the bytes on the wire do not change.

// chatCompletionResponse is a non-streamed completion.
type chatCompletionResponse struct {
	Choices []chatChoice      `json:"choices"`
	Created int64             `json:"created"`
	ID      string            `json:"id"`
	Livehat completionLivehat `json:"livehat"`
	Model   string            `json:"model"`
	Object  string            `json:"object"` // "chat.completion"
}

// chatChoice is a choice of a non-streamed completion.
type chatChoice struct {
	Index        int              `json:"index"`
	Message      assistantMessage `json:"message"`
	FinishReason string           `json:"finish_reason"`
}

// assistantMessage is the reply of a non-streamed completion.
type assistantMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"` // "assistant"
}

// completionLivehat is the LiveHAT extension of a completion: what the
// turn did.
type completionLivehat struct {
	Stream  string    `json:"stream"`
	Outcome string    `json:"outcome"`
	Turn    turnTrace `json:"turn"`
}

// chatCompletionChunk is one server-sent event of a streamed completion.
type chatCompletionChunk struct {
	Choices []chunkChoice `json:"choices"`
	Created int64         `json:"created"`
	ID      string        `json:"id"`
	Livehat *chunkLivehat `json:"livehat,omitempty"`
	Model   string        `json:"model"`
	Object  string        `json:"object"` // "chat.completion.chunk"
}

// chunkChoice is the one choice of a chunk; FinishReason is null until
// the last chunk.
type chunkChoice struct {
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
	Index        int        `json:"index"`
}

// chunkDelta is what a chunk adds to the reply: the role comes with the
// first chunk only, and the last chunk of a turn that said something has
// neither field.
type chunkDelta struct {
	Content *string `json:"content,omitempty"`
	Role    string  `json:"role,omitempty"`
}

// chunkLivehat is the LiveHAT extension of a chunk: the avatar's actions
// with a spoken chunk, why the turn failed, or, with the last chunk, what
// the turn did.
type chunkLivehat struct {
	Actions []runtime.AvatarAction `json:"actions,omitempty"`
	Error   string                 `json:"error,omitempty"`
	*completionLivehat
}

// chatTurn is one completion's turn: its own session of the stream,
// holding one of the endpoint's completion slots until close.
type chatTurn struct {
	h         *liveHub
	st        *store.Stream
	bound     string // the harness version the stream is bound to
	modelName string
	sess      *runtime.Session
	events    <-chan runtime.Event
	sem       chan struct{}
	deadline  *time.Timer
	model     string // the response's model field
	created   int64
}

// chatTurnTimeout bounds a completion's turn.
const chatTurnTimeout = 45 * time.Second

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
	t, err := h.startChatTurn(c, st, &req, text, sem)
	if err != nil {
		return err
	}
	if !req.Stream {
		defer t.close()
		return t.reply(c)
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer t.close()
		t.stream(w)
	})
	return nil
}

// startChatTurn takes a completion slot (429 when none is free), opens a
// session of its own for the turn — it runs the stream's harness, plugins
// and catalog without queueing behind (or merging with) live viewers —
// and submits the viewer's message. On error nothing is left held.
func (h *liveHub) startChatTurn(c *fiber.Ctx, st *store.Stream, req *chatRequest, text string, sem chan struct{}) (t *chatTurn, err error) {
	select {
	case sem <- struct{}{}:
	default:
		return nil, fiber.NewError(fiber.StatusTooManyRequests, "too many completions at once: retry shortly")
	}
	var sess *runtime.Session
	defer func() {
		if err == nil {
			return
		}
		if sess != nil {
			sess.Close()
		}
		<-sem
	}()
	setup, err := h.setupOf(c.UserContext(), st)
	if err != nil {
		return nil, err
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = 512
	}
	sess, _, modelName, err := h.newSession(h.ctx, st, setup, "", runtime.Config{MaxTokens: maxTokens,
		Context: func() []harness.ContextItem { return setup.context }, CatalogItems: func() []string { return setup.items },
		CatalogWords: func() []string { return setup.words }, CatalogVariants: func() []string { return setup.variants }})
	if err != nil {
		return nil, err
	}
	events := sess.Listen(256)
	viewer := req.User
	if viewer == "" {
		viewer = "api:" + userOf(c).Username
	}
	if err := sess.Submit(runtime.Message{Viewer: viewer, Text: text}); err != nil {
		return nil, badRequest(fmt.Sprintf("messages[%d].content", len(req.Messages)-1), err.Error())
	}
	return &chatTurn{h: h, st: st, bound: setup.bound, modelName: modelName, sess: sess, events: events, sem: sem,
		deadline: time.NewTimer(chatTurnTimeout), model: streamModelPrefix + st.ID, created: time.Now().Unix()}, nil
}

// close ends the turn's session and frees its completion slot.
func (t *chatTurn) close() {
	t.deadline.Stop()
	t.sess.Close()
	<-t.sem
}

// finish records the finished turn with the stream's traces, shows it in
// the stream's live view, and returns its trace and finish reason.
func (t *chatTurn) finish(rec *runtime.Turn) (turnTrace, string) {
	trace := t.h.record(t.st.ID, store.TurnSourceAPI, t.bound, t.modelName, rec)
	if r := t.h.existing(t.st.ID); r != nil {
		r.publish("turn", trace)
	}
	reason := "stop"
	if rec.Outcome == runtime.OutcomeDenied {
		reason = "content_filter"
	}
	return trace, reason
}

// reply waits for the turn and answers it as one chat.completion.
func (t *chatTurn) reply(c *fiber.Ctx) error {
	for {
		select {
		case e, ok := <-t.events:
			if !ok {
				return fiber.NewError(fiber.StatusServiceUnavailable, "the session closed before the turn finished")
			}
			if e.Kind == runtime.EventDropped {
				return fiber.NewError(fiber.StatusServiceUnavailable, "the message was dropped: "+e.Reason)
			}
			if e.Kind != runtime.EventTurn {
				continue
			}
			trace, reason := t.finish(e.Record)
			return c.JSON(chatCompletionResponse{
				Choices: []chatChoice{{Message: assistantMessage{Role: "assistant", Content: e.Record.Reply}, FinishReason: reason}},
				Created: t.created, ID: "chatcmpl-" + e.Record.ID, Model: t.model, Object: "chat.completion",
				Livehat: completionLivehat{Stream: t.st.ID, Outcome: string(e.Record.Outcome), Turn: trace},
			})
		case <-t.deadline.C:
			return fiber.NewError(fiber.StatusGatewayTimeout, "the turn did not finish in time")
		}
	}
}

// stream writes the turn as chat.completion.chunk events, one per spoken
// chunk, then the last chunk with the finish reason and [DONE]; a dropped
// message or the deadline ends it with finish reason "error".
func (t *chatTurn) stream(w *bufio.Writer) {
	cw := chunkWriter{w: w, created: t.created, model: t.model}
	for {
		select {
		case e, ok := <-t.events:
			if !ok {
				return
			}
			switch e.Kind {
			case runtime.EventChunk:
				if !cw.write(cw.spokenChunk(e)) {
					return
				}
			case runtime.EventDropped:
				cw.write(cw.failed("the message was dropped: "+e.Reason, true))
				return
			case runtime.EventTurn:
				cw.id = "chatcmpl-" + e.Record.ID
				trace, reason := t.finish(e.Record)
				cw.write(cw.last(reason, &completionLivehat{Stream: t.st.ID, Outcome: string(e.Record.Outcome), Turn: trace}))
				fmt.Fprint(w, "data: [DONE]\n\n")
				_ = w.Flush()
				return
			}
		case <-t.deadline.C:
			cw.write(cw.failed("the turn did not finish in time", false))
			return
		}
	}
}

// chunkWriter turns a turn's events into chunks and writes them as
// server-sent events. The id is the turn's, once an event named it.
type chunkWriter struct {
	w       *bufio.Writer
	id      string
	created int64
	model   string
	started bool // the role was sent
	spoken  strings.Builder
}

// chunk is a chunk of the completion with one choice.
func (cw *chunkWriter) chunk(delta chunkDelta, finish *string, lh *chunkLivehat) chatCompletionChunk {
	return chatCompletionChunk{Choices: []chunkChoice{{Delta: delta, FinishReason: finish}}, Created: cw.created, ID: cw.id,
		Livehat: lh, Model: cw.model, Object: "chat.completion.chunk"}
}

// spokenChunk is the chunk of a spoken piece of the reply, joined to what
// was said before it, with the avatar's actions.
func (cw *chunkWriter) spokenChunk(e runtime.Event) chatCompletionChunk {
	cw.id = "chatcmpl-" + e.Turn
	text := e.Text
	var delta chunkDelta
	if cw.started {
		text = joinSpoken(cw.spoken.String(), e.Text)
	} else {
		delta.Role, cw.started = "assistant", true
	}
	delta.Content = &text
	cw.spoken.WriteString(text)
	var lh *chunkLivehat
	if len(e.Actions) > 0 {
		lh = &chunkLivehat{Actions: e.Actions}
	}
	return cw.chunk(delta, nil, lh)
}

// last is the turn's last chunk: the role and an empty content when
// nothing was said before it.
func (cw *chunkWriter) last(reason string, done *completionLivehat) chatCompletionChunk {
	var delta chunkDelta
	if !cw.started {
		empty := ""
		delta = chunkDelta{Role: "assistant", Content: &empty}
	}
	return cw.chunk(delta, &reason, &chunkLivehat{completionLivehat: done})
}

// failed is the chunk that ends a turn that failed; withRole sends the
// role and an empty content along.
func (cw *chunkWriter) failed(why string, withRole bool) chatCompletionChunk {
	var delta chunkDelta
	if withRole {
		empty := ""
		delta = chunkDelta{Role: "assistant", Content: &empty}
	}
	reason := "error"
	return cw.chunk(delta, &reason, &chunkLivehat{Error: why})
}

// write sends a chunk as one server-sent event; false means the client
// is gone.
func (cw *chunkWriter) write(ch chatCompletionChunk) bool {
	b, _ := json.Marshal(ch)
	fmt.Fprintf(cw.w, "data: %s\n\n", b)
	return cw.w.Flush() == nil
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
