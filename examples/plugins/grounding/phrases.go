package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Residue: what a model leaks that no viewer should hear.
var (
	markupRE      = regexp.MustCompile(`(?i)<\|[^|<>]{0,40}\|>|</?(?:tool_call|tool_response|tool_result|think|thinking|function|functions|tools?|im_start|im_end|assistant|user|system|answer|reasoning)\b[^<>]{0,60}>|\[/?(?:tool_calls|inst|tool_results)\]`)
	jsonRE        = regexp.MustCompile(`\[\s*[{\[]|[{\[]\s*"[^"]{0,80}"\s*[:,\]}]|"[A-Za-z_][\w ]{0,40}"\s*:\s*[-{\["\dtfn]`)
	placeholderRE = regexp.MustCompile(`\{\{[^{}]{0,80}\}\}|\$\{[^{}]{0,60}\}|\{[A-Za-z_\p{Han}][\w.\p{Han}]{0,40}\}|%[sdvq]\b`)
	braceRE       = regexp.MustCompile(`[{}]`)
	fieldRE       = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b_[a-z][a-z0-9]*\b`)
	urlRE         = regexp.MustCompile(`(?i)\bhttps?://\S+|\bwww\.\S+`)
	memberRE      = regexp.MustCompile(`"[A-Za-z_][A-Za-z0-9_]{0,39}"\s*:\s*[-{\["\dtfn]`)
)

// residueBytes are the bytes each residue pattern's matches hold one of.
var residueBytes = map[*regexp.Regexp]string{markupRE: "<[", jsonRE: "{[", placeholderRE: "{%$", braceRE: "{}", urlRE: ":", fieldRE: "_"}

func (c *checker) residue() {
	flagAll := func(re *regexp.Regexp, why string) {
		if !strings.ContainsAny(c.lower, residueBytes[re]) && !(re == urlRE && strings.Contains(c.lower, "www.")) {
			return // each pattern needs one of these bytes; most replies hold none
		}
		src := c.text
		if re == fieldRE {
			src = c.lower // "mulu_lookupNowNow…": a field glued to capitals
		}
		for _, m := range re.FindAllStringIndex(src, -1) {
			if overlaps(c.named, m[0], m[1]) {
				continue
			}
			if re == placeholderRE && c.text[m[0]] == '%' && m[0] > 0 && isDigit(c.text[m[0]-1]) {
				continue // "20%s" is no placeholder
			}
			if re == urlRE && c.inTexts(asciiLower(c.text[m[0]:m[1]])) {
				continue
			}
			if re == fieldRE && c.inViewerName(m[0], m[1]) {
				continue // "谢谢lily_zhang"
			}
			claim(c.named, m[0], m[1])
			c.flag(KindResidue, m[0], m[1], "%s", why)
		}
	}
	flagAll(markupRE, "tool-call or reasoning markup must never be spoken")
	flagAll(jsonRE, "JSON must never be spoken")
	flagAll(placeholderRE, "an unfilled template placeholder")
	flagAll(braceRE, "braces are template or JSON residue")
	flagAll(urlRE, "a URL no tool result gives; links are pinned, never read out")
	flagAll(fieldRE, "a field name of a tool result, not words for viewers")
	c.gluedKeys()
	c.gluedWords()
	c.bareMembers()
	for _, id := range c.tf.ids {
		if !idLike(id) || c.isName(asciiLower(id)) {
			continue
		}
		for start, end := range occurrences(c.lower, asciiLower(id)) {
			if overlaps(c.named, start, end) || !wordBounded(c.lower, start, end) {
				continue
			}
			claim(c.named, start, end)
			c.flag(KindResidue, start, end, "an id of the catalog, not a name viewers know")
		}
	}
}

// bareMembers flags a member of JSON spoken without its braces
// ("\"quantity\": 1 in stock"): a quoted key before a colon and a value.
// Quoted words with a space are a quote ("\"on sale\": 199").
func (c *checker) bareMembers() {
	if !strings.Contains(c.text, "\"") {
		return
	}
	for _, m := range memberRE.FindAllStringIndex(c.text, -1) {
		if overlaps(c.named, m[0], m[1]) {
			continue
		}
		claim(c.named, m[0], m[1])
		c.flag(KindResidue, m[0], m[1], "JSON must never be spoken")
	}
}

