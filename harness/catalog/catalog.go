// Package catalog is the stream's catalog: what a merchant sells, the one
// schema that import, the plugins' catalog lookup, the training rooms and
// the suites share.
//
// The JSON layout is versioned by its "schema" key (SchemaVersion); its
// JSON Schema is Schema() and its page is README.md. What a merchant did
// not state stays absent: optional numbers that can legitimately be zero
// (stock, a shipping fee, a coupon's remaining count) are pointers, nil
// meaning "not stated", and no field is ever filled with a default that
// would read as a fact. Parse decodes and validates a document, reporting
// every problem at once, and upgrades documents of version 1, the layout
// used before this package.
package catalog

import (
	"encoding/json"
	"time"
)

// SchemaVersion names the layout this package reads and writes; it is the
// value of a document's "schema" key.
const SchemaVersion = "livehat.catalog/2"

// Catalog is a stream's sellable world: its products, coupons and
// promotions. Its JSON form always carries "schema": SchemaVersion.
type Catalog struct {
	// Stream is an optional label of the stream the catalog belongs to.
	Stream string `json:"stream,omitempty"`
	// Currency is the ISO 4217 code of every amount in the catalog.
	Currency string `json:"currency"`
	// Products are the items on sale, in the merchant's order.
	Products []Product `json:"products"`
	// Coupons are discounts a viewer claims and applies at checkout.
	Coupons []Coupon `json:"coupons,omitzero"`
	// Promotions are offers that apply without a coupon.
	Promotions []Promotion `json:"promotions,omitzero"`
}

// MarshalJSON writes the catalog with "schema": SchemaVersion first, so
// that whatever a program builds in memory is a version 2 document.
func (c Catalog) MarshalJSON() ([]byte, error) {
	type fields Catalog // the same fields without this method
	if c.Products == nil {
		c.Products = []Product{} // "products" is required, null is not a list
	}
	return json.Marshal(struct {
		Schema string `json:"schema"`
		fields
	}{SchemaVersion, fields(c)})
}

// Product is one item of a catalog. Amounts are in the catalog's currency.
type Product struct {
	// ID identifies the product: 1-64 characters of A-Z, a-z, 0-9, '.',
	// '_' and '-', unique in the catalog.
	ID string `json:"id"`
	// Link is the product's position in the live cart ("1号链接"), unique
	// in the catalog; 0 when the product has none.
	Link int `json:"link,omitempty"`
	// Name is what the merchant calls the product.
	Name string `json:"name"`
	// Aliases are other names viewers use for it.
	Aliases     []string `json:"aliases,omitzero"`
	Category    string   `json:"category,omitempty"`
	Description string   `json:"description,omitempty"`
	// Price is the current price before coupons and promotions.
	Price float64 `json:"price"`
	// ListPrice is the reference price shown struck through; 0 when not
	// stated.
	ListPrice float64 `json:"list_price,omitempty"`
	// Stock is the count on hand, nil when not stated. With variants that
	// state their own stock it is their sum.
	Stock *int `json:"stock,omitempty"`
	// StockState is the stated stock state; empty when not stated (see
	// StockStateOf for the state derived from Stock).
	StockState StockState `json:"stock_state,omitempty"`
	// RestockDate is when a sold-out or low product comes back.
	RestockDate Date `json:"restock_date,omitzero"`
	// PresaleShipDate is when a presale product ships.
	PresaleShipDate Date `json:"presale_ship_date,omitzero"`
	// LimitPerBuyer is the most one buyer may order; 0 when not stated.
	LimitPerBuyer int       `json:"limit_per_buyer,omitempty"`
	Variants      []Variant `json:"variants,omitzero"`
	// Specs are the product's typed facts (battery life, material, …).
	Specs       []Spec   `json:"specs,omitzero"`
	Ingredients []string `json:"ingredients,omitzero"`
	// Allergens is nil when not stated and empty when the merchant states
	// that the product contains none.
	Allergens []string `json:"allergens,omitzero"`
	// ShelfLifeDays is the shelf life from production; 0 when not stated.
	ShelfLifeDays int  `json:"shelf_life_days,omitempty"`
	BestBefore    Date `json:"best_before,omitzero"`
	// Certifications are the certificates the product holds ("CCC").
	Certifications []string `json:"certifications,omitzero"`
	// SizeChart recommends a size for a body height and weight.
	SizeChart []SizeRow `json:"size_chart,omitzero"`
	// Shipping is nil when the merchant stated nothing about delivery.
	Shipping *Shipping `json:"shipping,omitempty"`
	// Returns is nil when the merchant stated nothing about returns.
	Returns *Returns `json:"returns,omitempty"`
}

// Variant is one choice on one axis of a product: a colour, a size.
type Variant struct {
	// Name is the choice as the merchant writes it ("黑色", "XL").
	Name string `json:"name"`
	// Axis is what the variants of one kind vary in ("colour", "size").
	Axis string `json:"axis,omitempty"`
	// Price is the variant's own price; nil when it sells at the
	// product's price.
	Price *float64 `json:"price,omitempty"`
	// Stock is the variant's own count; nil when the variant has no stock
	// of its own.
	Stock       *int       `json:"stock,omitempty"`
	StockState  StockState `json:"stock_state,omitempty"`
	RestockDate Date       `json:"restock_date,omitzero"`
}

