package tokenizer

import (
	"fmt"
	"strings"
)

// Oniguruma, which Hugging Face uses for Split patterns, gives \s, \d and \w
// their Unicode meaning; Go's regexp gives them the ASCII one. toGoRegexp
// rewrites them to explicit Unicode classes so that a pattern means the same.
const (
	uniSpace = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
	uniDigit = `\p{Nd}`
	uniWord  = `\p{L}\p{M}\p{Nd}\p{Pc}`
)

func toGoRegexp(pattern string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			e := pattern[i]
			var set string
			switch e {
			case 's', 'S':
				set = uniSpace
			case 'd', 'D':
				set = uniDigit
			case 'w', 'W':
				set = uniWord
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			negated := e == 'S' || e == 'D' || e == 'W'
			switch {
			case !inClass && negated:
				b.WriteString("[^" + set + "]")
			case !inClass:
				b.WriteString("[" + set + "]")
			case e == 'D':
				b.WriteString(`\P{Nd}`)
			case negated:
				return "", fmt.Errorf(`\%c inside a character class has no RE2 equivalent`, e)
			default:
				b.WriteString(set)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' (after an optional '^') right at the start is a literal.
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
