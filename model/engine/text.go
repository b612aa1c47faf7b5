package engine

import (
	"bytes"
	"strings"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/model/tokenizer"
)

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// opensThink reports whether a rendered prompt leaves the assistant inside
// an open <think> block (templates that force reasoning end with it), so
// that the reply starts as reasoning without writing the tag itself.
func opensThink(prompt string) bool {
	return strings.HasSuffix(strings.TrimRight(prompt, " \n"), thinkOpen)
}

// replyText turns generated tokens into the streamed pieces of a reply:
// bytes become text once their characters are complete, stop strings end the
// reply, the <think> block becomes reasoning, and tool calls are cut out of
// the content as they complete.
type replyText struct {
	tok     *tokenizer.Tokenizer
	special []bool
	dec     *tokenizer.StreamDecoder
	stops   *sample.StopMatcher
	think   thinkSplitter
	calls   chat.ToolCallScanner
	stopped bool

	// raw is every byte of the reply so far (special tokens excepted),
	// ahead of what the holding stages have let through; the tool-call
	// constraint follows it.
	raw []byte
	// rawThinking is the reasoning state raw starts in.
	rawThinking bool
	// written collects the text the stop matcher let through; content and
	// reasoning split it as the think splitter did.
	written, content, reasoning strings.Builder
}

func newReplyText(tok *tokenizer.Tokenizer, special []bool, stops []string, thinking bool) *replyText {
	t := &replyText{
		tok:         tok,
		special:     special,
		dec:         tok.NewStreamDecoder(),
		stops:       sample.NewStopMatcher(stops),
		rawThinking: thinking,
	}
	if thinking {
		t.think.state = inReasoning
	}
	return t
}

// pushToken adds a generated token. Special tokens carry no text.
func (t *replyText) pushToken(id int) (deltas []Delta, stopped bool) {
	if id >= 0 && id < len(t.special) && t.special[id] {
		return nil, t.stopped
	}
	t.raw = append(t.raw, t.tok.TokenBytes(id)...)
	return t.emit(t.dec.Next(id))
}

// pushText adds text the reply is forced to contain.
func (t *replyText) pushText(s string) (deltas []Delta, stopped bool) {
	t.raw = append(t.raw, s...)
	return t.emit(s)
}

func (t *replyText) emit(s string) ([]Delta, bool) {
	if t.stopped {
		return nil, true
	}
	out, stopped := t.stops.Push(s)
	t.stopped = stopped
	t.written.WriteString(out)
	reasoning, content := t.think.push(out)
	return t.route(nil, reasoning, content), stopped
}

// finish ends the reply and returns the pieces still held back.
func (t *replyText) finish() []Delta {
	var out string
	if !t.stopped {
		out, t.stopped = t.stops.Push(t.dec.Flush())
		if !t.stopped {
			out += t.stops.Flush()
		}
	}
	t.written.WriteString(out)
	reasoning, content := t.think.push(out)
	r2, c2 := t.think.flush()
	deltas := t.route(nil, reasoning+r2, content+c2)
	// A call left open is reported by the Result's ToolCallError; the
	// stream only gets the plain text still held back.
	events, _ := t.calls.Close()
	return appendEvents(deltas, events)
}

func (t *replyText) route(deltas []Delta, reasoning, content string) []Delta {
	if reasoning != "" {
		t.reasoning.WriteString(reasoning)
		deltas = append(deltas, Delta{Reasoning: reasoning})
	}
	if content != "" {
		t.content.WriteString(content)
		// A malformed call is reported by the Result; the stream drops it.
		events, _ := t.calls.Write(content)
		deltas = appendEvents(deltas, events)
	}
	return deltas
}

func appendEvents(deltas []Delta, events []chat.Event) []Delta {
	for _, ev := range events {
		switch {
		case ev.Call != nil:
			deltas = append(deltas, Delta{ToolCall: ev.Call})
		case ev.Text == "":
		case len(deltas) > 0 && deltas[len(deltas)-1].Content != "":
			deltas[len(deltas)-1].Content += ev.Text
		default:
			deltas = append(deltas, Delta{Content: ev.Text})
		}
	}
	return deltas
}

// result fills the reply's parts of a Result from everything let through.
func (t *replyText) result(r *Result) {
	r.Text = t.written.String()
	r.Reasoning = strings.TrimSpace(t.reasoning.String())
	content, calls, err := chat.ParseAssistant(t.content.String())
	if err != nil {
		r.Content = strings.TrimSpace(t.content.String())
		r.ToolCallError = err
		return
	}
	r.Content, r.ToolCalls = content, calls
}

// contentStart returns the offset in raw where the answer after the
// reasoning begins, or -1 while the reply may still be reasoning.
func (t *replyText) contentStart() int {
	s, off := t.raw, 0
	if !t.rawThinking {
		trimmed := bytes.TrimLeft(s, " \t\r\n")
		if !bytes.HasPrefix(trimmed, []byte(thinkOpen)) {
			if len(trimmed) < len(thinkOpen) && bytes.HasPrefix([]byte(thinkOpen), trimmed) {
				return -1
			}
			return 0
		}
		off = len(s) - len(trimmed) + len(thinkOpen)
		s = s[off:]
	}
	i := bytes.Index(s, []byte(thinkClose))
	if i < 0 {
		return -1
	}
	return off + i + len(thinkClose)
}

// Think splitter states.
const (
	undecided   = iota // the reply may still open with <think>
	inReasoning        // inside the <think> block
	inContent          // after it, or the reply has none
)

// thinkSplitter separates a reply's leading <think>…</think> block from
// the answer as text streams in.
type thinkSplitter struct {
	state int
	held  string
}

func (s *thinkSplitter) push(text string) (reasoning, content string) {
	switch s.state {
	case undecided:
		s.held += text
		t := strings.TrimLeft(s.held, " \t\r\n")
		switch {
		case strings.HasPrefix(t, thinkOpen):
			s.state, s.held = inReasoning, ""
			return s.push(t[len(thinkOpen):])
		case strings.HasPrefix(thinkOpen, t):
			return "", ""
		}
		s.state = inContent
		content, s.held = s.held, ""
		return "", content
	case inReasoning:
		s.held += text
		if i := strings.Index(s.held, thinkClose); i >= 0 {
			reasoning, content = s.held[:i], s.held[i+len(thinkClose):]
			s.state, s.held = inContent, ""
			return reasoning, content
		}
		keep := partialSuffix(s.held, thinkClose)
		reasoning, s.held = s.held[:len(s.held)-keep], s.held[len(s.held)-keep:]
		return reasoning, ""
	default:
		return "", text
	}
}

// flush returns what is held back at the end of the reply: an unfinished
// <think> block counts as reasoning.
func (s *thinkSplitter) flush() (reasoning, content string) {
	held := s.held
	s.held = ""
	if s.state == inReasoning {
		return held, ""
	}
	return "", held
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
