package liveroom

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/harness/catalog"
)

// The shop family: training catalogs on the catalog schema's version 2
// with every kind of field a merchant states — links, variants on colour,
// size, volume and weight axes with their own prices and stock, typed
// specs, size charts with open bounds, ingredients, allergens, shelf life
// and best-before dates, certifications, shipping and return rules,
// coupons with thresholds, percents, new-viewer and claim limits, and
// every kind of promotion — and facts left unstated. Its items are the
// training rooms' kinds, brands and descriptors (productKinds,
// brandNameZH, descriptors), so that it shares nothing with the transfer
// family, which nothing may train on.

// ShopConfig sizes a shop catalog.
type ShopConfig struct {
	// MinItems and MaxItems bound the catalog size; defaults 3 and 6. A
	// thirty-item stream's prompt is the longest a live session shows.
	MinItems, MaxItems int
}

// shopKind is what the shop family states about items of one training
// kind: its choices and typed facts.
type shopKind struct {
	productKind
	cat Category
	// axis and variants are the kind's main choices; ownPrice gives each
	// after the first a price of its own. Apparel has sizes from its
	// chart instead.
	axis     string
	variants []string
	ownPrice bool
	specs    []specTemplate
	// recipes are a food's or cosmetic's ingredients, with the allergens
	// they hold (nil: the kind states none).
	recipes []recipe
	// shelfLife are the kind's shelf lives in days.
	shelfLife []int
}

