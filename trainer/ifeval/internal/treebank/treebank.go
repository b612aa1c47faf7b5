// Package treebank ports NLTK's NLTKWordTokenizer (the "improved Treebank"
// tokenizer behind nltk.word_tokenize, as of NLTK 3.8): a fixed sequence of
// regular-expression rewrites that pad punctuation, quotes and clitics with
// spaces, followed by a whitespace split.
//
// Python's \s, \d and \b are Unicode-aware; the classes below spell them out
// and the rules that need lookbehind or Unicode word boundaries are written
// by hand.
package treebank

import (
	"regexp"
	"strings"

	"github.com/livehat/livehat/trainer/ifeval/internal/pystr"
)

// space is Python's Unicode \s as a character-class body.
const space = `\t\n\v\f\r\x1c-\x1f\x85\p{Z}`

// rewrite is one re.sub step.
type rewrite struct {
	re   *regexp.Regexp
	repl string
}

func rule(pattern, repl string) rewrite {
	return rewrite{regexp.MustCompile(pattern), repl}
}

// The rules are immutable after initialisation.
var (
	startingQuotes = []rewrite{
		rule("([«“‘„]|`+)", " $1 "),
		rule(`^"`, "``"),
		rule("(``)", " $1 "),
		rule(`([ (\[{<])("|'')`, "$1 `` "),
	}
	punctuation = []rewrite{
		rule(`([^.])(\.)([\])}>"'»”’ ]*)[`+space+`]*$`, "$1 $2 $3 "),
		rule(`([:,])([^\p{Nd}])`, " $1 $2"),
		rule(`([:,])$`, " $1 "),
		rule(`\.{2,}`, " $0 "),
		rule(`[;@#$%&]`, " $0 "),
		rule(`([^.])(\.)([\])}>"']*)[`+space+`]*$`, "$1 $2$3 "),
		rule(`[?!]`, " $0 "),
		rule(`([^'])' `, "$1 ' "),
		rule(`[*]`, " $0 "),
		rule(`[\][(){}<>]`, " $0 "),
		rule(`--`, " -- "),
	}
	endingQuotes = []rewrite{
		rule(`([»”’])`, " $1 "),
		rule(`''`, " '' "),
		rule(`"`, " '' "),
		rule(`[`+space+`]+`, " "),
		rule(`([^' ])('[sS]|'[mM]|'[dD]|') `, "$1 $2 "),
		rule(`([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `, "$1 $2 "),
	}
)

// contraction is one MacIntyre contraction split into two tokens: `(?i)\b(first)(second)\b`,
// or with afterSpace `(?i)\b(first)(second)(?=\s)`, or with leadingSpace
// `(?i) (first)(second)\b`.
type contraction struct {
	first, second string
	leadingSpace  bool
	afterSpace    bool
}

var contractions = []contraction{
	{first: "can", second: "not"},
	{first: "d", second: "'ye"},
	{first: "gim", second: "me"},
	{first: "gon", second: "na"},
	{first: "got", second: "ta"},
	{first: "lem", second: "me"},
	{first: "more", second: "'n"},
	{first: "wan", second: "na", afterSpace: true},
	{first: "'t", second: "is", leadingSpace: true},
	{first: "'t", second: "was", leadingSpace: true},
}

// Tokenize splits one sentence into tokens as NLTKWordTokenizer.tokenize does.
func Tokenize(text string) []string {
	for _, r := range startingQuotes {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	text = padOpeningApostrophes(text)
	for _, r := range punctuation {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	text = " " + text + " "
	for _, r := range endingQuotes {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	for _, c := range contractions {
		text = c.apply(text)
	}
	return pystr.Fields(text)
}

// padOpeningApostrophes is the rule
// `(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)` → "' ": an apostrophe
// that opens a word, other than a clitic, is split from it.
func padOpeningApostrophes(text string) string {
	rs := []rune(text)
	var b strings.Builder
	for i, r := range rs {
		b.WriteRune(r)
		if r != '\'' || (i > 0 && pystr.IsWord(rs[i-1])) || i+1 >= len(rs) || !pystr.IsWord(rs[i+1]) {
			continue
		}
		clitic := false
		for _, c := range []string{"re", "ve", "ll", "m", "t", "s", "d", "n"} {
			if hasFoldPrefix(rs[i+1:], c) && boundary(rs, i+1+len(c)) {
				clitic = true
				break
			}
		}
		if !clitic {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// hasFoldPrefix reports whether rs starts with prefix, ignoring case.
func hasFoldPrefix(rs []rune, prefix string) bool {
	p := []rune(prefix)
	return len(rs) >= len(p) && strings.EqualFold(string(rs[:len(p)]), prefix)
}

// boundary is Python's Unicode \b at position i of rs.
func boundary(rs []rune, i int) bool {
	before := i > 0 && pystr.IsWord(rs[i-1])
	after := i < len(rs) && pystr.IsWord(rs[i])
	return before != after
}

// apply replaces every match of the contraction by " first second ".
func (c contraction) apply(text string) string {
	rs := []rune(text)
	n1, n2 := len([]rune(c.first)), len([]rune(c.second))
	var out []rune
	for i := 0; i < len(rs); {
		start := i
		if c.leadingSpace {
			if rs[i] != ' ' {
				out = append(out, rs[i])
				i++
				continue
			}
			start = i + 1
		} else if !boundary(rs, i) {
			out = append(out, rs[i])
			i++
			continue
		}
		end := start + n1 + n2
		ok := hasFoldPrefix(rs[start:], c.first) && hasFoldPrefix(rs[start+min(n1, len(rs)-start):], c.second) && end <= len(rs)
		if ok {
			if c.afterSpace {
				ok = end < len(rs) && pystr.IsSpace(rs[end])
			} else {
				ok = boundary(rs, end)
			}
		}
		if !ok {
			out = append(out, rs[i])
			i++
			continue
		}
		out = append(out, ' ')
		out = append(out, rs[start:start+n1]...)
		out = append(out, ' ')
		out = append(out, rs[start+n1:end]...)
		out = append(out, ' ')
		i = end
	}
	return string(out)
}
