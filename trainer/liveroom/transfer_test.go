package liveroom

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/internal/testfixture"
)

// skeleton is a question's wording with the room's names, variants and
// numbers masked and punctuation and spaces dropped: the template it was
// made from.
func skeleton(r *Room, text string) string {
	var names []string
	for _, it := range r.Items {
		names = append(names, it.NameZH, it.NameEN, it.ID)
		names = append(names, it.Aliases...)
		for _, v := range it.Variants {
			names = append(names, v.Name)
		}
		for _, s := range it.Specs {
			names = append(names, s.Label, s.LabelZh)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	s := partLink.ReplaceAllString(wholeLink.ReplaceAllString(strings.ToLower(text), "\x00"), "\x00")
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			s = strings.ReplaceAll(s, n, "\x00")
		}
	}
	s = regexp.MustCompile(`\d+(\.\d+)?`).ReplaceAllString(s, "\x01")
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
}

// TestTransferPhrasingIsDisjoint holds the transfer family's wordings
// apart from the training rooms': no transfer question, its names and
// numbers masked, reads like a question of any variety level.
func TestTransferPhrasingIsDisjoint(t *testing.T) {
	training := map[string]string{}
	for _, cfg := range append(varietyLevels(), RoomConfig{MinItems: 1, MaxItems: 6, Variety: 3}) {
		for seed := uint64(1); seed <= 60; seed++ {
			r := NewRoom(seed, cfg)
			for _, q := range r.Questions(seed, 60, QuestionConfig{TypoRate: 0.3}) {
				training[skeleton(r, q.Text)] = q.Text
			}
			for _, nt := range []QuestionType{QNarrateFeatured, QNarrateCoupon, QNarrateStock} {
				for _, l := range []Lang{LangZH, LangEN} {
					q, _ := r.Narration(nt, l)
					training[skeleton(r, q.Text)] = q.Text
				}
			}
		}
	}
	n := 0
	for seed := uint64(1); seed <= 150; seed++ {
		r, err := TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range r.TransferQuestions(seed, 20) {
			n++
			if same, ok := training[skeleton(r, q.Text)]; ok {
				t.Errorf("transfer question %q (%s) reads like the training question %q", q.Text, q.Type, same)
			}
		}
	}
	if n < 2000 {
		t.Fatalf("only %d transfer questions compared", n)
	}
}

// TestSkeletonFindsTrainingWording shows the disjointness test can fail:
// a training wording asked in a transfer room is recognised.
func TestSkeletonFindsTrainingWording(t *testing.T) {
	train := NewRoom(1, RoomConfig{})
	transfer, err := TransferRoom(1)
	if err != nil {
		t.Fatal(err)
	}
	a := skeleton(train, train.Items[0].NameZH+"多少钱？")
	b := skeleton(transfer, transfer.Items[0].Aliases[0]+"多少钱？")
	c := skeleton(transfer, "3号链接多少钱？")
	if a != b || a != c {
		t.Errorf("skeletons %q, %q and %q differ", a, b, c)
	}
}

// TestTransferKindsAreDisjoint holds the family's item kinds apart from
// the training rooms': no kind, in either language, is, contains or is
// contained in a training kind or its short form.
func TestTransferKindsAreDisjoint(t *testing.T) {
	var trainingEN, trainingZH []string
	for _, c := range Categories() {
		for _, k := range productKinds(c) {
			trainingEN = append(trainingEN, strings.Fields(strings.ToLower(k.en))...)
			trainingZH = append(trainingZH, k.zh)
			if s := shortKind(k.zh); s != "" {
				trainingZH = append(trainingZH, s)
			}
			if s := shortKind(k.en); s != "" {
				trainingEN = append(trainingEN, s)
			}
		}
	}
	for _, k := range transferKinds() {
		for _, w := range strings.Fields(strings.ToLower(k.en)) {
			if slices.Contains(trainingEN, strings.TrimSuffix(w, "s")) || slices.Contains(trainingEN, w) {
				t.Errorf("transfer kind %q shares the word %q with a training kind", k.en, w)
			}
		}
		for _, z := range trainingZH {
			if strings.Contains(k.zh, z) || strings.Contains(z, k.zh) {
				t.Errorf("transfer kind %q overlaps the training kind %q", k.zh, z)
			}
		}
		for _, f := range k.features {
			for _, d := range append(descriptors(), moreDescriptors()...) {
				if strings.Contains(f, d.zh) {
					t.Errorf("transfer kind %q's name word %q holds the training descriptor %q", k.zh, f, d.zh)
				}
			}
		}
	}
	for _, b := range transferBrands() {
		if strings.ContainsFunc(b, func(r rune) bool {
			return strings.ContainsRune("雅诗兰黛珀莱欧菲米悦澜清韵禾木森沐星辰晴岚素颜花漾初见暖阳小鹿橙意", r)
		}) {
			t.Errorf("transfer brand %q uses a character of the training brands", b)
		}
	}
}