func shopKinds() []shopKind {
	num := func(key, en, zh, unit string, xs ...float64) specTemplate {
		return specTemplate{key: key, en: en, zh: zh, unit: unit, numbers: xs}
	}
	text := func(key, en, zh string, vs ...bilingual) specTemplate {
		return specTemplate{key: key, en: en, zh: zh, texts: vs}
	}
	yesNo := func(key, en, zh string) specTemplate { return specTemplate{key: key, en: en, zh: zh, yesNo: true} }
	kinds := []shopKind{}
	add := func(cat Category, kindEN string, k shopKind) {
		for _, pk := range productKinds(cat) {
			if pk.en == kindEN {
				k.productKind, k.cat = pk, cat
				kinds = append(kinds, k)
				return
			}
		}
		panic("liveroom: no training kind " + kindEN) // a typo in the table below
	}
	skin := text("skin_type", "skin type", "适合肤质", bilingual{"all skin types", "所有肤质"}, bilingual{"dry skin", "干性肌肤"}, bilingual{"oily skin", "油性肌肤"})
	fabric := text("material", "material", "面料", bilingual{"cotton", "纯棉"}, bilingual{"polyester", "涤纶"}, bilingual{"wool blend", "羊毛混纺"})
	cosmetic := []recipe{{[]string{"水", "甘油", "烟酰胺", "透明质酸钠"}, nil}, {[]string{"水", "角鲨烷", "神经酰胺", "香精"}, nil}}
	add(Cosmetics, "Serum", shopKind{axis: "volume", variants: []string{"30ml", "50ml"}, ownPrice: true, recipes: cosmetic, shelfLife: []int{1095, 730},
		specs: []specTemplate{num("volume", "volume", "容量", "ml", 30, 50), skin, yesNo("fragrance_free", "fragrance-free", "无香精")}})
	add(Cosmetics, "Lipstick", shopKind{axis: "colour", variants: []string{"#01正红", "#02豆沙", "#03枫叶"}, recipes: cosmetic[1:], shelfLife: []int{1095},
		specs: []specTemplate{num("weight", "weight", "净含量", "g", 3.5, 3.8), text("finish", "finish", "质地", bilingual{"matte", "哑光"}, bilingual{"glossy", "水光"})}})
	add(Cosmetics, "Sunscreen", shopKind{axis: "volume", variants: []string{"40ml", "80ml"}, ownPrice: true, recipes: cosmetic[:1], shelfLife: []int{1095},
		specs: []specTemplate{text("spf", "sun protection", "防晒指数", bilingual{"SPF50+ PA++++", "SPF50+ PA++++"}, bilingual{"SPF30 PA+++", "SPF30 PA+++"}), yesNo("waterproof", "waterproof", "防水")}})
	add(Cosmetics, "Face Cream", shopKind{axis: "volume", variants: []string{"50g", "100g"}, ownPrice: true, recipes: cosmetic, shelfLife: []int{1095, 730},
		specs: []specTemplate{num("weight", "weight", "净含量", "g", 50, 100), skin}})
	add(Cosmetics, "Cleanser", shopKind{recipes: cosmetic[:1], shelfLife: []int{1095},
		specs: []specTemplate{num("volume", "volume", "容量", "ml", 100, 120, 150), skin}})
	for _, a := range []string{"Hoodie", "Down Jacket", "Jeans", "Dress", "T-shirt"} {
		k := shopKind{axis: "colour", variants: []string{"黑色", "白色", "燕麦色", "藏青"}, specs: []specTemplate{fabric,
			text("fit", "fit", "版型", bilingual{"loose fit", "宽松版"}, bilingual{"slim fit", "修身版"}, bilingual{"regular fit", "标准版"}),
			yesNo("machine_washable", "machine washable", "可机洗")}}
		if a == "Down Jacket" {
			k.specs = append(k.specs, num("fill", "down fill", "充绒量", "g", 150, 200, 250))
		}
		add(Apparel, a, k)
	}
	add(Electronics, "Earbuds", shopKind{axis: "colour", variants: []string{"black", "white", "blue"},
		specs: []specTemplate{num("battery_hours", "battery life", "续航", "h", 6, 8, 30), yesNo("noise_cancelling", "noise cancelling", "主动降噪"),
			num("weight", "weight", "重量", "g", 4.5, 5.2)}})
	add(Electronics, "Power Bank", shopKind{axis: "capacity", variants: []string{"10000mAh", "20000mAh"}, ownPrice: true,
		specs: []specTemplate{num("capacity", "capacity", "电池容量", "mAh", 10000, 20000), num("power", "output", "输出功率", "W", 20, 22.5), yesNo("fast_charging", "fast charging", "快充")}})
	add(Electronics, "Smart Watch", shopKind{axis: "colour", variants: []string{"曜石黑", "月光银", "樱花粉"},
		specs: []specTemplate{text("battery", "battery life", "续航", bilingual{"7 days", "7天"}, bilingual{"14 days", "14天"}), yesNo("waterproof", "waterproof", "防水"), text("screen", "screen size", "屏幕尺寸", bilingual{"1.43 inch", "1.43英寸"}, bilingual{"1.96 inch", "1.96英寸"})}})
	add(Electronics, "Desk Lamp", shopKind{
		specs: []specTemplate{num("power", "power", "功率", "W", 8, 12), yesNo("dimmable", "dimmable", "可调光"), text("light", "light", "光源", bilingual{"full-spectrum LED", "全光谱LED"})}})
	nuts := []recipe{{[]string{"腰果", "巴旦木", "核桃", "蔓越莓干"}, []string{"tree_nut"}}, {[]string{"花生", "葡萄干", "南瓜子"}, []string{"peanut"}}}
	add(Food, "Nut Mix", shopKind{axis: "weight", variants: []string{"25g×7袋", "25g×30袋"}, ownPrice: true, recipes: nuts, shelfLife: []int{180, 240},
		specs: []specTemplate{num("net_weight", "net weight", "净含量", "g", 175, 750), text("origin", "place of origin", "产地", bilingual{"Yunnan", "云南"}, bilingual{"Xinjiang", "新疆"})}})
	add(Food, "Green Tea", shopKind{axis: "weight", variants: []string{"125g", "250g"}, ownPrice: true, recipes: []recipe{{[]string{"绿茶"}, []string{}}}, shelfLife: []int{540, 730},
		specs: []specTemplate{text("origin", "place of origin", "产地", bilingual{"Zhejiang", "浙江"}, bilingual{"Yunnan", "云南"}), text("grade", "grade", "等级", bilingual{"first grade", "一级"}, bilingual{"special grade", "特级"})}})
	add(Food, "Beef Jerky", shopKind{axis: "flavour", variants: []string{"原味", "香辣", "五香"}, recipes: []recipe{{[]string{"牛肉", "白砂糖", "酱油", "食用盐"}, []string{"soy", "wheat"}},
		{[]string{"牛肉", "辣椒", "食用盐", "芝麻"}, []string{"sesame"}}}, shelfLife: []int{180, 270},
		specs: []specTemplate{num("net_weight", "net weight", "净含量", "g", 200, 500), text("origin", "place of origin", "产地", bilingual{"Inner Mongolia", "内蒙古"})}})
	add(Food, "Honey", shopKind{recipes: []recipe{{[]string{"蜂蜜"}, []string{}}}, shelfLife: []int{730},
		specs: []specTemplate{num("net_weight", "net weight", "净含量", "g", 500, 1000), text("flower", "nectar source", "蜜源", bilingual{"acacia", "洋槐"}, bilingual{"jujube", "枣花"})}})
	add(Home, "Pillow", shopKind{axis: "height", variants: []string{"低枕", "中枕", "高枕"},
		specs: []specTemplate{text("material", "material", "材质", bilingual{"memory foam", "记忆棉"}, bilingual{"latex", "乳胶"}), yesNo("washable_cover", "with a washable cover", "枕套可拆洗")}})
	add(Home, "Blanket", shopKind{axis: "size", variants: []string{"150×200cm", "200×230cm"}, ownPrice: true,
		specs: []specTemplate{text("material", "material", "材质", bilingual{"flannel", "法兰绒"}, bilingual{"coral fleece", "珊瑚绒"}), yesNo("machine_washable", "machine washable", "可机洗")}})
	add(Home, "Water Bottle", shopKind{axis: "colour", variants: []string{"奶白", "雾蓝", "墨黑"},
		specs: []specTemplate{num("capacity", "capacity", "容量", "ml", 350, 500, 750), num("keeps_hot", "keeps hot for", "保温时长", "h", 6, 12), text("material", "material", "材质", bilingual{"316 stainless steel", "316不锈钢"})}})
	add(Home, "Storage Box", shopKind{axis: "size", variants: []string{"小号", "中号", "大号"}, ownPrice: true,
		specs: []specTemplate{num("volume", "volume", "容积", "L", 20, 35, 55), yesNo("stackable", "stackable", "可叠放")}})
	return kinds
}

