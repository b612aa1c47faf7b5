package liveroom

import (
	"math/rand/v2"
	"strings"
)

// The word banks are functions returning fresh slices, so no caller can
// change what another sees.

func hostNames() []string {
	return []string{"Xiaomei", "Lina", "Ayu", "Coco", "Jiajia", "Momo", "Tingting", "Vivi"}
}

// bannedClaims are absolute advertising claims that Chinese advertising
// law forbids and that a compliant host never makes.
func bannedClaims() []string {
	return []string{"best in the world", "number one", "No.1", "100% effective", "guaranteed results", "cheapest ever",
		"最好", "第一", "最便宜", "全网最低", "100%有效", "国家级", "绝对"}
}

// brandName composes an open set of Latin brand names from syllables, so
// that a model cannot memorise the item names of the room.
func brandName(rng *rand.Rand) string {
	onsets := []string{"b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "cl", "fl", "gr", "pr", "st", "tr"}
	vowels := []string{"a", "e", "i", "o", "u", "ia", "eo", "ou"}
	codas := []string{"", "", "n", "r", "s", "x", "l", "m"}
	n := 2 + rng.IntN(2)
	var b strings.Builder
	for range n {
		b.WriteString(pick(rng, onsets))
		b.WriteString(pick(rng, vowels))
	}
	b.WriteString(pick(rng, codas))
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// brandNameZH composes Chinese brand names from characters common in
// brand transliterations.
func brandNameZH(rng *rand.Rand) string {
	all := []rune("雅诗兰黛珀莱欧菲米悦澜清韵禾木森沐星辰晴岚素颜花漾初见暖阳小鹿橙意")
	n := 2 + rng.IntN(2)
	out := make([]rune, n)
	for i := range out {
		out[i] = all[rng.IntN(len(all))]
	}
	return string(out)
}

type productKind struct {
	en, zh             string
	minPrice, maxPrice int // yuan
}

func productKinds(c Category) []productKind {
	switch c {
	case Cosmetics:
		return []productKind{{"Serum", "精华液", 99, 599}, {"Lipstick", "口红", 49, 299}, {"Sunscreen", "防晒霜", 59, 259}, {"Face Cream", "面霜", 89, 699}, {"Cleanser", "洁面乳", 39, 159}}
	case Apparel:
		return []productKind{{"Hoodie", "卫衣", 129, 399}, {"Down Jacket", "羽绒服", 399, 1299}, {"Jeans", "牛仔裤", 99, 399}, {"Dress", "连衣裙", 159, 599}, {"T-shirt", "T恤", 49, 199}}
	case Electronics:
		return []productKind{{"Earbuds", "蓝牙耳机", 99, 899}, {"Power Bank", "充电宝", 59, 299}, {"Smart Watch", "智能手表", 299, 1999}, {"Desk Lamp", "台灯", 79, 399}}
	case Food:
		return []productKind{{"Nut Mix", "每日坚果", 39, 129}, {"Green Tea", "绿茶", 59, 399}, {"Beef Jerky", "牛肉干", 29, 149}, {"Honey", "蜂蜜", 49, 199}}
	default:
		return []productKind{{"Pillow", "枕头", 59, 299}, {"Blanket", "毛毯", 99, 499}, {"Water Bottle", "保温杯", 39, 199}, {"Storage Box", "收纳箱", 29, 129}}
	}
}

type bilingual struct{ en, zh string }

func descriptors() []bilingual {
	return []bilingual{{"Silk", "丝滑"}, {"Cloud", "云朵"}, {"Daily", "日常"}, {"Pro", "专业"}, {"Mini", "迷你"}, {"Classic", "经典"},
		{"Light", "轻盈"}, {"Velvet", "丝绒"}, {"Fresh", "清新"}, {"Warm", "暖暖"}, {"Air", "空气"}, {"Pure", "纯净"}}
}

// moreDescriptors widen the descriptor bank of varied rooms with the
// feature words merchants name items by.
func moreDescriptors() []bilingual {
	return []bilingual{{"Repair", "修护"}, {"Hydrating", "补水"}, {"Hyaluronic", "玻尿酸"}, {"Clear", "清透"}, {"Fleece", "加绒"},
		{"Matte", "哑光"}, {"Organic", "有机"}, {"Slim", "修身"}, {"Wireless", "无线"}, {"Thermal", "保暖"}, {"Gentle", "温和"},
		{"Family", "家庭装"}, {"Travel", "旅行装"}, {"Crispy", "香脆"}}
}

// shortKind is how viewers shorten a kind ("精华" for 精华液, "cream"
// for Face Cream), or "" when they do not.
func shortKind(kind string) string {
	switch kind {
	case "精华液":
		return "精华"
	case "防晒霜":
		return "防晒"
	case "洁面乳":
		return "洁面"
	case "蓝牙耳机":
		return "耳机"
	case "智能手表":
		return "手表"
	case "每日坚果":
		return "坚果"
	case "Face Cream":
		return "cream"
	case "Smart Watch":
		return "watch"
	case "Down Jacket":
		return "jacket"
	case "Desk Lamp":
		return "lamp"
	case "Water Bottle":
		return "bottle"
	case "Nut Mix":
		return "nuts"
	}
	return ""
}

func variantNames(rng *rand.Rand, c Category) []string {
	switch c {
	case Apparel:
		return []string{"S", "M", "L", "XL"}
	case Cosmetics:
		all := []string{"30ml", "50ml", "100ml"}
		return all[:1+rng.IntN(len(all))]
	case Electronics:
		colors := []string{"black", "white", "blue", "pink"}
		return colors[:2+rng.IntN(3)]
	case Food:
		return []string{"250g", "500g"}
	default:
		return []string{"standard"}
	}
}

func attributes(rng *rand.Rand, c Category) []Attribute {
	choose := func(key, keyZH string, values []bilingual) Attribute {
		v := pick(rng, values)
		return Attribute{Key: key, KeyZH: keyZH, Value: v.en, ValueZH: v.zh}
	}
	switch c {
	case Cosmetics:
		return []Attribute{
			choose("main ingredient", "主要成分", []bilingual{{"niacinamide", "烟酰胺"}, {"hyaluronic acid", "玻尿酸"}, {"vitamin C", "维生素C"}, {"ceramide", "神经酰胺"}}),
			choose("skin type", "适合肤质", []bilingual{{"all skin types", "所有肤质"}, {"dry skin", "干性肌肤"}, {"oily skin", "油性肌肤"}}),
		}
	case Apparel:
		return []Attribute{
			choose("material", "材质", []bilingual{{"cotton", "纯棉"}, {"polyester", "涤纶"}, {"wool blend", "羊毛混纺"}, {"denim", "牛仔布"}}),
			choose("fit", "版型", []bilingual{{"loose fit", "宽松版"}, {"slim fit", "修身版"}, {"regular fit", "标准版"}}),
		}
	case Electronics:
		return []Attribute{
			choose("battery life", "续航", []bilingual{{"8 hours", "8小时"}, {"12 hours", "12小时"}, {"24 hours", "24小时"}, {"7 days", "7天"}}),
			choose("warranty", "保修", []bilingual{{"1 year", "1年"}, {"2 years", "2年"}}),
		}
	case Food:
		return []Attribute{
			choose("shelf life", "保质期", []bilingual{{"6 months", "6个月"}, {"9 months", "9个月"}, {"12 months", "12个月"}}),
			choose("origin", "产地", []bilingual{{"Yunnan", "云南"}, {"Xinjiang", "新疆"}, {"Zhejiang", "浙江"}, {"Inner Mongolia", "内蒙古"}}),
		}
	default:
		return []Attribute{
			choose("material", "材质", []bilingual{{"memory foam", "记忆棉"}, {"stainless steel", "不锈钢"}, {"flannel", "法兰绒"}, {"PP plastic", "PP塑料"}}),
			choose("size", "尺寸", []bilingual{{"60 x 40 cm", "60 x 40 厘米"}, {"500 ml", "500毫升"}, {"150 x 200 cm", "150 x 200 厘米"}}),
		}
	}
}

// variedSizeChart is sizeChart shifted by a few centimetres and
// kilograms, two to four consecutive sizes of it.
func variedSizeChart(rng *rand.Rand) []SizeRow {
	dh, dw := 5*(rng.IntN(4)-2), 5*(rng.IntN(3)-1)
	all := sizeChart()
	n := 2 + rng.IntN(len(all)-1)
	first := rng.IntN(len(all) - n + 1)
	out := all[first : first+n]
	for i := range out {
		out[i].MinHeight += dh
		out[i].MaxHeight += dh
		out[i].MinWeight += dw
		out[i].MaxWeight += dw
	}
	return out
}

func sizeChart() []SizeRow {
	return []SizeRow{
		{"S", 150, 160, 40, 50},
		{"M", 160, 170, 50, 60},
		{"L", 170, 180, 60, 72},
		{"XL", 180, 190, 72, 85},
	}
}
