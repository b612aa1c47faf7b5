// Command moderation is an example viewer_message hook. Spam never
// reaches the model (deny): links, contact details that pull viewers off
// the platform, character floods and the same message sent again and
// again. Abuse does reach it, flagged (inject), so that the avatar
// answers calmly instead of echoing insults.
package main

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

// DefaultRepeatLimit is how many times a viewer may send the same message.
const DefaultRepeatLimit = 3

// ParseRepeatLimit reads {"repeat_limit": n} from the hook config.
func ParseRepeatLimit(raw []byte) (int, error) {
	limit := DefaultRepeatLimit
	if len(raw) == 0 {
		return limit, nil
	}
	r := jsonx.NewReader(raw)
	err := r.Object(func(k string) error {
		if k != "repeat_limit" {
			return r.Skip()
		}
		n, err := r.Int()
		if n > 0 {
			limit = int(n)
		}
		return err
	})
	return limit, err
}

var abusive = []string{"傻逼", "sb主播", "垃圾主播", "智障", "脑残", "去死", "滚蛋", "骗子", "狗东西",
	"idiot", "stupid", "moron", "scammer", "fuck", "shit", "kill yourself"}

// Verdict is what the hook found in one message.
type Verdict struct {
	Spam    string // why the message is spam, or ""
	Abusive []string
}

// History is what the plugin remembers of a viewer (in its kv scope).
type History struct {
	LastHash uint64
	Repeats  int
}

// Encode writes h compactly for the kv store.
func (h History) Encode() []byte {
	return []byte(strconv.FormatUint(h.LastHash, 36) + ":" + strconv.Itoa(h.Repeats))
}

// DecodeHistory reads Encode's output; anything else is a fresh history.
func DecodeHistory(b []byte) History {
	hash, reps, ok := strings.Cut(string(b), ":")
	if !ok {
		return History{}
	}
	h, err1 := strconv.ParseUint(hash, 36, 64)
	n, err2 := strconv.Atoi(reps)
	if err1 != nil || err2 != nil || n < 0 {
		return History{}
	}
	return History{LastHash: h, Repeats: n}
}

// normalize folds case, width and spacing so that trivial variations of
// a message count as repeats.
func normalize(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII
			r -= 0xFEE0
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Next returns the history after the viewer sent text.
func (h History) Next(text string) History {
	f := fnv.New64a()
	f.Write([]byte(normalize(text)))
	sum := f.Sum64()
	if sum == h.LastHash {
		return History{LastHash: sum, Repeats: h.Repeats + 1}
	}
	return History{LastHash: sum, Repeats: 1}
}

// Screen judges text, given the viewer's history after it (see Next).
func Screen(text string, h History, repeatLimit int) Verdict {
	var v Verdict
	norm := normalize(text)
	switch {
	case Contact(text) != "":
		v.Spam = Contact(text)
	case h.Repeats > repeatLimit:
		v.Spam = fmt.Sprintf("sent %d times", h.Repeats)
	case longestRun(text) >= 12:
		v.Spam = "character flood"
	case strings.TrimSpace(text) != "" && norm == "" && len([]rune(text)) > 20:
		v.Spam = "symbols only"
	}
	lower := strings.ToLower(text)
	for _, w := range abusive {
		if strings.Contains(lower, w) || (w != normalize(w) && strings.Contains(norm, normalize(w))) {
			v.Abusive = append(v.Abusive, w)
		}
	}
	return v
}

func longestRun(s string) int {
	best, run := 0, 0
	var last rune
	for i, r := range s {
		if i > 0 && r == last {
			run++
		} else {
			run = 1
		}
		last = r
		best = max(best, run)
	}
	return best
}

// Decide turns a verdict into the hook's decision.
func Decide(v Verdict) sdk.Decision {
	switch {
	case v.Spam != "":
		return sdk.Deny("spam: " + v.Spam)
	case len(v.Abusive) > 0:
		return sdk.Inject(fmt.Sprintf("The viewer's message is abusive (%s). Do not repeat the words; "+
			"answer calmly in one sentence, or move on to the products.", strings.Join(v.Abusive, ", ")))
	}
	return sdk.Allow()
}

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
