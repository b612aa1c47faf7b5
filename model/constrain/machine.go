package constrain

import "sort"

// The automaton is a stack of frames, one per open JSON construct, over the
// compiled grammar. A frame is a small value so that a state can be copied
// cheaply at each trie node while the vocabulary is walked.

type frameKind uint8

const (
	frameTop frameKind = iota
	frameObject
	frameArray
	frameString
	frameNumber
	frameLiteral
)

// Phases of the top frame.
const (
	topStart     uint8 = iota // before the call object
	topInCall                 // the call object is open
	topAfterCall              // before </tool_call>
	topInClose                // </tool_call> is being written
	topDone
)

// Phases of an object frame.
const (
	objOpen    uint8 = iota // after {
	objKey                  // a key is open
	objColon                // after a key
	objValue                // after :
	objInValue              // a value is open
	objAfter                // after a value
	objComma                // after ,
)

// Phases of an array frame.
const (
	arrOpen uint8 = iota
	arrInItem
	arrAfter
	arrComma
)

// Phases of a number frame.
const (
	numSign  uint8 = iota // after -
	numZero               // a leading 0
	numInt                // in integer digits
	numDot                // after .
	numFrac               // in fraction digits
	numE                  // after e or E
	numESign              // after the exponent's sign
	numExp                // in exponent digits
)

type frame struct {
	kind  frameKind
	phase uint8
	ws    uint8 // white-space bytes taken at the current position
	// Strings: escape state (0 none, 1 after \, 2 first \u digit was d or D)
	// with hex digits still due, a UTF-8 character's continuation bytes still
	// due with the range the next one must fall in, and how much of
	// </tool_call> the string's raw text ends with.
	esc, hex, u8need, u8lo, u8hi, tag uint8
	node                              int32
	// Literals: the candidate texts lits[lo:hi] agree on their first pos bytes.
	lits, lo, hi, pos int32
	count             int32  // array items, string characters or number bytes
	prop              int32  // object: the property whose key or value is open
	tool              int32  // call object: the named tool
	used              uint64 // object: properties written; literal: payloads excluded
}

const closeTag = "</tool_call>"

// machine steps a state (a frame stack) over one byte at a time.
type machine struct{ g *Grammar }

// start is the state right after <tool_call>.
func start() []frame { return []frame{{kind: frameTop}} }

// done reports whether st has written the whole call and its closing tag.
func done(st []frame) bool {
	return len(st) == 1 && st[0].phase == topDone
}

// step feeds b to st, returning the new stack and whether b was allowed. On
// false the returned stack is garbage.
func (m machine) step(st []frame, b byte) ([]frame, bool) {
	for {
		f := &st[len(st)-1]
		switch f.kind {
		case frameTop:
			return m.stepTop(st, b)
		case frameObject:
			return m.stepObject(st, b)
		case frameArray:
			return m.stepArray(st, b)
		case frameString:
			return m.stepString(st, b)
		case frameNumber:
			if ok := m.stepNumber(f, b); ok {
				return st, true
			}
			if !numberComplete(f.phase) {
				return st, false
			}
		case frameLiteral:
			switch m.stepLiteral(f, b) {
			case litTaken:
				return st, true
			case litTakenComplete:
				p := m.matched(f)
				return m.childDone(st[:len(st)-1], p), true
			case litRejected:
				return st, false
			}
		}
		// A number or literal that b cannot extend is complete: close it and
		// give b to the enclosing frame.
		p := int32(0)
		if f.kind == frameLiteral {
			p = m.matched(f)
		}
		st = m.childDone(st[:len(st)-1], p)
	}
}

// takeSpace accepts a white-space byte at a position that allows one.
func takeSpace(f *frame, b byte, newline bool) bool {
	if f.ws == 0 && (b == ' ' || (newline && b == '\n')) {
		f.ws = 1
		return true
	}
	return false
}