// ShopCatalog generates the shop family's catalog for a seed. The same
// seed and config always give the same catalog, and it is always a valid
// version 2 document.
func ShopCatalog(seed uint64, cfg ShopConfig) *catalog.Catalog {
	if cfg.MinItems <= 0 {
		cfg.MinItems = 3
	}
	if cfg.MaxItems < cfg.MinItems {
		cfg.MaxItems = max(cfg.MinItems, 6)
	}
	rng := rand.New(rand.NewPCG(seed, 0x73686f70206b6974)) // "shop kit"
	kinds := shopKinds()
	n := cfg.MinItems + rng.IntN(cfg.MaxItems-cfg.MinItems+1)
	c := &catalog.Catalog{Stream: fmt.Sprintf("shop-%d", seed), Currency: "CNY"}
	// Links: most streams number their cart from 1 or a later position;
	// some state none.
	firstLink := 0
	if rng.IntN(5) > 0 {
		firstLink = 1 + rng.IntN(4)
	}
	idStyle := rng.IntN(5)
	names, ids := map[string]bool{}, map[string]bool{}
	for i := range n {
		k := pick(rng, kinds)
		name := ""
		for tries := 0; name == "" || names[name]; tries++ {
			name = shopName(rng, k)
			if tries > 20 {
				name = fmt.Sprintf("%s%d号", name, i+1)
			}
		}
		names[name] = true
		id := ""
		for id == "" || ids[id] {
			id = shopID(rng, idStyle, k, i)
		}
		ids[id] = true
		link := 0
		if firstLink > 0 {
			link = firstLink + i
		}
		c.Products = append(c.Products, shopProduct(rng, k, id, name, link))
	}
	uniqueAliases(c)
	shopOffers(rng, c)
	return c
}

// ShopRoom is the room of the shop family's catalog for a seed.
func ShopRoom(seed uint64, cfg ShopConfig) (*Room, error) {
	r, err := RoomFromCatalog(ShopCatalog(seed, cfg))
	if err != nil {
		return nil, fmt.Errorf("liveroom: shop catalog %d: %w", seed, err)
	}
	r.Seed = seed
	return r, nil
}

