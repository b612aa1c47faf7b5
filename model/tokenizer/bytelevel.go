package tokenizer

import (
	"unicode/utf8"
)

// byteLevel is GPT-2's reversible byte-to-character table: printable Latin-1
// bytes stand for themselves and the other 68 bytes are moved to U+0100 onward,
// so that every byte string becomes a string of visible characters.
type byteLevel struct {
	toRune [256]rune
	// toByte is indexed by rune; -1 marks runes that stand for no byte. All
	// 256 mapped runes are below 256+68.
	toByte [256 + 68]int16
}

func newByteLevel() *byteLevel {
	bl := &byteLevel{}
	for i := range bl.toByte {
		bl.toByte[i] = -1
	}
	n := 0
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		r := rune(b)
		if !printable {
			r = rune(256 + n)
			n++
		}
		bl.toRune[b] = r
		bl.toByte[r] = int16(b)
	}
	return bl
}

// encode maps raw bytes to their byte-level string.
func (bl *byteLevel) encode(b []byte) string {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, bl.toRune[c])
	}
	return string(out)
}

// decode appends the raw bytes of one token string, the way the Hugging Face
// ByteLevel decoder does: if any character is outside the table (an added token
// such as "<|im_start|>" written in plain text usually is not), the token's own
// UTF-8 bytes are used instead.
func (bl *byteLevel) decode(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		b, ok := bl.byteOf(r)
		if !ok {
			return append(dst[:start], tok...)
		}
		dst = append(dst, b)
	}
	return dst
}

// byteOf returns the byte that the character r stands for.
func (bl *byteLevel) byteOf(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(bl.toByte) || bl.toByte[r] < 0 {
		return 0, false
	}
	return byte(bl.toByte[r]), true
}

// appendLossyUTF8 appends b to dst with every ill-formed sequence replaced by
// U+FFFD using the "maximal subpart" rule (Unicode §3.9, the rule of Rust's
// String::from_utf8_lossy, which the Hugging Face decoders use), so Decode
// output matches Hugging Face byte for byte even for incomplete characters.
func appendLossyUTF8(dst []byte, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			dst = append(dst, b[i:i+size]...)
			i += size
			continue
		}
		// Invalid: skip the longest prefix that could still start a valid sequence.
		i += maximalSubpart(b[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// maximalSubpart returns the length (at least 1) of the maximal prefix of b that
// is a truncated but otherwise well-formed UTF-8 sequence.
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if x < lo || x > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}

// validUTF8 returns s unchanged when it is valid UTF-8 and otherwise the lossy
// conversion described at appendLossyUTF8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendLossyUTF8(nil, []byte(s)))
}

// byteTable is the fixed GPT-2 table; it is never modified.
var byteTable = newByteLevel()

// byteLevelString is the tokenizer.json spelling of raw bytes.
func byteLevelString(s string) string { return byteTable.encode([]byte(s)) }
