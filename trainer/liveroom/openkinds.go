package liveroom

import (
	"math/rand/v2"
	"strings"
)

// moreKinds are product kinds the rooms of RoomConfig.Variety 5 sell
// besides the training kinds: real kinds of the same five categories, so
// that a catalog's names are not a list a model can recall. None is a
// kind of the transfer suite's families (pets, stationery, toys, sports,
// baby, kitchen, jewellery): that suite must stay unseen.
func moreKinds(c Category) []productKind {
	switch c {
	case Cosmetics:
		return []productKind{{"Shampoo", "洗发水", 39, 159}, {"Body Wash", "沐浴露", 29, 129}, {"Perfume", "香水", 199, 999},
			{"Hand Cream", "护手霜", 19, 99}, {"Face Mask", "面膜", 49, 199}, {"Toothpaste", "牙膏", 15, 69}, {"Eye Cream", "眼霜", 129, 599}}
	case Apparel:
		return []productKind{{"Scarf", "围巾", 59, 299}, {"Sneakers", "运动鞋", 199, 899}, {"Socks", "袜子", 19, 79},
			{"Baseball Cap", "棒球帽", 49, 199}, {"Gloves", "手套", 39, 159}, {"Pajamas", "睡衣", 99, 399}, {"Windbreaker", "冲锋衣", 299, 999}}
	case Electronics:
		return []productKind{{"Wireless Mouse", "无线鼠标", 49, 299}, {"Keyboard", "键盘", 99, 699}, {"Bluetooth Speaker", "蓝牙音箱", 99, 799},
			{"Charger", "充电器", 39, 199}, {"Phone Case", "手机壳", 19, 99}, {"Webcam", "摄像头", 99, 499}, {"Hair Dryer", "吹风机", 99, 899}}
	case Food:
		return []productKind{{"Dark Chocolate", "黑巧克力", 29, 129}, {"Coffee Beans", "咖啡豆", 59, 299}, {"Rice", "大米", 39, 159},
			{"Olive Oil", "橄榄油", 69, 299}, {"Dried Mango", "芒果干", 19, 79}, {"Instant Noodles", "方便面", 19, 89}, {"Oat Milk", "燕麦奶", 29, 99}}
	default:
		return []productKind{{"Towel", "毛巾", 19, 99}, {"Bed Sheet", "床单", 99, 399}, {"Curtain", "窗帘", 99, 599},
			{"Rug", "地毯", 99, 699}, {"Umbrella", "雨伞", 39, 159}, {"Suitcase", "行李箱", 199, 999}, {"Vase", "花瓶", 49, 299}}
	}
}

// inventedKind makes up a kind no dictionary has: two or three characters
// from a wide set and a capitalised word of random syllables, priced like
// the category's kinds. A model can only name it by copying it.
func inventedKind(rng *rand.Rand, c Category) productKind {
	han := []rune("云岚霁禾澄朔汀栖砚珑琅芷蔻荇萤翎昙墨黛蓉菁澈曦桐槿榆楠柘棠璃瑶珂琪瑾璞岫峦嵘漪澜渊泓沁渺溪湘荟蕙藜茗苒筠箐篱")
	zh := make([]rune, 2+rng.IntN(2))
	for i := range zh {
		zh[i] = han[rng.IntN(len(han))]
	}
	const cons, vow = "bcdfgklmnprstvz", "aeiou"
	var en strings.Builder
	for i := range 2 + rng.IntN(2) {
		c := cons[rng.IntN(len(cons))]
		if i == 0 {
			c -= 'a' - 'A'
		}
		en.WriteByte(c)
		en.WriteByte(vow[rng.IntN(len(vow))])
	}
	en.WriteByte(cons[rng.IntN(len(cons))])
	base := pick(rng, productKinds(c))
	return productKind{en: en.String(), zh: string(zh), minPrice: base.minPrice, maxPrice: base.maxPrice}
}

// openKind is the kind of an item of a Variety 5 room: a third from
// moreKinds, a sixth invented, the rest the training kinds.
func openKind(rng *rand.Rand, c Category) productKind {
	switch roll := rng.IntN(6); {
	case roll < 2:
		return pick(rng, moreKinds(c))
	case roll == 2:
		return inventedKind(rng, c)
	}
	return pick(rng, productKinds(c))
}
