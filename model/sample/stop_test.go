package sample

import (
	"strings"
	"testing"
)

func TestStopMatcher(t *testing.T) {
	m := NewStopMatcher([]string{"</s>", "STOP", ""})
	steps := []struct {
		in, emit string
		stopped  bool
	}{
		{"Hello ", "Hello ", false},
		{"ST", "", false}, // could start "STOP"
		{"OX <", "STOX ", false},
		{"/", "", false},
		{"s> more", "", true},
		{"after", "", true},
	}
	for i, st := range steps {
		emit, stopped := m.Push(st.in)
		if emit != st.emit || stopped != st.stopped {
			t.Fatalf("step %d Push(%q) = %q, %v; want %q, %v", i, st.in, emit, stopped, st.emit, st.stopped)
		}
	}

	m = NewStopMatcher([]string{"b", "abc"})
	if emit, stopped := m.Push("xxabc"); emit != "xxa" || !stopped {
		t.Errorf("first completed stop: got %q %v, want \"xxa\" true", emit, stopped)
	}

	// A character split across tokens is held back whole.
	m = NewStopMatcher(nil)
	if emit, _ := m.Push("a\xe4\xbd"); emit != "a" {
		t.Errorf("unfinished UTF-8: emitted %q", emit)
	}
	if emit, _ := m.Push("\xa0!"); emit != "你!" {
		t.Errorf("finished UTF-8: emitted %q", emit)
	}
	m.Push("z\xf0")
	if rest := m.Flush(); rest != "\xf0" {
		t.Errorf("Flush = %q, want the held byte", rest)
	}
}

// FuzzStopMatcher checks that however the text is cut, the emitted text is
// exactly the text before the earliest stop string.
func FuzzStopMatcher(f *testing.F) {
	f.Add("hello </s> world", "</s>", "wor", 3, 8)
	f.Add("aaab", "aab", "b", 1, 2)
	f.Add("你好STOP", "STOP", "好S", 4, 5)
	f.Fuzz(func(t *testing.T, text, stop1, stop2 string, cut1, cut2 int) {
		m := NewStopMatcher([]string{stop1, stop2})
		first := firstStopOracle(text, []string{stop1, stop2})
		want, wantStop := text, first >= 0
		if wantStop {
			want = text[:first]
		}
		cuts := []int{abs(cut1) % (len(text) + 1), abs(cut2) % (len(text) + 1)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		var got strings.Builder
		stopped := false
		for _, piece := range []string{text[:cuts[0]], text[cuts[0]:cuts[1]], text[cuts[1]:]} {
			emit, s := m.Push(piece)
			got.WriteString(emit)
			stopped = s
		}
		if !stopped {
			got.WriteString(m.Flush())
		}
		if got.String() != want || stopped != wantStop {
			t.Fatalf("emitted %q stopped=%v, want %q stopped=%v", got.String(), stopped, want, wantStop)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// firstStopOracle finds where generation stops by scanning the text byte by
// byte, as if every byte were its own token.
func firstStopOracle(text string, stops []string) int {
	for end := 0; end <= len(text); end++ {
		best := -1
		for _, s := range stops {
			if s != "" && strings.HasSuffix(text[:end], s) && (best < 0 || end-len(s) < best) {
				best = end - len(s)
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}
