package main

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/sdk"
)

// A backed reply that leaves out the fact asked for goes back while
// attempts remain: job10 answered "4号链接的材质是什么？" with the box's size,
// "是500毫升哦", and a question of a sunscreen's main ingredient with its price.
func TestUnansweredFactGoesBack(t *testing.T) {
	kettle := call("product_lookup", `{"query":"电热水壶"}`, `{"currency":"CNY","found":true,"item_id":"KIT-1988","name":"青柠双层防烫电热水壶",`+
		`"price":"129","specs":[{"key":"power","label":"power","label_zh":"功率","unit":"W","value":1500},`+
		`{"key":"anti_scald","label":"anti-scald","label_zh":"防烫","value":true}]}`)
	bar := call("product_lookup", `{"query":"protein bar"}`, `{"currency":"CNY","found":true,"item_id":"SPT-1","name":"Protein Bar","price":"48",`+
		`"specs":[{"key":"protein","label":"protein per bar","label_zh":"每根蛋白质","unit":"g","value":15}]}`)
	band := call("product_lookup", `{"query":"band"}`, `{"attributes":{"fit":"slim"},"currency":"CNY","found":true,"item_id":"SPT-2","name":"Pulse Band","price":"99"}`)
	tests := []struct {
		name, lang, msg, reply string
		calls                  []Call
		want                   []string // in the feedback; none: allowed
	}{
		{"another attribute", "zh", "卫衣的材质是什么？", "加绒卫衣直播间159元。", []Call{hoodieLookup}, []string{"the 材质 of 加绒卫衣: 纯棉", "in Chinese"}},
		{"an item by its link", "zh", "1号链接的材质是什么？", "加绒卫衣直播间159元。", []Call{hoodieLookup}, []string{"纯棉"}},
		{"cannot find what a result states", "en", "What's the material of the hoodie?", "Sorry, I'm unable to check that right now.", []Call{hoodieLookup}, []string{"the material of", ": cotton", "in English"}},
		{"a spec's measure", "zh", "功率呢，电热水壶的", "这个我帮您确认一下，稍等哦。", []Call{kettle}, []string{"功率", "1500W"}},
		{"the value", "zh", "卫衣的材质是什么？", "加绒卫衣是纯棉的。", []Call{hoodieLookup}, nil},
		{"the measure in other words", "zh", "电热水壶功率多大", "功率1500瓦。", []Call{kettle}, nil},
		{"a yes/no spec is the fact check's", "zh", "电热水壶防烫吗", "电热水壶129元。", []Call{kettle}, nil},
		{"a price asked too", "zh", "卫衣多少钱，材质是什么？", "加绒卫衣159元。", []Call{hoodieLookup}, nil},
		{"an attribute's word in the item's name", "en", "when is the protein bar back?", "Let me check that for you.", []Call{bar}, nil},
		{"an attribute's word inside another", "en", "is the fitness band good?", "It is 99 yuan.", []Call{band}, nil},
		{"no attribute named", "zh", "卫衣怎么样", "加绒卫衣159元。", []Call{hoodieLookup}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := turn(tt.lang, tt.msg, tt.reply, tt.calls...)
			if fs := Check(tn); len(fs) > 0 {
				t.Fatalf("the reply is backed, the check finds %v", fs)
			}
			d := Decide(tn)
			if tt.want == nil {
				if d.Action != sdk.ActionAllow {
					t.Fatalf("%+v, want allow", d)
				}
				return
			}
			if d.Action != sdk.ActionRetry || d.Validate() != nil {
				t.Fatalf("%+v, want a valid retry", d)
			}
			for _, w := range tt.want {
				if !strings.Contains(d.Feedback, w) {
					t.Errorf("feedback %q does not say %q", d.Feedback, w)
				}
			}
			last := tn
			last.Attempt = last.Attempts
			if d := Decide(last); d.Action != sdk.ActionAllow {
				t.Errorf("last attempt: %+v, want the true reply allowed", d)
			}
			skip := tn
			skip.Config.Skip = []Kind{KindAnswer}
			if d := Decide(skip); d.Action != sdk.ActionAllow {
				t.Errorf("answer skipped: %+v, want allow", d)
			}
		})
	}
}

// The last attempt's rewrite of an unbacked reply answers the attribute
// the message names, though no intent word covers it ("链长", "capacity"),
// instead of the price the lookup was taken for.
func TestFallbackSaysTheAttributeAsked(t *testing.T) {
	necklace := call("product_lookup", `{"query":"银项链"}`, `{"currency":"CNY","found":true,"item_id":"JWL-0704","name":"鲸落锁骨银项链",`+
		`"price":"216","specs":[{"key":"length","label":"chain length","label_zh":"链长","unit":"cm","value":45}]}`)
	tests := []struct{ lang, msg, reply, want string }{
		{"zh", "想问下银项链链长。。", "鲸落锁骨银项链链长60cm。", "链长是45cm。"},
		{"en", "how about the chain length of the necklace", "The chain length is 60cm.", "The chain length is 45cm."},
		{"zh", "银项链多少钱", "鲸落锁骨银项链199元。", "鲸落锁骨银项链直播间价格216元。"},
	}
	for _, tt := range tests {
		tn := turn(tt.lang, tt.msg, tt.reply, necklace)
		tn.Attempt = tn.Attempts
		if d := Decide(tn); d.Action != sdk.ActionRewrite || d.Text != tt.want {
			t.Errorf("%q: %+v, want the rewrite %q", tt.msg, d, tt.want)
		}
	}
}
