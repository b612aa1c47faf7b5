package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// intent is a kind of question a viewer asks.
type intent uint8

const (
	askPrice intent = iota
	askCoupon
	askStock
	askSize
	askShipping
	askLink
	askSpecs
	askCompare
)

// intentWords are the words that ask each intent, lower case. They are
// found inside words too, so none may be a piece of a common word of
// another question ("pin" of "shipping" and "pink").
var intentWords = [...][]string{
	askPrice:    {"多少钱", "价格", "什么价", "怎么卖", "价钱", "几块", "贵不贵", "直播间价", "介绍", "price", "how much", "cost", "introduce"},
	askCoupon:   {"券", "优惠", "满减", "折扣", "到手", "coupon", "discount", "final price", "what do i pay", "how much after"},
	askStock:    {"有货", "还有吗", "还有没有", "还能拍", "库存", "卖完", "售罄", "现货", "断货", "in stock", "sold out", "still have", "stock"},
	askSize:     {"尺码", "什么码", "哪个码", "几码", "多大码", "穿多大", "身高", "体重", "which size", "what size", "size should", "size fits", "fit me"},
	askShipping: {"发货", "快递", "物流", "几天到", "包邮", "运费", "退货", "退换", "退款", "能退", "可以退", "退吗", "包退", "ship", "deliver", "return", "refund"},
	askLink:     {"链接", "怎么买", "在哪买", "上车", "置顶", "link", "how do i buy", "where can i buy", "pin it", "pin the", "pin that", "pin this"},
	askSpecs:    {"材质", "成分", "续航", "保质期", "产地", "尺寸", "过敏", "含", "material", "ingredient", "battery", "shelf life", "origin", "allerg", "contain"},
	askCompare:  {"哪个便宜", "哪个更", "哪款更", "哪个好", "比较", "cheaper", "costs less", "compare", "which is better"},
}

