package liveroom

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/livehat/livehat/harness/catalog"
)

// The transfer family: catalogs and viewer questions of a separate
// generator, so that transfer to catalogs nobody here wrote is measured,
// not assumed. Its item kinds (pet supplies, stationery, toys, sports
// gear, baby care, small kitchen appliances, jewellery), its field mix
// (link numbers, variants without their own stock, restock dates,
// allergens, best-before, dispatch hours, conditional returns, percent
// coupons, multi-buy deals, facts left unstated) and its phrasing (see
// TransferQuestions) share nothing with NewRoom's rooms; tests hold them
// apart. Nothing may train on it: it is what the transfer suite measures.

// transferKind is an item kind of the transfer family.
type transferKind struct {
	family, code string // family name and id prefix
	en, zh       string
	// features are words of the item's name before its kind ("无尘豆腐").
	features           []string
	minPrice, maxPrice int // yuan
	// axis and variants are the item's choices; ownPrice gives each
	// variant after the first a price of its own.
	axis     string
	variants []string
	ownPrice bool
	specs    []specTemplate
	// food kinds state ingredients (from one of recipes), allergens and
	// shelf life.
	food    bool
	recipes []recipe
}

// specTemplate is a spec a kind states, with the values it draws from.
type specTemplate struct {
	key, en, zh, unit string
	numbers           []float64
	texts             []bilingual
	// yesNo makes the spec a yes/no fact; en and zh then read as
	// predicates ("dishwasher safe", "可进洗碗机").
	yesNo bool
}

// recipe is a food's ingredients and the allergens they hold.
type recipe struct {
	ingredients, allergens []string
}