// gluedKeys flags a field name of the turn's results run into the reply's
// other words: "今天主推沐森descriptionUS" is a name the model failed to
// copy, finished with the key beside it. Standing alone a key may be a
// word ("the description says"), so only one glued to a Chinese character
// or to capitals or digits after it is residue.
func (c *checker) gluedKeys() {
	for _, k := range c.tf.keys {
		if len(k) < 6 || strings.IndexFunc(k, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			continue // short words are words; underscores are fieldRE's
		}
		if !c.mayHold(k) || c.inTexts(k) || strings.Contains(asciiLower(c.t.Message), k) {
			continue
		}
		for start, end := range occurrences(c.lower, k) {
			before, _ := utf8.DecodeLastRuneInString(c.text[:start])
			after, _ := utf8.DecodeRuneInString(c.text[end:])
			han := func(r rune) bool { return unicode.Is(unicode.Han, r) }
			glued := han(before) || han(after) || (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9')
			if !glued || overlaps(c.named, start, end) || (start > 0 && isASCIILetter(c.text[start-1])) {
				continue
			}
			claim(c.named, start, end)
			c.flag(KindResidue, start, end, "a field name of a tool result run into the reply, not words for viewers")
		}
	}
}

// camelWords are the run-together names a reply may use as words.
var camelWords = []string{"wechat", "tiktok", "youtube", "iphone", "ipad", "airpods", "macbook", "paypal", "ebay", "whatsapp",
	"playstation", "linkedin", "powerbank"}

// gluedWords flags a Latin word with a capital inside it that neither
// the results, the catalog's names, the message nor the viewer's name
// hold: two words a model ran together ("Today's pick isRou", "down
// from UamAh"), never a word a viewer knows.
func (c *checker) gluedWords() {
	for i := 0; i < len(c.text); {
		if !isASCIILetter(c.text[i]) {
			i++
			continue
		}
		start := i
		for i < len(c.text) && isASCIILetter(c.text[i]) {
			i++
		}
		w := c.text[start:i]
		glued := false
		for j := 1; j < len(w); j++ {
			if w[j-1] >= 'a' && w[j-1] <= 'z' && w[j] >= 'A' && w[j] <= 'Z' {
				glued = true
				break
			}
		}
		lw := asciiLower(w)
		if !glued || overlaps(c.named, start, i) || slices.Contains(camelWords, lw) || c.inTexts(lw) ||
			strings.Contains(asciiLower(c.t.Message), lw) || c.inViewerName(start, i) {
			continue
		}
		claim(c.named, start, i)
		c.flag(KindResidue, start, i, "words run together, not words for viewers")
	}
}

// inViewerName reports whether text[start:end] lies in the viewer's name
// where the reply writes it.
func (c *checker) inViewerName(start, end int) bool {
	v := asciiLower(strings.TrimSpace(normalize(c.t.Viewer)))
	if len(v) < end-start {
		return false
	}
	for from := max(0, end-len(v)); from <= start; from++ {
		if strings.HasPrefix(c.lower[from:], v) {
			return true
		}
	}
	return false
}

// brokenText flags text no viewer should be given: bytes that are not
// UTF-8, U+FFFD (what a decoder leaves for them: a model that samples
// byte-level tokens can stop half-way through a character), other
// noncharacters, and control characters but tabs and line breaks.
func (c *checker) brokenText() {
	for i := 0; i < len(c.text); {
		r, size := utf8.DecodeRuneInString(c.text[i:])
		why := brokenRune(r, size)
		if why == "" {
			i += size
			continue
		}
		start := i
		for i < len(c.text) {
			r, size = utf8.DecodeRuneInString(c.text[i:])
			if brokenRune(r, size) == "" {
				break
			}
			i += size
		}
		claim(c.named, start, i)
		c.findings = append(c.findings, Finding{Kind: KindResidue, Phrase: brokenPhrase(c.text, start, i),
			Why: why + ": broken text must never be spoken", at: start})
	}
}

// loopRun is how many times in a row one character may be spoken: a
// host laughs "哈哈哈" or stresses "！！！", but ten of one character is a
// model caught in a loop ("50-storage禾禾禾禾…", a hundred times).
const loopRun = 10

// loopUnits is how many times in a row a piece of two to eight
// characters may be spoken: "hahaha" is a laugh, "NowNowNowNowNow…" a
// model caught in a loop.
const loopUnits = 6

// loops flags a character repeated loopRun times or more in a row,
// white space aside, and digits, whose runs the number reader judges
// ("120 digits"); and a piece of two to eight characters repeated
// loopUnits times or more.
func (c *checker) loops() {
	c.pieceLoops()
	for i := 0; i < len(c.text); {
		r, _ := utf8.DecodeRuneInString(c.text[i:])
		start, n := i, 0
		for i < len(c.text) {
			r2, s2 := utf8.DecodeRuneInString(c.text[i:])
			if r2 != r {
				break
			}
			i += s2
			n++
		}
		if n >= loopRun && !unicode.IsSpace(r) && !unicode.IsDigit(r) && !strings.ContainsRune(cnDigitRunes, r) && r != '两' {
			claim(c.named, start, i)
			c.findings = append(c.findings, Finding{Kind: KindResidue, Phrase: brokenPhrase(c.text, start, i),
				Why: fmt.Sprintf("%q %d times in a row: a model's loop, never spoken", r, n), at: start})
		}
	}
}

// pieceLoops flags a piece of two to eight bytes repeated loopUnits
// times or more in a row, its first run only.
func (c *checker) pieceLoops() {
	for i := 0; i < len(c.text); i++ {
		for n := 2; n <= 8 && i+n*loopUnits <= len(c.text); n++ {
			piece := c.text[i : i+n]
			end := i + n
			for end+n <= len(c.text) && c.text[end:end+n] == piece {
				end += n
			}
			if (end-i)/n < loopUnits {
				continue // the common case, settled by comparing bytes
			}
			first, _ := utf8.DecodeRuneInString(piece)
			if !utf8.ValidString(piece) || strings.TrimSpace(piece) == "" || strings.TrimLeft(piece, string(first)) == "" ||
				strings.IndexFunc(piece, func(r rune) bool { return unicode.IsDigit(r) || strings.ContainsRune(cnDigitRunes, r) }) >= 0 ||
				overlaps(c.named, i, end) {
				continue // one character's run is loops()'s; digits are the number reader's
			}
			claim(c.named, i, end)
			c.findings = append(c.findings, Finding{Kind: KindResidue, Phrase: brokenPhrase(c.text, i, min(end, i+3*n)),
				Why: fmt.Sprintf("%q %d times in a row: a model's loop, never spoken", piece, (end-i)/n), at: i})
			return
		}
	}
}

// brokenRune says what is wrong with the rune r of size bytes, or "".
func brokenRune(r rune, size int) string {
	switch {
	case r == utf8.RuneError && size <= 1:
		return "bytes that are not UTF-8"
	case r == utf8.RuneError:
		return "U+FFFD, the mark of bytes that were not UTF-8"
	case r == '\n' || r == '\r' || r == '\t':
		return ""
	case unicode.IsControl(r):
		return fmt.Sprintf("a control character (U+%04X)", r)
	case r&0xFFFE == 0xFFFE || (r >= 0xFDD0 && r <= 0xFDEF):
		return fmt.Sprintf("a noncharacter (U+%04X)", r)
	}
	return ""
}

// brokenPhrase writes text[start:end] with a rune either side, escaped
// where it is not printable, so that feedback can quote it.
func brokenPhrase(text string, start, end int) string {
	if _, size := utf8.DecodeLastRuneInString(text[:start]); start > 0 {
		start -= size
	}
	if _, size := utf8.DecodeRuneInString(text[end:]); end < len(text) {
		end += size
	}
	q := strconv.QuoteToGraphic(text[start:end])
	return q[1 : len(q)-1]
}

// idLike reports whether an id looks like one (a digit, "-" or "_")
// rather than a word a merchant might use as an id.
func idLike(id string) bool {
	if len(id) < 2 {
		return false
	}
	digits := 0
	for i := 0; i < len(id); i++ {
		if isDigit(id[i]) {
			digits++
		}
	}
	if digits == len(id) {
		return len(id) >= 5 // a long platform number, not a price
	}
	return digits > 0 || strings.ContainsAny(id, "-_")
}

func (c *checker) isName(l string) bool {
	for _, f := range c.tf.items {
		if slices.Contains(f.names, l) {
			return true
		}
	}
	return false
}

// inTexts reports whether a lower-case phrase occurs in a result or the
// context.
func (c *checker) inTexts(l string) bool {
	for _, f := range append(slices.Clone(c.tf.items), c.tf.global) {
		for _, t := range f.texts {
			if strings.Contains(t, l) {
				return true
			}
		}
	}
	return false
}

// mayHold is a cheap test that the reply may hold needle: its first rune
// is among the reply's.
func (c *checker) mayHold(needle string) bool { return c.runes.mayHold(needle) }

// phraseKind is what a fixed phrase of a reply claims.
type phraseKind uint8

const (
	phStock phraseKind = iota + 1
	phPinned
	phCouponSent
	phOtherAction
	phCheaper
	phFreeShipping
	phNoFreeShipping
	phReturns
	phNoReturns
	phPromo
	phCoupon
	phNoCoupon
	// phBackInStock is "back in stock": a claim of stock now, or with a
	// date or a future ("will be back in stock on …") a restock, which
	// the date's own rule checks.
	phBackInStock
)

// phrase is a fixed phrase and what it claims.
type phrase struct {
	text  string // lower case
	kind  phraseKind
	state int // for phStock, the stock state
}

// phrases are matched longest first, so "没有货" wins over "有货" and
// "not in stock" over "in stock".
var phrases = func() []phrase {
	var out []phrase
	add := func(k phraseKind, state int, texts ...string) {
		for _, t := range texts {
			out = append(out, phrase{t, k, state})
		}
	}
	add(phStock, stockSoldOut, "售罄", "卖完", "卖光", "没货", "无货", "没有货", "断货", "缺货", "抢光", "没有库存", "无库存", "库存为0", "库存为零",
		"sold out", "out of stock", "no stock", "not in stock", "none left", "no longer available", "unavailable", "not available")
	add(phStock, stockIn, "有货", "现货", "还有货", "有库存", "不缺货", "没有售罄", "还没售罄", "没售罄", "没卖完", "还没卖完", "没断货", "in stock",
		"still available", "not sold out", "available now", "have it in stock")
	add(phBackInStock, 0, "back in stock")
	add(phStock, stockPlenty, "库存充足", "货源充足", "库存很多", "库存多", "plenty", "well stocked", "lots in stock")
	add(phStock, stockLow, "库存紧张", "库存不多", "仅剩几件", "只剩几件", "不多了", "快没了", "快抢光", "手慢无", "最后几件", "库存有限", "数量有限",
		"仅剩少量", "所剩无几", "即将售罄", "快抢", "仅剩", "只剩", "stock is limited", "limited stock", "limited quantities",
		"quantities are limited", "only a few", "almost gone", "few left", "running low", "low stock", "selling fast", "last few",
		"almost sold out", "selling out")
	add(phPinned, 0, "置顶", "链接已发", "已发链接", "发了链接", "链接发您了", "链接发给您", "已帮您上车", "pinned", "sent the link", "shared the link",
		"posted the link", "sent you the link", "link is up", "link is at the top", "link is now at the top", "pin the link")
	add(phCouponSent, 0, "券已发", "已发券", "发了券", "优惠券已发", "给您发了券", "券发给您", "coupon sent", "sent you a coupon", "sent the coupon",
		"coupon has been sent", "coupon is on its way", "sent you the coupon")
	add(phOtherAction, 0, "已备注", "帮您备注", "给您备注", "已加急", "帮您加急", "给您加急", "已安排发货", "帮您催", "已改地址", "帮您改地址",
		"i've noted", "i have noted", "i've expedited", "i have expedited", "i've arranged", "i have arranged", "i've changed your address")
	add(phCheaper, 0, "更便宜", "便宜一些", "便宜些", "cheaper", "costs less", "less expensive")
	add(phFreeShipping, 0, "包邮", "免运费", "免邮", "free shipping", "ships free", "shipping is free", "free delivery")
	add(phNoFreeShipping, 0, "不包邮", "运费自理", "需要运费", "不免运费", "not free shipping", "no free shipping", "shipping is not free",
		"shipping isn't free", "shipping costs", "shipping fee is")
	add(phReturns, 0, "支持退货", "可以退货", "可退货", "可以退", "无理由退", "包退", "可退换", "退换货", "returns accepted", "can be returned",
		"can return it", "returnable", "free returns", "day returns", "-day return", "day return")
	add(phNoReturns, 0, "不支持退货", "不支持退换", "不支持退", "不能退", "不可退", "不可退换", "无法退货", "无法退换", "不接受退货", "不支持无理由", "不退不换",
		"不给退", "no returns", "no return", "cannot be returned", "can't be returned", "not returnable", "non-returnable", "returns are not accepted",
		"does not accept returns", "doesn't accept returns")
	add(phPromo, 0, "半价", "第二件半价", "第二支半价", "买一送一", "half price", "half-price", "buy one get one", "bogo")
	add(phCoupon, 0, "有优惠券", "有券", "优惠券来啦", "领券", "coupon applies", "there is a coupon", "there's a coupon", "has a coupon", "coupon time")
	add(phNoCoupon, 0, "没有优惠券", "没有券", "暂无优惠券", "无优惠券", "没有可用的券", "没券", "no coupon", "no coupons", "isn't a coupon",
		"is not a coupon", "aren't any coupons", "are no coupons")
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].text) > len(out[j].text) })
	return out
}()

