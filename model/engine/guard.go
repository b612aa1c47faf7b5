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
// white space, another call or the end of the turn.
type callGuard struct {
	vocab     *constrain.Vocabulary
	grammar   *constrain.Grammar
	afterCall constrain.TokenSet // shared, read-only

	call     *constrain.ToolCallConstraint // the call being written, or nil
	called   bool                          // a call has been completed
	scanFrom int                           // raw offset where <tool_call> is looked for next
	mask     constrain.TokenSet
}

func newCallGuard(vocab *constrain.Vocabulary, g *constrain.Grammar, afterCall constrain.TokenSet) *callGuard {
	return &callGuard{vocab: vocab, grammar: g, afterCall: afterCall}
}

// allowed returns the mask for the next token, or nil when the step is
// free.
func (g *callGuard) allowed() []uint64 {
	switch {
	case g.call != nil:
		g.mask = g.call.Allowed(g.mask)
		return g.mask
	case g.called:
		return g.afterCall
	}
	return nil
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
			g.call, g.called, g.scanFrom = nil, true, len(raw)
		}
		return nil
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
		g.called = true
		return nil
	}
	g.call = call
	return nil
}
