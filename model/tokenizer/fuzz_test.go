package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fuzzTokenizers returns the trained fixture and, when the shared data is
// present, the real Qwen3 tokenizer.
func fuzzTokenizers(f *testing.F) []*Tokenizer {
	toks := []*Tokenizer{}
	tok, err := Load("testdata/trained")
	if err != nil {
		f.Fatal(err)
	}
	toks = append(toks, tok)
	if dir, ok := qwen3Dir(); ok {
		q, err := Load(dir)
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, q)
	}
	return toks
}

func FuzzEncodeDecode(f *testing.F) {
	toks := fuzzTokenizers(f)
	for _, s := range smallCorpus {
		f.Add(s)
	}
	for _, s := range []string{"", " ", "\r\n\r\n  x", "e\u0301", "a\xffb\xe4\xb8", "<|im_start|><|im_end|>", "'S'll'VE", strings200()} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := norm.NFC.String(validUTF8(s))
		for _, tok := range toks {
			for _, withSpecial := range []bool{false, true} {
				ids := tok.encode(s, withSpecial)
				for _, id := range ids {
					if id < 0 || id >= tok.VocabSize() {
						t.Fatalf("id %d out of range", id)
					}
				}
				if got := tok.Decode(ids); got != want {
					t.Fatalf("special=%v: Decode(Encode(%q)) = %q, want %q", withSpecial, s, got, want)
				}
				d := tok.NewStreamDecoder()
				var streamed []byte
				for _, id := range ids {
					streamed = append(streamed, d.Next(id)...)
				}
				if got := string(streamed) + d.Flush(); got != want {
					t.Fatalf("streamed decoding of %q = %q, want %q", s, got, want)
				}
				if again := tok.encode(s, withSpecial); !slices.Equal(again, ids) {
					t.Fatalf("second (cached) encoding of %q differs: %v vs %v", s, again, ids)
				}
			}
			if utf8.ValidString(s) && norm.NFC.IsNormalString(s) && tok.Decode(tok.Encode(s)) != s {
				t.Fatalf("valid NFC text %q does not round-trip", s)
			}
		}
	})
}

func strings200() string {
	b := make([]byte, 0, 600)
	for i := range 200 {
		b = utf8.AppendRune(b, rune(0x4e00+i*37))
	}
	return string(b)
}

func FuzzLoad(f *testing.F) {
	small := trainSmall(f, 300)
	seed, err := small.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"version":"1.0","model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},` +
		`"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true},"decoder":{"type":"ByteLevel"},"added_tokens":[{"id":3,"content":"<s>","special":true}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Parse(data)
		if err != nil {
			return
		}
		const text = "Hello 世界 <|im_start|> it's 42\n\n"
		ids := tok.EncodeWithSpecial(text)
		tok.Decode(ids)
		out, err := tok.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of a parsed file: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("saved file does not parse: %v", err)
		}
		if got := again.EncodeWithSpecial(text); !slices.Equal(got, ids) {
			t.Fatalf("reloaded tokenizer encodes differently: %v vs %v", got, ids)
		}
	})
}
