package main

import "testing"

func TestAttributeValues(t *testing.T) {
	cream, honey := []Call{creamCoLookup}, []Call{honeyLookup}
	runCases(t, []checkCase{
		{"ingredient", "zh", "面霜什么成分", "雅诗轻盈面霜主要成分是维生素C，适合油性肌肤。", cream, "", "", ""},
		{"ingredient en", "en", "What's in the cream?", "Its main ingredient is vitamin C, for oily skin.", cream, "", "", ""},
		{"origin", "zh", "蜂蜜产地哪里", "初漾丝绒蜂蜜产地是新疆，保质期6个月。", honey, "", "", ""},
		{"origin en", "en", "Where is the honey from?", "It comes from Xinjiang.", honey, "", "", ""},

		{"other ingredient", "zh", "面霜什么成分", "主要成分是神经酰胺，很温和。", cream, KindFact, "神经酰胺", "维生素C"},
		{"other ingredient en", "en", "What's in the cream?", "It is made with hyaluronic acid.", cream, KindFact, "hyaluronic acid", "vitamin C"},
		{"other skin type", "en", "Is it for dry skin?", "Yes, it suits dry skin.", cream, KindFact, "dry skin", "oily skin"},
		{"other skin type zh", "zh", "干皮能用吗", "适合干性肌肤。", cream, KindFact, "干性肌肤", "油性肌肤"},
		{"other origin", "en", "Where is the honey from?", "It comes from Inner Mongolia.", honey, KindFact, "Inner Mongolia", "Xinjiang"},
		{"other origin zh", "zh", "蜂蜜产地哪里", "产地是云南。", honey, KindFact, "云南", "新疆"},
		{"ingredient without a lookup", "zh", "面霜什么成分", "主要成分是烟酰胺。", nil, KindFact, "烟酰胺", "no tool result"},
	})
}
