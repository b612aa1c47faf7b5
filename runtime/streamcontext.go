package runtime

import (
	"fmt"
	"strings"

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
