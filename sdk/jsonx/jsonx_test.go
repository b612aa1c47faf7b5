package jsonx

import (
	"encoding/json"
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
