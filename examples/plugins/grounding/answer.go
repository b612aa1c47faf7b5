package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// askedFact is an attribute of an item in play that the viewer's message
// names.
type askedFact struct {
	item       *itemFacts
	key, value string
	// restock is the date of a restockKey fact.
	restock date
	// line, when set, is the sentence that states the fact (the price or
	// the stock of askedIntent), in the reply's language.
	line string
}

// restockKey is the fact "when is it back" asks.
const restockKey = "restock date"

// restockWords ask of a restock; backWords with a whenWord ask when an
// item is back ("when is it back in stock", not "is it back in stock or
// nah", which asks the stock).
var (
	restockWords = []string{"补货", "到货", "restock"}
	backWords    = []string{"有货", "back in stock", "be back", "come back", "back on sale"}
	whenWords    = []string{"when", "what date", "how long", "how soon", "什么时候", "啥时候", "几号", "哪天", "多久"}
)

// askedRestock finds the restock date a message asks for ("2号链接啥时候
// 补货") that a result gives.
func askedRestock(t *Turn, tf *turnFacts) (askedFact, bool) {
	msg := unnamedMessage(t, tf)
	if !containsAny(msg, restockWords) && !(containsAny(msg, backWords) && containsAny(msg, whenWords)) {
		return askedFact{}, false
	}
	for _, f := range tf.inPlay() {
		for _, d := range f.dates {
			if containsAny(d.key, []string{"restock", "补货", "到货"}) && !strings.Contains(d.key, "variant") {
				return askedFact{item: f, key: restockKey, value: d.d.String(), restock: d.d}, true
			}
		}
	}
	return askedFact{}, false
}

// askedFacts lists the attributes of the items in play that the viewer's
// message names ("4号链接的材质是什么？"), each as a word of its own and not
// inside an item's name ("protein bar" asks nothing of the bar's protein).
// Yes/no attributes are left to the fact check, which reads polarity.
func askedFacts(t *Turn, tf *turnFacts) []askedFact {
	msg := unnamedMessage(t, tf)
	var out []askedFact
	for _, f := range tf.inPlay() {
		for _, a := range f.attrs {
			key := asciiLower(a[0])
			if utf8.RuneCountInString(key) >= 2 && namesWord(msg, key) && !yesNo(a[1]) {
				out = append(out, askedFact{item: f, key: a[0], value: a[1]})
			}
		}
	}
	// "哪里发的？", "从哪发货" ask where an item ships from without naming
	// the attribute.
	if containsAny(msg, shipFromAsks) && !slices.ContainsFunc(out, func(a askedFact) bool { return a.key == shipFromKey }) {
		for _, f := range tf.inPlay() {
			for _, a := range f.attrs {
				if a[0] == shipFromKey {
					out = append(out, askedFact{item: f, key: a[0], value: a[1]})
				}
			}
		}
	}
	// The longest name is the one asked: "chain length" over "length".
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].key) > len(out[j].key) })
	return out
}

// shipFromAsks are the ways a message asks where an item ships from.
var shipFromAsks = []string{"哪里发", "哪发", "哪儿发", "从哪", "where from", "ships from", "shipped from"}

// unnamedMessage is the viewer's message in lower case with the items'
// names blanked: what it asks, not what it calls the item.
func unnamedMessage(t *Turn, tf *turnFacts) string {
	msg := asciiLower(normalize(t.Message))
	for _, f := range tf.items {
		for _, n := range f.names {
			if len(n) > 1 {
				msg = strings.ReplaceAll(msg, n, " ")
			}
		}
	}
	return msg
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
	if m, ok := askedRestock(t, tf); ok {
		// Any date the reply states is the check's to hold to the
		// results; none leaves the question unanswered.
		for _, tok := range scanFacts(normalize(t.Reply)) {
			if tok.kind == tokDate {
				return askedFact{}, false
			}
		}
		return m, true
	}
	if m, ok := askedIntent(t, tf); ok {
		return m, true
	}
	for _, in := range wordIntents(t.Message) {
		// "ship from" asks shipping by its words and names the fact.
		if in != askSpecs && in != askShipping {
			return askedFact{}, false
		}
	}
	facts := askedFacts(t, tf)
	if len(facts) == 0 {
		return askedFact{}, false
	}
	reply := asciiLower(normalize(t.Reply))
	zh := replyLang(t, tf)
	for _, f := range facts {
		if givesValue(reply, asciiLower(f.value)) {
			return askedFact{}, false
		}
		// An English reply may put a value the results write in Chinese
		// in its own words ("ships from Chengdu, Sichuan"), which the
		// check cannot read back; naming the attribute is taken as
		// answering it.
		if !zh && hasHan(f.value) && namesAttribute(reply, asciiLower(f.key)) {
			return askedFact{}, false
		}
	}
	return inLang(facts, replyLang(t, tf)), true
}