// asked returns what the message asks, or, when it asks nothing a word
// gives away, what the turn's calls looked up.
func asked(t *Turn) []intent {
	out := wordIntents(t.Message)
	if len(out) > 0 {
		return out
	}
	for _, c := range t.Calls {
		var in intent
		switch exportOf(c) {
		case "product_lookup":
			in = askPrice
		case "coupon_check":
			in = askCoupon
		case "check_stock":
			in = askStock
		case "shipping_policy":
			in = askShipping
		case "send_link":
			in = askLink
		default:
			continue
		}
		if !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	return out
}

// linkRefRE is an item named by its link ("4号链接", "link 3"), which asks
// for no link.
var linkRefRE = regexp.MustCompile(`(?i)\d+\s*号链接|\blink\s*#?\d+`)

// wordIntents returns what the message's words ask.
func wordIntents(message string) []intent {
	msg := asciiLower(linkRefRE.ReplaceAllString(normalize(message), " "))
	var out []intent
	for i, words := range intentWords {
		if containsAny(msg, words) {
			out = append(out, intent(i))
		}
	}
	return out
}

// speaker writes the sentences of a reply in one language.
type speaker struct{ zh bool }

func (s speaker) say(en, zh string) string {
	if s.zh {
		return zh
	}
	return en
}

// thanks is the reply to a viewer who asked nothing of the items.
func (s speaker) thanks() string {
	return s.say("Thanks for being here! Ask me anything about today's items.", "谢谢支持！商品问题随时问我哦。")
}

// name is how a reply in the speaker's language names an item: its
// Chinese name, or its Latin one in English ("It" when it has none).
func (s speaker) name(f *itemFacts) string {
	if s.zh && f.name != "" {
		return f.name
	}
	if f.latin != "" {
		return f.latin
	}
	if s.zh {
		return "这款"
	}
	return "It"
}

// replyLang reports whether the fallback and the feedback speak Chinese:
// the viewer's language (viewerLang), else the message's.
func replyLang(t *Turn, tf *turnFacts) bool {
	switch viewerLang(t, tf) {
	case "zh":
		return true
	case "en":
		return false
	}
	return hasHan(t.Message)
}

// fallback is the reply that goes on air when the model's is unbacked:
// the backed facts of what the viewer asked, in short spoken sentences,
// or an honest "let me check". It must pass the check itself.
func fallback(t *Turn, tf *turnFacts) string {
	s := speaker{zh: replyLang(t, tf)}
	if asksNothing(t, tf) {
		// What the calls looked up was the model's idea, not the viewer's.
		return s.thanks()
	}
	intents := asked(t)
	facts := askedFacts(t, tf)
	if (len(facts) > 0 || namesAllergen(t, tf)) && !slices.Contains(intents, askSpecs) {
		// "链长呢" names an attribute no intent word covers; what the
		// calls looked up was only a guess at the question.
		if len(wordIntents(t.Message)) == 0 {
			intents = nil
		}
		intents = append(intents, askSpecs)
	}
	var parts []string
	missing := false
	for _, in := range intents {
		var part string
		switch in {
		case askPrice:
			if !slices.Contains(intents, askCompare) && !slices.Contains(intents, askCoupon) {
				part = s.price(tf)
			}
		case askCoupon:
			part = s.coupon(tf)
		case askStock:
			part = s.stock(tf, t)
		case askSize:
			part = s.size(tf)
		case askShipping:
			part = s.shipping(tf, t)
		case askLink:
			if tf.pinnedAny {
				part = s.say("The link is pinned at the top, tap it to order.", "链接已置顶，点开就能拍。")
			}
		case askSpecs:
			part = s.specs(facts)
			if part == "" {
				part = s.allergen(t, tf)
			}
		case askCompare:
			part = s.compare(tf)
			if part == "" && !slices.Contains(intents, askCoupon) {
				part = s.price(tf)
			}
		}
		if part == "" && in != askPrice {
			missing = true
		}
		if part != "" && !slices.Contains(parts, part) {
			parts = append(parts, part)
		}
	}
	switch {
	case len(parts) == 0 && len(intents) == 0:
		return s.thanks()
	case len(parts) == 0:
		return s.say("Let me check that for you.", "这个我帮您确认一下，稍等哦。")
	case missing:
		parts = append(parts, s.say("Let me check the rest for you.", "其他的我帮您确认一下，稍等哦。"))
	}
	sep := " "
	if s.zh {
		sep = ""
	}
	out := strings.Join(parts, sep)
	// The rewrite must pass the check; if a fact reads back wrong, the
	// honest line is the one that goes on air. Only the reply differs,
	// so the turn's facts are not gathered again.
	check := *t
	check.Reply = out
	if findings := checkReply(&check, tf); len(findings) > 0 {
		return s.say("Let me check that for you.", "这个我帮您确认一下，稍等哦。")
	}
	return out
}

// first returns the first item of the turn's results that has what ok
// asks for.
func first(tf *turnFacts, ok func(*itemFacts) bool) *itemFacts {
	for _, f := range tf.inPlay() {
		if ok(f) {
			return f
		}
	}
	return nil
}

func (s speaker) price(tf *turnFacts) string {
	f := first(tf, func(f *itemFacts) bool { return f.price > 0 })
	if f == nil {
		return ""
	}
	if f.listPrice > f.price {
		return s.say(fmt.Sprintf("%s is %s yuan in the live room, down from %s yuan.", capitalize(s.name(f)), yuan(f.price), yuan(f.listPrice)),
			fmt.Sprintf("%s直播间价格%s元，原价%s元。", s.name(f), yuan(f.price), yuan(f.listPrice)))
	}
	return s.say(fmt.Sprintf("%s is %s yuan in the live room.", capitalize(s.name(f)), yuan(f.price)),
		fmt.Sprintf("%s直播间价格%s元。", s.name(f), yuan(f.price)))
}

// moneyKey returns the amount a result gave under key.
func moneyKey(f *itemFacts, key string) (int64, bool) {
	for _, m := range f.money {
		if m.key == key {
			return m.fen, true
		}
	}
	return 0, false
}

func (s speaker) coupon(tf *turnFacts) string {
	f := first(tf, func(f *itemFacts) bool { return len(f.coupons) > 0 || f.couponChecked })
	if f == nil {
		return ""
	}
	total, hasTotal := moneyKey(f, "total")
	if !hasTotal {
		total, hasTotal = f.price, f.price > 0
	}
	if len(f.coupons) == 0 {
		if !hasTotal || !f.couponChecked {
			return ""
		}
		return s.say(fmt.Sprintf("There is no coupon for it right now; it is %s yuan.", yuan(total)),
			fmt.Sprintf("这款暂时没有优惠券，%s元。", yuan(total)))
	}
	c := f.coupons[0]
	after, hasAfter := moneyKey(f, "total_after_coupon")
	switch {
	case c.amount > 0 && f.couponChecked && f.eligible != nil && *f.eligible && hasAfter:
		return s.say(fmt.Sprintf("A %s yuan coupon applies, so you pay %s yuan.", yuan(c.amount), yuan(after)),
			fmt.Sprintf("可以用%s元券，券后%s元。", yuan(c.amount), yuan(after)))
	case c.amount > 0 && f.eligible != nil && !*f.eligible && hasTotal:
		return s.say(fmt.Sprintf("The %s yuan coupon needs an order of %s yuan; it is %s yuan now.", yuan(c.amount), yuan(c.minSpend), yuan(total)),
			fmt.Sprintf("满%s元才能用%s元券，现在%s元。", yuan(c.minSpend), yuan(c.amount), yuan(total)))
	case c.amount > 0:
		// Without a coupon_check the terms are stated, not that a coupon
		// applies or exists for the viewer.
		return s.say(fmt.Sprintf("Orders from %s yuan get %s yuan off.", yuan(c.minSpend), yuan(c.amount)),
			fmt.Sprintf("满%s元减%s元。", yuan(c.minSpend), yuan(c.amount)))
	}
	return ""
}

// variantWords is how a reply names a variant: "L码" for a size in
// Chinese, "size L", or the variant's own name.
func (s speaker) variantWords(v string) string {
	if sizeLike(v) {
		return s.say("size "+v, v+"码")
	}
	return v
}

func sizeLike(v string) bool {
	switch strings.ToUpper(v) {
	case "XXS", "XS", "S", "M", "L", "XL", "XXL", "XXXL", "2XL", "3XL", "4XL", "5XL", "6XL":
		return true
	}
	return false
}

func (s speaker) stock(tf *turnFacts, t *Turn) string {
	f := first(tf, func(f *itemFacts) bool { return f.hasStock && f.stockChecked })
	if f == nil {
		return ""
	}
	stocks := namedVariants(normalize(t.Message), f.stock)
	var st variantStock
	switch {
	case len(stocks) == 1:
		st = stocks[0]
	case len(f.stock) == 1:
		st = f.stock[0]
	default:
		st = wholeStock(f.stock)
	}
	variant := st.name
	if strings.EqualFold(variant, "standard") {
		variant = ""
	}
	subject := s.say("It", s.name(f))
	if variant != "" {
		subject = s.say(capitalize(s.variantWords(variant)), s.name(f)+s.variantWords(variant))
	}
	switch st.stateNow() {
	case stateInStock, stateLow:
		return s.say(subject+" is in stock.", subject+"有货。")
	case stateSoldOut:
	default:
		return "" // presale or not stated: nothing to say for sure
	}
	out := s.say(subject+" is sold out right now.", subject+"已经售罄了。")
	for _, d := range f.dates {
		if containsAny(d.key, []string{"restock", "arriv", "back", "补货", "到货"}) {
			out += s.say(fmt.Sprintf(" It is expected back on %s %d.", monthName(d.d.month), d.d.day),
				fmt.Sprintf("预计%d月%d日补货。", d.d.month, d.d.day))
			break
		}
	}
	return out
}

func monthName(m int) string {
	return [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
		"November", "December"}[m-1]
}

func (s speaker) size(tf *turnFacts) string {
	f := first(tf, func(f *itemFacts) bool { return len(f.chart) > 0 })
	if f == nil {
		return ""
	}
	if tf.msgHeight == 0 && tf.msgWeight == 0 {
		var sizes []string
		for _, r := range f.chart {
			sizes = append(sizes, r.size)
		}
		return s.say(fmt.Sprintf("It comes in %s; tell me your height and weight and I'll recommend one.", strings.Join(sizes, ", ")),
			fmt.Sprintf("尺码有%s，告诉我身高体重帮您推荐。", strings.Join(sizes, "、")))
	}
	right := adviseSizes(f.chart, tf.msgHeight, tf.msgWeight)
	if len(right) == 0 {
		return ""
	}
	return s.say(fmt.Sprintf("From the size chart I'd recommend size %s for you.", right[0]),
		fmt.Sprintf("按尺码表建议您穿%s码。", right[0]))
}

func (s speaker) shipping(tf *turnFacts, t *Turn) string {
	f := first(tf, func(f *itemFacts) bool {
		for _, d := range f.durations {
			if containsAny(d.key, []string{"ship", "dispatch", "deliver", "return"}) {
				return true
			}
		}
		return false
	})
	if f == nil {
		return ""
	}
	var parts []string
	for _, d := range f.durations {
		if d.unit == "hour" && containsAny(d.key, []string{"ship", "dispatch", "deliver"}) {
			if strings.Contains(d.key, "hour") {
				parts = append(parts, s.say(fmt.Sprintf("It ships within %s hours", formatNum(d.v)), fmt.Sprintf("%s小时内发货", formatNum(d.v))))
			} else {
				parts = append(parts, s.say(fmt.Sprintf("It ships within %s days", formatNum(d.v/24)), fmt.Sprintf("%s天内发货", formatNum(d.v/24))))
			}
			break
		}
	}
	if days, ok := value([]*itemFacts{f}, "return"); ok {
		switch {
		case days > 0 && s.zh:
			parts = append(parts, fmt.Sprintf("支持%s天无理由退货", formatNum(days)))
		case days > 0:
			parts = append(parts, fmt.Sprintf("with %s-day returns", formatNum(days)))
		case s.zh:
			parts = append(parts, "不支持退货")
		default:
			parts = append(parts, "it cannot be returned")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if s.zh {
		return strings.Join(parts, "，") + "。"
	}
	return capitalize(strings.Join(parts, ", ")) + "."
}

// capitalize upper-cases a leading ASCII letter.
func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// specs answers an attribute the message names ("材质", "battery life").
func (s speaker) specs(facts []askedFact) string {
	if len(facts) == 0 {
		return ""
	}
	return s.fact(inLang(facts, s.zh))
}

// fact says one fact a viewer asked for in a sentence.
func (s speaker) fact(f askedFact) string {
	switch {
	case f.line != "":
		return f.line
	case f.key == restockKey:
		return s.say(fmt.Sprintf("It is expected back on %s %d.", monthName(f.restock.month), f.restock.day),
			fmt.Sprintf("预计%d月%d日补货。", f.restock.month, f.restock.day))
	case f.key == shipFromKey || f.key == "发货地":
		return s.say(fmt.Sprintf("It ships from %s.", f.value), fmt.Sprintf("从%s发货。", f.value))
	case !s.zh && plural(f.key):
		return fmt.Sprintf("%s: %s.", capitalize(f.key), f.value)
	}
	return s.say(fmt.Sprintf("The %s is %s.", f.key, f.value), fmt.Sprintf("%s是%s。", f.key, f.value))
}

// namesAllergen reports whether a message names an allergen that is no
// kind of food too ("is there fish in it", not "坚果多久发货"), which asks
// of the item's allergen list.
func namesAllergen(t *Turn, tf *turnFacts) bool {
	msg := unnamedMessage(t, tf)
	return slices.ContainsFunc(mentionedAllergens, func(w string) bool { return namesWord(msg, w) })
}

// allergen answers whether the item holds an allergen the message names
// ("含不含乳制品", "is there fish in it"), from the item's allergen list:
// of the two answers, the one the check backs; "" when the message names
// no allergen or no result lists the item's allergens.
func (s speaker) allergen(t *Turn, tf *turnFacts) string {
	if first(tf, func(f *itemFacts) bool { return f.allergensStated }) == nil {
		return ""
	}
	msg := unnamedMessage(t, tf)
	for _, cw := range conceptWords {
		if cw.c.kind != "allergen" || !namesWord(msg, cw.text) {
			continue
		}
		for _, out := range []string{
			s.say(fmt.Sprintf("It contains %s.", cw.text), fmt.Sprintf("这款含%s，过敏的朋友请注意。", cw.text)),
			s.say(fmt.Sprintf("Going by its allergen list, it does not contain %s.", cw.text), fmt.Sprintf("按标注的过敏原，这款不含%s。", cw.text)),
		} {
			check := *t
			check.Reply = out
			if len(checkReply(&check, tf)) == 0 {
				return out
			}
		}
		return ""
	}
	return ""
}

// shipFromKey is the attribute a result's ship_from is read as.
const shipFromKey = "ship from"

// plural reports whether an English attribute name is a plural
// ("pieces"), which "The … is" would not fit.
func plural(key string) bool {
	return strings.HasSuffix(key, "s") && !strings.HasSuffix(key, "ss") && !strings.Contains(key, " ")
}

func (s speaker) compare(tf *turnFacts) string {
	var priced []*itemFacts
	for _, f := range tf.inPlay() {
		if f.price > 0 {
			priced = append(priced, f)
		}
	}
	if len(priced) < 2 {
		return ""
	}
	a, b := priced[0], priced[1]
	cheaper := a
	if b.price < a.price {
		cheaper = b
	}
	if a.price == b.price {
		return s.say(fmt.Sprintf("%s and %s are both %s yuan.", capitalize(s.name(a)), s.name(b), yuan(a.price)),
			fmt.Sprintf("%s和%s都是%s元。", s.name(a), s.name(b), yuan(a.price)))
	}
	return s.say(fmt.Sprintf("%s is %s yuan and %s is %s yuan, so %s is cheaper.", capitalize(s.name(a)), yuan(a.price), s.name(b), yuan(b.price), s.name(cheaper)),
		fmt.Sprintf("%s%s元，%s%s元，%s更便宜。", s.name(a), yuan(a.price), s.name(b), yuan(b.price), s.name(cheaper)))
}

// maxFeedback bounds the feedback: the model's context is small.
const maxFeedback = 900

// feedback tells the model what it stated that nothing backs and what
// the turn does back.
func feedback(t *Turn, tf *turnFacts, findings []Finding) string {
	var b strings.Builder
	b.WriteString("Your reply states what this turn's tool results do not back: ")
	for i, f := range findings {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(findings)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
	}
	b.WriteString(".")
	if facts := summary(tf); facts != "" {
		b.WriteString(" Backed facts: " + facts + ".")
	}
	lang := "English"
	if replyLang(t, tf) {
		lang = "Chinese"
	}
	b.WriteString(" Answer again in " + lang + " with only these facts, in plain spoken words; if they do not answer the viewer, say you will check.")
	out := b.String()
	if len(out) > maxFeedback {
		cut := maxFeedback
		for cut > 0 && out[cut]&0xC0 == 0x80 {
			cut--
		}
		out = out[:cut] + "…"
	}
	return out
}

// summary lists the backed facts of the items in play compactly.
func summary(tf *turnFacts) string {
	var items []string
	for i, f := range tf.inPlay() {
		if i == 3 {
			break
		}
		var facts []string
		if f.price > 0 {
			facts = append(facts, "price "+yuan(f.price))
		}
		if f.listPrice > 0 {
			facts = append(facts, "list price "+yuan(f.listPrice))
		}
		for _, c := range f.coupons {
			if c.amount > 0 {
				facts = append(facts, fmt.Sprintf("coupon %s off from %s", yuan(c.amount), yuan(c.minSpend)))
			} else {
				facts = append(facts, fmt.Sprintf("coupon %s%% off", formatNum(c.percent)))
			}
		}
		if after, ok := moneyKey(f, "best_coupon.total_after_coupon"); ok {
			// The coupon an order reaches, beside the one it does not:
			// without it a retry read "coupon applies: false" and gave
			// the other coupon's threshold.
			facts = append(facts, "price after the best coupon "+yuan(after))
		}
		if f.eligible != nil {
			facts = append(facts, "coupon applies: "+strconv.FormatBool(*f.eligible))
		}
		if after, ok := moneyKey(f, "total_after_coupon"); ok {
			facts = append(facts, "price after coupon "+yuan(after))
		}
		if f.hasStock {
			facts = append(facts, "stock "+describeStock(f.stock))
		}
		if len(f.chart) > 0 {
			facts = append(facts, "sizes "+strings.Join(f.sizes, "/"))
		}
		for _, d := range f.durations {
			facts = append(facts, describeDuration(d))
		}
		for _, d := range f.dates {
			facts = append(facts, keyWords(d.key)+" "+d.d.String())
		}
		for j, a := range f.attrs {
			if j == 4 {
				break
			}
			facts = append(facts, a[0]+" "+a[1])
		}
		if f.pinned {
			facts = append(facts, "link pinned")
		}
		items = append(items, f.display()+" ("+strings.Join(facts, ", ")+")")
	}
	return strings.Join(items, "; ")
}
