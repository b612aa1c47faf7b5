package liveroom

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// Kinds of unbacked statement (Unbacked.Kind).
const (
	// UnbackedAmount is a sum of money, or a bare number, no tool gave.
	UnbackedAmount = "amount"
	// UnbackedDiscount is a discount (折, % off) no promotion gives.
	UnbackedDiscount = "discount"
	// UnbackedStockCount is a number of units left no stock check gave.
	UnbackedStockCount = "stock_count"
	// UnbackedStockState is "in stock", "sold out" or "only a few left"
	// against what the stock check said, or without one.
	UnbackedStockState = "stock_state"
	// UnbackedSize is a size the item does not come in, size advice the
	// chart does not give for the viewer's height and weight, or a body
	// measure nobody stated.
	UnbackedSize = "size"
	// UnbackedDuration is a date, a duration (dispatch, returns, battery)
	// or another value with a unit that no tool gave.
	UnbackedDuration = "duration"
	// UnbackedItemName names an item that is not in the room's catalog.
	UnbackedItemName = "item_name"
	// UnbackedLink is a link number of no item the turn looked up.
	UnbackedLink = "link_number"
	// UnbackedAttribute is a yes/no claim (material, ingredient, allergen,
	// noise cancelling, colour, coupon, free shipping, returns) the
	// item's facts do not back.
	UnbackedAttribute = "attribute"
	// UnbackedAction claims an action (link pinned, coupon sent) that no
	// successful call of the turn made.
	UnbackedAction = "action"
	// UnbackedResidue is tool-call markup, reasoning tags, chat-template
	// tokens, JSON, template placeholders or catalog ids spoken aloud.
	UnbackedResidue = "residue"
	// UnbackedLanguage is a reply, or a sentence of it, not in the
	// viewer's language.
	UnbackedLanguage = "language"
)

// UnbackedKinds lists every kind of unbacked statement in a fixed order.
func UnbackedKinds() []string {
	return []string{UnbackedAmount, UnbackedDiscount, UnbackedStockCount, UnbackedStockState, UnbackedSize,
		UnbackedDuration, UnbackedItemName, UnbackedLink, UnbackedAttribute, UnbackedAction, UnbackedResidue, UnbackedLanguage}
}

// Unbacked is one statement of a reply that neither the tool results of
// its turn state nor the room's catalog holds for an item the turn's
// calls looked up.
type Unbacked struct {
	// Kind is one of UnbackedKinds.
	Kind string `json:"kind"`
	// Phrase is the statement as the reply wrote it.
	Phrase string `json:"phrase"`
	// Why says what the tools or the catalog say instead.
	Why string `json:"why"`
	// At is the byte offset of Phrase in the reply.
	At int `json:"at"`

	// yuan is an amount's value, for the grader's deduction message.
	yuan float64
}

// FindUnbacked finds every statement of the reply that ends msgs (the
// transcript of one turn: its tool calls, their results and the reply)
// that the turn's successful tool results do not back, judged by the
// room's truth about the items those calls touched. q is the question
// the turn answers: its viewer's words and language. A reply the runtime
// chose (opts.SafeLine) is not checked.
func (r *Room) FindUnbacked(q Question, msgs []harness.Message, opts GradeOptions) []Unbacked {
	reply := ""
	for _, m := range msgs {
		if m.Role == harness.RoleAssistant && len(m.ToolCalls) == 0 {
			reply = m.Content
		}
	}
	if opts.SafeLine || strings.TrimSpace(reply) == "" {
		return nil
	}
	ev := r.evidenceOf(q, msgs, opts.Mapping, units())
	c := &checker{room: r, q: q, ev: ev, text: newMaskedText(reply)}
	c.residue()
	c.maskNames()
	c.language()
	c.itemNames()
	c.dates()
	c.links()
	c.numbers()
	c.sizes()
	c.stockStates()
	c.actions()
	c.yesNo()
	slices.SortStableFunc(c.found, func(a, b Unbacked) int { return a.At - b.At })
	return c.found
}

// evidence is what one turn's successful calls back: the facts their
// results state and the room's facts about the items they touched.
type evidence struct {
	units     []unit               // the unit table, read once per check
	money     []float64            // yuan
	discounts []float64            // percent off
	durations map[string][]float64 // unit class → values
	attrNums  []float64            // numbers in attribute values and variant names
	chartNums []float64            // heights and weights of the size charts
	viewer    []float64            // numbers of the viewer's message
	quantity  []float64            // quantities the viewer or a coupon check named
	stock     []stockEntry
	checked   bool // a stock check succeeded
	sizes     map[string]bool
	charts    [][]SizeRow
	links     map[int]bool
	items     []Item   // touched, in order
	stated    []string // the results' text, lower case
	pinned    bool
	// coupon and shipping facts, known when their tool succeeded.
	couponKnown, couponExists bool
	// freeShipping and returns, known when a shipping result says.
	freeKnown, freeShipping bool
	returnsKnown, returns   bool
	// returnConditions: the result states conditions on returns, which a
	// reply may give in its own words ("engraved pieces cannot be
	// returned" for 刻字定制款不退).
	returnConditions bool
	// allergens are the catalog's allergen codes ("peanut"), known when a
	// result states them ("none" is an empty list).
	allergensKnown bool
	allergens      []string
	dates          []date // restock, best-before, presale dates stated
}

// date is a calendar date a result states.
type date struct{ year, month, day int }

// stockEntry is the stock a check gave for one variant ("" when a
// result gave a count for the item as a whole): a count when counted,
// and a stated state ("in_stock", "low", "sold_out", "presale") when the
// tool gave one.
type stockEntry struct {
	variant string
	units   int
	counted bool
	state   string
}

// touch records an item a call of the turn looked at: its facts and
// link number may be stated.
func (ev *evidence) touch(it Item) {
	if slices.ContainsFunc(ev.items, func(x Item) bool { return x.ID == it.ID }) {
		return
	}
	ev.items = append(ev.items, it)
	if n, ok := itemLink(it); ok {
		ev.links[n] = true
	}
}

// evidenceOf reads the turn: each tool call (mapped back to canonical
// names) with the result that follows it.
func (r *Room) evidenceOf(q Question, msgs []harness.Message, mapping *hsa.Mapping, us []unit) *evidence {
	ev := &evidence{units: us, durations: map[string][]float64{}, sizes: map[string]bool{}, links: map[int]bool{}}
	ev.viewer = numberTokens(q.Text)
	if n, ok := viewerQuantity(q.Text); ok {
		ev.quantity = append(ev.quantity, n)
	}
	var pending []hsa.Call
	for _, m := range msgs {
		switch {
		case m.Role == harness.RoleAssistant && len(m.ToolCalls) > 0:
			pending = pending[:0]
			for _, tc := range m.ToolCalls {
				var args map[string]any
				_ = json.Unmarshal(tc.Arguments, &args)
				c := hsa.Call{Name: tc.Name, Arguments: args}
				if mapping != nil && args != nil {
					if back, err := mapping.Inverse(c); err == nil {
						c = back
					} else {
						c.Name = "" // a call that fits no tool backs nothing
					}
				}
				pending = append(pending, c)
			}
		case m.Role == harness.RoleTool && len(pending) > 0:
			c := pending[0]
			pending = pending[1:]
			r.readCall(ev, c, m.Content)
		}
	}
	ev.derive()
	return ev
}

// readCall adds what one call's result backs, when it succeeded.
func (r *Room) readCall(ev *evidence, c hsa.Call, content string) {
	if c.Name == "" || c.Name == ToolLoadSkill {
		return
	}
	var res map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(content)), &res) != nil || len(res) == 0 {
		return // malformed or empty: no facts
	}
	if _, failed := res["error"]; failed {
		return
	}
	if found, ok := res["found"].(bool); ok && !found {
		return
	}
	ev.readResult(res, "")
	item := func() (Item, bool) {
		if id, ok := res["item_id"].(string); ok {
			if it, ok := r.Item(id); ok {
				return it, true
			}
		}
		if id, ok := c.Arguments["item_id"].(string); ok {
			return r.Item(strings.TrimSpace(id))
		}
		if query, ok := c.Arguments["query"].(string); ok {
			return r.Resolve(query)
		}
		return Item{}, false
	}
	it, ok := item()
	if !ok {
		return
	}
	ev.touch(it)
	switch c.Name {
	case ToolProductLookup:
		ev.money = append(ev.money, yuan(it.Price()), yuan(it.ListPrice))
		if it.PromoPercentOff > 0 {
			ev.discounts = append(ev.discounts, float64(it.PromoPercentOff))
			ev.money = append(ev.money, yuan(it.ListPrice-it.Price()))
		}
		for _, v := range it.Variants {
			ev.sizes[strings.ToUpper(v.Name)] = true
			ev.attrNums = append(ev.attrNums, numberTokens(v.Name)...)
		}
		for _, row := range it.SizeChart {
			ev.sizes[strings.ToUpper(row.Size)] = true
			ev.chartNums = append(ev.chartNums, float64(row.MinHeight), float64(row.MaxHeight), float64(row.MinWeight), float64(row.MaxWeight))
		}
		if len(it.SizeChart) > 0 {
			ev.charts = append(ev.charts, it.SizeChart)
		}
		for _, a := range it.Attributes {
			for _, v := range []string{a.Value, a.ValueZH} {
				ev.attrNums = append(ev.attrNums, numberTokens(v)...)
				for _, n := range scanNumbers(v, ev.units) {
					if isDuration(n.class) {
						ev.durations[n.class] = append(ev.durations[n.class], n.value)
					}
				}
			}
		}
	case ToolCheckStock:
		ev.checked = true
		counts, said := res["stock"].(map[string]any)
		if !said {
			variant, _ := c.Arguments["variant"].(string)
			for _, v := range it.Variants {
				if variant == "" || strings.EqualFold(v.Name, variant) {
					ev.stock = append(ev.stock, stockEntry{variant: v.Name, units: v.Stock, counted: true})
				}
			}
			break
		}
		// What the tool said: a count, or "not stated" and a state.
		states, _ := res["stock_state"].(map[string]any)
		for variant, v := range counts {
			e := stockEntry{variant: variant}
			if n, ok := v.(float64); ok {
				e.units, e.counted = int(n), true
			}
			if st, ok := states[variant].(string); ok && st != NotStated {
				e.state = st
			}
			ev.stock = append(ev.stock, e)
		}
	case ToolCouponCheck:
		qty := 1.0
		if f, ok := c.Arguments["quantity"].(float64); ok && f >= 1 {
			qty = f
		}
		ev.quantity = append(ev.quantity, qty)
		total := float64(it.Price()) * qty / 100
		ev.money = append(ev.money, total)
		ev.couponKnown = true
		if cp, ok := r.Coupon(it.ID); ok {
			ev.couponExists = true
			ev.money = append(ev.money, yuan(cp.Amount), yuan(cp.MinSpend), total-yuan(cp.Amount), yuan(cp.MinSpend)-total)
		}
		if cp, ok := res["coupon"]; ok {
			ev.couponExists = cp != nil
		}
	case ToolShippingPolicy:
		// Only what the result says: a catalog may state no fee or no
		// return window, and the tool then says "not stated".
		if fee, ok := numberOf(res["shipping_fee"]); ok {
			ev.freeKnown, ev.freeShipping = true, fee == 0
		} else if free, ok := res["free_shipping"].(bool); ok {
			ev.freeKnown, ev.freeShipping = true, free
		}
		if days, ok := numberOf(res["return_days"]); ok {
			ev.returnsKnown, ev.returns = true, days > 0
		} else if accepted, ok := res["returns_accepted"].(bool); ok {
			ev.returnsKnown, ev.returns = true, accepted
		} else if rules, ok := res["returns"].(map[string]any); ok {
			if accepted, ok := rules["accepted"].(bool); ok {
				ev.returnsKnown, ev.returns = true, accepted
			}
		}
		for _, conds := range []any{res["return_conditions"], nestedKey(res, "returns", "conditions")} {
			if list, ok := conds.([]any); ok && len(list) > 0 {
				ev.returnConditions = true
			}
		}
	case ToolSendLink:
		ev.pinned = true
	}
}

