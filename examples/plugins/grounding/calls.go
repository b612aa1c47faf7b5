package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/livehat/livehat/sdk/jsonx"
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

// pitchWords ask the host to suggest something, which a price answers.
var pitchWords = []string{"推荐", "买什么", "买哪", "有什么好", "有啥好", "recommend", "suggest", "what should i buy", "what's good"}

// unasked reports whether a reply prices an item for a viewer who named
// none and asked nothing of the shop: "主播声音好好听" answered with a
// flask's price, "What's the weather tomorrow?" with a blanket's. job10
// did that under renamed harnesses, having loaded a price skill for a
// greeting. The reply is true and answers nothing that was said.
func unasked(t *Turn, tf *turnFacts) bool {
	return asksNothing(t, tf) && statesMoney(t.Reply)
}

// asksNothing reports whether a viewer's message names no item and asks
// nothing of the shop: a greeting, a compliment, the weather, abuse.
func asksNothing(t *Turn, tf *turnFacts) bool {
	msg := asciiLower(normalize(t.Message))
	switch {
	case strings.HasPrefix(t.Message, narrationPrefix), len(wordIntents(t.Message)) > 0, containsAny(msg, pitchWords),
		statesMoney(t.Message), slices.ContainsFunc(tf.items, func(f *itemFacts) bool { return namedBy(t.Message, f) }),
		len(askedFacts(t, tf)) > 0, namesAllergen(t, tf), lookedUpFromMessage(t, msg):
		return false
	}
	return true
}

// lookedUpFromMessage reports whether a lookup of the turn found an item
// by words of the message ("necklace" of an item named only in Chinese):
// the plugin's reading of a name goes further than the names the hook
// knows.
func lookedUpFromMessage(t *Turn, msg string) bool {
	for _, c := range t.parsedCalls() {
		if exportOf(c.Call) != "product_lookup" || c.result.Get("found").Kind != jsonx.Bool || !c.result.Get("found").Bool {
			continue
		}
		for _, v := range leaves(c.args) {
			if q := asciiLower(strings.TrimSpace(v)); len(q) >= 2 && strings.Contains(msg, q) {
				return true
			}
		}
	}
	return false
}

// leaves returns the strings of a JSON value, nested ones too (a wrapped
// call's arguments).
func leaves(v *jsonx.Value) []string {
	if v == nil {
		return nil
	}
	if v.Kind == jsonx.String {
		return []string{v.Str}
	}
	var out []string
	for _, e := range v.Elems {
		out = append(out, leaves(e)...)
	}
	return out
}

// unaskedFeedback tells the model to answer what the viewer said.
const unaskedFeedback = "The viewer asked nothing about the items: answer what they said in one short friendly sentence, without prices."
