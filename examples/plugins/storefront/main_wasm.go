//go:build wasip1

package main

import "github.com/livehat/livehat/sdk"

//go:wasmexport product_lookup
func productLookup() int32 {
	return sdk.Tool(func(req *LookupRequest) (map[string]any, error) { return ProductLookup(sdk.Lookup, *req, sdk.Now()) })
}

//go:wasmexport check_stock
func checkStock() int32 {
	return sdk.Tool(func(req *ItemRequest) (map[string]any, error) { return CheckStock(sdk.Lookup, *req) })
}

//go:wasmexport coupon_check
func couponCheck() int32 {
	return sdk.Tool(func(req *ItemRequest) (map[string]any, error) { return CouponCheck(sdk.Lookup, *req, sdk.Now()) })
}

//go:wasmexport shipping_policy
func shippingPolicy() int32 {
	return sdk.Tool(func(req *ItemRequest) (map[string]any, error) { return ShippingPolicy(sdk.Lookup, *req) })
}

//go:wasmexport send_link
func sendLink() int32 {
	return sdk.Tool(func(req *ItemRequest) (map[string]any, error) { return SendLink(sdk.Lookup, *req) })
}
