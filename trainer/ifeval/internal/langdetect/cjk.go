package langdetect

// cjkRepresentative maps each CJK ideograph of a langdetect kanji class to
// the class representative (NGram.CJK_MAP).
var cjkRepresentative = map[rune]rune{}
