package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/sdk"
)

// now is the stream clock of the tests: the every-field catalog's
// earbuds coupon and gift run, the cream's flash sale has not started.
var now = time.Date(2026, 12, 5, 20, 0, 0, 0, time.UTC)

// hostLookup answers catalog queries over a catalog the way the host does
// (plugins.LookupCatalog): by id, by link, by exact name or alias
// (case-insensitive), or by the names a text mentions, longest first.
func hostLookup(t *testing.T, path string) Lookup {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return func(q sdk.CatalogQuery) (*sdk.CatalogResult, error) {
		out := &sdk.CatalogResult{Stream: cat.Stream, Currency: cat.Currency}
		switch q.Kind {
		case "coupons":
			out.Coupons = cat.Coupons
			return out, nil
		case "promotions":
			out.Promotions = cat.Promotions
			return out, nil
		}
		longest := func(p sdk.Product, match func(string) bool) int {
			best := 0
			for _, n := range p.Names() {
				if n = strings.ToLower(strings.TrimSpace(n)); n != "" && match(n) && len(n) > best {
					best = len(n)
				}
			}
			return best
		}
		type hit struct {
			p sdk.Product
			n int
		}
		var hits []hit
		for _, p := range cat.Products {
			switch {
			case q.ID != "":
				if p.ID == q.ID {
					hits = append(hits, hit{p, 1})
				}
			case q.Link > 0:
				if p.Link == q.Link {
					hits = append(hits, hit{p, 1})
				}
			case q.Name != "":
				if longest(p, func(n string) bool { return n == strings.ToLower(strings.TrimSpace(q.Name)) }) > 0 {
					hits = append(hits, hit{p, 1})
				}
			case q.Text != "":
				if n := longest(p, func(n string) bool { return strings.Contains(strings.ToLower(q.Text), n) }); n > 0 {
					hits = append(hits, hit{p, n})
				}
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
		for i, h := range hits {
			if q.Limit > 0 && i == q.Limit {
				break
			}
			out.Products = append(out.Products, h.p)
		}
		return out, nil
	}
}

// result is a tool's answer as the host sends it: the JSON the SDK
// writes with encoding/json, or the error's text.
func result(out map[string]any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "error encoding: " + err.Error()
	}
	return string(b)
}

// call runs a tool by name with JSON-like arguments.
func call(l Lookup, tool string, args map[string]any) string {
	str := func(k string) string { s, _ := args[k].(string); return s }
	qty := 0
	if q, ok := args["quantity"].(float64); ok {
		qty = int(q)
	}
	req := ItemRequest{ItemID: str("item_id"), Variant: str("variant"), Quantity: qty}
	switch tool {
	case "product_lookup":
		return result(ProductLookup(l, LookupRequest{Query: str("query")}, now))
	case "check_stock":
		return result(CheckStock(l, req))
	case "coupon_check":
		return result(CouponCheck(l, req, now))
	case "shipping_policy":
		return result(ShippingPolicy(l, req))
	case "send_link":
		return result(SendLink(l, req))
	}
	return "unknown tool " + tool
}

// TestVersion1FactsAnswerAsBefore holds the compatibility rule: over
// catalogs that state only what the version 1 layout could (the live
// room's exported catalogs and this test's old catalog, as the host
// upgrades them), every tool answers byte for byte what it answered
// before version 2. testdata/compat/calls.jsonl was recorded from the
// tools of that time over the version 1 files.
func TestVersion1FactsAnswerAsBefore(t *testing.T) {
	f, err := os.Open("testdata/compat/calls.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lookups := map[string]Lookup{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	calls := 0
	for sc.Scan() {
		var c struct {
			Catalog, Tool, Result, Error string
			Args                         map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		l, ok := lookups[c.Catalog]
		if !ok {
			l = hostLookup(t, filepath.Join("testdata/compat", c.Catalog))
			lookups[c.Catalog] = l
		}
		want := c.Result
		if c.Error != "" {
			want = "error: " + c.Error
		}
		got := call(l, c.Tool, c.Args)
		calls++
		if c.Catalog == "demo.json" {
			// The demo states facts the old tools left out (a percent
			// coupon, new-viewer coupons): only additions are allowed.
			if err := subset(want, got); err != nil {
				t.Errorf("%s %s%v: %v\n got:  %s\n was:  %s", c.Catalog, c.Tool, c.Args, err, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s %s%v:\n got:  %s\n was:  %s", c.Catalog, c.Tool, c.Args, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if calls < 700 {
		t.Fatalf("only %d calls compared", calls)
	}
}

// subset reports where the JSON object was is not kept in now: a key
// left out or a value changed (objects compared key by key, recursively).
func subset(was, now string) error {
	if strings.HasPrefix(was, "error: ") || strings.HasPrefix(now, "error: ") {
		if was != now {
			return fmt.Errorf("errors differ")
		}
		return nil
	}
	var a, b any
	if err := json.Unmarshal([]byte(was), &a); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(now), &b); err != nil {
		return err
	}
	return within(a, b, "")
}

func within(a, b any, at string) error {
	am, ok := a.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%s: %v became %v", at, a, b)
		}
		return nil
	}
	bm, ok := b.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: an object became %v", at, b)
	}
	for k, v := range am {
		w, ok := bm[k]
		if !ok {
			return fmt.Errorf("%s.%s is gone", at, k)
		}
		if err := within(v, w, at+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// everyField is the example catalog stating every field of the layout.
const everyField = "../../catalogs/every-field.json"

func TestProductLookupEveryField(t *testing.T) {
	l := hostLookup(t, everyField)
	cases := []struct {
		query string
		has   []string // fragments of the result's JSON
		lacks []string
	}{
		{"1号链接", []string{`"item_id":"p-earbuds"`, `"link":1`, `"price":"199"`, `"list_price":"299"`,
			`"battery_hours":"30h"`, `"noise_cancelling":"yes"`, `"bluetooth":"5.3"`,
			`{"key":"battery_hours","label":"battery life with case","label_zh":"总续航","unit":"h","value":30}`,
			`{"key":"noise_cancelling","label":"active noise cancelling","label_zh":"主动降噪","value":true}`,
			`{"key":"bluetooth","label":"Bluetooth version","label_zh":"蓝牙版本","value":"5.3"}`,
			`"limit_per_buyer":2`, `"certifications":["CCC","SRRC"]`,
			`{"axis":"colour","name":"珍珠白","price":"209","stock_state":"in_stock"}`,
			`{"ends":"2026-12-12T23:59:59+08:00","gift":"耳机收纳袋","id":"earbuds-gift","kind":"gift","min_spend":"199","text":"下单即送，送完为止","title":"耳机满199送收纳袋"}`,
			`{"id":"set-earbuds-tee","kind":"bundle","price":"259","products":["p-earbuds","p-tee"],"title":"耳机+T恤套装259元"}`},
			[]string{`"allergens"`, `"stock_state":"in_stock","stock`}},
		{"link 2", []string{`"item_id":"p-tee"`, `{"max_height_cm":185,"max_weight_kg":80,"min_height_cm":178,"min_weight_kg":70,"size":"XL"}`,
			`{"min_height_cm":185,"min_weight_kg":80,"size":"XXL"}`, `"material":"cotton"`, `"fabric_weight":"220g/m²"`,
			`{"axis":"size","name":"M","stock_state":"in_stock"}`,
			`{"axis":"colour","name":"雾霾蓝","restock_date":"2026-12-15","stock_state":"low"}`,
			`{"id":"tee-2","kind":"multi_buy","nth_item_percent_off":50,"quantity":2,"text":"任选两件，第二件半价","title":"T恤第二件半价"}`,
			`{"id":"tee-3","kind":"multi_buy","price":"199","quantity":3,"title":"T恤三件199"}`},
			nil},
		{"面霜", []string{`"item_id":"p-cream"`, `"allergens":"none"`, `"ingredients":["水","甘油","神经酰胺NP","角鲨烷","泛醇"]`,
			`"shelf_life_days":1095`, `"best_before":"2029-03-31"`, `"stock_state":"low"`},
			// the flash sale starts on 12 December, after the test's now
			[]string{`cream-flash`, `"promotions"`}},
		{"四号链接", []string{`"item_id":"p-flask"`, `"stock_state":"sold_out"`, `"restock_date":"2026-12-10"`,
			`{"axis":"colour","name":"奶白","restock_date":"2026-12-10","stock_state":"sold_out"}`}, nil},
		{"5号", []string{`"item_id":"p-nuts"`, `"allergens":["peanut","tree_nut"]`, `"presale_ship_date":"2026-12-20"`,
			`"stock_state":"presale"`, `{"id":"nuts-pct","kind":"percent","min_spend":"300","percent_off":15,"title":"坚果满300享85折"}`}, nil},
		{"坚果礼盒 五号链接有货吗", []string{`"item_id":"p-nuts"`}, nil},
		{"cream", []string{`"found":true`, `"item_id":"p-cream"`}, nil},
		{"9号链接", []string{`"found":false`}, nil},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			got := result(ProductLookup(l, LookupRequest{Query: c.query}, now))
			for _, h := range c.has {
				if !strings.Contains(got, h) {
					t.Errorf("lacks %s\n in %s", h, got)
				}
			}
			for _, h := range c.lacks {
				if strings.Contains(got, h) {
					t.Errorf("has %s\n in %s", h, got)
				}
			}
		})
	}
}

func TestProductLookupNotStated(t *testing.T) {
	l := hostLookup(t, "testdata/not-stated.json")
	got := result(ProductLookup(l, LookupRequest{Query: "bare"}, now))
	want := `{"attributes":null,"currency":"CNY","found":true,"item_id":"bare","name":"bare","price":"10","variants":[]}`
	if got != want {
		t.Errorf("a product stating nothing but its name and price:\n got  %s\n want %s", got, want)
	}
	got = result(ProductLookup(l, LookupRequest{Query: "snack"}, now))
	if !strings.Contains(got, `"allergens":"not stated"`) {
		t.Errorf("ingredients without allergens must say allergens are not stated: %s", got)
	}
	if got = result(ProductLookup(l, LookupRequest{Query: "  "}, now)); !strings.Contains(got, "query is empty") {
		t.Errorf("empty query: %s", got)
	}
}

func TestCheckStock(t *testing.T) {
	every, bare := hostLookup(t, everyField), hostLookup(t, "testdata/not-stated.json")
	cases := []struct {
		name string
		l    Lookup
		req  ItemRequest
		want string
	}{
		{"variants with own counts", every, ItemRequest{ItemID: "p-earbuds"},
			`{"item_id":"p-earbuds","limit_per_buyer":2,"stock":{"曜石黑":80,"珍珠白":40}}`},
		{"one variant", every, ItemRequest{ItemID: "p-earbuds", Variant: "珍珠白"},
			`{"item_id":"p-earbuds","limit_per_buyer":2,"stock":{"珍珠白":40}}`},
		{"variants without own stock report the product's state", every, ItemRequest{ItemID: "p-tee", Variant: "xl"},
			`{"item_id":"p-tee","stock":{"XL":"not stated"},"stock_state":{"XL":"in_stock"}}`},
		{"stated variant state and restock", every, ItemRequest{ItemID: "p-tee", Variant: "雾霾蓝"},
			`{"item_id":"p-tee","stock":{"雾霾蓝":8},"stock_state":{"雾霾蓝":"low"},"variant_restock_dates":{"雾霾蓝":"2026-12-15"}}`},
		{"sold out with restock dates", every, ItemRequest{ItemID: "p-flask"},
			`{"item_id":"p-flask","item_stock_state":"sold_out","restock_date":"2026-12-10","stock":{"墨绿":0,"奶白":0},"stock_state":{"墨绿":"sold_out"},"variant_restock_dates":{"墨绿":"2026-12-18","奶白":"2026-12-10"}}`},
		{"presale", every, ItemRequest{ItemID: "p-nuts"},
			`{"item_id":"p-nuts","limit_per_buyer":5,"presale_ship_date":"2026-12-20","stock":{"standard":500},"stock_state":{"standard":"presale"}}`},
		{"stated state without a count", bare, ItemRequest{ItemID: "snack"},
			`{"item_id":"snack","stock":{"standard":"not stated"},"stock_state":{"standard":"in_stock"}}`},
		{"nothing stated", bare, ItemRequest{ItemID: "bare"},
			`{"item_id":"bare","stock":{"standard":"not stated"},"stock_state":{"standard":"not stated"}}`},
		{"unknown variant", every, ItemRequest{ItemID: "p-tee", Variant: "XS"},
			`error: check_stock: item p-tee has no variant "XS"`},
		{"unknown item", every, ItemRequest{ItemID: "p-none"},
			`error: check_stock: no item with id "p-none" in this stream`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := result(CheckStock(c.l, c.req)); got != c.want {
				t.Errorf("\n got  %s\n want %s", got, c.want)
			}
		})
	}
}

func TestCouponCheck(t *testing.T) {
	every, bare := hostLookup(t, everyField), hostLookup(t, "testdata/not-stated.json")
	cases := []struct {
		name string
		l    Lookup
		req  ItemRequest
		want string
	}{
		// 199: the percent coupon (19.90 off) is the item's first; the
		// 20-off coupon needs 199 and takes more.
		{"percent coupon and a better fixed one", every, ItemRequest{ItemID: "p-earbuds"},
			`{"best_coupon":{"amount":"20","id":"c-earbuds-20","per_buyer":1,"total_after_coupon":"179"},` +
				`"coupon":{"discount":"19.90","ends":"2026-12-12T23:59:59+08:00","id":"c-earbuds-pct10","min_spend":"0","per_buyer":1,"percent_off":10},` +
				`"eligible":true,"item_id":"p-earbuds","quantity":1,"total":"199","total_after_coupon":"179.10"}`},
		// 398: 10% (39.80) beats 20 off.
		{"percent wins on a larger order", every, ItemRequest{ItemID: "p-earbuds", Quantity: 2},
			`{"coupon":{"discount":"39.80","ends":"2026-12-12T23:59:59+08:00","id":"c-earbuds-pct10","min_spend":"0","per_buyer":1,"percent_off":10},` +
				`"eligible":true,"item_id":"p-earbuds","quantity":2,"total":"398","total_after_coupon":"358.20"}`},
		{"new-viewer coupon, multi-buy short of its quantity", every, ItemRequest{ItemID: "p-tee"},
			`{"coupon":{"amount":"10","condition":"new viewers only","id":"c-new10","min_spend":"0"},"eligible":true,"item_id":"p-tee",` +
				`"multi_buy":[{"id":"tee-2","kind":"multi_buy","missing_quantity":1,"nth_item_percent_off":50,"quantity":2,"text":"任选两件，第二件半价","title":"T恤第二件半价"},` +
				`{"id":"tee-3","kind":"multi_buy","missing_quantity":2,"price":"199","quantity":3,"title":"T恤三件199"}],` +
				`"quantity":1,"total":"89","total_after_coupon":"79"}`},
		// 3 tees: second half price once (89+44.50) plus one at 89; or three for 199.
		{"multi-buy totals", every, ItemRequest{ItemID: "p-tee", Quantity: 3},
			`{"coupon":{"amount":"10","condition":"new viewers only","id":"c-new10","min_spend":"0"},"eligible":true,"item_id":"p-tee",` +
				`"multi_buy":[{"id":"tee-2","kind":"multi_buy","nth_item_percent_off":50,"quantity":2,"text":"任选两件，第二件半价","title":"T恤第二件半价","total_with_deal":"222.50"},` +
				`{"id":"tee-3","kind":"multi_buy","price":"199","quantity":3,"title":"T恤三件199","total_with_deal":"199"}],` +
				`"quantity":3,"total":"267","total_after_coupon":"257"}`},
		// The nuts' own coupon is all claimed: the general one is left.
		{"all-claimed coupon skipped", every, ItemRequest{ItemID: "p-nuts", Quantity: 2},
			`{"coupon":{"amount":"10","condition":"new viewers only","id":"c-new10","min_spend":"0"},"eligible":true,"item_id":"p-nuts","quantity":2,"total":"278","total_after_coupon":"268"}`},
		{"remaining not stated is not all claimed", bare, ItemRequest{ItemID: "bare", Quantity: 3},
			`{"coupon":{"amount":"5","id":"k-open","min_spend":"25"},"eligible":true,"item_id":"bare","quantity":3,"total":"30","total_after_coupon":"25"}`},
		{"below the minimum spend", bare, ItemRequest{ItemID: "bare"},
			`{"coupon":{"amount":"5","id":"k-open","min_spend":"25"},"eligible":false,"item_id":"bare","missing_spend":"15","quantity":1,"total":"10","total_after_coupon":"10"}`},
		{"quantity out of range", every, ItemRequest{ItemID: "p-tee", Quantity: 100}, `error: coupon_check: quantity must be from 1 to 99`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := result(CouponCheck(c.l, c.req, now)); got != c.want {
				t.Errorf("\n got  %s\n want %s", got, c.want)
			}
		})
	}
}

func TestShippingPolicy(t *testing.T) {
	every, bare := hostLookup(t, everyField), hostLookup(t, "testdata/not-stated.json")
	cases := []struct {
		name string
		l    Lookup
		id   string
		want string
	}{
		{"everything stated", every, "p-earbuds",
			`{"carrier":"顺丰","excluded_regions":["新疆","西藏"],"free_shipping":true,"item_id":"p-earbuds","return_days":7,` +
				`"returns":{"accepted":true,"rule":"returns within 7 days, no reason needed","shipping_insurance":true},` +
				`"ship_from":"广东深圳","shipping_fee":"0","ships_within_days":2}`},
		{"conditional returns", every, "p-cream",
			`{"free_shipping":true,"item_id":"p-cream","return_days":7,` +
				`"returns":{"accepted":true,"conditions":["未拆封可退，拆封后不支持退换"],"no_reason":"not stated","rule":"returns within 7 days"},` +
				`"ship_from":"上海","shipping_fee":"0","ships_within_days":2}`},
		{"a fee", every, "p-flask",
			`{"carrier":"韵达","free_shipping":false,"item_id":"p-flask","return_days":7,"ship_from":"浙江永康","shipping_fee":"6","ships_within_days":3}`},
		{"no returns with a condition", every, "p-nuts",
			`{"carrier":"京东物流","excluded_regions":["港澳台"],"free_shipping":true,"item_id":"p-nuts","return_days":0,` +
				`"returns":{"accepted":false,"conditions":["食品类商品，非质量问题不支持退换"],"rule":"no returns"},` +
				`"ship_from":"安徽芜湖","shipping_fee":"0","ships_within_days":2}`},
		{"fee and window not stated", bare, "snack",
			`{"dispatch_hours":36,"free_shipping":"not stated","item_id":"snack","return_days":"not stated",` +
				`"returns":{"accepted":true,"rule":"returns accepted; the window is not stated"},"shipping_fee":"not stated","ships_within_days":1.5}`},
		{"nothing stated", bare, "bare", `error: shipping_policy: the catalog has no shipping policy for bare`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := result(ShippingPolicy(c.l, ItemRequest{ItemID: c.id})); got != c.want {
				t.Errorf("\n got  %s\n want %s", got, c.want)
			}
		})
	}
}

