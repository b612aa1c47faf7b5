//go:build wasip1

package main

import (
	"errors"
	"fmt"

	"github.com/livehat/livehat/sdk"
)

//go:wasmexport lookup_product
func lookupProduct() int32 {
	return sdk.Tool(func(req *LookupRequest) (LookupResponse, error) {
		q, err := req.CatalogQuery()
		if err != nil {
			return LookupResponse{}, err
		}
		res, err := sdk.Lookup(q)
		if err != nil {
			return LookupResponse{}, err
		}
		return Lookup(res), nil
	})
}

// product finds one product by id or name.
func product(id, name string) (sdk.Product, string, error) {
	q := sdk.CatalogQuery{Kind: "product", ID: id, Name: name}
	if id == "" && name == "" {
		return sdk.Product{}, "", errors.New("give a product id or name")
	}
	res, err := sdk.Lookup(q)
	if err != nil {
		return sdk.Product{}, "", err
	}
	if len(res.Products) == 0 {
		return sdk.Product{}, "", fmt.Errorf("no product %q in this stream", id+name)
	}
	return res.Products[0], res.Currency, nil
}

//go:wasmexport check_stock
func checkStock() int32 {
	return sdk.Tool(func(req *StockRequest) (StockResponse, error) {
		p, _, err := product(req.ID, req.Name)
		if err != nil {
			return StockResponse{}, err
		}
		return Stock(p, req.Quantity), nil
	})
}

//go:wasmexport best_coupon
func bestCoupon() int32 {
	return sdk.Tool(func(req *CouponRequest) (CouponResponse, error) {
		p, currency, err := product(req.ProductID, "")
		if err != nil {
			return CouponResponse{}, err
		}
		res, err := sdk.Lookup(sdk.CatalogQuery{Kind: "coupons"})
		if err != nil {
			return CouponResponse{}, err
		}
		return Coupons(p, req.Quantity, req.ViewerOrders, res.Coupons, sdk.Now(), currency), nil
	})
}
