package constrain

import (
	"bytes"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// TokenSet is a set of token ids as a bitset: bit i%64 of word i/64 is set
// when id i is in the set. It is the allowed-set form that
// model/sample.Sampler.Sample takes.
type TokenSet []uint64

// NewTokenSet returns an empty set able to hold ids below n.
func NewTokenSet(n int) TokenSet { return make(TokenSet, (n+63)/64) }

// Has reports whether id is in the set.
func (s TokenSet) Has(id int) bool {
	return id >= 0 && id/64 < len(s) && s[id/64]&(1<<(id%64)) != 0
}

// Add puts id into the set, which must be large enough to hold it.
func (s TokenSet) Add(id int) { s[id/64] |= 1 << (id % 64) }

// Len is the number of ids in the set.
func (s TokenSet) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// Vocabulary is a tokenizer's vocabulary prepared for constrained decoding:
// a trie over the tokens' byte strings, so that one walk decides every token
// that shares a prefix at once. It is immutable and may be shared by any
// number of constraints.
type Vocabulary struct {
	size int
	// The trie in compressed rows: node n's outgoing edges are
	// edgeByte/edgeNode[edgeStart[n]:edgeStart[n+1]], sorted by byte, and the
	// tokens spelled by the path to n are ids[idStart[n]:idStart[n+1]].
	edgeStart []int32
	edgeByte  []byte
	edgeNode  []int32
	idStart   []int32
	ids       []int32
	// mixed[n] is set when some token below n is not plain string content;
	// plain holds the tokens that are. Inside an unconstrained JSON string
	// every plain token is allowed, so only mixed subtrees need walking.
	mixed  []bool
	plain  TokenSet
	maxLen int
	// For strings with a maxLength: plainRunes[id] is the character count of
	// a plain token (0 for others), plainUpTo[k] the plain tokens of at most k
	// characters, for small k.
	plainRunes    []uint16
	plainUpTo     []TokenSet
	maxPlainRunes int
	// The tokens' bytes, copied: token id is text[textStart[id]:textStart[id+1]].
	text      []byte
	textStart []int32
}

// NewVocabulary prepares tokens, where tokens[id] is the byte string token id
// decodes to. Tokens with an empty byte string, such as special tokens given
// as nil, are never allowed by a constraint.
func NewVocabulary(tokens [][]byte) *Vocabulary {
	v := &Vocabulary{size: len(tokens), plain: NewTokenSet(len(tokens))}
	v.textStart = make([]int32, len(tokens)+1)
	for id, t := range tokens {
		v.text = append(v.text, t...)
		v.textStart[id+1] = int32(len(v.text))
	}
	order := make([]int32, 0, len(tokens))
	for id, t := range tokens {
		if len(t) > 0 {
			order = append(order, int32(id))
			v.maxLen = max(v.maxLen, len(t))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int { return bytes.Compare(tokens[a], tokens[b]) })

	// Inserting in sorted order means an existing edge for the next byte is
	// always the node's most recent child.
	parent := []int32{-1}
	label := []byte{0}
	lastChild := []int32{-1}
	end := make([]int32, len(tokens))
	for _, id := range order {
		n := int32(0)
		for _, b := range tokens[id] {
			if c := lastChild[n]; c >= 0 && label[c] == b {
				n = c
				continue
			}
			c := int32(len(parent))
			parent = append(parent, n)
			label = append(label, b)
			lastChild = append(lastChild, -1)
			lastChild[n] = c
			n = c
		}
		end[id] = n
	}

	nodes := len(parent)
	v.edgeStart = make([]int32, nodes+1)
	for c := 1; c < nodes; c++ {
		v.edgeStart[parent[c]+1]++
	}
	for n := 0; n < nodes; n++ {
		v.edgeStart[n+1] += v.edgeStart[n]
	}
	v.edgeByte = make([]byte, nodes-1)
	v.edgeNode = make([]int32, nodes-1)
	fill := slices.Clone(v.edgeStart[:nodes])
	for c := 1; c < nodes; c++ { // children were created in byte order
		p := parent[c]
		v.edgeByte[fill[p]] = label[c]
		v.edgeNode[fill[p]] = int32(c)
		fill[p]++
	}

	v.idStart = make([]int32, nodes+1)
	for _, id := range order {
		v.idStart[end[id]+1]++
	}
	for n := 0; n < nodes; n++ {
		v.idStart[n+1] += v.idStart[n]
	}
	v.ids = make([]int32, len(order))
	fill = slices.Clone(v.idStart[:nodes])
	v.mixed = make([]bool, nodes)
	for _, id := range order {
		n := end[id]
		v.ids[fill[n]] = id
		fill[n]++
		if isPlainString(tokens[id]) {
			v.plain.Add(int(id))
		} else {
			v.mixed[n] = true
		}
	}
	v.plainRunes = make([]uint16, len(tokens))
	for id := range tokens {
		if v.plain.Has(id) {
			n := min(utf8.RuneCount(tokens[id]), 1<<16-1)
			v.plainRunes[id] = uint16(n)
			v.maxPlainRunes = max(v.maxPlainRunes, n)
		}
	}
	v.plainUpTo = make([]TokenSet, min(v.maxPlainRunes, plainLevels))
	for k := range v.plainUpTo {
		v.plainUpTo[k] = NewTokenSet(len(tokens))
		for id, n := range v.plainRunes {
			if n > 0 && int(n) <= k {
				v.plainUpTo[k].Add(id)
			}
		}
	}
	for c := nodes - 1; c > 0; c-- { // children come after their parents
		if v.mixed[c] {
			v.mixed[parent[c]] = true
		}
	}
	return v
}

// plainLevels is how many maxLength budgets get a precomputed set.
const plainLevels = 32

// plainWithin writes into dst the plain tokens of at most budget characters.
func (v *Vocabulary) plainWithin(dst TokenSet, budget int) {
	switch {
	case budget < 0 || budget >= v.maxPlainRunes:
		copy(dst, v.plain)
	case budget < len(v.plainUpTo):
		copy(dst, v.plainUpTo[budget])
	default:
		clear(dst)
		for id, n := range v.plainRunes {
			if n > 0 && int(n) <= budget {
				dst.Add(id)
			}
		}
	}
}

// Size is the number of token ids, including those never allowed.
func (v *Vocabulary) Size() int { return v.size }

// isPlainString reports whether b may appear as is inside a JSON string
// whatever came before it in the string, as long as that does not end with
// part of </tool_call>: printable ASCII other than quote and backslash, and
// whole UTF-8 characters, without </tool_call> itself.
func isPlainString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b) && !bytes.Contains(b, []byte(closeTag))
}

// token is the byte string of id.
func (v *Vocabulary) token(id int) []byte {
	return v.text[v.textStart[id]:v.textStart[id+1]]
}
