// Package pystr reproduces the Python str predicates and transforms that the
// official IFEval checkers (and NLTK and langdetect underneath them) rely on:
// Unicode whitespace as str.isspace and re's \s see it, word characters as
// re's \w sees them, str.isupper/islower on whole strings, and str.strip.
//
// Go's regexp \s, \w, \b and \d are ASCII-only and strings.TrimSpace misses
// U+001C–U+001F, so the checkers use these functions instead.
package pystr

import (
	"strings"
	"unicode"
)

// IsSpace reports whether r is whitespace for Python's str.isspace and the
// Unicode \s of re: the White_Space property plus the separators U+001C–U+001F.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// IsWord reports whether r matches Python re's Unicode \w (str.isalnum() or "_").
// Combining marks (Mn, Mc) are not word characters.
func IsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// IsDecimal reports whether r matches Python re's Unicode \d (category Nd).
func IsDecimal(r rune) bool {
	return unicode.Is(unicode.Nd, r)
}

// isUpperRune is CPython's Py_UNICODE_ISUPPER: Lu or Other_Uppercase.
func isUpperRune(r rune) bool {
	return unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// isLowerRune is CPython's Py_UNICODE_ISLOWER: Ll or Other_Lowercase.
func isLowerRune(r rune) bool {
	return unicode.Is(unicode.Ll, r) || unicode.Is(unicode.Other_Lowercase, r)
}

// IsUpper is Python's str.isupper: at least one cased character and no
// lowercase or titlecase character.
func IsUpper(s string) bool {
	cased := false
	for _, r := range s {
		if isLowerRune(r) || unicode.Is(unicode.Lt, r) {
			return false
		}
		if isUpperRune(r) {
			cased = true
		}
	}
	return cased
}

// IsLower is Python's str.islower: at least one cased character and no
// uppercase or titlecase character.
func IsLower(s string) bool {
	cased := false
	for _, r := range s {
		if isUpperRune(r) || unicode.Is(unicode.Lt, r) {
			return false
		}
		if isLowerRune(r) {
			cased = true
		}
	}
	return cased
}

// Strip is Python's str.strip() without arguments.
func Strip(s string) string {
	return strings.TrimFunc(s, IsSpace)
}

// RStrip is Python's str.rstrip() without arguments.
func RStrip(s string) string {
	return strings.TrimRightFunc(s, IsSpace)
}

// Lower approximates Python's str.lower(): Unicode simple lowercase plus the
// one multi-character mapping that changes lengths in practice (U+0130 becomes
// "i" followed by a combining dot). Python's context-dependent final sigma is
// not reproduced (Σ always becomes σ).
func Lower(s string) string {
	if strings.ContainsRune(s, '\u0130') {
		s = strings.ReplaceAll(s, "\u0130", "i\u0307")
	}
	return strings.ToLower(s)
}

// Fields is Python's str.split() without arguments: runs of whitespace
// separate fields and leading or trailing whitespace yields no empty field.
func Fields(s string) []string {
	return strings.FieldsFunc(s, IsSpace)
}