func TestSendLink(t *testing.T) {
	l := hostLookup(t, everyField)
	if got := result(SendLink(l, ItemRequest{ItemID: "p-tee"})); got != `{"item_id":"p-tee","link":2,"pinned":true}` {
		t.Errorf("send_link: %s", got)
	}
	if got := result(SendLink(l, ItemRequest{ItemID: "nope"})); got != `error: send_link: no item with id "nope" in this stream` {
		t.Errorf("unknown item: %s", got)
	}
}

func TestLinkNumber(t *testing.T) {
	cases := []struct {
		query string
		n     int
	}{
		{"3号链接", 3}, {"3号", 3}, {"第3号链接", 3}, {" 12号宝贝 ", 12}, {"３号链接", 3}, {"三号链接", 3},
		{"十号", 10}, {"十二号链接", 12}, {"二十号", 20}, {"两号链接", 2}, {"二十三号链接", 23},
		{"link 3", 3}, {"Link #7", 7}, {"#4", 4}, {"链接5", 5}, {"no. 6", 6},
		{"3号链接多少钱", 3}, {"what about link 2?", 2}, {"那个链接8呢", 8},
		{"面霜", 0}, {"3号发货吗", 0}, {"0号链接", 0}, {"linked 3", 0}, {"九十九号", 99}, {"百号", 0},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			n, ok := LinkNumber(c.query)
			if n != c.n || ok != (c.n > 0) {
				t.Errorf("LinkNumber(%q) = %d, %v; want %d", c.query, n, ok, c.n)
			}
		})
	}
}

