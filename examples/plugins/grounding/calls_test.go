package main

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/sdk"
)

// A question the turn's calls cannot answer goes back with the call that
// would answer it, by its export; the last attempt is the check's as
// before. job10 under a renamed harness checked the stock for a coupon
// question and pinned the link for a stock question.
func TestMissingCallIsAskedFor(t *testing.T) {
	dogFood := call("product_lookup", `{"query":"2号链接"}`, `{"currency":"CNY","found":true,"item_id":"PET-8977","link":2,"name":"山茶冻干双拼狗粮",`+
		`"price":"267","stock_state":"sold_out"}`)
	dogFoodStock := call("check_stock", `{"item_id":"PET-8977"}`, `{"item_id":"PET-8977","stock":{"2kg":"not stated"},"stock_state":{"2kg":"sold_out"}}`)
	hoodieCoupon := call("coupon_check", `{"item_id":"p-hoodie"}`, `{"eligible":false,"item_id":"p-hoodie","total":"159","total_after_coupon":"159"}`)
	hoodieLink := call("send_link", `{"item_id":"p-hoodie"}`, `{"item_id":"p-hoodie","pinned":true}`)
	serumLookup := call("product_lookup", `{"query":"serum"}`, `{"currency":"CNY","found":true,"item_id":"p-serum","name":"玻尿酸精华","price":"199"}`)
	tests := []struct {
		name, lang, msg, reply string
		calls                  []Call
		export                 string // the call asked for; "" for none
	}{
		{"the stock, only looked up", "zh", "2号链接还有货吗", "狗粮267元。", []Call{dogFood}, "check_stock"},
		{"a coupon, the stock checked", "en", "is there a coupon for the hoodie?", "Yes, it is in stock.", []Call{hoodieLookup, dogFoodStock}, "coupon_check"},
		{"the link of a piece of the name", "zh", "卫衣链接发一下", "加绒卫衣直播间159元。", []Call{hoodieLookup}, "send_link"},
		{"shipping", "en", "how long does shipping take for the hoodie", "It is 159 yuan.", []Call{hoodieLookup}, "shipping_policy"},
		{"the stock checked", "zh", "2号链接还有货吗", "狗粮267元。", []Call{dogFood, dogFoodStock}, ""},
		{"the coupon checked", "en", "is there a coupon for the hoodie?", "It is 159 yuan.", []Call{hoodieLookup, hoodieCoupon}, ""},
		{"the link pinned", "en", "where is the hoodie's link", "Here you go.", []Call{hoodieLookup, hoodieLink}, ""},
		// The item asked was not looked up: a call would name another.
		{"another item in play", "en", "is there a coupon for the hoodie?", "It is 199 yuan.", []Call{serumLookup}, ""},
		{"no item named", "en", "is there a coupon?", "It is 159 yuan.", []Call{hoodieLookup}, ""},
		{"the price, which the lookup gives", "zh", "卫衣多少钱", "加绒卫衣159元。", []Call{hoodieLookup}, ""},
		// "pin" is a piece of "shipping" and "pink", and asks no link.
		{"shipping, not the link", "en", "How long does shipping take for link 5, and can I return it?", "It is 159 yuan.", []Call{hoodieLookup}, "shipping_policy"},
		{"pink, not the link", "en", "is the pink hoodie in stock?", "It is 159 yuan.", []Call{hoodieLookup}, "check_stock"},
		// The transfer demo's "耳环能退吗": a stock check, and no policy.
		{"a return asked in few words", "zh", "卫衣能退吗", "有货的。", []Call{hoodieLookup}, "shipping_policy"},
		// A comparison looks up each item it names.
		{"a comparison, one item looked up", "zh", "卫衣和精华哪个便宜？", "加绒卫衣159元。", []Call{hoodieLookup}, "product_lookup"},
		{"a comparison by link, one item looked up", "en", "Which is cheaper, link 1 or the hoodie?", "It is 159 yuan.", []Call{hoodieLookup}, "product_lookup"},
		{"a comparison, the second lookup failed", "zh", "卫衣和精华哪个便宜？", "精华我确认一下。", []Call{hoodieLookup,
			call("product_lookup", `{"query":"精华"}`, `{"error":"tool product_lookup (plugin storefront): tool call timed out"}`)}, ""},
		{"a comparison, both looked up", "zh", "卫衣和精华哪个便宜？", "精华199元，卫衣159元。", []Call{hoodieLookup, serumLookup}, ""},
		{"pin it", "en", "pin it please, the hoodie", "It is 159 yuan.", []Call{hoodieLookup}, "send_link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := turn(tt.lang, tt.msg, tt.reply, tt.calls...)
			d := Decide(tn)
			if d.Validate() != nil {
				t.Fatalf("%+v does not validate: %v", d, d.Validate())
			}
			if d.Call != tt.export {
				t.Fatalf("%+v, want a call of %q", d, tt.export)
			}
			if tt.export == "" {
				return
			}
			if d.Action != sdk.ActionRetry || !strings.Contains(d.Feedback, "no result of this turn gives") && len(Check(tn)) == 0 {
				t.Errorf("%+v, want a retry that says what is missing", d)
			}
			last := tn
			last.Attempt = last.Attempts
			if d := Decide(last); d.Call != "" {
				t.Errorf("last attempt: %+v asks for a call no answer follows", d)
			}
			skip := tn
			skip.Config.Skip = []Kind{KindAnswer}
			if d := Decide(skip); d.Call != "" {
				t.Errorf("answer skipped: %+v still asks for a call", d)
			}
		})
	}
}

