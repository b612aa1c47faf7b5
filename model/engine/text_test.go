package engine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/livehat/livehat/model/chat"
)

// feed runs ids through a reply one token at a time, as the scheduler does,
// and returns every delta and whether a stop string ended it.
func feed(r *replyText, ids []int) ([]Delta, bool) {
	var all []Delta
	for _, id := range ids {
		ds, stopped := r.pushToken(id)
		all = append(all, ds...)
		if stopped {
			return append(all, r.finish()...), true
		}
	}
	return append(all, r.finish()...), false
}

func joined(ds []Delta) (content, reasoning string, calls []chat.ToolCall) {
	var c, rs strings.Builder
	for _, d := range ds {
		c.WriteString(d.Content)
		rs.WriteString(d.Reasoning)
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
	}
	return c.String(), rs.String(), calls
}

func specials(n int, ids []int) []bool {
	s := make([]bool, n)
	for _, id := range ids {
		s[id] = true
	}
	return s
}

func TestReplyTextStreams(t *testing.T) {
	tok := trainTokenizer(t, 600)
	special := specials(tok.VocabSize(), tok.SpecialIDs())
	text := "<think>\n先想一想 the price\n</think>\n\n你好，世界！The jacket is 199 yuan.<tool_call>\n" +
		`{"name": "get_price", "arguments": {"item": "红色外套"}}` + "\n</tool_call>"
	ids := tok.EncodeWithSpecial(text)
	// Chinese characters are split across byte tokens in this vocabulary.
	split := false
	for _, id := range ids {
		if !utf8.Valid(tok.TokenBytes(id)) {
			split = true
		}
	}
	if !split {
		t.Fatal("test text has no character split across tokens")
	}
	r := newReplyText(tok, special, nil, false)
	ds, stopped := feed(r, append(ids, 2)) // <|im_end|> is special: no text
	if stopped {
		t.Fatal("stopped without stop strings")
	}
	for _, d := range ds {
		if !utf8.ValidString(d.Content) || !utf8.ValidString(d.Reasoning) {
			t.Fatalf("delta %+v is not valid UTF-8", d)
		}
	}
	content, reasoning, calls := joined(ds)
	if want := "\n先想一想 the price\n"; reasoning != want {
		t.Errorf("streamed reasoning %q, want %q", reasoning, want)
	}
	if want := "\n\n你好，世界！The jacket is 199 yuan."; content != want {
		t.Errorf("streamed content %q, want %q", content, want)
	}
	if len(calls) != 1 || calls[0].Name != "get_price" || string(calls[0].Arguments) != `{"item": "红色外套"}` {
		t.Errorf("streamed calls %+v", calls)
	}
	var res Result
	r.result(&res)
	if res.Reasoning != "先想一想 the price" || res.Content != "你好，世界！The jacket is 199 yuan." || res.ToolCallError != nil {
		t.Errorf("result %+v", res)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_price" {
		t.Errorf("result calls %+v", res.ToolCalls)
	}
}

func TestReplyTextStops(t *testing.T) {
	tok := trainTokenizer(t, 600)
	special := specials(tok.VocabSize(), tok.SpecialIDs())
	for _, tc := range []struct {
		text, stop, want string
		stopped          bool
	}{
		{"The price is 199 yuan. Is there free shipping?", "yuan.", "The price is 199 ", true},
		{"欢迎来到直播间！今天", "直播", "欢迎来到", true},
		// A held-back prefix of a stop string that never completes is
		// released at the end.
		{"Welcome to the live ro", "room", "Welcome to the live ro", false},
	} {
		ids := tok.Encode(tc.text)
		r := newReplyText(tok, special, []string{tc.stop}, false)
		ds, stopped := feed(r, ids)
		content, _, _ := joined(ds)
		if stopped != tc.stopped || content != tc.want {
			t.Errorf("%q stop %q: got %q stopped=%v, want %q stopped=%v", tc.text, tc.stop, content, stopped, tc.want, tc.stopped)
		}
		// Nothing after the stop, and nothing of the stop string, leaks
		// into the stream one token early.
		if strings.Contains(content, tc.stop) {
			t.Errorf("%q: stop string streamed", tc.text)
		}
	}
}

func TestReplyTextForcedThinking(t *testing.T) {
	tok := trainTokenizer(t, 600)
	special := specials(tok.VocabSize(), tok.SpecialIDs())
	if !opensThink("<|im_start|>assistant\n<think>\n") || opensThink("<|im_start|>assistant\n<think>\n\n</think>\n\n") {
		t.Fatal("opensThink misreads the prompt end")
	}
	r := newReplyText(tok, special, nil, true)
	ds, _ := feed(r, tok.EncodeWithSpecial("the price</think>\n\n199 yuan"))
	content, reasoning, _ := joined(ds)
	if reasoning != "the price" || content != "\n\n199 yuan" {
		t.Errorf("reasoning %q content %q", reasoning, content)
	}
	var res Result
	r.result(&res)
	if res.Reasoning != "the price" || res.Content != "199 yuan" {
		t.Errorf("result %+v", res)
	}
}

