package main

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jnode is a parsed JSON value: kind is 'o'bject, 'a'rray, 's'tring,
// 'n'umber, 'b'ool or 'z' (null).
type jnode struct {
	kind byte
	s    string
	n    float64
	b    bool
	keys []string
	vals []*jnode
}

// get returns the member k of an object, or nil.
func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, x := range n.keys {
		if x == k {
			return n.vals[i]
		}
	}
	return nil
}

// str returns the member k of an object as text ("" when absent).
func (n *jnode) str(k string) string {
	return n.get(k).text()
}

// text is a string or number value as text.
func (n *jnode) text() string {
	switch {
	case n == nil:
		return ""
	case n.kind == 's':
		return n.s
	case n.kind == 'n':
		return strconv.FormatFloat(n.n, 'f', -1, 64)
	}
	return ""
}

// number is a number or numeric string value, else 0.
func (n *jnode) number() float64 {
	switch {
	case n == nil:
		return 0
	case n.kind == 'n':
		return n.n
	case n.kind == 's':
		f, err := strconv.ParseFloat(strings.TrimSpace(n.s), 64)
		if err == nil && !math.IsNaN(f) {
			return f
		}
	}
	return 0
}

// maxDepth bounds the nesting parseJSON follows: tool results are flat.
const maxDepth = 32

// parseJSON parses one JSON value in a single pass (a WASM guest pays
// for every pass over a result).
func parseJSON(b []byte) (*jnode, error) {
	p := jparser{b: b}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(b) {
		return nil, p.errorf("data after the value")
	}
	return n, nil
}

// jparser reads JSON from b at i.
type jparser struct {
	b []byte
	i int
}

func (p *jparser) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jparser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *jparser) value(depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested more than %d deep", maxDepth)
	}
	p.ws()
	if p.i >= len(p.b) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		n := &jnode{kind: 'o'}
		if p.ws(); p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			if p.ws(); p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, p.errorf("want a member name")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			if p.ws(); p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, p.errorf("want ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			if done, err := p.next('}'); done || err != nil {
				return n, err
			}
		}
	case c == '[':
		p.i++
		n := &jnode{kind: 'a'}
		if p.ws(); p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			if done, err := p.next(']'); done || err != nil {
				return n, err
			}
		}
	case c == '"':
		s, err := p.str()
		return &jnode{kind: 's', s: s}, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
				p.i += len(lit)
				if lit == "null" {
					return &jnode{kind: 'z'}, nil
				}
				return &jnode{kind: 'b', b: lit == "true"}, nil
			}
		}
		return nil, p.errorf("bad literal")
	default:
		return p.number()
	}
}

// next reads the ',' between members or elements, or the closing byte;
// done reports the close.
func (p *jparser) next(close byte) (done bool, err error) {
	p.ws()
	switch {
	case p.i < len(p.b) && p.b[p.i] == ',':
		p.i++
		return false, nil
	case p.i < len(p.b) && p.b[p.i] == close:
		p.i++
		return true, nil
	}
	return true, p.errorf("want ',' or '%c'", close)
}

// number reads a JSON number (the grammar's, not Go's: no "+1", "01",
// ".5" or "1.").
func (p *jparser) number() (*jnode, error) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.b[intStart] == '0') {
		return nil, p.errorf("bad number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		return nil, p.errorf("number %s out of range", p.b[start:p.i])
	}
	return &jnode{kind: 'n', n: f}, nil
}

// str reads a JSON string at p.i (its opening quote) with its escapes.
func (p *jparser) str() (string, error) {
	p.i++
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != '"' && p.b[p.i] != '\\' && p.b[p.i] >= 0x20 {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '"' {
		s := string(p.b[start:p.i])
		p.i++
		return strings.ToValidUTF8(s, "\uFFFD"), nil
	}
	var out []byte
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return strings.ToValidUTF8(string(out), "\uFFFD"), nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		p.i += 2
		switch e := p.b[p.i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair is two escapes; a lone half reads as U+FFFD, as
				// encoding/json reads it.
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					at := p.i
					p.i += 2
					if lo, ok := p.hex4(); ok {
						if d := utf16.DecodeRune(r, lo); d != unicode.ReplacementChar {
							out = utf8.AppendRune(out, d)
							continue
						}
					}
					p.i = at
				}
				r = unicode.ReplacementChar
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.errorf("bad escape \\%c", e)
		}
	}
	return "", p.errorf("unterminated string")
}

// hex4 reads the four hex digits of a \u escape.
func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}
