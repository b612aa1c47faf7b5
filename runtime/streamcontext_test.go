package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

func TestStreamContextLines(t *testing.T) {
	many := func(n int) (names, ids []string) {
		for i := range n {
			names, ids = append(names, fmt.Sprintf("item %d", i)), append(ids, fmt.Sprintf("p-%d", i))
		}
		return names, ids
	}
	names25, ids25 := many(25)
	for _, tc := range []struct {
		name string
		got  harness.ContextItem
		want harness.ContextItem
	}{
		{"featured", FeaturedItem("玻尿酸精华", "p-serum"), harness.ContextItem{Title: "Featured item", Text: "玻尿酸精华 (id p-serum)"}},
		{"on sale", ItemsOnSale([]string{"Red jacket", "Sneakers"}, []string{"p-1", "p-2"}), harness.ContextItem{Title: "Items on sale", Text: "Red jacket (p-1), Sneakers (p-2)"}},
		{"more names than ids", ItemsOnSale([]string{"Red jacket", "Sneakers"}, []string{"p-1"}), harness.ContextItem{Title: "Items on sale", Text: "Red jacket (p-1)"}},
		{"none on sale", ItemsOnSale(nil, nil), harness.ContextItem{Title: "Items on sale"}},
		{"capped", ItemsOnSale(names25, ids25), harness.ContextItem{Title: "Items on sale", Text: strings.Join(func() []string {
			var parts []string
			for i := range MaxItemsOnSale {
				parts = append(parts, fmt.Sprintf("item %d (p-%d)", i, i))
			}
			return parts
		}(), ", ")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}