// TestTransferIsDeterministicAndValid checks that a seed gives the same
// catalog and questions every time, and that every catalog is a valid
// document that reads into a room without loss.
func TestTransferIsDeterministicAndValid(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		a, _ := json.Marshal(TransferCatalog(seed))
		b, _ := json.Marshal(TransferCatalog(seed))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two catalogs differ", seed)
		}
		c, err := catalog.Parse(a)
		if err != nil {
			t.Fatalf("seed %d: the catalog is not valid: %v\n%s", seed, err, a)
		}
		r, err := TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		if back, _ := json.Marshal(r.Catalog()); !bytes.Equal(back, a) {
			t.Fatalf("seed %d: the room does not hold its catalog", seed)
		}
		if len(c.Products) < 3 {
			t.Errorf("seed %d: %d products", seed, len(c.Products))
		}
		q1, _ := json.Marshal(r.TransferQuestions(seed, 10))
		r2, _ := TransferRoom(seed)
		q2, _ := json.Marshal(r2.TransferQuestions(seed, 10))
		if !bytes.Equal(q1, q2) {
			t.Fatalf("seed %d: two question sets differ", seed)
		}
	}
}

// TestTransferFieldMix checks that the family states what the training
// rooms never do, and asks every kind of question about it.
func TestTransferFieldMix(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 100; seed++ {
		c := TransferCatalog(seed)
		for _, p := range c.Products {
			count := func(what string, ok bool) {
				if ok {
					seen[what]++
				}
			}
			count("link", p.Link > 0)
			count("variant without own stock", slices.ContainsFunc(p.Variants, func(v catalog.Variant) bool { return v.Stock == nil }))
			count("variant price", slices.ContainsFunc(p.Variants, func(v catalog.Variant) bool { return v.Price != nil }))
			count("restock date", !p.RestockDate.IsZero() || slices.ContainsFunc(p.Variants, func(v catalog.Variant) bool { return !v.RestockDate.IsZero() }))
			count("stock not stated", p.Stock == nil && p.StockState == "" && !slices.ContainsFunc(p.Variants, func(v catalog.Variant) bool { return v.Stock != nil }))
			count("low stock state", p.StockState == catalog.LowStock)
			count("presale", p.StockState == catalog.Presale)
			count("allergens", len(p.Allergens) > 0)
			count("no allergens", p.Allergens != nil && len(p.Allergens) == 0)
			count("allergens not stated", p.Ingredients != nil && p.Allergens == nil)
			count("best before", !p.BestBefore.IsZero())
			count("shelf life", p.ShelfLifeDays > 0)
			count("typed spec with a unit", slices.ContainsFunc(p.Specs, func(s catalog.Spec) bool { return s.Unit != "" }))
			count("yes/no spec", slices.ContainsFunc(p.Specs, func(s catalog.Spec) bool { _, ok := s.Value.Bool(); return ok }))
			count("dispatch in hours", p.Shipping != nil && p.Shipping.DispatchHours%24 != 0)
			count("fee not stated", p.Shipping != nil && p.Shipping.Fee == nil)
			count("ship from", p.Shipping != nil && p.Shipping.ShipFrom != "")
			count("conditional returns", p.Returns != nil && len(p.Returns.Conditions) > 0)
			count("no returns", p.Returns != nil && !p.Returns.Accepted)
			count("returns not stated", p.Returns == nil)
		}
		for _, cp := range c.Coupons {
			seen["percent coupon"] += map[bool]int{true: 1}[cp.Percent > 0]
			seen["coupon for every item"] += map[bool]int{true: 1}[len(cp.Products) == 0]
			seen["all claimed"] += map[bool]int{true: 1}[cp.Remaining != nil && *cp.Remaining == 0]
		}
		for _, p := range c.Promotions {
			seen["multi-buy"] += map[bool]int{true: 1}[p.Kind == catalog.PromoMultiBuy]
		}
		r, err := TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range r.TransferQuestions(seed, 10) {
			seen["question "+string(q.Type)]++
			if hasHan(q.Text) && q.Lang == LangEN || !hasHan(q.Text) && q.Lang == LangZH {
				seen["mixed language"]++
			}
			if _, ok := LinkNumber(q.Text); ok {
				seen["named by link number"]++
			}
		}
	}
	want := []string{"link", "variant without own stock", "variant price", "restock date", "stock not stated", "low stock state", "presale",
		"allergens", "no allergens", "allergens not stated", "best before", "shelf life", "typed spec with a unit", "yes/no spec",
		"dispatch in hours", "fee not stated", "ship from", "conditional returns", "no returns", "returns not stated",
		"percent coupon", "coupon for every item", "all claimed", "multi-buy", "mixed language", "named by link number"}
	for _, ty := range append(CatalogQuestionTypes(), QPrice, QCoupon, QStock, QSpecs, QLink, QChitchat, QSpam, QInjection) {
		want = append(want, "question "+string(ty))
	}
	for _, w := range want {
		if seen[w] < 3 {
			t.Errorf("the transfer family states %q %d times in 100 catalogs, want several", w, seen[w])
		}
	}
}

