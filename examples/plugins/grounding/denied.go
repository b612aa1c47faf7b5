package main

import (
	"slices"
	"strings"
)

// deniedTopic is a fact a reply may say the listing leaves out: the words
// that name it in a reply and the result keys that state it.
type deniedTopic struct {
	name  string
	words []string
	keys  []string
}

var deniedTopics = []deniedTopic{
	{"restock date", []string{"restock", "back in stock", "补货", "到货"}, []string{"restock"}},
	{"ship-from place", []string{"ship-from", "ships from", "shipped from", "ship from", "发货地", "从哪", "哪里发"}, []string{"ship_from", "ships_from"}},
	{"dispatch time", []string{"dispatch", "ships within", "发货时间", "几天发", "多久发"}, []string{"dispatch"}},
	{"return policy", []string{"return", "退货", "退换", "无理由"}, []string{"return"}},
	{"shelf life", []string{"shelf life", "best before", "expiry", "保质期"}, []string{"shelf_life", "best_before", "expiry", "保质期"}},
	{"allergen list", []string{"过敏原", "allergen"}, []string{"allergens"}},
}

// notStatedCues mark a clause that says the listing leaves a fact out.
// A hedge ("I'll check", "不确定") says nothing of the listing and is not
// one of them.
var notStatedCues = []string{"没有标注", "没标注", "未标注", "没有写", "没写", "没有说明", "未说明", "没说", "暂无",
	"not stated", "not listed", "isn't listed", "is not listed", "no information", "not specified", "doesn't say",
	"does not say", "doesn't list", "does not list", "isn't stated", "is not stated"}

// statedCues are "is stated", "is listed" after a negation in the clause
// ("no restock date is stated").
var statedCues = []string{" is stated", " are stated", " is listed", " are listed", " is given", " is mentioned"}

// negated reports whether a clause holds a negation.
func negated(clause string) bool {
	return containsAny(clause, []string{"no ", "not ", "n't ", "none", "never"})
}

// deniedFacts flags a clause that says a fact is not stated when a result
// of the turn states it: "no restock date is stated" over a stock check
// that gives 2026-12-24 tells the viewer something false.
func (c *checker) deniedFacts() {
	var flagged []int
	for _, cue := range append(slices.Clone(notStatedCues), statedCues...) {
		if !c.mayHold(cue) {
			continue
		}
		negative := slices.Contains(statedCues, cue)
		for from := 0; ; {
			i := strings.Index(c.lower[from:], cue)
			if i < 0 {
				break
			}
			pos := from + i
			from = pos + len(cue)
			a, b := clause(c.lower, pos)
			if slices.Contains(flagged, a) || negative && !negated(c.lower[a:b]) {
				continue
			}
			for _, tp := range deniedTopics {
				if !containsAny(c.lower[a:b], tp.words) {
					continue
				}
				if key := statedKey(c.scope(c.owner(pos)), tp.keys); key != "" {
					flagged = append(flagged, a)
					c.flag(KindFact, a, b, "the results state the %s (%s)", tp.name, key)
					break
				}
			}
		}
	}
}

// statedKey returns the first key of scope's results that gives a value
// of the item as a whole and holds one of keys, or "". A variant's own
// fact (variant_details.restock_date of a sold-out size) leaves the item's
// unstated: "no restock date is stated" of the item stays true.
func statedKey(scope []*itemFacts, keys []string) string {
	for _, f := range scope {
		for _, k := range f.stated {
			if k = strings.ToLower(k); containsAny(k, keys) && !strings.Contains(k, "variant") {
				return k
			}
		}
	}
	return ""
}
