package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// AddedToken is an entry of tokenizer.json's "added_tokens": a string that is
// matched literally in the input before normalization and pre-tokenization and
// always becomes the single id ID.
type AddedToken struct {
	ID      int
	Content string
	// SingleWord: match only when not preceded or followed by a word character.
	SingleWord bool
	// LStrip and RStrip: the whitespace left (right) of a match is absorbed.
	LStrip, RStrip bool
	// Normalized: match against the normalized text instead of the raw text.
	Normalized bool
	// Special marks control tokens such as <|im_start|>; Encode does not
	// recognise them in text, EncodeWithSpecial does.
	Special bool
}

// addedMatcher finds added tokens with leftmost-longest semantics, the
// semantics of the Aho-Corasick automaton Hugging Face uses.
type addedMatcher struct {
	tokens []AddedToken
	first  [256]bool
	// edges is a byte trie: (node<<8 | byte) -> child node; node 0 is the root.
	edges map[uint32]uint32
	// term maps a node to the index in tokens of the pattern ending there.
	term map[uint32]int
}

func newAddedMatcher(tokens []AddedToken, pattern func(AddedToken) string) *addedMatcher {
	am := &addedMatcher{tokens: tokens, edges: map[uint32]uint32{}, term: map[uint32]int{}}
	nodes := uint32(1)
	for i, tok := range tokens {
		p := pattern(tok)
		if p == "" {
			continue
		}
		am.first[p[0]] = true
		node := uint32(0)
		for j := 0; j < len(p); j++ {
			key := node<<8 | uint32(p[j])
			child, ok := am.edges[key]
			if !ok {
				child = nodes
				nodes++
				am.edges[key] = child
			}
			node = child
		}
		if _, dup := am.term[node]; !dup {
			am.term[node] = i
		}
	}
	return am
}

func (am *addedMatcher) empty() bool { return am == nil || len(am.term) == 0 }

// longestAt returns the longest pattern starting at s[i:] (index, end) or -1.
func (am *addedMatcher) longestAt(s string, i int) (int, int) {
	best, end := -1, 0
	node := uint32(0)
	for j := i; j < len(s); j++ {
		child, ok := am.edges[node<<8|uint32(s[j])]
		if !ok {
			break
		}
		node = child
		if t, ok := am.term[node]; ok {
			best, end = t, j+1
		}
	}
	return best, end
}

// split cuts s into text segments and added tokens, calling emit(seg, -1) for
// text and emit(match, id) for a token, in order. Tokens marked special are
// left in the text unless withSpecial. The rules for single_word, lstrip and
// rstrip follow Hugging Face's AddedVocabulary.
func (am *addedMatcher) split(s string, withSpecial bool, emit func(string, int)) {
	if am.empty() || s == "" {
		emit(s, -1)
		return
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !am.first[s[i]] {
			i++
			continue
		}
		ti, stop := am.longestAt(s, i)
		if ti < 0 {
			i++
			continue
		}
		start := i
		i = stop // the automaton resumes after the match, kept or not
		tok := am.tokens[ti]
		if tok.Special && !withSpecial {
			continue
		}
		if tok.SingleWord && ((start > 0 && endsWithWord(s[:start])) || (stop < len(s) && startsWithWord(s[stop:]))) {
			continue
		}
		if tok.LStrip {
			start = max(trailingSpaceStart(s[:start]), startOffset)
		}
		if tok.RStrip {
			stop += leadingSpaceLen(s[stop:])
		}
		if startOffset < start {
			emit(s[startOffset:start], -1)
		}
		emit(s[start:stop], tok.ID)
		startOffset = stop
	}
	if startOffset < len(s) {
		emit(s[startOffset:], -1)
	}
}

// isWordChar is Rust regex's Unicode \w: Alphabetic, marks, decimal digits,
// connector punctuation and join controls.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordChar(r)
}

func trailingSpaceStart(s string) int {
	i := len(s)
	for i > 0 {
		r, w := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= w
	}
	return i
}

func leadingSpaceLen(s string) int {
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += w
	}
	return i
}