// TestTransferExpertIsRight runs the expert on the family's questions: it
// makes the gold calls and states every fact the gold asks, nothing the
// gold forbids and no amount it does not allow. The grader's own check
// of unbacked statements is reported, not held here: its rules are the
// grader's.
func TestTransferExpertIsRight(t *testing.T) {
	h := testfixture.DemoHarness(t)
	unbacked, n := map[string]int{}, 0
	for seed := uint64(1); seed <= 100; seed++ {
		room, err := TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range room.TransferQuestions(seed, 10) {
			n++
			msgs, err := room.Expert(h, nil, q)
			if err != nil {
				t.Fatalf("%s %s %q: %v", q.ID, q.Type, q.Text, err)
			}
			reply := lastReply(msgs)
			g := room.GradeTranscript(q, msgs, GradeOptions{ReplyChars: h.Pipeline.ReplyChars.Value})
			if g.Effectiveness != 1 || g.ToolRationality != 1 || g.SkillSelection != 1 {
				t.Errorf("%s %s %q → %q: %v", q.ID, q.Type, q.Text, reply, g.Deductions)
			}
			for _, f := range q.Gold.MustNotState {
				if room.states(f, reply, strings.ToLower(reply)) {
					t.Errorf("%s %s %q → %q states %s", q.ID, q.Type, q.Text, reply, f.What)
				}
			}
			for _, a := range currencyAmounts(reply) {
				if !containsMoney(q.Gold.Money, a) {
					t.Errorf("%s %s %q → %q names %v yuan, which the gold does not allow", q.ID, q.Type, q.Text, reply, a)
				}
			}
			for _, u := range g.Unbacked {
				unbacked[u.Kind]++
				if unbacked[u.Kind] <= 4 {
					t.Logf("%s %s %q → %q: %s %q: %s", q.ID, q.Type, q.Text, reply, u.Kind, u.Phrase, u.Why)
				}
			}
		}
	}
	t.Logf("%d questions; the grader's unbacked findings on the expert's replies by kind: %v", n, unbacked)
}

