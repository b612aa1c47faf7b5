package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/livehat/livehat/sdk"
)

func TestClean(t *testing.T) {
	in := "## 今日推荐 🎉\n- **玻尿酸精华** 只要199元！详情见 https://shop.example/p?id=1 ✨\n1. 限时秒杀"
	want := "今日推荐 玻尿酸精华 只要199元！详情见 限时秒杀"
	if got := Clean(in); got != want {
		t.Fatalf("Clean = %q, want %q", got, want)
	}
}

func TestShorten(t *testing.T) {
	zh := "这款精华很保湿。适合所有肤质！现在下单还送小样，数量有限，先到先得。"
	cases := []struct {
		text string
		max  int
		want string
	}{
		{zh, 100, zh},
		{"精华只要19.9元. 快来抢", 10, "精华只要19.9元."},
		{zh, 15, "这款精华很保湿。适合所有肤质！"},
		{zh, 10, "这款精华很保湿。"},
		{"现在下单还送小样，数量有限，先到先得。", 12, "现在下单还送小样…"},
		{"This serum hydrates deeply. It suits every skin type!", 30, "This serum hydrates deeply."},
		{"Supercalifragilistic expialidocious words everywhere", 20, "Supercalifragilisti…"},
	}
	for _, c := range cases {
		got := Shorten(c.text, c.max)
		if got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
		}
		if utf8.RuneCountInString(got) > c.max {
			t.Errorf("Shorten(%q, %d) = %q is too long", c.text, c.max, got)
		}
	}
}

func TestFit(t *testing.T) {
	if d := Fit("好的，马上为您介绍。", 120, Config{}); d.Action != sdk.ActionAllow {
		t.Fatalf("clean short reply: %+v", d)
	}
	long := strings.Repeat("这款面霜修护屏障。", 30)
	d := Fit(long, 50, Config{})
	if d.Action != sdk.ActionRewrite || utf8.RuneCountInString(d.Text) > 50 || !strings.HasSuffix(d.Text, "。") {
		t.Fatalf("long reply: %+v", d)
	}
	d = Fit(long, 0, Config{MaxChars: 40, SegmentChars: 18})
	for _, line := range strings.Split(d.Text, "\n") {
		if utf8.RuneCountInString(line) > 18 {
			t.Fatalf("segment %q is over 18 characters in %q", line, d.Text)
		}
	}
	if d := Fit("🎉✨ https://x.example", 120, Config{}); d.Action != sdk.ActionDeny {
		t.Fatalf("nothing speakable: %+v", d)
	}
	if _, err := ParseConfig([]byte(`{"max_chars":"x"}`)); err == nil {
		t.Fatal("a broken config was accepted")
	}
}
