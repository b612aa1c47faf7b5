package main

import (
	"fmt"
	"iter"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// mention is an item the reply names, at text[start:end].
type mention struct {
	start, end int
	item       *itemFacts
}

// checker holds one reply under check.
type checker struct {
	t     *Turn
	tf    *turnFacts
	text  string // the reply, normalized
	lower string // text with ASCII lower-cased (same offsets)
	// used marks bytes a statement or a name already claimed; named the
	// bytes of item names and residue only; unspoken the bytes of residue
	// and the viewer's name, which no language rule reads.
	used, named, unspoken []bool
	mentions              []mention
	// asked is the one item the viewer's message names, or nil.
	asked      *itemFacts
	quantities []float64
	findings   []Finding
	// runes are the runes the reply holds: a phrase whose first rune it
	// lacks is skipped without a search.
	runes *runeSet
}

// analyze gathers the turn's facts and checks the reply against them.
func analyze(t *Turn) (*turnFacts, []Finding) {
	tf := newTurnFacts(t)
	return tf, checkReply(t, tf)
}

// checkReply checks t.Reply against tf, the facts of t. It leaves tf as
// it was, so a rewrite of the reply is checked against the same facts.
func checkReply(t *Turn, tf *turnFacts) []Finding {
	text := normalize(t.Reply)
	c := &checker{t: t, tf: tf, text: text, lower: asciiLower(text), used: make([]bool, len(text)), named: make([]bool, len(text))}
	c.runes = newRuneSet(c.lower)
	if c.on(KindResidue) {
		c.residue()
	}
	c.unspoken = slices.Clone(c.named)
	if c.on(KindResidue) {
		c.brokenText()
		c.loops()
	}
	c.findMentions()
	c.asked = askedItem(tf, t.Message)
	c.markViewer()
	copy(c.used, c.named)
	toks := scan(c.text, c.used)
	c.quantities = []float64{1}
	for _, v := range append(slices.Clone(tf.msgNumbers), 0) {
		if v >= 2 && v <= 99 && v == math.Trunc(v) {
			c.quantities = append(c.quantities, v)
		}
	}
	for _, tok := range toks {
		c.token(tok)
	}
	c.phrases()
	if c.on(KindFact) {
		c.deniedFacts()
		c.shipFrom()
	}
	if c.on(KindItem) {
		c.itemKinds()
	}
	if c.on(KindLanguage) {
		c.language()
	}
	sort.SliceStable(c.findings, func(i, j int) bool { return c.findings[i].at < c.findings[j].at })
	return c.findings
}

func (c *checker) on(k Kind) bool { return c.t.Config.checks(k) }

func (c *checker) flag(k Kind, start, end int, format string, args ...any) {
	if !c.on(k) {
		return
	}
	c.findings = append(c.findings, Finding{Kind: k, Phrase: strings.TrimSpace(c.text[start:end]), Why: fmt.Sprintf(format, args...), at: start})
}

// normalize folds full-width digits, letters and signs to ASCII, so that
// "１９９元" reads as "199元".
func normalize(s string) string {
	fold := false
	for _, r := range s {
		if (r >= 0xFF01 && r <= 0xFF5E && !strings.ContainsRune("，！？：；（）", r)) || r == 0x3000 || r == 0xA0 {
			fold = true
			break
		}
	}
	if !fold {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x3000 || r == 0xA0:
			r = ' '
		case r >= 0xFF01 && r <= 0xFF5E && !strings.ContainsRune("，！？：；（）", r):
			r = r - 0xFF01 + '!'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// findMentions finds the items the reply names, longest names first.
func (c *checker) findMentions() {
	c.mentions = c.tf.mentionsIn(c.lower, c.named)
	sort.Slice(c.mentions, func(i, j int) bool { return c.mentions[i].start < c.mentions[j].start })
}

// mentionsIn finds the items lower (a lower-cased text) names, longest
// names first, each name whole and not overlapping one found before, and
// claims their bytes in taken. A name several items share stands for the
// one a result of the turn is about.
func (tf *turnFacts) mentionsIn(lower string, taken []bool) []mention {
	type name struct {
		text  string
		items []*itemFacts
	}
	var names []name
	for _, f := range tf.items {
		for _, n := range f.names {
			if len(n) < 2 {
				continue
			}
			i := slices.IndexFunc(names, func(x name) bool { return x.text == n })
			if i < 0 {
				names = append(names, name{text: n})
				i = len(names) - 1
			}
			names[i].items = append(names[i].items, f)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i].text) > len(names[j].text) })
	var out []mention
	for _, n := range names {
		it := n.items[0]
		for _, f := range n.items {
			if f.inPlay {
				it = f
				break
			}
		}
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], n.text)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(n.text)
			from = start + 1
			if overlaps(taken, start, end) || !wordBounded(lower, start, end) {
				continue
			}
			claim(taken, start, end)
			out = append(out, mention{start, end, it})
		}
	}
	return out
}

