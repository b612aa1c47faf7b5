package main

import (
	"bytes"
	"errors"
	"math"
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

// variantStock is the stock of one variant ("" for the item as a whole).
type variantStock struct {
	name  string
	stock int
}

// sizeRow is a row of a size chart; a zero bound is open.
type sizeRow struct {
	size                       string
	minH, maxH, minW, maxW     float64
	hasHeight, hasWeight, open bool
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

	price, listPrice int64 // fen; 0 when no result gave one
	money            []keyedFen
	coupons          []coupon
	eligible         *bool
	quantities       []float64
	numbers          []float64
	stock            []variantStock
	hasStock         bool
	variants         []string
	sizes            []string
	chart            []sizeRow
	dates            []datedFact
	times            [][2]float64
	durations        []durationFact
	percents         []float64
	values           []keyed
	texts            []string
	flags            []flag
	attrs            [][2]string
	pinned           bool
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
	for _, c := range t.Calls {
		tf.addCall(c)
	}
	for _, c := range t.Context {
		text := c.Title + ": " + c.Text
		tf.addText(tf.global, "context", text)
		tf.kindSourcesLower = append(tf.kindSourcesLower, strings.ToLower(text))
	}
	msg := normalize(t.Message)
	tf.kindSourcesLower = append(tf.kindSourcesLower, strings.ToLower(msg))
	for _, tok := range scan(msg, make([]bool, len(msg))) {
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
	l := strings.ToLower(n)
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
	a = strings.ToLower(strings.TrimSpace(a))
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

// callItemIDs returns the item ids a call names: in its arguments and at
// the top of its result. The host looks these items up in the catalog.
func callItemIDs(c Call) []string {
	var out []string
	for _, raw := range [][]byte{c.Arguments, c.Result} {
		n, err := parseJSON(raw)
		if err != nil {
			continue
		}
		if id := strings.TrimSpace(n.str("item_id")); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// statedLinks returns the link numbers a reply states ("3号链接", "link
// 3"); the host looks up the items at them.
func statedLinks(reply string) []int {
	text := normalize(reply)
	var out []int
	for _, t := range scan(text, make([]bool, len(text))) {
		if n := int(t.v); t.kind == tokLink && n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// addCall adds the facts of one tool call's result.
func (tf *turnFacts) addCall(c Call) {
	if exportOf(c) == "load_skill" {
		return
	}
	root, err := parseJSON(c.Result)
	if err != nil || (root.kind != 'o' && root.kind != 'a') {
		return // not JSON: a skill's text, nothing to back a fact with
	}
	args, _ := parseJSON(c.Arguments)
	argID := ""
	if args != nil {
		argID = args.str("item_id")
	}
	if root.kind == 'o' && root.get("error") != nil {
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
	tf.walk(root, owner, "")
	if owner == nil && len(tf.items) > before {
		owner = tf.items[before]
	}
	if exportOf(c) == "send_link" {
		tf.pinnedAny = true
		if owner != nil {
			owner.pinned = true
		}
	}
	if owner != nil {
		owner.inPlay = true
		tf.kindSourcesLower = append(tf.kindSourcesLower, owner.names...)
	}
}

// walk adds the facts of a JSON value to it (nil: the value names its
// own item, or none).
func (tf *turnFacts) walk(n *jnode, it *itemFacts, key string) {
	switch n.kind {
	case 'o':
		if id := n.str("item_id"); id != "" {
			it = tf.item(id)
			it.inPlay = true
		}
		target := it
		if target == nil {
			target = tf.global
		}
		for i, k := range n.keys {
			tf.member(target, strings.ToLower(k), n.vals[i], n)
		}
	case 'a':
		for _, v := range n.vals {
			tf.walk(v, it, key)
		}
	default:
		target := it
		if target == nil {
			target = tf.global
		}
		tf.member(target, key, n, nil)
	}
}

// member adds one member of an object (parent) to the facts of it.
func (tf *turnFacts) member(it *itemFacts, k string, v *jnode, parent *jnode) {
	switch {
	case k == "item_id" || k == "id" || strings.HasSuffix(k, "_id"):
		if v.kind == 's' && v.s != "" {
			tf.ids = append(tf.ids, v.s)
		}
		return
	case (k == "name" || k == "title") && v.kind == 's' && parent != nil && parent.get("item_id") != nil:
		it.addName(v.s)
	case k == "currency" && v.kind == 's':
		tf.currency = strings.ToUpper(v.s)
		return
	case k == "stock" || k == "inventory" || k == "stock_left":
		tf.addStock(it, "", v)
		return
	case k == "variants":
		tf.addVariants(it, v)
		return
	case k == "size_chart" || k == "sizes" || k == "size_table":
		if v.kind == 'a' {
			for _, row := range v.vals {
				tf.addSizeRow(it, row)
			}
			return
		}
	case k == "coupon" || k == "coupons":
		tf.addCoupons(it, v)
	case k == "eligible" && v.kind == 'b':
		b := v.b
		it.eligible = &b
	case k == "pinned" && v.kind == 'b' && v.b:
		it.pinned, tf.pinnedAny = true, true
	case (k == "sent" || k == "issued") && v.kind == 'b' && v.b && parent != nil && parent.get("coupon") != nil:
		tf.couponSent = true
	case k == "attributes" || k == "specs" || k == "spec":
		if v.kind == 'o' {
			for i, ak := range v.keys {
				if s := v.vals[i].text(); s != "" {
					it.attrs = append(it.attrs, [2]string{ak, s})
				}
			}
		}
	}
	switch v.kind {
	case 'n':
		tf.addNumber(it, k, v.n)
	case 's':
		tf.addString(it, k, v.s)
	case 'b':
		it.flags = append(it.flags, flag{k, v.b})
		if v.b {
			it.texts = append(it.texts, strings.ReplaceAll(k, "_", " "))
		}
	case 'o', 'a':
		if k != "" {
			it.texts = append(it.texts, strings.ReplaceAll(k, "_", " "))
		}
		if v.kind == 'o' {
			for i, ck := range v.keys {
				tf.member(it, strings.ToLower(ck), v.vals[i], v)
			}
		} else {
			for _, e := range v.vals {
				if e.kind == 'o' {
					tf.walk(e, it, k)
				} else {
					tf.member(it, k, e, nil)
				}
			}
		}
	}
}

func (tf *turnFacts) addNumber(it *itemFacts, k string, v float64) {
	it.numbers = append(it.numbers, v)
	it.values = append(it.values, keyed{k, v})
	switch {
	case isMoneyKey(k):
		fen := toFen(v)
		it.money = append(it.money, keyedFen{fen, k})
		switch k {
		case "price", "live_price", "sale_price", "current_price":
			it.price = fen
		case "list_price", "original_price":
			it.listPrice = fen
		}
	case strings.Contains(k, "percent") || strings.Contains(k, "pct") || strings.Contains(k, "discount"):
		it.percents = append(it.percents, v)
	case strings.Contains(k, "quantity") || k == "qty":
		it.quantities = append(it.quantities, v)
	}
	if unit, ok := durationKey(k); ok {
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
	if strings.Contains(k, "percent") || strings.Contains(k, "days") || strings.Contains(k, "hours") {
		return false
	}
	return containsAny(k, []string{"price", "amount", "spend", "total", "fee", "cost", "deposit", "saving", "threshold"})
}

// durationKey reads the unit of a key like "ships_within_days".
func durationKey(k string) (string, bool) {
	for _, u := range [][2]string{{"hours", "hour"}, {"hour", "hour"}, {"days", "day"}, {"day", "day"}, {"weeks", "week"},
		{"minutes", "minute"}, {"months", "month"}, {"month", "month"}, {"years", "year"}} {
		if strings.HasSuffix(k, u[0]) || strings.Contains(k, u[0]+"_") {
			return u[1], true
		}
	}
	return "", false
}

func (tf *turnFacts) addString(it *itemFacts, k, s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	it.texts = append(it.texts, strings.ToLower(s))
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		tf.addNumber(it, k, v)
		return
	}
	if k == "size" {
		it.sizes = appendSize(it.sizes, s)
	}
	tf.addText(it, k, s)
}

// addText adds the facts a free text states: amounts, percentages,
// dates, durations and every number.
func (tf *turnFacts) addText(it *itemFacts, k, s string) {
	s = normalize(s)
	if k == "context" {
		it.texts = append(it.texts, strings.ToLower(s))
	}
	for _, tok := range scan(s, make([]bool, len(s))) {
		it.numbers = append(it.numbers, tok.v)
		switch tok.kind {
		case tokMoney, tokPriced:
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

// addStock reads "stock": 8, {"M": 0, "L": 30} or [{"name": "M", "stock": 0}].
func (tf *turnFacts) addStock(it *itemFacts, variant string, v *jnode) {
	switch v.kind {
	case 'n':
		it.hasStock = true
		it.stock = append(it.stock, variantStock{variant, int(v.n)})
		it.numbers = append(it.numbers, v.n)
	case 'o':
		for i, k := range v.keys {
			if v.vals[i].kind == 'n' {
				tf.addStock(it, k, v.vals[i])
				it.variants = appendVariant(it.variants, k)
			}
		}
		if len(v.keys) > 1 {
			it.numbers = append(it.numbers, float64(len(v.keys)))
		}
	case 'a':
		tf.addVariants(it, v)
	}
}

// addVariants reads ["M", "L"] or [{"name": "M", "stock": 0}, …].
func (tf *turnFacts) addVariants(it *itemFacts, v *jnode) {
	if v.kind != 'a' {
		return
	}
	for _, e := range v.vals {
		switch e.kind {
		case 's':
			it.variants = appendVariant(it.variants, e.s)
			it.texts = append(it.texts, strings.ToLower(e.s))
			tf.addText(it, "variant", e.s)
		case 'o':
			name := ""
			for _, k := range []string{"name", "variant", "size", "color", "colour"} {
				if name = e.str(k); name != "" {
					break
				}
			}
			if name == "" {
				continue
			}
			it.variants = appendVariant(it.variants, name)
			it.texts = append(it.texts, strings.ToLower(name))
			if s := e.get("stock"); s != nil {
				tf.addStock(it, name, s)
			}
			for i, k := range e.keys {
				if k != "stock" && k != "name" {
					tf.member(it, strings.ToLower(k), e.vals[i], e)
				}
			}
		}
	}
	if len(v.vals) > 1 {
		it.numbers = append(it.numbers, float64(len(v.vals)))
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
// "max_height_cm": 180, …}, or ranges as text: {"size": "XL",
// "height": "185cm+"}.
func (tf *turnFacts) addSizeRow(it *itemFacts, n *jnode) {
	if n.kind != 'o' {
		return
	}
	row := sizeRow{size: strings.ToUpper(n.str("size"))}
	if row.size == "" {
		return
	}
	it.sizes = appendSize(it.sizes, row.size)
	for i, k := range n.keys {
		k = strings.ToLower(k)
		v := n.vals[i]
		height := strings.Contains(k, "height")
		weight := strings.Contains(k, "weight")
		if !height && !weight {
			continue
		}
		lo, hi := &row.minH, &row.maxH
		if weight {
			lo, hi = &row.minW, &row.maxW
			row.hasWeight = true
		} else {
			row.hasHeight = true
		}
		switch v.kind {
		case 'n':
			it.numbers = append(it.numbers, v.n)
			switch {
			case strings.Contains(k, "min"):
				*lo = v.n
			case strings.Contains(k, "max"):
				*hi = v.n
			}
		case 's':
			a, b, ok := parseRange(v.s)
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
	for _, t := range scan(s, make([]bool, len(s))) {
		nums = append(nums, t.v)
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

// addCoupons reads a coupon object or a list of them.
func (tf *turnFacts) addCoupons(it *itemFacts, v *jnode) {
	switch v.kind {
	case 'a':
		for _, e := range v.vals {
			tf.addCoupons(it, e)
		}
	case 'o':
		var c coupon
		for i, k := range v.keys {
			x := v.vals[i].number()
			switch k := strings.ToLower(k); {
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
		if c.percent > 0 {
			it.percents = append(it.percents, c.percent)
		}
	}
}

// jnode is a parsed JSON value: kind is 'o'bject, 'a'rray, 's'tring,
// 'n'umber, 'b'ool or 'z' (null).
type jnode struct {
	kind byte
	s    string
	n    float64
	b    bool
	keys []string
	vals []*jnode
}

// get returns the member k of an object, or nil.
func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, x := range n.keys {
		if x == k {
			return n.vals[i]
		}
	}
	return nil
}

// str returns the member k of an object as text ("" when absent).
func (n *jnode) str(k string) string {
	return n.get(k).text()
}

// text is a string or number value as text.
func (n *jnode) text() string {
	switch {
	case n == nil:
		return ""
	case n.kind == 's':
		return n.s
	case n.kind == 'n':
		return strconv.FormatFloat(n.n, 'f', -1, 64)
	}
	return ""
}

// number is a number or numeric string value, else 0.
func (n *jnode) number() float64 {
	switch {
	case n == nil:
		return 0
	case n.kind == 'n':
		return n.n
	case n.kind == 's':
		f, err := strconv.ParseFloat(strings.TrimSpace(n.s), 64)
		if err == nil && !math.IsNaN(f) {
			return f
		}
	}
	return 0
}

// maxDepth bounds the nesting parseJSON follows: tool results are flat.
const maxDepth = 32

// parseJSON parses a JSON value.
func parseJSON(b []byte) (*jnode, error) {
	return parseValue(b, 0)
}

func parseValue(raw []byte, depth int) (*jnode, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("empty JSON value")
	}
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deep")
	}
	r := jsonx.NewReader(raw)
	n := &jnode{}
	var err error
	switch raw[0] {
	case '{':
		n.kind = 'o'
		err = r.Object(func(k string) error {
			v, err := r.Raw()
			if err != nil {
				return err
			}
			c, err := parseValue(v, depth+1)
			if err != nil {
				return err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, c)
			return nil
		})
	case '[':
		n.kind = 'a'
		err = r.Array(func() error {
			v, err := r.Raw()
			if err != nil {
				return err
			}
			c, err := parseValue(v, depth+1)
			if err != nil {
				return err
			}
			n.vals = append(n.vals, c)
			return nil
		})
	case '"':
		n.kind = 's'
		n.s, err = r.String()
	case 't', 'f':
		n.kind = 'b'
		n.b, err = r.Bool()
	case 'n':
		n.kind = 'z'
		if !r.Null() {
			err = errors.New("bad JSON literal")
		}
	default:
		n.kind = 'n'
		n.n, err = r.Float()
	}
	if err == nil {
		err = r.End()
	}
	return n, err
}