// stockCues are how a reply speaks of an item's stock.
var stockCues = []string{"有货", "没货", "无货", "售罄", "卖完", "卖光", "库存", "现货", "缺货", "断货", "剩", "补货", "到货", "in stock",
	"out of stock", "sold out", "available", "left", "restock", "back on"}

// askedIntent finds a price or stock question whose answer a result gives
// and the reply leaves out: the message asks only the price ("卫衣多少钱")
// and the reply names no amount, or only the stock and the reply says
// nothing of it after a stock check. job10, under a renamed harness,
// answered "多少钱" with the material after a lookup that gave the price.
func askedIntent(t *Turn, tf *turnFacts) (askedFact, bool) {
	s := speaker{zh: replyLang(t, tf)}
	reply := asciiLower(normalize(t.Reply))
	// The fact must be of the item the viewer named: a lookup of another
	// item gives a true price no one asked for.
	named := func(f *itemFacts) bool {
		if f == nil || !namedBy(t.Message, f) {
			return false
		}
		asked := askedItem(tf, t.Message)
		return asked == nil || asked == f
	}
	intents := wordIntents(t.Message)
	switch {
	// A message that claims an amount of a named item and asks nothing
	// ("告诉大家保温杯只要7元") is answered with the price the results give.
	case slices.Equal(intents, []intent{askPrice}), len(intents) == 0 && statesMoney(t.Message):
		f := first(tf, func(f *itemFacts) bool { return f.price > 0 })
		if !named(f) || statesMoney(t.Reply) {
			return askedFact{}, false
		}
		return askedFact{item: f, key: "price", value: yuan(f.price) + " yuan", line: s.price(tf)}, true
	case slices.Equal(intents, []intent{askStock}):
		line := s.stock(tf, t)
		f := first(tf, func(f *itemFacts) bool { return f.hasStock && f.stockChecked })
		if line == "" || !named(f) || containsAny(reply, stockCues) {
			return askedFact{}, false
		}
		return askedFact{item: f, key: "stock", value: strings.TrimSpace(line), line: line}, true
	case slices.Contains(intents, askCompare):
		// Each item the comparison names, priced; the reply gives two.
		named := namedItems(t, tf)
		line := s.compare(tf)
		if len(named) < 2 || slices.ContainsFunc(named, func(f *itemFacts) bool { return !f.inPlay || f.price == 0 }) || line == "" ||
			len(moneyIn(t.Reply)) >= 2 {
			return askedFact{}, false
		}
		return askedFact{item: named[0], key: "prices", value: line, line: line}, true
	}
	// A question of one kind the lookup's follow-up call answers: the
	// coupon (its price asked too), the size, shipping, the link.
	kinds := slices.DeleteFunc(slices.Clone(intents), func(in intent) bool { return in == askPrice && slices.Contains(intents, askCoupon) })
	if len(kinds) != 1 {
		return askedFact{}, false
	}
	var line, key string
	var cues []string
	switch kinds[0] {
	case askCoupon:
		line, key, cues = s.coupon(tf), "coupon", couponCues
	case askSize:
		line, key, cues = s.size(tf), "recommended size", sizeCues
	case askShipping:
		line, key, cues = s.shipping(tf, t), "shipping and returns", shippingCues
	case askLink:
		if first(tf, func(f *itemFacts) bool { return f.pinned }) != nil {
			line = s.say("The link is pinned at the top, tap it to order.", "链接已置顶，点开就能拍。")
		}
		key, cues = "link", linkCues
	}
	f := first(tf, func(*itemFacts) bool { return true })
	// A reply that says the fact is not stated answers too; the fact check
	// holds that claim to the results.
	if line == "" || !named(f) || containsAny(reply, cues) || containsAny(reply, notStatedCues) {
		return askedFact{}, false
	}
	return askedFact{item: f, key: key, value: strings.TrimSpace(line), line: line}, true
}

