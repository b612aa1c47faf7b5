// Command speech is an example after_response hook that makes a reply
// fit text-to-speech: no markdown, links or emoji (a TTS engine reads
// them out), no longer than the harness's reply limit (cut at sentence
// boundaries, mid-word only when one word is longer than the limit), and optionally split into segments that a
// streaming TTS can start on early.
package main

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

// DefaultMaxChars applies when neither the config nor the harness sets a limit.
const DefaultMaxChars = 120

// Config is the hook's configuration; zero values take the defaults.
type Config struct {
	// MaxChars caps the reply, in characters; 0 uses the harness limit.
	MaxChars int
	// SegmentChars, when set, splits the reply into lines of at most
	// this many characters for streaming TTS.
	SegmentChars int
}

// ParseConfig reads the hook's config JSON.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(raw) == 0 {
		return c, nil
	}
	r := jsonx.NewReader(raw)
	err := r.Object(func(k string) error {
		var n int64
		var err error
		switch k {
		case "max_chars":
			n, err = r.Int()
			c.MaxChars = int(n)
		case "segment_chars":
			n, err = r.Int()
			c.SegmentChars = int(n)
		default:
			err = r.Skip()
		}
		return err
	})
	return c, err
}

// Clean removes what a TTS engine should not read aloud: links,
// markdown marks, emoji and line breaks. It is one hand-written pass:
// regular expressions cost a wasm guest tens of microseconds a reply.
func Clean(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	lineStart, lastSpace := true, true
	for i := 0; i < len(text); {
		rest := text[i:]
		if lineStart {
			lineStart = false
			j := 0
			for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
				j++
			}
			if n := listMarker(rest[j:]); n > 0 {
				i += j + n
				continue
			}
		}
		switch {
		case strings.HasPrefix(rest, "http://"), strings.HasPrefix(rest, "https://"), strings.HasPrefix(rest, "www."):
			for i < len(text) && text[i] != ' ' && text[i] != '\n' && text[i] != '\t' {
				i++
			}
			continue
		case strings.HasPrefix(rest, "**"), strings.HasPrefix(rest, "__"), strings.HasPrefix(rest, "~~"):
			i += 2
			continue
		case rest[0] == '`':
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(rest)
		i += size
		switch {
		case r == '\n' || r == '\r':
			lineStart = true
			r = ' '
		case isEmoji(r):
			continue
		}
		if r == ' ' || r == '\t' {
			if !lastSpace {
				b.WriteByte(' ')
				lastSpace = true
			}
			continue
		}
		b.WriteRune(r)
		lastSpace = false
	}
	return strings.TrimSpace(b.String())
}

// listMarker returns the length of a markdown line marker at the start
// of s ("## ", "- ", "1. ", "> "), or 0.
func listMarker(s string) int {
	n := 0
	switch {
	case strings.HasPrefix(s, "#"):
		for n < len(s) && n < 6 && s[n] == '#' {
			n++
		}
	case strings.HasPrefix(s, "- "), strings.HasPrefix(s, "* "), strings.HasPrefix(s, "+ "):
		return 2
	case strings.HasPrefix(s, ">"):
		n = 1
	default:
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(s) || s[n] != '.' {
			return 0
		}
		n++
	}
	if n < len(s) && s[n] == ' ' {
		return n + 1
	}
	if s[0] == '>' {
		return n
	}
	return 0
}

func isEmoji(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r == 0xFE0F || r == 0x200D
}

// sentences splits text after sentence-ending punctuation.
func sentences(text string, ends string) []string {
	var out []string
	start := 0
	for i, r := range text {
		// A full stop ends a sentence only before a space or the end, so
		// that "19.9" stays whole.
		stop := r == '.' && strings.ContainsRune(ends, '。') && (i+1 == len(text) || text[i+1] == ' ')
		if stop || strings.ContainsRune(ends, r) {
			end := i + utf8.RuneLen(r)
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

const (
	sentenceEnds = "。！？!?；;…"
	clauseEnds   = "，,、：:"
)

// joinFits joins parts while the result stays within max characters.
func joinFits(parts []string, max int) string {
	var b strings.Builder
	n := 0
	for _, p := range parts {
		sep := ""
		if b.Len() > 0 && needsSpace(b.String(), p) {
			sep = " "
		}
		l := utf8.RuneCountInString(sep + p)
		if n+l > max {
			break
		}
		b.WriteString(sep + p)
		n += l
	}
	return b.String()
}

func needsSpace(before, next string) bool {
	last, _ := utf8.DecodeLastRuneInString(before)
	first, _ := utf8.DecodeRuneInString(next)
	return last < 0x2E80 && first < 0x2E80 && !unicode.IsSpace(last)
}

// Shorten cuts text to at most max characters: whole sentences first,
// then whole clauses, then whole words with an ellipsis.
func Shorten(text string, max int) string {
	if utf8.RuneCountInString(text) <= max {
		return text
	}
	if s := joinFits(sentences(text, sentenceEnds), max); s != "" {
		return s
	}
	first := sentences(text, sentenceEnds)[0]
	if s := joinFits(sentences(first, clauseEnds), max-1); s != "" {
		return trimClauseEnd(s) + "…"
	}
	runes := []rune(first)[:max-1]
	cut := string(runes)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}

func trimClauseEnd(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool { return strings.ContainsRune(clauseEnds, r) })
}

// Segment splits text into lines of at most size characters, at
// sentence and then clause boundaries.
func Segment(text string, size int) []string {
	var out []string
	for _, s := range sentences(text, sentenceEnds) {
		if utf8.RuneCountInString(s) <= size {
			if n := len(out); n > 0 && utf8.RuneCountInString(out[n-1]+s) <= size {
				out[n-1] += s
				continue
			}
			out = append(out, s)
			continue
		}
		for _, c := range sentences(s, clauseEnds) {
			for utf8.RuneCountInString(c) > size {
				r := []rune(c)
				out = append(out, string(r[:size]))
				c = string(r[size:])
			}
			if c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// Fit decides for one reply: allow when it is already speakable,
// rewrite with the cleaned, shortened and segmented text otherwise.
func Fit(text string, replyChars int, cfg Config) sdk.Decision {
	max := cfg.MaxChars
	if max <= 0 {
		max = replyChars
	}
	if max <= 0 {
		max = DefaultMaxChars
	}
	out := Shorten(Clean(text), max)
	if cfg.SegmentChars > 0 {
		out = strings.Join(Segment(out, cfg.SegmentChars), "\n")
	}
	if out == text {
		return sdk.Allow()
	}
	if out == "" {
		return sdk.Deny("the reply has nothing speakable")
	}
	return sdk.Rewrite(out)
}

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
