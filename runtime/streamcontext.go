package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/livehat/livehat/harness"
)

// The stream-context lines below are a contract between serving and
// training: the console shows them to a live session's model, the training
// rooms (trainer/liveroom) write them into every trained prompt, and the
// rule-based host reads the featured item back from them. Living here,
// below both, they cannot drift apart.

// FeaturedTitle is the title of the stream-context line that names the
// featured item; FeaturedItem writes it.
const FeaturedTitle = "Featured item"

// FeaturedItem is the stream-context line that tells a host (a model or a
// rule-based one) which item is featured now: "Featured item: NAME (id
// ID)". A question that names no item is about it, and narration presents
// it.
func FeaturedItem(name, id string) harness.ContextItem {
	return harness.ContextItem{Title: FeaturedTitle, Text: fmt.Sprintf("%s (id %s)", name, id)}
}

// ItemsOnSaleTitle is the title of the stream-context line that lists the
// catalog's items, "name (id), …", at most MaxItemsOnSale of them.
const ItemsOnSaleTitle = "Items on sale"

// MaxItemsOnSale bounds the items-on-sale line of the stream context.
const MaxItemsOnSale = 20

// ItemsOnSale is the items-on-sale line for items given as name and id
// pairs, in catalog order.
func ItemsOnSale(names, ids []string) harness.ContextItem {
	parts := make([]string, 0, min(len(names), MaxItemsOnSale))
	for i := range min(len(names), len(ids), MaxItemsOnSale) {
		parts = append(parts, fmt.Sprintf("%s (%s)", names[i], ids[i]))
	}
	return harness.ContextItem{Title: ItemsOnSaleTitle, Text: strings.Join(parts, ", ")}
}

// FeaturedSlot is one featured-item rule of a stream's strategy: Item is
// introduced every Every from the start of the session's strategy, as
// RunStrategy fires a rule with that period.
type FeaturedSlot struct {
	Item  string
	Every time.Duration
}

// FeaturedNow is the item a stream's featured rules feature at elapsed
// since its strategy started: the item of the rule that fired last on its
// schedule, so that the featured-item line names what the host presented
// last. Rules due at the same moment fire in order, so the later one wins
// a tie. Before any rule fired, the first rule's item is featured (the one
// the merchant put first); "" without slots. A slot with no period never
// fires.
func FeaturedNow(slots []FeaturedSlot, elapsed time.Duration) string {
	if len(slots) == 0 {
		return ""
	}
	item, last := slots[0].Item, time.Duration(-1)
	for _, s := range slots {
		if s.Every <= 0 || elapsed < s.Every {
			continue
		}
		if at := elapsed - elapsed%s.Every; at >= last {
			item, last = s.Item, at
		}
	}
	return item
}
