package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// askedFact is an attribute of an item in play that the viewer's message
// names.
type askedFact struct {
	item       *itemFacts
	key, value string
}

// askedFacts lists the attributes of the items in play that the viewer's
// message names ("4号链接的材质是什么？"), each as a word of its own and not
// inside an item's name ("protein bar" asks nothing of the bar's protein).
// Yes/no attributes are left to the fact check, which reads polarity.
func askedFacts(t *Turn, tf *turnFacts) []askedFact {
	msg := asciiLower(normalize(t.Message))
	for _, f := range tf.items {
		for _, n := range f.names {
			if len(n) > 1 {
				msg = strings.ReplaceAll(msg, n, " ")
			}
		}
	}
	var out []askedFact
	for _, f := range tf.inPlay() {
		for _, a := range f.attrs {
			key := asciiLower(a[0])
			if utf8.RuneCountInString(key) >= 2 && namesWord(msg, key) && !yesNo(a[1]) {
				out = append(out, askedFact{item: f, key: a[0], value: a[1]})
			}
		}
	}
	// The longest name is the one asked: "chain length" over "length".
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].key) > len(out[j].key) })
	return out
}

// inLang returns the fact to say in a reply in Chinese (zh) or English:
// the first (longest named) whose value is in that language, else the
// first.
func inLang(facts []askedFact, zh bool) askedFact {
	for _, f := range facts {
		if hasHan(f.value) == zh {
			return f
		}
	}
	return facts[0]
}

// unanswered finds the fact a reply leaves out: the message names an
// attribute a result states (askedFacts) and asks nothing else a word
// gives away, and the reply gives the value of none of them. A reply that
// is backed but says the price, or "the system cannot find it", to a
// question the results answer is no answer; the model is sent back.
func unanswered(t *Turn, tf *turnFacts) (askedFact, bool) {
	for _, in := range wordIntents(t.Message) {
		if in != askSpecs {
			return askedFact{}, false
		}
	}
	facts := askedFacts(t, tf)
	if len(facts) == 0 {
		return askedFact{}, false
	}
	reply := asciiLower(normalize(t.Reply))
	for _, f := range facts {
		if givesValue(reply, asciiLower(f.value)) {
			return askedFact{}, false
		}
	}
	return inLang(facts, replyLang(t, tf)), true
}

// namesWord reports whether msg holds key as a word of its own: "fit" is
// no word of "fitness".
func namesWord(msg, key string) bool {
	for start, end := range occurrences(msg, key) {
		if wordBounded(msg, start, end) {
			return true
		}
	}
	return false
}

// yesNo reports whether an attribute's value is a yes or a no.
func yesNo(v string) bool {
	switch asciiLower(strings.TrimSpace(v)) {
	case "yes", "no", "true", "false", "是", "否", "有", "无", "支持", "不支持":
		return true
	}
	return false
}

// givesValue reports whether a lower-case reply gives a lower-case value:
// the value itself, or, for a measure ("1500w", "7天"), its number.
func givesValue(reply, value string) bool {
	if value == "" {
		return false
	}
	if strings.Contains(reply, value) {
		return true
	}
	n := 0
	for n < len(value) && (isDigit(value[n]) || (value[n] == '.' && n > 0)) {
		n++
	}
	if n == 0 {
		return false
	}
	num := strings.TrimSuffix(value[:n], ".")
	for start, end := range occurrences(reply, num) {
		if (start == 0 || !isDigit(reply[start-1])) && (end == len(reply) || !isDigit(reply[end])) {
			return true
		}
	}
	return false
}

// answerFeedback tells the model which fact its reply left out.
func answerFeedback(t *Turn, tf *turnFacts, m askedFact) string {
	zh := replyLang(t, tf)
	lang := "English"
	if zh {
		lang = "Chinese"
	}
	name := speaker{zh: zh}.name(m.item)
	return fmt.Sprintf("Your reply does not give what the viewer asked: the results state the %s of %s: %s. Answer again in %s with it, in plain spoken words.",
		m.key, name, m.value, lang)
}
