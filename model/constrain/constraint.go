// Package constrain restricts decoding so that a model's tool call is always
// valid: once the model has written <tool_call>, each step allows only the
// tokens that keep the text a prefix of {"name": <a tool>, "arguments": <an
// object matching that tool's JSON Schema>} followed by </tool_call>.
//
// A byte-level pushdown automaton over the JSON grammar, specialised by the
// schemas, tracks the text. Outside strings the allowed tokens are found by
// walking a trie of the vocabulary's byte strings with the automaton, so
// tokens sharing a prefix are decided together and most subtrees are cut at
// their first byte. Inside strings, where a model spends most of a call,
// tokens were classified once by the same automaton (stays in the string,
// closes it, refused), so only the few distinct texts that follow a closing
// quote are checked. White space between tokens is limited to one byte at each
// place JSON allows it, so a model cannot loop on it.
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
	c.bufs = make([][]frame, vocab.maxLen+2)
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
	if f := &c.state[len(c.state)-1]; f.kind == frameString && f.esc == 0 && f.hex == 0 && f.u8need == 0 {
		c.allowedInString(dst, f)
	} else {
		clear(dst)
		c.walk(0, 0, c.state, dst)
	}
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

// allowedInString decides a string at a character boundary without walking
// the trie, from the vocabulary's classes: tokens that stay in the string
// are allowed when they fit its length budget, and those that close it when
// they fit, reach its minLength and what follows their quote continues the
// enclosing construct (checked once per distinct suffix). After part of
// </tool_call>, tokens that would complete it are then removed.
func (c *ToolCallConstraint) allowedInString(dst TokenSet, f *frame) {
	v := c.vocab
	n := &c.m.g.nodes[f.node]
	budget := -1
	if n.maxLen >= 0 {
		budget = int(n.maxLen - f.count)
	}
	v.inStringWithin(dst, budget)

	// Close the string as a closer would after its characters; their count
	// is checked per token below.
	st := append(c.bufs[0][:0], c.state...)
	top := &st[len(st)-1]
	top.count = max(top.count, n.minLen)
	top.tag = 0
	closed, ok := c.m.step(st, '"')
	c.bufs[0] = closed[:0]
	if ok {
		for i, suffix := range v.closeSuffix {
			st := append(c.bufs[1][:0], closed...)
			for j := 0; ok && j < len(suffix); j++ {
				st, ok = c.m.step(st, suffix[j])
			}
			c.bufs[1] = st[:0]
			if ok {
				for _, id := range v.closeIDs[i] {
					need := int32(v.strNeed[id])
					if (budget < 0 || int(need) <= budget) && f.count+need >= n.minLen {
						dst[id/64] |= 1 << (id % 64)
					}
				}
			}
			ok = true
		}
	}
	if f.tag > 0 {
		v.subtree(closeTag[f.tag:], func(id int32) { dst[id/64] &^= 1 << (id % 64) })
	}
}

func (c *ToolCallConstraint) walk(node int32, depth int, st []frame, dst TokenSet) {
	v := c.vocab
	for e := v.edgeStart[node]; e < v.edgeStart[node+1]; e++ {
		child := v.edgeNode[e]
		next, ok := c.m.step(append(c.bufs[depth][:0], st...), v.edgeByte[e])
		c.bufs[depth] = next[:0]
		if !ok {
			continue
		}
		for _, id := range v.ids[v.idStart[child]:v.idStart[child+1]] {
			dst[id/64] |= 1 << (id % 64)
		}
		c.walk(child, depth+1, next, dst)
	}
}