func transferKinds() []transferKind {
	num := func(key, en, zh, unit string, xs ...float64) specTemplate {
		return specTemplate{key: key, en: en, zh: zh, unit: unit, numbers: xs}
	}
	text := func(key, en, zh string, vs ...bilingual) specTemplate {
		return specTemplate{key: key, en: en, zh: zh, texts: vs}
	}
	yesNo := func(key, en, zh string) specTemplate { return specTemplate{key: key, en: en, zh: zh, yesNo: true} }
	return []transferKind{
		{family: "pet", code: "PET", en: "Cat Litter", zh: "猫砂", features: []string{"无尘豆腐", "活性炭混合", "速凝"}, minPrice: 29, maxPrice: 89,
			axis: "scent", variants: []string{"原味", "奶香味"}, specs: []specTemplate{num("volume", "bag size", "容量", "L", 6, 10), yesNo("flushable", "flushable", "可冲厕所")}},
		{family: "pet", code: "PET", en: "Dog Food", zh: "狗粮", features: []string{"全价成犬", "低敏鸡肉", "冻干双拼"}, minPrice: 79, maxPrice: 299,
			axis: "size", variants: []string{"2kg", "5kg"}, ownPrice: true, specs: []specTemplate{num("protein", "protein", "蛋白质含量", "%", 26, 30, 32)},
			food: true, recipes: []recipe{{[]string{"鸡肉", "糙米", "豌豆", "鱼油"}, []string{"fish"}}, {[]string{"鸭肉", "红薯", "燕麦"}, []string{"wheat"}}}},
		{family: "pet", code: "PET", en: "Cat Treats", zh: "猫条", features: []string{"营养", "化毛", "鲜肉"}, minPrice: 19, maxPrice: 59,
			axis: "flavour", variants: []string{"金枪鱼", "鸡肉三文鱼"}, specs: []specTemplate{num("count", "sticks per box", "每盒条数", "sticks", 20, 30, 50)},
			food: true, recipes: []recipe{{[]string{"金枪鱼", "鸡胸肉", "水"}, []string{"fish"}}, {[]string{"鸡胸肉", "南瓜", "水"}, []string{}}}},
		{family: "pet", code: "PET", en: "Cat Scratcher", zh: "猫抓板", features: []string{"瓦楞纸", "猫窝式", "立式"}, minPrice: 19, maxPrice: 69,
			specs: []specTemplate{num("length", "length", "长度", "cm", 45, 60), text("material", "material", "材质", bilingual{"corrugated cardboard", "瓦楞纸"}, bilingual{"sisal", "剑麻"})}},
		{family: "stationery", code: "STA", en: "Gel Pens", zh: "中性笔", features: []string{"速干", "按动", "考试专用"}, minPrice: 9, maxPrice: 29,
			axis: "ink", variants: []string{"黑色", "蓝色", "红色"}, specs: []specTemplate{num("count", "pens per pack", "每盒支数", "pens", 10, 12, 20), num("tip", "tip size", "笔尖", "mm", 0.5, 0.38)}},
		{family: "stationery", code: "STA", en: "Notebook", zh: "笔记本", features: []string{"加厚", "方格", "活页"}, minPrice: 12, maxPrice: 39,
			specs: []specTemplate{num("pages", "pages", "页数", "pages", 80, 120, 160), text("paper", "paper", "纸张", bilingual{"100gsm", "100克纸"})}},
		{family: "stationery", code: "STA", en: "Washi Tape", zh: "和纸胶带", features: []string{"手账", "复古", "烫金"}, minPrice: 6, maxPrice: 19,
			specs: []specTemplate{num("width", "width", "宽度", "mm", 15, 20), num("length", "length", "长度", "m", 5, 10)}},
		{family: "toys", code: "TOY", en: "Building Blocks", zh: "积木", features: []string{"拼装", "城堡", "太空站"}, minPrice: 59, maxPrice: 299,
			specs: []specTemplate{num("pieces", "pieces", "颗粒数", "pcs", 500, 1000, 1500), text("age", "age", "适用年龄", bilingual{"6 and up", "6岁以上"}, bilingual{"3 and up", "3岁以上"})}},
		{family: "toys", code: "TOY", en: "Plush Toy", zh: "毛绒玩具", features: []string{"柴犬", "兔子", "恐龙"}, minPrice: 39, maxPrice: 129,
			axis: "size", variants: []string{"30cm", "45cm"}, ownPrice: true, specs: []specTemplate{text("filling", "filling", "填充物", bilingual{"PP cotton", "PP棉"})}},
		{family: "toys", code: "TOY", en: "Jigsaw Puzzle", zh: "拼图", features: []string{"风景", "名画", "星空"}, minPrice: 29, maxPrice: 99,
			specs: []specTemplate{num("pieces", "pieces", "片数", "pcs", 500, 1000)}},
		{family: "sports", code: "SPT", en: "Yoga Mat", zh: "瑜伽垫", features: []string{"加宽", "天然橡胶", "双面"}, minPrice: 59, maxPrice: 199,
			axis: "colour", variants: []string{"雾紫", "墨绿", "燕麦"}, specs: []specTemplate{num("thickness", "thickness", "厚度", "mm", 6, 8, 10), yesNo("non_slip", "non-slip", "防滑")}},
		{family: "sports", code: "SPT", en: "Jump Rope", zh: "跳绳", features: []string{"计数", "钢丝", "负重"}, minPrice: 19, maxPrice: 69,
			specs: []specTemplate{num("length", "rope length", "绳长", "m", 3, 2.8), yesNo("counter", "fitted with a counter", "带计数器")}},
		{family: "sports", code: "SPT", en: "Dumbbells", zh: "哑铃", features: []string{"包胶", "可调节", "六角"}, minPrice: 59, maxPrice: 259,
			axis: "weight", variants: []string{"2kg", "5kg", "10kg"}, ownPrice: true, specs: []specTemplate{text("coating", "coating", "外层", bilingual{"rubber", "橡胶"})}},
		{family: "sports", code: "SPT", en: "Protein Bar", zh: "蛋白棒", features: []string{"低脂", "高纤", "代餐"}, minPrice: 49, maxPrice: 129,
			axis: "flavour", variants: []string{"巧克力", "海盐焦糖"}, specs: []specTemplate{num("protein", "protein per bar", "每根蛋白质", "g", 15, 20)},
			food: true, recipes: []recipe{{[]string{"乳清蛋白", "大豆蛋白", "可可粉"}, []string{"milk", "soy"}}, {[]string{"乳清蛋白", "花生酱", "燕麦"}, []string{"milk", "peanut"}}}},
		{family: "baby", code: "BBY", en: "Baby Wipes", zh: "婴儿湿巾", features: []string{"手口", "加厚", "超柔"}, minPrice: 19, maxPrice: 59,
			specs: []specTemplate{num("count", "wipes per pack", "每包抽数", "pcs", 80, 100)}},
		{family: "baby", code: "BBY", en: "Teething Biscuits", zh: "磨牙饼干", features: []string{"原味", "胡萝卜", "香蕉"}, minPrice: 19, maxPrice: 49,
			food: true, recipes: []recipe{{[]string{"小麦粉", "鸡蛋", "奶粉"}, []string{"wheat", "egg", "milk"}}, {[]string{"大米粉", "胡萝卜"}, []string{}}}},
		{family: "baby", code: "BBY", en: "Baby Lotion", zh: "婴儿润肤乳", features: []string{"倍润", "舒缓", "四季"}, minPrice: 39, maxPrice: 129,
			specs: []specTemplate{num("volume", "volume", "容量", "ml", 200, 300)}},
		{family: "kitchen", code: "KIT", en: "Air Fryer", zh: "空气炸锅", features: []string{"可视", "大容量", "双篮"}, minPrice: 199, maxPrice: 599,
			axis: "colour", variants: []string{"奶白", "曜黑"}, specs: []specTemplate{num("capacity", "capacity", "容量", "L", 4.5, 5.5, 6), num("power", "power", "功率", "W", 1350, 1500),
				yesNo("dishwasher_safe", "dishwasher safe", "可进洗碗机")}},
		{family: "kitchen", code: "KIT", en: "Blender", zh: "破壁机", features: []string{"静音", "加热", "多功能"}, minPrice: 299, maxPrice: 899,
			specs: []specTemplate{num("power", "power", "功率", "W", 800, 1200), num("capacity", "capacity", "容量", "L", 1.2, 1.75), yesNo("auto_off", "fitted with auto shut-off", "自动断电")}},
		{family: "kitchen", code: "KIT", en: "Electric Kettle", zh: "电热水壶", features: []string{"恒温", "双层防烫", "快煮"}, minPrice: 79, maxPrice: 199,
			specs: []specTemplate{num("capacity", "capacity", "容量", "L", 1.5, 1.7), num("power", "power", "功率", "W", 1800), yesNo("auto_off", "fitted with auto shut-off", "自动断电")}},
		{family: "kitchen", code: "KIT", en: "Rice Cooker", zh: "电饭煲", features: []string{"智能", "柴火饭", "小巧"}, minPrice: 199, maxPrice: 499,
			specs: []specTemplate{num("capacity", "capacity", "容量", "L", 3, 4, 5)}},
		{family: "jewellery", code: "JWL", en: "Silver Necklace", zh: "银项链", features: []string{"锁骨", "小众", "四叶草"}, minPrice: 129, maxPrice: 599,
			specs: []specTemplate{num("length", "chain length", "链长", "cm", 40, 45), text("material", "metal", "材质", bilingual{"925 silver", "925银"})}},
		{family: "jewellery", code: "JWL", en: "Pearl Earrings", zh: "珍珠耳环", features: []string{"淡水", "法式", "耳夹式"}, minPrice: 99, maxPrice: 399,
			specs: []specTemplate{num("pearl", "pearl size", "珍珠直径", "mm", 7, 8, 9)}},
		{family: "jewellery", code: "JWL", en: "Bracelet", zh: "手链", features: []string{"转运珠", "编绳", "细款"}, minPrice: 79, maxPrice: 299,
			axis: "size", variants: []string{"S", "M"}, specs: []specTemplate{num("length", "length", "长度", "cm", 16, 18)}},
	}
}

