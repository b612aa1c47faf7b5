// Package liveroom is the simulated live room that Harness-Aware Training
// learns in and the evaluation suites score against: seeded catalogs of
// items with prices, promotions, coupons, stock, size charts and shipping;
// viewers who ask the questions seen in real live rooms, each with a gold
// (the tool calls a correct agent makes and the facts its answer must and
// must not state); the room's tools; a rule-based grader; and a scripted
// expert policy that solves the room through the tools.
//
// Everything is reproducible from a seed, and everything the grader checks
// is a rule over the catalog, so a grade can be explained point by point.
package liveroom

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/harness/catalog"
)

// Lang is the language of a viewer message or a reply.
type Lang string

// Languages of the room.
const (
	LangZH Lang = "zh"
	LangEN Lang = "en"
)

// Category is a product category with its own attributes and phrasing.
type Category string

// Categories.
const (
	Cosmetics   Category = "cosmetics"
	Apparel     Category = "apparel"
	Electronics Category = "electronics"
	Food        Category = "food"
	Home        Category = "home"
)

// Categories lists every category in a fixed order.
func Categories() []Category {
	return []Category{Cosmetics, Apparel, Electronics, Food, Home}
}

// Item is one product on the stream. Money is in fen (1/100 yuan) so that
// every price is exact.
type Item struct {
	ID       string   `json:"id"`
	Category Category `json:"category"`
	NameEN   string   `json:"name_en"`
	NameZH   string   `json:"name_zh"`
	// Aliases are what viewers call the item ("the red one", "1号链接").
	Aliases []string `json:"aliases,omitempty"`
	// ListPrice is the price before the promotion.
	ListPrice int64 `json:"list_price"`
	// PromoPercentOff, when non-zero, is the live-only discount.
	PromoPercentOff int `json:"promo_percent_off,omitempty"`
	// Variants are sizes or colors with their stock.
	Variants []Variant `json:"variants"`
	// Attributes are facts viewers ask about (material, volume, battery…),
	// in English and Chinese.
	Attributes []Attribute `json:"attributes"`
	// SizeChart is set for apparel.
	SizeChart []SizeRow `json:"size_chart,omitempty"`
	Shipping  Shipping  `json:"shipping"`

	// The fields below hold the facts of the catalog schema (package
	// harness/catalog) that NewRoom never generates. They are set on items
	// read from a catalog (RoomFromCatalog) and left out of JSON when
	// unset, so that generated rooms are what they always were.

	// FromCatalog marks an item read from a catalog: its facts are exactly
	// the catalog's. Its price is LivePrice (ListPrice is the stated list
	// price, 0 when none), its stock is Stock and its variants', its
	// delivery and returns are Delivery and Returns (Shipping is unused),
	// and its name is NameZH, the catalog's name (NameEN is empty).
	FromCatalog bool `json:"from_catalog,omitempty"`
	// Link is the item's position in the live cart ("3号链接"); 0 when
	// none is stated.
	Link        int    `json:"link,omitempty"`
	Description string `json:"description,omitempty"`
	// LivePrice is the current price, in fen, of an item read from a
	// catalog.
	LivePrice int64 `json:"live_price,omitempty"`
	// Stock is the item's own stated count; nil when not stated.
	Stock           *int               `json:"stock,omitempty"`
	StockState      catalog.StockState `json:"stock_state,omitempty"`
	RestockDate     catalog.Date       `json:"restock_date,omitzero"`
	PresaleShipDate catalog.Date       `json:"presale_ship_date,omitzero"`
	LimitPerBuyer   int                `json:"limit_per_buyer,omitempty"`
	// Specs are the item's typed facts, with units.
	Specs       []catalog.Spec `json:"specs,omitzero"`
	Ingredients []string       `json:"ingredients,omitzero"`
	// Allergens is nil when not stated and empty when the catalog states
	// there are none.
	Allergens      []string     `json:"allergens,omitzero"`
	ShelfLifeDays  int          `json:"shelf_life_days,omitempty"`
	BestBefore     catalog.Date `json:"best_before,omitzero"`
	Certifications []string     `json:"certifications,omitzero"`
	// Delivery and Returns are what the catalog states about delivery
	// and returns; nil when it states nothing.
	Delivery *catalog.Shipping `json:"delivery,omitempty"`
	Returns  *catalog.Returns  `json:"returns,omitempty"`
}