// phrases checks the fixed phrases and the yes/no facts of the reply.
func (c *checker) phrases() {
	taken := slices.Clone(c.used) // names, residue and numbers ("back in stock tomorrow")
	for _, p := range phrases {
		if !c.mayHold(p.text) {
			continue
		}
		for from := 0; from < len(c.lower); {
			i := strings.Index(c.lower[from:], p.text)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(p.text)
			from = end
			if overlaps(taken, start, end) || !wordBounded(c.lower, start, end) {
				continue
			}
			claim(taken, start, end)
			c.phrase(p, start, end)
		}
	}
	c.concepts(taken)
}

// restockLater reports whether the clause at pos speaks of a restock to
// come: a date or a future in it ("back in stock on December 24", "will
// be back in stock").
func (c *checker) restockLater(pos int) bool {
	a, b := clause(c.lower, pos)
	cl := c.lower[a:b]
	return hasOtherDigit(cl) || containsAny(cl, []string{"will ", "'ll ", " on ", " by ", " from ", "expected", "soon", "tomorrow", "next "})
}

func (c *checker) phrase(p phrase, start, end int) {
	switch p.kind {
	case phStock:
		if c.on(KindStock) {
			c.stockState(p.state, start, end)
		}
	case phBackInStock:
		if c.on(KindStock) && !c.restockLater(start) {
			c.stockState(stockIn, start, end)
		}
	case phPinned:
		owner := c.owner(start)
		switch {
		case !c.tf.pinnedAny:
			c.flag(KindAction, start, end, "no send_link call pinned a link this turn")
		case owner != nil && !owner.pinned && c.anyPinnedOtherThan(owner):
			c.flag(KindAction, start, end, "the link pinned this turn is not %s's", owner.display())
		}
	case phCouponSent:
		if !c.tf.couponSent {
			c.flag(KindAction, start, end, "no tool sent a coupon this turn")
		}
	case phOtherAction:
		c.flag(KindAction, start, end, "no tool this turn did that")
	case phCoupon, phNoCoupon:
		c.couponClaim(p.kind == phCoupon, start, end)
	case phCheaper:
		c.cheaper(start, end)
	case phFreeShipping, phNoFreeShipping:
		c.shipping(p.kind == phFreeShipping, start, end)
	case phReturns, phNoReturns:
		cs, _ := clause(c.lower, start)
		denied := containsAny(c.lower[cs:start], []string{"不支持", "不能", "不可", "no ", "not "})
		c.returns(p.kind == phReturns && !denied, start, end)
		if p.kind == phReturns && !denied && containsAny(c.lower[cs:end], []string{"无理由", "no reason", "no questions"}) {
			c.noReason(start, end)
		}
	case phPromo:
		scope := c.scope(c.owner(start))
		half := slices.ContainsFunc(scope, func(f *itemFacts) bool { return slices.Contains(f.percents, 50) })
		if !half && !c.evidence(scope, []string{"半价", "half price", "half-price", "买一送一", "buy one get one", "bogo", "第二件", "second"}) {
			c.flag(KindAmount, start, end, "no tool result gives this promotion")
		}
	}
}

func (c *checker) anyPinnedOtherThan(f *itemFacts) bool {
	for _, x := range c.tf.items {
		if x != f && x.pinned {
			return true
		}
	}
	return false
}

// couponClaim checks that an item has a coupon, or has none: only a
// coupon_check of this turn says which, for the item the claim is about
// (else for any item the turn checked).
func (c *checker) couponClaim(yes bool, start, end int) {
	var checked []*itemFacts
	for _, f := range c.tf.inPlay() {
		if f.couponChecked {
			checked = append(checked, f)
		}
	}
	if owner := c.owner(start); owner != nil && owner.couponChecked {
		checked = []*itemFacts{owner}
	}
	if len(checked) == 0 {
		c.flag(KindFact, start, end, "no coupon_check of this turn says whether there is a coupon")
		return
	}
	for _, f := range checked {
		if (len(f.coupons) > 0) == yes {
			return
		}
	}
	if yes {
		c.flag(KindFact, start, end, "the coupon_check of this turn found no coupon for %s", checked[0].display())
		return
	}
	c.flag(KindFact, start, end, "the coupon_check of this turn found a coupon for %s", checked[0].display())
}

