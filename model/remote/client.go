// Package remote is a client for OpenAI-compatible chat-completions servers
// (vLLM, SGLang, Ollama, hosted APIs), so that a model served elsewhere can
// answer with the same chat types as the local engine: tools, streaming,
// logprobs where the server offers them, retries on overload.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/model/chat"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the server's address, such as "http://localhost:8000";
	// requests go to BaseURL + "/v1/chat/completions" (a BaseURL that already
	// ends in "/v1" is not doubled).
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Model is used when a Request names none.
	Model string
	// Header holds extra headers for every request.
	Header http.Header
	// Timeout bounds one attempt of a non-streaming request, and the wait for
	// a stream's response headers; 0 means 60 s.
	Timeout time.Duration
	// StreamIdleTimeout bounds the silence between two chunks of a stream;
	// 0 means 60 s.
	StreamIdleTimeout time.Duration
	// MaxRetries is how many times a request is retried after a 429, a 5xx
	// or a failed connection; 0 means 2, negative means never.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential wait between retries
	// when the server sends no Retry-After; 0 means 500 ms and 20 s.
	MinBackoff, MaxBackoff time.Duration
	// HTTPClient sends the requests; nil means a client without its own
	// timeout (the timeouts above apply).
	HTTPClient *http.Client
	// NoStreamUsage leaves out stream_options.include_usage, for servers
	// that reject it; streamed responses then carry no Usage.
	NoStreamUsage bool
	// MaxConcurrent bounds the requests in flight at once (a stream counts
	// until it ends); others wait for a slot, within their context. 0 means
	// no bound.
	MaxConcurrent int
	// OnAttempt, when set, is called after every HTTP exchange with its
	// outcome (metrics count them). It must not block.
	OnAttempt func(Attempt)
}

// Client talks to one chat-completions server. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	// sleep waits between retries; tests replace it to observe the waits.
	sleep func(ctx context.Context, d time.Duration) error
	// slots holds a token per request in flight when MaxConcurrent is set.
	slots chan struct{}
	// ids remembers the server's tool-call ids (assignIDs).
	ids *idMemory
}

// New returns a client for cfg. It fails when BaseURL is missing.
func New(cfg Config) (*Client, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		return nil, errors.New("remote: no base URL")
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("remote: base URL %q: want http:// or https://", cfg.BaseURL)
	}
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.StreamIdleTimeout == 0 {
		cfg.StreamIdleTimeout = 60 * time.Second
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 20 * time.Second
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c := &Client{cfg: cfg, endpoint: base + "/chat/completions", http: hc, sleep: sleepContext, ids: &idMemory{}}
	if cfg.MaxConcurrent < 0 {
		return nil, fmt.Errorf("remote: MaxConcurrent %d: want 0 (no bound) or more", cfg.MaxConcurrent)
	}
	if cfg.MaxConcurrent > 0 {
		c.slots = make(chan struct{}, cfg.MaxConcurrent)
	}
	return c, nil
}

// Request is one chat completion to ask for. Optional sampling settings are
// pointers so that the server's defaults apply when they are nil.
type Request struct {
	// Model overrides Config.Model.
	Model string
	// Messages is the conversation so far.
	Messages []chat.Message
	// Tools the model may call, sent as {"type": "function", ...}.
	Tools []chat.Tool
	// ToolChoice is "auto", "none" or "required"; empty leaves it to the server.
	ToolChoice string
	// Temperature and TopP are the sampling settings of the same names.
	Temperature, TopP *float64
	// MaxTokens bounds the answer's length; 0 leaves it to the server.
	MaxTokens int
	// Stop lists strings that end the answer.
	Stop []string
	// Seed asks servers that support it for reproducible sampling.
	Seed *int64
	// PresencePenalty and FrequencyPenalty discourage repeated tokens.
	PresencePenalty, FrequencyPenalty *float64
	// Logprobs asks for the log-probability of each generated token, and
	// TopLogprobs for that many alternatives at each position.
	Logprobs    bool
	TopLogprobs int
}

// Usage counts the tokens of a completion, as the server reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens is how many prompt tokens the server took from its
	// prefix cache (prompt_tokens_details.cached_tokens, or llama-server's
	// timings.cache_n), when it says.
	CachedTokens int `json:"-"`
}

// TokenLogprob is a generated token with its log-probability.
type TokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	// Bytes is the token's UTF-8 bytes, when the server sends them.
	Bytes []int `json:"bytes,omitempty"`
	// TopLogprobs are the most likely tokens at this position.
	TopLogprobs []TopLogprob `json:"top_logprobs,omitempty"`
}

// TopLogprob is one alternative token at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}

