package engine

import (
	"bytes"
	"fmt"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/constrain"
)

// callGuard applies the tool-call constraint to one reply: it watches the
// reply's bytes for <tool_call>, then masks each step to the tokens the
// constraint allows until the call is complete, and after a call allows only
// a little white space, another call or the end of the turn.
type callGuard struct {
	vocab   *constrain.Vocabulary
	grammar *constrain.Grammar
	after   *afterCallSets // shared, read-only

	call     *constrain.ToolCallConstraint // the call being written, or nil
	called   bool                          // a call has been completed
	spaces   int                           // white-space tokens since the last call
	scanFrom int                           // raw offset where <tool_call> is looked for next
	mask     constrain.TokenSet
}

// maxSpacesAfterCall bounds the white-space tokens between calls: a large
// vocabulary has hundreds of them, and a weak model would otherwise pad the
// turn with them instead of ending it.
const maxSpacesAfterCall = 2

// afterCallSets are the tokens allowed after a constrained call: spaced
// while a little white space may still come, closing once it may not.
type afterCallSets struct {
	spaced, closing constrain.TokenSet
	space           []bool // by token id: the token is white space only
	// canClose is false when the vocabulary has no end-of-turn token and
	// no single <tool_call> token; then nothing is masked after a call.
	canClose bool
}

func newCallGuard(vocab *constrain.Vocabulary, g *constrain.Grammar, after *afterCallSets) *callGuard {
	return &callGuard{vocab: vocab, grammar: g, after: after}
}

// allowed returns the mask for the next token, or nil when the step is
// free.
func (g *callGuard) allowed() []uint64 {
	switch {
	case g.call != nil:
		g.mask = g.call.Allowed(g.mask)
		return g.mask
	case !g.called || !g.after.canClose:
		return nil
	case g.spaces < maxSpacesAfterCall:
		return g.after.spaced
	}
	return g.after.closing
}

// accept advances the guard by the sampled token id, whose bytes are
// already appended to raw; contentStart is where the answer begins in raw
// (-1 while the reply is reasoning).
func (g *callGuard) accept(id int, raw []byte, contentStart int) error {
	if g.call != nil {
		if err := g.call.Accept(id); err != nil {
			return fmt.Errorf("constrained tool call: %w", err)
		}
		if g.call.Done() {
			g.call, g.called, g.spaces, g.scanFrom = nil, true, 0, len(raw)
		}
		return nil
	}
	if g.called && id < len(g.after.space) && g.after.space[id] {
		g.spaces++
	}
	return g.scan(raw, contentStart)
}

// scan looks for a newly opened call in raw and, when one is found, starts
// the constraint with the bytes that follow the tag.
func (g *callGuard) scan(raw []byte, contentStart int) error {
	if g.call != nil || contentStart < 0 {
		return nil
	}
	from := max(g.scanFrom, contentStart)
	i := bytes.Index(raw[from:], []byte(chat.ToolCallOpen))
	if i < 0 {
		g.scanFrom = max(from, len(raw)-len(chat.ToolCallOpen)+1)
		return nil
	}
	call := constrain.NewToolCallConstraint(g.vocab, g.grammar)
	rest := raw[from+i+len(chat.ToolCallOpen):]
	if err := call.AcceptText(string(rest)); err != nil {
		return fmt.Errorf("constrained tool call: %w", err)
	}
	g.scanFrom = len(raw)
	if call.Done() {
		g.called, g.spaces = true, 0
		return nil
	}
	g.call = call
	return nil
}
