package jsonx

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReaderObject(t *testing.T) {
	in := `{"s":"a\"b\\c\u00e9\ud83d\ude00","n":-1.5e2,"i":42,"b":true,"z":null,"a":[1,{"x":[]}],"raw":{"k":[1,2]}}`
	r := NewReader([]byte(in))
	got := map[string]any{}
	err := r.Object(func(k string) error {
		var err error
		switch k {
		case "s":
			got[k], err = r.String()
		case "n":
			got[k], err = r.Float()
		case "i":
			got[k], err = r.Int()
		case "b":
			got[k], err = r.Bool()
		case "raw":
			var raw []byte
			raw, err = r.Raw()
			got[k] = string(raw)
		default:
			err = r.Skip()
		}
		return err
	})
	if err != nil || r.End() != nil {
		t.Fatalf("Object: %v", err)
	}
	want := map[string]any{"s": "a\"b\\cé😀", "n": -150.0, "i": int64(42), "b": true, "raw": `{"k":[1,2]}`}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `"abc`, `"\x"`, `01`, `1.`, `-`, `1e`,
		`tru`, `{"a":1}x`, "\"a\x01\"", strings.Repeat("[", 300) + strings.Repeat("]", 300)} {
		if Valid([]byte(in)) {
			t.Errorf("Valid(%q) = true", in)
		}
	}
}

func TestWriter(t *testing.T) {
	var w Writer
	w.ObjectStart()
	w.Key("a")
	w.String("x\n\"y\"\u2028\xff")
	w.Key("list")
	w.ArrayStart()
	w.Int(1)
	w.Float(2.5)
	w.Bool(false)
	w.Null()
	w.Raw([]byte(`{"k":1}`))
	w.Raw([]byte(`{bad`))
	w.ArrayEnd()
	w.Key("empty")
	w.ObjectStart()
	w.ObjectEnd()
	w.ObjectEnd()
	var v map[string]any
	if err := json.Unmarshal(w.Bytes(), &v); err != nil {
		t.Fatalf("%s: %v", w.Bytes(), err)
	}
	if v["a"] != "x\n\"y\"\u2028\ufffd" || len(v["list"].([]any)) != 6 {
		t.Fatalf("decoded %#v from %s", v, w.Bytes())
	}
}

// FuzzReader checks the reader against encoding/json: the same documents
// are valid, and strings decode to the same text.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800x"`, `"\u00e9"`, `-0.5e-3`, `[true,false]`, `"a\xffb"`, `{"a":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		err := r.Skip()
		mine := err == nil && r.End() == nil
		if mine != json.Valid(b) {
			if err != nil && strings.Contains(err.Error(), "nested deeper") {
				return
			}
			t.Fatalf("Valid(%q): jsonx %v (%v), encoding/json %v", b, mine, err, json.Valid(b))
		}
		if !mine || len(b) == 0 {
			return
		}
		var want string
		if json.Unmarshal(b, &want) == nil {
			got, err := NewReader(b).String()
			if err != nil || got != want {
				t.Fatalf("String(%q) = %q, %v; encoding/json %q", b, got, err, want)
			}
		}
	})
}

// FuzzAppendString checks that written strings read back unchanged.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "\x00\x1f", "中文\u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		var std string
		if err := json.Unmarshal(enc, &std); err != nil {
			t.Fatalf("AppendString(%q) = %s: not JSON: %v", s, enc, err)
		}
		got, err := NewReader(enc).String()
		if err != nil || got != std {
			t.Fatalf("round trip of %q: %q, %v; encoding/json %q", s, got, err, std)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("round trip of valid %q gave %q", s, got)
		}
	})
}

