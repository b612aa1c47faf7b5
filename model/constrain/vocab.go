package constrain

import (
	"bytes"
	"math/bits"
	"slices"
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
// that shares a prefix at once, and each token's effect inside a JSON string,
// so that string positions (most of a call) need no walk. It is immutable and
// may be shared by any number of constraints.
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
	maxLen    int
	// Inside a string at a character boundary, whatever encloses it, a
	// token either stays in the string (inString), closes it (grouped by what
	// follows its quote: closeSuffix[i] for the ids closeIDs[i], so each
	// distinct suffix is checked once against the enclosing state), or is
	// refused. strNeed[id] is the length budget it needs: characters up to
	// its quote for a closer; for one that stays, its characters, counting an
	// unfinished one. inStringUpTo[k] holds the tokens that stay and need at
	// most k, for small k.
	inString     TokenSet
	inStringUpTo []TokenSet
	maxNeed      int
	strNeed      []uint16
	closeSuffix  []string
	closeIDs     [][]int32
	// The tokens' bytes, copied: token id is text[textStart[id]:textStart[id+1]].
	text      []byte
	textStart []int32
}

// NewVocabulary prepares tokens, where tokens[id] is the byte string token id
// decodes to. Tokens with an empty byte string, such as special tokens given
// as nil, are never allowed by a constraint. The model's logits may be padded
// past the tokenizer's vocabulary: model/sample treats ids past the end of an
// allowed set as masked.
func NewVocabulary(tokens [][]byte) *Vocabulary {
	v := &Vocabulary{size: len(tokens)}
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
	for _, id := range order {
		n := end[id]
		v.ids[fill[n]] = id
		fill[n]++
	}
	v.classifyInString(tokens)
	return v
}

// classifyInString runs every token through the string automaton itself,
// from inside an unbounded string, so that the classes agree with stepping.
func (v *Vocabulary) classifyInString(tokens [][]byte) {
	m := machine{&Grammar{nodes: []node{{kind: kindString, maxLen: -1}}}}
	v.inString = NewTokenSet(len(tokens))
	v.strNeed = make([]uint16, len(tokens))
	groups := map[string][]int32{}
	for id, tok := range tokens {
		if len(tok) == 0 {
			continue
		}
		st := []frame{{kind: frameTop, phase: topInCall}, {kind: frameString}}
		ok := true
		for i, b := range tok {
			chars := st[1].count
			if st, ok = m.step(st, b); !ok {
				break
			}
			if len(st) == 1 { // the string closed at byte i
				groups[string(tok[i+1:])] = append(groups[string(tok[i+1:])], int32(id))
				v.strNeed[id] = uint16(min(chars, 1<<16-1))
				break
			}
		}
		if ok && len(st) == 2 {
			f := &st[1]
			need := int(f.count)
			if f.u8need > 0 || f.esc == 1 || f.hex > 0 {
				need++
			}
			v.inString.Add(id)
			v.strNeed[id] = uint16(min(need, 1<<16-1))
			v.maxNeed = max(v.maxNeed, need)
		}
	}
	for suffix := range groups {
		v.closeSuffix = append(v.closeSuffix, suffix)
	}
	slices.Sort(v.closeSuffix)
	for _, suffix := range v.closeSuffix {
		v.closeIDs = append(v.closeIDs, groups[suffix])
	}
	v.inStringUpTo = make([]TokenSet, min(v.maxNeed, stringLevels))
	for k := range v.inStringUpTo {
		v.inStringUpTo[k] = NewTokenSet(len(tokens))
		for id := range tokens {
			if v.inString.Has(id) && int(v.strNeed[id]) <= k {
				v.inStringUpTo[k].Add(id)
			}
		}
	}
}

// stringLevels is how many length budgets get a precomputed set.
const stringLevels = 32

// inStringWithin writes into dst the tokens that stay inside a string and
// need at most budget characters (budget < 0: no limit).
func (v *Vocabulary) inStringWithin(dst TokenSet, budget int) {
	switch {
	case budget < 0 || budget >= v.maxNeed:
		copy(dst, v.inString)
	case budget < len(v.inStringUpTo):
		copy(dst, v.inStringUpTo[budget])
	default:
		clear(dst)
		for id := range v.size {
			if v.inString.Has(id) && int(v.strNeed[id]) <= budget {
				dst.Add(id)
			}
		}
	}
}

// subtree calls fn for every token whose bytes start with prefix.
func (v *Vocabulary) subtree(prefix string, fn func(id int32)) {
	n := int32(0)
	for i := 0; i < len(prefix); i++ {
		edges := v.edgeByte[v.edgeStart[n]:v.edgeStart[n+1]]
		e, ok := slices.BinarySearch(edges, prefix[i])
		if !ok {
			return
		}
		n = v.edgeNode[int(v.edgeStart[n])+e]
	}
	var visit func(n int32)
	visit = func(n int32) {
		for _, id := range v.ids[v.idStart[n]:v.idStart[n+1]] {
			fn(id)
		}
		for e := v.edgeStart[n]; e < v.edgeStart[n+1]; e++ {
			visit(v.edgeNode[e])
		}
	}
	visit(n)
}

// Size is the number of token ids, including those never allowed.
func (v *Vocabulary) Size() int { return v.size }

// token is the byte string of id.
func (v *Vocabulary) token(id int) []byte {
	return v.text[v.textStart[id]:v.textStart[id+1]]
}