// moneyKeys mark result fields that hold sums of money, whatever tool
// layout states them.
var moneyKeys = []string{"price", "amount", "spend", "total", "fee", "cost", "saving", "discount"}

// readResult adds the facts a result states in its own words.
func (ev *evidence) readResult(v any, key string) {
	k := strings.ToLower(key)
	switch x := v.(type) {
	case map[string]any:
		if k == "stock" || k == "stock_state" {
			return // read with the check_stock call
		}
		// A typed fact with its unit ({"value": 30, "unit": "hours"}).
		if v, ok := x["value"].(float64); ok {
			if u, ok := x["unit"].(string); ok {
				ev.readText(strconv.FormatFloat(v, 'f', -1, 64) + " " + u)
			}
		}
		for kk, vv := range x {
			ev.readResult(vv, kk)
		}
	case []any:
		if k == "allergens" {
			ev.allergensKnown = true
			for _, e := range x {
				if code, ok := e.(string); ok {
					ev.allergens = append(ev.allergens, strings.ToLower(code))
				}
			}
		}
		for _, e := range x {
			ev.readResult(e, key)
		}
	case float64:
		ev.keyed(k, x)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			ev.keyed(k, f)
		} else {
			ev.readText(x)
		}
		if k == "allergens" && strings.EqualFold(x, "none") {
			ev.allergensKnown = true
		}
		if k == "promotion" {
			if m := percentRE.FindStringSubmatch(x); m != nil {
				f, _ := strconv.ParseFloat(m[1], 64)
				ev.discounts = append(ev.discounts, f)
			}
		}
	case bool:
		if k == "pinned" && x {
			ev.pinned = true
		}
	}
}

// readText keeps what a result says in words: its claims, its numbers
// (as written, and with their units: "8 hours", "30ml") and its dates
// ("2026-12-19").
func (ev *evidence) readText(x string) {
	ev.stated = append(ev.stated, strings.ToLower(x))
	ev.attrNums = append(ev.attrNums, numberTokens(x)...)
	for _, n := range scanNumbers(x, ev.units) {
		switch {
		case isDuration(n.class):
			ev.durations[n.class] = append(ev.durations[n.class], n.value)
		case n.class == classAttr || n.class == classCM || n.class == classKG:
			ev.attrNums = append(ev.attrNums, n.value)
		}
	}
	for _, m := range isoDateRE.FindAllStringSubmatch(x, -1) {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		ev.dates = append(ev.dates, date{y, mo, d})
	}
}

var isoDateRE = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)

var percentRE = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%`)

func (ev *evidence) keyed(k string, f float64) {
	switch {
	case strings.Contains(k, "percent"):
		ev.discounts = append(ev.discounts, f)
	case containsAny(k, moneyKeys):
		ev.money = append(ev.money, f)
	case strings.Contains(k, "stock") && !strings.Contains(k, "in_stock"):
		ev.stock = append(ev.stock, stockEntry{units: int(f), counted: true})
		ev.checked = true
	case k == "link":
		ev.links[int(f)] = true
	case strings.Contains(k, "day"):
		ev.durations[classDay] = append(ev.durations[classDay], f)
	case strings.Contains(k, "hour"):
		ev.durations[classHour] = append(ev.durations[classHour], f)
	}
}

// derive adds what follows from the facts in one step a viewer would
// take: the total for the quantity they asked about, a duration in days
// said in hours or weeks.
func (ev *evidence) derive() {
	for _, it := range ev.items {
		for _, n := range ev.quantity {
			ev.money = append(ev.money, float64(it.Price())*n/100)
		}
	}
	for _, d := range ev.durations[classDay] {
		ev.durations[classHour] = append(ev.durations[classHour], 24*d)
		if int(d)%7 == 0 {
			ev.durations[classWeek] = append(ev.durations[classWeek], d/7)
		}
	}
	for _, h := range ev.durations[classHour] {
		if int(h)%24 == 0 {
			ev.durations[classDay] = append(ev.durations[classDay], h/24)
		}
	}
	for _, y := range ev.durations[classYear] {
		ev.durations[classMonth] = append(ev.durations[classMonth], 12*y)
	}
}

func (ev *evidence) stockUnits() []float64 {
	var out []float64
	total := 0
	for _, s := range ev.stock {
		if s.counted {
			out = append(out, float64(s.units))
			total += s.units
		}
	}
	return append(out, float64(total))
}

// nestedKey is m[outer][inner], or nil.
func nestedKey(m map[string]any, outer, inner string) any {
	if o, ok := m[outer].(map[string]any); ok {
		return o[inner]
	}
	return nil
}

// numberOf reads a number a result gives as a number or as text.
func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// anyNumber lists every number the turn backs, for a bare number.
func (ev *evidence) anyNumber() []float64 {
	out := slices.Concat(ev.money, ev.discounts, ev.attrNums, ev.chartNums, ev.viewer, ev.quantity, ev.stockUnits())
	for _, ds := range ev.durations {
		out = append(out, ds...)
	}
	for n := range ev.links {
		out = append(out, float64(n))
	}
	return out
}

func yuan(fen int64) float64 { return float64(fen) / 100 }

func near(xs []float64, v float64) bool {
	for _, x := range xs {
		if math.Abs(x-v) < 0.005 {
			return true
		}
	}
	return false
}

// maskedText is a reply with the spans already judged blanked out, so a
// later check does not read them again; offsets stay those of the reply.
type maskedText struct {
	orig string
	// masked is the reply as the checks still see it; lower is masked in
	// lower case (see lowerOf), kept so that the many words the checks
	// look for do not fold the reply's case each.
	masked, lower []byte
}

func newMaskedText(s string) *maskedText {
	return &maskedText{orig: s, masked: []byte(s), lower: []byte(lowerOf(s))}
}

func (t *maskedText) String() string { return string(t.masked) }

func (t *maskedText) mask(i, j int) {
	for k := i; k < j && k < len(t.masked); k++ {
		t.masked[k], t.lower[k] = ' ', ' '
	}
}

// find finds p in the text as findPhrase does.
func (t *maskedText) find(p string) [][2]int {
	if p != "" && isASCIILetter(p[0]) {
		return tokensIn(string(t.masked), string(t.lower), p)
	}
	return findPhrase(string(t.masked), p)
}

// checker collects the findings of one reply.
type checker struct {
	room  *Room
	q     Question
	ev    *evidence
	text  *maskedText
	found []Unbacked
}

func (c *checker) add(kind string, i, j int, why string, args ...any) {
	phrase := strings.TrimSpace(c.text.orig[i:j])
	for _, f := range c.found {
		if f.Kind == kind && f.Phrase == phrase {
			return
		}
	}
	c.found = append(c.found, Unbacked{Kind: kind, Phrase: phrase, Why: fmt.Sprintf(why, args...), At: i + strings.Index(c.text.orig[i:j], phrase)})
}

var (
	markupRE = regexp.MustCompile(`(?i)</?(?:tool_call|tool_response|tool_result|think|function_calls?|invoke|parameter|tools?)\b[^>]{0,60}>|<\|[A-Za-z_]{1,30}\|>|\[TOOL_CALLS\]|\bim_(?:start|end)\b`)
	jsonRE   = regexp.MustCompile(`\{\s*["'][^"'\n]{1,40}["']\s*:|"[A-Za-z_]{1,40}"\s*:\s*["{\[\d\-tfn]`)
	placeRE  = regexp.MustCompile(`\{\{[^{}]{0,40}\}\}|\$\{[^{}]{0,40}\}|\{[A-Za-z_][A-Za-z0-9_]{0,30}\}|%[sdvq]\b|\[(?i:item|product|price|name|link|商品|产品|价格|名称|链接)[^\]\n]{0,20}\]|<(?i:item|product|price|name)[^>\n]{0,20}>|【(?:商品|产品|价格|名称)[^】\n]{0,10}】`)
	snakeRE  = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)
	// addresseeRE finds the name a greeting addresses: "谢谢小2024！",
	// "Thank you Kiki_88,", "@Leo88".
	// It ends at punctuation within a few characters, or it is no name.
	addresseeRE = regexp.MustCompile(`(?:谢谢|感谢|@|\b(?i:thank you|thanks|hi|hello)\b)\s*([^\s，。！？、,.!?;；:：]{1,12})(?:[\s，。！？、,.!?;；:：]|$)`)
)