// cheaper checks "A更便宜": the item named last before the phrase has the
// lowest price of the items the results price.
func (c *checker) cheaper(start, end int) {
	var priced []*itemFacts
	for _, f := range c.tf.inPlay() {
		if f.price > 0 {
			priced = append(priced, f)
		}
	}
	if len(priced) < 2 {
		c.flag(KindAmount, start, end, "no tool results this turn compare two prices")
		return
	}
	owner := c.owner(start)
	if owner == nil || owner.price <= 0 {
		return // "cheaper" of no item in particular
	}
	for _, f := range priced {
		if f.price < owner.price {
			c.flag(KindAmount, start, end, "%s costs %s, %s %s", owner.display(), yuan(owner.price), f.display(), yuan(f.price))
			return
		}
	}
}

// value returns the first number of the scope under a key containing
// part.
func value(scope []*itemFacts, part string) (float64, bool) {
	for _, f := range scope {
		for _, v := range f.values {
			if strings.Contains(v.key, part) {
				return v.v, true
			}
		}
	}
	return 0, false
}

func (c *checker) shipping(free bool, start, end int) {
	scope := c.scope(c.owner(start))
	fee, hasFee := value(scope, "shipping_fee")
	if !hasFee {
		fee, hasFee = value(scope, "fee")
	}
	var flagOn, hasFlag bool
	for _, f := range scope {
		for _, fl := range f.flags {
			if fl.key == "free_shipping" {
				flagOn, hasFlag = fl.on, true
			}
		}
	}
	switch {
	case hasFlag && flagOn == free, hasFee && (fee == 0) == free:
		return
	case !hasFlag && !hasFee && free && c.evidence(scope, []string{"包邮", "free shipping"}):
		return
	case !hasFlag && !hasFee:
		c.flag(KindFact, start, end, "no tool result gives the shipping fee")
	default:
		c.flag(KindFact, start, end, "the shipping fee is %s", yuan(toFen(fee)))
	}
}

func (c *checker) returns(yes bool, start, end int) {
	scope := c.scope(c.owner(start))
	days, ok := value(scope, "return")
	cs, ce := clause(c.lower, start)
	switch {
	case c.evidence(scope, []string{strings.TrimSpace(c.lower[cs:ce])}):
		return // the reply repeats a condition of the results word for word
	case !yes && c.restatesCondition(scope, cs, start):
		return
	case ok && (days > 0) == yes:
		return
	case ok:
		c.flag(KindFact, start, end, "the results give returns within %s days", yuan(toFen(days)))
	case yes && c.evidence(scope, []string{"退货", "退换", "return"}):
		return
	case !yes && c.evidence(scope, []string{"不支持退", "不退", "no return", "not returnable", "non-returnable"}):
		return
	default:
		c.flag(KindFact, start, end, "no tool result gives the return policy")
	}
}

// restatesCondition reports whether a no-returns clause, lower[cs:at]
// before its phrase, is about part of what an item sells ("engraved
// pieces cannot be returned", maybe translated) while the results state
// conditions of its return rule: the condition, not the item, is what
// cannot be returned.
func (c *checker) restatesCondition(scope []*itemFacts, cs, at int) bool {
	if !slices.ContainsFunc(scope, func(f *itemFacts) bool { return len(f.returnConditions) > 0 }) {
		return false
	}
	subject := strings.Trim(c.lower[cs:at], " ,，;；:：")
	for _, w := range []string{"but ", "however ", "and ", "但", "不过", "但是"} {
		subject = strings.TrimPrefix(subject, w)
	}
	switch subject {
	case "", "it", "this", "this one", "that", "the item", "this item", "它", "这款", "这个", "该商品", "本品", "商品":
		return false
	}
	return !overlaps(c.named, cs, at)
}

// noReason checks "无理由退货": a return rule whose no-reason term the
// results leave unstated does not back it.
func (c *checker) noReason(start, end int) {
	for _, f := range c.scope(c.owner(start)) {
		for _, k := range f.unstated {
			if strings.HasSuffix(k, "no_reason") {
				c.flag(KindFact, start, end, "the return rule does not say returns need no reason")
				return
			}
		}
	}
}

// evidence reports whether any text of the scope (names included) holds
// one of words.
func (c *checker) evidence(scope []*itemFacts, words []string) bool {
	for _, f := range scope {
		for _, w := range words {
			for _, t := range f.texts {
				if strings.Contains(t, w) {
					return true
				}
			}
			for _, n := range f.names {
				if strings.Contains(n, w) {
					return true
				}
			}
		}
	}
	return false
}

// concept is a yes/no fact a reply may state about an item.
type concept struct {
	kind string // allergen, material, colour or feature
	// words are how replies say it; evidence adds how results say it.
	words, evidence []string
}