// Response is a finished completion.
type Response struct {
	// ID and Model are the server's names for the completion and the model.
	ID, Model string
	// Message is the assistant's turn: content, reasoning and tool calls.
	Message chat.Message
	// FinishReason is the server's: "stop", "length", "tool_calls", ...
	FinishReason string
	// Usage is the server's token count; streams carry it only when the
	// server honours stream_options.include_usage.
	Usage Usage
	// Logprobs has one entry per generated token when Request.Logprobs was
	// set and the server supports it.
	Logprobs []TokenLogprob
	// ToolCallErrors are the calls that could not be read (left out of
	// Message.ToolCalls), each with what is wrong.
	ToolCallErrors []*ToolCallError
	// RecoveredToolCalls is true when the calls were parsed out of the
	// content because the server passed them through as text.
	RecoveredToolCalls bool
}

// APIError is an error status from the server.
type APIError struct {
	// StatusCode is the HTTP status; 0 for an error sent inside a stream.
	StatusCode int
	// Message, Type and Code are the server's error fields, when it sent them.
	Message, Type, Code string

	retryAfter time.Duration // the server's Retry-After
}

// Error names the status and the server's message.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("remote: server answered ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		b.WriteString("with an error in the stream")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " (type %q, code %q)", e.Type, e.Code)
	}
	return b.String()
}

// outputRejected reports whether the server says its parser refused what
// the model generated. llama-server sends no code of its own for it, only
// the parser's message, under a 500; these are its wordings since the
// peg parser (3.x) and before it.
func (e *APIError) outputRejected() bool {
	status := e.StatusCode == 0 || e.StatusCode == http.StatusOK || e.StatusCode == http.StatusInternalServerError
	return status && (strings.Contains(e.Message, "produced output that does not match the expected") ||
		strings.HasPrefix(e.Message, "Failed to parse input at pos"))
}

// retryable reports whether a status may succeed when sent again.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// maxResponseBytes bounds a non-streamed response, so a broken server cannot
// make the client buffer without end.
const maxResponseBytes = 64 << 20

// Complete sends req and waits for the whole answer.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	body, err := c.encode(req, false)
	if err != nil {
		return nil, err
	}
	var out *Response
	err = c.withRetries(ctx, false, func(ctx context.Context) (int, error) {
		release, err := c.acquire(ctx)
		if err != nil {
			return 0, err
		}
		defer release()
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		resp, err := c.post(ctx, body)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, readAPIError(resp)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		if err != nil {
			return resp.StatusCode, fmt.Errorf("remote: reading the response: %w", err)
		}
		if len(data) > maxResponseBytes {
			return resp.StatusCode, &permanentError{&malformedError{fmt.Errorf("remote: response longer than %d bytes", maxResponseBytes)}}
		}
		out, err = decodeResponse(data)
		if err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				return resp.StatusCode, err // an error inside a 200: the server's, maybe passing
			}
			return resp.StatusCode, &permanentError{&malformedError{err}}
		}
		return resp.StatusCode, nil
	})
	if err != nil {
		return nil, err
	}
	c.finish(out, len(req.Tools) > 0)
	return out, nil
}

// finish recovers tool calls written in the content when tools were
// offered and the server parsed none, and remembers the calls' ids.
func (c *Client) finish(r *Response, offeredTools bool) {
	if offeredTools && len(r.Message.ToolCalls) == 0 && len(r.ToolCallErrors) == 0 &&
		strings.Contains(r.Message.Content, chat.ToolCallOpen) {
		text, calls, errs := ParseContentToolCalls(r.Message.Content)
		r.Message.Content, r.Message.ToolCalls, r.ToolCallErrors = text, calls, errs
		r.RecoveredToolCalls = true
	}
	c.ids.remember(r.Message.ToolCalls)
	for _, bad := range r.ToolCallErrors {
		c.ids.remember([]chat.ToolCall{bad.Call()})
	}
}

// acquire takes a slot of MaxConcurrent, waiting within ctx; release gives
// it back.
func (c *Client) acquire(ctx context.Context) (release func(), err error) {
	if c.slots == nil {
		return func() {}, nil
	}
	select {
	case c.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-c.slots }) }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("remote: waiting for one of %d request slots: %w", c.cfg.MaxConcurrent, context.Cause(ctx))
	}
}

func (c *Client) encode(req Request, stream bool) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return nil, errors.New("remote: request names no model and the client has no default")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("remote: request has no messages")
	}
	msgs, err := toWireMessages(assignIDs(req.Messages, c.ids))
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	w := wireRequest{
		Model: model, Messages: msgs, Tools: toWireTools(req.Tools), ToolChoice: req.ToolChoice,
		Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxTokens, Stop: req.Stop, Seed: req.Seed,
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		Logprobs: req.Logprobs || req.TopLogprobs > 0, TopLogprobs: req.TopLogprobs, Stream: stream,
	}
	if stream && !c.cfg.NoStreamUsage {
		w.StreamOptions = &wireStreamOption{IncludeUsage: true}
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("remote: encoding the request: %w", err)
	}
	return body, nil
}

func (c *Client) post(ctx context.Context, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &permanentError{fmt.Errorf("remote: %w", err)}
	}
	for k, vs := range c.cfg.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("remote: POST %s: %w", c.endpoint, err)
	}
	return resp, nil
}

