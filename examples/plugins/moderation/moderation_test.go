package main

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/sdk"
)

func TestScreen(t *testing.T) {
	cases := []struct {
		text   string
		action sdk.Action
		says   string
	}{
		{"这个精华适合油皮吗？", sdk.ActionAllow, ""},
		{"Is the serum good for oily skin?", sdk.ActionAllow, ""},
		{"哈哈哈哈哈主播好可爱", sdk.ActionAllow, ""},
		{"便宜货看这里 www.cheap-fakes.top", sdk.ActionDeny, "link"},
		{"加微信 abc12345 领券", sdk.ActionDeny, "contact"},
		{"call me 13812345678", sdk.ActionDeny, "contact"},
		{"啊啊啊啊啊啊啊啊啊啊啊啊啊啊", sdk.ActionDeny, "flood"},
		{"!!!!????....~~~~!!!!????....", sdk.ActionDeny, "symbols only"},
		{"垃圾主播，骗子！", sdk.ActionInject, "垃圾主播, 骗子"},
		{"you are an IDIOT", sdk.ActionInject, "idiot"},
	}
	for _, c := range cases {
		h := History{}.Next(c.text)
		d := Decide(Screen(c.text, h, DefaultRepeatLimit))
		if err := d.Validate(); err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if d.Action != c.action || !strings.Contains(d.Reason+d.Context, c.says) {
			t.Errorf("%q: %+v, want %s saying %q", c.text, d, c.action, c.says)
		}
	}
}

func TestRepeats(t *testing.T) {
	var h History
	msgs := []string{"多少钱", "多少钱？", "多 少 钱", "多少钱!!"}
	var last sdk.Decision
	for _, m := range msgs {
		h = DecodeHistory(h.Next(m).Encode())
		last = Decide(Screen(m, h, 3))
	}
	if h.Repeats != 4 || last.Action != sdk.ActionDeny || !strings.Contains(last.Reason, "4 times") {
		t.Fatalf("history %+v, decision %+v", h, last)
	}
	if h = h.Next("还有货吗"); h.Repeats != 1 {
		t.Fatalf("a new message did not reset: %+v", h)
	}
	if (DecodeHistory([]byte("garbage")) != History{}) || (DecodeHistory([]byte("zz:-1")) != History{}) {
		t.Fatal("bad history was accepted")
	}
	if n, err := ParseRepeatLimit([]byte(`{"repeat_limit":5}`)); n != 5 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
}

// TestContact: contact solicitation in the forms live rooms see — plain,
// full-width, split by spaces and dots, homophones, Chinese digits — is
// caught, and everyday shopping questions with numbers and letters are not.
func TestContact(t *testing.T) {
	spam := map[string]string{
		"加V看福利 vx123456":             "contact details",
		"加V看福利":                      "private chat",
		"vx123456":                   "contact details",
		"ＶＸ：１２３４５６ 领券":               "contact details",
		"v x 1 2 3 4 5 6":            "contact details",
		"加微信 abc12345 领券":            "contact details",
		"微 信：lily2024":               "contact details",
		"薇信号多少":                      "private chat",
		"QQ: 88771234":               "contact details",
		"q q 8877 1234":              "contact details",
		"扣扣12345678":                 "contact details",
		"wechat: lily_2024":          "contact details",
		"想要便宜的私聊我":                   "private chat",
		"有需要的私我":                     "private chat",
		"加群领红包":                      "private chat",
		"call me 13812345678":        "contact details",
		"138 1234 5678 找我":           "contact details",
		"电话 138-1234-5678":           "contact details",
		"一三八一二三四五六七八 打给我":            "contact details",
		"幺三八幺二三四五六七八":                "contact details",
		"便宜货看这里 www.cheap-fakes.top": "link",
		"https://t.cn/abc":           "link",
		"cheap 点 com 看看":             "link",
		"fakes。com 超便宜":              "link",
		"dm me for a discount":       "contact details",
		"whatsapp only":              "contact details",
	}
	for text, want := range spam {
		if got := Contact(text); got != want {
			t.Errorf("Contact(%q) = %q, want %q", text, got, want)
		}
	}
	clean := []string{
		"3号链接多少钱", "身高170体重60穿什么码", "V领毛衣还有M码吗", "可以用微信支付吗", "微信支付有优惠吗",
		"加购了，什么时候发货", "加卫衣到购物车", "2件多少钱，券后199吗", "XL还有货吗", "新人券20元怎么领",
		"is the XL in stock", "how much is link 3", "new xl 12345 order?", "online 2024 sale?",
		"订单号 20261201123456 什么时候发", "能发顺丰吗", "电话里说不清楚", "这个VIP价是多少",
	}
	for _, text := range clean {
		if got := Contact(text); got != "" {
			t.Errorf("Contact(%q) = %q, want clean", text, got)
		}
	}
}

func FuzzContact(f *testing.F) {
	for _, s := range []string{"vx123456", "加V看福利", "138 1234 5678", "3号链接多少钱", "ＶＸ：１２３"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Contact(s)
		if got != "" && got != "link" && got != "private chat" && got != "contact details" {
			t.Fatalf("Contact(%q) = %q", s, got)
		}
	})
}
