package main

import "testing"

// BenchmarkCheck is the hook's work on a typical turn: a coupon question
// with its lookup and coupon check, a backed reply that is allowed.
func BenchmarkCheck(b *testing.B) {
	tt := turn("zh", "精华有优惠券吗？券后多少钱", "玻尿酸精华可以用20元券，券后179元，喜欢就拍！", serumLookup, serumCoupon)
	tt.Items = catalog[:1] // what the host's lookups return: the item the turn names
	tt.Context = []ContextItem{{Title: "Featured item", Text: "玻尿酸精华 (id p-serum)"},
		{Title: "Items on sale", Text: "玻尿酸精华 (p-serum), 修护面霜 (p-cream), 加绒卫衣 (p-hoodie), 坚果礼盒 (p-nuts)"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(tt); d.Action != "allow" {
			b.Fatalf("%+v", d)
		}
	}
}

// BenchmarkRewrite is the most work a turn costs: an unbacked reply on
// the last attempt, checked, rewritten and the rewrite checked again.
func BenchmarkRewrite(b *testing.B) {
	tt := turn("zh", "卫衣M码还有货吗", "M码有货的，还剩8件，链接已经帮您置顶啦！", hoodieLookup, hoodieStock)
	tt.Items = catalog[4:5]
	tt.Attempt = 2
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(tt); d.Action != "rewrite" {
			b.Fatalf("%+v", d)
		}
	}
}
