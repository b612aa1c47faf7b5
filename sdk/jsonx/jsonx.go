// Package jsonx is a small JSON reader and writer without reflection, for
// plugin hot paths. A standard-Go wasm guest pays ~100 µs for
// encoding/json on a 200-byte message (14-25x native); hand-written
// decoders over this package cost a fraction of that, and the SDK's own
// types use it.
//
// The Reader pulls values in document order: Object calls a function per
// member key, which must consume the member's value with one of the
// value methods (or Skip). Parse (or Reader.Value) reads a document of
// unknown layout into a tree of Values to walk. The Writer appends to a
// byte slice and places commas itself.
package jsonx

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 256

// Reader reads one JSON value from a byte slice. Strings without escapes
// are returned as views of the slice, without a copy: allocation is what
// a wasm guest pays most for (see the package comment), so the slice
// must not be modified while strings read from it are in use.
type Reader struct {
	b     []byte
	i     int
	depth int
}

// NewReader returns a Reader over b. It does not copy b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// SyntaxError is a malformed document at byte Offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error implements error.
func (e *SyntaxError) Error() string { return fmt.Sprintf("json: %s at offset %d", e.Msg, e.Offset) }

func (r *Reader) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: r.i, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) ws() {
	// Loops work on locals: a wasm guest pays dearly for a field load
	// and store on every iteration.
	b, i := r.b, r.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	r.i = i
}

// peek returns the next non-space byte, or 0 at the end.
func (r *Reader) peek() byte {
	r.ws()
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// End checks that nothing but white space follows the value read.
func (r *Reader) End() error {
	if r.ws(); r.i < len(r.b) {
		return r.errorf("unexpected data after the value")
	}
	return nil
}

// Null consumes a null and reports whether there was one.
func (r *Reader) Null() bool {
	r.ws()
	if len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

func (r *Reader) literal(lit string) bool {
	if len(r.b)-r.i >= len(lit) && string(r.b[r.i:r.i+len(lit)]) == lit {
		r.i += len(lit)
		return true
	}
	return false
}

// Object reads an object, calling member for each key; member must read
// the value. A null counts as an empty object.
func (r *Reader) Object(member func(key string) error) error {
	if r.Null() {
		return nil
	}
	if r.peek() != '{' {
		return r.errorf("want an object")
	}
	if r.depth++; r.depth > maxDepth {
		return r.errorf("nested deeper than %d", maxDepth)
	}
	// No defer: a deferred call in a function with a loop is not
	// open-coded, and runtime defers are costly in a wasm guest.
	err := r.members(member)
	r.depth--
	return err
}

func (r *Reader) members(member func(key string) error) error {
	r.i++
	if r.peek() == '}' {
		r.i++
		return nil
	}
	for {
		if r.peek() != '"' {
			return r.errorf("want a member name")
		}
		key, err := r.quoted()
		if err != nil {
			return err
		}
		if r.peek() != ':' {
			return r.errorf("want ':' after a member name")
		}
		r.i++
		if err := member(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return r.errorf("want ',' or '}' in an object")
		}
	}
}

// Array reads an array, calling elem for each element; elem must read
// it. A null counts as an empty array.
func (r *Reader) Array(elem func() error) error {
	if r.Null() {
		return nil
	}
	if r.peek() != '[' {
		return r.errorf("want an array")
	}
	if r.depth++; r.depth > maxDepth {
		return r.errorf("nested deeper than %d", maxDepth)
	}
	err := r.elements(elem)
	r.depth--
	return err
}

func (r *Reader) elements(elem func() error) error {
	r.i++
	if r.peek() == ']' {
		r.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return r.errorf("want ',' or ']' in an array")
		}
	}
}

// String reads a string (null reads as ""), decoding escapes; invalid
// UTF-8 becomes U+FFFD as in encoding/json.
func (r *Reader) String() (string, error) {
	if r.peek() == '"' {
		return r.quoted()
	}
	if r.Null() {
		return "", nil
	}
	return "", r.errorf("want a string")
}

// quoted reads a string whose opening quote is the next byte. It is
// separate from String so that member names cost one call, not two:
// every call costs a wasm guest a trampoline under the deadline sandbox.
func (r *Reader) quoted() (string, error) {
	b := r.b
	start := r.i + 1
	i := start
	ascii := true
	// Fast path: no escapes, valid UTF-8.
	for i < len(b) {
		c := b[i]
		if c == '"' {
			s := b[start:i]
			r.i = i + 1
			if ascii || utf8.Valid(s) {
				return view(s), nil
			}
			return string([]rune(string(s))), nil
		}
		ascii = ascii && c < utf8.RuneSelf
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	r.i = i
	buf := append([]byte(nil), r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			if utf8.Valid(buf) {
				return string(buf), nil
			}
			return string([]rune(string(buf))), nil
		case c < 0x20:
			return "", r.errorf("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.b) {
			break
		}
		e := r.b[r.i+1]
		r.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			c1, ok := r.hex4()
			if !ok {
				return "", r.errorf("bad \\u escape")
			}
			ch := rune(c1)
			if utf16.IsSurrogate(ch) {
				ch = utf8.RuneError
				if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
					save := r.i
					r.i += 2
					c2, ok := r.hex4()
					if !ok {
						return "", r.errorf("bad \\u escape")
					}
					if d := utf16.DecodeRune(rune(c1), rune(c2)); d != utf8.RuneError {
						ch = d
					} else {
						r.i = save
					}
				}
			}
			buf = utf8.AppendRune(buf, ch)
		default:
			return "", r.errorf("bad escape \\%c", e)
		}
	}
	return "", r.errorf("unterminated string")
}