var concepts = []concept{
	{"allergen", []string{"花生", "peanut", "peanuts"}, nil},
	{"allergen", []string{"坚果", "tree nut", "tree nuts", "nuts", "nut"}, []string{"tree_nut", "杏仁", "腰果", "核桃", "榛子", "almond", "cashew", "walnut",
		"hazelnut"}},
	{"allergen", []string{"麸质", "小麦", "gluten", "wheat"}, nil},
	{"allergen", []string{"牛奶", "乳制品", "乳糖", "dairy", "milk", "lactose"}, []string{"奶粉", "乳清", "黄油", "奶油", "奶酪", "芝士", "whey", "butter", "cheese", "cream"}},
	{"allergen", []string{"鸡蛋", "蛋类", "egg", "eggs"}, []string{"蛋黄", "蛋清", "全蛋", "蛋液"}},
	{"allergen", []string{"大豆", "黄豆", "soy", "soya", "soybean"}, nil},
	{"allergen", []string{"芝麻", "sesame"}, nil},
	{"allergen", []string{"虾蟹", "虾", "蟹", "贝类", "海鲜", "shellfish", "shrimp", "seafood"}, nil},
	{"allergen", []string{"鱼类", "fish"}, nil},
	// Additives: what an ingredient list, not an allergen list, states.
	{"additive", []string{"酒精", "alcohol"}, []string{"乙醇", "ethanol"}},
	{"additive", []string{"香精", "fragrance"}, []string{"香料", "parfum"}},
	{"additive", []string{"防腐剂", "preservative", "preservatives", "paraben", "parabens"}, []string{"尼泊金"}},
	{"material", []string{"纯棉", "全棉", "棉质", "cotton"}, []string{"100%棉", "棉100%", "含棉", "棉布", "棉麻"}},
	{"material", []string{"涤纶", "聚酯纤维", "polyester"}, nil},
	{"material", []string{"羊毛", "wool"}, nil},
	{"material", []string{"羊绒", "cashmere"}, nil},
	{"material", []string{"真丝", "桑蚕丝", "蚕丝", "silk"}, nil},
	{"material", []string{"真皮", "皮革", "leather"}, nil},
	{"material", []string{"不锈钢", "stainless steel"}, nil},
	{"material", []string{"记忆棉", "memory foam"}, nil},
	{"material", []string{"法兰绒", "flannel"}, nil},
	{"material", []string{"牛仔布", "丹宁", "denim"}, nil},
	{"material", []string{"乳胶", "latex"}, nil},
	{"material", []string{"尼龙", "nylon"}, nil},
	{"material", []string{"亚麻", "linen"}, nil},
	{"material", []string{"氨纶", "spandex", "elastane"}, nil},
	{"material", []string{"陶瓷", "ceramic"}, nil},
	{"material", []string{"玻璃", "glass"}, nil},
	{"material", []string{"塑料", "plastic"}, []string{"pp", "abs"}},
	{"colour", []string{"黑色", "black"}, nil},
	{"colour", []string{"白色", "white"}, nil},
	{"colour", []string{"红色", "red"}, nil},
	{"colour", []string{"蓝色", "blue"}, nil},
	{"colour", []string{"粉色", "粉红", "pink"}, nil},
	{"colour", []string{"灰色", "grey", "gray"}, nil},
	{"colour", []string{"绿色", "green"}, nil},
	{"colour", []string{"黄色", "yellow"}, nil},
	{"colour", []string{"紫色", "purple"}, nil},
	{"colour", []string{"橙色", "orange"}, nil},
	{"colour", []string{"棕色", "咖啡色", "brown"}, nil},
	{"colour", []string{"米色", "beige"}, nil},
	{"colour", []string{"卡其色", "卡其", "khaki"}, nil},
	{"colour", []string{"金色", "gold"}, nil},
	{"colour", []string{"银色", "silver"}, nil},
	{"colour", []string{"藏青色", "navy"}, []string{"藏青"}},
	// Attribute values: what an item is made with, whom it suits, where
	// it comes from, how it fits. A value is backed only when the results
	// state it; naming another is unbacked.
	{"ingredient", []string{"烟酰胺", "niacinamide"}, nil},
	{"ingredient", []string{"玻尿酸", "透明质酸", "hyaluronic acid"}, []string{"hyaluronic"}},
	{"ingredient", []string{"维生素c", "维c", "vitamin c", "vc"}, nil},
	{"ingredient", []string{"神经酰胺", "ceramide", "ceramides"}, nil},
	{"ingredient", []string{"视黄醇", "a醇", "retinol"}, nil},
	{"ingredient", []string{"水杨酸", "salicylic acid"}, nil},
	{"ingredient", []string{"果酸", "glycolic acid"}, nil},
	{"ingredient", []string{"胶原蛋白", "collagen"}, nil},
	{"ingredient", []string{"角鲨烷", "squalane"}, nil},
	{"ingredient", []string{"积雪草", "centella"}, nil},
	{"skin", []string{"干性肌肤", "干性皮肤", "干皮", "干性", "dry skin"}, nil},
	{"skin", []string{"油性肌肤", "油性皮肤", "油皮", "油性", "oily skin"}, nil},
	{"skin", []string{"敏感肌肤", "敏感皮肤", "敏感肌", "sensitive skin"}, nil},
	{"skin", []string{"混合性肌肤", "混合肌", "混合皮", "混油", "混干", "combination skin"}, nil},
	{"skin", []string{"所有肤质", "任何肤质", "各种肤质", "全肤质", "所有肌肤", "all skin types", "every skin type", "any skin type"}, nil},
	{"origin", []string{"云南", "yunnan"}, nil},
	{"origin", []string{"新疆", "xinjiang"}, nil},
	{"origin", []string{"浙江", "zhejiang"}, nil},
	{"origin", []string{"内蒙古", "inner mongolia"}, nil},
	{"origin", []string{"四川", "sichuan"}, nil},
	{"origin", []string{"福建", "fujian"}, nil},
	{"origin", []string{"东北", "northeast china"}, nil},
	{"origin", []string{"日本", "japan"}, nil},
	{"origin", []string{"韩国", "korea"}, nil},
	{"origin", []string{"法国", "france"}, nil},
	{"origin", []string{"澳洲", "澳大利亚", "australia"}, nil},
	{"origin", []string{"新西兰", "new zealand"}, nil},
	{"origin", []string{"进口", "imported"}, nil},
	{"fit", []string{"宽松版", "宽松", "loose fit", "oversized", "relaxed fit"}, nil},
	{"fit", []string{"修身版", "修身", "slim fit"}, nil},
	{"fit", []string{"标准版", "常规版", "regular fit"}, nil},
	{"material", []string{"羊毛混纺", "wool blend"}, nil},
	{"feature", []string{"降噪", "主动降噪", "noise cancelling", "noise canceling", "noise-cancelling", "noise-canceling", "noise cancellation", "anc"},
		[]string{"noise cancel"}},
	{"feature", []string{"防水", "waterproof", "water-resistant", "water resistant"}, []string{"ipx", "ip6", "ip5"}},
	{"feature", []string{"快充", "fast charging", "fast charge", "quick charge"}, nil},
	{"feature", []string{"无线充电", "wireless charging"}, nil},
	{"feature", []string{"防过敏", "低敏", "hypoallergenic"}, nil},
	{"feature", []string{"无糖", "零糖", "sugar-free", "sugar free"}, nil},
	{"feature", []string{"无添加", "零添加", "no additives"}, nil},
	{"feature", []string{"可机洗", "machine washable", "machine-washable"}, nil},
	{"feature", []string{"抗菌", "antibacterial"}, nil},
	{"feature", []string{"孕妇", "pregnant", "pregnancy"}, nil},
	// The yes/no specs of the shop catalogs' kinds.
	{"feature", []string{"可叠放", "stackable"}, nil},
	{"feature", []string{"可进洗碗机", "dishwasher safe", "dishwasher-safe"}, nil},
	{"feature", []string{"可调光", "dimmable"}, nil},
	{"feature", []string{"防滑", "non-slip", "anti-slip"}, nil},
	{"feature", []string{"可冲厕所", "flushable"}, nil},
	{"feature", []string{"自动断电", "auto shut-off", "auto-off"}, nil},
	{"feature", []string{"带计数器", "with a counter"}, nil},
	{"feature", []string{"枕套可拆洗", "washable cover"}, nil},
	// The word "allergen" itself says the item's allergen list is known
	// ("过敏原已标注", "allergy-friendly"): backed when the results list it.
	{"allergens", []string{"过敏原", "过敏", "致敏", "allergen", "allergens", "allergy", "allergic"}, nil},
}

// conceptWord is one word of a concept, for matching longest first.
type conceptWord struct {
	text string
	c    *concept
}

var conceptWords = func() []conceptWord {
	var out []conceptWord
	for i := range concepts {
		for _, w := range concepts[i].words {
			out = append(out, conceptWord{w, &concepts[i]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].text) > len(out[j].text) })
	return out
}()

// mentionedAllergens are the allergen words whose mere mention tells the
// audience what an item holds ("peanut lovers"), as the room's grader
// reads them: they need no 含 or "contains" to claim. The other allergen
// words ("坚果", "虾") also name kinds of food, and claim only with a cue.
var mentionedAllergens = []string{"花生", "peanut", "peanuts", "tree nut", "tree nuts", "麸质", "小麦", "gluten", "wheat", "牛奶", "乳制品", "乳糖",
	"dairy", "milk", "lactose", "鸡蛋", "蛋类", "egg", "eggs", "大豆", "黄豆", "soy", "soya", "芝麻", "sesame", "虾蟹", "贝类", "shellfish", "fish"}

