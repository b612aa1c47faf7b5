package pystr

import (
	"reflect"
	"testing"
)

// The expectations are what CPython 3.11 returns for the same strings.
func TestPredicates(t *testing.T) {
	for _, c := range []struct {
		s              string
		upper, lower   bool
		strip, lowered string
	}{
		{"", false, false, "", ""},
		{"ABC", true, false, "ABC", "abc"},
		{"abc", false, true, "abc", "abc"},
		{"A1!", true, false, "A1!", "a1!"},
		{"123", false, false, "123", "123"},
		{"ǅ", false, false, "ǅ", "ǆ"},   // titlecase is cased but neither upper nor lower
		{"ⒶⒷ", true, false, "ⒶⒷ", "ⓐⓑ"}, // Other_Uppercase
		{"ª", false, true, "ª", "ª"},    // Other_Lowercase
		{"\x1c DON'T \u3000", true, false, "DON'T", "\x1c don't \u3000"},
		{"İ", true, false, "İ", "i\u0307"},
	} {
		if got := IsUpper(c.s); got != c.upper {
			t.Errorf("IsUpper(%q) = %v", c.s, got)
		}
		if got := IsLower(c.s); got != c.lower {
			t.Errorf("IsLower(%q) = %v", c.s, got)
		}
		if got := Strip(c.s); got != c.strip {
			t.Errorf("Strip(%q) = %q, want %q", c.s, got, c.strip)
		}
		if got := Lower(c.s); got != c.lowered {
			t.Errorf("Lower(%q) = %q, want %q", c.s, got, c.lowered)
		}
	}
}

func TestClasses(t *testing.T) {
	for _, r := range []rune{' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1f, 0x85, 0xa0, 0x2028, 0x3000} {
		if !IsSpace(r) {
			t.Errorf("IsSpace(%U) = false", r)
		}
	}
	for _, r := range []rune{'a', '_', '9', 'é', '日', '²'} {
		if !IsWord(r) {
			t.Errorf("IsWord(%U) = false", r)
		}
	}
	for _, r := range []rune{'-', '\'', 0x094D, 0x0301} { // virama and combining acute are not \w
		if IsWord(r) {
			t.Errorf("IsWord(%U) = true", r)
		}
	}
	if !IsDecimal('٣') || IsDecimal('²') {
		t.Error("IsDecimal disagrees with category Nd")
	}
	if got := Fields("  a\u3000b\x1cc  "); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Fields = %q", got)
	}
	if got := RStrip(" a \x1f"); got != " a" {
		t.Errorf("RStrip = %q", got)
	}
}
