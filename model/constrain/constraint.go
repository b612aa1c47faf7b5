// Package constrain restricts decoding so that a model's tool call is always
// valid: once the model has written <tool_call>, each step allows only the
// tokens that keep the text a prefix of {"name": <a tool>, "arguments": <an
// object matching that tool's JSON Schema>} followed by </tool_call>.
//
// A byte-level pushdown automaton over the JSON grammar, specialised by the
// schemas, tracks the text; the allowed tokens are found by walking a trie of
// the vocabulary's byte strings with the automaton, so tokens sharing a prefix
// are decided together and most subtrees are cut at their first byte.
package constrain

import (
	"encoding/binary"
	"fmt"
)

// ToolCallConstraint tracks one tool call being generated and says which
// tokens may come next. It is used by one sequence at a time.
type ToolCallConstraint struct {
	vocab *Vocabulary
	m     machine
	state []frame
	next  []frame   // scratch for Accept
	bufs  [][]frame // per trie depth, for Allowed
	bytes int       // bytes accepted so far, for error messages
	// cache maps an encoded state to its allowed set: a model writing a
	// string or a list meets the same state over and over.
	cache map[string]TokenSet
	key   []byte
}

// maxCachedStates bounds the cache; each entry is vocabulary-size/8 bytes
// (19 KB for 151k tokens).
const maxCachedStates = 64

// NewToolCallConstraint returns a constraint at the start of a call, right
// after the model wrote <tool_call>. vocab and g may be shared.
func NewToolCallConstraint(vocab *Vocabulary, g *Grammar) *ToolCallConstraint {
	c := &ToolCallConstraint{vocab: vocab, m: machine{g}, state: start()}
	c.bufs = make([][]frame, vocab.maxLen+1)
	return c
}

// Reset returns the constraint to the start of a call.
func (c *ToolCallConstraint) Reset() {
	c.state = append(c.state[:0], start()...)
	c.bytes = 0
}

// Done reports whether the call and its </tool_call> are complete; from then
// on no token is allowed and the caller stops constraining.
func (c *ToolCallConstraint) Done() bool { return done(c.state) }

// Accept advances the constraint by token id. It fails, leaving the state
// unchanged, when the token is not allowed here.
func (c *ToolCallConstraint) Accept(id int) error {
	if id < 0 || id >= c.vocab.size {
		return fmt.Errorf("constrain: token %d outside the vocabulary of %d", id, c.vocab.size)
	}
	tok := c.vocab.token(id)
	if len(tok) == 0 {
		return fmt.Errorf("constrain: token %d has no text and cannot be part of a tool call", id)
	}
	if err := c.feed(tok); err != nil {
		return fmt.Errorf("constrain: token %d %q: %w", id, tok, err)
	}
	return nil
}

// AcceptText advances the constraint by text already generated, such as a
// forced prefix. It fails, leaving the state unchanged, when the text does not
// continue a valid call.
func (c *ToolCallConstraint) AcceptText(text string) error {
	if err := c.feed([]byte(text)); err != nil {
		return fmt.Errorf("constrain: text %q: %w", text, err)
	}
	return nil
}

func (c *ToolCallConstraint) feed(text []byte) error {
	st := append(c.next[:0], c.state...)
	for i, b := range text {
		var ok bool
		if st, ok = c.m.step(st, b); !ok {
			c.next = st[:0]
			return fmt.Errorf("byte %q not allowed at byte %d of the call", b, c.bytes+i)
		}
	}
	c.next, c.state = c.state, st
	c.bytes += len(text)
	return nil
}

// Allowed returns the set of tokens that may come next, reusing dst when it
// is large enough. It is empty once Done.
func (c *ToolCallConstraint) Allowed(dst TokenSet) TokenSet {
	words := (c.vocab.size + 63) / 64
	if cap(dst) < words {
		dst = make(TokenSet, words)
	}
	dst = dst[:words]
	c.key = stateKey(c.key[:0], c.m.g, c.state)
	if set, ok := c.cache[string(c.key)]; ok {
		copy(dst, set)
		return dst
	}
	// Inside a string every plain token that fits the length budget is
	// allowed, so start from that set and walk only subtrees holding other
	// tokens.
	budget, inString := c.stringBudget()
	if inString {
		c.vocab.plainWithin(dst, budget)
	} else {
		clear(dst)
	}
	c.walk(0, 0, c.state, inString, dst)
	if c.cache == nil || len(c.cache) >= maxCachedStates {
		c.cache = make(map[string]TokenSet)
	}
	c.cache[string(c.key)] = append(TokenSet(nil), dst...)
	return dst
}

// stateKey encodes st so that states with equal keys allow the same
// continuations. A string's character count only matters up to its
// minLength when it has no maxLength, so it is capped there; that makes the
// states inside one long string share a key.
func stateKey(dst []byte, g *Grammar, st []frame) []byte {
	for _, f := range st {
		count := f.count
		if f.kind == frameString {
			if n := &g.nodes[f.node]; n.maxLen < 0 {
				count = min(count, n.minLen)
			}
		}
		dst = append(dst, byte(f.kind), f.phase, f.ws, f.esc, f.hex, f.u8need, f.u8lo, f.u8hi, f.tag)
		for _, v := range [...]int32{f.node, f.lits, f.lo, f.hi, f.pos, count, f.prop, f.tool} {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
		dst = binary.LittleEndian.AppendUint64(dst, f.used)
	}
	return dst
}

// stringBudget reports whether the state is inside a string at a character
// boundary, not after part of </tool_call>, and how many more characters the
// string may take (-1: no limit).
func (c *ToolCallConstraint) stringBudget() (budget int, ok bool) {
	f := &c.state[len(c.state)-1]
	if f.kind != frameString || f.esc != 0 || f.hex != 0 || f.u8need != 0 || f.tag != 0 {
		return 0, false
	}
	if n := &c.m.g.nodes[f.node]; n.maxLen >= 0 {
		return int(n.maxLen - f.count), true
	}
	return -1, true
}

func (c *ToolCallConstraint) walk(node int32, depth int, st []frame, skipPlain bool, dst TokenSet) {
	v := c.vocab
	for e := v.edgeStart[node]; e < v.edgeStart[node+1]; e++ {
		child := v.edgeNode[e]
		if skipPlain && !v.mixed[child] {
			continue
		}
		next, ok := c.m.step(append(c.bufs[depth][:0], st...), v.edgeByte[e])
		c.bufs[depth] = next[:0]
		if !ok {
			continue
		}
		for _, id := range v.ids[v.idStart[child]:v.idStart[child+1]] {
			dst[id/64] |= 1 << (id % 64)
		}
		c.walk(child, depth+1, next, skipPlain, dst)
	}
}
