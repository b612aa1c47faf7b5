// Package rehearsal writes the practice questions a merchant runs before
// going on air: what viewers commonly ask about the merchant's own
// catalog (price, stock, a variant, size, coupon, promotion, link,
// shipping, returns, ingredients, allergens, specs), in Chinese or
// English. The questions are derived from the catalog's fields alone and
// are deterministic, so two rehearsals of the same catalog ask the same
// things. A question may ask about a fact the catalog does not state:
// that is what viewers do, and the host must then say it is not stated
// rather than invent it.
package rehearsal

import (
	"fmt"
	"math"
	"strings"

	"github.com/livehat/livehat/harness/catalog"
)

// Category names what a question asks about.
type Category string

// The categories, in the order Questions asks them.
const (
	Price       Category = "price"
	Stock       Category = "stock"
	Variant     Category = "variant"
	Size        Category = "size"
	Coupon      Category = "coupon"
	Promotion   Category = "promotion"
	Link        Category = "link"
	Shipping    Category = "shipping"
	Returns     Category = "returns"
	Ingredients Category = "ingredients"
	Allergens   Category = "allergens"
	Spec        Category = "spec"
)

// Categories lists every category in the order Questions asks them.
func Categories() []Category {
	return []Category{Price, Stock, Variant, Size, Coupon, Promotion, Link, Shipping, Returns, Ingredients, Allergens, Spec}
}

// Question is one practice question.
type Question struct {
	// Category is what the question asks about.
	Category Category `json:"category"`
	// Item is the id of the catalog item it asks about.
	Item string `json:"item"`
	// Text is the question as a viewer writes it.
	Text string `json:"text"`
	// Stated says whether the catalog states the fact asked for; when it
	// does not, the right answer says so.
	Stated bool `json:"stated"`
}

// Questions returns up to limit practice questions for the catalog in lang
// ("zh" for Chinese, anything else English): one per category in the
// order of Categories, each about an item the category fits (items that
// state the fact first, then those that should and do not), the one with
// the fewest questions so far, so the questions spread over the catalog;
// then further rounds over the next items. limit ≤ 0 means no limit. An
// empty catalog has no questions.
func Questions(c *catalog.Catalog, lang string, limit int) []Question {
	zh := lang == "zh"
	var out []Question
	seen := map[string]bool{}
	// used counts the questions each item got, so the rounds spread over
	// the catalog.
	used := map[string]int{}
	for round := 0; round < len(c.Products); round++ {
		added := false
		for _, cat := range Categories() {
			if limit > 0 && len(out) >= limit {
				return out
			}
			q, ok := pick(c, cat, zh, round, used)
			if !ok || seen[q.Text] {
				continue
			}
			seen[q.Text] = true
			used[q.Item]++
			out = append(out, q)
			added = true
		}
		if !added {
			break
		}
	}
	return out
}

// pick writes the question of a category about an item that fits it:
// from the round-th on (items that state the fact counted before those
// that do not), the first with the fewest questions so far.
func pick(c *catalog.Catalog, cat Category, zh bool, round int, used map[string]int) (Question, bool) {
	var stated, unstated []Question
	for i := range c.Products {
		p := &c.Products[i]
		q, ok, has := ask(c, p, cat, zh)
		if !ok {
			continue
		}
		q.Category, q.Item, q.Stated = cat, p.ID, has
		if has {
			stated = append(stated, q)
		} else {
			unstated = append(unstated, q)
		}
	}
	all := append(stated, unstated...)
	if round >= len(all) {
		return Question{}, false
	}
	best := round
	for k := round; k < len(all); k++ {
		if used[all[k].Item] < used[all[best].Item] {
			best = k
		}
	}
	return all[best], true
}

// ask writes a category's question about an item. ok is false when the
// category does not fit the item; stated says whether the catalog states
// the fact asked for.
func ask(c *catalog.Catalog, p *catalog.Product, cat Category, zh bool) (q Question, ok, stated bool) {
	say := func(en, zhText string) Question {
		if zh {
			return Question{Text: zhText}
		}
		return Question{Text: en}
	}
	name := p.Name
	switch cat {
	case Price:
		return say("How much is the "+name+"?", name+"多少钱？"), true, true
	case Stock:
		_, known := stockOf(p)
		return say("Is the "+name+" still in stock?", name+"还有货吗？"), true, known || catalog.StockStateOf(*p) != ""
	case Variant:
		if len(p.Variants) == 0 {
			return Question{}, false, false
		}
		v := p.Variants[len(p.Variants)-1]
		known := v.Stock != nil || v.StockState != ""
		return say("Is the "+v.Name+" "+name+" still available?", name+"的"+v.Name+"还有吗？"), true, known
	case Size:
		if !Apparel(p) {
			return Question{}, false, false
		}
		h, w := 165.0, 55.0
		if len(p.SizeChart) > 0 {
			h, w = middle(p.SizeChart[0])
		}
		return say(fmt.Sprintf("I'm %s cm and %s kg, which size of the %s should I get?", num(h), num(w), name),
			fmt.Sprintf("我身高%s体重%s公斤，%s穿什么码？", num(h), num(w), name)), true, len(p.SizeChart) > 0
	case Coupon:
		return say("Is there a coupon for the "+name+"?", name+"有优惠券吗？"), true, len(couponsFor(c, p.ID)) > 0
	case Promotion:
		if !promoted(c, p.ID) {
			return Question{}, false, false
		}
		return say("Is there a deal on the "+name+" right now?", name+"现在有什么活动？"), true, true
	case Link:
		return say("Which link is the "+name+"?", name+"是几号链接？"), true, p.Link > 0
	case Shipping:
		known := p.Shipping != nil && (p.Shipping.DispatchHours > 0 || p.Shipping.Fee != nil)
		return say("When does the "+name+" ship, and is shipping free?", name+"多久发货？包邮吗？"), true, known
	case Returns:
		return say("Can I return the "+name+" if it doesn't suit me?", name+"不合适可以退吗？"), true, p.Returns != nil
	case Ingredients:
		if !Consumable(p) && len(p.Ingredients) == 0 {
			return Question{}, false, false
		}
		return say("What are the ingredients of the "+name+"?", name+"的成分是什么？"), true, len(p.Ingredients) > 0
	case Allergens:
		if !Food(p) && p.Allergens == nil {
			return Question{}, false, false
		}
		return say("Does the "+name+" contain any allergens?", name+"含有过敏原吗？"), true, p.Allergens != nil
	case Spec:
		for _, s := range p.Specs {
			label := specLabel(s, zh)
			if label == "" {
				continue
			}
			return say("What is the "+label+" of the "+name+"?", name+"的"+label+"是多少？"), true, true
		}
		return Question{}, false, false
	}
	return Question{}, false, false
}

