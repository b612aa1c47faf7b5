package liveroom

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness/catalog"
)

// varietyLevels are room shapes of every variety level.
func varietyLevels() []RoomConfig {
	return []RoomConfig{{MinItems: 1, MaxItems: 6, Variety: -1}, {MinItems: 3, MaxItems: 6}, {MinItems: 1, MaxItems: 6, Variety: 1},
		{MinItems: 1, MaxItems: 6, Variety: 2}, {MinItems: 1, MaxItems: 6, Variety: 4}}
}

// TestCatalogStatesTheRoomsFacts checks the export of generated rooms: a
// valid version 2 document that states the version 1 facts the room has
// and invents none (no coupon count), and that reads back into a room
// whose export and tools are the same bytes.
func TestCatalogStatesTheRoomsFacts(t *testing.T) {
	for _, cfg := range varietyLevels() {
		for seed := uint64(1); seed <= 12; seed++ {
			room := NewRoom(seed, cfg)
			data, err := room.CatalogJSON()
			if err != nil {
				t.Fatal(err)
			}
			c, err := catalog.Parse(data)
			if err != nil {
				t.Fatalf("variety %d room %d: the export does not parse: %v\n%s", cfg.Variety, seed, err, data)
			}
			if !bytes.HasPrefix(data, []byte(`{"schema":"`+catalog.SchemaVersion+`"`)) {
				t.Errorf("room %d: export does not start with the schema version: %.60s", seed, data)
			}
			for i, it := range room.Items {
				p := c.Products[i]
				if p.Stock == nil || *p.Stock != it.TotalStock() || p.Price != float64(it.Price())/100 {
					t.Errorf("room %d %s: stock %v price %v, want %d and %s", seed, it.ID, p.Stock, p.Price, it.TotalStock(), Yuan(it.Price()))
				}
				if p.Shipping == nil || p.Shipping.DispatchHours != 24*it.Shipping.Days || p.Shipping.Fee == nil || *p.Shipping.Fee != float64(it.Shipping.Fee)/100 {
					t.Errorf("room %d %s: shipping %+v, want %d days and fee %s stated", seed, it.ID, p.Shipping, it.Shipping.Days, Yuan(it.Shipping.Fee))
				}
				if p.Returns == nil || p.Returns.Accepted != (it.Shipping.ReturnDays > 0) || p.Returns.Days != it.Shipping.ReturnDays {
					t.Errorf("room %d %s: returns %+v, want a %d-day window", seed, it.ID, p.Returns, it.Shipping.ReturnDays)
				}
				if p.Link != 0 || p.Allergens != nil || p.StockState != "" {
					t.Errorf("room %d %s: states facts the room does not have: %+v", seed, it.ID, p)
				}
			}
			for _, cp := range c.Coupons {
				if cp.Remaining != nil {
					t.Errorf("room %d coupon %s: states %d remaining, a count the room does not have", seed, cp.ID, *cp.Remaining)
				}
			}
			back, err := RoomFromCatalog(c)
			if err != nil {
				t.Fatal(err)
			}
			again, err := back.CatalogJSON()
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("room %d: export → RoomFromCatalog → export differs (%v)\n%s\n%s", seed, err, data, again)
			}
			if cfg.Variety > 0 {
				// Varied rooms resolve shortened kinds ("watch") inside
				// the English name, which a catalog holds as an alias.
				continue
			}
			for _, q := range room.Questions(seed, 30, QuestionConfig{}) {
				for _, call := range q.Gold.Calls {
					if call.Name == ToolLoadSkill {
						continue
					}
					want, err1 := room.CallTool(call.Name, call.Arguments)
					got, err2 := back.CallTool(call.Name, call.Arguments)
					if !bytes.Equal(got, want) || (err1 == nil) != (err2 == nil) {
						t.Errorf("room %d %s%v: generated %s (%v), read back %s (%v)", seed, call.Name, call.Arguments, want, err1, got, err2)
					}
				}
			}
		}
	}
}

// TestToolsAreUnchanged pins what the room's tools return for generated
// rooms of every variety level: SFT data is collected from them, so the
// recorded recipes reproduce only if these bytes hold.
func TestToolsAreUnchanged(t *testing.T) {
	h := sha256.New()
	for _, cfg := range varietyLevels() {
		for seed := uint64(1); seed <= 20; seed++ {
			r := NewRoom(seed, cfg)
			for _, q := range r.Questions(seed, 40, QuestionConfig{TypoRate: 0.2}) {
				for _, c := range q.Gold.Calls {
					if c.Name == ToolLoadSkill {
						continue
					}
					raw, err := r.CallTool(c.Name, c.Arguments)
					fmt.Fprintf(h, "%s %v %s %v\n", c.Name, c.Arguments, raw, err)
				}
			}
			for _, it := range r.Items {
				for _, tool := range []string{ToolCheckStock, ToolCouponCheck, ToolShippingPolicy, ToolSendLink} {
					for _, args := range []map[string]any{{"item_id": it.ID, "quantity": float64(3)}, {"item_id": it.ID, "variant": "M"}} {
						raw, err := r.CallTool(tool, args)
						fmt.Fprintf(h, "%s %v %s %v\n", tool, args, raw, err)
					}
				}
			}
		}
	}
	const want = "e2db2d3fdd3fb8f7b0c6cc4bbf217858a04ed4349734b53cc2ec62faffcb985a"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("the room's tool results changed for generated rooms: digest %s", got)
	}
}