// FuzzLinkNumber: any query reads as no link or a link from 1 to 999.
func FuzzLinkNumber(f *testing.F) {
	for _, s := range []string{"3号链接", "link 3", "二十三号", "#12", "３号"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, ok := LinkNumber(q)
		if ok != (n > 0) || n > 999 {
			t.Fatalf("LinkNumber(%q) = %d, %v", q, n, ok)
		}
	})
}

// TestToolTableIsDocumented keeps README.md's table of result keys in
// step with what the tools return over the every-field catalog.
func TestToolTableIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	every, bare := hostLookup(t, everyField), hostLookup(t, "testdata/not-stated.json")
	var results []string
	for _, q := range []string{"p-earbuds", "p-tee", "p-cream", "p-flask", "p-nuts"} {
		results = append(results, result(ProductLookup(every, LookupRequest{Query: q}, now)), result(CheckStock(every, ItemRequest{ItemID: q})),
			result(CouponCheck(every, ItemRequest{ItemID: q, Quantity: 3}, now)), result(ShippingPolicy(every, ItemRequest{ItemID: q})),
			result(SendLink(every, ItemRequest{ItemID: q})))
	}
	results = append(results, result(ShippingPolicy(bare, ItemRequest{ItemID: "snack"})), result(ProductLookup(bare, LookupRequest{Query: "snack"}, now)),
		result(CouponCheck(bare, ItemRequest{ItemID: "bare"}, now)), result(ProductLookup(bare, LookupRequest{Query: "teapot"}, now)))
	keys := map[string]bool{}
	for _, r := range results {
		var m map[string]any
		if json.Unmarshal([]byte(r), &m) != nil {
			continue
		}
		for k := range m {
			keys[k] = true
		}
	}
	for k := range keys {
		if !bytes.Contains(readme, []byte("`"+k+"`")) {
			t.Errorf("README.md does not document the result key %q", k)
		}
	}
}