func (m machine) stepTop(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	switch f.phase {
	case topStart:
		if takeSpace(f, b, true) {
			return st, true
		}
		f.phase, f.ws = topInCall, 0
		return m.startValue(st, m.g.call, b)
	case topAfterCall:
		if takeSpace(f, b, true) {
			return st, true
		}
		f.phase, f.ws = topInClose, 0
		return m.startValue(st, m.g.closeTag, b)
	}
	return st, false
}

// childDone closes the construct that was open in the top frame of st, with
// the payload of a matched literal.
func (m machine) childDone(st []frame, payload int32) []frame {
	f := &st[len(st)-1]
	switch f.kind {
	case frameTop:
		if f.phase == topInCall {
			f.phase = topAfterCall
		} else {
			f.phase = topDone
		}
	case frameObject:
		if f.phase == objKey {
			f.phase = objColon
			if !m.g.nodes[f.node].free {
				f.prop = payload
			}
			return st
		}
		if m.g.nodes[f.node].call && f.prop == 0 {
			f.tool = payload
		}
		if f.prop >= 0 {
			f.used |= 1 << f.prop
		}
		f.phase = objAfter
	case frameArray:
		f.phase = arrAfter
		f.count++
	}
	return st
}

func (m machine) stepObject(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	n := &m.g.nodes[f.node]
	if f.phase != objKey && f.phase != objInValue && takeSpace(f, b, false) {
		return st, true
	}
	f.ws = 0
	switch f.phase {
	case objOpen:
		if b == '}' && n.required == 0 {
			return m.childDone(st[:len(st)-1], 0), true
		}
		return m.startKey(st, b)
	case objColon:
		if b == ':' {
			f.phase = objValue
			return st, true
		}
	case objValue:
		value := n.value
		switch {
		case n.call && f.prop == 1:
			value = m.g.toolArgs[f.tool]
		case !n.free:
			value = n.props[f.prop]
		}
		f.phase = objInValue
		return m.startValue(st, value, b)
	case objAfter:
		if b == ',' && (n.free || f.used != 1<<len(n.props)-1) {
			f.phase = objComma
			return st, true
		}
		if b == '}' && f.used&n.required == n.required {
			return m.childDone(st[:len(st)-1], 0), true
		}
	case objComma:
		return m.startKey(st, b)
	}
	return st, false
}

// startKey opens a key: any string in a free-form object, else one of the
// properties not yet written (the next one, in order, for the call object).
func (m machine) startKey(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	n := &m.g.nodes[f.node]
	f.phase = objKey
	if n.free {
		f.prop = -1
		return m.startValue(st, m.g.keyString, b)
	}
	excl := f.used
	if n.call {
		excl = ^uint64(0) &^ (1 << (f.used & 1)) // "name" (0) first, then "arguments" (1)
	}
	if len(st) >= maxDepth {
		return st, false
	}
	lits := &m.g.lits[n.keys]
	st = append(st, frame{kind: frameLiteral, lits: n.keys, hi: int32(len(lits.texts)), used: excl})
	return m.stepLiteralFrame(st, b)
}

func (m machine) stepArray(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	n := &m.g.nodes[f.node]
	if f.phase != arrInItem && takeSpace(f, b, false) {
		return st, true
	}
	f.ws = 0
	switch f.phase {
	case arrOpen:
		if b == ']' && n.minItems == 0 {
			return m.childDone(st[:len(st)-1], 0), true
		}
		if n.maxItems == 0 {
			return st, false
		}
		f.phase = arrInItem
		return m.startValue(st, n.value, b)
	case arrAfter:
		if b == ',' && (n.maxItems < 0 || f.count < n.maxItems) {
			f.phase = arrComma
			return st, true
		}
		if b == ']' && f.count >= n.minItems {
			return m.childDone(st[:len(st)-1], 0), true
		}
	case arrComma:
		f.phase = arrInItem
		return m.startValue(st, n.value, b)
	}
	return st, false
}

