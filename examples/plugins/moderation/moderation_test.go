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
