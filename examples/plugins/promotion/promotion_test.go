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
