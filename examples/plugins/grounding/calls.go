package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// callFor is the export whose result answers each kind of question the
// lookup does not: a coupon, the stock now, the link, shipping and
// returns.
var callFor = map[intent]string{
	askCoupon:   "coupon_check",
	askStock:    "check_stock",
	askLink:     "send_link",
	askShipping: "shipping_policy",
}

// missingCall finds the call the reply's answer needs and the turn did
// not make: the viewer asks of an item a lookup found (a coupon, the
// stock, the link, shipping) and no call of the export that answers it
// names that item. job10, under a renamed harness, looked the item up and
// then checked its stock for a coupon question, or pinned its link for a
// stock question: the reply was true and answered something else. The
// hook asks for the call by its export; the runtime finds the harness's
// tool that runs it, whatever it is named.
func missingCall(t *Turn, tf *turnFacts) (export, feedback string, ok bool) {
	intents := wordIntents(t.Message)
	if slices.Contains(intents, askCompare) {
		// A comparison needs each item it names looked up; as many
		// lookups as items, failed ones too, is a turn that tried.
		named := namedItems(t, tf)
		lookups := 0
		for _, c := range t.parsedCalls() {
			if exportOf(c.Call) == "product_lookup" {
				lookups++
			}
		}
		for _, f := range named {
			if !f.inPlay && len(named) > 1 && lookups < len(named) {
				return "product_lookup", fmt.Sprintf("The viewer compares %d items and no result of this turn gives %s: look it up, then answer.",
					len(named), f.display()), true
			}
		}
		return "", "", false
	}
	f := askedItem(tf, t.Message)
	if f == nil || !f.inPlay {
		// The one item in play, where the message names it by a piece
		// of its name ("耳环" of "珍珠耳环") rather than a whole one.
		inPlay := tf.inPlay()
		if len(inPlay) != 1 || !namedBy(t.Message, inPlay[0]) || f != nil {
			return "", "", false
		}
		f = inPlay[0]
	}
	for _, in := range intents {
		export, ok := callFor[in]
		if !ok {
			continue
		}
		called := slices.ContainsFunc(t.parsedCalls(), func(c parsedCall) bool {
			return exportOf(c.Call) == export && slices.Contains(c.itemIDs(), f.id)
		})
		if called || in == askLink && f.pinned {
			continue
		}
		return export, fmt.Sprintf("The viewer asked about the %s of %s, which no result of this turn gives: call the tool that %s, then answer.",
			topics[in], f.display(), does[in]), true
	}
	return "", "", false
}

// topics and does name each kind of question and its call in feedback.
var (
	topics = map[intent]string{askCoupon: "coupon", askStock: "stock", askLink: "link", askShipping: "shipping and returns"}
	does   = map[intent]string{askCoupon: "checks its coupon", askStock: "checks its stock", askLink: "pins its link",
		askShipping: "gives its shipping policy"}
)

// namedItems returns the items a message names, each once, in the order
// named: by a whole name or alias (mentionsIn) or by its link.
func namedItems(t *Turn, tf *turnFacts) []*itemFacts {
	msg := asciiLower(normalize(t.Message))
	type at struct {
		pos int
		f   *itemFacts
	}
	var found []at
	for _, m := range tf.mentionsIn(msg, make([]bool, len(msg))) {
		found = append(found, at{m.start, m.item})
	}
	for _, loc := range linkRefRE.FindAllStringIndex(msg, -1) {
		n, err := strconv.Atoi(strings.TrimFunc(msg[loc[0]:loc[1]], func(r rune) bool { return r < '0' || r > '9' }))
		if err != nil {
			continue
		}
		for _, f := range tf.items {
			if slices.Contains(f.links, n) {
				found = append(found, at{loc[0], f})
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	var out []*itemFacts
	for _, a := range found {
		if !slices.Contains(out, a.f) {
			out = append(out, a.f)
		}
	}
	return out
}
