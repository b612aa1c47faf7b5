package sample

import (
	"strings"
	"unicode/utf8"
)

// StopMatcher finds stop strings in text that arrives piece by piece, as
// decoded tokens do, where a stop string may span several pieces. It holds
// back text that could be the start of a stop string, and the bytes of an
// unfinished UTF-8 character, until later text decides them.
type StopMatcher struct {
	stops   []string
	held    string
	stopped bool
}

// NewStopMatcher returns a matcher for stops; empty strings are ignored.
func NewStopMatcher(stops []string) *StopMatcher {
	m := &StopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, s)
		}
	}
	return m
}

// Push adds the next piece of text. It returns the text that is now safe to
// emit and whether a stop string was found; on a stop, emit is the text before
// that stop string (which is itself dropped) and later pushes emit nothing.
// Generation stops as soon as a stop string is complete, so the one that ends
// first wins (the longest of those ending at the same byte), however the text
// was cut into pieces.
func (m *StopMatcher) Push(text string) (emit string, stopped bool) {
	if m.stopped {
		return "", true
	}
	buf := m.held + text
	if start := firstStop(buf, m.stops); start >= 0 {
		m.stopped, m.held = true, ""
		return buf[:start], true
	}
	keep := 0
	for _, s := range m.stops {
		keep = max(keep, partialSuffix(buf, s))
	}
	keep = max(keep, partialRune(buf))
	m.held = buf[len(buf)-keep:]
	return buf[:len(buf)-keep], false
}

// Flush ends the stream and returns the text still held back.
func (m *StopMatcher) Flush() string {
	rest := m.held
	m.held = ""
	return rest
}

// firstStop is the start of the stop string that ends first in s (the
// longest among those ending together), or -1.
func firstStop(s string, stops []string) int {
	start, end := -1, -1
	for _, stop := range stops {
		i := strings.Index(s, stop)
		if i < 0 {
			continue
		}
		if e := i + len(stop); end < 0 || e < end || (e == end && i < start) {
			start, end = i, e
		}
	}
	return start
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of stop.
func partialSuffix(s, stop string) int {
	for n := min(len(s), len(stop)-1); n > 0; n-- {
		if strings.HasSuffix(s, stop[:n]) {
			return n
		}
	}
	return 0
}

// partialRune is the length of an unfinished UTF-8 sequence at the end of s:
// a byte-level tokenizer may split one character across tokens.
func partialRune(s string) int {
	for n := 1; n <= min(len(s), utf8.UTFMax-1); n++ {
		c := s[len(s)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a leading byte: unfinished if it announces more bytes than follow
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if need > n {
				return n
			}
			return 0
		}
	}
	return 0
}
