package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/livehat/livehat/sdk/jsonx"
)

// keyed is a number a result gave under a key ("price", "return_days").
type keyed struct {
	key string
	v   float64
}

// coupon is a coupon a result gave for an item, in fen.
type coupon struct {
	amount, minSpend int64
	percent          float64
}

// variantStock is the stock of one variant ("" for the item as a
// whole): a count (when counted) and a state the tools name.
type variantStock struct {
	name    string
	stock   int
	counted bool
	state   string
	// checked is set when a check_stock result gave the entry, not only
	// a lookup's catalog state.
	checked bool
}

// sizeRow is a row of a size chart; a zero bound is open.
type sizeRow struct {
	size                   string
	minH, maxH, minW, maxW float64
}

// fits reports whether the row contains a height (cm) and a weight (kg);
// a zero measure is unknown and fits.
func (r sizeRow) fits(h, w float64) (bool, bool) {
	in := func(v, lo, hi float64) bool { return v == 0 || ((lo == 0 || v >= lo) && (hi == 0 || v <= hi)) }
	return in(h, r.minH, r.maxH), in(w, r.minW, r.maxW)
}

// datedFact is a date a result gave, with the key it was under.
type datedFact struct {
	d   date
	key string
}

// durationFact is a duration a result gave: hours, or months.
type durationFact struct {
	v    float64
	unit string // "hour" for every duration counted in hours, or "month"
	key  string
}

// flag is a yes/no a result gave: "free_shipping": true.
type flag struct {
	key string
	on  bool
}

// itemFacts are the backed facts of one item, or of no item in
// particular (the stream context, results without an item id).
type itemFacts struct {
	id    string
	name  string   // as the catalog or the results name it
	latin string   // a Latin-script name for English replies, or ""
	names []string // lower-case names and aliases that mention the item
	links []int
	// inPlay is set when a result of this turn is about the item.
	inPlay bool
	// counts are how many things a result lists (variants, entries):
	// they back a count of things ("2种", "3 colours"), not a bare
	// number, which could be anything ("下单后2").
	counts []float64

	price, listPrice int64 // fen; 0 when no result gave one
	money            []keyedFen
	coupons          []coupon
	eligible         *bool
	quantities       []float64
	numbers          []float64
	stock            []variantStock
	hasStock         bool
	// stockChecked is set when a check_stock of this turn answered for
	// the item: only then may a reply state its stock (a lookup's
	// stock_state is the catalog's, not a check of the stock now).
	stockChecked bool
	variants     []string
	sizes        []string
	chart        []sizeRow
	dates        []datedFact
	times        [][2]float64
	durations    []durationFact
	percents     []float64
	values       []keyed
	texts        []string
	flags        []flag
	attrs        [][2]string
	pinned       bool
	// couponChecked is set when a coupon_check of this turn answered for
	// the item: then coupons are all the coupons it has.
	couponChecked bool
	// unstated are the keys the results say "not stated" of, and stated
	// the keys they give a value (every member's path, "returns.days").
	unstated, stated []string
	// allergenFree is set when the results say the item has no allergens.
	allergenFree bool
	// allergensStated is set when a result states the item's allergen
	// list: an "allergens" list, or "none". Ingredients are no allergen
	// list: an allergen claim needs the list, as the room's grader reads
	// it.
	allergensStated bool
	// returnConditions are the conditions of the item's return rule
	// ("刻字定制款不退").
	returnConditions []string
}

// keyedFen is an amount a result gave, in fen, with its key.
type keyedFen struct {
	fen int64
	key string
}

// turnFacts are the backed facts of a turn.
type turnFacts struct {
	items    []*itemFacts // in the order the turn met them
	global   *itemFacts
	currency string
	// ids are identifiers viewers must never hear: item and coupon ids.
	ids []string
	// keys are the results' field names, lower case: words of the wire,
	// not of the stream.
	keys []string
	// message holds the numbers and measures of the viewer's message,
	// which a reply may repeat.
	msgNumbers       []float64
	msgHeight        float64
	msgWeight        float64
	pinnedAny        bool
	couponSent       bool
	sendLinkFailed   bool
	anyResult        bool
	linksInCatalog   bool
	kindSourcesLower []string // texts that back an item kind a reply names
	// checkingStock is set while a check_stock result is read, so that
	// its stock entries are marked checked.
	checkingStock bool
}