// Variant is a size or color of an item.
type Variant struct {
	Name  string `json:"name"`
	Stock int    `json:"stock"`

	// Read from a catalog only (see Item.FromCatalog):

	// Axis is what the variants of one kind vary in ("colour", "size").
	Axis string `json:"axis,omitempty"`
	// Price is the variant's own price in fen; nil when it sells at the
	// item's price.
	Price *int64 `json:"price,omitempty"`
	// NoOwnStock says the variant states no stock count of its own: Stock
	// is 0 and means nothing, and its stock is the item's.
	NoOwnStock  bool               `json:"no_own_stock,omitempty"`
	StockState  catalog.StockState `json:"stock_state,omitempty"`
	RestockDate catalog.Date       `json:"restock_date,omitzero"`
}

// Attribute is one fact about an item.
type Attribute struct {
	Key     string `json:"key"`
	KeyZH   string `json:"key_zh"`
	Value   string `json:"value"`
	ValueZH string `json:"value_zh"`
}

// SizeRow maps a body range to a size. A viewer fits the first row whose
// height and weight ranges both contain theirs.
type SizeRow struct {
	Size      string `json:"size"`
	MinHeight int    `json:"min_height_cm"`
	MaxHeight int    `json:"max_height_cm"`
	MinWeight int    `json:"min_weight_kg"`
	MaxWeight int    `json:"max_weight_kg"`
}

// Shipping is an item's delivery and return policy.
type Shipping struct {
	// Days is the promised shipping time from order to dispatch.
	Days int `json:"days"`
	// Fee is the shipping fee; zero means free shipping.
	Fee int64 `json:"fee"`
	// ReturnDays is the no-reason return window; zero means no returns
	// (food, for example).
	ReturnDays int `json:"return_days"`
}

// Coupon is a store coupon. It applies to one item (ItemID) when the order
// reaches MinSpend. A coupon read from a catalog has no ItemID: it applies
// to the items ItemIDs names, or to every item when ItemIDs is empty.
type Coupon struct {
	ID       string `json:"id"`
	ItemID   string `json:"item_id"`
	Amount   int64  `json:"amount"`
	MinSpend int64  `json:"min_spend"`

	// Read from a catalog only:

	// Name is the coupon's name as the catalog states it; a generated
	// coupon is named "满{MinSpend}减{Amount}" in the catalog export.
	Name    string   `json:"name,omitempty"`
	ItemIDs []string `json:"item_ids,omitzero"`
	// Percent is the percent off of a percent coupon, whose Amount is 0.
	Percent        float64 `json:"percent,omitempty"`
	NewViewersOnly bool    `json:"new_viewers_only,omitempty"`
	// Remaining is how many can still be claimed; nil when not stated.
	Remaining *int      `json:"remaining,omitempty"`
	PerBuyer  int       `json:"per_buyer,omitempty"`
	Starts    time.Time `json:"starts,omitzero"`
	Ends      time.Time `json:"ends,omitzero"`
}

// AppliesTo reports whether the coupon is for the item.
func (c Coupon) AppliesTo(itemID string) bool {
	if c.ItemID != "" {
		return c.ItemID == itemID
	}
	return len(c.ItemIDs) == 0 || slices.Contains(c.ItemIDs, itemID)
}

// Merchant is the stream's owner: persona, strategy and banned claims.
type Merchant struct {
	Name         string   `json:"name"`
	HostName     string   `json:"host_name"`
	Persona      string   `json:"persona"`
	BannedClaims []string `json:"banned_claims"`
}

// Room is a generated live room: a merchant, its catalog and coupons, and
// the featured item.
type Room struct {
	Seed     uint64   `json:"seed"`
	Merchant Merchant `json:"merchant"`
	Items    []Item   `json:"items"`
	Coupons  []Coupon `json:"coupons"`
	Featured string   `json:"featured"`

	// Read from a catalog only (RoomFromCatalog):

	// Stream is the catalog's stream label; the export of a generated
	// room names it "liveroom-{Seed}".
	Stream string `json:"stream,omitempty"`
	// Currency is the catalog's currency; empty means CNY.
	Currency string `json:"currency,omitempty"`
	// Promotions are the catalog's offers that apply without a coupon.
	Promotions []catalog.Promotion `json:"promotions,omitzero"`
	// Now is the stream's clock, at which the room's tools read coupon and
	// promotion windows; the zero time is before every window.
	Now time.Time `json:"now,omitzero"`

	// variety is RoomConfig.Variety: its viewers ask in more ways too.
	variety int
}

// Price is the current price of the item: list price less the promotion,
// rounded to whole fen, or the catalog's price for an item read from one.
func (it Item) Price() int64 {
	switch {
	case it.FromCatalog:
		return it.LivePrice
	case it.PromoPercentOff == 0:
		return it.ListPrice
	}
	return it.ListPrice * int64(100-it.PromoPercentOff) / 100
}