// shopName names an item as merchants do: brand, feature word and kind,
// or without the brand.
func shopName(rng *rand.Rand, k shopKind) string {
	d := pick(rng, append(descriptors(), moreDescriptors()...))
	switch rng.IntN(4) {
	case 0:
		return d.zh + k.zh
	case 1:
		return brandNameZH(rng) + k.zh
	}
	return brandNameZH(rng) + d.zh + k.zh
}

// shopID numbers an item in one of the schemes merchants use.
func shopID(rng *rand.Rand, style int, k shopKind, i int) string {
	switch style {
	case 0:
		return fmt.Sprintf("%s%d", strings.ToUpper(string(k.cat[:2])), 100+i*7+rng.IntN(7))
	case 1:
		return fmt.Sprintf("p-%s-%d", slug(k.en), 1+rng.IntN(99))
	case 2:
		return fmt.Sprintf("SKU%05d", rng.IntN(100000))
	case 3:
		return fmt.Sprintf("%d", 5_000_000_000+rng.Int64N(4_000_000_000))
	}
	return fmt.Sprintf("%c%c-%03d", 'A'+rune(rng.IntN(26)), 'A'+rune(rng.IntN(26)), rng.IntN(1000))
}

// shopPrice draws a price in yuan: whole, ending in .9, or in .99.
func shopPrice(rng *rand.Rand, lo, hi int) float64 {
	p := float64(lo + rng.IntN(hi-lo+1))
	switch rng.IntN(4) {
	case 0:
		p -= 0.1
	case 1:
		p -= 0.01
	}
	return p
}

func shopProduct(rng *rand.Rand, k shopKind, id, name string, link int) catalog.Product {
	p := catalog.Product{ID: id, Link: link, Name: name, Category: string(k.cat), Price: shopPrice(rng, k.minPrice, k.maxPrice)}
	p.Aliases = []string{k.zh, k.en}
	if s := shortKind(k.zh); s != "" {
		p.Aliases = append(p.Aliases, s)
	}
	if s := shortKind(k.en); s != "" {
		p.Aliases = append(p.Aliases, s)
	}
	if rng.IntN(3) == 0 {
		p.Description = fmt.Sprintf("%s，直播间专享", name)
	}
	if rng.IntN(2) == 0 {
		p.ListPrice = math.Round(p.Price * (1.15 + 0.1*float64(rng.IntN(6))))
	}
	if k.cat == Apparel {
		shopApparel(rng, k, &p)
	} else {
		shopVariants(rng, k, &p)
	}
	shopStock(rng, &p)
	for _, st := range k.specs {
		if rng.IntN(5) == 0 {
			continue // a fact this merchant left out
		}
		s := catalog.Spec{Key: st.key, Label: st.en, LabelZh: st.zh}
		switch {
		case st.yesNo:
			s.Value = catalog.BoolValue(rng.IntN(3) > 0)
		case st.numbers != nil:
			s.Value, s.Unit = catalog.NumberValue(pick(rng, st.numbers)), st.unit
		default:
			v := pick(rng, st.texts)
			s.Value, s.ValueZh = catalog.TextValue(v.en), v.zh
		}
		if rng.IntN(8) == 0 {
			s.Label, s.LabelZh = "", "" // a merchant who names facts by key only
		}
		p.Specs = append(p.Specs, s)
	}
	if len(k.recipes) > 0 && rng.IntN(6) > 0 {
		rc := pick(rng, k.recipes)
		p.Ingredients = slices.Clone(rc.ingredients)
		if rc.allergens != nil && rng.IntN(4) > 0 {
			p.Allergens = slices.Clone(rc.allergens)
		}
		switch rng.IntN(4) {
		case 0:
			p.ShelfLifeDays = pick(rng, k.shelfLife)
		case 1:
			p.BestBefore = catalog.Date{Year: 2027, Month: time.Month(1 + rng.IntN(12)), Day: 1 + rng.IntN(28)}
		case 2:
			p.ShelfLifeDays = pick(rng, k.shelfLife)
			p.BestBefore = catalog.Date{Year: 2027, Month: time.Month(1 + rng.IntN(12)), Day: 1 + rng.IntN(28)}
		}
	}
	if k.cat == Electronics && rng.IntN(2) == 0 {
		p.Certifications = []string{"CCC"}
	}
	if rng.IntN(6) == 0 {
		p.LimitPerBuyer = 1 + rng.IntN(5)
	}
	p.Shipping, p.Returns = shopDelivery(rng, k)
	return p
}