// goldRoom is a hand-written catalog whose facts the gold tests below
// state.
func goldRoom(t *testing.T) *Room {
	t.Helper()
	c, err := catalog.Parse([]byte(`{"schema":"livehat.catalog/2","currency":"CNY","products":[
		{"id":"bar","link":3,"name":"麦穗蛋白棒","aliases":["蛋白棒","Protein Bar","麦穗蛋白棒"],"price":59.9,"list_price":79,
		 "stock":0,"stock_state":"sold_out","restock_date":"2026-12-20",
		 "ingredients":["乳清蛋白","花生酱"],"allergens":["milk","peanut"],"best_before":"2027-05-12",
		 "shipping":{"ship_from":"浙江义乌","dispatch_hours":36},
		 "returns":{"accepted":false}},
		{"id":"fryer","link":4,"name":"拾光可视空气炸锅","aliases":["空气炸锅","Air Fryer","拾光空气炸锅"],"price":299,
		 "stock":40,"variants":[{"name":"奶白","axis":"colour"},{"name":"曜黑","axis":"colour"}],
		 "specs":[{"key":"capacity","label":"capacity","label_zh":"容量","value":5.5,"unit":"L"},
		          {"key":"dishwasher_safe","label":"dishwasher safe","label_zh":"可进洗碗机","value":false}],
		 "shipping":{"dispatch_hours":48,"fee":0},
		 "returns":{"accepted":true,"days":15,"conditions":["包装完好、配件齐全"]}},
		{"id":"pens","name":"竹里速干中性笔","aliases":["中性笔","Gel Pens","竹里中性笔"],"price":12.9,
		 "ingredients":["墨水"],"returns":{"accepted":true,"days":7,"no_reason":true}}],
		"coupons":[{"id":"pct","name":"炸锅9折券","percent":10,"products":["fryer"]},{"id":"all","name":"全场满99减10","amount":10,"min_spend":99}],
		"promotions":[{"id":"m","title":"蛋白棒第二件半价","kind":"multi_buy","products":["bar"],"quantity":2,"nth_percent":50}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := RoomFromCatalog(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCatalogGold checks the gold of the question types about version 2
// facts on a hand-written catalog: what a right reply must say, and that
// a wrong one fails.
func TestCatalogGold(t *testing.T) {
	r := goldRoom(t)
	bar, _ := r.Item("bar")
	fryer, _ := r.Item("fryer")
	pens, _ := r.Item("pens")
	for _, tc := range []struct {
		name        string
		a           ask
		calls       []string
		right       string
		wrong       string
		wrongReason string // what grading the wrong reply says
	}{
		{"price by link number", ask{typ: QLinkPrice, item: bar, query: "3号链接"}, []string{"load_skill", "product_lookup"},
			"蛋白棒现在59.90元。", "蛋白棒现在79元。", "does not state current price"},
		{"allergen it contains", ask{typ: QAllergen, item: bar, query: "蛋白棒", topic: "peanut"}, []string{"load_skill", "product_lookup"},
			"这款含有花生，介意的朋友请注意。", "这款不含花生。", "states denies peanut"},
		{"allergen it does not list", ask{typ: QAllergen, item: bar, query: "蛋白棒", topic: "egg"}, []string{"load_skill", "product_lookup"},
			"It does not contain egg, going by its allergen list.", "It contains egg.", "does not state does not contain egg"},
		{"allergens not stated", ask{typ: QAllergen, item: pens, query: "中性笔", topic: "milk"}, []string{"load_skill", "product_lookup"},
			"这款没有标注过敏原信息，我帮您确认一下。", "这款不含奶。", "states claims to know the allergens"},
		{"restock date", ask{typ: QRestock, item: bar, query: "蛋白棒"}, []string{"load_skill", "product_lookup", "check_stock"},
			"抱歉，目前售罄，预计12月20日补货。", "还有货，放心拍。", "states claims it is available"},
		{"multi-buy total", ask{typ: QMultiBuy, item: bar, query: "蛋白棒", qty: 2}, []string{"load_skill", "product_lookup", "coupon_check"},
			"第二件半价，两件一共89.85元。", "两件一共119.80元。", "does not state total for 2 with m"},
		{"percent coupon", ask{typ: QCoupon, item: fryer, query: "空气炸锅", qty: 1}, []string{"load_skill", "product_lookup", "coupon_check"},
			"可以用券，减29.90元，券后269.10元。", "可以用券，减10元，券后289元。", "does not state coupon discount"},
		{"variant without own stock", ask{typ: QStock, item: fryer, query: "空气炸锅", variant: "曜黑"}, []string{"load_skill", "product_lookup", "check_stock"},
			"曜黑有货的。", "曜黑已经售罄了。", "states sold out"},
		{"yes/no spec that is no", ask{typ: QSpecs, item: fryer, query: "空气炸锅", topic: "dishwasher_safe"}, []string{"load_skill", "product_lookup"},
			"不是的，这款不可进洗碗机。", "是的，可进洗碗机。", "does not state dishwasher_safe"},
		{"spec with a unit", ask{typ: QSpecs, item: fryer, query: "空气炸锅", topic: "capacity"}, []string{"load_skill", "product_lookup"},
			"Capacity: 5.5 litres.", "Capacity: 4.5 litres.", "does not state capacity"},
		{"conditional returns", ask{typ: QReturns, item: fryer, query: "空气炸锅"}, []string{"load_skill", "product_lookup", "shipping_policy"},
			"15天内可以退，包装完好、配件齐全。", "支持7天无理由退货。", "does not state return window"},
		{"no returns", ask{typ: QReturns, item: bar, query: "蛋白棒"}, []string{"load_skill", "product_lookup", "shipping_policy"},
			"抱歉，这款不支持退换。", "可以退。", "does not state no returns"},
		{"dispatch in hours and where from", ask{typ: QDispatch, item: bar, query: "蛋白棒", topic: TopicShipFrom}, []string{"load_skill", "product_lookup", "shipping_policy"},
			"It ships within 36 hours, from Yiwu, Zhejiang.", "It ships within 2 days.", "does not state dispatch time"},
		{"fee not stated", ask{typ: QUnstated, item: bar, query: "蛋白棒", topic: TopicShippingFee}, []string{"load_skill", "product_lookup", "shipping_policy"},
			"运费商家没有标注，我确认一下再回复您。", "包邮哦。", "does not state shipping_fee is not stated"},
		{"best before", ask{typ: QBestBefore, item: bar, query: "蛋白棒"}, []string{"load_skill", "product_lookup"},
			"这批保质期到2027年5月12日。", "保质期一年。", "does not state how long it keeps"},
		{"price and stock in one", ask{typ: QTwoInOne, item: fryer, query: "空气炸锅", topic: string(QStock)}, []string{"load_skill", "product_lookup", "check_stock"},
			"现在299元，有货的。", "现在299元。", "does not state in stock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Question{Type: tc.a.typ, Lang: LangZH, Topic: tc.a.topic, Gold: r.catalogGold(tc.a)}
			var names []string
			for _, c := range q.Gold.Calls {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("gold calls %v, want %v", names, tc.calls)
			}
			holds := func(reply string) bool {
				lower := strings.ToLower(reply)
				stated := true
				for _, f := range q.Gold.MustState {
					stated = stated && r.states(f, reply, lower)
				}
				for _, f := range q.Gold.MustNotState {
					stated = stated && !r.states(f, reply, lower)
				}
				return stated
			}
			if !holds(tc.right) {
				t.Errorf("the right reply %q fails the gold %+v", tc.right, q.Gold)
			}
			if holds(tc.wrong) {
				t.Errorf("the wrong reply %q passes the gold %+v", tc.wrong, q.Gold)
			}
			msgs := []harness.Message{{Role: harness.RoleAssistant, Content: tc.wrong}}
			if g := r.GradeTranscript(q, msgs, GradeOptions{}); !slices.ContainsFunc(g.Deductions, func(d string) bool { return strings.Contains(d, tc.wrongReason) }) {
				t.Errorf("grading %q: %v, want a deduction %q", tc.wrong, g.Deductions, tc.wrongReason)
			}
		})
	}
}

// TestTransferQuestionsOnAnyCatalog asks the family's questions of
// catalogs it did not generate — the every-field example and one without
// aliases — and checks the expert answers them as the gold says.
func TestTransferQuestionsOnAnyCatalog(t *testing.T) {
	h := testfixture.DemoHarness(t)
	bare, err := catalog.Parse([]byte(`{"schema":"livehat.catalog/2","currency":"CNY","products":[
		{"id":"a","name":"猫抓板","price":39,"shipping":{"dispatch_hours":24}},{"id":"b","name":"逗猫棒","price":9.9,"returns":{"accepted":true,"days":7}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*catalog.Catalog{everyField(t), bare} {
		room, err := RoomFromCatalog(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range room.TransferQuestions(5, 40) {
			msgs, err := room.Expert(h, nil, q)
			if err != nil {
				t.Fatalf("%s %s %q: %v", q.ID, q.Type, q.Text, err)
			}
			if g := room.GradeTranscript(q, msgs, GradeOptions{}); g.Effectiveness != 1 || g.ToolRationality != 1 {
				t.Errorf("%s %s %q → %q: %v", q.ID, q.Type, q.Text, lastReply(msgs), g.Deductions)
			}
		}
	}
}