// askedItem returns the one item the viewer's message names, or nil when
// it names none or several.
func askedItem(tf *turnFacts, message string) *itemFacts {
	msg := asciiLower(normalize(message))
	var asked *itemFacts
	for _, m := range tf.mentionsIn(msg, make([]bool, len(msg))) {
		if asked != nil && asked != m.item {
			return nil
		}
		asked = m.item
	}
	return asked
}

// markViewer marks where the reply names the viewer, whose name may hold
// digits ("小2024") and another script.
func (c *checker) markViewer() {
	v := asciiLower(strings.TrimSpace(normalize(c.t.Viewer)))
	if len(v) < 2 {
		return
	}
	for from := 0; from < len(c.lower); {
		i := strings.Index(c.lower[from:], v)
		if i < 0 {
			return
		}
		claim(c.named, from+i, from+i+len(v))
		claim(c.unspoken, from+i, from+i+len(v))
		from += i + len(v)
	}
}

// occurrences yields the start and end of each occurrence of sub in s,
// left to right, none overlapping the one before.
func occurrences(s, sub string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		if sub == "" {
			return
		}
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], sub)
			if i < 0 {
				return
			}
			start, end := from+i, from+i+len(sub)
			from = end
			if !yield(start, end) {
				return
			}
		}
	}
}

// wordBounded reports whether text[start:end] does not cut a Latin word
// or number in two.
func wordBounded(text string, start, end int) bool {
	alnum := func(b byte) bool { return isDigit(b) || isASCIILetter(b) }
	if start > 0 && alnum(text[start]) && alnum(text[start-1]) {
		return false
	}
	return !(end < len(text) && alnum(text[end-1]) && alnum(text[end]))
}

// owner is the item a statement at pos is about: the item named last
// before it, else the first named after it in the same sentence, else the
// one item the viewer asked about when a result of the turn is about it,
// else the only item the results are about; nil when that is not one
// item. A reply that names no item speaks
// of what the viewer asked: a shipping policy the model fetched for
// another item ("1天内发货，不支持退货" of the jerky, asked of the green
// tea) backs nothing said of it.
func (c *checker) owner(pos int) *itemFacts {
	var best *itemFacts
	for _, m := range c.mentions {
		if m.start <= pos {
			best = m.item
		}
	}
	if best != nil {
		return best
	}
	_, end := sentence(c.text, pos)
	for _, m := range c.mentions {
		if m.start >= pos && m.start < end {
			return m.item
		}
	}
	if c.asked != nil && c.asked.inPlay {
		return c.asked
	}
	if ip := c.tf.inPlay(); len(ip) == 1 {
		return ip[0]
	}
	return nil
}

// scope lists the facts that may back a statement about owner: its own
// and the context's, or every item's when the owner is unknown.
func (c *checker) scope(owner *itemFacts) []*itemFacts {
	if owner != nil {
		return []*itemFacts{owner, c.tf.global}
	}
	return append(c.tf.inPlay(), c.tf.global)
}

// sentence returns the bounds of the sentence around pos.
func sentence(text string, pos int) (int, int) {
	return bounds(text, pos, "。！？!?\n")
}

// clause returns the bounds of the clause around pos.
func clause(text string, pos int) (int, int) {
	return bounds(text, pos, "。！？!?\n，,；;：:")
}

