package liveroom

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/internal/testfixture"
)

// TestShopExpertIsPerfect holds every shop question's expert answer to
// the suites' bar: score 1 under the grader and no statement the tools do
// not back.
func TestShopExpertIsPerfect(t *testing.T) {
	h := testfixture.DemoHarness(t)
	types := map[QuestionType]int{}
	for seed := uint64(1); seed <= 120; seed++ {
		room, err := ShopRoom(seed, ShopConfig{MinItems: 1, MaxItems: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range room.ShopQuestions(seed, 12) {
			types[q.Type]++
			msgs, err := room.Expert(h, nil, q)
			if err != nil {
				t.Fatalf("%s %s %q: %v", q.ID, q.Type, q.Text, err)
			}
			g := room.GradeTranscript(q, msgs, GradeOptions{ReplyChars: h.Pipeline.ReplyChars.Value})
			if q.Gold.Silent {
				continue
			}
			if g.Score != 1 || len(g.Unbacked) > 0 {
				t.Errorf("%s %s %q → %q: score %v, %v, unbacked %v", q.ID, q.Type, q.Text, lastReply(msgs), g.Score, g.Deductions, g.Unbacked)
			}
		}
	}
	for _, qt := range ShopQuestionTypes() {
		if types[qt] == 0 {
			t.Errorf("no %s question in 120 rooms", qt)
		}
	}
}

// TestShopCatalogsAreValid checks that every shop catalog parses as a
// version 2 document, that a seed always gives the same catalog and
// questions, and that the catalogs use every kind of field.
func TestShopCatalogsAreValid(t *testing.T) {
	used := map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		c := ShopCatalog(seed, ShopConfig{MinItems: 2, MaxItems: 10})
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(ShopCatalog(seed, ShopConfig{MinItems: 2, MaxItems: 10}))
		if string(data) != string(again) {
			t.Fatalf("seed %d: two catalogs", seed)
		}
		if _, err := catalog.Parse(data); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, data)
		}
		var doc map[string]any
		_ = json.Unmarshal(data, &doc)
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					used[prefix+k]++
					walk(prefix+k+".", e)
				}
			case []any:
				for _, e := range x {
					walk(prefix, e)
				}
			}
		}
		walk("", doc)
		r1, _ := ShopRoom(seed, ShopConfig{})
		r2, _ := ShopRoom(seed, ShopConfig{})
		q1, q2 := r1.ShopQuestions(seed, 10), r2.ShopQuestions(seed, 10)
		if !slices.EqualFunc(q1, q2, func(a, b Question) bool { return a.Text == b.Text && a.ID == b.ID }) {
			t.Fatalf("seed %d: two question lists", seed)
		}
	}
	for _, f := range []string{"products.link", "products.aliases", "products.description", "products.list_price", "products.stock",
		"products.stock_state", "products.restock_date", "products.presale_ship_date", "products.limit_per_buyer",
		"products.variants.axis", "products.variants.price", "products.variants.stock", "products.variants.restock_date",
		"products.specs.unit", "products.specs.value_zh", "products.ingredients", "products.allergens", "products.shelf_life_days",
		"products.best_before", "products.certifications", "products.size_chart.min_height_cm", "products.shipping.ship_from",
		"products.shipping.dispatch_hours", "products.shipping.fee", "products.shipping.carrier", "products.shipping.excluded_regions",
		"products.returns.accepted", "products.returns.days", "products.returns.no_reason", "products.returns.conditions",
		"products.returns.shipping_insurance", "coupons.amount", "coupons.percent", "coupons.min_spend", "coupons.products",
		"coupons.new_viewers_only", "coupons.remaining", "coupons.per_buyer", "coupons.ends", "promotions.quantity",
		"promotions.nth_percent", "promotions.price", "promotions.percent", "promotions.gift", "promotions.min_spend", "promotions.ends"} {
		if used[f] == 0 {
			t.Errorf("no shop catalog states %s", f)
		}
	}
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		for _, p := range ShopCatalog(seed, ShopConfig{}).Promotions {
			kinds[string(p.Kind)] = true
		}
	}
	for _, k := range []catalog.PromotionKind{catalog.PromoPrice, catalog.PromoPercent, catalog.PromoMultiBuy, catalog.PromoBundle, catalog.PromoGift} {
		if !kinds[string(k)] && k != catalog.PromoPrice {
			t.Errorf("no shop catalog has a %s promotion", k)
		}
	}
	_ = strings.ToLower
}