func newTurnFacts(t *Turn) *turnFacts {
	tf := &turnFacts{global: &itemFacts{}}
	for _, it := range t.Items {
		f := tf.item(it.ID)
		f.addName(it.Name)
		for _, a := range it.Aliases {
			f.addName(a)
			if n, ok := aliasLink(a); ok {
				f.links = append(f.links, n)
			}
		}
		if it.Link > 0 {
			f.links = append(f.links, it.Link)
		}
		tf.linksInCatalog = tf.linksInCatalog || len(f.links) > 0
		if f.name == "" {
			f.name = it.Name
		}
		tf.kindSourcesLower = append(tf.kindSourcesLower, f.names...)
	}
	for _, c := range t.parsedCalls() {
		tf.addCall(c)
	}
	for _, c := range t.Context {
		text := c.Title + ": " + c.Text
		tf.addText(tf.global, "context", text)
		tf.kindSourcesLower = append(tf.kindSourcesLower, asciiLower(text))
	}
	msg := normalize(t.Message)
	tf.kindSourcesLower = append(tf.kindSourcesLower, asciiLower(msg))
	for _, tok := range scan(msg, make([]bool, len(msg))) {
		if tok.kind == tokUnreadable {
			continue // no number, so it backs none
		}
		tf.msgNumbers = append(tf.msgNumbers, tok.v)
		if tok.v2 != 0 {
			tf.msgNumbers = append(tf.msgNumbers, tok.v2)
		}
		switch tok.kind {
		case tokHeight:
			tf.msgHeight = tok.v
		case tokWeight:
			tf.msgWeight = tok.v
		}
	}
	return tf
}

// item returns the facts of the item with id, adding it when new.
func (tf *turnFacts) item(id string) *itemFacts {
	id = strings.TrimSpace(id)
	for _, f := range tf.items {
		if f.id == id {
			return f
		}
	}
	f := &itemFacts{id: id}
	tf.items = append(tf.items, f)
	if id != "" {
		tf.ids = append(tf.ids, id)
	}
	return f
}

// inPlay lists the items this turn's results are about.
func (tf *turnFacts) inPlay() []*itemFacts {
	var out []*itemFacts
	for _, f := range tf.items {
		if f.inPlay {
			out = append(out, f)
		}
	}
	return out
}

func (f *itemFacts) addName(n string) {
	n = strings.TrimSpace(n)
	if n == "" {
		return
	}
	if f.name == "" && hasHan(n) {
		f.name = n
	}
	if !hasHan(n) && len(n) > len(f.latin) && !looksLikeLinkAlias(n) {
		f.latin = n
	}
	l := asciiLower(n)
	for _, x := range f.names {
		if x == l {
			return
		}
	}
	f.names = append(f.names, l)
}

// display is how a reply or feedback names the item.
func (f *itemFacts) display() string {
	switch {
	case f.name != "":
		return f.name
	case f.latin != "":
		return f.latin
	}
	return f.id
}

// aliasLink reads the link number of an alias "3号链接" or "link 3".
func aliasLink(a string) (int, bool) {
	a = asciiLower(strings.TrimSpace(a))
	for _, form := range [][2]string{{"", "号链接"}, {"link ", ""}, {"", "号"}} {
		if strings.HasPrefix(a, form[0]) && strings.HasSuffix(a, form[1]) {
			n, err := strconv.Atoi(strings.TrimSpace(a[len(form[0]) : len(a)-len(form[1])]))
			if err == nil && n > 0 {
				return n, true
			}
		}
	}
	return 0, false
}

func looksLikeLinkAlias(a string) bool {
	_, ok := aliasLink(a)
	return ok
}

// exportOf is the stable name of the tool a call ran.
func exportOf(c Call) string {
	if c.Export != "" {
		return c.Export
	}
	return c.Name
}

// parsedCall is a call with its arguments and result parsed: nil where
// they are not JSON.
type parsedCall struct {
	Call
	args, result *jsonx.Value
}

