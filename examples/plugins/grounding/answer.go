package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// missedFact is the one fact a viewer asked for that a result of the
// turn states and the reply leaves out.
type missedFact struct {
	item       *itemFacts
	key, value string
}

// unanswered finds the fact a reply leaves out: the viewer's message
// names an attribute of an item in play ("4号链接的材质是什么？") and asks
// nothing else a word gives away, a result states it, and the reply gives
// no value of an attribute the message names. A reply that is backed but
// says the price, or "the system cannot find it", to a question the
// results answer is no answer; the model is sent back to give it. Yes/no
// attributes are left to the fact check, which reads their polarity.
func unanswered(t *Turn, tf *turnFacts) (missedFact, bool) {
	for _, in := range wordIntents(t.Message) {
		if in != askSpecs {
			return missedFact{}, false
		}
	}
	// The item's own names are no attribute asked: "protein bar" asks
	// nothing of the bar's protein.
	msg := asciiLower(normalize(t.Message))
	for _, f := range tf.items {
		for _, n := range f.names {
			if len(n) > 1 {
				msg = strings.ReplaceAll(msg, n, " ")
			}
		}
	}
	reply := asciiLower(normalize(t.Reply))
	zh := replyLang(t, tf)
	var miss missedFact
	for _, f := range tf.inPlay() {
		for _, a := range f.attrs {
			key := asciiLower(a[0])
			if utf8.RuneCountInString(key) < 2 || !namesWord(msg, key) || yesNo(a[1]) {
				continue
			}
			if givesValue(reply, asciiLower(a[1])) {
				return missedFact{}, false
			}
			if miss.item == nil || (hasHan(a[1]) == zh && hasHan(miss.value) != zh) {
				miss = missedFact{item: f, key: a[0], value: a[1]}
			}
		}
	}
	return miss, miss.item != nil
}

// namesWord reports whether msg holds key as a word of its own: "fit" is
// no word of "fitness".
func namesWord(msg, key string) bool {
	return containsWhere(msg, key, func(start, end int) bool { return wordBounded(msg, start, end) })
}

// containsWhere reports whether s holds sub at a place ok accepts.
func containsWhere(s, sub string, ok func(start, end int) bool) bool {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(sub)
		from = end
		if ok(start, end) {
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
	return containsWhere(reply, num, func(start, end int) bool {
		return (start == 0 || !isDigit(reply[start-1])) && (end == len(reply) || !isDigit(reply[end]))
	})
}

// answerFeedback tells the model which fact its reply left out.
func answerFeedback(t *Turn, tf *turnFacts, m missedFact) string {
	zh := replyLang(t, tf)
	lang := "English"
	if zh {
		lang = "Chinese"
	}
	name := speaker{zh: zh}.name(m.item)
	return fmt.Sprintf("Your reply does not give what the viewer asked: the results state the %s of %s: %s. Answer again in %s with it, in plain spoken words.",
		m.key, name, m.value, lang)
}
