package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/model/chat"
)

// Delta is one streamed piece of the answer.
type Delta struct {
	// Content is the next piece of the answer's text.
	Content string
	// Reasoning is the next piece of the thinking text, from servers that
	// separate it.
	Reasoning string
	// ToolCalls are pieces of tool calls; Stream.Response has them assembled.
	ToolCalls []ToolCallDelta
	// Logprobs are those of the tokens in this piece, when asked for.
	Logprobs []TokenLogprob
}

// ToolCallDelta is a piece of the tool call at Index: its id and name come
// once, its arguments in fragments to be concatenated.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Stream is a completion arriving as server-sent events. Recv returns its
// pieces until io.EOF; Response then has the whole answer. A Stream is used by
// one goroutine; Close may be called from any.
type Stream struct {
	body   io.ReadCloser
	r      *bufio.Reader
	cancel context.CancelCauseFunc
	ctx    context.Context
	idle   *time.Timer
	idleD  time.Duration

	client   *Client
	tools    bool // the request offered tools (Client.finish)
	start    time.Time
	release  func() // gives back the MaxConcurrent slot
	reported sync.Once

	resp     Response
	content  strings.Builder
	thinking strings.Builder
	calls    []wireToolCall
	finished bool // a finish_reason arrived
	done     bool // [DONE] or end after a finish_reason
	err      error
	close    sync.Once
}

var (
	errHeaderTimeout = errors.New("no response headers within the timeout")
	errIdleTimeout   = errors.New("stream idle for longer than the timeout")
	errClosed        = errors.New("stream closed")
)

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

// maxEventBytes bounds one server-sent event, so a broken server cannot make
// the client buffer without end.
const maxEventBytes = 4 << 20

// Stream sends req with "stream": true and returns the stream once the server
// has accepted it. Refusals (429, 5xx) before that are retried like Complete;
// once streaming, a failure ends the stream with an error. The caller must
// Close the stream.
func (c *Client) Stream(ctx context.Context, req Request) (*Stream, error) {
	body, err := c.encode(req, true)
	if err != nil {
		return nil, err
	}
	var s *Stream
	err = c.withRetries(ctx, true, func(ctx context.Context) (int, error) {
		start := time.Now()
		release, err := c.acquire(ctx)
		if err != nil {
			return 0, err
		}
		sctx, cancel := context.WithCancelCause(ctx)
		headers := time.AfterFunc(c.cfg.Timeout, func() { cancel(errHeaderTimeout) })
		resp, err := c.post(sctx, body)
		if !headers.Stop() { // the timer fired, even if headers came just after
			if err == nil {
				resp.Body.Close()
			}
			cancel(nil)
			release()
			return 0, fmt.Errorf("remote: POST %s: %w (%v)", c.endpoint, errHeaderTimeout, c.cfg.Timeout)
		}
		if err != nil {
			cancel(nil)
			release()
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			defer release()
			defer cancel(nil)
			defer resp.Body.Close()
			return resp.StatusCode, readAPIError(resp)
		}
		s = &Stream{body: resp.Body, r: newReader(resp.Body), cancel: cancel, ctx: sctx,
			idleD: c.cfg.StreamIdleTimeout, client: c, tools: len(req.Tools) > 0, start: start, release: release}
		s.idle = time.AfterFunc(s.idleD, func() { cancel(errIdleTimeout) })
		return resp.StatusCode, nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Recv returns the next piece of the answer, io.EOF at the end of the
// stream, or an error that names what went wrong (a malformed chunk, an error
// event from the server, a timeout, cancellation).
func (s *Stream) Recv() (Delta, error) {
	if s.err != nil {
		return Delta{}, s.err
	}
	if s.done {
		return Delta{}, io.EOF
	}
	for {
		data, err := s.readEvent()
		if err != nil {
			if err == io.EOF && s.finished {
				s.done = true
				s.report(KindOK)
				return Delta{}, io.EOF
			}
			if err == io.EOF {
				err = fmt.Errorf("remote: stream ended before [DONE]: %w", io.ErrUnexpectedEOF)
			}
			s.fail(err)
			return Delta{}, s.err
		}
		if data == "[DONE]" {
			s.done = true
			s.report(KindOK)
			return Delta{}, io.EOF
		}
		d, ok, err := s.apply(data)
		if err != nil {
			s.fail(err)
			return Delta{}, s.err
		}
		if ok {
			return d, nil
		}
	}
}

// fail ends the stream with err, classified as an *Error of one attempt:
// a stream is not retried once it has started, since its pieces were
// passed on.
func (s *Stream) fail(err error) {
	kind := ErrorKind(err)
	s.err = &Error{Kind: kind, Attempts: 1, Err: err}
	s.report(kind)
	s.Close()
}

// report tells Config.OnAttempt how the stream's exchange ended, once.
func (s *Stream) report(kind Kind) {
	s.reported.Do(func() {
		if s.client != nil && s.client.cfg.OnAttempt != nil {
			s.client.cfg.OnAttempt(Attempt{Kind: kind, Status: http.StatusOK, Took: time.Since(s.start)})
		}
	})
}

// readEvent returns the data of the next server-sent event that has any.
func (s *Stream) readEvent() (string, error) {
	var data []string
	size := 0
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && len(data) > 0 {
				return strings.Join(data, "\n"), nil
			}
			return "", err
		}
		s.idle.Reset(s.idleD)
		if line == "" {
			if len(data) > 0 {
				return strings.Join(data, "\n"), nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, which servers send to keep the connection alive
		}
		if line[0] == '{' {
			// A bare JSON line: some servers answer a stream request with a
			// plain JSON error body and status 200.
			return line, nil
		}
		field, value, _ := strings.Cut(line, ":")
		if field != "data" {
			continue // event, id, retry
		}
		value = strings.TrimPrefix(value, " ")
		if size += len(value); size > maxEventBytes {
			return "", fmt.Errorf("remote: stream event longer than %d bytes", maxEventBytes)
		}
		data = append(data, value)
	}
}

// readLine reads one line without its line ending, mapping read failures to
// the reason the stream's context gives.
func (s *Stream) readLine() (string, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxEventBytes {
			return "", fmt.Errorf("remote: stream line longer than %d bytes", maxEventBytes)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if cause := context.Cause(s.ctx); cause != nil {
				if errors.Is(cause, errIdleTimeout) {
					return "", fmt.Errorf("remote: %w (%v)", cause, s.idleD)
				}
				return "", fmt.Errorf("remote: stream interrupted: %w", cause)
			}
			if err == io.EOF && len(buf) > 0 {
				return string(bytes.TrimRight(buf, "\r\n")), nil
			}
			if err != io.EOF {
				return "", fmt.Errorf("remote: reading the stream: %w", err)
			}
			return "", io.EOF
		}
		return string(bytes.TrimRight(buf, "\r\n")), nil
	}
}

// apply folds one chunk into the stream's response and returns its delta;
// ok is false for chunks that carry nothing to pass on, such as usage.
func (s *Stream) apply(data string) (d Delta, ok bool, err error) {
	var w wireResponse
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		return Delta{}, false, &malformedError{fmt.Errorf("remote: malformed stream chunk %.100q: %w", data, err)}
	}
	if w.Error != nil {
		return Delta{}, false, &APIError{Message: w.Error.Message, Type: w.Error.Type, Code: codeText(w.Error.Code)}
	}
	if w.ID != "" {
		s.resp.ID = w.ID
	}
	if w.Model != "" {
		s.resp.Model = w.Model
	}
	if w.Usage != nil || w.Timings != nil {
		s.resp.Usage = w.usage()
	}
	if len(w.Choices) == 0 {
		return Delta{}, false, nil
	}
	ch := w.Choices[0]
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		s.resp.FinishReason = *ch.FinishReason
		s.finished = true
	}
	if ch.Logprobs != nil {
		d.Logprobs = ch.Logprobs.Content
		s.resp.Logprobs = append(s.resp.Logprobs, d.Logprobs...)
	}
	if m := ch.Delta; m != nil {
		if m.Content != nil {
			d.Content = *m.Content
			s.content.WriteString(d.Content)
		}
		d.Reasoning = m.ReasoningContent + m.Reasoning
		s.thinking.WriteString(d.Reasoning)
		for _, tc := range m.ToolCalls {
			td, err := s.addToolCall(tc)
			if err != nil {
				return Delta{}, false, err
			}
			d.ToolCalls = append(d.ToolCalls, td)
		}
	}
	ok = d.Content != "" || d.Reasoning != "" || len(d.ToolCalls) > 0 || len(d.Logprobs) > 0
	return d, ok, nil
}

