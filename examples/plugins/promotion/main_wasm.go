//go:build wasip1

package main

import "github.com/livehat/livehat/sdk"

//go:wasmexport current_promotion
func currentPromotion() int32 {
	return sdk.Skill(func(in *sdk.SkillInput) (string, error) {
		res, err := sdk.Lookup(sdk.CatalogQuery{Kind: "promotions"})
		if err != nil {
			return "", err
		}
		products := map[string]sdk.Product{}
		for _, p := range res.Promotions {
			for _, id := range p.Products {
				if _, ok := products[id]; ok {
					continue
				}
				if r, err := sdk.Lookup(sdk.CatalogQuery{Kind: "product", ID: id}); err == nil && len(r.Products) > 0 {
					products[id] = r.Products[0]
				}
			}
		}
		return Text(sdk.Now(), res.Promotions, products), nil
	})
}