// parsedCalls returns t.Calls with their JSON parsed. It parses once a
// turn (a WASM guest pays for every pass over a result, and the hook
// reads each twice: for the items to look up, then for the facts), so
// Calls must not change after the first call.
func (t *Turn) parsedCalls() []parsedCall {
	if len(t.parsed) != len(t.Calls) {
		t.parsed = make([]parsedCall, len(t.Calls))
		for i, c := range t.Calls {
			t.parsed[i].Call = c
			t.parsed[i].args, _ = jsonx.Parse(c.Arguments)
			t.parsed[i].result, _ = jsonx.Parse(c.Result)
		}
	}
	return t.parsed
}

// itemIDs returns the item ids a call names: in its arguments and at the
// top of its result. The host looks these items up in the catalog.
func (c parsedCall) itemIDs() []string {
	var out []string
	for _, n := range []*jsonx.Value{c.args, c.result} {
		if id := strings.TrimSpace(n.Get("item_id").Text()); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// statedLinks returns the link numbers a reply states ("3号链接", "link
// 3"); the host looks up the items at them.
func statedLinks(reply string) []int {
	text := normalize(reply)
	// Every link pattern needs one of these words: most replies state no
	// link, and a scan costs a WASM guest a few hundred microseconds.
	if !strings.Contains(text, "号") && !strings.Contains(text, "链接") && !strings.Contains(asciiLower(text), "link") {
		return nil
	}
	var out []int
	for _, t := range scan(text, make([]bool, len(text))) {
		if n := int(t.v); t.kind == tokLink && n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// addCall adds the facts of one tool call's result.
func (tf *turnFacts) addCall(pc parsedCall) {
	c, root := pc.Call, pc.result
	if exportOf(c) == "load_skill" {
		return
	}
	if root == nil || (root.Kind != jsonx.Object && root.Kind != jsonx.Array) {
		return // not JSON: a skill's text, nothing to back a fact with
	}
	if len(root.Elems) == 0 {
		return // an empty result ({} of a tool that failed quietly) states nothing, not even that a link was pinned
	}
	argID := pc.args.Get("item_id").Text()
	if found := root.Get("found"); found != nil && found.Kind == jsonx.Bool && !found.Bool {
		return // a lookup that found nothing states nothing (its message echoes the query)
	}
	if root.Kind == jsonx.Object && root.Get("error") != nil {
		if exportOf(c) == "send_link" {
			tf.sendLinkFailed = true
		}
		return
	}
	tf.anyResult = true
	var owner *itemFacts
	if argID != "" {
		owner = tf.item(argID)
	}
	before := len(tf.items)
	tf.checkingStock = exportOf(c) == "check_stock"
	tf.walk(root, owner, "")
	tf.checkingStock = false
	if owner == nil && len(tf.items) > before {
		owner = tf.items[before]
	}
	if id := root.Get("item_id").Text(); owner == nil && id != "" {
		// A harness variant may name the argument otherwise ("product");
		// the result still says which item it answered for.
		owner = tf.item(id)
	}
	if exportOf(c) == "send_link" {
		tf.pinnedAny = true
		if owner != nil {
			owner.pinned = true
		}
	}
	if owner != nil {
		owner.couponChecked = owner.couponChecked || exportOf(c) == "coupon_check"
		owner.stockChecked = owner.stockChecked || exportOf(c) == "check_stock"
	}
	if owner != nil {
		owner.inPlay = true
		tf.kindSourcesLower = append(tf.kindSourcesLower, owner.names...)
	}
}

// walk adds the facts of a JSON value to it (nil: the value names its
// own item, or none). path is the key path of the value ("" at the top,
// "promotions" inside that list), so that a promotion's or a variant's
// price is not taken for the item's.
func (tf *turnFacts) walk(n *jsonx.Value, it *itemFacts, path string) {
	switch n.Kind {
	case jsonx.Object:
		if id := n.Get("item_id").Text(); id != "" {
			it = tf.item(id)
			it.inPlay = true
		}
		target := it
		if target == nil {
			target = tf.global
		}
		if n.Get("key") != nil && n.Get("value") != nil {
			tf.addSpec(target, n)
			return
		}
		for i, k := range n.Keys {
			lk := asciiLower(k)
			if !slices.Contains(tf.keys, lk) {
				tf.keys = append(tf.keys, lk)
			}
			tf.member(target, path, lk, n.Elems[i], n)
		}
	case jsonx.Array:
		for _, v := range n.Elems {
			tf.walk(v, it, path)
		}
	default:
		target := it
		if target == nil {
			target = tf.global
		}
		tf.member(target, parentOf(path), baseOf(path), n, nil)
	}
}

func baseOf(path string) string   { return path[strings.LastIndexByte(path, '.')+1:] }
func parentOf(path string) string { return path[:max(0, strings.LastIndexByte(path, '.'))] }

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// notStated is what the tools say of a fact the merchant did not state.
const notStated = "not stated"

// member adds the member k of an object (parent) at path to the facts of
// it.
func (tf *turnFacts) member(it *itemFacts, path, k string, v *jsonx.Value, parent *jsonx.Value) {
	full := join(path, k)
	top := path == ""
	if v.Kind == jsonx.String && strings.EqualFold(strings.TrimSpace(v.Str), notStated) {
		it.unstated = append(it.unstated, full)
		return
	}
	if v.Kind != jsonx.Null && (v.Kind != jsonx.String || strings.TrimSpace(v.Str) != "") &&
		(v.Kind != jsonx.Array || len(v.Elems) > 0) && (v.Kind != jsonx.Object || len(v.Keys) > 0) {
		it.stated = append(it.stated, full)
	}
	switch {
	case k == "item_id" || k == "id" || strings.HasSuffix(k, "_id"):
		if v.Kind == jsonx.String && v.Str != "" {
			tf.ids = append(tf.ids, v.Str)
		}
		return
	case (k == "name" || k == "title") && v.Kind == jsonx.String && parent != nil && parent.Get("item_id") != nil:
		it.addName(v.Str)
	case k == "currency" && v.Kind == jsonx.String:
		tf.currency = strings.ToUpper(v.Str)
		return
	case k == "link" && v.Kind == jsonx.Number && top:
		it.links = append(it.links, int(v.Num))
	case k == "stock" || k == "inventory" || k == "stock_left":
		tf.addStock(it, "", v)
		return
	case k == "stock_state" || k == "item_stock_state":
		tf.addStockState(it, v)
		return
	case k == "variants" || k == "variant_details":
		tf.addVariants(it, full, v)
		return
	case k == "size_chart" || k == "sizes" || k == "size_table":
		if v.Kind == jsonx.Array {
			for _, row := range v.Elems {
				tf.addSizeRow(it, row)
			}
			return
		}
	case k == "coupon" || k == "coupons" || strings.HasSuffix(k, "_coupon"):
		tf.addCoupons(it, v)
	case k == "eligible" && v.Kind == jsonx.Bool && top:
		b := v.Bool
		it.eligible = &b
	case k == "pinned" && v.Kind == jsonx.Bool && v.Bool:
		it.pinned, tf.pinnedAny = true, true
	case (k == "sent" || k == "issued") && v.Kind == jsonx.Bool && v.Bool && parent != nil && parent.Get("coupon") != nil:
		tf.couponSent = true
	case (k == "ship_from" || k == "ships_from") && v.Kind == jsonx.String && strings.TrimSpace(v.Str) != "":
		// Where an item ships from is a fact a viewer asks by name
		// ("where does it ship from", "发货地").
		it.attrs = append(it.attrs, [2]string{shipFromKey, strings.TrimSpace(v.Str)}, [2]string{"发货地", strings.TrimSpace(v.Str)})
	case k == "allergens" && v.Kind == jsonx.String && strings.EqualFold(v.Str, "none"):
		it.allergenFree, it.allergensStated = true, true
		it.texts = append(it.texts, "allergens")
		return
	case k == "allergens" && v.Kind == jsonx.Array:
		it.allergensStated = true
	case k == "conditions" && strings.Contains(path, "return") && v.Kind == jsonx.Array:
		for _, e := range v.Elems {
			if e.Kind == jsonx.String {
				it.returnConditions = append(it.returnConditions, e.Str)
			}
		}
	case k == "attributes" || k == "specs" || k == "spec":
		if v.Kind == jsonx.Object {
			for i, ak := range v.Keys {
				if av := v.Elems[i]; asciiLower(ak) == "allergens" && (av.Kind == jsonx.Array || strings.EqualFold(av.Text(), "none")) {
					// The allergen list, read as at the top of a result.
					tf.member(it, full, "allergens", av, v)
					continue
				}
				tf.addAttribute(it, ak, v.Elems[i].Text(), "")
			}
			return
		}
	}
	switch v.Kind {
	case jsonx.Number:
		tf.addNumber(it, full, top, v.Num)
	case jsonx.String:
		tf.addString(it, full, top, v.Str)
	case jsonx.Bool:
		it.flags = append(it.flags, flag{k, v.Bool})
		if v.Bool {
			it.texts = append(it.texts, strings.ReplaceAll(k, "_", " "))
		}
	case jsonx.Object, jsonx.Array:
		it.texts = append(it.texts, strings.ReplaceAll(k, "_", " "))
		if v.Kind == jsonx.Object {
			for i, ck := range v.Keys {
				tf.member(it, full, asciiLower(ck), v.Elems[i], v)
			}
			return
		}
		for _, e := range v.Elems {
			if e.Kind == jsonx.Object {
				tf.walk(e, it, full)
			} else {
				tf.member(it, path, k, e, nil)
			}
		}
	}
}

// addAttribute adds an attribute the results state in words: "材质":
// "纯棉", "noise_cancelling": "yes"; a yes or a no states the key itself
// as a fact or its absence (unit is appended to a value that is a
// number).
func (tf *turnFacts) addAttribute(it *itemFacts, key, value, unit string) {
	words := strings.ReplaceAll(asciiLower(key), "_", " ")
	switch asciiLower(strings.TrimSpace(value)) {
	case "":
		return
	case notStated:
		it.unstated = append(it.unstated, key)
		return
	case "yes", "true", "是", "有", "支持":
		it.texts = append(it.texts, words)
		it.flags = append(it.flags, flag{words, true})
		value = "yes"
	case "no", "false", "否", "无", "不支持":
		it.texts = append(it.texts, "not "+words, "no "+words)
		it.flags = append(it.flags, flag{words, false})
		value = "no"
	}
	if _, err := strconv.ParseFloat(value, 64); err == nil && unit != "" {
		value += unit
	}
	it.attrs = append(it.attrs, [2]string{key, value})
	tf.addString(it, "attributes."+asciiLower(key), false, value)
}

// addSpec adds a typed spec: {"key": "battery_life", "value": 30,
// "unit": "h", "label": "Battery life", "label_zh": "续航", "value_zh": …}.
func (tf *turnFacts) addSpec(it *itemFacts, n *jsonx.Value) {
	v := n.Get("value")
	value := v.Text()
	if v.Kind == jsonx.Bool {
		value = strconv.FormatBool(v.Bool)
	}
	unit := n.Get("unit").Text()
	for _, key := range []string{n.Get("key").Text(), n.Get("label").Text()} {
		if key != "" {
			tf.addAttribute(it, key, value, unit)
		}
	}
	if zh := n.Get("label_zh").Text(); zh != "" {
		zhValue := n.Get("value_zh").Text()
		switch {
		case v.Kind == jsonx.Bool && v.Bool:
			it.texts = append(it.texts, asciiLower(zh))
			zhValue = "是"
		case v.Kind == jsonx.Bool:
			it.texts = append(it.texts, "不"+zh, "无"+zh, "没有"+zh)
			zhValue = "否"
		case zhValue == "":
			zhValue = value
			if v.Kind == jsonx.Number {
				zhValue += unit
			}
		}
		it.attrs = append(it.attrs, [2]string{zh, zhValue})
		it.texts = append(it.texts, asciiLower(zhValue))
	}
}

func (tf *turnFacts) addNumber(it *itemFacts, k string, top bool, v float64) {
	it.numbers = append(it.numbers, v)
	it.values = append(it.values, keyed{k, v})
	base := baseOf(k)
	switch {
	case isMoneyKey(base):
		fen := toFen(v)
		it.money = append(it.money, keyedFen{fen, k})
		switch {
		case top && (base == "price" || base == "live_price" || base == "sale_price" || base == "current_price"):
			it.price = fen
		case top && (base == "list_price" || base == "original_price"):
			it.listPrice = fen
		}
	case strings.Contains(base, "percent") || strings.Contains(base, "pct"):
		it.percents = append(it.percents, v)
	case strings.Contains(base, "quantity") || base == "qty":
		it.quantities = append(it.quantities, v)
	}
	if unit, ok := durationKey(base); ok {
		switch unit {
		case "hour":
			it.durations = append(it.durations, durationFact{v, "hour", k})
		case "day":
			it.durations = append(it.durations, durationFact{v * 24, "hour", k})
		case "week":
			it.durations = append(it.durations, durationFact{v * 24 * 7, "hour", k})
		case "minute":
			it.durations = append(it.durations, durationFact{v / 60, "hour", k})
		case "month":
			it.durations = append(it.durations, durationFact{v, "month", k})
		case "year":
			it.durations = append(it.durations, durationFact{v * 12, "month", k})
		}
	}
}

// isMoneyKey reports whether a number under key k is an amount of money.
func isMoneyKey(k string) bool {
	if strings.Contains(k, "percent") || strings.Contains(k, "days") || strings.Contains(k, "hours") || strings.Contains(k, "quantity") {
		return false
	}
	return containsAny(k, []string{"price", "amount", "spend", "total", "fee", "cost", "deposit", "saving", "threshold", "discount"})
}

// durationKey reads the unit of a key like "ships_within_days".
func durationKey(k string) (string, bool) {
	for _, u := range durationUnits {
		if strings.HasSuffix(k, u.word) || strings.Contains(k, u.joined) {
			return u.unit, true
		}
	}
	return "", false
}

// durationUnits are the words of duration keys, in the order durationKey
// tries them, each with the "_" that joins it to the next word (made
// once: a key is read for every number a result states).
var durationUnits = [...]struct{ word, joined, unit string }{{"hours", "hours_", "hour"}, {"hour", "hour_", "hour"},
	{"days", "days_", "day"}, {"day", "day_", "day"}, {"weeks", "weeks_", "week"}, {"minutes", "minutes_", "minute"},
	{"months", "months_", "month"}, {"month", "month_", "month"}, {"years", "years_", "year"}}

func (tf *turnFacts) addString(it *itemFacts, k string, top bool, s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	it.texts = append(it.texts, asciiLower(s))
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		tf.addNumber(it, k, top, v)
		return
	}
	if baseOf(k) == "size" {
		it.sizes = appendSize(it.sizes, s)
	}
	tf.addText(it, k, s)
}

// addText adds the facts a free text states: amounts, percentages,
// dates, durations and every number.
func (tf *turnFacts) addText(it *itemFacts, k, s string) {
	s = normalize(s)
	if k == "context" {
		it.texts = append(it.texts, asciiLower(s))
	}
	for _, tok := range scanFacts(s) {
		if tok.kind == tokDuration {
			// A duration's value is in hours or months ("1年" is 12): the
			// number as written backs a number, not its conversion.
			if v, ok := writtenNumber(s[tok.start:tok.end]); ok {
				it.numbers = append(it.numbers, v)
			}
		} else {
			it.numbers = append(it.numbers, tok.v)
		}
		switch tok.kind {
		case tokMoney:
			it.money = append(it.money, keyedFen{toFen(tok.v), k})
		case tokSpendOff:
			it.numbers = append(it.numbers, tok.v2)
			it.coupons = append(it.coupons, coupon{amount: toFen(tok.v2), minSpend: toFen(tok.v)})
			it.money = append(it.money, keyedFen{toFen(tok.v), "min_spend"}, keyedFen{toFen(tok.v2), "coupon"})
		case tokZhe:
			it.percents = append(it.percents, tok.v)
		case tokDate:
			it.dates = append(it.dates, datedFact{tok.date, k})
			it.numbers = append(it.numbers, float64(tok.date.year), float64(tok.date.month), float64(tok.date.day))
			if tok.unit != "" || strings.Contains(s[tok.start:tok.end], "T") {
				tf.addTimestamp(it, tok, k)
			}
		case tokTime:
			it.times = append(it.times, [2]float64{tok.v, tok.v2})
		case tokDuration:
			it.durations = append(it.durations, durationFact{tok.v, hourOrMonth(tok.unit), k})
		case tokSize:
			it.sizes = appendSize(it.sizes, tok.size)
		case tokQuantity:
			it.quantities = append(it.quantities, tok.v)
		}
	}
}

// addTimestamp adds an RFC 3339 time as the stream's viewers read it: in
// its own zone and in China's (UTC+8), date and time of day.
func (tf *turnFacts) addTimestamp(it *itemFacts, tok token, k string) {
	it.times = append(it.times, [2]float64{tok.v, tok.v2})
	if tok.unit != "Z" {
		return
	}
	h := tok.v + 8
	d := tok.date
	if h >= 24 {
		h -= 24
		d = nextDay(d)
	}
	it.times = append(it.times, [2]float64{h, tok.v2})
	it.dates = append(it.dates, datedFact{d, k})
}

func nextDay(d date) date {
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	last := days[d.month-1]
	if d.month == 2 && d.year%4 == 0 && (d.year%100 != 0 || d.year%400 == 0) {
		last = 29
	}
	d.day++
	if d.day > last {
		d.day, d.month = 1, d.month+1
		if d.month > 12 {
			d.month, d.year = 1, d.year+1
		}
	}
	return d
}

func hourOrMonth(unit string) string {
	if unit == "month" {
		return "month"
	}
	return "hour"
}

func appendSize(sizes []string, s string) []string {
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, x := range sizes {
		if x == s {
			return sizes
		}
	}
	return append(sizes, s)
}

// stock states as the tools name them.
const (
	stateInStock = "in_stock"
	stateLow     = "low"
	stateSoldOut = "sold_out"
)

// stockEntry returns the stock entry of a variant ("" the item), adding
// it when new.
func (tf *turnFacts) stockEntry(it *itemFacts, variant string) *variantStock {
	e := func() *variantStock {
		for i := range it.stock {
			if strings.EqualFold(it.stock[i].name, variant) {
				return &it.stock[i]
			}
		}
		it.stock = append(it.stock, variantStock{name: variant})
		return &it.stock[len(it.stock)-1]
	}()
	e.checked = e.checked || tf.checkingStock
	return e
}

// addStock reads "stock": 8, {"M": 0, "L": 30, "XL": "not stated"} or
// [{"name": "M", "stock": 0}].
func (tf *turnFacts) addStock(it *itemFacts, variant string, v *jsonx.Value) {
	switch v.Kind {
	case jsonx.Number:
		it.hasStock = true
		e := tf.stockEntry(it, variant)
		e.stock, e.counted = int(v.Num), true
		it.numbers = append(it.numbers, v.Num)
	case jsonx.String:
		if n, err := strconv.Atoi(strings.TrimSpace(v.Str)); err == nil {
			tf.addStock(it, variant, &jsonx.Value{Kind: jsonx.Number, Num: float64(n)})
			return
		}
		tf.stockEntry(it, variant)
	case jsonx.Object:
		for i, k := range v.Keys {
			tf.addStock(it, k, v.Elems[i])
			if k != "" && !strings.EqualFold(k, "standard") {
				it.variants = appendVariant(it.variants, k)
			}
		}
		if len(v.Keys) > 1 {
			it.counts = append(it.counts, float64(len(v.Keys)))
		}
	case jsonx.Array:
		tf.addVariants(it, "variants", v)
	}
}

// addStockState reads "stock_state": "sold_out" (the item's) or
// {"M": "sold_out", "L": "low"} (per variant).
func (tf *turnFacts) addStockState(it *itemFacts, v *jsonx.Value) {
	set := func(variant, state string) {
		switch state = asciiLower(strings.TrimSpace(state)); state {
		case stateInStock, stateLow, stateSoldOut, "presale":
			it.hasStock = true
			tf.stockEntry(it, variant).state = state
		}
	}
	switch v.Kind {
	case jsonx.String:
		set("", v.Str)
	case jsonx.Object:
		for i, k := range v.Keys {
			set(k, v.Elems[i].Text())
		}
	}
}

// addVariants reads ["M", "L"] or [{"name": "M", "stock": 0,
// "stock_state": "sold_out", "price": "129", …}, …].
func (tf *turnFacts) addVariants(it *itemFacts, path string, v *jsonx.Value) {
	if v.Kind != jsonx.Array {
		return
	}
	for _, e := range v.Elems {
		switch e.Kind {
		case jsonx.String:
			it.variants = appendVariant(it.variants, e.Str)
			it.texts = append(it.texts, asciiLower(e.Str))
			tf.addText(it, "variant", e.Str)
		case jsonx.Object:
			name := ""
			for _, k := range []string{"name", "variant", "size", "color", "colour"} {
				if name = e.Get(k).Text(); name != "" {
					break
				}
			}
			if name == "" {
				continue
			}
			it.variants = appendVariant(it.variants, name)
			it.texts = append(it.texts, asciiLower(name))
			tf.addText(it, "variant", name)
			for i, k := range e.Keys {
				switch k = asciiLower(k); k {
				case "name":
				case "stock":
					tf.addStock(it, name, e.Elems[i])
				case "stock_state":
					tf.addStockState(it, &jsonx.Value{Kind: jsonx.Object, Keys: []string{name}, Elems: []*jsonx.Value{e.Elems[i]}})
				default:
					tf.member(it, path, k, e.Elems[i], e)
				}
			}
		}
	}
	if len(v.Elems) > 1 {
		it.counts = append(it.counts, float64(len(v.Elems)))
	}
}

func appendVariant(vs []string, v string) []string {
	for _, x := range vs {
		if strings.EqualFold(x, v) {
			return vs
		}
	}
	return append(vs, v)
}

// addSizeRow reads a size chart row: {"size": "L", "min_height_cm": 170,
// "max_height_cm": 180, …}; an absent bound is open. Ranges as text
// ({"size": "XL", "height": "185cm+"}) are read too.
func (tf *turnFacts) addSizeRow(it *itemFacts, n *jsonx.Value) {
	if n.Kind != jsonx.Object {
		return
	}
	row := sizeRow{size: strings.ToUpper(n.Get("size").Text())}
	if row.size == "" {
		return
	}
	it.sizes = appendSize(it.sizes, row.size)
	for i, k := range n.Keys {
		k = asciiLower(k)
		v := n.Elems[i]
		height := strings.Contains(k, "height")
		weight := strings.Contains(k, "weight")
		if !height && !weight {
			continue
		}
		lo, hi := &row.minH, &row.maxH
		if weight {
			lo, hi = &row.minW, &row.maxW
		}
		switch v.Kind {
		case jsonx.Number:
			it.numbers = append(it.numbers, v.Num)
			switch {
			case strings.Contains(k, "min"):
				*lo = v.Num
			case strings.Contains(k, "max"):
				*hi = v.Num
			}
		case jsonx.String:
			a, b, ok := parseRange(v.Str)
			if ok {
				*lo, *hi = a, b
				it.numbers = append(it.numbers, a, b)
			}
		}
	}
	it.chart = append(it.chart, row)
}

// parseRange reads "165-175", "165~175cm", "185+" or "≤50".
func parseRange(s string) (float64, float64, bool) {
	s = normalize(s)
	var nums []float64
	for _, t := range scanFacts(s) {
		if t.kind == tokNumber {
			nums = append(nums, t.v)
		}
	}
	switch {
	case len(nums) >= 2:
		return nums[0], nums[1], true
	case len(nums) == 1 && (strings.Contains(s, "+") || strings.Contains(s, "以上") || strings.Contains(s, "≥")):
		return nums[0], 0, true
	case len(nums) == 1 && (strings.Contains(s, "以下") || strings.Contains(s, "≤")):
		return 0, nums[0], true
	}
	return 0, 0, false
}

// addCoupons reads a coupon object or a list of them: a fixed amount
// ("amount") or a percentage ("percent_off"), and the spend it needs.
func (tf *turnFacts) addCoupons(it *itemFacts, v *jsonx.Value) {
	switch v.Kind {
	case jsonx.Array:
		for _, e := range v.Elems {
			tf.addCoupons(it, e)
		}
	case jsonx.Object:
		var c coupon
		for i, k := range v.Keys {
			x := v.Elems[i].Number()
			switch k := asciiLower(k); {
			case k == "amount" || k == "value" || k == "off":
				c.amount = toFen(x)
			case strings.Contains(k, "spend") || strings.Contains(k, "threshold") || k == "min_order":
				c.minSpend = toFen(x)
			case strings.Contains(k, "percent"):
				c.percent = x
			}
		}
		if c.amount > 0 || c.percent > 0 {
			it.coupons = append(it.coupons, c)
		}
	}
}