// residue finds what a model writes for machines, not viewers.
func (c *checker) residue() {
	for _, re := range []struct {
		re  *regexp.Regexp
		why string
	}{
		{markupRE, "tool-call markup, a reasoning tag or a chat-template token"},
		{jsonRE, "JSON"},
		{placeRE, "a template placeholder"},
	} {
		for _, m := range re.re.FindAllStringIndex(c.text.String(), -1) {
			c.add(UnbackedResidue, m[0], m[1], "%s spoken to the audience", re.why)
			c.text.mask(m[0], m[1])
		}
	}
	for _, it := range c.room.Items {
		for _, m := range c.text.find(it.ID) {
			c.add(UnbackedResidue, m[0], m[1], "the catalog id of %s spoken to the audience", it.NameEN)
			c.text.mask(m[0], m[1])
		}
	}
	// The viewer's name may look like code ("Kiki_88") or hold a number
	// ("小2024"); neither is a statement. So is whatever name a greeting
	// addresses, even one the model got wrong.
	c.maskPhrase(c.q.Viewer)
	for _, m := range addresseeRE.FindAllStringSubmatchIndex(c.text.String(), -1) {
		c.text.mask(m[2], m[3])
	}
	for _, m := range snakeRE.FindAllStringIndex(c.text.String(), -1) {
		c.add(UnbackedResidue, m[0], m[1], "a tool or field name spoken to the audience")
		c.text.mask(m[0], m[1])
	}
}

// tokenIndexes finds tok in s, ignoring case, where it is not part of a
// longer word or number.
func tokenIndexes(s, tok string) [][2]int { return tokensIn(s, lowerOf(s), tok) }

// lowerOf is s in lower case, or s itself where case folding would move
// the offsets (then matching is as written).
func lowerOf(s string) string {
	if lower := strings.ToLower(s); len(lower) == len(s) {
		return lower
	}
	return s
}

// tokensIn is tokenIndexes with s already in lower case.
func tokensIn(s, lower, tok string) [][2]int {
	if tok == "" {
		return nil
	}
	var out [][2]int
	t := strings.ToLower(tok)
	for from := 0; ; {
		i := strings.Index(lower[from:], t)
		if i < 0 {
			return out
		}
		i += from
		j := i + len(t)
		from = j
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[j:])
		if i > 0 && isWordRune(before) || j < len(s) && isWordRune(after) {
			continue
		}
		out = append(out, [2]int{i, j})
	}
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-')
}

// maskPhrase blanks every occurrence of p, ignoring case.
func (c *checker) maskPhrase(p string) {
	p = strings.TrimSpace(p)
	if utf8.RuneCountInString(p) < 2 {
		return
	}
	lower, lp := string(c.text.lower), strings.ToLower(p)
	for from := 0; ; {
		i := strings.Index(lower[from:], lp)
		if i < 0 {
			return
		}
		c.text.mask(from+i, from+i+len(lp))
		from += i + len(lp)
	}
}

// maskNames blanks the catalog's item names, longest first: what a name
// holds (a descriptor that is also an ingredient) is not a claim.
func (c *checker) maskNames() {
	var names []string
	for _, it := range c.room.Items {
		names = append(names, it.NameZH, it.NameEN)
	}
	slices.SortStableFunc(names, func(a, b string) int { return len(b) - len(a) })
	for _, n := range names {
		c.maskPhrase(n)
	}
}

var (
	latinWordRE = regexp.MustCompile(`[A-Za-z][A-Za-z'’]*`)
	hanRunRE    = regexp.MustCompile(`\p{Han}[\p{Han}，、]*\p{Han}`)
)

// plainLatin are Latin words a Chinese reply uses as Chinese: units,
// sizes, currencies.
var plainLatin = map[string]bool{"cm": true, "kg": true, "ml": true, "g": true, "mah": true, "spf": true, "pa": true, "ok": true,
	"s": true, "m": true, "l": true, "xl": true, "xs": true, "xxl": true, "xxxl": true, "yuan": true, "rmb": true, "cny": true,
	"vip": true, "app": true, "vc": true, "h": true, "x": true, "d": true, "pp": true}

// language finds a reply, or a run of it, in a language the viewer did
// not write.
func (c *checker) language() {
	s := c.text.String()
	if c.q.Lang == LangEN {
		// A ship-from place the catalog writes only in Chinese is said as
		// written, as an item's Chinese name is.
		places := map[string]bool{}
		for _, it := range c.room.Items {
			if it.Delivery != nil && it.Delivery.ShipFrom != "" {
				places[it.Delivery.ShipFrom] = true
			}
		}
		var runs [][]int
		for _, r := range hanRunRE.FindAllStringIndex(s, -1) {
			if !places[s[r[0]:r[1]]] {
				runs = append(runs, r)
			}
		}
		if runs != nil {
			c.add(UnbackedLanguage, runs[0][0], runs[len(runs)-1][1], "Chinese in a reply to a viewer who wrote English")
		}
		return
	}
	if c.q.Lang != LangZH {
		return
	}
	known := map[string]bool{}
	for _, it := range c.room.Items {
		for _, v := range it.Variants {
			known[strings.ToLower(v.Name)] = true
		}
	}
	words := latinWordRE.FindAllStringIndex(s, -1)
	var foreign [][]int
	for _, w := range words {
		word := strings.ToLower(s[w[0]:w[1]])
		if !plainLatin[word] && !known[word] {
			foreign = append(foreign, w)
		}
	}
	if len(foreign) == 0 {
		return
	}
	if !strings.ContainsFunc(s, isHan) {
		if len(foreign) >= 2 {
			c.add(UnbackedLanguage, foreign[0][0], foreign[len(foreign)-1][1], "English in a reply to a viewer who wrote Chinese")
		}
		return
	}
	// A whole English sentence inside a Chinese reply: four or more
	// foreign words with no Chinese between them.
	start := 0
	for i := 1; i <= len(foreign); i++ {
		if i < len(foreign) && !strings.ContainsFunc(s[foreign[i-1][1]:foreign[i][0]], isHan) {
			continue
		}
		if i-start >= 4 {
			c.add(UnbackedLanguage, foreign[start][0], foreign[i-1][1], "English in a reply to a viewer who wrote Chinese")
		}
		start = i
	}
}

// kindWord is a product kind as replies name it.
type kindWord struct {
	word string // as written in a reply
	en   string // the kind's English name
	zh   bool
}

// kindWords are the product kinds of every category, in both languages,
// with the short forms viewers use, and kinds no room sells that models
// invent; longest first.
func kindWords() []kindWord {
	var out []kindWord
	for _, cat := range Categories() {
		for _, k := range productKinds(cat) {
			out = append(out, kindWord{k.en, k.en, false}, kindWord{k.zh, k.en, true})
			if s := shortKind(k.zh); s != "" {
				out = append(out, kindWord{s, k.en, true})
			}
		}
	}
	for _, k := range []bilingual{{"Perfume", "香水"}, {"Foundation", "粉底液"}, {"Eye Cream", "眼霜"}, {"Face Mask", "面膜"},
		{"Shampoo", "洗发水"}, {"Body Wash", "沐浴露"}, {"Sneakers", "运动鞋"}, {"Phone Case", "手机壳"}} {
		out = append(out, kindWord{k.en, k.en, false}, kindWord{k.zh, k.en, true})
	}
	slices.SortStableFunc(out, func(a, b kindWord) int { return len(b.word) - len(a.word) })
	return out
}

// brandRunes are the characters the room's Chinese brand names are made
// of: two or more of them before a kind make a brand name.
const brandRunes = "雅诗兰黛珀莱欧菲米悦澜清韵禾木森沐星辰晴岚素颜花漾初见暖阳小鹿橙意"

// itemNames finds items that are not in the catalog: a kind the room does
// not sell, or a brand or Title-Case name that is no catalog name.
func (c *checker) itemNames() {
	viewer := strings.ToLower(c.q.Text)
	var descs []bilingual
	descs = append(descs, descriptors()...)
	descs = append(descs, moreDescriptors()...)
	for _, k := range kindWords() {
		s := c.text.String()
		var spans [][2]int
		if k.zh {
			for from := 0; ; {
				i := strings.Index(s[from:], k.word)
				if i < 0 {
					break
				}
				spans = append(spans, [2]int{from + i, from + i + len(k.word)})
				from += i + len(k.word)
			}
		} else {
			for _, w := range []string{k.word, k.word + "s", k.word + "es"} {
				spans = append(spans, c.text.find(w)...)
			}
		}
		for _, sp := range spans {
			i, j := sp[0], sp[1]
			if !c.sells(k) && !strings.Contains(viewer, strings.ToLower(k.word)) {
				c.add(UnbackedItemName, i, j, "names the kind %q, and this room sells none", strings.ToLower(k.en))
				c.text.mask(i, j)
				continue
			}
			c.checkNamePrefix(i, j, k, descs, viewer)
			c.text.mask(i, j)
		}
	}
}