// stockOf is an item's stated count: its own, else its variants' sum
// when each states one.
func stockOf(p *catalog.Product) (int, bool) {
	if p.Stock != nil {
		return *p.Stock, true
	}
	if len(p.Variants) == 0 {
		return 0, false
	}
	n := 0
	for _, v := range p.Variants {
		if v.Stock == nil {
			return 0, false
		}
		n += *v.Stock
	}
	return n, true
}

// middle is a body in the middle of a size row's ranges; an open bound
// takes a typical value beside the other.
func middle(r catalog.SizeRow) (height, weight float64) {
	mid := func(lo, hi, open, step float64) float64 {
		switch {
		case lo > 0 && hi > 0:
			return math.Round((lo + hi) / 2)
		case lo > 0:
			return lo + step
		case hi > 0:
			return hi - step
		}
		return open
	}
	return mid(r.MinHeightCM, r.MaxHeightCM, 165, 3), mid(r.MinWeightKG, r.MaxWeightKG, 55, 3)
}

func num(x float64) string { return fmt.Sprintf("%g", x) }

// couponsFor are the catalog's coupons that can apply to an item,
// whatever their dates: a viewer asks either way.
func couponsFor(c *catalog.Catalog, id string) []catalog.Coupon {
	var out []catalog.Coupon
	for _, cp := range c.Coupons {
		if len(cp.Products) == 0 || containsString(cp.Products, id) {
			out = append(out, cp)
		}
	}
	return out
}

// promoted reports whether a promotion names the item.
func promoted(c *catalog.Catalog, id string) bool {
	for _, pr := range c.Promotions {
		if containsString(pr.Products, id) {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// specLabel names a spec for viewers: its label in the language, else
// its key with underscores as spaces.
func specLabel(s catalog.Spec, zh bool) string {
	if zh && s.LabelZh != "" {
		return s.LabelZh
	}
	if s.Label != "" {
		return s.Label
	}
	return strings.ReplaceAll(s.Key, "_", " ")
}

// Kinds of item by category, in English and Chinese, as merchants name
// their categories. They decide which facts viewers ask for.
func apparelWords() []string {
	return []string{"apparel", "clothing", "clothes", "fashion", "dress", "shirt", "hoodie", "coat", "jacket", "pants",
		"trousers", "skirt", "shoes", "服装", "服饰", "女装", "男装", "童装", "衣", "裤", "裙", "鞋"}
}

func foodWords() []string {
	return []string{"food", "snack", "drink", "beverage", "tea", "coffee", "grocery", "食品", "零食", "饮料", "茶", "咖啡", "生鲜", "粮油"}
}

func cosmeticWords() []string {
	return []string{"skincare", "skin care", "makeup", "cosmetic", "beauty", "personal care", "护肤", "彩妆", "美妆", "化妆", "个护"}
}

// sizeAxisWords name a variant axis of sizes; sizeNames are sizes.
func sizeAxisWords() []string { return []string{"size", "尺码", "码"} }
func sizeNames() []string     { return []string{"XS", "S", "M", "L", "XL", "XXL"} }

// Apparel reports whether viewers ask an item's size (and so want a size
// chart): its category is clothing, or its variants are sizes.
func Apparel(p *catalog.Product) bool {
	if hasWord(p.Category, apparelWords()) {
		return true
	}
	for _, v := range p.Variants {
		if hasWord(v.Axis, sizeAxisWords()) || containsString(sizeNames(), strings.ToUpper(v.Name)) {
			return true
		}
	}
	return false
}

// Food reports whether an item is eaten or drunk (viewers ask its
// allergens).
func Food(p *catalog.Product) bool { return hasWord(p.Category, foodWords()) }

// Consumable reports whether viewers ask an item's ingredients: food
// and cosmetics.
func Consumable(p *catalog.Product) bool {
	return Food(p) || hasWord(p.Category, cosmeticWords())
}

func hasWord(s string, words []string) bool {
	s = strings.ToLower(s)
	if s == "" {
		return false
	}
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