// transferBrands are the family's shop brands, none of them the
// training rooms'.
func transferBrands() []string {
	return []string{"喵屿", "汪仔", "拾光", "野风", "晨曦", "团子家", "竹里", "青柠", "山茶", "锦鲤", "鲸落", "麦穗"}
}

// TransferCatalog generates the transfer family's catalog for a seed: one
// or two families of items, three to six of them. The same seed always
// gives the same catalog.
func TransferCatalog(seed uint64) *catalog.Catalog {
	rng := rand.New(rand.NewPCG(seed, 0x7472616e73666572)) // "transfer"
	kinds := transferKinds()
	families := []string{}
	for _, k := range kinds {
		if !slices.Contains(families, k.family) {
			families = append(families, k.family)
		}
	}
	chosen := []string{pick(rng, families)}
	if rng.IntN(2) == 0 {
		if f := pick(rng, families); f != chosen[0] {
			chosen = append(chosen, f)
		}
	}
	var pool []transferKind
	for _, k := range kinds {
		if slices.Contains(chosen, k.family) {
			pool = append(pool, k)
		}
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	n := min(len(pool), 3+rng.IntN(4))
	c := &catalog.Catalog{Stream: fmt.Sprintf("transfer-%d", seed), Currency: "CNY"}
	firstLink := 1 + rng.IntN(5)
	ids := map[string]bool{}
	for i, k := range pool[:n] {
		id := ""
		for id == "" || ids[id] {
			id = fmt.Sprintf("%s-%04d", k.code, rng.IntN(10000))
		}
		ids[id] = true
		c.Products = append(c.Products, transferProduct(rng, k, id, firstLink+i))
	}
	transferOffers(rng, c)
	return c
}

// TransferRoom is the room of the transfer family's catalog for a seed.
func TransferRoom(seed uint64) (*Room, error) {
	r, err := RoomFromCatalog(TransferCatalog(seed))
	if err != nil {
		return nil, fmt.Errorf("liveroom: transfer catalog %d: %w", seed, err)
	}
	r.Seed = seed
	return r, nil
}

// price draws a price in yuan, half of them ending in .9.
func price(rng *rand.Rand, lo, hi int) float64 {
	p := float64(lo + rng.IntN(hi-lo+1))
	if rng.IntN(2) == 0 {
		p -= 0.1
	}
	return p
}

func intPtr(n int) *int { return &n }

func transferProduct(rng *rand.Rand, k transferKind, id string, link int) catalog.Product {
	brand := pick(rng, transferBrands())
	p := catalog.Product{ID: id, Link: link, Name: brand + pick(rng, k.features) + k.zh, Aliases: []string{k.zh, k.en, brand + k.zh},
		Category: k.family, Price: price(rng, k.minPrice, k.maxPrice)}
	if rng.IntN(2) == 0 {
		p.ListPrice = math.Round(p.Price * (1.2 + 0.1*float64(rng.IntN(5))))
	}
	// Variants: with their own stock and prices, or choices only.
	own := len(k.variants) > 0 && rng.IntN(2) == 0
	for i, name := range k.variants {
		v := catalog.Variant{Name: name, Axis: k.axis}
		if k.ownPrice && i > 0 {
			vp := math.Round(p.Price*(1+0.6*float64(i))) - 0.1
			v.Price = &vp
		}
		if own {
			v.Stock = intPtr(stockCount(rng))
			if *v.Stock == 0 && rng.IntN(2) == 0 {
				v.RestockDate = transferDate(rng, 2026, 12)
			}
		}
		p.Variants = append(p.Variants, v)
	}
	switch roll := rng.IntN(20); {
	case own:
		total := 0
		for _, v := range p.Variants {
			total += *v.Stock
		}
		p.Stock = &total
	case roll < 3:
		p.Stock, p.StockState, p.RestockDate = intPtr(0), catalog.SoldOut, transferDate(rng, 2026, 12)
	case roll < 5:
		p.StockState = catalog.SoldOut
	case roll < 7:
		p.StockState = catalog.LowStock
	case roll < 8:
		p.StockState, p.PresaleShipDate = catalog.Presale, transferDate(rng, 2027, 1)
	case roll < 10:
		// Stock not stated at all.
	default:
		p.Stock = intPtr(stockCount(rng))
	}
	for _, st := range k.specs {
		if rng.IntN(6) == 0 {
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
		p.Specs = append(p.Specs, s)
	}
	if k.food {
		rc := pick(rng, k.recipes)
		p.Ingredients = slices.Clone(rc.ingredients)
		if rng.IntN(4) > 0 {
			p.Allergens = slices.Clone(rc.allergens)
		}
		switch rng.IntN(4) {
		case 0:
			p.ShelfLifeDays = pick(rng, []int{180, 270, 365})
		case 1:
			p.BestBefore = transferDate(rng, 2027, 1+rng.IntN(12))
		case 2:
			p.ShelfLifeDays, p.BestBefore = 365, transferDate(rng, 2027, 6+rng.IntN(6))
		}
	}
	if k.family == "kitchen" && rng.IntN(2) == 0 {
		p.Certifications = []string{"CCC"}
	}
	if rng.IntN(5) == 0 {
		p.LimitPerBuyer = 1 + rng.IntN(5)
	}
	if rng.IntN(8) > 0 {
		s := &catalog.Shipping{}
		if rng.IntN(5) > 0 {
			s.ShipFrom = pick(rng, places()).zh
		}
		if rng.IntN(7) > 0 {
			s.DispatchHours = pick(rng, []int{12, 24, 36, 48, 72})
		}
		switch rng.IntN(8) {
		case 0, 1:
			// The fee is not stated.
		case 2:
			s.Fee = floatPtr(pick(rng, []float64{5, 8, 10}))
		default:
			s.Fee = floatPtr(0)
		}
		if rng.IntN(3) == 0 {
			s.Carrier = pick(rng, []string{"中通", "圆通", "顺丰", "极兔"})
		}
		p.Shipping = s
	}
	// Shipping or returns, or both: a shipping_policy that has neither to
	// say is a tool error, not a fact left out.
	if p.Shipping == nil || rng.IntN(7) > 0 {
		p.Returns = transferReturns(rng, k)
	}
	return p
}

func floatPtr(x float64) *float64 { return &x }

// stockCount draws a stated count: sold out, low or plenty.
func stockCount(rng *rand.Rand) int {
	switch roll := rng.IntN(10); {
	case roll < 2:
		return 0
	case roll < 4:
		return 1 + rng.IntN(catalog.LowStockBelow-1)
	}
	return 30 + rng.IntN(600)
}

func transferDate(rng *rand.Rand, year, month int) catalog.Date {
	return catalog.Date{Year: year, Month: time.Month(month), Day: 1 + rng.IntN(28)}
}

// transferReturns is a return rule of the kind's family.
func transferReturns(rng *rand.Rand, k transferKind) *catalog.Returns {
	conds := returnConditions()
	switch {
	case k.food && rng.IntN(2) == 0:
		return &catalog.Returns{Accepted: false}
	case k.food:
		return &catalog.Returns{Accepted: true, Days: 7, Conditions: []string{conds[0].zh}}
	case k.family == "jewellery":
		return &catalog.Returns{Accepted: true, Days: 7, NoReason: true, Conditions: []string{pick(rng, []string{conds[1].zh, conds[3].zh})}}
	case k.family == "kitchen" && rng.IntN(2) == 0:
		return &catalog.Returns{Accepted: true, Days: 15, Conditions: []string{conds[4].zh}, ShippingInsurance: rng.IntN(2) == 0}
	case k.family == "baby" && rng.IntN(2) == 0:
		return &catalog.Returns{Accepted: true, Days: 7, Conditions: []string{conds[0].zh}}
	case rng.IntN(5) == 0:
		return &catalog.Returns{Accepted: true, Conditions: []string{conds[2].zh}}
	}
	return &catalog.Returns{Accepted: true, Days: 7, NoReason: true}
}

// transferOffers adds the catalog's coupons and promotions: fixed and
// percent coupons for one item, sometimes one for every item, multi-buy
// deals on consumables and the odd gift.
func transferOffers(rng *rand.Rand, c *catalog.Catalog) {
	for i, p := range c.Products {
		switch rng.IntN(5) {
		case 0, 1:
			amount := pick(rng, []float64{5, 10, 20, 30})
			for amount >= p.Price {
				amount /= 2
			}
			min := math.Ceil(p.Price)
			if rng.IntN(2) == 0 {
				min = math.Ceil(2 * p.Price)
			}
			cp := catalog.Coupon{ID: fmt.Sprintf("Q%d", i+1), Name: fmt.Sprintf("满%s减%s", yuanText(min), yuanText(amount)),
				Amount: amount, MinSpend: min, Products: []string{p.ID}}
			c.Coupons = append(c.Coupons, remaining(rng, cp))
		case 2:
			pct := pick(rng, []float64{5, 10, 15, 20})
			cp := catalog.Coupon{ID: fmt.Sprintf("Q%d", i+1), Name: fmt.Sprintf("%s专享%s%%券", p.Aliases[0], yuanText(pct)),
				Percent: pct, Products: []string{p.ID}}
			if rng.IntN(2) == 0 {
				cp.MinSpend = math.Ceil(p.Price)
			}
			c.Coupons = append(c.Coupons, remaining(rng, cp))
		}
	}
	if rng.IntN(3) == 0 {
		min := pick(rng, []float64{99, 199, 299})
		amount := math.Floor(min / 10)
		c.Coupons = append(c.Coupons, catalog.Coupon{ID: "ALL", Name: fmt.Sprintf("全场满%s减%s", yuanText(min), yuanText(amount)),
			Amount: amount, MinSpend: min})
	}
	kinds := map[string]transferKind{}
	for _, k := range transferKinds() {
		kinds[k.zh] = k
	}
	for i, p := range c.Products {
		k := kinds[p.Aliases[0]]
		switch {
		case (k.food || k.family == "stationery" || k.en == "Baby Wipes") && rng.IntN(3) > 0:
			pr := catalog.Promotion{ID: fmt.Sprintf("M%d", i+1), Kind: catalog.PromoMultiBuy, Products: []string{p.ID}}
			switch rng.IntN(3) {
			case 0:
				pr.Title, pr.Quantity, pr.NthPercent = p.Aliases[0]+"第二件半价", 2, 50
			case 1:
				pr.Quantity = 3
				pr.Price = math.Floor(2.5 * p.Price)
				pr.Title = fmt.Sprintf("%s三件%s元", p.Aliases[0], yuanText(pr.Price))
			default:
				pr.Title, pr.Quantity, pr.Percent = p.Aliases[0]+"两件九折", 2, 10
			}
			c.Promotions = append(c.Promotions, pr)
		case rng.IntN(6) == 0:
			c.Promotions = append(c.Promotions, catalog.Promotion{ID: fmt.Sprintf("G%d", i+1), Title: "下单送小样", Kind: catalog.PromoGift,
				Products: []string{p.ID}, Gift: pick(rng, []string{"收纳袋", "试用装", "贴纸"})})
		}
	}
}

// remaining states how many of a coupon are left for some coupons, and
// that all are claimed for a few.
func remaining(rng *rand.Rand, cp catalog.Coupon) catalog.Coupon {
	switch rng.IntN(10) {
	case 0:
		cp.Remaining = intPtr(0)
	case 1, 2:
		cp.Remaining = intPtr(10 + rng.IntN(200))
	}
	return cp
}