// A price given to a viewer who named no item and asked nothing of the
// shop goes back, and on the last attempt the host thanks them instead.
func TestUnaskedPriceGoesBack(t *testing.T) {
	tests := []struct {
		name, lang, msg, reply string
		unasked                bool
	}{
		{"a compliment", "zh", "主播声音好好听", "加绒卫衣直播间价格159元。", true},
		{"the weather", "en", "What's the weather tomorrow?", "Fleece hoodie is 159 yuan in the live room.", true},
		{"abuse", "zh", "骗子直播间", "加绒卫衣现在159元，喜欢就拍！", true},
		{"a compliment answered", "zh", "主播声音好好听", "谢谢夸奖！", false},
		{"a price asked", "zh", "多少钱", "加绒卫衣159元。", false},
		{"an item named", "zh", "卫衣好看吗", "加绒卫衣159元。", false},
		{"a recommendation", "en", "what do you recommend?", "The hoodie, 159 yuan today.", false},
		{"a narration", "zh", "(host strategy, no viewer asked) 介绍主推商品。", "加绒卫衣直播间价格159元。", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := turn(tt.lang, tt.msg, tt.reply, hoodieLookup)
			d := Decide(tn)
			if got := d.Action == sdk.ActionRetry && d.Feedback == unaskedFeedback; got != tt.unasked {
				t.Fatalf("%+v, want sent back %v", d, tt.unasked)
			}
			if !tt.unasked {
				return
			}
			last := tn
			last.Attempt = last.Attempts
			if d := Decide(last); d.Action != sdk.ActionRewrite || statesMoney(d.Text) || d.Text == "" {
				t.Errorf("last attempt: %+v, want a rewrite without prices", d)
			}
		})
	}
}

// An empty last attempt is answered from the results when they answer
// the viewer; an earlier one goes back.
func TestEmptyReplyIsAnsweredFromTheResults(t *testing.T) {
	tn := turn("zh", "精华多少钱", "", serumLookupForEmpty)
	if d := Decide(tn); d.Action != sdk.ActionRetry {
		t.Errorf("first attempt: %+v, want a retry", d)
	}
	tn.Attempt = tn.Attempts
	if d := Decide(tn); d.Action != sdk.ActionRewrite || !strings.Contains(d.Text, "199") {
		t.Errorf("last attempt: %+v, want the price from the lookup", d)
	}
}

var serumLookupForEmpty = call("product_lookup", `{"query":"精华"}`, `{"currency":"CNY","found":true,"item_id":"p-serum","name":"玻尿酸精华","price":"199"}`)
