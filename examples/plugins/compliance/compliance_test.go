package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/sdk"
)

func catalog(t *testing.T) *sdk.CatalogResult {
	t.Helper()
	b, err := os.ReadFile("../catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decide(t *testing.T, text string, cfg Config) sdk.Decision {
	t.Helper()
	c := catalog(t)
	m := FindMentions(text, c.Products)
	AddOffers(m, c.Coupons, c.Promotions, time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC))
	d := Decide(text, Check(text, m, cfg), cfg)
	if err := d.Validate(); err != nil {
		t.Fatalf("%q: invalid decision %+v: %v", text, d, err)
	}
	return d
}

func TestCompliance(t *testing.T) {
	def, _ := ParseConfig(nil)
	cases := []struct {
		text   string
		action sdk.Action
		says   string // part of the feedback or rewritten text
	}{
		{"这款玻尿酸精华现在199元，原价299元，很划算。", sdk.ActionAllow, ""},
		{"修护面霜只要259元哦", sdk.ActionAllow, ""},
		{"精华秒杀价¥169，冲！", sdk.ActionAllow, ""},                           // promotion price
		{"面霜用满减券后209元", sdk.ActionAllow, ""},                            // 259 - 50 coupon
		{"The serum is ¥199 today, a bestseller.", sdk.ActionAllow, ""}, // "best" inside a word
		{"这款精华是全网第一，效果最好！", sdk.ActionRewrite, "很受欢迎"},
		{"This lipstick is the best and the cheapest.", sdk.ActionRewrite, "a great choice"},
		{"修护面霜只要199元！", sdk.ActionRetry, "修护面霜 costs ¥259, not ¥199"}, // the 199 presale ended
		{"精华打5折，面霜259元", sdk.ActionRetry, "玻尿酸精华 is 6.7折"},
		{"口红打八折", sdk.ActionAllow, ""}, // the lipstick-week promotion is 20% off
		{"这款面霜可以治疗湿疹，无副作用", sdk.ActionRetry, "「无副作用」 is a forbidden claim"},
		{"Our cream cures acne, the best!", sdk.ActionRetry, "「cures」"},
		{"lipstick is 50% off now", sdk.ActionRetry, "31% off"},
	}
	for _, c := range cases {
		d := decide(t, c.text, def)
		if d.Action != c.action {
			t.Errorf("%q: %+v, want %s", c.text, d, c.action)
			continue
		}
		if got := d.Text + d.Feedback; !strings.Contains(got, c.says) {
			t.Errorf("%q: %q does not say %q", c.text, got, c.says)
		}
	}
}

func TestComplianceConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"banned":["秒杀", " "],"soften":false}`))
	if err != nil || cfg.Soften || len(cfg.Banned) != 1 {
		t.Fatalf("%+v, %v", cfg, err)
	}
	if d := decide(t, "精华秒杀价¥169", cfg); d.Action != sdk.ActionRetry {
		t.Fatalf("merchant-banned word: %+v", d)
	}
	if d := decide(t, "最好的口红", cfg); d.Action != sdk.ActionRetry {
		t.Fatalf("soften off: %+v", d)
	}
	if _, err := ParseConfig([]byte(`{"banned":`)); err == nil {
		t.Fatal("a broken config was accepted")
	}
}

func TestZheValue(t *testing.T) {
	for in, want := range map[string]float64{"5": 5, "8.5": 8.5, "五": 5, "八五": 8.5, "85": 8.5} {
		if got, ok := zheValue(in); !ok || got != want {
			t.Errorf("%s: %v %v", in, got, ok)
		}
	}
}

// TestVersion2Prices: a variant's own price and the amounts of multi-buy
// and bundle deals are prices a reply may name; other amounts are not.
func TestVersion2Prices(t *testing.T) {
	b, err := os.ReadFile("../../catalogs/every-field.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 20, 0, 0, 0, time.UTC)
	def, _ := ParseConfig(nil)
	cases := []struct {
		text   string
		action sdk.Action
	}{
		{"珍珠白降噪蓝牙耳机209元", sdk.ActionAllow},
		{"纯棉短袖T恤三件199元", sdk.ActionAllow},
		{"纯棉短袖T恤第二件只要44.5元", sdk.ActionAllow},
		{"降噪蓝牙耳机只要150元", sdk.ActionRetry},
		// 139 less the all-claimed 30-off coupon is no price it has now
		{"每日坚果礼盒领券后109元", sdk.ActionRetry},
		{"每日坚果礼盒领券后129元", sdk.ActionAllow}, // the 10-off coupon
	}
	for _, k := range cases {
		t.Run(k.text, func(t *testing.T) {
			m := FindMentions(k.text, c.Products)
			AddOffers(m, c.Coupons, c.Promotions, now)
			if d := Decide(k.text, Check(k.text, m, def), def); d.Action != k.action {
				t.Errorf("%+v, want %s", d, k.action)
			}
		})
	}
}
