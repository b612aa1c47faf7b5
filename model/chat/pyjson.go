package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendPyJSON re-encodes the JSON value raw the way the Hugging Face chat
// template's `tojson` filter writes it (Python's json.dumps with
// ensure_ascii=False): ", " and ": " separators, object keys in their original
// order, non-ASCII text unescaped, integers kept, floats written as Python's
// repr. Matching this byte for byte keeps our prompts identical to the ones the
// model saw in training.
func appendPyJSON(dst []byte, raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dst, err := appendPyValue(dst, dec)
	if err != nil {
		return dst, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return dst, errors.New("trailing data after JSON value")
	}
	return dst, nil
}

func appendPyValue(dst []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return dst, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			dst = append(dst, '{')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				key, err := dec.Token()
				if err != nil {
					return dst, err
				}
				dst = appendPyString(dst, key.(string))
				dst = append(dst, ": "...)
				if dst, err = appendPyValue(dst, dec); err != nil {
					return dst, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return dst, err
			}
			return append(dst, '}'), nil
		case '[':
			dst = append(dst, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				if dst, err = appendPyValue(dst, dec); err != nil {
					return dst, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return dst, err
			}
			return append(dst, ']'), nil
		}
		return dst, fmt.Errorf("unexpected %q", rune(v))
	case string:
		return appendPyString(dst, v), nil
	case json.Number:
		return appendPyNumber(dst, string(v)), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return dst, fmt.Errorf("unexpected JSON token %v", tok)
}

// appendPyNumber writes a JSON number literal as Python reads and re-writes it:
// integers stay integers (so "-0" becomes "0"), anything with a fraction or
// exponent becomes a float printed by repr.
func appendPyNumber(dst []byte, lit string) []byte {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return append(dst, '0')
		}
		return append(dst, lit...)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && math.IsInf(f, 0) {
		if f > 0 {
			return append(dst, "Infinity"...)
		}
		return append(dst, "-Infinity"...)
	}
	return appendPyFloat(dst, f)
}

// appendPyFloat writes f as Python's float repr: the shortest round-tripping
// digits, positional for decimal exponents in [-4, 16), scientific otherwise.
func appendPyFloat(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	exp := strconv.FormatFloat(f, 'e', -1, 64)
	e, _ := strconv.Atoi(exp[strings.IndexByte(exp, 'e')+1:])
	if e < -4 || e >= 16 {
		return append(dst, exp...)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	dst = append(dst, s...)
	if !strings.ContainsRune(s, '.') {
		dst = append(dst, ".0"...)
	}
	return dst
}

// appendPyString quotes s as json.dumps(ensure_ascii=False) does.
func appendPyString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				if c < 0x20 {
					dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				} else {
					dst = append(dst, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, r)
		i += size
	}
	return append(dst, '"')
}