// shopApparel gives a garment a size chart of its own and sizes as variants with their own stock, and sometimes
// colours as a second axis without stock of their own.
func shopApparel(rng *rand.Rand, k shopKind, p *catalog.Product) {
	rows := variedSizeChart(rng)
	for _, r := range rows {
		row := catalog.SizeRow{Size: r.Size, MinHeightCM: float64(r.MinHeight), MaxHeightCM: float64(r.MaxHeight),
			MinWeightKG: float64(r.MinWeight), MaxWeightKG: float64(r.MaxWeight)}
		p.SizeChart = append(p.SizeChart, row)
		p.Variants = append(p.Variants, catalog.Variant{Name: r.Size, Axis: "size", Stock: intPtr(stockCount(rng))})
	}
	if rng.IntN(2) == 0 {
		for _, c := range k.variants[:2+rng.IntN(len(k.variants)-1)] {
			p.Variants = append(p.Variants, catalog.Variant{Name: c, Axis: "colour"})
		}
	}
}

// shopVariants gives an item its kind's choices: with their own stock,
// prices, or both, or as names only.
func shopVariants(rng *rand.Rand, k shopKind, p *catalog.Product) {
	if len(k.variants) == 0 || rng.IntN(5) == 0 {
		return
	}
	own := rng.IntN(2) == 0
	for i, name := range k.variants {
		v := catalog.Variant{Name: name, Axis: k.axis}
		if k.ownPrice && i > 0 {
			vp := math.Round(p.Price*(1+0.5*float64(i))) - 0.1
			v.Price = &vp
		}
		if own {
			v.Stock = intPtr(stockCount(rng))
			if *v.Stock == 0 && rng.IntN(2) == 0 {
				v.RestockDate = catalog.Date{Year: 2026, Month: 12, Day: 1 + rng.IntN(28)}
			}
		}
		p.Variants = append(p.Variants, v)
	}
}

// shopStock states the item's stock: the sum of its variants' where they
// state theirs, else a count, a state without a count (low, sold out with
// or without a restock date, presale with its ship date), or nothing.
func shopStock(rng *rand.Rand, p *catalog.Product) {
	total, counted := 0, false
	for _, v := range p.Variants {
		if v.Stock != nil {
			total += *v.Stock
			counted = true
		}
	}
	if counted {
		p.Stock = &total
		return
	}
	switch roll := rng.IntN(20); {
	case roll < 3:
		p.Stock, p.StockState = intPtr(0), catalog.SoldOut
		if rng.IntN(3) > 0 {
			p.RestockDate = catalog.Date{Year: 2026, Month: 12, Day: 1 + rng.IntN(28)}
		}
	case roll < 5:
		p.StockState = catalog.LowStock
	case roll < 6:
		p.StockState, p.PresaleShipDate = catalog.Presale, catalog.Date{Year: 2027, Month: time.Month(1 + rng.IntN(3)), Day: 1 + rng.IntN(28)}
	case roll < 8:
		// Stock not stated at all.
	default:
		p.Stock = intPtr(stockCount(rng))
	}
}