func bounds(text string, pos int, seps string) (int, int) {
	start := 0
	for i, r := range text[:pos] {
		if strings.ContainsRune(seps, r) || (r == '.' && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n')) {
			start = i + utf8.RuneLen(r)
		}
	}
	end := len(text)
	for i, r := range text[pos:] {
		if strings.ContainsRune(seps, r) || (r == '.' && (pos+i+1 == len(text) || text[pos+i+1] == ' ')) {
			end = pos + i
			break
		}
	}
	return start, end
}

// token checks one number of the reply.
func (c *checker) token(t token) {
	switch t.kind {
	case tokMoney, tokPriced:
		c.amount(t)
	case tokForeign:
		c.foreign(t)
	case tokSpendOff:
		c.spendOff(t)
	case tokMinSpend:
		c.minSpend(t)
	case tokZhe:
		c.discount(t)
	case tokDate:
		c.date(t)
	case tokRelDate:
		c.relativeDate(t)
	case tokTime:
		c.clock(t)
	case tokDuration:
		c.duration(t)
	case tokStockCount:
		c.stockCount(t)
	case tokLink:
		c.link(t)
	case tokSize:
		c.size(t)
	case tokHeight, tokWeight:
		c.measure(t)
	case tokSpec:
		c.spec(t)
	case tokUnreadable:
		c.flag(KindNumber, t.start, t.end, "no tool result gives a number of %d digits", unicodeDigits(c.text[t.start:t.end]))
	default:
		c.number(t)
	}
}

// moneyBacked reports whether f's results give fen, or it follows from
// them the way the tools compute: the saving off the list price, the
// total for a quantity, the total after a coupon the order reaches, the
// spend still missing for one.
func (c *checker) moneyBacked(f *itemFacts, fen int64) bool {
	for _, m := range f.money {
		if m.fen == fen {
			return true
		}
	}
	if f.price <= 0 {
		return false
	}
	if f.listPrice > f.price && f.listPrice-f.price == fen {
		return true
	}
	coupons := append(slices.Clone(f.coupons), c.tf.global.coupons...)
	for _, q := range append(slices.Clone(c.quantities), f.quantities...) {
		total := int64(q) * f.price
		if q != math.Trunc(q) || q < 1 {
			continue
		}
		if total == fen {
			return true
		}
		for _, cp := range coupons {
			switch {
			case total >= cp.minSpend && cp.amount > 0 && total-cp.amount == fen:
				return true
			case total >= cp.minSpend && cp.percent > 0 && toFen(float64(total)/100*(1-cp.percent/100)) == fen:
				return true
			case total < cp.minSpend && cp.minSpend-total == fen:
				return true
			}
		}
	}
	return false
}

// moneyOf describes where else an amount is found: "the coupon of 每日坚果".
func (c *checker) moneyOf(fen int64, except *itemFacts) string {
	for _, f := range c.tf.inPlay() {
		if f == except {
			continue
		}
		for _, m := range f.money {
			if m.fen == fen {
				return fmt.Sprintf("%s is the %s of %s", yuan(fen), keyWords(m.key), f.display())
			}
		}
	}
	return ""
}

// keyWords is a result key path as words: "total_after_coupon" →
// "price after coupon", "coupon.amount" → "coupon", "promotions.price" →
// "promotions price".
func keyWords(k string) string {
	base, parent := baseOf(k), baseOf(parentOf(k))
	if parent == base {
		parent = ""
	}
	var words string
	switch base {
	case "amount", "coupon":
		return "coupon"
	case "min_spend":
		words = "minimum spend"
	case "total_after_coupon":
		words = "price after coupon"
	case "missing_spend":
		words = "spend still missing"
	case "context":
		return "stream context"
	default:
		words = strings.ReplaceAll(base, "_", " ")
	}
	if parent != "" && !strings.Contains(parent, "coupon") {
		words = strings.ReplaceAll(parent, "_", " ") + " " + words
	}
	return words
}