// Name returns the item's name in a language; an item read from a
// catalog has one name, the catalog's, in every language.
func (it Item) Name(l Lang) string {
	if l == LangZH || it.NameEN == "" {
		return it.NameZH
	}
	return it.NameEN
}

// TotalStock is the item's stock count: the sum of its variants' stock,
// or for an item read from a catalog its stated count, else the sum of the
// counts its variants state (0 when none is stated: see StockState).
func (it Item) TotalStock() int {
	if it.Stock != nil {
		return *it.Stock
	}
	n := 0
	for _, v := range it.Variants {
		n += v.Stock
	}
	return n
}

// Item returns the item with the given id.
func (r *Room) Item(id string) (Item, bool) {
	for _, it := range r.Items {
		if it.ID == id {
			return it, true
		}
	}
	return Item{}, false
}

// Coupon returns the first coupon for an item, if it has one. A room read
// from a catalog may have several; coupon_check chooses the best of them
// for an order (see CouponsFor).
func (r *Room) Coupon(itemID string) (Coupon, bool) {
	for _, c := range r.Coupons {
		if c.AppliesTo(itemID) {
			return c, true
		}
	}
	return Coupon{}, false
}

// Resolve finds the item a viewer means by an id, a name or an alias, in
// either language, ignoring case and spaces. It reports false when nothing
// or more than one item matches.
func (r *Room) Resolve(query string) (Item, bool) {
	q := normalizeName(query)
	if q == "" {
		return Item{}, false
	}
	var found []Item
	for _, it := range r.Items {
		for _, n := range append([]string{it.ID, it.NameEN, it.NameZH}, it.Aliases...) {
			if normalizeName(n) == q {
				found = append(found, it)
				break
			}
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	if n, ok := LinkNumber(query); ok {
		for _, it := range r.Items {
			if it.Link == n {
				return it, true
			}
		}
	}
	// A viewer often names only part of an item ("the serum"): accept a
	// unique containment match.
	found = found[:0]
	for _, it := range r.Items {
		if strings.Contains(normalizeName(it.NameEN), q) || strings.Contains(normalizeName(it.NameZH), q) {
			found = append(found, it)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return r.mentioned(query)
}

// mentioned finds the one item whose name or alias a longer text
// mentions ("空气炸锅能用券吗"), as the storefront plugin's lookup does:
// when several items are mentioned, none is.
func (r *Room) mentioned(text string) (Item, bool) {
	t := strings.ToLower(text)
	var found []Item
	for _, p := range r.Catalog().Products {
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" && strings.Contains(t, n) {
				it, _ := r.Item(p.ID)
				found = append(found, it)
				break
			}
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return Item{}, false
}

// linkNumberPattern is a link number as viewers write it: ASCII or
// full-width digits, or Chinese numerals up to 九十九.
const linkNumberPattern = `([0-9０-９]{1,3}|[一二两三四五六七八九十]{1,3})`

var (
	// wholeLink matches a query that is nothing but a link reference:
	// "3号", "第3号链接", "3号宝贝", "link 3", "#3", "链接3".
	wholeLink = regexp.MustCompile(`(?i)^(?:第\s*)?` + linkNumberPattern + `\s*号\s*(?:链接|商品|宝贝)?$|^(?:link|item|no\.?|#|链接)\s*#?\s*` + linkNumberPattern + `$`)
	// partLink matches a link reference inside a longer text: "3号链接
	// 多少钱", "what about link 3?".
	partLink = regexp.MustCompile(`(?i)` + linkNumberPattern + `\s*号\s*链接|链接\s*` + linkNumberPattern + `|\blink\s*#?\s*` + linkNumberPattern)
)

// LinkNumber reads the cart position a query names ("3号链接", "link 3",
// "3号", "三号链接", "3号链接多少钱"), as product_lookup (the room's and the
// storefront plugin's) finds items that state their link.
func LinkNumber(query string) (int, bool) {
	q := strings.TrimSpace(query)
	m := wholeLink.FindStringSubmatch(q)
	if m == nil {
		if m = partLink.FindStringSubmatch(q); m == nil {
			return 0, false
		}
	}
	for _, g := range m[1:] {
		if g != "" {
			return parseLinkNumber(g)
		}
	}
	return 0, false
}

// parseLinkNumber reads a number of one to three digits (ASCII or
// full-width) or a Chinese numeral from 一 to 九十九.
func parseLinkNumber(s string) (int, bool) {
	digits := strings.Map(func(r rune) rune {
		if r >= '０' && r <= '９' {
			return '0' + (r - '０')
		}
		return r
	}, s)
	if n, err := strconv.Atoi(digits); err == nil {
		return n, n > 0
	}
	unit := func(r rune) int {
		if r == '两' {
			return 2
		}
		if i := strings.IndexRune("一二三四五六七八九", r); i >= 0 {
			return i/len("一") + 1
		}
		return 0
	}
	rs := []rune(s)
	n := 0
	switch {
	case len(rs) == 1 && rs[0] == '十':
		n = 10
	case len(rs) == 1:
		n = unit(rs[0])
	case len(rs) == 2 && rs[0] == '十' && unit(rs[1]) > 0:
		n = 10 + unit(rs[1])
	case len(rs) == 2 && rs[1] == '十':
		n = 10 * unit(rs[0])
	case len(rs) == 3 && rs[1] == '十' && unit(rs[0]) > 0 && unit(rs[2]) > 0:
		n = 10*unit(rs[0]) + unit(rs[2])
	}
	return n, n > 0
}

func normalizeName(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), ""))
}

// Yuan formats fen as yuan: "199", or "199.50" when there are fen.
func Yuan(fen int64) string {
	if fen%100 == 0 {
		return fmt.Sprintf("%d", fen/100)
	}
	return fmt.Sprintf("%d.%02d", fen/100, fen%100)
}

// RoomConfig sizes a generated room.
type RoomConfig struct {
	// MinItems and MaxItems bound the catalog size; defaults 3 and 6.
	MinItems, MaxItems int
	// Variety makes rooms the way a wider range of merchants and viewers
	// do, in levels that each add to the one before, so that a run made
	// at one level can be made again:
	//
	//  1. a third of the items carry no brand ("修护面霜", "Repair Face
	//     Cream") and names draw from a larger bank of descriptors; size
	//     charts differ from item to item; viewers may shorten a kind
	//     ("精华" for 精华液, "the cream") and leave units out;
	//  2. two to five wordings per question type and language, and stock
	//     questions about an item as a whole;
	//  3. slug ids that carry the name, a number or a prefix;
	//  4. slug ids in two rooms of five instead of one;
	//  5. open kinds: a third of the items are kinds of moreKinds and a
	//     sixth kinds invented from random characters, so that names
	//     must be copied from the catalog rather than recalled.
	//
	// At 0 a seed gives the rooms it always gave, so the evaluation suites
	// stay fixed. Level -1 gives the rooms of before the suites of
	// f095ece, which the recipe's first stages were trained on: items
	// numbered by category code only and named by their full name or link
	// number, never by their kind.
	Variety int `json:",omitempty"`
}

// NewRoom generates a room from a seed. The same seed and config always
// give the same room.
func NewRoom(seed uint64, cfg RoomConfig) *Room {
	if cfg.MinItems <= 0 {
		cfg.MinItems = 3
	}
	if cfg.MaxItems < cfg.MinItems {
		cfg.MaxItems = max(cfg.MinItems, 6)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c697665726f6f6d)) // "liveroom"
	r := &Room{Seed: seed, variety: cfg.Variety}
	host := pick(rng, hostNames())
	r.Merchant = Merchant{
		Name:         brandName(rng) + " Live Shop",
		HostName:     host,
		Persona:      fmt.Sprintf("You are %s, the host of this live shop: warm, quick and precise.", host),
		BannedClaims: bannedClaims(),
	}
	n := cfg.MinItems + rng.IntN(cfg.MaxItems-cfg.MinItems+1)
	usedNames := map[string]bool{}
	for i := range n {
		cat := Categories()[rng.IntN(len(Categories()))]
		var it Item
		for {
			kind := pick(rng, productKinds(cat))
			if cfg.Variety >= 5 {
				kind = openKind(rng, cat)
			}
			it = newItem(rng, cat, kind, i+1, cfg.Variety >= 1)
			if !usedNames[it.NameEN] && !usedNames[it.NameZH] {
				break
			}
		}
		usedNames[it.NameEN], usedNames[it.NameZH] = true, true
		r.Items = append(r.Items, it)
		if rng.IntN(100) < 60 {
			price := it.Price()
			amount := int64(5+rng.IntN(6)*5) * 100
			if amount >= price {
				amount = max(100, price/10/100*100)
			}
			minSpend := price
			if rng.IntN(2) == 0 {
				minSpend = price * 2 // needs two pieces
			}
			r.Coupons = append(r.Coupons, Coupon{ID: fmt.Sprintf("C%d", i+1), ItemID: it.ID, Amount: amount, MinSpend: minSpend})
		}
	}
	r.Featured = r.Items[rng.IntN(len(r.Items))].ID
	if cfg.Variety >= 0 {
		r.restyleIDs(rand.New(rand.NewPCG(seed, 0x6964207374796c65))) // "id style"
	}
	return r
}