func TestReplyTextMalformedCall(t *testing.T) {
	tok := trainTokenizer(t, 600)
	special := specials(tok.VocabSize(), tok.SpecialIDs())
	r := newReplyText(tok, special, nil, false)
	feed(r, tok.EncodeWithSpecial(`Sure.<tool_call>{"name": "get_price", "arguments": [1]}</tool_call>`))
	var res Result
	r.result(&res)
	if res.ToolCallError == nil || len(res.ToolCalls) != 0 || !strings.HasPrefix(res.Content, "Sure.") {
		t.Errorf("result %+v, want a tool-call error and the text as written", res)
	}
}

func TestContentStart(t *testing.T) {
	tok := trainTokenizer(t, 600)
	for _, tc := range []struct {
		raw      string
		thinking bool
		want     int
	}{
		{"", false, -1},
		{"\n<thi", false, -1},
		{"Hello", false, 0},
		{"<think>abc", false, -1},
		{"<think>abc</think>x", false, len("<think>abc</think>")},
		{"abc</think>x", true, len("abc</think>")},
		{"abc", true, -1},
	} {
		r := newReplyText(tok, nil, nil, tc.thinking)
		r.raw = []byte(tc.raw)
		if got := r.contentStart(); got != tc.want {
			t.Errorf("contentStart(%q, thinking=%v) = %d, want %d", tc.raw, tc.thinking, got, tc.want)
		}
	}
}

// The think splitter gives the same reasoning and content however the text
// is cut into pieces, and loses nothing but the tags and the white space
// before <think>.
func FuzzThinkSplitter(f *testing.F) {
	f.Add("<think>\nabc\n</think>\n\nanswer", uint64(3))
	f.Add("  <thi", uint64(1))
	f.Add("no reasoning </think> here", uint64(7))
	f.Add("<think>unfinished </thi", uint64(2))
	f.Add("<think></think></think>", uint64(5))
	f.Fuzz(func(t *testing.T, text string, cuts uint64) {
		var whole thinkSplitter
		r1, c1 := whole.push(text)
		r2, c2 := whole.flush()
		wantR, wantC := r1+r2, c1+c2

		var split thinkSplitter
		var gotR, gotC strings.Builder
		rest := text
		for rest != "" {
			n := 1 + int(cuts%7)
			cuts = cuts/7 + 1
			n = min(n, len(rest))
			r, c := split.push(rest[:n])
			gotR.WriteString(r)
			gotC.WriteString(c)
			rest = rest[n:]
		}
		r, c := split.flush()
		gotR.WriteString(r)
		gotC.WriteString(c)
		if gotR.String() != wantR || gotC.String() != wantC {
			t.Fatalf("%q cut in pieces: reasoning %q content %q, whole: %q %q", text, gotR.String(), gotC.String(), wantR, wantC)
		}
		trimmed := strings.TrimLeft(text, " \t\r\n")
		if strings.HasPrefix(trimmed, thinkOpen) {
			if i := strings.Index(trimmed[len(thinkOpen):], thinkClose); i >= 0 {
				body := trimmed[len(thinkOpen):]
				if wantR != body[:i] || wantC != body[i+len(thinkClose):] {
					t.Fatalf("%q: reasoning %q content %q", text, wantR, wantC)
				}
			}
		} else if wantR != "" || wantC != text {
			t.Fatalf("%q without reasoning: reasoning %q content %q", text, wantR, wantC)
		}
	})
}

// Any token sequence streams as valid UTF-8 whose reasoning and content
// pieces, with the tags the splitter removed, make up the reply's Text, and
// Text equals the tokenizer's decoding of the non-special tokens.
func FuzzReplyText(f *testing.F) {
	tok := trainTokenizer(f, 600)
	special := specials(tok.VocabSize(), tok.SpecialIDs())
	f.Add([]byte{5, 0, 200, 3, 17, 250, 4, 100})
	f.Add([]byte("<think>价格</think>OK"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ids := make([]int, 0, len(data))
		var text []int
		for i := 0; i+1 < len(data); i += 2 {
			id := (int(data[i])<<8 | int(data[i+1])) % tok.VocabSize()
			ids = append(ids, id)
			if !special[id] {
				text = append(text, id)
			}
		}
		r := newReplyText(tok, special, nil, false)
		ds, _ := feed(r, ids)
		var res Result
		r.result(&res)
		if want := tok.Decode(text); res.Text != want {
			t.Fatalf("text %q, decoded %q", res.Text, want)
		}
		var streamed strings.Builder
		for _, d := range ds {
			if !utf8.ValidString(d.Content) || !utf8.ValidString(d.Reasoning) {
				t.Fatalf("delta %+v is not valid UTF-8", d)
			}
			streamed.WriteString(d.Reasoning)
			streamed.WriteString(d.Content)
		}
		if d := streamed.String(); len(d) > len(res.Text) {
			t.Fatalf("streamed %q is longer than the text %q", d, res.Text)
		}
	})
}
