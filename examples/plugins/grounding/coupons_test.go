package main

import "testing"

func TestCouponClaims(t *testing.T) {
	runCases(t, []checkCase{
		{"no coupon checked", "zh", "面霜有券吗", "这款暂时没有优惠券，直接拍就是199元。", []Call{creamCoLookup, noCoupon}, "", "", ""},
		{"no coupon checked en", "en", "Any coupon?", "There is no coupon for it right now; it is 199 yuan.", []Call{creamCoLookup, noCoupon}, "", "", ""},
		{"coupon found", "zh", "精华有券吗", "有优惠券，满99减20，券后179元。", []Call{serumLookup, serumCoupon}, "", "", ""},
		{"coupon applies", "en", "Coupon for the serum?", "A 20 yuan coupon applies, so it is 179 yuan.", []Call{serumLookup, serumCoupon}, "", "", ""},
		{"coupon not yet reached", "zh", "面霜能用券吗", "有优惠券，满300元才能用，还差41元。", []Call{creamLookup, creamCoupon}, "", "", ""},
		{"minimum spend en", "en", "Can I use the cream coupon?", "Not yet: the coupon needs a minimum spend of 300 yuan.", []Call{creamLookup, creamCoupon}, "", "", ""},
		// A minimum spend must be a coupon's, not any amount of the
		// results: job2 step 600 said 满233.10元 for a 300-yuan threshold.
		{"minimum spend that is another amount", "zh", "面霜有优惠券吗？", "还不满足用券条件，满259元才能用。", []Call{creamLookup, creamCoupon}, KindAmount, "满259元才能用", "need a spend of 300"},
		{"minimum spend that is another amount en", "en", "Coupon for the cream?", "Spend over 259 yuan to use the coupon.", []Call{creamLookup, creamCoupon}, KindAmount, "Spend over 259", "need a spend of 300"},
		{"minimum spend without a coupon result", "zh", "面霜有券吗", "满300元可用。", []Call{creamLookup}, KindAmount, "满300元可用", "no coupon in the results"},

		{"no coupon unchecked", "zh", "面霜多少钱", "雅诗轻盈面霜199元，这款暂时没有优惠券。", []Call{creamCoLookup}, KindFact, "没有优惠券", "no coupon_check"},
		{"no coupon unchecked en", "en", "How much is it?", "It is 199 yuan; no coupon today.", []Call{creamCoLookup}, KindFact, "no coupon", "no coupon_check"},
		{"no coupon when there is one", "zh", "精华有券吗", "精华没有优惠券哦。", []Call{serumLookup, serumCoupon}, KindFact, "没有优惠券", "found a coupon"},
		{"coupon applies unchecked", "en", "How much is the serum?", "The serum is 199 yuan and a coupon applies.", []Call{serumLookup}, KindFact, "coupon applies", "no coupon_check"},
		{"coupon when there is none", "zh", "面霜有券吗", "有优惠券，快领！", []Call{creamCoLookup, noCoupon}, KindFact, "有优惠券", "found no coupon"},
	})
}

// TestCouponFallbacks: the rewrite claims a coupon, or none, only when a
// coupon_check of the turn says so, and passes the check itself.
func TestCouponFallbacks(t *testing.T) {
	lookupWithCoupon := call("product_lookup", `{"query":"精华"}`, `{"coupons":[{"amount":"20","min_spend":"99"}],"currency":"CNY",`+
		`"found":true,"item_id":"p-serum","name":"玻尿酸精华","price":"199","variants":[]}`)
	cases := []struct {
		name, lang, msg string
		calls           []Call
		want            string
	}{
		{"terms without a check", "zh", "精华有券吗", []Call{lookupWithCoupon}, "满99元减20元。"},
		{"terms without a check en", "en", "Any coupon for the serum?", []Call{lookupWithCoupon}, "Orders from 99 yuan get 20 yuan off."},
		{"no coupon checked", "en", "Any coupon?", []Call{creamCoLookup, noCoupon}, "There is no coupon for it right now; it is 199 yuan."},
		{"no coupon unchecked", "en", "Any coupon?", []Call{creamCoLookup}, "Let me check that for you."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := turn(c.lang, c.msg, "<tool_call>", c.calls...)
			tt.Attempt = 2
			d := Decide(tt)
			if d.Text != c.want {
				t.Errorf("rewrite %q, want %q", d.Text, c.want)
			}
			tt.Reply = d.Text
			mustPass(t, tt)
		})
	}
}