// TestShopCouponsReachedAndNot: some shop catalogs have a percent coupon
// on everything beside the items' own, so an item's coupon_check gives a
// coupon its order does not reach with the best one it does — the demo
// cream's pair, which the models mixed up (trainer/REPRODUCTION.md, job3).
func TestShopCouponsReachedAndNot(t *testing.T) {
	pairs := 0
	for seed := uint64(1); seed <= 200 && pairs < 3; seed++ {
		r, err := ShopRoom(seed, ShopConfig{MinItems: 2, MaxItems: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Items {
			out, err := r.CallTool("coupon_check", map[string]any{"item_id": it.ID})
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Eligible bool           `json:"eligible"`
				Best     map[string]any `json:"best_coupon"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			if !res.Eligible && res.Best != nil {
				pairs++
			}
		}
	}
	if pairs < 3 {
		t.Errorf("%d items in 200 shop catalogs have a coupon not reached beside a best one reached; want several", pairs)
	}
	// Where a room has such an item, most coupon questions ask of it.
	asked, coupon := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		r, err := ShopRoom(seed, ShopConfig{MinItems: 2, MaxItems: 8})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(r.Items, r.couponPair) {
			continue
		}
		for _, q := range r.ShopQuestions(seed, 40) {
			if q.Type != QCoupon {
				continue
			}
			coupon++
			for _, c := range q.Gold.Calls {
				id, _ := c.Arguments["item_id"].(string)
				if it, ok := r.Item(id); c.Name == ToolCouponCheck && ok && r.couponPair(it) {
					asked++
					break
				}
			}
		}
	}
	if coupon == 0 || asked*2 < coupon {
		t.Errorf("in rooms with a pair, %d of %d coupon questions ask of one; want most", asked, coupon)
	}
}

// TestShopIsDisjointFromTransfer holds the training catalogs and their
// questions apart from the transfer family, which nothing may train on:
// no item name or alias of a shop catalog is one of a transfer catalog,
// and no shop question, names and numbers masked, reads like a transfer
// question.
func TestShopIsDisjointFromTransfer(t *testing.T) {
	transferNames := map[string]bool{}
	transferSkeletons := map[string]string{}
	for seed := uint64(1); seed <= 150; seed++ {
		r, err := TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Items {
			for _, n := range append([]string{it.NameZH}, it.Aliases...) {
				if _, isLink := LinkNumber(n); !isLink {
					transferNames[normalizeName(n)] = true
				}
			}
		}
		for _, q := range r.TransferQuestions(seed, 20) {
			transferSkeletons[skeleton(r, q.Text)] = q.Text
		}
	}
	n := 0
	for seed := uint64(1); seed <= 150; seed++ {
		r, err := ShopRoom(seed, ShopConfig{MinItems: 1, MaxItems: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Items {
			for _, name := range append([]string{it.NameZH}, it.Aliases...) {
				if transferNames[normalizeName(name)] {
					t.Errorf("shop room %d names an item %q as a transfer catalog does", seed, name)
				}
			}
		}
		for _, q := range r.ShopQuestions(seed, 20) {
			n++
			if q.Type == QChitchat || q.Type == QSpam {
				continue // what nobody asks about an item
			}
			if same, ok := transferSkeletons[skeleton(r, q.Text)]; ok {
				t.Errorf("shop question %q (%s) reads like the transfer question %q", q.Text, q.Type, same)
			}
		}
	}
	if n < 2000 {
		t.Fatalf("only %d shop questions compared", n)
	}
}