// shopDelivery states the item's shipping and returns, each sometimes in
// part or not at all (but never both left out: a shipping policy with
// nothing to say is a tool error, not a fact left out).
func shopDelivery(rng *rand.Rand, k shopKind) (*catalog.Shipping, *catalog.Returns) {
	var s *catalog.Shipping
	if rng.IntN(7) > 0 {
		s = &catalog.Shipping{}
		if rng.IntN(4) > 0 {
			s.ShipFrom = pick(rng, places()).zh
		}
		if rng.IntN(6) > 0 {
			s.DispatchHours = pick(rng, []int{24, 48, 72, 12, 36, 120})
		}
		switch rng.IntN(6) {
		case 0:
			// The fee is not stated.
		case 1:
			s.Fee = floatPtr(pick(rng, []float64{6, 8, 12}))
		default:
			s.Fee = floatPtr(0)
		}
		if rng.IntN(3) == 0 {
			s.Carrier = pick(rng, []string{"顺丰", "京东物流", "韵达", "申通", "EMS"})
		}
		if rng.IntN(4) == 0 {
			s.ExcludedRegions = []string{"新疆", "西藏"}
		}
	}
	conds := returnConditions()
	var rt *catalog.Returns
	switch roll := rng.IntN(8); {
	case s != nil && roll == 0:
		// Returns not stated.
	case k.cat == Food && roll < 4:
		rt = &catalog.Returns{Accepted: false}
	case k.cat == Food:
		rt = &catalog.Returns{Accepted: true, Days: 7, Conditions: []string{conds[0].zh}}
	case k.cat == Cosmetics && roll < 4:
		rt = &catalog.Returns{Accepted: true, Days: 7, Conditions: []string{conds[0].zh}}
	case k.cat == Apparel:
		rt = &catalog.Returns{Accepted: true, Days: 7, NoReason: true, Conditions: []string{conds[1].zh}, ShippingInsurance: rng.IntN(2) == 0}
	case k.cat == Electronics && roll < 4:
		rt = &catalog.Returns{Accepted: true, Days: 15, Conditions: []string{conds[4].zh}}
	case roll == 7:
		rt = &catalog.Returns{Accepted: true, Conditions: []string{conds[2].zh}}
	default:
		rt = &catalog.Returns{Accepted: true, Days: 7, NoReason: true}
	}
	return s, rt
}

// uniqueAliases drops every alias two products share, and an alias that
// is another product's name, so that a name always finds one item.
func uniqueAliases(c *catalog.Catalog) {
	uses := map[string]int{}
	for _, p := range c.Products {
		seen := map[string]bool{}
		for _, a := range append([]string{p.Name}, p.Aliases...) {
			if n := normalizeName(a); !seen[n] {
				seen[n] = true
				uses[n]++
			}
		}
	}
	for i := range c.Products {
		p := &c.Products[i]
		p.Aliases = slices.DeleteFunc(p.Aliases, func(a string) bool {
			for _, q := range c.Products {
				if q.ID != p.ID && strings.Contains(normalizeName(q.Name), normalizeName(a)) {
					return true
				}
			}
			return uses[normalizeName(a)] > 1
		})
		if len(p.Aliases) == 0 {
			p.Aliases = nil
		}
	}
}

