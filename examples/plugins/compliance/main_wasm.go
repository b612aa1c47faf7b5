//go:build wasip1

package main

import "github.com/livehat/livehat/sdk"

//go:wasmexport check_reply
func checkReply() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision {
		cfg, err := ParseConfig(in.Config)
		if err != nil {
			return sdk.Deny("compliance: bad hook config: " + err.Error())
		}
		var mentions []Mention
		if res, err := sdk.Lookup(sdk.CatalogQuery{Kind: "product", Text: in.Text, Limit: 10}); err == nil {
			mentions = FindMentions(in.Text, res.Products)
		}
		if len(mentions) > 0 {
			coupons, _ := sdk.Lookup(sdk.CatalogQuery{Kind: "coupons"})
			promos, _ := sdk.Lookup(sdk.CatalogQuery{Kind: "promotions"})
			if coupons != nil && promos != nil {
				AddOffers(mentions, coupons.Coupons, promos.Promotions, sdk.Now())
			}
		}
		return Decide(in.Text, Check(in.Text, mentions, cfg), cfg)
	})
}