// startValue opens a value of node n whose first byte is b.
func (m machine) startValue(st []frame, n int32, b byte) ([]frame, bool) {
	nd := &m.g.nodes[n]
	if len(st) >= maxDepth {
		return st, false
	}
	switch nd.kind {
	case kindObject:
		if b != '{' {
			return st, false
		}
		return append(st, frame{kind: frameObject, node: n, phase: objOpen}), true
	case kindArray:
		if b != '[' {
			return st, false
		}
		return append(st, frame{kind: frameArray, node: n, phase: arrOpen}), true
	case kindString:
		if b != '"' {
			return st, false
		}
		return append(st, frame{kind: frameString, node: n}), true
	case kindNumber, kindInteger:
		f := frame{kind: frameNumber, node: n, count: 1}
		switch {
		case b == '-':
			f.phase = numSign
		case b == '0':
			f.phase = numZero
		case b >= '1' && b <= '9':
			f.phase = numInt
		default:
			return st, false
		}
		return append(st, f), true
	case kindLiteral:
		lits := &m.g.lits[nd.lits]
		st = append(st, frame{kind: frameLiteral, node: n, lits: nd.lits, hi: int32(len(lits.texts))})
		return m.stepLiteralFrame(st, b)
	case kindUnion:
		for _, a := range nd.alts {
			if m.g.canStart(a, b) {
				return m.startValue(st, a, b)
			}
		}
	}
	return st, false
}

func (m machine) stepString(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	n := &m.g.nodes[f.node]
	switch {
	case f.u8need > 0:
		if b < f.u8lo || b > f.u8hi {
			return st, false
		}
		f.u8need--
		f.u8lo, f.u8hi = 0x80, 0xBF
		if f.u8need == 0 {
			f.count++
		}
		return st, true
	case f.hex > 0:
		if !isHex(b) {
			return st, false
		}
		// Reject UTF-16 surrogates, which would make the character count and
		// the decoded text depend on pairing.
		if f.hex == 4 && (b == 'd' || b == 'D') {
			f.esc = 2
		} else if f.hex == 3 && f.esc == 2 && (b >= '8' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F') {
			return st, false
		}
		f.hex--
		if f.hex == 0 {
			f.esc = 0
			f.count++
		}
		return st, true
	case f.esc == 1:
		f.tag = 0
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			f.esc = 0
			f.count++
			return st, true
		case 'u':
			f.esc, f.hex = 0, 4
			return st, true
		}
		return st, false
	case b == '"':
		if f.count < n.minLen {
			return st, false
		}
		return m.childDone(st[:len(st)-1], 0), true
	}
	if n.maxLen >= 0 && f.count >= n.maxLen {
		return st, false
	}
	// A string must not contain </tool_call>: parsers of the model's output
	// end the call at its first occurrence.
	switch {
	case b == closeTag[f.tag]:
		if f.tag++; int(f.tag) == len(closeTag) {
			return st, false
		}
	case b == closeTag[0]:
		f.tag = 1
	default:
		f.tag = 0
	}
	switch {
	case b == '\\':
		f.esc = 1
	case b < 0x20:
		return st, false
	case b < 0x80:
		f.count++
	case b >= 0xC2 && b <= 0xDF:
		f.u8need, f.u8lo, f.u8hi = 1, 0x80, 0xBF
	case b == 0xE0:
		f.u8need, f.u8lo, f.u8hi = 2, 0xA0, 0xBF
	case b == 0xED:
		f.u8need, f.u8lo, f.u8hi = 2, 0x80, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		f.u8need, f.u8lo, f.u8hi = 2, 0x80, 0xBF
	case b == 0xF0:
		f.u8need, f.u8lo, f.u8hi = 3, 0x90, 0xBF
	case b >= 0xF1 && b <= 0xF3:
		f.u8need, f.u8lo, f.u8hi = 3, 0x80, 0xBF
	case b == 0xF4:
		f.u8need, f.u8lo, f.u8hi = 3, 0x80, 0x8F
	default:
		return st, false
	}
	return st, true
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func numberComplete(phase uint8) bool {
	return phase == numZero || phase == numInt || phase == numFrac || phase == numExp
}

