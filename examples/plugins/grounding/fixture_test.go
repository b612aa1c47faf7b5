package main

import "testing"

// The fixture is a merchant's stream like the one of issue #18: the
// demo's serum and cream, a hoodie with a size chart (open-ended at the
// top), earbuds with colours and a battery, a nut gift box with peanuts
// and no returns, a sold-out flask with a restock date and a lipstick
// with a multi-buy promotion. Results are laid out as the storefront
// plugin writes them.
var catalog = []Item{
	{ID: "p-serum", Name: "玻尿酸精华", Aliases: []string{"精华", "hyaluronic serum", "serum"}, Link: 1},
	{ID: "p-cream", Name: "修护面霜", Aliases: []string{"面霜", "repair cream", "cream"}, Link: 2},
	{ID: "p-flask", Name: "不锈钢保温杯", Aliases: []string{"保温杯", "steel flask", "flask"}, Link: 3},
	{ID: "p-lipstick", Name: "丝绒口红", Aliases: []string{"口红", "velvet lipstick", "lipstick"}, Link: 4},
	{ID: "p-hoodie", Name: "加绒卫衣", Aliases: []string{"卫衣", "fleece hoodie", "hoodie"}, Link: 5},
	{ID: "p-buds", Name: "降噪蓝牙耳机", Aliases: []string{"耳机", "noise cancelling earbuds", "earbuds"}, Link: 6},
	{ID: "p-nuts", Name: "坚果礼盒", Aliases: []string{"坚果", "nut gift box", "nut box"}, Link: 7},
}

func call(export, args, result string) Call {
	return Call{Name: export, Export: export, Arguments: []byte(args), Result: []byte(result)}
}

var (
	serumLookup = call("product_lookup", `{"query":"精华"}`, `{"attributes":{"skin":"all","volume":"30ml"},"currency":"CNY",`+
		`"description":"30ml hydrating serum with 2% hyaluronic acid","found":true,"item_id":"p-serum","list_price":"299",`+
		`"name":"玻尿酸精华","price":"199","promotion":"33% off during the live stream","variants":[]}`)
	serumCoupon = call("coupon_check", `{"item_id":"p-serum"}`, `{"coupon":{"amount":"20","id":"c-new20","min_spend":"99"},`+
		`"eligible":true,"item_id":"p-serum","quantity":1,"total":"199","total_after_coupon":"179"}`)
	serumShipping = call("shipping_policy", `{"item_id":"p-serum"}`, `{"free_shipping":true,"item_id":"p-serum","return_days":7,`+
		`"shipping_fee":"0","ships_within_days":2}`)
	serumLink   = call("send_link", `{"item_id":"p-serum"}`, `{"item_id":"p-serum","pinned":true}`)
	creamLookup = call("product_lookup", `{"query":"面霜"}`, `{"attributes":{"volume":"50g"},"currency":"CNY",`+
		`"description":"50g barrier repair cream with ceramides","found":true,"item_id":"p-cream","list_price":"359",`+
		`"name":"修护面霜","price":"259","promotion":"28% off during the live stream","variants":[]}`)
	creamCoupon = call("coupon_check", `{"item_id":"p-cream"}`, `{"coupon":{"amount":"50","id":"c-cream50","min_spend":"300"},`+
		`"eligible":false,"item_id":"p-cream","missing_spend":"41","quantity":1,"total":"259","total_after_coupon":"259"}`)
	hoodieLookup = call("product_lookup", `{"query":"卫衣"}`, `{"attributes":{"material":"cotton","材质":"纯棉"},"currency":"CNY",`+
		`"description":"fleece-lined cotton hoodie, relaxed fit","found":true,"item_id":"p-hoodie","list_price":"199",`+
		`"name":"加绒卫衣","price":"159","promotion":"20% off during the live stream","size_chart":[`+
		`{"max_height_cm":168,"max_weight_kg":60,"min_height_cm":155,"min_weight_kg":45,"size":"M"},`+
		`{"max_height_cm":178,"max_weight_kg":75,"min_height_cm":165,"min_weight_kg":58,"size":"L"},`+
		`{"min_height_cm":178,"min_weight_kg":75,"size":"XL"}],"variants":["M","L","XL"]}`)
	hoodieStock = call("check_stock", `{"item_id":"p-hoodie"}`, `{"item_id":"p-hoodie","stock":{"L":30,"M":0,"XL":5}}`)
	flaskStock  = call("check_stock", `{"item_id":"p-flask"}`, `{"item_id":"p-flask","restock_date":"2026-12-10","stock":{"standard":0}}`)
	budsLookup  = call("product_lookup", `{"query":"耳机"}`, `{"attributes":{"battery life":"30 hours","续航":"30小时","waterproof":"IPX4"},`+
		`"currency":"CNY","description":"Noise Cancelling Earbuds","found":true,"item_id":"p-buds","list_price":"499","name":"降噪蓝牙耳机",`+
		`"price":"399","promotion":"20% off during the live stream","variants":["black","white"]}`)
	budsShipping = call("shipping_policy", `{"item_id":"p-buds"}`, `{"dispatch_hours":48,"item_id":"p-buds","return_days":7}`)
	nutsLookup   = call("product_lookup", `{"query":"坚果"}`, `{"allergens":["peanut","tree_nut"],"attributes":{"保质期":"9个月"},"best_before":"2027-03-01",`+
		`"currency":"CNY","found":true,"item_id":"p-nuts","name":"坚果礼盒","price":"129","variants":[]}`)
	nutsCoupon = call("coupon_check", `{"item_id":"p-nuts"}`, `{"coupon":{"amount":"30","id":"c-nut30","min_spend":"99"},"eligible":true,`+
		`"item_id":"p-nuts","quantity":1,"total":"129","total_after_coupon":"99"}`)
	nutsShipping = call("shipping_policy", `{"item_id":"p-nuts"}`, `{"free_shipping":false,"item_id":"p-nuts","return_days":0,`+
		`"shipping_fee":"8","ships_within_days":1}`)
	lipstickLookup = call("product_lookup", `{"query":"口红"}`, `{"currency":"CNY","description":"matte velvet lipstick, 6 shades",`+
		`"found":true,"item_id":"p-lipstick","list_price":"129","name":"丝绒口红","price":"89","promotion":"第二支半价","variants":[]}`)
	failedStock = call("check_stock", `{"item_id":"p-serum"}`, `{"error":"check_stock: tool call timed out"}`)
)