// concepts checks the yes/no facts of the reply.
func (c *checker) concepts(taken []bool) {
	if !c.on(KindFact) {
		return
	}
	for _, w := range conceptWords {
		if !c.mayHold(w.text) {
			continue
		}
		for from := 0; from < len(c.lower); {
			i := strings.Index(c.lower[from:], w.text)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(w.text)
			from = end
			if overlaps(taken, start, end) || !wordBounded(c.lower, start, end) {
				continue
			}
			claim(taken, start, end)
			needsCue := w.c.kind == "additive" || w.c.kind == "allergen" && !slices.Contains(mentionedAllergens, w.text)
			polarity := c.polarity(start, end, needsCue)
			if polarity == 0 {
				continue
			}
			c.concept(w.c, polarity > 0, start, end)
		}
	}
}

// polarity reads whether the reply asserts (1) or denies (-1) the fact at
// text[start:end], or does not state it (0: an allergen needs "含" or
// "contains", "不含" or "-free"; other facts are stated by naming them).
func (c *checker) polarity(start, end int, needsCue bool) int {
	before := c.lower[max(0, start-24):start]
	after := c.lower[end:min(len(c.lower), end+12)]
	for _, neg := range []string{"不含", "无", "没有", "零", "不添加", "不加", "不是", "不", "非", "no ", "without ", "free of ", "free from ",
		"doesn't contain ", "does not contain ", "not contain ", "not ", "isn't ", "doesn't have ", "does not have "} {
		if strings.HasSuffix(before, neg) || (!isASCIILetter(neg[0]) && strings.HasSuffix(trimRunes(before, 2), neg)) {
			return -1
		}
	}
	if strings.HasPrefix(after, "-free") || strings.HasPrefix(after, " free") {
		return -1
	}
	if !needsCue {
		return 1
	}
	for _, pos := range []string{"含", "含有", "添加", "加了", "有", "contains ", "contain ", "made with ", "with ", "has "} {
		if strings.HasSuffix(before, pos) || (!isASCIILetter(pos[0]) && strings.HasSuffix(trimRunes(before, 2), pos)) {
			return 1
		}
	}
	if strings.HasPrefix(after, "过敏") || strings.HasPrefix(after, " allerg") {
		return 1
	}
	return 0
}

// unknownCues mark a clause that says a fact is not known instead of
// stating it ("过敏原没有标注"), as the room's grader reads them.
var unknownCues = []string{"没有标注", "没标注", "未标注", "没有写", "没写", "查不到", "不确定", "不清楚", "无法确认", "没有相关", "暂无",
	"not stated", "not listed", "isn't listed", "not sure", "can't confirm", "cannot confirm", "unable to", "no information",
	"don't know", "not specified"}

// trimRunes drops up to n runes from the end of s ("不含有" ends in 不含
// once 有 is dropped).
func trimRunes(s string, n int) string {
	for range n {
		if s == "" {
			break
		}
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

func (c *checker) concept(k *concept, yes bool, start, end int) {
	scope := c.scope(c.owner(start))
	if k.kind == "allergens" || k.kind == "allergen" {
		// Whatever an allergen claim says, it needs the item's allergen
		// list ("by its allergen list", "含花生", "peanut lovers").
		stated := slices.ContainsFunc(scope, func(f *itemFacts) bool { return f.allergensStated })
		if a, b := clause(c.lower, start); !stated && !containsAny(c.lower[a:b], unknownCues) {
			c.flag(KindFact, start, end, "no tool result states the item's allergens")
			return
		}
		if k.kind == "allergens" {
			return
		}
	}
	words := append(slices.Clone(k.words), k.evidence...)
	stated := c.affirmed(scope, words) || (k.kind == "colour" && colourVariant(scope, k.words[0]))
	if k.kind == "skin" && c.affirmed(scope, allSkinTypes) {
		stated = true // what suits every skin type suits each
	}
	if yes {
		if !stated {
			c.flag(KindFact, start, end, "%s", c.notSaid(scope, k.kind))
		}
		return
	}
	// A denial is backed when the results deny it themselves, or list the
	// item's %ss without it.
	for _, f := range scope {
		for _, fl := range f.flags {
			if !fl.on && containsAny(strings.ReplaceAll(fl.key, "_", " "), k.words) {
				return
			}
		}
	}
	if stated {
		if c.evidence(scope, negations(k.words)) {
			return
		}
		c.flag(KindFact, start, end, "the results list it")
		return
	}
	if k.kind == "allergen" && slices.ContainsFunc(scope, func(f *itemFacts) bool { return f.allergenFree }) {
		return
	}
	// Only an allergen or ingredient list and an item's variants are
	// complete: what they leave out is absent. A list of features or
	// materials is not, so "not machine washable" for an item whose
	// features do not name it is a guess, as the room grader reads it too.
	switch k.kind {
	case "allergen", "additive", "colour":
		if c.lists(scope, k.kind) {
			return
		}
		c.flag(KindFact, start, end, "no tool result lists the item's %ss", k.kind)
	default:
		c.flag(KindFact, start, end, "no tool result says the item is not %s", k.words[0])
	}
}

// allSkinTypes are the ways results say an item suits every skin type.
var allSkinTypes = []string{"all skin types", "所有肤质", "全肤质", "各种肤质"}

// attributeKeys are the words of result keys that hold a kind of
// attribute value ("main ingredient", "适合肤质").
var attributeKeys = map[string][]string{
	"ingredient": {"ingredient", "成分", "配料"},
	"skin":       {"skin", "肤质"},
	"origin":     {"origin", "产地", "made in"},
	"fit":        {"fit", "版型"},
	"material":   {"material", "材质", "面料", "fabric"},
}

// notSaid says why an asserted value is unbacked: what the results give
// for its kind of attribute instead, when they give it.
func (c *checker) notSaid(scope []*itemFacts, kind string) string {
	var given []string
	for _, f := range scope {
		for _, a := range f.attrs {
			if containsAny(asciiLower(a[0]), attributeKeys[kind]) {
				given = append(given, a[0]+": "+a[1])
			}
		}
	}
	if len(given) == 0 {
		return "no tool result says so"
	}
	return "no tool result says so; the results give " + strings.Join(given, ", ")
}

// colourVariant reports whether a variant of the scope is a shade of the
// colour zh ("黑色"): "雾紫" is purple, "曜石黑" black. Only variant names
// are read so: "粉" in "可可粉" is no pink.
func colourVariant(scope []*itemFacts, zh string) bool {
	hue := strings.TrimSuffix(zh, "色")
	if hue == "" || !hasHan(hue) {
		return false
	}
	for _, f := range scope {
		for _, v := range f.variants {
			if strings.Contains(v, hue) {
				return true
			}
		}
	}
	return false
}

// affirmed reports whether the scope's results state one of words other
// than in a denial: "not waterproof" does not back "waterproof".
func (c *checker) affirmed(scope []*itemFacts, words []string) bool {
	for _, f := range scope {
		for _, w := range words {
			denials := negations([]string{w})
			for _, t := range append(slices.Clone(f.texts), f.names...) {
				if strings.Contains(t, w) && !containsAny(t, denials) {
					return true
				}
			}
		}
	}
	return false
}

// negations are the ways results deny words: "不含花生", "peanut-free".
func negations(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, "不含"+w, "无"+w, "不"+w, w+"-free", w+" free", "no "+w, "free of "+w, "not "+w)
	}
	return out
}

