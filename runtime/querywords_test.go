package runtime

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestViewerSpans(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"耳环能退吗", []string{"耳环"}},
		{"珍珠耳环还有货吗", []string{"珍珠", "珍珠耳", "珍珠耳环", "珍珠耳环还有", "珍珠耳环还有货", "珠耳", "珠耳环", "珠耳环还有",
			"珠耳环还有货", "耳环", "耳环还有", "耳环还有货", "环还有", "环还有货", "有货"}},
		{"pearl earrings?", []string{"pearl", "pearl earrings", "earrings"}},
		{"where do the building blocks ship from", []string{"building", "building blocks", "blocks"}},
		{"how much is 磨牙饼干, and when", []string{"磨牙", "磨牙饼", "磨牙饼干", "牙饼", "牙饼干", "饼干"}},
		{"t-shirt 7.5ml, don't!", []string{"t-shirt", "t-shirt 7.5ml", "7.5ml", "don't"}},
		{"does link 3 have a coupon", []string{"link", "link 3"}},
		{"power bank battery life?", []string{"power bank", "bank"}},
		{"3 x cat litter with the voucher", []string{"3 x cat", "3 x cat litter", "cat", "cat litter", "litter"}},
		{"3号链接有券吗", []string{"3号", "3号链", "3号链接", "3号链接有", "3号链接有券", "号链", "号链接", "号链接有", "号链接有券",
			"链接", "链接有", "链接有券", "接有", "接有券", "有券"}},
		{"link 4", []string{"link", "link 4"}},
		{"？！", nil},
		{"", nil},
		{strings.Repeat("长", maxSpanText), nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := viewerSpans(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("viewerSpans(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	// A span is at most maxSpanUnits units long.
	long := strings.Repeat("珍", 20)
	for _, s := range viewerSpans(long) {
		if n := utf8.RuneCountInString(s); n > maxSpanUnits {
			t.Errorf("a span of %d characters", n)
		}
	}
}

// FuzzViewerSpans: every span is a piece of the text of at least two
// characters, valid where the text is, listed once.
func FuzzViewerSpans(f *testing.F) {
	for _, s := range []string{"耳环能退吗", "pearl earrings?", "how much is 磨牙饼干, and when", "t-shirt 7.5ml", "a\xffb", "x-", "'a'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		seen := map[string]bool{}
		for _, s := range viewerSpans(text) {
			if !strings.Contains(text, s) {
				t.Fatalf("%q is not in %q", s, text)
			}
			if utf8.RuneCountInString(s) < 2 {
				t.Fatalf("span %q of %q is one character", s, text)
			}
			if utf8.ValidString(text) && !utf8.ValidString(s) {
				t.Fatalf("span %q of valid %q is not", s, text)
			}
			if strings.TrimSpace(s) != s {
				t.Fatalf("span %q has space at an end", s)
			}
			if seen[s] {
				t.Fatalf("span %q listed twice", s)
			}
			seen[s] = true
		}
	})
}

// TestFindsItem: a viewer's span is a query when a catalog lookup of it
// could find an item; "back" of "is the dumbbells back in stock or nah"
// finds none, and job10 looked it up twice and told the viewer it could
// not check.
func TestFindsItem(t *testing.T) {
	words := []string{"spt-9521", "山茶包胶哑铃", "dumbbells", "jigsaw puzzle", "喵屿耳夹式珍珠耳环", "earrings", "link 3", "3号链接"}
	for _, tc := range []struct {
		span string
		want bool
	}{
		{"dumbbells", true},
		{"the dumbbells", true},
		{"jigsaw", true},
		{"珍珠耳环", true},
		{"山茶包胶哑铃多少钱", true},
		{"2号链接", true},
		{"link 3", true},
		{"三号", true},
		{"back", false},
		{"nah", false},
		{"ring", false},
		{"时候能再", false},
		{"SPT-9521", true},
		// A piece of every "link 3" alias, naming none (HVQA: "link"
		// looked up for "Is link 1 in M still in stock?").
		{"link", false},
		{"链接", false},
		{"号链接", false},
	} {
		if got := findsItem(tc.span, words); got != tc.want {
			t.Errorf("findsItem(%q) = %v, want %v", tc.span, got, tc.want)
		}
	}
}

func TestNamesVariant(t *testing.T) {
	for _, tc := range []struct {
		message, variant string
		want             bool
	}{
		{"Is the earbuds in white still in stock?", "white", true},
		{"Is the earbuds in white still in stock?", "black", false},
		{"T恤的M还有货吗？", "M", true},
		{"Is link 1 in M still in stock?", "m", true},
		{"Is the Mini lamp in stock?", "M", false},
		{"I'm 160cm, is it in stock?", "M", false},
		{"any shredded one?", "red", false},
		{"3号链接的blue还有货吗？", "blue", true},
		{"防晒30ml还有吗", "30ml", true},
		{"anything", " ", false},
		{"面霜白色M码有货吗", "白色", true},
	} {
		if got := namesVariant(tc.message, tc.variant); got != tc.want {
			t.Errorf("namesVariant(%q, %q) = %v, want %v", tc.message, tc.variant, got, tc.want)
		}
	}
}

func TestViewerCounts(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    []int
	}{
		{"买3件多少钱", []int{3}},
		{"两瓶有优惠吗", []int{2}},
		{"If I buy 1 of the lipstick, can I use the coupon?", []int{1}},
		{"I want to get two, any discount?", []int{2}},
		{"3 pieces of the hoodie, total?", []int{3}},
		{"2号链接有优惠券吗？券后多少钱", nil},
		{"Is there a coupon for link 3? What's the final price?", nil},
		{"满300减30能用吗", nil},
		{"身高170体重65，卫衣穿什么码？", nil},
		{"买100件", nil},
		{"买2件，再来2件", []int{2}},
	} {
		if got := viewerCounts(tc.message); !slices.Equal(got, tc.want) {
			t.Errorf("viewerCounts(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}
