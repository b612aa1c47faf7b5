package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/sdk"
)

func TestText(t *testing.T) {
	b, err := os.ReadFile("../catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	products := map[string]sdk.Product{}
	for _, p := range c.Products {
		products[p.ID] = p
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		now  string
		want []string
		not  []string
	}{
		{"2026-11-29T21:40:00Z", []string{"【精华限时秒杀】玻尿酸精华 活动价¥169（日常价¥199）；还剩1小时20分钟结束。",
			"【口红周】丝绒口红 立减20%，到手¥71.2；第二支半价；还剩2小时20分钟结束。"}, []string{"双十一", "即将结束"}},
		{"2026-11-29T22:50:00Z", []string{"还剩10分钟结束", "提醒：「精华限时秒杀」即将结束"}, nil},
		{"2026-11-30T01:00:00Z", []string{"目前没有进行中的促销"}, []string{"【"}},
		{"2026-11-20T00:00:00Z", []string{"下一场：「口红周」将在3天后开始。"}, nil},
	}
	for _, k := range cases {
		got := Text(at(k.now), c.Promotions, products)
		for _, w := range k.want {
			if !strings.Contains(got, w) {
				t.Errorf("at %s: %q lacks %q", k.now, got, w)
			}
		}
		for _, w := range k.not {
			if strings.Contains(got, w) {
				t.Errorf("at %s: %q has %q", k.now, got, w)
			}
		}
	}
}

// TestTextKinds states every kind of promotion, and none promises a
// deadline the merchant did not state.
func TestTextKinds(t *testing.T) {
	b, err := os.ReadFile("../../catalogs/every-field.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.DecodeCatalogResult(b)
	if err != nil {
		t.Fatal(err)
	}
	products := map[string]sdk.Product{}
	for _, p := range c.Products {
		products[p.ID] = p
	}
	now := time.Date(2026, 12, 12, 21, 0, 0, 0, time.FixedZone("CST", 8*3600))
	got := Text(now, c.Promotions, products)
	for _, want := range []string{
		"【面霜限时秒杀】修护面霜 活动价¥229（日常价¥259）；还剩1小时结束。",
		"【T恤第二件半价】纯棉短袖T恤 买2件第2件立减50%；任选两件，第二件半价；结束时间未说明",
		"【T恤三件199】纯棉短袖T恤 3件共¥199；",
		"【坚果满300享85折】每日坚果礼盒 立减15%（订单满¥300）；",
		"【耳机+T恤套装259元】降噪蓝牙耳机 组合价¥259；纯棉短袖T恤 组合价¥259；",
		"【耳机满199送收纳袋】降噪蓝牙耳机 送耳机收纳袋（订单满¥199）；下单即送，送完为止；还剩3小时结束。",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	// The flash sale ends first; the promotions without an end come last.
	if i, j := strings.Index(got, "面霜限时秒杀"), strings.Index(got, "T恤三件199"); i < 0 || j < i {
		t.Errorf("order: %q", got)
	}
}