// lists reports whether the scope's results list the item's allergens or
// ingredients (kind "allergen" or "additive") or its colours, so that what
// they do not list is absent.
func (c *checker) lists(scope []*itemFacts, kind string) bool {
	keys := []string{"allergen", "ingredient", "过敏", "成分", "配料"}
	if kind == "colour" {
		keys = []string{"variant", "colour", "color", "颜色"}
	}
	for _, f := range scope {
		if kind == "colour" && len(f.variants) > 0 {
			return true
		}
		if kind == "allergen" && slices.ContainsFunc(f.unstated, func(k string) bool { return strings.HasSuffix(k, "allergens") }) {
			// Ingredients listed with allergens "not stated": an absent
			// allergen must not be read from the ingredients.
			return false
		}
		for _, t := range f.texts {
			if containsAny(t, keys) {
				return true
			}
		}
		for _, a := range f.attrs {
			if containsAny(asciiLower(a[0]), keys) {
				return true
			}
		}
	}
	return false
}

// kindNouns are the kinds of item viewers and hosts name items by. A
// reply that names a kind no item of the turn has names an item the
// catalog does not hold.
var kindNouns = []string{
	"精华液", "精华", "面霜", "眼霜", "乳液", "爽肤水", "化妆水", "洁面乳", "洁面", "洗面奶", "面膜", "防晒霜", "防晒", "口红", "唇膏", "唇釉",
	"粉底液", "粉底", "气垫", "香水", "卸妆水", "卸妆油", "身体乳", "洗发水", "护发素", "沐浴露", "精油",
	"卫衣", "羽绒服", "牛仔裤", "连衣裙", "T恤", "衬衫", "外套", "夹克", "毛衣", "裤子", "裙子", "运动鞋", "袜子", "帽子", "围巾", "背包",
	"蓝牙耳机", "耳机", "充电宝", "智能手表", "手表", "手环", "台灯", "手机", "平板", "音箱", "数据线", "充电器",
	"每日坚果", "坚果", "绿茶", "红茶", "茶叶", "牛肉干", "蜂蜜", "饼干", "巧克力", "咖啡", "礼盒",
	"枕头", "毛毯", "被子", "四件套", "保温杯", "水杯", "收纳箱", "保温壶", "水壶",
	"serum", "face cream", "eye cream", "moisturizer", "lotion", "toner", "cleanser", "face wash", "face mask", "sunscreen", "lipstick",
	"lip gloss", "foundation", "perfume", "shampoo", "conditioner", "body wash", "essential oil",
	"手机壳", "hoodie", "down jacket", "jacket", "jeans", "t-shirt", "shirt", "dress", "sweater", "coat", "skirt", "sneakers", "scarf", "backpack",
	"phone case",
	"earbuds", "earphones", "headphones", "power bank", "smart watch", "smartwatch", "desk lamp", "lamp", "speaker", "charger",
	"nut mix", "green tea", "beef jerky", "honey", "chocolate", "gift box",
	"pillow", "blanket", "water bottle", "flask", "thermos", "storage box",
	// Everyday goods beyond the demo's: a compact model names the kinds it
	// was trained on ("玻尿酸行李箱" for a serum), so the more kinds the
	// check knows, the more such names it stops.
	"护手霜", "牙膏", "棒球帽", "手套", "睡衣", "冲锋衣", "鼠标", "键盘", "摄像头", "吹风机", "咖啡豆", "大米", "橄榄油", "芒果干", "方便面",
	"燕麦奶", "毛巾", "床单", "窗帘", "地毯", "雨伞", "行李箱", "花瓶", "猫砂", "狗粮", "猫条", "猫抓板", "中性笔", "笔记本", "胶带", "积木",
	"毛绒玩具", "拼图", "瑜伽垫", "跳绳", "哑铃", "蛋白棒", "湿巾", "空气炸锅", "破壁机", "电热水壶", "电饭煲", "项链", "耳环", "手链",
	"hand cream", "toothpaste", "baseball cap", "gloves", "pajamas", "windbreaker", "mouse", "keyboard", "webcam", "hair dryer",
	"coffee beans", "olive oil", "dried mango", "instant noodles", "oat milk", "towel", "bed sheet", "curtain", "rug", "umbrella",
	"suitcase", "vase", "cat litter", "dog food", "cat treats", "cat scratcher", "gel pens", "notebook", "washi tape", "building blocks",
	"plush toy", "jigsaw puzzle", "yoga mat", "jump rope", "dumbbells", "protein bar", "baby wipes", "air fryer", "blender",
	"electric kettle", "rice cooker", "necklace", "earrings", "bracelet",
}

var kindNounsByLength = func() []string {
	out := slices.Clone(kindNouns)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}()

// fillers are the words that come before a kind without naming a brand.
var fillers = []string{"这款", "那款", "这个", "那个", "这支", "这瓶", "这件", "这条", "这双", "这套", "这盒", "我们的", "我们家", "我们", "咱们家",
	"咱们", "今天的", "今天", "主推", "推荐", "新款", "同款", "本款", "直播间的", "直播间", "该", "此", "一款", "买", "拍", "给您", "您的", "您",
	"有", "是", "和", "跟", "与", "还有", "想要", "要", "选", "喜欢", "这", "那", "款", "个", "件", "支", "瓶", "的", "也", "都", "就", "看看",
	"试试", "入", "配", "搭配", "款式", "家的", "家", "好", "很"}

// itemKinds checks the kinds of item the reply names.
func (c *checker) itemKinds() {
	taken := slices.Clone(c.named)
	var sources, nameSources []string
	for _, f := range append(slices.Clone(c.tf.items), c.tf.global) {
		sources = append(sources, f.names...)
		sources = append(sources, f.texts...)
		nameSources = append(nameSources, f.names...)
	}
	sources = append(sources, c.tf.kindSourcesLower...)
	nameSources = append(nameSources, c.tf.kindSourcesLower...)
	in := func(srcs []string, s string) bool {
		for _, x := range srcs {
			if strings.Contains(x, s) {
				return true
			}
		}
		return false
	}
	for _, m := range c.mentions {
		// A kind the catalog uses as an alias ("serum") may still carry
		// an invented brand ("Glow Serum").
		if !slices.Contains(kindNouns, c.lower[m.start:m.end]) && !slices.Contains(kindNouns, c.text[m.start:m.end]) {
			continue
		}
		if brand, at := c.brandBefore(m.start); brand != "" && !in(nameSources, asciiLower(brand)+c.lower[m.start:m.end]) &&
			!in(nameSources, asciiLower(brand)+" "+c.lower[m.start:m.end]) {
			c.flag(KindItem, at, m.end, "no item of this stream is called that")
		}
	}
	for _, k := range kindNounsByLength {
		lk := asciiLower(k)
		if !c.mayHold(lk) {
			continue
		}
		for from := 0; from < len(c.lower); {
			i := strings.Index(c.lower[from:], lk)
			if i < 0 {
				break
			}
			start, end := from+i, pluralEnd(c.lower, from+i+len(lk))
			from = end
			if overlaps(taken, start, end) {
				continue
			}
			if !wordBounded(c.lower, start, end) {
				c.gluedKind(start, end, lk, sources)
				continue
			}
			claim(taken, start, end)
			if !in(sources, lk) {
				c.flag(KindItem, start, end, "no item of this stream is a %s", k)
				continue
			}
			if brand, at := c.brandBefore(start); brand != "" && !in(nameSources, asciiLower(brand)+lk) && !in(nameSources, asciiLower(brand)+" "+lk) {
				c.flag(KindItem, at, end, "no item of this stream is called that")
			}
		}
	}
	c.subjectNames(taken, sources)
	c.garbledNames(sources)
}

