package runtime

import (
	"slices"
	"strings"
	"unicode"
)

// questionShape is what two viewer messages must share to be answered as
// one question: the set of their content tokens. A CJK character is a
// token of its own; a run of letters is a word; a run of digits is a
// number. Case, full-width forms, punctuation, spacing, repeated letters
// and the filler words of live chat ("呀", "吗", "pls", "the") are not
// part of it.
type questionShape struct {
	tokens []string // sorted, unique
}

// zhFillers are particles that change the tone of a chat line, not what
// it asks.
const zhFillers = "呀啊哈吗呢吧啦哦嘛呗哇噢嗯的了捏滴"

// enFillers are words whose presence does not change a live-chat question.
var enFillers = []string{"a", "an", "the", "is", "are", "am", "do", "does", "it", "this", "that", "of",
	"pls", "plz", "please", "hi", "hey", "hello", "so", "just", "um", "uh", "ok", "okay", "lol", "haha"}

// shapeOf tokenises a message for near-duplicate matching.
func shapeOf(text string) questionShape {
	var tokens []string
	var word []rune
	var wordDigits bool
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		if !wordDigits {
			w = collapseRepeats(w)
		}
		if wordDigits || !slices.Contains(enFillers, w) {
			tokens = append(tokens, w)
		}
		word = word[:0]
	}
	for _, r := range text {
		r = foldWidth(unicode.ToLower(r))
		switch {
		case isCJK(r):
			flush()
			if !strings.ContainsRune(zhFillers, r) {
				tokens = append(tokens, string(r))
			}
		case unicode.IsDigit(r):
			if len(word) > 0 && !wordDigits {
				flush()
			}
			word, wordDigits = append(word, r), true
		case unicode.IsLetter(r) || r == '\'':
			if r == '\'' {
				continue // "what's" and "whats" are one word
			}
			if len(word) > 0 && wordDigits {
				flush()
			}
			word, wordDigits = append(word, r), false
		default:
			flush()
		}
	}
	flush()
	slices.Sort(tokens)
	return questionShape{tokens: slices.Compact(tokens)}
}

// sameQuestion reports whether two messages ask the same: they use the
// same content tokens, in any order, except that a word of four letters
// or more may be a one-letter typo of a word on the other side. Numbers
// and CJK characters must match exactly, since one of them is all that
// tells "170cm" from "165cm", "红色" from "蓝色" or one item from another.
// Token sets rather than longer n-grams are compared for that reason:
// n-gram overlap rewards shared phrasing ("…还有货吗"), and two questions
// about different items share most of it.
func sameQuestion(a, b questionShape) bool {
	onlyA, onlyB := difference(a.tokens, b.tokens), difference(b.tokens, a.tokens)
	if len(onlyA) != len(onlyB) {
		return false
	}
	used := make([]bool, len(onlyB))
	for _, x := range onlyA {
		matched := false
		for i, y := range onlyB {
			if !used[i] && typoOf(x, y) {
				used[i], matched = true, true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

// difference returns the tokens of sorted a that are not in sorted b.
func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

// typoOf reports whether two letter words of four letters or more are one
// edit (insert, delete, substitute or swap of neighbours) apart.
func typoOf(x, y string) bool {
	a, b := []rune(x), []rune(y)
	if min(len(a), len(b)) < 4 || !isWord(a) || !isWord(b) {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	switch {
	case len(a) < len(b): // one letter inserted at i
		return string(a[i:]) == string(b[i+1:])
	case i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i]: // neighbours swapped
		return string(a[i+2:]) == string(b[i+2:])
	default: // one letter substituted
		return string(a[i+1:]) == string(b[i+1:])
	}
}

func isWord(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsLetter(r) || isCJK(r) {
			return false
		}
	}
	return true
}

// isCJK reports whether r is written without spaces between words, so
// that each character is a token.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// foldWidth maps full-width ASCII forms ("？", "Ａ", "１") to ASCII.
func foldWidth(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	}
	return r
}

// collapseRepeats shortens a run of three or more of one letter to two:
// "helllo" is "hello" and "sooo" is "soo", while "xxl" and "coffee" keep
// their doubled letters.
func collapseRepeats(w string) string {
	var b strings.Builder
	var last rune
	run := 0
	for _, r := range w {
		if r == last {
			run++
		} else {
			last, run = r, 1
		}
		if run <= 2 {
			b.WriteRune(r)
		}
	}
	return b.String()
}