// sells reports whether an item of the room is of the kind: by its kind
// alias, or by a name that holds the kind (a catalog's own items need
// not have the generator's aliases).
func (c *checker) sells(k kindWord) bool {
	for _, it := range c.room.Items {
		if strings.Contains(it.NameZH, k.word) || strings.Contains(strings.ToLower(it.NameEN), strings.ToLower(k.en)) {
			return true
		}
		for _, a := range it.Aliases {
			if strings.EqualFold(a, k.en) || strings.Contains(a, k.word) {
				return true
			}
		}
	}
	return false
}

// checkNamePrefix reads the words before a kind that make it a name: a
// descriptor and, before that (zh), a brand of two or more of the brand
// characters. A brand name (zh) or a Title-Case name (en) that is part of
// no catalog name is flagged. The words are masked either way: they name
// an item and claim nothing about it ("Silk Serum" says no material).
func (c *checker) checkNamePrefix(i, j int, k kindWord, descs []bilingual, viewer string) {
	s := c.text.String()
	start, named := i, false
	if k.zh {
		for _, d := range descs {
			if strings.HasSuffix(s[:i], d.zh) {
				start = i - len(d.zh)
				break
			}
		}
		b := start
		for b > 0 && start-b < 4*len("字") {
			r, size := utf8.DecodeLastRuneInString(s[:b])
			if !strings.ContainsRune(brandRunes, r) {
				break
			}
			b -= size
		}
		if utf8.RuneCountInString(s[b:start]) >= 2 {
			start, named = b, true
		}
	} else {
		before := strings.TrimRight(s[:i], " ")
		lower := strings.ToLower(before)
		for _, d := range descs {
			w := strings.ToLower(d.en)
			if len(before) < len(s[:i]) && strings.HasSuffix(lower, w) && (len(lower) == len(w) || !isWordRune(rune(lower[len(lower)-len(w)-1]))) {
				start = len(before) - len(w)
				first, _ := utf8.DecodeRuneInString(s[i:])
				named = unicode.IsUpper(rune(s[start])) && unicode.IsUpper(first)
				break
			}
		}
	}
	defer c.text.mask(start, i)
	if !named {
		return
	}
	name := strings.ToLower(s[start:j])
	if strings.Contains(viewer, name) {
		return
	}
	for _, it := range c.room.Items {
		if strings.Contains(strings.ToLower(it.NameZH), name) || strings.Contains(strings.ToLower(it.NameEN), name) {
			return
		}
	}
	c.add(UnbackedItemName, start, j, "no item of this room is called that")
}

const monthWords = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?`

// dateREs find dates as replies write them, each with the groups year,
// month, day (a missing year is empty).
var dateREs = []struct {
	re                 *regexp.Regexp
	year, month, day   int
	monthIsWord, isISO bool
}{
	{re: regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]`), year: 1, month: 2, day: 3},
	{re: regexp.MustCompile(`(?i)\b(` + monthWords + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(\d{4})\b)?`), year: 3, month: 1, day: 2, monthIsWord: true},
	{re: regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(` + monthWords + `)\b\.?(?:,?\s*(\d{4})\b)?`), year: 3, month: 2, day: 1, monthIsWord: true},
	{re: isoDateRE, year: 1, month: 2, day: 3},
}

// dates checks the dates a reply states against those the results state.
func (c *checker) dates() {
	for _, d := range dateREs {
		for _, m := range d.re.FindAllStringSubmatchIndex(c.text.String(), -1) {
			s := c.text.String()
			group := func(g int) string {
				if m[2*g] < 0 {
					return ""
				}
				return s[m[2*g]:m[2*g+1]]
			}
			y, _ := strconv.Atoi(group(d.year))
			day, _ := strconv.Atoi(group(d.day))
			month, _ := strconv.Atoi(group(d.month))
			if d.monthIsWord {
				month = 1 + slices.IndexFunc(monthNames(), func(n string) bool { return strings.HasPrefix(strings.ToLower(group(d.month)), n) })
			}
			backed := slices.ContainsFunc(c.ev.dates, func(x date) bool { return x.month == month && x.day == day && (y == 0 || x.year == y) })
			if !backed {
				c.add(UnbackedDuration, m[0], m[1], "%s", c.datesWhy())
			}
			c.text.mask(m[0], m[1])
		}
	}
}

func monthNames() []string {
	return []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
}

func (c *checker) datesWhy() string {
	if len(c.ev.dates) == 0 {
		return "the tools gave no date"
	}
	var said []string
	for _, d := range c.ev.dates {
		said = append(said, fmt.Sprintf("%04d-%02d-%02d", d.year, d.month, d.day))
	}
	return "the tools gave " + strings.Join(said, ", ")
}

var linkRE = regexp.MustCompile(`(?i)(\d{1,3}|[一二三四五六七八九十]{1,3})\s*号\s*(?:链接|link)|\blink\s*(?:#|no\.?\s*|number\s*)?(\d{1,3})\b|链接\s*(\d{1,3})(?:\s*号)?|第\s*(\d{1,3}|[一二三四五六七八九十]{1,3})\s*(?:个|条)?\s*链接`)

// links checks link numbers against the items the turn touched.
func (c *checker) links() {
	for _, m := range linkRE.FindAllStringSubmatchIndex(c.text.String(), -1) {
		s := c.text.String()
		var num string
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 {
				num = s[m[g]:m[g+1]]
				break
			}
		}
		n, ok := parseNumber(num)
		if !ok {
			continue
		}
		if u, _ := unitAfter(s[m[1]:], c.ev.units); u == classMoney {
			continue // "链接199元" is a price
		}
		if !c.ev.links[int(n)] {
			owner := ""
			for _, it := range c.room.Items {
				if k, ok := itemLink(it); ok && k == int(n) {
					owner = it.NameEN
				}
			}
			if owner == "" {
				c.add(UnbackedLink, m[0], m[1], "the room has no link %d", int(n))
			} else {
				c.add(UnbackedLink, m[0], m[1], "link %d is %s, which no call of this turn looked up", int(n), owner)
			}
		}
		c.text.mask(m[0], m[1])
	}
}

func itemLink(it Item) (int, bool) {
	if it.Link > 0 {
		return it.Link, true
	}
	for _, a := range it.Aliases {
		if n, ok := linkNumber(a); ok {
			return n, true
		}
	}
	return 0, false
}

// linkNumber reads an alias "3号链接" or "link 3".
func linkNumber(alias string) (int, bool) {
	a := strings.TrimSpace(strings.ToLower(alias))
	var digits string
	switch {
	case strings.HasSuffix(a, "号链接"):
		digits = strings.TrimSuffix(a, "号链接")
	case strings.HasPrefix(a, "link "):
		digits = strings.TrimPrefix(a, "link ")
	default:
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(digits))
	return n, err == nil
}

// Unit classes of a number in a reply.
const (
	classBare     = ""
	classMoney    = "money"
	classDiscount = "discount"
	classPercent  = "percent"
	classDay      = "day"
	classHour     = "hour"
	classWeek     = "week"
	classMonth    = "month"
	classYear     = "year"
	classMinute   = "minute"
	classDate     = "date"
	classCM       = "cm"
	classKG       = "kg"
	classJin      = "jin"
	classMetre    = "metre"
	classAttr     = "attr"
	classSize     = "size"
	classQty      = "qty"
	classStock    = "stock"
	classOrdinal  = "ordinal"
)

func isDuration(class string) bool {
	switch class {
	case classDay, classHour, classWeek, classMonth, classYear, classMinute:
		return true
	}
	return false
}

// unit is a word after a number and the class it gives the number.
type unit struct {
	word, class string
}

// units are tried longest first; Latin ones must end at a word boundary.
func units() []unit {
	out := []unit{
		{"块钱", classMoney}, {"元钱", classMoney}, {"元", classMoney}, {"圆", classMoney}, {"块", classMoney},
		{"yuan", classMoney}, {"rmb", classMoney}, {"cny", classMoney}, {"kuai", classMoney},
		{"折", classDiscount}, {"%", classPercent}, {"％", classPercent}, {"percent", classPercent},
		{"个工作日", classDay}, {"工作日", classDay}, {"天", classDay}, {"日", classDay},
		{"business days", classDay}, {"business day", classDay}, {"working days", classDay}, {"days", classDay}, {"day", classDay},
		{"个小时", classHour}, {"小时", classHour}, {"钟头", classHour}, {"hours", classHour}, {"hour", classHour}, {"hrs", classHour}, {"hr", classHour}, {"h", classHour},
		{"个星期", classWeek}, {"星期", classWeek}, {"周", classWeek}, {"weeks", classWeek}, {"week", classWeek},
		{"个月", classMonth}, {"months", classMonth}, {"month", classMonth},
		{"年", classYear}, {"years", classYear}, {"year", classYear}, {"yrs", classYear},
		{"分钟", classMinute}, {"minutes", classMinute}, {"minute", classMinute}, {"mins", classMinute}, {"min", classMinute},
		{"月", classDate}, {"点", classDate}, {"o'clock", classDate}, {"am", classDate}, {"pm", classDate},
		{"厘米", classCM}, {"公分", classCM}, {"cm", classCM}, {"米", classMetre}, {"m", classMetre},
		{"公斤", classKG}, {"千克", classKG}, {"kgs", classKG}, {"kg", classKG}, {"斤", classJin},
		{"毫升", classAttr}, {"ml", classAttr}, {"升", classAttr}, {"litres", classAttr}, {"liters", classAttr}, {"litre", classAttr},
		{"liter", classAttr}, {"l", classAttr}, {"岁", classAttr}, {"毫安", classAttr}, {"mah", classAttr}, {"克", classAttr}, {"g", classAttr},
		{"瓦", classAttr}, {"w", classAttr}, {"毫米", classAttr}, {"mm", classAttr}, {"英寸", classAttr}, {"寸", classAttr},
		{"inches", classAttr}, {"inch", classAttr}, {"x", classAttr}, {"×", classAttr}, {"*", classAttr},
		{"码", classSize},
		{"件", classQty}, {"个", classQty}, {"份", classQty}, {"套", classQty}, {"支", classQty}, {"瓶", classQty}, {"盒", classQty},
		{"包", classQty}, {"袋", classQty}, {"只", classQty}, {"双", classQty}, {"条", classQty}, {"张", classQty}, {"罐", classQty},
		{"pcs", classQty}, {"pieces", classQty}, {"piece", classQty}, {"units", classQty}, {"unit", classQty}, {"items", classQty},
		{"bottles", classQty}, {"boxes", classQty}, {"packs", classQty},
		{"left", classStock}, {"in stock", classStock},
	}
	slices.SortStableFunc(out, func(a, b unit) int { return len(b.word) - len(a.word) })
	return out
}