// plain is a parsed value as encoding/json reads it into any (the first
// of repeated member names wins, as Get reads them).
func plain(v *Value) any {
	switch v.Kind {
	case Object:
		m := map[string]any{}
		for i, k := range v.Keys {
			if _, ok := m[k]; !ok {
				m[k] = plain(v.Elems[i])
			}
		}
		return m
	case Array:
		a := []any{}
		for _, e := range v.Elems {
			a = append(a, plain(e))
		}
		return a
	case String:
		return v.Str
	case Number:
		return v.Num
	case Bool:
		return v.Bool
	}
	return nil
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want any
		err  string
	}{
		{`{"a":[1,-2.5e1,"x"],"b":{"c":null,"d":true}}`, map[string]any{"a": []any{1.0, -25.0, "x"}, "b": map[string]any{"c": nil, "d": true}}, ""},
		{`"\u7389\ud83d\ude00\n\"\\\/"`, "玉😀\n\"\\/", ""},
		{`"\ud83d"`, "\uFFFD", ""},
		{`"\ud83dx"`, "\uFFFDx", ""},
		{` [ ] `, []any{}, ""},
		{`{}`, map[string]any{}, ""},
		{`null`, nil, ""},
		{`{"a":1,}`, nil, "want a member name"},
		{`[1 2]`, nil, "want ',' or ']'"},
		{`01`, nil, "want a number"},
		{`1.`, nil, "want digits after '.'"},
		{`"a`, nil, "unterminated"},
		{`"\x"`, nil, "bad escape"},
		{`"\u12"`, nil, "bad \\u escape"},
		{`tru`, nil, "want true or false"},
		{`nul`, nil, "want null"},
		{`x`, nil, "want a number"},
		{`1 2`, nil, "unexpected data after the value"},
		{`1e400`, nil, "out of range"},
		{strings.Repeat("[", 300) + strings.Repeat("]", 300), nil, "nested deeper than 256"},
		{"", nil, "unexpected end of input"},
		{`{"a":`, nil, "unexpected end of input"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			v, err := Parse([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(plain(v), c.want) {
				t.Fatalf("%#v, %v; want %#v", plain(v), err, c.want)
			}
		})
	}
}

func TestValueAccessors(t *testing.T) {
	v, err := Parse([]byte(`{"price":"199","n":19.9,"s":" 9.9 ","x":"abc","nan":"NaN","b":true,"dup":1,"dup":2}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key    string
		text   string
		number float64
	}{{"price", "199", 199}, {"n", "19.9", 19.9}, {"s", " 9.9 ", 9.9}, {"x", "abc", 0}, {"nan", "NaN", 0}, {"b", "", 0},
		{"dup", "1", 1}, {"absent", "", 0}} {
		t.Run(c.key, func(t *testing.T) {
			got := v.Get(c.key)
			if got.Text() != c.text || got.Number() != c.number {
				t.Fatalf("Text %q, Number %v; want %q, %v", got.Text(), got.Number(), c.text, c.number)
			}
		})
	}
	if arr, _ := Parse([]byte(`[1]`)); arr.Get("0") != nil {
		t.Error("Get on an array returned a member")
	}
	var none *Value
	if none.Get("a") != nil || none.Text() != "" || none.Number() != 0 {
		t.Error("a nil Value is not empty")
	}
}

// FuzzParse holds Parse to encoding/json: it accepts exactly the valid
// documents (up to its depth bound), and reads them alike.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800x"`, `-0.5e-3`, `[true,false]`, `{"a":"\ud83d\ude00","a":1}`, `{"stock":{"M":"x"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		if (err == nil) != json.Valid(b) {
			if err != nil && (strings.Contains(err.Error(), "nested deeper") || strings.Contains(err.Error(), "out of range")) {
				return
			}
			t.Fatalf("Parse(%q): %v; encoding/json valid %v", b, err, json.Valid(b))
		}
		var want any
		if err != nil || !utf8.Valid(b) || json.Unmarshal(b, &want) != nil || hasDuplicateKeys(v) {
			return
		}
		if got := plain(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, encoding/json reads %#v", b, got, want)
		}
	})
}

// hasDuplicateKeys reports whether an object of v repeats a name, which
// encoding/json reads last-wins and Get first-wins.
func hasDuplicateKeys(v *Value) bool {
	seen := map[string]bool{}
	for _, k := range v.Keys {
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	for _, e := range v.Elems {
		if hasDuplicateKeys(e) {
			return true
		}
	}
	return false
}