// turn is a turn of the fixture's stream on its first of two attempts.
func turn(lang, message, reply string, calls ...Call) Turn {
	return Turn{Reply: reply, Message: message, Lang: lang, Calls: calls, Items: catalog, Attempt: 1, Attempts: 2,
		Config: Config{LowStock: defaultLowStock}}
}

// mustPass fails the test when the check finds anything in t.
func mustPass(t *testing.T, tt Turn) {
	t.Helper()
	if fs := Check(tt); len(fs) > 0 {
		t.Errorf("%q → %q: want no findings, got %v", tt.Message, tt.Reply, fs)
	}
}

// Results in the layout the storefront writes for catalogs of version 2:
// stock states without counts, typed specs, allergens, promotions,
// multi-buy deals, percent coupons and return rules with conditions.
var (
	braceletLookup = call("product_lookup", `{"query":"3号链接"}`, `{"attributes":{"length":"18cm"},"currency":"CNY","found":true,`+
		`"item_id":"JWL-6264","link":3,"list_price":"155","name":"鲸落编绳手链","price":"129","promotion":"17% off during the live stream",`+
		`"specs":[{"key":"length","label":"length","label_zh":"长度","unit":"cm","value":18}],`+
		`"variant_details":[{"axis":"size","name":"S","stock_state":"sold_out","restock_date":"2026-12-20"},{"axis":"size","name":"M","stock_state":"low"}],`+
		`"variants":["S","M"]}`)
	braceletStock = call("check_stock", `{"item_id":"JWL-6264"}`, `{"item_id":"JWL-6264","stock":{"S":"not stated","M":"not stated"},`+
		`"stock_state":{"S":"sold_out","M":"low"},"variant_restock_dates":{"S":"2026-12-20"}}`)
	earringsLookup = call("product_lookup", `{"query":"珍珠耳环"}`, `{"attributes":{"pearl":"8mm","waterproof":"no"},"currency":"CNY","found":true,`+
		`"item_id":"JWL-9986","link":4,"list_price":"461","name":"团子家法式珍珠耳环","presale_ship_date":"2027-01-10","price":"354.90",`+
		`"specs":[{"key":"pearl","label":"pearl size","label_zh":"珍珠直径","unit":"mm","value":8},`+
		`{"key":"hypoallergenic","label":"hypoallergenic","label_zh":"防过敏","value":true}],"stock_state":"presale","variants":[]}`)
	earringsShipping = call("shipping_policy", `{"item_id":"JWL-9986"}`, `{"carrier":"圆通","dispatch_hours":12,"free_shipping":"not stated",`+
		`"item_id":"JWL-9986","return_days":7,"returns":{"accepted":true,"conditions":["刻字定制款不退"],"no_reason":"not stated",`+
		`"rule":"returns within 7 days"},"ship_from":"河北保定","shipping_fee":"not stated","ships_within_days":0.5}`)
	cookiesLookup = call("product_lookup", `{"query":"曲奇"}`, `{"allergens":["wheat","milk"],"currency":"CNY","found":true,"ingredients":["小麦粉","黄油","牛奶"],`+
		`"item_id":"FD-1","name":"黄油曲奇","price":"39.9","promotions":[{"id":"mb2","kind":"multi_buy","nth_item_percent_off":50,"quantity":2,`+
		`"title":"第二件半价"}],"shelf_life_days":180,"best_before":"2027-05-01","variants":[]}`)
	cookiesCoupon = call("coupon_check", `{"item_id":"FD-1","quantity":2}`, `{"coupon":{"discount":"7.98","id":"c10","min_spend":"50",`+
		`"percent_off":10},"eligible":true,"item_id":"FD-1","multi_buy":[{"id":"mb2","kind":"multi_buy","nth_item_percent_off":50,`+
		`"quantity":2,"title":"第二件半价","total_with_deal":"59.85"}],"quantity":2,"total":"79.8","total_after_coupon":"71.82"}`)
	teaLookup = call("product_lookup", `{"query":"茶"}`, `{"allergens":"none","currency":"CNY","found":true,"item_id":"FD-2","name":"高山乌龙茶",`+
		`"price":"88","variants":[]}`)
	barLookup = call("product_lookup", `{"query":"蛋白棒"}`, `{"allergens":["milk","soy"],"currency":"CNY","found":true,`+
		`"ingredients":["乳清蛋白","大豆蛋白","可可粉"],"item_id":"SPT-2304","name":"青柠低脂蛋白棒","price":"66.90",`+
		`"variant_details":[{"axis":"flavour","name":"可可"},{"axis":"colour","name":"雾紫"}],"variants":["可可","雾紫"]}`)
	jamLookup = call("product_lookup", `{"query":"果酱"}`, `{"allergens":"not stated","currency":"CNY","found":true,"ingredients":["草莓","白砂糖"],`+
		`"item_id":"FD-3","name":"草莓果酱","price":"25","variants":[]}`)
)