// restyleIDs renumbers the items in one of the schemes merchants use —
// category codes ("CO112"), slugs ("p-face-cream"), SKUs ("SKU40213") or
// long platform numbers ("6523418890") — so that a model learns to copy
// an id whatever its shape. It draws from its own generator, so the rest
// of a room does not depend on it.
func (r *Room) restyleIDs(rng *rand.Rand) {
	style := rng.IntN(5)
	if r.variety >= 4 && style == 0 {
		// Slugs are what models copy worst: twice as many, in place of
		// category codes.
		style = 2
	}
	if style < 2 {
		return // the category codes newItem gives
	}
	ids := map[string]string{}
	used := map[string]bool{}
	for i := range r.Items {
		it := &r.Items[i]
		var id string
		for id == "" || used[id] {
			switch style {
			case 2:
				id = "p-" + slug(it.Aliases[2])
				if r.variety >= 3 {
					// Slugs a model can only copy, not derive from the kind.
					switch rng.IntN(4) {
					case 1:
						id = "p-" + slug(it.NameEN)
					case 2:
						id = fmt.Sprintf("%s-%02d", slug(it.Aliases[2]), 1+rng.IntN(99))
					case 3:
						id = fmt.Sprintf("p%d-%s", 1+rng.IntN(999), slug(it.Aliases[2]))
					}
				}
				if used[id] {
					id = fmt.Sprintf("%s-%d", id, i+1)
				}
			case 3:
				id = fmt.Sprintf("SKU%05d", rng.IntN(100000))
			default:
				id = fmt.Sprintf("%d", 5_000_000_000+rng.Int64N(4_000_000_000))
			}
		}
		used[id] = true
		ids[it.ID], it.ID = id, id
	}
	for i := range r.Coupons {
		r.Coupons[i].ItemID = ids[r.Coupons[i].ItemID]
	}
	r.Featured = ids[r.Featured]
}