// everyField reads the schema's example catalog that uses every field.
func everyField(t *testing.T) *catalog.Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "catalogs", "every-field.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRoomFromEveryField reads the example that uses every field of the
// schema: the room holds all of it (its catalog is the one read), and its
// tools state the new facts.
func TestRoomFromEveryField(t *testing.T) {
	c := everyField(t)
	room, err := RoomFromCatalog(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := room.Catalog(); !reflect.DeepEqual(got, c) {
		a, _ := json.Marshal(c)
		b, _ := json.Marshal(got)
		t.Fatalf("RoomFromCatalog lost facts:\nread  %s\nroom  %s", a, b)
	}
	data, err := room.CatalogJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := catalog.Parse(data)
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("CatalogJSON does not read back as the catalog (%v)", err)
	}
	room.Now = time.Date(2026, 12, 12, 21, 0, 0, 0, time.FixedZone("CST", 8*3600))
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       []string // substrings of the result
		not        []string
	}{
		{"lookup by link number", ToolProductLookup, map[string]any{"query": "3号链接"}, []string{`"item_id":"p-cream"`, `"link":3`, `"allergens":"none"`, `"best_before":"2029-03-31"`, `"shelf_life_days":1095`}, nil},
		{"lookup by link in English", ToolProductLookup, map[string]any{"query": "link 5"}, []string{`"item_id":"p-nuts"`, `"allergens":["peanut","tree_nut"]`, `"presale_ship_date":"2026-12-20"`}, nil},
		{"typed specs with units", ToolProductLookup, map[string]any{"query": "耳机"}, []string{`"unit":"h"`, `"value":30`, `"value":true`, `{"axis":"colour","name":"珍珠白","price":"209","stock_state":"in_stock"}`}, nil},
		{"a flash sale runs now", ToolProductLookup, map[string]any{"query": "面霜"}, []string{`"kind":"price"`, `"price":"229"`}, nil},
		{"variant without own stock has the item's state", ToolCheckStock, map[string]any{"item_id": "p-tee", "variant": "M"}, []string{`"stock":{"M":"not stated"}`, `"stock_state":{"M":"in_stock"}`}, nil},
		{"low variant with a restock date", ToolCheckStock, map[string]any{"item_id": "p-tee", "variant": "雾霾蓝"}, []string{`"stock":{"雾霾蓝":8}`, `"low"`, `"variant_restock_dates":{"雾霾蓝":"2026-12-15"}`}, nil},
		{"sold out with restock dates", ToolCheckStock, map[string]any{"item_id": "p-flask"}, []string{`"墨绿":"2026-12-18"`, `"奶白":"2026-12-10"`, `"sold_out"`}, nil},
		{"the fixed coupon takes more off one", ToolCouponCheck, map[string]any{"item_id": "p-earbuds"}, []string{`"coupon":{"discount":"19.90"`, `"best_coupon":{"amount":"20","id":"c-earbuds-20","per_buyer":1,"total_after_coupon":"179"}`, `"total_after_coupon":"179"}`}, nil},
		{"the percent coupon takes more off two", ToolCouponCheck, map[string]any{"item_id": "p-earbuds", "quantity": float64(2)}, []string{`"percent_off":10`, `"discount":"39.80"`, `"total_after_coupon":"358.20"`}, []string{"best_coupon"}},
		{"all-claimed coupon is not offered", ToolCouponCheck, map[string]any{"item_id": "p-nuts", "quantity": float64(2)}, []string{`"coupon":{"amount":"10","condition":"new viewers only","id":"c-new10","min_spend":"0"}`}, []string{"c-nuts30", "new_viewers_only"}},
		{"multi-buy for the quantity", ToolCouponCheck, map[string]any{"item_id": "p-tee", "quantity": float64(2)}, []string{`"nth_item_percent_off":50`, `"total_with_deal":"133.50"`, `"missing_quantity":1`}, nil},
		{"conditional returns", ToolShippingPolicy, map[string]any{"item_id": "p-cream"}, []string{`"conditions":["未拆封可退，拆封后不支持退换"]`, `"no_reason":"not stated"`, `"return_days":7`, `"ships_within_days":2`, `"ship_from":"上海"`}, nil},
		{"food: no returns", ToolShippingPolicy, map[string]any{"item_id": "p-nuts"}, []string{`"return_days":0`, `"accepted":false`, `"rule":"no returns"`, `"excluded_regions":["港澳台"]`}, nil},
		{"fee stated", ToolShippingPolicy, map[string]any{"item_id": "p-flask"}, []string{`"shipping_fee":"6"`, `"free_shipping":false`, `"carrier":"韵达"`}, []string{NotStated}},
		{"link number when pinned", ToolSendLink, map[string]any{"item_id": "p-flask"}, []string{`"link":4`, `"pinned":true`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := room.CallTool(tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("%s%v = %s; want %s in it", tc.tool, tc.args, raw, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(string(raw), w) {
					t.Errorf("%s%v = %s; want no %s in it", tc.tool, tc.args, raw, w)
				}
			}
		})
	}
}