// gluedKind checks a long English kind run into letters before it, the
// word no name holds ("Katalipstick", the reply a model gave for the
// lipstick's price): a name the model failed to copy. Short kinds are
// inside many words ("cap" of "capacity"), so only kinds of six letters
// or more count.
func (c *checker) gluedKind(start, end int, kind string, sources []string) {
	if len(kind) < 6 || start == 0 || !isASCIILetter(c.lower[start-1]) || (end < len(c.lower) && isASCIILetter(c.lower[end])) {
		return
	}
	from := start
	for from > 0 && isASCIILetter(c.lower[from-1]) {
		from--
	}
	word := c.lower[from:end]
	if overlaps(c.named, from, end) || slices.ContainsFunc(sources, func(s string) bool { return strings.Contains(s, word) }) {
		return
	}
	claim(c.named, from, end)
	c.flag(KindItem, from, end, "no item of this stream is called that")
}

// subjectNameRE finds a name in title case that a sentence opens with
// and states something of ("Hydrating Match is 89 yuan").
var subjectNameRE = regexp.MustCompile(`(?:^|[.!?]\s+|[，。！？；]\s*)(?:(?:The|This|That|Our|Your)\s+)?([A-Z][a-z]+(?:[ -][A-Z][a-z]+)+)\s+(?:is|are|costs?|comes?|ships?|has|have)\b`)

// subjectNames checks the title-case names sentences open with: a model
// that fails to copy an item's name writes one of its own ("Hydrating
// Match is 89 yuan", asked of the lipstick), which names no kind for
// itemKinds to find. Such a name must be one the stream's items, results,
// context or the viewer use.
func (c *checker) subjectNames(taken []bool, sources []string) {
	for _, m := range subjectNameRE.FindAllStringSubmatchIndex(c.text, -1) {
		start, end := m[2], m[3]
		name := c.lower[start:end]
		if overlaps(taken, start, end) || c.inViewerName(start, end) || slices.ContainsFunc(sources, func(s string) bool { return strings.Contains(s, name) }) {
			continue
		}
		claim(taken, start, end)
		c.flag(KindItem, start, end, "no item of this stream is called that")
	}
}

// priceLead are the words between an item's name and the price a
// sentence gives it ("玻尿酸精华直播间只要199元").
var priceLead = []string{"直播间", "现在", "只要", "仅需", "价格", "到手价", "到手", "券后", "售价", "是", "才", "只", "要", "仅", "今天", "："}

// garbledNames checks a price said of a Chinese name the model failed to
// copy: a run that begins as an item's name and turns into something no
// name or result holds, then gives a price ("玻尿酸行间只要199元", for the
// serum 玻尿酸精华). A description after the name ("玻尿酸补水效果好") gives
// no price and is left alone.
func (c *checker) garbledNames(sources []string) {
	lead := append(slices.Clone(priceLead), fillers...)
	for _, f := range c.tf.inPlay() {
		name := []rune(f.name)
		if len(name) < 3 {
			continue
		}
		for cut := len(name) - 1; cut >= 2 && cut*2 >= len(name); cut-- {
			prefix := string(name[:cut])
			for start, end := range occurrences(c.text, prefix) {
				rest := []rune(c.text[end:])
				n := 0
				for n < len(rest) && n < 4 && unicode.Is(unicode.Han, rest[n]) && !startsWithAny(string(rest[n:]), lead) {
					n++
				}
				if n == 0 || n > 3 || rest[0] == name[cut] {
					continue
				}
				after := string(rest[n:])
				for changed := true; changed; {
					changed = false
					for _, w := range lead {
						if strings.HasPrefix(after, w) {
							after, changed = after[len(w):], true
						}
					}
				}
				if after == "" || !isDigit(after[0]) {
					continue
				}
				end := end + len(string(rest[:n]))
				said := c.text[start:end]
				if overlaps(c.named, start, end) || slices.ContainsFunc(sources, func(s string) bool { return strings.Contains(s, said) }) {
					continue
				}
				claim(c.named, start, end)
				c.flag(KindItem, start, end, "no item of this stream is called that; the item is %s", f.name)
			}
		}
	}
}

// startsWithAny reports whether s begins with one of words.
func startsWithAny(s string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(s, w) })
}

// pluralEnd extends an English kind at lower[:end] over a plural "s"
// or "es" ("serums", "lunchboxes").
func pluralEnd(lower string, end int) int {
	if end == 0 || !isASCIILetter(lower[end-1]) {
		return end
	}
	for _, suffix := range []string{"es", "s"} {
		e := end + len(suffix)
		if strings.HasPrefix(lower[end:], suffix) && (e == len(lower) || !isASCIILetter(lower[e])) {
			return e
		}
	}
	return end
}

// brandBefore returns the words right before a kind at pos that would
// name a particular item: Han characters that are not filler words
// ("花漾清透" of 花漾清透防晒霜), or capitalized Latin words ("Glow" of
// "Glow Serum"), with where they start; "" when there are none.
func (c *checker) brandBefore(pos int) (string, int) {
	text := c.text[:pos]
	if r, _ := utf8.DecodeLastRuneInString(text); unicode.Is(unicode.Han, r) {
		start := len(text)
		for n := 0; n < 6 && start > 0; n++ {
			r, size := utf8.DecodeLastRuneInString(text[:start])
			if !unicode.Is(unicode.Han, r) || overlaps(c.named, start-size, start) {
				break
			}
			start -= size
		}
		run := text[start:]
		for changed := true; changed && run != ""; {
			changed = false
			for _, f := range fillers {
				if strings.HasPrefix(run, f) {
					run, changed = run[len(f):], true
					break
				}
			}
		}
		if utf8.RuneCountInString(run) < 2 || strings.HasSuffix(run, "的") {
			return "", pos
		}
		return run, pos - len(run)
	}
	words := strings.Fields(text)
	var brand []string
	for i := len(words) - 1; i >= 0 && len(brand) < 3; i-- {
		w := strings.Trim(words[i], `"'“”‘’`)
		if w == "" || !unicode.IsUpper(rune(w[0])) || strings.ContainsAny(w, ".,!?;:") {
			break
		}
		brand = append([]string{w}, brand...)
	}
	for len(brand) > 0 && slices.Contains([]string{"The", "This", "That", "Our", "Your", "My", "Its", "Today's", "A", "An", "New", "Yes", "No",
		"Hi", "Sorry", "I", "I'd", "I'm", "It", "And", "Or", "So", "Grab", "Try", "Get", "Buy"}, brand[0]) {
		brand = brand[1:]
	}
	if len(brand) == 0 {
		return "", pos
	}
	return strings.Join(brand, " "), strings.LastIndex(text, brand[0])
}