// stepNumber extends a number by b if the JSON number grammar and the length
// limit allow; a byte that would start a part needing more bytes is taken
// only while they still fit, so the number can always be finished.
func (m machine) stepNumber(f *frame, b byte) bool {
	limit := int32(maxNumberLen)
	integer := m.g.nodes[f.node].kind == kindInteger
	if integer {
		limit = maxIntegerLen
	}
	digit := b >= '0' && b <= '9'
	next := f.phase
	need := int32(1)
	switch {
	case digit && f.phase == numSign:
		next = numInt
		if b == '0' {
			next = numZero
		}
	case digit && f.phase == numInt:
	case digit && (f.phase == numDot || f.phase == numFrac):
		next = numFrac
	case digit && (f.phase == numE || f.phase == numESign || f.phase == numExp):
		next = numExp
	case b == '.' && !integer && (f.phase == numZero || f.phase == numInt):
		next, need = numDot, 2
	case (b == 'e' || b == 'E') && !integer && (f.phase == numZero || f.phase == numInt || f.phase == numFrac):
		next, need = numE, 2
	case (b == '+' || b == '-') && f.phase == numE:
		next, need = numESign, 2
	default:
		return false
	}
	if f.count+need > limit {
		return false
	}
	f.phase = next
	f.count++
	return true
}

type literalStep uint8

const (
	litRejected literalStep = iota
	litTaken
	litTakenComplete // taken, and no candidate is longer: the literal is closed
	litEnd           // b does not extend the literal, which is complete
)

// stepLiteralFrame feeds b to a literal frame just pushed onto st.
func (m machine) stepLiteralFrame(st []frame, b byte) ([]frame, bool) {
	f := &st[len(st)-1]
	switch m.stepLiteral(f, b) {
	case litTaken:
		return st, true
	case litTakenComplete:
		p := m.matched(f)
		return m.childDone(st[:len(st)-1], p), true
	}
	return st, false
}

// stepLiteral narrows the candidates of a literal frame to those whose next
// byte is b, keeping only candidates whose payload is not excluded.
func (m machine) stepLiteral(f *frame, b byte) literalStep {
	ls := &m.g.lits[f.lits]
	texts := ls.texts[f.lo:f.hi]
	pos := int(f.pos)
	// Candidates agree on their first pos bytes and are sorted, so those with
	// byte b next form one run.
	lo := sort.Search(len(texts), func(i int) bool { return len(texts[i]) > pos && texts[i][pos] >= b })
	hi := lo + sort.Search(len(texts)-lo, func(i int) bool { return texts[lo+i][pos] > b })
	live, longer := false, false
	for i := lo; i < hi; i++ {
		if f.used&(1<<ls.payload[int(f.lo)+i]) == 0 { // payloads >= 64 shift to 0: never excluded
			live = true
			if len(texts[i]) > pos+1 {
				longer = true
			}
		}
	}
	if !live {
		if m.matchedIndex(f) >= 0 {
			return litEnd
		}
		return litRejected
	}
	f.lo, f.hi, f.pos = f.lo+int32(lo), f.lo+int32(hi), f.pos+1
	if !longer {
		return litTakenComplete
	}
	return litTaken
}

// matchedIndex is the candidate a literal frame has fully written, or -1.
func (m machine) matchedIndex(f *frame) int {
	ls := &m.g.lits[f.lits]
	for i := f.lo; i < f.hi; i++ {
		p := ls.payload[i]
		if len(ls.texts[i]) == int(f.pos) && f.used&(1<<p) == 0 {
			return int(i)
		}
	}
	return -1
}

// matched is the payload of the candidate a literal frame has written.
func (m machine) matched(f *frame) int32 {
	return m.g.lits[f.lits].payload[m.matchedIndex(f)]
}