// TestRoomFromCatalogNotStated checks that what a catalog leaves out stays
// out: the tools say "not stated" where version 1 always had a value.
func TestRoomFromCatalogNotStated(t *testing.T) {
	c, err := catalog.Parse([]byte(`{"schema":"livehat.catalog/2","currency":"CNY","products":[
		{"id":"a","name":"猫抓板","price":39,"shipping":{"ship_from":"义乌"}},
		{"id":"b","name":"逗猫棒","price":9.9}]}`))
	if err != nil {
		t.Fatal(err)
	}
	room, err := RoomFromCatalog(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolShippingPolicy, map[string]any{"item_id": "a"}, `{"free_shipping":"not stated","item_id":"a","return_days":"not stated","ship_from":"义乌","shipping_fee":"not stated","ships_within_days":"not stated"}`},
		{ToolCheckStock, map[string]any{"item_id": "b"}, `{"item_id":"b","stock":{"standard":"not stated"},"stock_state":{"standard":"not stated"}}`},
		{ToolCouponCheck, map[string]any{"item_id": "b", "quantity": float64(2)}, `{"coupon":null,"eligible":false,"item_id":"b","quantity":2,"total":"19.80","total_after_coupon":"19.80"}`},
		{ToolProductLookup, map[string]any{"query": "逗猫棒"}, `{"attributes":null,"currency":"CNY","found":true,"item_id":"b","name":"逗猫棒","price":"9.90","variants":[]}`},
	} {
		raw, err := room.CallTool(tc.tool, tc.args)
		if err != nil || string(raw) != tc.want {
			t.Errorf("%s%v = %s (%v), want %s", tc.tool, tc.args, raw, err, tc.want)
		}
	}
	if _, err := room.CallTool(ToolShippingPolicy, map[string]any{"item_id": "b"}); err == nil {
		t.Error("shipping_policy of an item that states no shipping and no returns succeeded")
	}
}

func TestRoomFromCatalogRejectsWhatItCannotHold(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"amount finer than a fen", `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"x","price":9.999}]}`, "products[0].price 9.999 is finer than a fen"},
		{"fractional size bound", `{"schema":"livehat.catalog/2","currency":"CNY","products":[{"id":"a","name":"x","price":9,"size_chart":[{"size":"M","min_height_cm":160.5}]}]}`, "products[0].size_chart[0].min_height_cm 160.5 is not a whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := catalog.Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := RoomFromCatalog(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RoomFromCatalog: %v, want an error naming %q", err, tc.want)
			}
		})
	}
	if _, err := RoomFromCatalog(&catalog.Catalog{Currency: "CNY"}); err == nil {
		t.Error("RoomFromCatalog of an empty catalog succeeded")
	}
}

func TestLinkNumber(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"3号链接", 3}, {"3号", 3}, {" 12 号 ", 12}, {"第3号链接", 3}, {"link 3", 3}, {"Link #7", 7}, {"#4", 4}, {"链接5", 5},
		{"３号链接", 3}, {"三号链接", 3}, {"十号", 10}, {"十二号链接", 12}, {"二十号", 20}, {"九十九号", 99}, {"两号", 2},
		{"3号链接多少钱", 3}, {"what about link 2?", 2},
		{"", 0}, {"号链接", 0}, {"0号", 0}, {"link", 0}, {"30ml", 0}, {"身高170", 0}, {"blink 3", 0}, {"百号", 0},
	} {
		t.Run(tc.query, func(t *testing.T) {
			n, ok := LinkNumber(tc.query)
			if n != tc.want || ok != (tc.want > 0) {
				t.Errorf("LinkNumber(%q) = %d, %v; want %d", tc.query, n, ok, tc.want)
			}
		})
	}
}

func FuzzLinkNumber(f *testing.F) {
	for _, s := range []string{"3号链接", "link 12", "九十九号", "３号", "#0", "链接"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := LinkNumber(s)
		if ok != (n > 0) || n > 999 {
			t.Fatalf("LinkNumber(%q) = %d, %v", s, n, ok)
		}
	})
}

// A room's words are those its catalog export calls the items by: the
// lookup a session holds to them finds each item by each of its words.
func TestItemWordsNameTheItems(t *testing.T) {
	for _, cfg := range varietyLevels() {
		r := NewRoom(7, cfg)
		words := r.ItemWords()
		seen := map[string]bool{}
		for _, w := range words {
			if w == "" || seen[w] {
				t.Fatalf("variety %d: word %q empty or listed twice in %q", cfg.Variety, w, words)
			}
			seen[w] = true
		}
		for _, it := range r.Items {
			for _, w := range []string{it.ID, it.NameZH, it.NameEN} {
				if w != "" && !seen[w] {
					t.Errorf("variety %d: %s's word %q missing from %q", cfg.Variety, it.ID, w, words)
				}
			}
		}
	}
}
