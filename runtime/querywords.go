package runtime

import (
	"unicode"
	"unicode/utf8"
)

// maxSpanUnits bounds a span of the viewer's words: twelve Han characters
// or twelve words hold any item name a viewer types, and the bound keeps
// the list a query is held to near a few hundred entries.
const maxSpanUnits = 12

// maxSpanText bounds the viewer text whose spans are listed: past it (a
// pasted wall of text) a query keeps to the catalog's words.
const maxSpanText = 400

// viewerSpans lists the spans of a viewer's message a lookup may name the
// item by, each once: every run of one to maxSpanUnits units, where a unit
// is a Han character (or any other character of a script without spaces)
// or a word of letters and digits, and a span never crosses punctuation.
// A lone character is no span: no item is named by one ("城" of
// "城堡积木"), and a compact model that stops after one looks up nothing.
// "珍珠耳环还有货吗" gives "珍珠", "珍珠耳", …, "珍珠耳环", …; "pearl
// earrings?" gives "pearl", "pearl earrings" and "earrings".
func viewerSpans(text string) []string {
	if len(text) > maxSpanText {
		return nil
	}
	type unit struct{ start, end int }
	var out []string
	seen := map[string]bool{}
	var run []unit // the units since the last punctuation
	flush := func() {
		for i := range run {
			for j := i; j < len(run) && j-i < maxSpanUnits; j++ {
				s := text[run[i].start:run[j].end]
				if utf8.RuneCountInString(s) < 2 {
					continue
				}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
		run = run[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWordRune(r):
			j := i + size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if isWordRune(r2) || (r2 == '-' || r2 == '\'' || r2 == '.') && wordContinues(text, j+s2) {
					j += s2
					continue
				}
				break
			}
			run = append(run, unit{i, j})
			i = j
			continue
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			run = append(run, unit{i, i + size})
		case r == ' ' || r == '\t':
			// a space joins the words on either side of it
		default:
			flush()
		}
		i += size
	}
	flush()
	return out
}

// isWordRune reports whether r belongs to a word of a script written
// with spaces between words (Latin letters, digits and the like).
func isWordRune(r rune) bool {
	return r < 0x2E80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// wordContinues reports whether a word rune follows at i: "t-shirt",
// "don't" and "7.5ml" are one word, "shirt-" and "it." end before the
// mark.
func wordContinues(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return isWordRune(r)
}
