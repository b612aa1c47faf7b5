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
	"strings"
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
}

// Variant is a size or color of an item.
type Variant struct {
	Name  string `json:"name"`
	Stock int    `json:"stock"`
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
// reaches MinSpend.
type Coupon struct {
	ID       string `json:"id"`
	ItemID   string `json:"item_id"`
	Amount   int64  `json:"amount"`
	MinSpend int64  `json:"min_spend"`
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
	// variety is RoomConfig.Variety: its viewers ask in more ways too.
	variety int
}

// Price is the current price of the item: list price less the promotion,
// rounded to whole fen.
func (it Item) Price() int64 {
	if it.PromoPercentOff == 0 {
		return it.ListPrice
	}
	return it.ListPrice * int64(100-it.PromoPercentOff) / 100
}

// Name returns the item's name in a language.
func (it Item) Name(l Lang) string {
	if l == LangZH {
		return it.NameZH
	}
	return it.NameEN
}

// TotalStock sums the stock of every variant.
func (it Item) TotalStock() int {
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

// Coupon returns the coupon for an item, if it has one.
func (r *Room) Coupon(itemID string) (Coupon, bool) {
	for _, c := range r.Coupons {
		if c.ItemID == itemID {
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
	return Item{}, false
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
	//  4. slug ids in two rooms of five instead of one.
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
			it = newItem(rng, cat, i+1, cfg.Variety >= 1)
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

func newItem(rng *rand.Rand, cat Category, index int, varied bool) Item {
	kind := pick(rng, productKinds(cat))
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