func (c *checker) amount(t token) {
	fen := toFen(t.v)
	owner := c.owner(t.start)
	for _, f := range c.scope(owner) {
		if c.moneyBacked(f, fen) {
			return
		}
	}
	switch {
	case owner != nil && c.moneyOf(fen, owner) != "":
		c.flag(KindAmount, t.start, t.end, "%s, not of %s", c.moneyOf(fen, owner), owner.display())
	case owner != nil && !owner.inPlay:
		c.flag(KindAmount, t.start, t.end, "no tool result this turn is about %s", owner.display())
	case owner != nil && owner.price > 0:
		c.flag(KindAmount, t.start, t.end, "no tool result gives %s for %s (price %s)", yuan(fen), owner.display(), yuan(owner.price))
	case owner != nil:
		c.flag(KindAmount, t.start, t.end, "no tool result gives %s for %s", yuan(fen), owner.display())
	default:
		c.flag(KindAmount, t.start, t.end, "no tool result this turn gives %s", yuan(fen))
	}
}

func (c *checker) foreign(t token) {
	cur := map[string]string{"$": "USD", "US$": "USD", "美元": "USD", "美金": "USD", "dollar": "USD", "dollars": "USD", "usd": "USD",
		"€": "EUR", "欧元": "EUR", "euro": "EUR", "euros": "EUR", "eur": "EUR", "£": "GBP", "英镑": "GBP", "gbp": "GBP"}[asciiLower(t.unit)]
	if cur != "" && cur == c.tf.currency {
		c.amount(t)
		return
	}
	have := c.tf.currency
	if have == "" {
		have = "CNY"
	}
	c.flag(KindAmount, t.start, t.end, "the results give prices in %s, not %s", have, t.unit)
}

func (c *checker) spendOff(t token) {
	spend, off := toFen(t.v), toFen(t.v2)
	for _, f := range c.scope(c.owner(t.start)) {
		for _, cp := range f.coupons {
			if cp.minSpend == spend && cp.amount == off {
				return
			}
		}
	}
	c.flag(KindAmount, t.start, t.end, "no coupon in the results takes %s off %s", yuan(off), yuan(spend))
}

// minSpend checks a coupon's minimum spend ("满300元才能用"): one of the
// coupons in the results must need exactly that spend. Any amount of the
// results would otherwise back it, a price among them.
func (c *checker) minSpend(t token) {
	spend := toFen(t.v)
	var have []string
	for _, f := range c.scope(c.owner(t.start)) {
		for _, cp := range f.coupons {
			if cp.minSpend == spend {
				return
			}
			if cp.minSpend > 0 {
				have = append(have, yuan(cp.minSpend))
			}
		}
	}
	if len(have) == 0 {
		c.flag(KindAmount, t.start, t.end, "no coupon in the results states a minimum spend")
		return
	}
	c.flag(KindAmount, t.start, t.end, "the coupons in the results need a spend of %s", strings.Join(have, ", "))
}

func (c *checker) discount(t token) {
	owner := c.owner(t.start)
	var have []string
	for _, f := range c.scope(owner) {
		offs := slices.Clone(f.percents)
		if f.listPrice > f.price && f.price > 0 {
			offs = append(offs, 100*(1-float64(f.price)/float64(f.listPrice)))
		}
		for _, o := range offs {
			if math.Abs(o-t.v) <= 1 {
				return
			}
			have = append(have, strconv.FormatFloat(math.Round(o), 'f', -1, 64)+"%")
		}
	}
	if len(have) == 0 {
		c.flag(KindDiscount, t.start, t.end, "no tool result gives a discount")
		return
	}
	c.flag(KindDiscount, t.start, t.end, "that is %.0f%% off; the results give %s off", t.v, strings.Join(have, ", "))
}

func (c *checker) date(t token) {
	for _, f := range c.scope(c.owner(t.start)) {
		for _, d := range f.dates {
			if d.d.month == t.date.month && d.d.day == t.date.day && (d.d.year == 0 || t.date.year == 0 || d.d.year == t.date.year) {
				return
			}
		}
	}
	c.flag(KindDate, t.start, t.end, "no tool result gives this date")
}

// relativeDate checks "明天补货" against the dates of the results and
// "明天发货" against the dispatch time they promise.
func (c *checker) relativeDate(t token) {
	if c.t.Now.IsZero() {
		c.flag(KindDate, t.start, t.end, "the hook has no clock to tell which day that is")
		return
	}
	day := c.t.Now.AddDate(0, 0, int(t.v))
	scope := c.scope(c.owner(t.start))
	if t.unit == "ship" {
		for _, f := range scope {
			for _, d := range f.durations {
				if d.unit == "hour" && containsAny(d.key, []string{"ship", "dispatch"}) && d.v <= 24*math.Max(t.v, 1) {
					return
				}
			}
		}
		c.flag(KindDuration, t.start, t.end, "the results promise no dispatch that soon")
		return
	}
	for _, f := range scope {
		for _, d := range f.dates {
			if d.d.month == int(day.Month()) && d.d.day == day.Day() && (d.d.year == 0 || d.d.year == day.Year()) {
				return
			}
		}
	}
	c.flag(KindDate, t.start, t.end, "no tool result gives that day (%s)", date{day.Year(), int(day.Month()), day.Day()})
}

func (c *checker) clock(t token) {
	for _, f := range c.scope(c.owner(t.start)) {
		for _, tm := range f.times {
			if math.Mod(tm[0], 12) == math.Mod(t.v, 12) && tm[1] == t.v2 {
				return
			}
		}
	}
	c.flag(KindDate, t.start, t.end, "no tool result gives this time")
}

// durationsMatch compares a stated duration with a backed one: hours
// with hours (2 days is 48 hours), months with months, and months with
// days at about 30 days a month.
func durationsMatch(v float64, unit string, d durationFact) bool {
	stated := hourOrMonth(unit)
	switch {
	case stated == d.unit:
		return math.Abs(v-d.v) < 0.01
	case stated == "month":
		return math.Abs(d.v/24-30.44*v) <= 1.5*v
	default:
		return math.Abs(v/24-30.44*d.v) <= 1.5*d.v
	}
}

func (c *checker) duration(t token) {
	var have []string
	for _, f := range c.scope(c.owner(t.start)) {
		for _, d := range f.durations {
			if durationsMatch(t.v, t.unit, d) {
				return
			}
			have = append(have, describeDuration(d))
		}
	}
	if len(have) == 0 {
		c.flag(KindDuration, t.start, t.end, "no tool result gives a duration")
		return
	}
	c.flag(KindDuration, t.start, t.end, "the results give %s", strings.Join(have, ", "))
}

func describeDuration(d durationFact) string {
	v := d.v
	unit := "months"
	if d.unit == "hour" {
		unit = "hours"
		if math.Mod(v, 24) == 0 {
			v, unit = v/24, "days"
		}
	}
	return fmt.Sprintf("%s %s (%s)", strconv.FormatFloat(v, 'f', -1, 64), unit, keyWords(d.key))
}

// stockOf returns the stock a statement at [start, end) is about: of
// the variants the clause (or else the viewer's message) names, or of the
// item as a whole; ok is false when no result of the turn gives it.
func (c *checker) stockOf(start, end int) (owner *itemFacts, stocks []variantStock, ok bool) {
	owner = c.owner(start)
	if owner == nil || !owner.hasStock || !owner.stockChecked {
		owner = nil
		for _, f := range c.tf.inPlay() {
			if f.hasStock && f.stockChecked {
				if owner != nil {
					return nil, nil, false
				}
				owner = f
			}
		}
		if owner == nil {
			return nil, nil, false
		}
	}
	// What the stock is now is what a check gave: a lookup's state of
	// another variant ("曜黑 in_stock" beside a check of 奶白 at 0) says
	// nothing of the stock now.
	stock := slices.DeleteFunc(slices.Clone(owner.stock), func(s variantStock) bool { return !s.checked })
	if len(stock) == 0 {
		stock = owner.stock
	}
	cs, ce := clause(c.text, start)
	if named := namedVariants(c.text[cs:max(ce, end)], stock); len(named) > 0 {
		return owner, named, true
	}
	if named := namedVariants(normalize(c.t.Message), stock); len(named) == 1 {
		return owner, named, true
	}
	return owner, []variantStock{wholeStock(stock)}, true
}

// wholeStock is the stock of an item as a whole: its own entry, else the
// sum of its variants' counts when all are counted, else the state their
// states add up to (in stock when any is, sold out when all are).
func wholeStock(stock []variantStock) variantStock {
	whole := variantStock{counted: true}
	inStock, low, soldOut := false, true, true
	for _, s := range stock {
		if s.name == "" {
			return s
		}
		whole.stock += s.stock
		whole.counted = whole.counted && s.counted
		st := s.stateNow()
		inStock = inStock || st == stateInStock || st == stateLow
		low = low && (st == stateLow || st == stateSoldOut)
		soldOut = soldOut && st == stateSoldOut
	}
	switch {
	case whole.counted:
	case inStock && low:
		whole.state = stateLow
	case inStock:
		whole.state = stateInStock
	case soldOut && len(stock) > 0:
		whole.state = stateSoldOut
	}
	return whole
}

// stateNow is the state of an entry: what its count says (sold out at
// 0, else in stock), or the tools' name for it when it is not counted.
func (s variantStock) stateNow() string {
	switch {
	case s.counted && s.stock == 0:
		return stateSoldOut
	case s.counted:
		return stateInStock
	}
	return s.state
}

// namedVariants returns the variants of stock that text names.
func namedVariants(text string, stock []variantStock) []variantStock {
	var out []variantStock
	lower := asciiLower(text)
	for _, s := range stock {
		if s.name == "" || strings.EqualFold(s.name, "standard") {
			continue
		}
		hay, needle := lower, asciiLower(s.name)
		if len(s.name) <= 4 && strings.ToUpper(s.name) == s.name {
			hay, needle = text, s.name // "M" must not match the m of "I'm"
		}
		for from := 0; from < len(hay); {
			i := strings.Index(hay[from:], needle)
			if i < 0 {
				break
			}
			at := from + i
			if wordBounded(hay, at, at+len(needle)) && !sizeInside(hay, at, at+len(needle)) {
				out = append(out, s)
				break
			}
			from = at + 1
		}
	}
	return out
}

// sizeInside reports whether a one-letter size at text[start:end] is
// part of a longer size ("L" of "XL").
func sizeInside(text string, start, end int) bool {
	return (start > 0 && text[start-1] == 'X') || (end < len(text) && text[end] == 'L' && text[end-1] == 'X')
}

// shownStock is what a finding quotes of the stock: the checked variants
// an item-wide state was made of ("奶白: 0"), else stocks.
func shownStock(owner *itemFacts, stocks []variantStock) []variantStock {
	if len(stocks) != 1 || stocks[0].name != "" {
		return stocks
	}
	var parts []variantStock
	for _, s := range owner.stock {
		if s.name == "" || strings.EqualFold(s.name, "standard") {
			return stocks
		}
		if s.checked {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return stocks
	}
	return parts
}

func describeStock(stocks []variantStock) string {
	var parts []string
	for _, s := range stocks {
		what := s.state
		switch {
		case s.counted:
			what = strconv.Itoa(s.stock)
		case what == "":
			what = notStated
		}
		if s.name == "" {
			parts = append(parts, what+" in stock")
		} else {
			parts = append(parts, s.name+": "+what)
		}
	}
	return strings.Join(parts, ", ")
}

func (c *checker) stockCount(t token) {
	owner, stocks, ok := c.stockOf(t.start, t.end)
	if !ok {
		c.flag(KindStock, t.start, t.end, "no stock lookup this turn gives a count%s", c.lookupStock())
		return
	}
	for _, s := range append(slices.Clone(owner.stock), stocks...) {
		if s.counted && float64(s.stock) == t.v {
			return
		}
	}
	c.flag(KindStock, t.start, t.end, "check_stock gives %s %s", owner.display(), describeStock(shownStock(owner, stocks)))
}

// stock states a reply may claim.
const (
	stockSoldOut = iota + 1
	stockIn
	stockLow
	stockPlenty
)

func (c *checker) stockState(state, start, end int) {
	owner, stocks, ok := c.stockOf(start, end)
	if !ok {
		c.flag(KindStock, start, end, "no stock lookup this turn backs it%s", c.lookupStock())
		return
	}
	low := c.t.Config.lowStock()
	for _, s := range stocks {
		var right bool
		switch st := s.stateNow(); {
		case s.counted && state == stockLow && s.name == "" && len(stocks) == 1 && allLow(owner.stock, low):
			right = true // every variant left is low: "库存紧张" of the item is honest
		case s.counted && state == stockLow:
			right = s.stock > 0 && s.stock < low
		case s.counted && state == stockPlenty:
			right = s.stock >= low
		case state == stockSoldOut:
			right = st == stateSoldOut
		case state == stockIn:
			right = st == stateInStock || st == stateLow
		case state == stockLow:
			right = st == stateLow
		}
		// "Plenty" from a state without a count stays unbacked: in stock
		// says nothing of how many.
		if !right {
			c.flag(KindStock, start, end, "check_stock gives %s %s", owner.display(), describeStock(shownStock(owner, stocks)))
			return
		}
	}
}

// lookupStock names the stock states a product lookup gave without a
// check_stock, which back no claim about the stock now: "; the product
// lookup says presale".
func (c *checker) lookupStock() string {
	for _, f := range c.tf.inPlay() {
		if !f.hasStock || f.stockChecked {
			continue
		}
		var said []string
		for _, s := range f.stock {
			if st := s.stateNow(); st != "" {
				said = append(said, strings.TrimSpace(s.name+" "+st))
			}
		}
		if len(said) > 0 {
			return "; the product lookup says " + strings.Join(said, ", ") + " (check_stock says what is left now)"
		}
	}
	return ""
}

// allLow reports whether every counted variant in stock has fewer than
// low left (and at least one has any).
func allLow(stock []variantStock, low int) bool {
	some := false
	for _, s := range stock {
		if !s.counted || s.stock >= low {
			return false
		}
		some = some || s.stock > 0
	}
	return some
}

func (c *checker) link(t token) {
	n := int(t.v)
	owner := c.owner(t.start)
	if owner != nil && len(owner.links) > 0 {
		if !slices.Contains(owner.links, n) {
			c.flag(KindLink, t.start, t.end, "%s is link %d", owner.display(), owner.links[0])
		}
		return
	}
	for _, f := range c.tf.items {
		if slices.Contains(f.links, n) {
			return
		}
	}
	for _, call := range c.t.Calls {
		if strings.Contains(string(call.Arguments), strconv.Itoa(n)) && strings.Contains(asciiLower(string(call.Arguments)), "link") ||
			strings.Contains(string(call.Arguments), strconv.Itoa(n)+"号") {
			return // the viewer's own link number, which the lookup resolved
		}
	}
	c.flag(KindLink, t.start, t.end, "no item of the catalog is link %d", n)
}

// sizeAdvice reports whether the clause of a size is advice ("建议您穿L码").
var sizeAdvice = regexp.MustCompile(`(?i)建议|推荐|穿|选|适合|recommend|suggest|take|go with|fit|would|should`)

func (c *checker) size(t token) {
	owner := c.owner(t.start)
	var withSize []*itemFacts
	for _, f := range c.scope(owner) {
		if len(f.sizes) > 0 || len(f.variants) > 0 {
			withSize = append(withSize, f)
		}
	}
	if len(withSize) == 0 {
		c.flag(KindSize, t.start, t.end, "no tool result this turn gives sizes")
		return
	}
	var known []string
	var chartOwner *itemFacts
	for _, f := range withSize {
		for _, s := range append(slices.Clone(f.sizes), f.variants...) {
			if strings.EqualFold(s, t.size) {
				known = append(known, s)
				if len(f.chart) > 0 {
					chartOwner = f
				}
			}
		}
	}
	if len(known) == 0 {
		var all []string
		for _, f := range withSize {
			all = append(all, f.sizes...)
		}
		c.flag(KindSize, t.start, t.end, "the sizes are %s", strings.Join(all, ", "))
		return
	}
	h, w := c.tf.msgHeight, c.tf.msgWeight
	cs, ce := clause(c.text, t.start)
	if chartOwner == nil || (h == 0 && w == 0) || !sizeAdvice.MatchString(c.text[cs:ce]) {
		return
	}
	if right := adviseSizes(chartOwner.chart, h, w); len(right) > 0 && !slices.Contains(right, t.size) {
		c.flag(KindSize, t.start, t.end, "the size chart of %s gives %s for %s", chartOwner.display(), strings.Join(right, "/"), measures(h, w))
	}
}

// adviseSizes are the sizes of a chart whose rows contain both measures,
// else those that contain either.
func adviseSizes(chart []sizeRow, h, w float64) []string {
	var both, either []string
	for _, r := range chart {
		fh, fw := r.fits(h, w)
		switch {
		case fh && fw:
			both = append(both, r.size)
		case (fh && h != 0) || (fw && w != 0):
			either = append(either, r.size)
		}
	}
	if len(both) > 0 {
		return both
	}
	return either
}

func measures(h, w float64) string {
	var parts []string
	if h > 0 {
		parts = append(parts, strconv.FormatFloat(h, 'f', -1, 64)+"cm")
	}
	if w > 0 {
		parts = append(parts, strconv.FormatFloat(w, 'f', -1, 64)+"kg")
	}
	return strings.Join(parts, " ")
}

// number checks a number with no stronger kind: it must be a number of
// the results, the context or the viewer's message.
// attrNumber finds the numbers of an attribute's value ("150x200cm").
var attrNumber = regexp.MustCompile(`\d+(?:\.\d+)?`)

// measure checks a body height (cm) or weight (kg) the reply states: the
// viewer's own, a bound of a size chart or a number of an attribute of
// the turn's items backs it; a price or a count does not ("172 厘米" from
// a price of 172 yuan), as the room's grader reads it.
func (c *checker) measure(t token) {
	if slices.Contains(c.tf.msgNumbers, t.v) {
		return
	}
	for _, f := range append(c.tf.inPlay(), c.tf.global) {
		for _, r := range f.chart {
			if slices.Contains([]float64{r.minH, r.maxH, r.minW, r.maxW}, t.v) {
				return
			}
		}
		for _, a := range f.attrs {
			for _, n := range attrNumber.FindAllString(a[1], -1) {
				if v, err := strconv.ParseFloat(n, 64); err == nil && v == t.v {
					return
				}
			}
		}
	}
	c.flag(KindSize, t.start, t.end, "neither the viewer nor a size chart gives %s", strconv.FormatFloat(t.v, 'f', -1, 64))
}

// spec checks a number with a unit of measure ("120 ml", "50g", "8mm"):
// the viewer's own, or one that an item's attributes, specs, name,
// description, variants or a measure-like key state backs it; a price, a
// stock or a percentage does not ("120 ml" out of a price of 120 yuan), as
// the room's grader reads it.
func (c *checker) spec(t token) {
	if slices.Contains(c.tf.msgNumbers, t.v) {
		return
	}
	holds := func(s string) bool {
		for _, n := range attrNumber.FindAllString(s, -1) {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v == t.v {
				return true
			}
		}
		return false
	}
	for _, f := range append(c.tf.inPlay(), c.tf.global) {
		for _, a := range f.attrs {
			if holds(a[1]) {
				return
			}
		}
		for _, s := range slices.Concat(f.texts, f.variants) {
			if _, err := strconv.ParseFloat(s, 64); err != nil && holds(s) {
				return // a number within words; a bare one is a keyed value
			}
		}
		for _, k := range f.values {
			if k.v == t.v && isMeasureKey(baseOf(k.key)) {
				return
			}
		}
	}
	c.flag(KindNumber, t.start, t.end, "no attribute of the turn's items gives %s", strconv.FormatFloat(t.v, 'f', -1, 64))
}

// isMeasureKey reports whether a number under key k may be a measure: not
// money, a stock, a quantity, a percentage or a duration.
func isMeasureKey(k string) bool {
	return !isMoneyKey(k) && !containsAny(k, []string{"stock", "remaining", "sold", "quantity", "per_buyer", "percent", "days", "hours"})
}

func (c *checker) number(t token) {
	if t.kind == tokQuantity && t.v == 1 {
		return // "一款", "一件": an article more than a count
	}
	if slices.Contains(c.tf.msgNumbers, t.v) {
		return
	}
	for _, f := range append(c.tf.inPlay(), c.tf.global) {
		if slices.Contains(f.numbers, t.v) || t.kind == tokQuantity && slices.Contains(f.counts, t.v) {
			return
		}
		if t.kind == tokQuantity && f.price > 0 {
			// The quantity an order needs to reach a coupon.
			for _, cp := range append(slices.Clone(f.coupons), c.tf.global.coupons...) {
				if float64(f.price)*t.v >= float64(cp.minSpend) && float64(f.price)*(t.v-1) < float64(cp.minSpend) {
					return
				}
			}
		}
	}
	c.flag(KindNumber, t.start, t.end, "no tool result gives %s", strconv.FormatFloat(t.v, 'f', -1, 64))
}