// shopOffers adds coupons (fixed and percent, for one item or every
// item, with thresholds, claim limits, new-viewer terms, windows) and
// promotions of every kind.
func shopOffers(rng *rand.Rand, c *catalog.Catalog) {
	year := time.FixedZone("CST", 8*3600)
	for i, p := range c.Products {
		cp := catalog.Coupon{ID: fmt.Sprintf("CP%d", i+1), Products: []string{p.ID}}
		switch rng.IntN(6) {
		case 0, 1:
			cp.Amount = pick(rng, []float64{5, 10, 15, 20, 30, 50})
			for cp.Amount >= p.Price {
				cp.Amount = math.Floor(cp.Amount / 2)
			}
			if cp.Amount < 1 {
				continue
			}
			cp.MinSpend = math.Ceil(p.Price)
			if rng.IntN(2) == 0 {
				cp.MinSpend = math.Ceil(2 * p.Price)
			}
			cp.Name = fmt.Sprintf("满%s减%s", yuanText(cp.MinSpend), yuanText(cp.Amount))
		case 2:
			cp.Percent = pick(rng, []float64{5, 10, 15, 20})
			cp.Name = fmt.Sprintf("%s%s折券", titleWord(p), zheText(cp.Percent))
			if rng.IntN(2) == 0 {
				cp.MinSpend = math.Ceil(p.Price)
			}
		case 3:
			cp.Amount = pick(rng, []float64{3, 5, 8})
			if cp.Amount >= p.Price {
				continue
			}
			cp.Name = fmt.Sprintf("立减%s元", yuanText(cp.Amount))
		default:
			continue
		}
		switch rng.IntN(8) {
		case 0:
			cp.Remaining = intPtr(0)
		case 1, 2:
			cp.Remaining = intPtr(5 + rng.IntN(300))
		}
		if rng.IntN(4) == 0 {
			cp.PerBuyer = 1 + rng.IntN(2)
		}
		if rng.IntN(5) == 0 {
			cp.Ends = time.Date(2026, 12, 1+rng.IntN(28), 23, 59, 59, 0, year)
		}
		c.Coupons = append(c.Coupons, cp)
	}
	switch rng.IntN(4) {
	case 0:
		min := pick(rng, []float64{99, 199, 299})
		c.Coupons = append(c.Coupons, catalog.Coupon{ID: "STORE", Name: fmt.Sprintf("店铺满%s减%s", yuanText(min), yuanText(math.Floor(min/10))),
			Amount: math.Floor(min / 10), MinSpend: min})
	case 1:
		c.Coupons = append(c.Coupons, catalog.Coupon{ID: "NEW", Name: "新人专享立减10元", Amount: 10, MinSpend: 50, NewViewersOnly: true, PerBuyer: 1})
	case 2:
		// A percent coupon on everything beside the items' own, as the
		// demo stream's: an item then has one coupon its order reaches and
		// often one it does not, and the answer is the reached one.
		pct := pick(rng, []float64{5, 10})
		c.Coupons = append(c.Coupons, catalog.Coupon{ID: "ALL", Name: fmt.Sprintf("全场%s折券", zheText(pct)), Percent: pct})
	}
	for i, p := range c.Products {
		k := titleWord(p)
		pr := catalog.Promotion{ID: fmt.Sprintf("PR%d", i+1), Products: []string{p.ID}}
		switch rng.IntN(10) {
		case 0:
			pr.Kind, pr.Quantity, pr.NthPercent = catalog.PromoMultiBuy, 2, pick(rng, []float64{50, 100})
			pr.Title = k + "第二件" + map[float64]string{50: "半价", 100: "0元"}[pr.NthPercent]
		case 1:
			pr.Kind, pr.Quantity = catalog.PromoMultiBuy, 3
			pr.Price = math.Floor(2.4 * p.Price)
			pr.Title = fmt.Sprintf("%s任选3件%s元", k, yuanText(pr.Price))
		case 2:
			pr.Kind, pr.Quantity, pr.Percent = catalog.PromoMultiBuy, 2, 15
			pr.Title = k + "两件85折"
		case 3:
			pr.Kind, pr.Gift = catalog.PromoGift, pick(rng, []string{"旅行小样", "收纳袋", "同款挂件", "试吃装"})
			pr.Title = "下单送" + pr.Gift
			if rng.IntN(2) == 0 {
				pr.MinSpend = math.Ceil(p.Price)
			}
		case 4:
			pr.Kind, pr.Percent, pr.MinSpend = catalog.PromoPercent, 10, math.Ceil(2*p.Price)
			pr.Title = fmt.Sprintf("满%s享9折", yuanText(pr.MinSpend))
		case 5:
			if i+1 < len(c.Products) {
				q := c.Products[i+1]
				pr.Kind, pr.Products = catalog.PromoBundle, []string{p.ID, q.ID}
				pr.Price = math.Floor(0.85 * (p.Price + q.Price))
				pr.Title = fmt.Sprintf("组合套装%s元", yuanText(pr.Price))
			} else {
				continue
			}
		default:
			continue
		}
		if rng.IntN(6) == 0 {
			pr.Ends = time.Date(2026, 12, 1+rng.IntN(28), 22, 0, 0, 0, year)
		}
		c.Promotions = append(c.Promotions, pr)
	}
}

// zheText is a percent off as a Chinese discount: 10 → "9", 15 → "85".
func zheText(percent float64) string {
	z := 100 - percent
	if math.Mod(z, 10) == 0 {
		return fmt.Sprintf("%d", int(z/10))
	}
	return fmt.Sprintf("%d", int(z))
}

// titleWord is how a coupon or promotion title names an item: its first
// alias (its kind), else its name.
func titleWord(p catalog.Product) string {
	if len(p.Aliases) > 0 && hasHan(p.Aliases[0]) {
		return p.Aliases[0]
	}
	return p.Name
}
