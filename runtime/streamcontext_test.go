package runtime

import (
	"fmt"
	"strings"
	"testing"
	"time"

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

func TestFeaturedNowFollowsTheSchedule(t *testing.T) {
	// Serum every 3 minutes, cream every 5: serum fires at 3, 6, 9, 12, 15;
	// cream at 5, 10, 15.
	two := []FeaturedSlot{{Item: "p-serum", Every: 3 * time.Minute}, {Item: "p-cream", Every: 5 * time.Minute}}
	for _, tc := range []struct {
		name    string
		slots   []FeaturedSlot
		elapsed time.Duration
		want    string
	}{
		{"no rules", nil, time.Hour, ""},
		{"before any fired: the first rule's item", two, 2 * time.Minute, "p-serum"},
		{"at the start", two, 0, "p-serum"},
		{"serum fired at 3", two, 4 * time.Minute, "p-serum"},
		{"cream fired at 5", two, 5 * time.Minute, "p-cream"},
		{"cream still, serum due at 6", two, 5*time.Minute + 59*time.Second, "p-cream"},
		{"serum fired at 6", two, 6 * time.Minute, "p-serum"},
		{"cream fired at 10 after serum at 9", two, 11 * time.Minute, "p-cream"},
		{"both at 15: the later rule fires last", two, 15 * time.Minute, "p-cream"},
		{"serum at 18 after both at 15", two, 18 * time.Minute, "p-serum"},
		{"one rule", two[1:], 17 * time.Minute, "p-cream"},
		{"a rule without a period never fires", []FeaturedSlot{{Item: "p-a"}, {Item: "p-b", Every: time.Minute}}, 30 * time.Second, "p-a"},
		{"the rule with a period fires", []FeaturedSlot{{Item: "p-a"}, {Item: "p-b", Every: time.Minute}}, 90 * time.Second, "p-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FeaturedNow(tc.slots, tc.elapsed); got != tc.want {
				t.Errorf("FeaturedNow(%v) = %q, want %q", tc.elapsed, got, tc.want)
			}
		})
	}
}