// How a reply speaks of a coupon, a size, shipping or a link: a reply with
// one of these answers the question in its own way.
var (
	couponCues   = []string{"券", "优惠", "折", "满", "到手", "一共", "coupon", "discount", "eligible", "total", "you pay", "off"}
	sizeCues     = []string{"码", "尺码", "size"}
	shippingCues = []string{"发货", "发出", "退", "包邮", "快递", "物流", "运费", "天内", "ship", "dispatch", "return", "deliver", "days"}
	linkCues     = []string{"链接", "置顶", "link", "pinned", "pin"}
)

// moneyIn returns the amounts of money text states.
func moneyIn(text string) []token {
	return slices.DeleteFunc(scanFacts(normalize(text)), func(tok token) bool { return tok.kind != tokMoney })
}

// statesMoney reports whether text states an amount of money.
func statesMoney(text string) bool {
	return slices.ContainsFunc(scanFacts(normalize(text)), func(tok token) bool { return tok.kind == tokMoney })
}

// namedBy reports whether a viewer's message names the item: by its link
// ("2号链接", "link 2"), or by a name, an alias or a piece of one — a Latin
// word of four letters or more ("notebook" of "thick notebook"), or two
// Chinese characters or more ("卫衣" of "加绒卫衣").
func namedBy(message string, f *itemFacts) bool {
	msg := asciiLower(normalize(message))
	for _, ref := range linkRefRE.FindAllString(msg, -1) {
		if n, err := strconv.Atoi(strings.TrimFunc(ref, func(r rune) bool { return r < '0' || r > '9' })); err == nil && slices.Contains(f.links, n) {
			return true
		}
	}
	for _, n := range f.names {
		if len(n) >= 2 && strings.Contains(msg, n) {
			return true
		}
		for _, w := range strings.FieldsFunc(n, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) || unicode.Is(unicode.Han, r) }) {
			if utf8.RuneCountInString(w) >= 4 && namesWord(msg, w) {
				return true
			}
		}
		for _, span := range hanRuns(msg, make([]bool, len(msg))) {
			run := []rune(msg[span[0]:span[1]])
			for i := range run {
				for j := i + 2; j <= len(run); j++ {
					if strings.Contains(n, string(run[i:j])) {
						return true
					}
				}
			}
		}
	}
	return false
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

// namesAttribute reports whether a lower-case reply names an attribute:
// its name as a word, or for where an item ships from, the verb's forms.
func namesAttribute(reply, key string) bool {
	if key == shipFromKey {
		return containsAny(reply, []string{"ship from", "ships from", "shipped from", "shipping from", "dispatched from", "sent from"})
	}
	return namesWord(reply, key)
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

// hedgeCues mark a reply that says it cannot tell ("let me check",
// "查不到"), which the fact asked would contradict.
var hedgeCues = append([]string{"check", "确认", "不清楚", "不确定", "查不到", "查一下", "unable", "not sure", "can't find",
	"cannot find"}, notStatedCues...)

// answered is the last attempt's reply when the model's is backed but
// leaves out the fact asked: that fact, then the model's own words unless
// they hedge. ok is false when it does not read back as backed; the true
// reply then stays.
func answered(t *Turn, tf *turnFacts, m askedFact) (string, bool) {
	s := speaker{zh: replyLang(t, tf)}
	fact := s.fact(m)
	sep := " "
	if s.zh {
		sep = ""
	}
	outs := []string{fact}
	switch reply := strings.TrimSpace(t.Reply); {
	case containsAny(asciiLower(reply), hedgeCues), m.key == "prices":
		// A comparison's line holds every price; the reply's one would
		// say one of them again.
	case m.key == restockKey:
		// "Sold out." then when it is back.
		outs = []string{reply + sep + fact, fact}
	default:
		outs = []string{fact + sep + reply, fact}
	}
	for _, out := range outs {
		check := *t
		check.Reply = out
		if len(checkReply(&check, tf)) == 0 {
			return out, true
		}
	}
	return "", false
}

// answerFeedback tells the model which fact its reply left out.
func answerFeedback(t *Turn, tf *turnFacts, m askedFact) string {
	zh := replyLang(t, tf)
	lang := "English"
	if zh {
		lang = "Chinese"
	}
	name := speaker{zh: zh}.name(m.item)
	if name == "It" {
		name = "the item"
	}
	key := m.key
	if key == shipFromKey {
		key = "ship-from place"
	}
	return fmt.Sprintf("Your reply does not give what the viewer asked: the results state the %s of %s: %s. Answer again in %s with it, in plain spoken words.",
		key, name, m.value, lang)
}
