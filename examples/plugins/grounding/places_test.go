package main

import (
	"strings"
	"testing"
)

// Where an item ships from, said in English or Chinese, is held to the
// results' ship_from: job10 told a viewer "It ships from Qingdao,
// Shandlist." (a made-up province) and nothing stopped it.
func TestShipFromPlaces(t *testing.T) {
	lookup := call("product_lookup", `{"query":"blocks"}`, `{"currency":"CNY","found":true,"item_id":"TOY-9827","link":2,"name":"山茶城堡积木","price":"212.90"}`)
	ship := call("shipping_policy", `{"item_id":"TOY-9827"}`, `{"free_shipping":true,"item_id":"TOY-9827","ship_from":"山东青岛","shipping_fee":"0","ships_within_days":1}`)
	tests := []struct {
		name, lang, reply string
		calls             []Call
		flagged           string // the phrase flagged; "" none
	}{
		{"the place in English", "en", "It ships from Qingdao, Shandong.", []Call{lookup, ship}, ""},
		{"with fillers", "en", "It ships from Qingdao, Shandong province within 1 day.", []Call{lookup, ship}, ""},
		{"the place as written", "en", "It ships from 山东青岛.", []Call{lookup, ship}, ""},
		{"in Chinese", "zh", "从山东青岛发货，1天内发出。", []Call{lookup, ship}, ""},
		{"a made-up province", "en", "It ships within 1 day. It ships from Qingdao, Shandlist.", []Call{lookup, ship}, "Shandlist"},
		{"another city", "en", "It is dispatched from Yiwu.", []Call{lookup, ship}, "Yiwu"},
		{"another place in Chinese", "zh", "这款从广东佛山发货。", []Call{lookup, ship}, "广东"},
		{"no shipping result", "en", "It ships from Qingdao.", []Call{lookup}, "Qingdao"},
		{"not a place", "en", "It ships from our warehouse within 1 day.", []Call{lookup, ship}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := "where does it ship from"
			if tt.lang == "zh" {
				msg = "积木从哪里发货"
			}
			fs := Check(turn(tt.lang, msg, tt.reply, tt.calls...))
			if tt.flagged == "" {
				if len(fs) > 0 {
					t.Errorf("%q: findings %v, want none", tt.reply, fs)
				}
				return
			}
			if len(fs) == 0 || fs[0].Kind != KindFact || fs[0].Phrase != tt.flagged || !strings.Contains(fs[0].Why, "ships from") {
				t.Errorf("%q: findings %v, want %q first, flagged for where it ships from", tt.reply, fs, tt.flagged)
			}
		})
	}
}
