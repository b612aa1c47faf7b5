package rehearsal

import (
	"reflect"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
)

func exampleCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQuestionsAskAboutTheCatalogsOwnFacts(t *testing.T) {
	c := exampleCatalog(t)
	tests := []struct {
		lang string
		want []Question
	}{
		{"zh", []Question{
			{Category: Price, Item: "p-serum", Text: "玻尿酸精华多少钱？", Stated: true},
			// Each category asks about the item with the fewest questions yet.
			{Category: Stock, Item: "p-cream", Text: "修护面霜还有货吗？", Stated: true},
			{Category: Variant, Item: "p-hoodie", Text: "加绒卫衣的L还有吗？", Stated: true},
			{Category: Size, Item: "p-hoodie", Text: "我身高162体重53公斤，加绒卫衣穿什么码？", Stated: true},
			{Category: Coupon, Item: "p-sunscreen", Text: "清透防晒霜有优惠券吗？", Stated: true},
			{Category: Promotion, Item: "p-lipstick", Text: "丝绒口红现在有什么活动？", Stated: true},
			// No product states a link: the question tests "not stated".
			{Category: Link, Item: "p-serum", Text: "玻尿酸精华是几号链接？", Stated: false},
			{Category: Shipping, Item: "p-cream", Text: "修护面霜多久发货？包邮吗？", Stated: true},
		}},
		{"en", []Question{
			{Category: Price, Item: "p-serum", Text: "How much is the 玻尿酸精华?", Stated: true},
			{Category: Stock, Item: "p-cream", Text: "Is the 修护面霜 still in stock?", Stated: true},
			{Category: Variant, Item: "p-hoodie", Text: "Is the L 加绒卫衣 still available?", Stated: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			got := Questions(c, tt.lang, len(tt.want))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Questions =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestQuestionsCoverEveryCategoryTheCatalogFits(t *testing.T) {
	c := exampleCatalog(t)
	// Skincare asks for ingredients the catalog does not state.
	all := Questions(c, "zh", 0)
	cats := map[Category]bool{}
	for _, q := range all {
		cats[q.Category] = true
		if q.Category == Ingredients && q.Stated {
			t.Errorf("ingredients question %q marked stated; the catalog lists none", q.Text)
		}
	}
	for _, want := range []Category{Price, Stock, Variant, Size, Coupon, Promotion, Link, Shipping, Returns, Ingredients, Spec} {
		if !cats[want] {
			t.Errorf("no %s question in %d questions", want, len(all))
		}
	}
	// Nothing in the catalog is food: no allergen question.
	if cats[Allergens] {
		t.Error("an allergen question for a catalog without food")
	}
	// The rounds go on to other items; no question repeats.
	seen := map[string]bool{}
	items := map[string]bool{}
	for _, q := range all {
		if seen[q.Text] {
			t.Errorf("question %q asked twice", q.Text)
		}
		seen[q.Text], items[q.Item] = true, true
	}
	if len(items) != len(c.Products) {
		t.Errorf("questions cover %d of %d items", len(items), len(c.Products))
	}
	// Deterministic.
	if again := Questions(c, "zh", 0); !reflect.DeepEqual(again, all) {
		t.Error("two calls differ")
	}
}

func TestQuestionsForFoodAndEmptyCatalogs(t *testing.T) {
	none := []string{}
	c := &catalog.Catalog{Currency: "CNY", Products: []catalog.Product{
		{ID: "tea", Name: "Jasmine tea", Category: "tea", Price: 39, Ingredients: []string{"jasmine", "green tea"}, Allergens: none,
			Specs: []catalog.Spec{{Key: "net_weight", Label: "net weight", LabelZh: "净含量", Value: catalog.NumberValue(250), Unit: "g"}}},
	}}
	got := map[Category]Question{}
	for _, q := range Questions(c, "en", 0) {
		got[q.Category] = q
	}
	if q := got[Ingredients]; !q.Stated || q.Text != "What are the ingredients of the Jasmine tea?" {
		t.Errorf("ingredients question = %+v", q)
	}
	if q := got[Allergens]; !q.Stated {
		t.Errorf("allergens question = %+v (none stated is a statement)", q)
	}
	if q := got[Spec]; q.Text != "What is the net weight of the Jasmine tea?" {
		t.Errorf("spec question = %+v", q)
	}
	if q := got[Size]; q.Text != "" {
		t.Errorf("a size question for tea: %+v", q)
	}
	zh := Questions(c, "zh", 0)
	if !strings.Contains(zh[len(zh)-1].Text, "净含量") {
		t.Errorf("Chinese spec question uses the Chinese label: %+v", zh[len(zh)-1])
	}
	if q := Questions(&catalog.Catalog{Currency: "CNY"}, "zh", 5); len(q) != 0 {
		t.Errorf("empty catalog: %v", q)
	}
}

func TestKindsOfItem(t *testing.T) {
	tests := []struct {
		p                         catalog.Product
		apparel, consumable, food bool
	}{
		{catalog.Product{Category: "女装"}, true, false, false},
		{catalog.Product{Category: "gadgets", Variants: []catalog.Variant{{Name: "xl"}}}, true, false, false},
		{catalog.Product{Variants: []catalog.Variant{{Name: "红色", Axis: "尺码"}}}, true, false, false},
		{catalog.Product{Category: "Skincare"}, false, true, false},
		{catalog.Product{Category: "零食"}, false, true, true},
		{catalog.Product{Category: "phone cases"}, false, false, false},
		{catalog.Product{}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.p.Category, func(t *testing.T) {
			if got := Apparel(&tt.p); got != tt.apparel {
				t.Errorf("Apparel = %v", got)
			}
			if got := Consumable(&tt.p); got != tt.consumable {
				t.Errorf("Consumable = %v", got)
			}
			if got := Food(&tt.p); got != tt.food {
				t.Errorf("Food = %v", got)
			}
		})
	}
}