// permanentError marks a failure that sending again would not fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// withRetries runs attempt until it succeeds, fails for good, or the retries
// run out. Retried are *APIError with a retryable status, waiting as long as
// the server's Retry-After asks, and failed connections or attempt timeouts.
// attempt returns the HTTP status it got (0 for none). A final failure is an
// *Error that names its kind and the attempts made; each attempt is reported
// to Config.OnAttempt.
// A stream's successful attempt is reported by the stream when it ends.
func (c *Client) withRetries(ctx context.Context, streaming bool, attempt func(ctx context.Context) (int, error)) error {
	// prev is the failure that made this attempt a retry. When the caller's
	// deadline cuts a retry short, prev is the cause worth naming: an
	// overloaded server stays a server error, not a timeout of ours. A
	// cancellation stays a cancellation.
	var prev error
	for try := 0; ; try++ {
		start := time.Now()
		status, err := attempt(ctx)
		report := func(retry bool) {
			if c.cfg.OnAttempt != nil {
				c.cfg.OnAttempt(Attempt{Kind: ErrorKind(err), Status: status, Took: time.Since(start), Retry: retry})
			}
		}
		fail := func(err error) error {
			report(false)
			return &Error{Kind: ErrorKind(err), Attempts: try + 1, Err: err}
		}
		if err == nil {
			if !streaming {
				report(false)
			}
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return fail(perm.err)
		}
		if ctx.Err() != nil {
			if prev != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				report(false)
				return &Error{Kind: ErrorKind(prev), Attempts: try + 1,
					Err: fmt.Errorf("remote: %w; the retry after it ended with %v", prev, context.Cause(ctx))}
			}
			return fail(fmt.Errorf("remote: %w (last attempt: %v)", context.Cause(ctx), err))
		}
		var wait time.Duration
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			// A refused answer comes back the same when the request does.
			if !retryable(apiErr.StatusCode) || apiErr.outputRejected() {
				return fail(err)
			}
			wait = apiErr.retryAfter
		}
		if try >= c.cfg.MaxRetries {
			return fail(err)
		}
		if wait == 0 {
			wait = c.backoff(try)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return fail(fmt.Errorf("remote: giving up, the retry in %v would pass the deadline: %w", wait, err))
		}
		report(true)
		prev = err
		if serr := c.sleep(ctx, wait); serr != nil {
			err = fmt.Errorf("remote: waiting to retry: %w (last attempt: %v)", serr, err)
			return &Error{Kind: ErrorKind(serr), Attempts: try + 1, Err: err}
		}
	}
}

// backoff is the wait before retry number try+1: exponential, with jitter so
// that many clients turned away together do not return together.
func (c *Client) backoff(try int) time.Duration {
	d := c.cfg.MinBackoff << min(try, 20)
	if d > c.cfg.MaxBackoff || d <= 0 {
		d = c.cfg.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// readAPIError reads an error response, understanding the OpenAI shape
// {"error": {"message": ...}} and the other shapes servers use.
func readAPIError(resp *http.Response) *APIError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{StatusCode: resp.StatusCode, retryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var body struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal(data, &body) == nil {
		var we wireError
		var s string
		switch {
		case json.Unmarshal(body.Error, &we) == nil && we.Message != "":
			e.Message, e.Type, e.Code = we.Message, we.Type, codeText(we.Code)
			return e
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			e.Message = s
			return e
		case json.Unmarshal(body.Detail, &s) == nil && s != "":
			e.Message = s
			return e
		case len(body.Detail) > 0:
			e.Message = string(body.Detail)
			return e
		case body.Msg != "":
			e.Message = body.Msg
			return e
		}
	}
	e.Message = strings.TrimSpace(string(data))
	if len(e.Message) > 300 {
		e.Message = e.Message[:300] + "…"
	}
	return e
}

// codeText renders an error code, which servers send as a string or number.
func codeText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func decodeResponse(data []byte) (*Response, error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("remote: response is not valid JSON: %w", err)
	}
	if w.Error != nil {
		return nil, &APIError{StatusCode: http.StatusOK, Message: w.Error.Message, Type: w.Error.Type, Code: codeText(w.Error.Code)}
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil {
		return nil, errors.New("remote: response has no choices[0].message")
	}
	ch := w.Choices[0]
	out := &Response{ID: w.ID, Model: w.Model, Message: chat.Message{Role: chat.RoleAssistant}}
	m := ch.Message
	if m.Content != nil {
		out.Message.Content = *m.Content
	}
	out.Message.ReasoningContent = m.ReasoningContent + m.Reasoning
	for i, tc := range m.ToolCalls {
		call, bad := callFromWire(i, tc)
		if bad != nil {
			out.ToolCallErrors = append(out.ToolCallErrors, bad)
			continue
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, call)
	}
	if ch.FinishReason != nil {
		out.FinishReason = *ch.FinishReason
	}
	out.Usage = w.usage()
	if ch.Logprobs != nil {
		out.Logprobs = ch.Logprobs.Content
	}
	return out, nil
}