// slug is a name as an id part: "Face Cream" → "face-cream".
func slug(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), " ", "-")
}

func newItem(rng *rand.Rand, cat Category, kind productKind, index int, varied bool) Item {
	brand := brandName(rng)
	brandZH := brandNameZH(rng)
	descs := descriptors()
	if varied {
		descs = append(descs, moreDescriptors()...)
	}
	desc := pick(rng, descs)
	it := Item{
		ID:       fmt.Sprintf("%s%d", strings.ToUpper(string(cat[:2])), 100+index*7+rng.IntN(7)),
		Category: cat,
		NameEN:   fmt.Sprintf("%s %s %s", brand, desc.en, kind.en),
		NameZH:   brandZH + desc.zh + kind.zh,
		Aliases:  []string{fmt.Sprintf("%d号链接", index), fmt.Sprintf("link %d", index), kind.en, kind.zh},
	}
	if varied && rng.IntN(3) == 0 {
		it.NameEN, it.NameZH = desc.en+" "+kind.en, desc.zh+kind.zh
	}
	it.ListPrice = int64(kind.minPrice+rng.IntN(kind.maxPrice-kind.minPrice+1)) * 100
	if rng.IntN(100) < 40 {
		it.PromoPercentOff = []int{5, 10, 15, 20, 30}[rng.IntN(5)]
	}
	names := variantNames(rng, cat)
	if cat == Apparel {
		it.SizeChart = sizeChart()
		if varied {
			// Merchants' charts differ: a model must read the chart it
			// is given, not recall one.
			it.SizeChart = variedSizeChart(rng)
			names = names[:0]
			for _, r := range it.SizeChart {
				names = append(names, r.Size)
			}
		}
	}
	for _, v := range names {
		stock := 0
		switch roll := rng.IntN(10); {
		case roll < 2:
			stock = 0
		case roll < 4:
			stock = 1 + rng.IntN(19)
		default:
			stock = 20 + rng.IntN(480)
		}
		it.Variants = append(it.Variants, Variant{Name: v, Stock: stock})
	}
	for _, a := range attributes(rng, cat) {
		it.Attributes = append(it.Attributes, a)
	}
	it.Shipping = Shipping{Days: 1 + rng.IntN(5), ReturnDays: 7}
	if rng.IntN(3) == 0 {
		it.Shipping.Fee = int64(6+rng.IntN(10)) * 100
	}
	if cat == Food {
		it.Shipping.ReturnDays = 0
	}
	return it
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }
