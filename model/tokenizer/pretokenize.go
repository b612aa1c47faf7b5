package tokenizer

import (
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// Patterns of the Split pre-tokenizer that are recognised and run by a
// hand-written scanner. Go's regexp has no look-ahead, which these patterns use
// in `\s+(?!\S)`; the scanner reproduces Oniguruma's leftmost-first,
// backtracking semantics for exactly these strings.
const (
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// gpt2Pattern is the split of the ByteLevel pre-tokenizer with use_regex.
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// Character classes as the patterns see them: \p{L}, \p{N}, \s, or none.
const (
	clsOther = 0
	clsL     = 1
	clsN     = 2
	clsS     = 3
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		t[r] = slowClass(r)
	}
	return t
}()

func slowClass(r rune) uint8 {
	switch {
	case unicode.IsLetter(r):
		return clsL
	case unicode.IsNumber(r):
		return clsN
	case unicode.IsSpace(r): // the Unicode White_Space property, as Oniguruma's \s
		return clsS
	}
	return clsOther
}

func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	// Fast paths for the big all-letter blocks of CJK text.
	if (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0xAC00 && r <= 0xD7A3) || (r >= 0x3041 && r <= 0x3096) || (r >= 0x30A1 && r <= 0x30FA) {
		return clsL
	}
	return slowClass(r)
}

func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// splitter cuts a string into consecutive pieces that cover it.
type splitter interface {
	// appendEnds appends the end offset of each piece of s to dst.
	appendEnds(dst []int, s string) []int
}

type scanKind int

const (
	scanQwen2 scanKind = iota
	scanLlama3
	scanGPT2
)

// patternScanner is the hand-written equivalent of one of the patterns above.
type patternScanner struct {
	kind scanKind
}

func (p patternScanner) appendEnds(dst []int, s string) []int {
	for i := 0; i < len(s); {
		var e int
		if p.kind == scanGPT2 {
			e = p.nextGPT2(s, i)
		} else {
			e = p.nextQwen(s, i)
		}
		dst = append(dst, e)
		i = e
	}
	return dst
}

// contraction reports the length after the apostrophe of 's, 't, 're, 've,
// 'm, 'll or 'd at the start of rest (0 if none). fold makes it
// ASCII-case-insensitive; the reference shows Oniguruma does not fold ſ to s here.
func contraction(rest string, fold bool) int {
	if len(rest) == 0 {
		return 0
	}
	lower := func(c byte) byte {
		if fold && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	var want byte
	switch lower(rest[0]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		want = 'e'
	case 'l':
		want = 'l'
	default:
		return 0
	}
	if len(rest) >= 2 && lower(rest[1]) == want {
		return 2
	}
	return 0
}

// run returns the end of the run of characters of class cls starting at i.
func run(s string, i int, cls uint8) int {
	for i < len(s) {
		r, w := runeAt(s, i)
		if classOf(r) != cls {
			break
		}
		i += w
	}
	return i
}

// spaces handles the whitespace alternatives at i: `\s*[\r\n]+` (when
// newlines), then `\s+(?!\S)`, then `\s+`.
func spaces(s string, i int, newlines bool) int {
	e, lastNL, lastStart := i, -1, i
	for e < len(s) {
		r, w := runeAt(s, e)
		if classOf(r) != clsS {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = e + w
		}
		lastStart = e
		e += w
	}
	switch {
	case newlines && lastNL > 0:
		return lastNL
	case e == len(s):
		return e
	case lastStart > i:
		// Give the last whitespace character to the next piece (the look-ahead).
		return lastStart
	}
	return e
}

func (p patternScanner) nextQwen(s string, i int) int {
	r, w := runeAt(s, i)
	if r == '\'' {
		if n := contraction(s[i+1:], true); n > 0 {
			return i + 1 + n
		}
	}
	c := classOf(r)
	j := i + w
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c == clsL {
		return run(s, j, clsL)
	}
	if r != '\r' && r != '\n' && c != clsN && j < len(s) {
		if r2, w2 := runeAt(s, j); classOf(r2) == clsL {
			return run(s, j+w2, clsL)
		}
	}
	// \p{N} or \p{N}{1,3}
	if c == clsN {
		if p.kind == scanLlama3 {
			for k := 1; k < 3 && j < len(s); k++ {
				r2, w2 := runeAt(s, j)
				if classOf(r2) != clsN {
					break
				}
				j += w2
			}
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	k := i
	if r == ' ' {
		k = j
	}
	if e := run(s, k, clsOther); e > k {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e
	}
	return spaces(s, i, true)
}

func (p patternScanner) nextGPT2(s string, i int) int {
	r, _ := runeAt(s, i)
	if r == '\'' {
		if n := contraction(s[i+1:], false); n > 0 {
			return i + 1 + n
		}
	}
	k, c := i, classOf(r)
	if r == ' ' && i+1 < len(s) {
		r2, _ := runeAt(s, i+1)
		if c2 := classOf(r2); c2 != clsS {
			k, c = i+1, c2
		}
	}
	if c == clsS {
		return spaces(s, i, false)
	}
	return run(s, k, c)
}

// regexSplitter runs a Split pattern without look-around through Go's regexp
// (RE2 syntax and leftmost-first alternation, like Oniguruma for such
// patterns; \s, \d and \w are rewritten to their Unicode meaning).
type regexSplitter struct {
	re *regexp.Regexp
}

func (rs regexSplitter) appendEnds(dst []int, s string) []int {
	prev := 0
	for _, m := range rs.re.FindAllStringIndex(s, -1) {
		if m[0] == m[1] {
			continue
		}
		if m[0] > prev {
			dst = append(dst, m[0])
		}
		dst = append(dst, m[1])
		prev = m[1]
	}
	if prev < len(s) {
		dst = append(dst, len(s))
	}
	return dst
}

// newPatternSplitter returns the splitter for an Isolated Split regex.
func newPatternSplitter(pattern string) (splitter, error) {
	switch pattern {
	case qwen2Pattern:
		return patternScanner{kind: scanQwen2}, nil
	case llama3Pattern:
		return patternScanner{kind: scanLlama3}, nil
	case gpt2Pattern:
		return patternScanner{kind: scanGPT2}, nil
	}
	goPattern, err := toGoRegexp(pattern)
	if err != nil {
		return nil, fmt.Errorf("regex %q is not supported: %w", pattern, err)
	}
	re, err := regexp.Compile(goPattern)
	if err != nil {
		return nil, fmt.Errorf("regex %q is not supported (only the Qwen2, Llama-3 and GPT-2 look-ahead patterns are built in; others must be RE2 syntax): %w", pattern, err)
	}
	return regexSplitter{re: re}, nil
}