// addToolCall merges a tool-call fragment into the call at its index. A
// fragment without an index continues the last call unless it brings a new
// id, as some servers send whole calls that way.
func (s *Stream) addToolCall(tc wireToolCall) (ToolCallDelta, error) {
	var i int
	switch {
	case tc.Index != nil:
		i = *tc.Index
	case len(s.calls) == 0 || (tc.ID != "" && tc.ID != s.calls[len(s.calls)-1].ID):
		i = len(s.calls)
	default:
		i = len(s.calls) - 1
	}
	// Calls are numbered from 0 in order; a gap would be a server bug, and
	// a huge index must not make the client allocate.
	if i < 0 || i > len(s.calls) {
		return ToolCallDelta{}, &malformedError{fmt.Errorf("remote: tool call index %d in the stream, want 0..%d", i, len(s.calls))}
	}
	if i == len(s.calls) {
		s.calls = append(s.calls, wireToolCall{})
	}
	call := &s.calls[i]
	if tc.ID != "" {
		call.ID = tc.ID
	}
	if n := tc.Function.Name; n != "" && n != call.Function.Name {
		call.Function.Name += n
	}
	call.Function.Arguments += tc.Function.Arguments
	return ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}, nil
}

// Response returns the whole answer once Recv has returned io.EOF, with the
// tool calls assembled (calls that cannot be read are in ToolCallErrors)
// and, when the request offered tools and the server parsed none, the calls
// written in the content recovered.
func (s *Stream) Response() (*Response, error) {
	if !s.done {
		return nil, errors.New("remote: stream not finished")
	}
	out := s.resp
	out.Message = chat.Message{Role: chat.RoleAssistant, Content: s.content.String(), ReasoningContent: s.thinking.String()}
	for i, wc := range s.calls {
		call, bad := callFromWire(i, wc)
		if bad != nil {
			out.ToolCallErrors = append(out.ToolCallErrors, bad)
			continue
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, call)
	}
	if s.client != nil {
		s.client.finish(&out, s.tools)
	}
	return &out, nil
}

// Close ends the stream and releases the connection.
func (s *Stream) Close() error {
	s.close.Do(func() {
		s.report(KindCanceled) // closed before its end by the caller
		s.idle.Stop()
		s.cancel(errClosed)
		s.body.Close()
		if s.release != nil {
			s.release()
		}
	})
	return nil
}