// Words before a number that say what it counts.
var (
	moneyBefore   = []string{"满", "减", "差", "省", "券后", "到手", "只要", "仅需", "只需", "原价", "现价", "售价", "价格", "价", "运费", "优惠", "便宜", "立减", "补贴", "¥", "￥", "rmb", "cny", "from", "only", "just", "pay", "costs", "cost", "priced at", "price", "for"}
	stockBefore   = []string{"仅剩", "只剩", "还剩", "剩下", "剩余", "剩", "库存", "还有"}
	measureBefore = []string{"身高", "体重"}
)

// numberMention is a number in a reply with the unit that classes it.
type numberMention struct {
	start, end int // the number and its unit
	value      float64
	class      string
}

var numeralRE = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+`)

// scanNumbers finds the numbers of s with their classes. Digits inside a
// word ("SPF50", "Kiki2024") are not numbers; Chinese numerals count only
// with a unit ("九十九元", "七天").
func scanNumbers(s string, us []unit) []numberMention {
	var out []numberMention
	lastEnd := 0
	for _, m := range numeralRE.FindAllStringIndex(s, -1) {
		i, j := m[0], m[1]
		if i < lastEnd {
			continue // read with the number before ("1米65", "9块9")
		}
		num := s[i:j]
		zh := num[0] > '9'
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		if !zh && i > 0 && (isWordRune(before) && before != '-' || before == '.') {
			continue
		}
		if zh && i > 0 && before == '第' {
			continue
		}
		v, ok := parseNumber(num)
		if !ok {
			continue
		}
		n := numberMention{start: i, end: j, value: v}
		rest := s[j:]
		// A Latin word straight after the digits is a unit or part of a
		// word ("2XL", "3D").
		if !zh && rest != "" && isASCIILetter(rest[0]) {
			k := 0
			for k < len(rest) && isASCIILetter(rest[k]) {
				k++
			}
			word := strings.ToLower(rest[:k])
			if word == "xl" || word == "xxl" {
				continue // a size, read by sizes
			}
			if !slices.ContainsFunc(us, func(u unit) bool { return u.word == word }) {
				continue
			}
		}
		// A range "3-5天" takes the unit of its end, which is read again
		// as a number of its own.
		unitText := rest
		trimmed := strings.TrimLeft(rest, " ")
		if r, size := utf8.DecodeRuneInString(trimmed); r == '-' || r == '~' || r == '到' || r == '至' {
			if k := numeralRE.FindStringIndex(trimmed[size:]); k != nil && k[0] <= 1 {
				unitText = trimmed[size+k[1]:]
			}
		}
		if strings.HasPrefix(rest, "块") {
			// "九块九", "9块9": 9.9 yuan.
			tail := rest[len("块"):]
			if r, size := utf8.DecodeRuneInString(tail); strings.ContainsRune("一二三四五六七八九123456789", r) {
				after, _ := utf8.DecodeRuneInString(tail[size:])
				if !unicode.IsDigit(after) && !strings.ContainsRune("零一二三四五六七八九十百千万", after) {
					d, _ := parseNumber(string(r))
					n.value += d / 10
					n.class, n.end = classMoney, j+len("块")+size
					out, lastEnd = append(out, n), n.end
					continue
				}
			}
		}
		if !zh && strings.HasPrefix(rest, ":") && len(rest) >= 3 && isDigit(rest[1]) && isDigit(rest[2]) {
			n.class, n.end = classDate, j+3
			out, lastEnd = append(out, n), n.end
			continue
		}
		u, width := unitAfter(unitText, us)
		n.class = u
		if width > 0 && unitText == rest {
			n.end = j + width
		}
		switch {
		case zh && u == classBare:
			continue
		case zh && v == 1 && (isDuration(u) || u == classMoney && strings.HasPrefix(rest, "块") && !strings.HasPrefix(rest, "块钱")):
			continue // "一天到晚", "一年四季", "一块去": idioms, not facts
		case u == classMetre && v < 3:
			n.class, n.value = classCM, v*100
			if k := twoDigitsRE.FindString(s[n.end:]); k != "" && !strings.Contains(num, ".") {
				cm, _ := strconv.Atoi(k)
				n.value, n.end = v*100+float64(cm), n.end+2
			}
		case u == classMetre:
			continue
		case u == classYear && v >= 1900:
			n.class = classDate
		case u == classDay && strings.HasSuffix(strings.TrimRight(s[:i], " "), "月"):
			n.class = classDate
		}
		if n.class == classBare || n.class == classQty {
			n.class = classOf(s[:i], n.class)
		}
		if n.class == classPercent {
			n.class = percentClass(s[:i], s[n.end:])
			if n.class == classBare {
				continue
			}
		}
		out, lastEnd = append(out, n), n.end
	}
	return out
}

var twoDigitsRE = regexp.MustCompile(`^\d{2}`)

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// unitAfter reads the unit at the start of rest (after a space or a
// hyphen): its class and how many bytes of rest it takes.
func unitAfter(rest string, us []unit) (string, int) {
	skip := len(rest) - len(strings.TrimLeft(rest, " "))
	if skip > 2 {
		return classBare, 0
	}
	r := rest[skip:]
	if strings.HasPrefix(r, "-") {
		r, skip = r[1:], skip+1
	}
	lower := strings.ToLower(r)
	for _, u := range us {
		if !strings.HasPrefix(lower, u.word) {
			continue
		}
		if isASCIILetter(u.word[len(u.word)-1]) && len(lower) > len(u.word) && isASCIILetter(lower[len(u.word)]) {
			continue // "min" of "minimum"
		}
		return u.class, skip + len(u.word)
	}
	return classBare, 0
}

// classOf reads what a bare number or a count is from the words before it.
func classOf(before, class string) string {
	b := strings.ToLower(strings.TrimRight(before, " "))
	for _, w := range stockBefore {
		if strings.HasSuffix(b, w) && (class == classQty || w != "还有") {
			return classStock
		}
	}
	if class == classQty {
		return class
	}
	for _, w := range measureBefore {
		if strings.HasSuffix(b, w) {
			return classCM // height or weight, checked against the viewer's
		}
	}
	for _, w := range moneyBefore {
		if strings.HasSuffix(b, w) && !endsInLatinWord(b, w) {
			return classMoney
		}
	}
	if strings.HasSuffix(b, "第") {
		return classOrdinal
	}
	return class
}

// endsInLatinWord reports whether the Latin suffix w of b is a word of
// its own ("for", not "platform").
func endsInLatinWord(b, w string) bool {
	if !isASCIILetter(w[0]) {
		return false
	}
	k := len(b) - len(w)
	return k > 0 && isASCIILetter(b[k-1])
}

// percentClass says whether "N%" is a discount: "20% off", "优惠20%".
func percentClass(before, after string) string {
	a := strings.ToLower(strings.TrimLeft(after, " "))
	for _, w := range []string{"off", "discount", "折扣", "的优惠", "优惠"} {
		if strings.HasPrefix(a, w) {
			return classDiscount
		}
	}
	b := strings.TrimRight(before, " ")
	for _, w := range []string{"优惠", "便宜", "省", "降价", "减", "立减", "打"} {
		if strings.HasSuffix(b, w) {
			return classDiscount
		}
	}
	return classBare
}

// parseNumber reads Arabic ("1,299.50") or Chinese ("一百九十九",
// "两百", "八五") numerals.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	if s[0] <= '9' {
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		return f, err == nil
	}
	digit := func(r rune) (int, bool) {
		i := strings.IndexRune("零一二三四五六七八九", r)
		switch {
		case i >= 0:
			return i / 3, true
		case r == '〇':
			return 0, true
		case r == '两':
			return 2, true
		}
		return 0, false
	}
	if !strings.ContainsAny(s, "十百千万") {
		n := 0
		for _, r := range s {
			d, ok := digit(r)
			if !ok {
				return 0, false
			}
			n = n*10 + d
		}
		return float64(n), true
	}
	total, section, num := 0, 0, 0
	prevDigit := false
	for _, r := range s {
		if d, ok := digit(r); ok {
			if prevDigit && num != 0 {
				return 0, false // "三四天": a range, not a number
			}
			num, prevDigit = d, true
			continue
		}
		prevDigit = false
		switch r {
		case '十', '百', '千':
			mult := map[rune]int{'十': 10, '百': 100, '千': 1000}[r]
			if num == 0 && r == '十' {
				num = 1
			}
			section += num * mult
			num = 0
		case '万':
			total += (section + num) * 10000
			section, num = 0, 0
		}
	}
	return float64(total + section + num), true
}

// numberTokens are the values of the numbers in s.
func numberTokens(s string) []float64 {
	var out []float64
	for _, m := range numeralRE.FindAllString(s, -1) {
		if v, ok := parseNumber(m); ok {
			out = append(out, v)
		}
	}
	return out
}

var quantityAskRE = regexp.MustCompile(`(?i)(?:买|拍|要|buy|get|order|buying)\s*(\d{1,2}|[两二三四五六七八九十])\s*(?:件|个|支|瓶|盒|套|份|pcs|pieces|of)?`)

// viewerQuantity is the number of pieces the viewer asks about.
func viewerQuantity(text string) (float64, bool) {
	m := quantityAskRE.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	return parseNumber(m[1])
}

// numbers checks every number of the reply against what backs its class.
func (c *checker) numbers() {
	ev := c.ev
	for _, n := range scanNumbers(c.text.String(), ev.units) {
		show := strconv.FormatFloat(n.value, 'f', -1, 64)
		switch n.class {
		case classMoney:
			if !near(ev.money, n.value) {
				c.add(UnbackedAmount, n.start, n.end, "no tool result of this turn gives %s yuan", show)
				c.found[len(c.found)-1].yuan = n.value
			}
		case classBare:
			if !near(ev.anyNumber(), n.value) {
				c.add(UnbackedAmount, n.start, n.end, "no tool result of this turn gives the number %s", show)
				c.found[len(c.found)-1].yuan = n.value
			}
		case classDiscount:
			off := n.value
			if !strings.ContainsAny(c.text.String()[n.start:n.end], "%％") && !strings.Contains(strings.ToLower(c.text.String()[n.start:n.end]), "percent") {
				off = 100 - n.value*10 // 8折, 8.5折
				if n.value >= 10 {
					off = 100 - n.value // 85折
				}
			}
			if !near(ev.discounts, off) {
				c.add(UnbackedDiscount, n.start, n.end, "no promotion of this turn's items takes %s%% off", strconv.FormatFloat(off, 'f', -1, 64))
			}
		case classStock:
			switch {
			case !ev.checked:
				c.add(UnbackedStockCount, n.start, n.end, "no stock check of this turn says how many are left")
			case !near(ev.stockUnits(), n.value):
				c.add(UnbackedStockCount, n.start, n.end, "the stock check of this turn does not say %s", show)
			}
		case classDay, classHour, classWeek, classMonth, classYear, classMinute:
			if !near(ev.durations[n.class], n.value) {
				c.add(UnbackedDuration, n.start, n.end, "no tool result of this turn gives %s %s", show, n.class+"s")
			}
		case classDate:
			c.add(UnbackedDuration, n.start, n.end, "the tools gave no date or time")
		case classCM, classKG, classJin:
			backed := slices.Concat(ev.viewer, ev.chartNums, ev.attrNums)
			if n.class == classKG {
				for _, v := range ev.viewer {
					backed = append(backed, v/2) // the viewer said 斤
				}
			}
			if n.class == classJin {
				for _, v := range slices.Concat(ev.viewer, ev.chartNums) {
					backed = append(backed, 2*v)
				}
			}
			if !near(backed, n.value) {
				c.add(UnbackedSize, n.start, n.end, "neither the viewer nor the size chart gave %s", show)
			}
		case classAttr:
			if !near(ev.attrNums, n.value) {
				c.add(UnbackedDuration, n.start, n.end, "no attribute of this turn's items is %s", show)
			}
		case classSize:
			if !ev.sizes[show] {
				c.add(UnbackedSize, n.start, n.end, "no item this turn looked up comes in size %s", show)
			}
		}
		c.text.mask(n.start, n.end)
	}
}

const sizeTok = `XXXL|XXL|XL|XXS|XS|[2-6]XL|S|M|L`

var sizeREs = []*regexp.Regexp{
	regexp.MustCompile(`(?:[Ss]ize|SIZE|尺码|码数)\s*[:：]?\s*(` + sizeTok + `)(?:[^A-Za-z0-9]|$)`),
	regexp.MustCompile(`(?:^|[^A-Za-z0-9])(` + sizeTok + `)\s*(?:码|号)`),
	regexp.MustCompile(`(?:建议|推荐|适合|穿|选|拍)\s*(?:您|你)?\s*(?:穿|选|拍)?\s*(` + sizeTok + `)(?:[^A-Za-z0-9]|$)`),
	regexp.MustCompile(`(?i:recommend|suggest|take|get|go with|go for|choose|pick)\s+(?:a\s+|an\s+|the\s+)?(?:size\s+)?(` + sizeTok + `)(?:[^A-Za-z0-9]|$)`),
}

var (
	viewerHeightRE = regexp.MustCompile(`(?i)(1\d{2})\s*(?:cm|厘米|公分)|身高\s*(1\d{2})|1米(\d{2})|1\.(\d{2})\s*(?:m|米)`)
	viewerWeightRE = regexp.MustCompile(`(?i)(\d{2,3}(?:\.\d)?)\s*(kg|公斤|千克|斤)|体重\s*(\d{2,3}(?:\.\d)?)`)
)

// viewerMeasures reads the viewer's height (cm) and weight (kg), 0 when
// unsaid.
func viewerMeasures(text string) (height, weight float64) {
	if m := viewerHeightRE.FindStringSubmatch(text); m != nil {
		for g, v := range m[1:] {
			if v == "" {
				continue
			}
			height, _ = strconv.ParseFloat(v, 64)
			if g >= 2 {
				height += 100
			}
			break
		}
	}
	if m := viewerWeightRE.FindStringSubmatch(text); m != nil {
		switch {
		case m[1] != "":
			weight, _ = strconv.ParseFloat(m[1], 64)
			if m[2] == "斤" {
				weight /= 2
			}
		default:
			weight, _ = strconv.ParseFloat(m[3], 64)
			if weight > 100 { // a weight without a unit over 100 is in 斤
				weight /= 2
			}
		}
	}
	return height, weight
}

// sizes checks the sizes a reply names, and its size advice.
func (c *checker) sizes() {
	type named struct {
		size string
		i, j int
	}
	var all []named
	s := c.text.String()
	for _, re := range sizeREs {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			n := named{s[m[2]:m[3]], m[2], m[3]}
			if !slices.ContainsFunc(all, func(x named) bool { return x.i == n.i }) {
				all = append(all, n)
			}
		}
	}
	distinct := map[string]bool{}
	for _, n := range all {
		distinct[n.size] = true
	}
	h, w := viewerMeasures(c.q.Text)
	fits := map[string]bool{}
	for _, chart := range c.ev.charts {
		for _, row := range chart {
			if (h == 0 || h >= float64(row.MinHeight) && h <= float64(row.MaxHeight)) && (w == 0 || w >= float64(row.MinWeight) && w <= float64(row.MaxWeight)) {
				fits[row.Size] = true
				break
			}
		}
	}
	advice := (h > 0 || w > 0) && len(c.ev.charts) > 0
	for _, n := range all {
		switch {
		case !c.ev.sizes[n.size]:
			c.add(UnbackedSize, n.i, n.j, "no item this turn looked up comes in size %s", n.size)
		case advice && len(distinct) == 1 && !fits[n.size]:
			c.add(UnbackedSize, n.i, n.j, "the size chart gives %s for %s", strings.Join(sortedKeys(fits), " or "), measuresText(h, w))
		}
		c.text.mask(n.i, n.j)
	}
}

func measuresText(h, w float64) string {
	var parts []string
	if h > 0 {
		parts = append(parts, strconv.FormatFloat(h, 'f', -1, 64)+"cm")
	}
	if w > 0 {
		parts = append(parts, strconv.FormatFloat(w, 'f', -1, 64)+"kg")
	}
	return strings.Join(parts, " and ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"no size"}
	}
	return out
}

// Stock states, tried in this order so that "即将售罄" is low, not sold
// out, and "没有货" is sold out, not in stock.
const (
	stockLow     = "low"
	stockSoldOut = "sold out"
	stockIn      = "in stock"
	stockPlenty  = "plenty"
)

func stockPhrases() []struct {
	state   string
	phrases []string
} {
	return []struct {
		state   string
		phrases []string
	}{
		{stockLow, []string{"库存紧张", "库存不多", "所剩无几", "最后几件", "即将售罄", "快没了", "手慢无", "快抢", "仅剩", "只剩",
			"stock is limited", "limited stock", "only a few", "few left", "almost gone", "running low", "last few", "almost sold out", "selling out"}},
		{stockSoldOut, []string{"售罄", "卖完", "卖光", "抢光", "没有货", "没货", "无货", "缺货", "断货", "没有库存", "无库存",
			"sold out", "out of stock", "not in stock", "no stock", "none left", "no longer available"}},
		{stockPlenty, []string{"库存充足", "货源充足", "plenty"}},
		{stockIn, []string{"有货", "现货", "有库存", "不缺货", "in stock", "still available"}},
	}
}

// clause returns the bounds of the clause of s around [i, j).
func clause(s string, i, j int) (int, int) {
	isSep := func(k int) bool {
		r, _ := utf8.DecodeRuneInString(s[k:])
		if strings.ContainsRune("，。！？；!?;\n", r) {
			return true
		}
		if r == ',' || r == '.' {
			next, _ := utf8.DecodeRuneInString(s[k+1:])
			return k+1 >= len(s) || !unicode.IsDigit(next)
		}
		return false
	}
	a := i
	for a > 0 {
		_, size := utf8.DecodeLastRuneInString(s[:a])
		if isSep(a - size) {
			break
		}
		a -= size
	}
	b := j
	for b < len(s) && !isSep(b) {
		_, size := utf8.DecodeRuneInString(s[b:])
		b += size
	}
	return a, b
}

// findPhrase finds p in s: as a substring for Chinese, as whole words
// (ignoring case) for Latin.
func findPhrase(s, p string) [][2]int {
	if p == "" {
		return nil
	}
	if isASCIILetter(p[0]) {
		return tokenIndexes(s, p)
	}
	var out [][2]int
	for from := 0; ; {
		i := strings.Index(s[from:], p)
		if i < 0 {
			return out
		}
		out = append(out, [2]int{from + i, from + i + len(p)})
		from += i + len(p)
	}
}

var couponWords = []string{"券", "coupon", "优惠"}

// stockStates checks "in stock", "sold out" and "only a few left"
// against the turn's stock checks.
func (c *checker) stockStates() {
	for _, group := range stockPhrases() {
		for _, p := range group.phrases {
			for _, m := range c.text.find(p) {
				a, b := clause(c.text.orig, m[0], m[1])
				cl := c.text.orig[a:b]
				c.text.mask(m[0], m[1])
				if containsAny(strings.ToLower(cl), couponWords) && group.state != stockIn {
					continue // "券已抢光" is about coupons
				}
				c.checkStock(group.state, m[0], m[1], cl)
			}
		}
	}
}

// names reports whether a clause names a variant: a short one ("M",
// "XL") only as written, a longer one in any case.
func names(cl, variant string) bool {
	if len(variant) > 2 {
		return len(tokenIndexes(cl, variant)) > 0
	}
	for _, m := range tokenIndexes(cl, variant) {
		if cl[m[0]:m[1]] == variant {
			return true
		}
	}
	return false
}

func (c *checker) checkStock(state string, i, j int, cl string) {
	ev := c.ev
	if !ev.checked {
		c.add(UnbackedStockState, i, j, "no stock check of this turn says it is %s", state)
		return
	}
	var all, named []stockEntry
	for _, st := range ev.stock {
		all = append(all, st)
		if st.variant != "" && !strings.EqualFold(st.variant, "standard") && names(cl, st.variant) {
			named = append(named, st)
		}
	}
	if named == nil {
		// "Sorry, it is sold out" of the colour the viewer asked for
		// ("the earbuds in white"): the clause speaks of that variant.
		for _, st := range ev.stock {
			if st.variant != "" && !strings.EqualFold(st.variant, "standard") && names(c.q.Text, st.variant) {
				named = append(named, st)
			}
		}
	}
	if named == nil {
		for _, it := range ev.items {
			for _, v := range it.Variants {
				if v.Name != "standard" && names(cl, v.Name) {
					c.add(UnbackedStockState, i, j, "the stock check of this turn did not cover %s", v.Name)
					return
				}
			}
		}
		named = all
	}
	if ok, said := stockBacks(named, state); !ok {
		c.add(UnbackedStockState, i, j, "the stock check of this turn says %s", said)
	}
}

// stockBacks reports whether the stock entries a claim is about back it,
// and what they say. Counts are summed, as the room's rule for urgency
// is (Narration: under lowStock units, none left included); entries a
// catalog states only a state for are read by the state.
func stockBacks(es []stockEntry, state string) (bool, string) {
	total, counted := 0, true
	var said []string
	for _, e := range es {
		total += e.units
		counted = counted && e.counted
		switch {
		case e.counted:
			said = append(said, fmt.Sprintf("%s %d", e.variant, e.units))
		case e.state != "":
			said = append(said, e.variant+" "+e.state)
		default:
			said = append(said, e.variant+" "+NotStated)
		}
	}
	if counted {
		switch state {
		case stockLow:
			return total < lowStock, fmt.Sprintf("%d left", total)
		case stockSoldOut:
			return total == 0, fmt.Sprintf("%d left", total)
		case stockIn:
			return total > 0, fmt.Sprintf("%d left", total)
		}
		return total >= lowStock, fmt.Sprintf("%d left", total)
	}
	is := func(e stockEntry) (in, out, low, plenty bool) {
		if e.counted {
			return e.units > 0, e.units == 0, e.units < lowStock, e.units >= lowStock
		}
		return e.state == "in_stock" || e.state == "low", e.state == "sold_out", e.state == "low" || e.state == "sold_out", e.state == "in_stock"
	}
	anyIn, allOut, allLow, allPlenty := false, len(es) > 0, len(es) > 0, len(es) > 0
	for _, e := range es {
		in, out, low, plenty := is(e)
		anyIn, allOut, allLow, allPlenty = anyIn || in, allOut && out, allLow && low, allPlenty && plenty
	}
	ok := map[string]bool{stockIn: anyIn, stockSoldOut: allOut, stockLow: allLow, stockPlenty: allPlenty}[state]
	return ok, strings.Join(said, ", ")
}

var (
	pinRE        = regexp.MustCompile(`(?i)置顶|(?:已经?|我)(?:为您|帮您|给您|帮你|给你|为你)?(?:把)?(?:链接)?(?:发|挂|上|弹|推|放)(?:了|好|出)?(?:链接|小黄车)|链接(?:已经?|我)?(?:帮您|为您|给您|帮你|给你)?(?:发|挂|上|弹|推|放)(?:了|好|出|上来)|\bpinned\b|\bpin(?:ned)? (?:it|the link)|\b(?:sent|posted|dropped|put up|shared) (?:you )?(?:the |a )?link|\blink is (?:up|pinned|live)`)
	couponSentRE = regexp.MustCompile(`(?i)(?:已经?|我)(?:为您|帮您|给您|帮你|给你|为你)?(?:发放|发送|派发|发|送)(?:了)?(?:一张)?(?:优惠)?券|券(?:已经?)(?:发|到账|发放|放)|\b(?:sent|issued|given) (?:you )?(?:a |the )?coupon|\bcoupon (?:has been|was) (?:sent|issued)`)
)

// actions checks claims of what the host did.
func (c *checker) actions() {
	s := c.text.String()
	for _, m := range pinRE.FindAllStringIndex(s, -1) {
		if !c.ev.pinned {
			c.add(UnbackedAction, m[0], m[1], "no send_link call of this turn pinned a link")
		}
		c.text.mask(m[0], m[1])
	}
	for _, m := range couponSentRE.FindAllStringIndex(c.text.String(), -1) {
		c.add(UnbackedAction, m[0], m[1], "no call of this turn sent a coupon")
		c.text.mask(m[0], m[1])
	}
}

// claimGroup is a yes/no claim in its wordings: Chinese and English
// words that mean the same.
type claimGroup struct {
	topic string
	// code is an allergen's catalog code; "" for the word "allergen".
	code  string
	words []string
}

// Topics of yes/no claims: attribute topics are checked against the
// item's attributes, colours against its variants; features no catalog
// of this room states are never backed.
const (
	topicAttr    = "attribute"
	topicSkin    = "skin"
	topicColour  = "colour"
	topicFeature = "feature"
	// topicAllergen claims are checked against the allergen list a result
	// states: "contains peanut" when it lists peanut, "no peanut" when it
	// does not.
	topicAllergen = "allergen"
)

func claimGroups() []claimGroup {
	g := func(topic string, words ...string) claimGroup {
		if topic == topicAllergen {
			return claimGroup{topic, words[0], words[1:]}
		}
		return claimGroup{topic, "", words}
	}
	return []claimGroup{
		// Materials.
		g(topicAttr, "纯棉", "全棉", "棉质", "cotton"), g(topicAttr, "涤纶", "聚酯纤维", "polyester"),
		g(topicAttr, "羊毛", "wool"), g(topicAttr, "羊绒", "cashmere"), g(topicAttr, "真丝", "桑蚕丝", "蚕丝", "silk"),
		g(topicAttr, "牛仔布", "丹宁", "denim"), g(topicAttr, "亚麻", "linen"), g(topicAttr, "记忆棉", "memory foam"),
		g(topicAttr, "乳胶", "latex"), g(topicAttr, "不锈钢", "stainless steel"), g(topicAttr, "法兰绒", "flannel"),
		g(topicAttr, "塑料", "plastic"), g(topicAttr, "玻璃", "glass"), g(topicAttr, "陶瓷", "ceramic"), g(topicAttr, "真皮", "leather"),
		// Ingredients.
		g(topicAttr, "烟酰胺", "niacinamide"), g(topicAttr, "玻尿酸", "透明质酸", "hyaluronic acid"),
		g(topicAttr, "维生素C", "vitamin c", "vc"), g(topicAttr, "神经酰胺", "ceramide"), g(topicAttr, "视黄醇", "a醇", "retinol"),
		g(topicAttr, "水杨酸", "salicylic acid"), g(topicAttr, "果酸"), g(topicAttr, "胶原蛋白", "collagen"),
		g(topicAttr, "酒精", "alcohol"), g(topicAttr, "香精", "fragrance"), g(topicAttr, "防腐剂", "preservative", "preservatives"),
		// Fit.
		g(topicAttr, "宽松", "loose fit", "oversized", "relaxed fit"), g(topicAttr, "修身", "slim fit"), g(topicAttr, "标准版", "常规版", "regular fit"),
		// Origin.
		g(topicAttr, "云南", "yunnan"), g(topicAttr, "新疆", "xinjiang"), g(topicAttr, "浙江", "zhejiang"), g(topicAttr, "内蒙古", "inner mongolia"),
		g(topicAttr, "日本", "japan"), g(topicAttr, "韩国", "korea"), g(topicAttr, "法国", "france"), g(topicAttr, "澳洲", "澳大利亚", "australia"),
		g(topicAttr, "新西兰", "new zealand"), g(topicAttr, "进口", "imported"),
		// Skin types.
		g(topicSkin, "干皮", "干性肌肤", "干性皮肤", "干性", "dry skin"), g(topicSkin, "油皮", "油性肌肤", "油性皮肤", "油性", "oily skin"),
		g(topicSkin, "敏感肌", "敏感肌肤", "敏感皮肤", "sensitive skin"), g(topicSkin, "混合皮", "混合肌", "混油", "混干", "combination skin"),
		g(topicSkin, "所有肤质", "任何肤质", "各种肤质", "全肤质", "所有肌肤", "all skin types", "every skin type", "any skin type"),
		// Colours.
		g(topicColour, "黑色", "black"), g(topicColour, "白色", "white"), g(topicColour, "蓝色", "blue"), g(topicColour, "粉色", "粉红", "pink"),
		g(topicColour, "红色", "red"), g(topicColour, "绿色", "green"), g(topicColour, "灰色", "grey", "gray"), g(topicColour, "黄色", "yellow"),
		g(topicColour, "紫色", "purple"), g(topicColour, "米色", "beige"), g(topicColour, "卡其", "khaki"), g(topicColour, "棕色", "咖啡色", "brown"),
		// Features and allergens no catalog of this room states.
		g(topicFeature, "主动降噪", "降噪", "noise cancelling", "noise-cancelling", "noise canceling", "noise cancellation", "anc"),
		g(topicFeature, "防水", "waterproof", "water-resistant", "water resistant"), g(topicFeature, "快充", "fast charging"),
		g(topicFeature, "无线充电", "wireless charging"),
		g(topicFeature, "无糖", "零糖", "sugar-free", "sugar free"), g(topicFeature, "无添加", "零添加", "no additives"),
		g(topicFeature, "可机洗", "machine washable", "machine-washable"), g(topicFeature, "抗菌", "antibacterial"),
		g(topicFeature, "孕妇", "pregnant", "pregnancy"),
		// The yes/no specs of the shop catalogs' kinds.
		g(topicFeature, "可叠放", "stackable"), g(topicFeature, "可进洗碗机", "dishwasher safe", "dishwasher-safe"),
		g(topicFeature, "可调光", "dimmable"), g(topicFeature, "防滑", "non-slip", "anti-slip"), g(topicFeature, "可冲厕所", "flushable"),
		g(topicFeature, "自动断电", "auto shut-off", "auto-off"), g(topicFeature, "带计数器", "with a counter"),
		g(topicFeature, "枕套可拆洗", "washable cover"),
		// Allergens, by the catalog's codes; the topic itself is "".
		g(topicAllergen, "", "过敏原", "过敏", "致敏", "allergen", "allergens", "allergy", "allergic"),
		g(topicAllergen, "peanut", "花生", "peanut", "peanuts"), g(topicAllergen, "tree_nut", "tree nut", "tree nuts"),
		g(topicAllergen, "milk", "乳制品", "牛奶", "乳糖", "dairy", "milk", "lactose"), g(topicAllergen, "egg", "鸡蛋", "蛋类", "egg", "eggs"),
		g(topicAllergen, "soy", "大豆", "黄豆", "soy", "soya"), g(topicAllergen, "wheat", "小麦", "麸质", "wheat", "gluten"),
		g(topicAllergen, "fish", "fish"), g(topicAllergen, "shellfish", "贝类", "虾蟹", "shellfish"), g(topicAllergen, "sesame", "芝麻", "sesame"),
	}
}

// hedges mark a clause that says a fact is not known instead of
// claiming it.
var hedges = []string{"没有标注", "没标注", "未标注", "没有写", "没写", "查不到", "不确定", "不清楚", "无法确认", "没有相关", "暂无",
	"not stated", "not listed", "isn't listed", "not sure", "can't confirm", "cannot confirm", "unable to", "no information", "don't know", "not specified"}

// yesNoClaims are claims about coupons, shipping and returns, each with
// whether it is backed by the evidence.
func (c *checker) yesNoClaims() []struct {
	phrases []string
	backed  func() (bool, string)
} {
	ev := c.ev
	known := func(ok bool, what string) func() (bool, string) {
		return func() (bool, string) { return ok, what }
	}
	couponNo := known(ev.couponKnown && !ev.couponExists, "no coupon check of this turn says there is no coupon")
	couponYes := known(ev.couponKnown && ev.couponExists, "no coupon check of this turn found a coupon")
	if ev.couponKnown && ev.couponExists {
		couponNo = known(false, "the coupon check of this turn found a coupon")
	}
	if ev.couponKnown && !ev.couponExists {
		couponYes = known(false, "the coupon check of this turn found no coupon")
	}
	shipWhy := "no shipping result of this turn says so"
	return []struct {
		phrases []string
		backed  func() (bool, string)
	}{
		{[]string{"没有优惠券", "没有券", "暂无优惠券", "无优惠券", "没有可用的券", "no coupon", "no coupons"}, couponNo},
		{[]string{"有优惠券", "有券", "优惠券来啦", "领券", "coupon applies", "there is a coupon", "there's a coupon", "has a coupon", "coupon time"}, couponYes},
		{[]string{"不包邮", "不免运费", "需要运费", "运费自理", "not free shipping", "shipping costs", "shipping fee is"}, known(ev.freeKnown && !ev.freeShipping, shipWhy)},
		{[]string{"包邮", "免运费", "免邮", "free shipping", "ships free", "shipping is free"}, known(ev.freeKnown && ev.freeShipping, shipWhy)},
		{[]string{"不支持退货", "不支持无理由", "不能退", "不可退", "不退不换", "无法退货", "不接受退货", "no return", "no returns", "not returnable", "cannot be returned", "can't be returned", "non-returnable"},
			known(ev.returnsKnown && !ev.returns || ev.returnConditions, shipWhy)},
		{[]string{"无理由退", "支持退货", "可以退货", "可退换", "包退", "退换货", "free returns", "returns accepted", "can be returned", "can return it"},
			known(ev.returnsKnown && ev.returns, shipWhy)},
	}
}

// yesNo checks yes/no claims: coupons, shipping, returns, attributes,
// colours and features.
func (c *checker) yesNo() {
	for _, claim := range c.yesNoClaims() {
		for _, p := range claim.phrases {
			// A phrase the results state as it stands ("engraved pieces
			// cannot be returned") backs itself.
			said := slices.ContainsFunc(c.ev.stated, func(v string) bool { return strings.Contains(v, strings.ToLower(p)) })
			for _, m := range c.text.find(p) {
				// "shipping costs not stated" says what is not known.
				after := strings.ToLower(strings.TrimLeft(c.text.orig[m[1]:], " "))
				hedged := slices.ContainsFunc(hedges, func(h string) bool { return strings.HasPrefix(after, h) })
				if ok, why := claim.backed(); !ok && !said && !hedged {
					c.add(UnbackedAttribute, m[0], m[1], "%s", why)
				}
				c.text.mask(m[0], m[1])
			}
		}
	}
	values := slices.Clone(c.ev.stated)
	var variants []string
	for _, it := range c.ev.items {
		for _, a := range it.Attributes {
			values = append(values, strings.ToLower(a.Value), strings.ToLower(a.ValueZH))
		}
		for _, v := range it.Variants {
			variants = append(variants, strings.ToLower(v.Name))
		}
	}
	groups := claimGroups()
	type hit struct {
		g    claimGroup
		word string
	}
	var words []hit
	for _, g := range groups {
		for _, w := range g.words {
			words = append(words, hit{g, w})
		}
	}
	slices.SortStableFunc(words, func(a, b hit) int { return len(b.word) - len(a.word) })
	for _, h := range words {
		for _, m := range c.text.find(h.word) {
			c.text.mask(m[0], m[1])
			a, b := clause(c.text.orig, m[0], m[1])
			if containsAny(strings.ToLower(c.text.orig[a:b]), hedges) {
				continue
			}
			if h.g.topic == topicAllergen {
				c.checkAllergen(h.g, m[0], m[1], c.text.orig[a:b], values)
				continue
			}
			if !c.claimBacked(h.g, values, variants) {
				c.add(UnbackedAttribute, m[0], m[1], "%s", c.claimWhy(h.g))
			}
		}
	}
}

// negations before an allergen make the claim that it is absent.
var negations = []string{"不含", "无", "没有", "不", "free of", "no ", "not contain", "doesn't contain", "does not contain", "without", "isn't", "is not"}

// checkAllergen checks an allergen claim in its clause cl: the list must
// be stated, and the allergen in it as the claim says ("含花生", "不含花生",
// "peanut-free").
func (c *checker) checkAllergen(g claimGroup, i, j int, cl string, values []string) {
	ev := c.ev
	if !ev.allergensKnown {
		c.add(UnbackedAttribute, i, j, "no result of this turn states the item's allergens")
		return
	}
	if g.code == "" {
		return // "按标注的过敏原": the list is stated
	}
	a, _ := clause(c.text.orig, i, j)
	before := strings.ToLower(c.text.orig[a:i])
	after := strings.ToLower(c.text.orig[j:min(len(c.text.orig), j+6)])
	absent := strings.HasPrefix(after, "-free") || strings.HasPrefix(after, " free")
	for _, n := range negations {
		absent = absent || strings.Contains(before, n)
	}
	listed := slices.Contains(ev.allergens, g.code)
	if !listed && !absent {
		// An ingredient the results name ("花生酱") also says it is in.
		listed = slices.ContainsFunc(values, func(v string) bool {
			return slices.ContainsFunc(g.words, func(w string) bool { return strings.Contains(v, strings.ToLower(w)) })
		})
	}
	if listed == absent {
		c.add(UnbackedAttribute, i, j, "the allergens stated are %s", strings.Join(append([]string{"["}, strings.Join(ev.allergens, ", "), "]"), ""))
	}
}

func (c *checker) claimBacked(g claimGroup, values, variants []string) bool {
	match := func(in []string) bool {
		for _, v := range in {
			for _, w := range g.words {
				lw := strings.ToLower(w)
				if strings.Contains(v, lw) {
					return true
				}
			}
		}
		return false
	}
	switch g.topic {
	case topicFeature:
		return match(values)
	case topicColour:
		return match(variants)
	case topicSkin:
		if match(values) {
			return true
		}
		return slices.ContainsFunc(values, func(v string) bool { return v == "all skin types" || v == "所有肤质" })
	}
	return match(values)
}

func (c *checker) claimWhy(g claimGroup) string {
	if len(c.ev.items) == 0 {
		return "no call of this turn looked an item up"
	}
	switch g.topic {
	case topicFeature:
		return "the catalog does not state it for " + c.ev.items[0].NameEN
	case topicColour:
		return "no variant of this turn's items is that colour"
	}
	var facts []string
	for _, it := range c.ev.items {
		for _, a := range it.Attributes {
			facts = append(facts, a.Key+": "+a.Value)
		}
	}
	return "the catalog says " + strings.Join(facts, ", ")
}