// view returns b as a string without copying it.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (r *Reader) hex4() (uint16, bool) {
	if len(r.b)-r.i < 4 {
		return 0, false
	}
	var v uint16
	for _, c := range r.b[r.i : r.i+4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint16(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v |= uint16(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	r.i += 4
	return v, true
}

// number returns the text of a number, checked against the JSON grammar.
func (r *Reader) number() ([]byte, error) {
	r.ws()
	start := r.i
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	digits := func() int {
		n := 0
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	intStart := r.i
	n := digits()
	if n == 0 || (n > 1 && r.b[intStart] == '0') {
		r.i = start
		return nil, r.errorf("want a number")
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return nil, r.errorf("want digits after '.'")
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return nil, r.errorf("want digits in the exponent")
		}
	}
	return r.b[start:r.i], nil
}

// Float reads a number (null reads as 0).
func (r *Reader) Float() (float64, error) {
	if r.Null() {
		return 0, nil
	}
	t, err := r.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, r.errorf("bad number %q", t)
	}
	if math.IsInf(f, 0) {
		return 0, r.errorf("number %q out of range", t)
	}
	return f, nil
}

// Int reads an integer (null reads as 0); fractions are refused.
func (r *Reader) Int() (int64, error) {
	if r.Null() {
		return 0, nil
	}
	t, err := r.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		return 0, r.errorf("want an integer, got %q", t)
	}
	return n, nil
}

// Bool reads true or false (null reads as false).
func (r *Reader) Bool() (bool, error) {
	if r.Null() {
		return false, nil
	}
	r.ws()
	switch {
	case r.literal("true"):
		return true, nil
	case r.literal("false"):
		return false, nil
	}
	return false, r.errorf("want true or false")
}

// Raw reads any value and returns its bytes, unparsed but checked.
func (r *Reader) Raw() ([]byte, error) {
	r.ws()
	start := r.i
	if err := r.Skip(); err != nil {
		return nil, err
	}
	return r.b[start:r.i:r.i], nil
}