// Spec is one typed fact about a product: a text, a number with an
// optional unit, or a yes/no.
type Spec struct {
	// Key identifies the fact inside the product ("battery_hours").
	Key string `json:"key"`
	// Label and LabelZh name the fact for viewers in English and Chinese.
	Label   string    `json:"label,omitempty"`
	LabelZh string    `json:"label_zh,omitempty"`
	Value   SpecValue `json:"value"`
	// ValueZh is the Chinese form of a text value.
	ValueZh string `json:"value_zh,omitempty"`
	// Unit is the unit of a number value ("h", "ml", "g").
	Unit string `json:"unit,omitempty"`
}

// SizeRow recommends Size for bodies inside its ranges. A bound that is 0
// is open: a row with only MinHeightCM 185 reads "185cm and taller".
type SizeRow struct {
	Size        string  `json:"size"`
	MinHeightCM float64 `json:"min_height_cm,omitempty"`
	MaxHeightCM float64 `json:"max_height_cm,omitempty"`
	MinWeightKG float64 `json:"min_weight_kg,omitempty"`
	MaxWeightKG float64 `json:"max_weight_kg,omitempty"`
}

// Shipping is what the merchant states about delivery; every field is
// optional.
type Shipping struct {
	// ShipFrom is where parcels leave from ("广东深圳").
	ShipFrom string `json:"ship_from,omitempty"`
	// DispatchHours is the promised time from order to dispatch; 0 when
	// not stated.
	DispatchHours int `json:"dispatch_hours,omitempty"`
	// Fee is the shipping fee: nil when not stated, 0 for free shipping.
	Fee     *float64 `json:"fee,omitempty"`
	Carrier string   `json:"carrier,omitempty"`
	// ExcludedRegions are regions the merchant does not ship to.
	ExcludedRegions []string `json:"excluded_regions,omitzero"`
}

// Returns is what the merchant states about returns.
type Returns struct {
	// Accepted says whether the product can be returned at all.
	Accepted bool `json:"accepted"`
	// Days is the return window after delivery; 0 when not stated. Only
	// with Accepted.
	Days int `json:"days,omitempty"`
	// NoReason says that returns need no reason (七天无理由); false when
	// not stated. Only with Accepted.
	NoReason bool `json:"no_reason,omitempty"`
	// Conditions are the merchant's conditions ("unopened only").
	Conditions []string `json:"conditions,omitzero"`
	// ShippingInsurance says the return postage is insured (运费险); false
	// when not stated. Only with Accepted.
	ShippingInsurance bool `json:"shipping_insurance,omitempty"`
}

// Coupon is a discount a viewer claims and applies at checkout: either a
// fixed Amount off or a Percent off, never both.
type Coupon struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Amount is a fixed amount off; 0 when the coupon is a percent off.
	Amount float64 `json:"amount,omitempty"`
	// Percent is the percent off (0 < Percent < 100); 0 when the coupon is
	// a fixed amount.
	Percent float64 `json:"percent,omitempty"`
	// MinSpend is the least order total the coupon applies to (满减); 0
	// when there is no threshold.
	MinSpend float64 `json:"min_spend,omitempty"`
	// Products limits the coupon to these product ids; empty means every
	// product.
	Products []string `json:"products,omitzero"`
	// NewViewersOnly limits it to viewers without a previous order.
	NewViewersOnly bool `json:"new_viewers_only,omitempty"`
	// Remaining is how many can still be claimed; nil when not stated.
	Remaining *int `json:"remaining,omitempty"`
	// PerBuyer is how many one viewer may claim; 0 when not stated.
	PerBuyer int `json:"per_buyer,omitempty"`
	// Starts and Ends bound when the coupon runs; zero when open.
	Starts time.Time `json:"starts,omitzero"`
	Ends   time.Time `json:"ends,omitzero"`
}

// PromotionKind says how a promotion lowers the price.
type PromotionKind string

// The kinds of promotion.
const (
	// PromoPrice sells the products at Price.
	PromoPrice PromotionKind = "price"
	// PromoPercent takes Percent off the products.
	PromoPercent PromotionKind = "percent"
	// PromoMultiBuy is a deal on Quantity items bought together: their
	// Price together, Percent off each, or NthPercent off the last one.
	PromoMultiBuy PromotionKind = "multi_buy"
	// PromoBundle sells the products together at Price.
	PromoBundle PromotionKind = "bundle"
	// PromoGift gives Gift with the products.
	PromoGift PromotionKind = "gift"
)

// Promotion is an offer that applies without a coupon. Which of its
// numbers are required depends on Kind.
type Promotion struct {
	ID    string        `json:"id"`
	Title string        `json:"title"`
	Kind  PromotionKind `json:"kind"`
	// Products are the ids the promotion applies to (a bundle's contents).
	Products []string `json:"products"`
	// Price is the promotion price (price), the bundle's price (bundle) or
	// the price of Quantity items together (multi_buy).
	Price float64 `json:"price,omitempty"`
	// Percent is the percent off (percent), or off each item when buying
	// Quantity (multi_buy).
	Percent float64 `json:"percent,omitempty"`
	// Quantity is how many items a multi_buy deal needs.
	Quantity int `json:"quantity,omitempty"`
	// NthPercent is the percent off the Quantity-th item of a multi_buy
	// deal (第二件半价: Quantity 2, NthPercent 50).
	NthPercent float64 `json:"nth_percent,omitempty"`
	// Gift is what comes free with a gift promotion.
	Gift string `json:"gift,omitempty"`
	// MinSpend is the least order total a price, percent or gift
	// promotion needs; 0 when there is no threshold.
	MinSpend float64 `json:"min_spend,omitempty"`
	// Starts and Ends bound when the promotion runs; zero when open.
	Starts time.Time `json:"starts,omitzero"`
	Ends   time.Time `json:"ends,omitzero"`
	// Text is the merchant's own wording of the offer.
	Text string `json:"text,omitempty"`
}