// Skip reads and discards any value.
func (r *Reader) Skip() error {
	switch c := r.peek(); {
	case c == '{':
		return r.Object(func(string) error { return r.Skip() })
	case c == '[':
		return r.Array(r.Skip)
	case c == '"':
		_, err := r.String()
		return err
	case c == 't' || c == 'f':
		_, err := r.Bool()
		return err
	case c == 'n':
		if !r.Null() {
			return r.errorf("want null")
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		_, err := r.number()
		return err
	case c == 0 && r.i >= len(r.b):
		return r.errorf("unexpected end of input")
	default:
		return r.errorf("unexpected character %q", c)
	}
}

// Kind is the kind of a parsed Value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value: a tree for code that walks documents
// whose layout it does not know in advance (a tool's result). Strings
// are views of the parsed bytes, as with Reader.
type Value struct {
	Kind Kind
	// Str is a String's text, Num a Number's value, Bool a Bool's.
	Str  string
	Num  float64
	Bool bool
	// Keys are an Object's member names in document order and Elems
	// their values (at the same index); Elems are an Array's elements.
	Keys  []string
	Elems []*Value
}

// Parse reads b, which must be exactly one JSON value, as a tree.
func Parse(b []byte) (*Value, error) {
	r := NewReader(b)
	v, err := r.Value()
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Value reads any value as a tree.
func (r *Reader) Value() (*Value, error) {
	switch c := r.peek(); {
	case c == '{':
		v := &Value{Kind: Object}
		err := r.Object(func(k string) error {
			e, err := r.Value()
			v.Keys, v.Elems = append(v.Keys, k), append(v.Elems, e)
			return err
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	case c == '[':
		v := &Value{Kind: Array}
		err := r.Array(func() error {
			e, err := r.Value()
			v.Elems = append(v.Elems, e)
			return err
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	case c == '"':
		s, err := r.quoted()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Str: s}, nil
	case c == 't' || c == 'f':
		b, err := r.Bool()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Bool, Bool: b}, nil
	case c == 'n':
		if !r.Null() {
			return nil, r.errorf("want null")
		}
		return &Value{Kind: Null}, nil
	}
	if r.i >= len(r.b) {
		return nil, r.errorf("unexpected end of input")
	}
	f, err := r.Float()
	if err != nil {
		return nil, err
	}
	return &Value{Kind: Number, Num: f}, nil
}

// Get returns the first member named key of an object, or nil (also
// when v is nil or not an object).
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i, k := range v.Keys {
		if k == key {
			return v.Elems[i]
		}
	}
	return nil
}

// Text returns a String's text or a Number written in the shortest
// decimal form ("199", "0.5"); "" for other kinds and nil.
func (v *Value) Text() string {
	switch {
	case v == nil:
		return ""
	case v.Kind == String:
		return v.Str
	case v.Kind == Number:
		return strconv.FormatFloat(v.Num, 'f', -1, 64)
	}
	return ""
}

// Number returns a Number's value or the value a String spells ("199",
// " 9.9 "); 0 for anything else and nil.
func (v *Value) Number() float64 {
	switch {
	case v == nil:
		return 0
	case v.Kind == Number:
		return v.Num
	case v.Kind == String:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		if err == nil && !math.IsNaN(f) {
			return f
		}
	}
	return 0
}

// Valid reports whether b is exactly one JSON value.
func Valid(b []byte) bool {
	r := NewReader(b)
	return r.Skip() == nil && r.End() == nil
}

// Writer appends JSON to a byte slice. The zero value is ready to use.
type Writer struct {
	buf   []byte
	comma []bool // per open container: a member was written
	key   bool   // a key was just written
}

// Bytes returns what was written.
func (w *Writer) Bytes() []byte { return w.buf }

// Reset empties the writer and keeps its buffer.
func (w *Writer) Reset() { w.buf, w.comma, w.key = w.buf[:0], w.comma[:0], false }

func (w *Writer) sep() {
	if w.key {
		w.key = false
		return
	}
	if n := len(w.comma); n > 0 {
		if w.comma[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.comma[n-1] = true
	}
}

// ObjectStart opens an object; ObjectEnd closes it.
func (w *Writer) ObjectStart() { w.sep(); w.buf = append(w.buf, '{'); w.comma = append(w.comma, false) }

// ObjectEnd closes an object.
func (w *Writer) ObjectEnd() { w.buf = append(w.buf, '}'); w.comma = w.comma[:max(len(w.comma)-1, 0)] }

// ArrayStart opens an array; ArrayEnd closes it.
func (w *Writer) ArrayStart() { w.sep(); w.buf = append(w.buf, '['); w.comma = append(w.comma, false) }

// ArrayEnd closes an array.
func (w *Writer) ArrayEnd() { w.buf = append(w.buf, ']'); w.comma = w.comma[:max(len(w.comma)-1, 0)] }

// Key writes a member name; the next value is its value.
func (w *Writer) Key(k string) {
	w.sep()
	w.buf = AppendString(w.buf, k)
	w.buf = append(w.buf, ':')
	w.key = true
}

// String writes a string value.
func (w *Writer) String(s string) { w.sep(); w.buf = AppendString(w.buf, s) }

// Int writes an integer value.
func (w *Writer) Int(n int64) { w.sep(); w.buf = strconv.AppendInt(w.buf, n, 10) }

// Float writes a number; NaN and infinities, which JSON lacks, become 0.
func (w *Writer) Float(f float64) {
	w.sep()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	w.buf = strconv.AppendFloat(w.buf, f, 'f', -1, 64)
}

// Bool writes true or false.
func (w *Writer) Bool(b bool) { w.sep(); w.buf = strconv.AppendBool(w.buf, b) }

// Null writes null.
func (w *Writer) Null() { w.sep(); w.buf = append(w.buf, "null"...) }

// Raw writes raw, which must be one valid JSON value; invalid or empty
// raw is written as null so that the document stays valid.
func (w *Writer) Raw(raw []byte) {
	if len(raw) == 0 || !Valid(raw) {
		w.Null()
		return
	}
	w.sep()
	w.buf = append(w.buf, raw...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped as encoding/json does.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
