package sdk

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/livehat/livehat/sdk/jsonx"
)

// CatalogSchema is the catalog layout the host answers in (the "schema"
// key of a CatalogResult): version 2, documented with its JSON Schema in
// the host's package harness/catalog.
const CatalogSchema = "livehat.catalog/2"

// The catalog types below follow the host's version 2 layout. What the
// merchant did not state stays absent: optional counts and amounts that
// can be zero are pointers (nil: not stated), dates and texts are zero,
// and nothing is filled with a default a plugin could mistake for a fact.

// StockState is a product's or variant's stock as viewers are told it.
type StockState string

// The stock states; "" is not stated.
const (
	InStock StockState = "in_stock"
	// LowStock is stock that is running out.
	LowStock StockState = "low"
	SoldOut  StockState = "sold_out"
	// Presale is sold now and shipped later (see Product.PresaleShipDate).
	Presale StockState = "presale"
)

// LowStockBelow is the count under which a stock with no stated state
// reads as LowStock, as the host derives it.
const LowStockBelow = 20

// Date is a calendar date; its JSON form is "YYYY-MM-DD". The zero Date
// is absent: not stated.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// IsZero reports whether d is absent.
func (d Date) IsZero() bool { return d == Date{} }

// String returns d as "YYYY-MM-DD", or "" when d is absent.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// ParseDate reads a date in the form "YYYY-MM-DD".
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("date %q is not a calendar date in the form YYYY-MM-DD", s)
	}
	y, m, d := t.Date()
	return Date{y, m, d}, nil
}

// Product is one item of the stream's catalog. Amounts are in the
// catalog's currency.
type Product struct {
	ID string
	// Link is the product's position in the live cart ("3号链接"); 0 when
	// it has none.
	Link int
	Name string
	// Aliases are other names viewers use for it.
	Aliases     []string
	Category    string
	Description string
	// Price is the current price before coupons and promotions.
	Price float64
	// ListPrice is the struck-through reference price; 0 when not stated.
	ListPrice float64
	// Stock is the count on hand; nil when not stated.
	Stock *int
	// StockState is the stated state; "" when not stated (State derives
	// one from Stock).
	StockState StockState
	// RestockDate is when a sold-out or low product comes back.
	RestockDate Date
	// PresaleShipDate is when a presale product ships.
	PresaleShipDate Date
	// LimitPerBuyer is the most one buyer may order; 0 when not stated.
	LimitPerBuyer int
	Variants      []Variant
	// Specs are typed facts (battery life, material, …).
	Specs       []Spec
	Ingredients []string
	// Allergens is nil when not stated and empty (not nil) when the
	// merchant states that the product contains none.
	Allergens []string
	// ShelfLifeDays is the shelf life from production; 0 when not stated.
	ShelfLifeDays  int
	BestBefore     Date
	Certifications []string
	// SizeChart recommends sizes for body heights and weights.
	SizeChart []SizeRow
	// Shipping is nil when the merchant stated nothing about delivery.
	Shipping *Shipping
	// Returns is nil when the merchant stated nothing about returns.
	Returns *Returns
}

// Names returns the product's name followed by its aliases.
func (p Product) Names() []string { return append([]string{p.Name}, p.Aliases...) }

// State returns the stated stock state, else the one Stock implies (0:
// SoldOut, below LowStockBelow: LowStock, else InStock), else "": not
// stated.
func (p Product) State() StockState { return deriveState(p.StockState, p.Stock) }

// Variant is one choice on one axis of a product: a colour, a size.
type Variant struct {
	// Name is the choice as the merchant writes it ("黑色", "XL").
	Name string
	// Axis is what variants of its kind vary in ("colour", "size"); ""
	// when not stated.
	Axis string
	// Price is the variant's own price; nil when it sells at the
	// product's price.
	Price *float64
	// Stock is the variant's own count; nil when it has none of its own.
	Stock       *int
	StockState  StockState
	RestockDate Date
}

// State is Product.State for the variant; "" means the variant states
// no stock of its own.
func (v Variant) State() StockState { return deriveState(v.StockState, v.Stock) }

func deriveState(stated StockState, stock *int) StockState {
	switch {
	case stated != "":
		return stated
	case stock == nil:
		return ""
	case *stock == 0:
		return SoldOut
	case *stock < LowStockBelow:
		return LowStock
	}
	return InStock
}

// SpecKind says which value a SpecValue holds.
type SpecKind uint8

// The kinds of spec value.
const (
	SpecNone SpecKind = iota
	SpecText
	SpecNumber
	SpecBool
)

// SpecValue is a spec's value: a text, a number or a yes/no, as Kind says.
type SpecValue struct {
	Kind   SpecKind
	Text   string
	Number float64
	Bool   bool
}

// String returns the value as its JSON text reads: the text, the number
// ("30", "5.5"), "true" or "false"; "" when it holds nothing.
func (v SpecValue) String() string {
	switch v.Kind {
	case SpecText:
		return v.Text
	case SpecNumber:
		return strconv.FormatFloat(v.Number, 'f', -1, 64)
	case SpecBool:
		return strconv.FormatBool(v.Bool)
	}
	return ""
}

// Spec is one typed fact about a product.
type Spec struct {
	// Key identifies the fact inside the product ("battery_hours").
	Key string
	// Label and LabelZh name the fact for viewers in English and Chinese.
	Label, LabelZh string
	Value          SpecValue
	// ValueZh is the Chinese form of a text value.
	ValueZh string
	// Unit is the unit of a number value ("h", "ml").
	Unit string
}

// SizeRow recommends Size for bodies inside its ranges. A bound that is 0
// is open: a row with only MinHeightCM 185 reads "185cm and taller".
type SizeRow struct {
	Size                     string
	MinHeightCM, MaxHeightCM float64
	MinWeightKG, MaxWeightKG float64
}

// Fits reports whether a body fits the row: each stated bound holds
// (inclusive); a height or weight of 0 or less is not known and not held
// to the row.
func (r SizeRow) Fits(heightCM, weightKG float64) bool {
	inside := func(x, lo, hi float64) bool {
		return x <= 0 || ((lo == 0 || x >= lo) && (hi == 0 || x <= hi))
	}
	return inside(heightCM, r.MinHeightCM, r.MaxHeightCM) && inside(weightKG, r.MinWeightKG, r.MaxWeightKG)
}

// Shipping is what the merchant states about delivery.
type Shipping struct {
	// ShipFrom is where parcels leave from ("广东深圳").
	ShipFrom string
	// DispatchHours is the promised time from order to dispatch; 0 when
	// not stated.
	DispatchHours int
	// Fee is the shipping fee: nil when not stated, 0 for free shipping.
	Fee             *float64
	Carrier         string
	ExcludedRegions []string
}

// Returns is what the merchant states about returns.
type Returns struct {
	// Accepted says whether the product can be returned at all.
	Accepted bool
	// Days is the return window; 0 when not stated.
	Days int
	// NoReason says returns need no reason (七天无理由); false when not
	// stated.
	NoReason bool
	// Conditions are the merchant's conditions ("unopened only").
	Conditions []string
	// ShippingInsurance says return postage is insured (运费险); false
	// when not stated.
	ShippingInsurance bool
}

// Coupon is a discount a viewer claims and applies at checkout: a fixed
// Amount off or a Percent off.
type Coupon struct {
	ID, Name string
	// Amount is a fixed amount off; Percent a percent off (10: 10% off).
	// One of them is set.
	Amount, Percent float64
	// MinSpend is the least order total it applies to; 0: no threshold.
	MinSpend float64
	// Products limits the coupon to these ids; empty means every product.
	Products       []string
	NewViewersOnly bool
	// Remaining is how many can still be claimed; nil when not stated.
	Remaining *int
	// PerBuyer is how many one viewer may claim; 0 when not stated.
	PerBuyer int
	// Starts and Ends bound when it runs; zero when open.
	Starts, Ends time.Time
}

// Running reports whether the coupon runs at now and is not stated to
// be all claimed.
func (c Coupon) Running(now time.Time) bool {
	return running(c.Starts, c.Ends, now) && (c.Remaining == nil || *c.Remaining > 0)
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

// Promotion is an offer that applies without a coupon; Kind says which
// of its numbers it uses.
type Promotion struct {
	ID, Title string
	Kind      PromotionKind
	// Products are the ids it applies to (a bundle's contents).
	Products []string
	// Price is the promotion price (price), the bundle's price (bundle)
	// or the price of Quantity items together (multi_buy).
	Price float64
	// Percent is the percent off (percent), or off each item when buying
	// Quantity (multi_buy).
	Percent float64
	// Quantity is how many items a multi_buy deal needs.
	Quantity int
	// NthPercent is the percent off the Quantity-th item (第二件半价:
	// Quantity 2, NthPercent 50).
	NthPercent float64
	// Gift is what comes free with a gift promotion.
	Gift string
	// MinSpend is the least order total of a price, percent or gift
	// promotion; 0: no threshold.
	MinSpend float64
	// Starts and Ends bound when it runs; zero when open.
	Starts, Ends time.Time
	// Text is the merchant's own wording.
	Text string
}

// Running reports whether the promotion runs at now.
func (p Promotion) Running(now time.Time) bool { return running(p.Starts, p.Ends, now) }

// running reports whether a window with optional bounds holds now.
func running(starts, ends, now time.Time) bool {
	return (starts.IsZero() || !now.Before(starts)) && (ends.IsZero() || now.Before(ends))
}

// CatalogQuery asks the host's catalog. Kind is "product", "coupons" or
// "promotions". A product query matches by ID, else by Link (the cart
// position), else by Name or alias (whole, case-insensitive), else every
// product whose name or alias occurs in Text (none occurring: every one
// whose name or alias holds Text as a part, "jigsaw" of "Jigsaw Puzzle");
// Limit caps the products.
// NamesOnly asks for each product's ID, Link, Name and Aliases only (the
// other fields are left zero): decoding whole products is most of what a
// lookup costs a plugin that only tells items apart by name. Its JSON
// names the layout this SDK reads (CatalogSchema), which the host
// requires.
type CatalogQuery struct {
	Kind      string
	ID        string
	Link      int
	Name      string
	Text      string
	Limit     int
	NamesOnly bool
}

// AppendJSON appends the query's JSON to b.
func (q CatalogQuery) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	w.ObjectStart()
	w.Key("schema")
	w.String(CatalogSchema)
	w.Key("kind")
	w.String(q.Kind)
	if q.ID != "" {
		w.Key("id")
		w.String(q.ID)
	}
	if q.Link > 0 {
		w.Key("link")
		w.Int(int64(q.Link))
	}
	for _, f := range [...]struct{ k, v string }{{"name", q.Name}, {"text", q.Text}} {
		if f.v != "" {
			w.Key(f.k)
			w.String(f.v)
		}
	}
	if q.Limit > 0 {
		w.Key("limit")
		w.Int(int64(q.Limit))
	}
	if q.NamesOnly {
		w.Key("names_only")
		w.Bool(true)
	}
	w.ObjectEnd()
	return append(b, w.Bytes()...)
}

// CatalogResult is the host's answer to a CatalogQuery.
type CatalogResult struct {
	Stream     string
	Currency   string
	Products   []Product
	Coupons    []Coupon
	Promotions []Promotion
}

// DecodeCatalogResult reads a CatalogResult's JSON, the host's catalog
// layout version 2 (CatalogSchema). Unknown keys are skipped, so that a
// plugin keeps working when the layout gains fields; a "schema" naming
// another version is an error.
func DecodeCatalogResult(b []byte) (*CatalogResult, error) {
	res := &CatalogResult{}
	r := jsonx.NewReader(b)
	err := r.Object(func(k string) error {
		switch k {
		case "schema":
			s, err := r.String()
			if err == nil && s != CatalogSchema {
				err = fmt.Errorf("catalog layout %q; this SDK reads %q", s, CatalogSchema)
			}
			return err
		case "stream":
			return str(r, &res.Stream)
		case "currency":
			return str(r, &res.Currency)
		case "products":
			return r.Array(func() error {
				p, err := decodeProduct(r)
				res.Products = append(res.Products, p)
				return err
			})
		case "coupons":
			return r.Array(func() error {
				c, err := decodeCoupon(r)
				res.Coupons = append(res.Coupons, c)
				return err
			})
		case "promotions":
			return r.Array(func() error {
				p, err := decodePromotion(r)
				res.Promotions = append(res.Promotions, p)
				return err
			})
		}
		return r.Skip()
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("catalog result: %w", err)
	}
	return res, nil
}

// field wraps an error with the key it was read under, so that a bad
// value is named.
func field(key string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func str(r *jsonx.Reader, dst *string) error {
	s, err := r.String()
	*dst = s
	return err
}

func num(r *jsonx.Reader, dst *float64) error {
	f, err := r.Float()
	*dst = f
	return err
}

func integer(r *jsonx.Reader, dst *int) error {
	n, err := r.Int()
	*dst = int(n)
	return err
}

func flag(r *jsonx.Reader, dst *bool) error {
	b, err := r.Bool()
	*dst = b
	return err
}

// optInt reads a count that may be absent; null is not stated.
func optInt(r *jsonx.Reader, dst **int) error {
	if r.Null() {
		*dst = nil
		return nil
	}
	n, err := r.Int()
	v := int(n)
	*dst = &v
	return err
}

// optNum reads an amount that may be absent; null is not stated.
func optNum(r *jsonx.Reader, dst **float64) error {
	if r.Null() {
		*dst = nil
		return nil
	}
	f, err := r.Float()
	*dst = &f
	return err
}

func strs(r *jsonx.Reader, dst *[]string) error {
	return r.Array(func() error {
		s, err := r.String()
		*dst = append(*dst, s)
		return err
	})
}

func tm(r *jsonx.Reader, dst *time.Time) error {
	s, err := r.String()
	if err != nil {
		return err
	}
	*dst, err = parseTime(s)
	return err
}

func date(r *jsonx.Reader, dst *Date) error {
	s, err := r.String()
	if err != nil || s == "" {
		*dst = Date{}
		return err
	}
	*dst, err = ParseDate(s)
	return err
}

func stockState(r *jsonx.Reader, dst *StockState) error {
	s, err := r.String()
	if err != nil {
		return err
	}
	switch st := StockState(s); st {
	case "", InStock, LowStock, SoldOut, Presale:
		*dst = st
		return nil
	}
	return fmt.Errorf("unknown stock state %q", s)
}

// specValue reads a string, a number or a boolean.
func specValue(r *jsonx.Reader, dst *SpecValue) error {
	raw, err := r.Raw()
	if err != nil {
		return err
	}
	v := jsonx.NewReader(raw)
	switch raw[0] {
	case '"':
		dst.Kind = SpecText
		dst.Text, err = v.String()
	case 't', 'f':
		dst.Kind = SpecBool
		dst.Bool, err = v.Bool()
	case 'n':
		*dst = SpecValue{}
	default:
		if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return errors.New("a spec value is a string, a number or a boolean")
		}
		dst.Kind = SpecNumber
		dst.Number, err = v.Float()
	}
	return err
}

func decodeProduct(r *jsonx.Reader) (Product, error) {
	var p Product
	err := r.Object(func(k string) error {
		switch k {
		case "id":
			return str(r, &p.ID)
		case "link":
			return field(k, integer(r, &p.Link))
		case "name":
			return str(r, &p.Name)
		case "aliases":
			return strs(r, &p.Aliases)
		case "category":
			return str(r, &p.Category)
		case "description":
			return str(r, &p.Description)
		case "price":
			return field(k, num(r, &p.Price))
		case "list_price":
			return field(k, num(r, &p.ListPrice))
		case "stock":
			return field(k, optInt(r, &p.Stock))
		case "stock_state":
			return field(k, stockState(r, &p.StockState))
		case "restock_date":
			return field(k, date(r, &p.RestockDate))
		case "presale_ship_date":
			return field(k, date(r, &p.PresaleShipDate))
		case "limit_per_buyer":
			return field(k, integer(r, &p.LimitPerBuyer))
		case "variants":
			return r.Array(func() error {
				v, err := decodeVariant(r)
				p.Variants = append(p.Variants, v)
				return field("variants", err)
			})
		case "specs":
			return r.Array(func() error {
				s, err := decodeSpec(r)
				p.Specs = append(p.Specs, s)
				return field("specs", err)
			})
		case "ingredients":
			return strs(r, &p.Ingredients)
		case "allergens":
			if r.Null() {
				p.Allergens = nil
				return nil
			}
			p.Allergens = []string{} // an empty list states "none"
			return strs(r, &p.Allergens)
		case "shelf_life_days":
			return field(k, integer(r, &p.ShelfLifeDays))
		case "best_before":
			return field(k, date(r, &p.BestBefore))
		case "certifications":
			return strs(r, &p.Certifications)
		case "size_chart":
			return r.Array(func() error {
				row, err := decodeSizeRow(r)
				p.SizeChart = append(p.SizeChart, row)
				return field("size_chart", err)
			})
		case "shipping":
			if r.Null() {
				p.Shipping = nil
				return nil
			}
			sh, err := decodeShipping(r)
			p.Shipping = &sh
			return field(k, err)
		case "returns":
			if r.Null() {
				p.Returns = nil
				return nil
			}
			rt, err := decodeReturns(r)
			p.Returns = &rt
			return field(k, err)
		}
		return r.Skip()
	})
	if err != nil && p.ID != "" {
		err = fmt.Errorf("product %s: %w", p.ID, err)
	}
	return p, err
}

func decodeVariant(r *jsonx.Reader) (Variant, error) {
	var v Variant
	err := r.Object(func(k string) error {
		switch k {
		case "name":
			return str(r, &v.Name)
		case "axis":
			return str(r, &v.Axis)
		case "price":
			return field(k, optNum(r, &v.Price))
		case "stock":
			return field(k, optInt(r, &v.Stock))
		case "stock_state":
			return field(k, stockState(r, &v.StockState))
		case "restock_date":
			return field(k, date(r, &v.RestockDate))
		}
		return r.Skip()
	})
	return v, err
}

func decodeSpec(r *jsonx.Reader) (Spec, error) {
	var s Spec
	err := r.Object(func(k string) error {
		switch k {
		case "key":
			return str(r, &s.Key)
		case "label":
			return str(r, &s.Label)
		case "label_zh":
			return str(r, &s.LabelZh)
		case "value":
			return field(k, specValue(r, &s.Value))
		case "value_zh":
			return str(r, &s.ValueZh)
		case "unit":
			return str(r, &s.Unit)
		}
		return r.Skip()
	})
	return s, err
}

func decodeSizeRow(r *jsonx.Reader) (SizeRow, error) {
	var row SizeRow
	err := r.Object(func(k string) error {
		switch k {
		case "size":
			return str(r, &row.Size)
		case "min_height_cm":
			return field(k, num(r, &row.MinHeightCM))
		case "max_height_cm":
			return field(k, num(r, &row.MaxHeightCM))
		case "min_weight_kg":
			return field(k, num(r, &row.MinWeightKG))
		case "max_weight_kg":
			return field(k, num(r, &row.MaxWeightKG))
		}
		return r.Skip()
	})
	return row, err
}

func decodeShipping(r *jsonx.Reader) (Shipping, error) {
	var sh Shipping
	err := r.Object(func(k string) error {
		switch k {
		case "ship_from":
			return str(r, &sh.ShipFrom)
		case "dispatch_hours":
			return field(k, integer(r, &sh.DispatchHours))
		case "fee":
			return field(k, optNum(r, &sh.Fee))
		case "carrier":
			return str(r, &sh.Carrier)
		case "excluded_regions":
			return strs(r, &sh.ExcludedRegions)
		}
		return r.Skip()
	})
	return sh, err
}

func decodeReturns(r *jsonx.Reader) (Returns, error) {
	var rt Returns
	err := r.Object(func(k string) error {
		switch k {
		case "accepted":
			return field(k, flag(r, &rt.Accepted))
		case "days":
			return field(k, integer(r, &rt.Days))
		case "no_reason":
			return field(k, flag(r, &rt.NoReason))
		case "conditions":
			return strs(r, &rt.Conditions)
		case "shipping_insurance":
			return field(k, flag(r, &rt.ShippingInsurance))
		}
		return r.Skip()
	})
	return rt, err
}

func decodeCoupon(r *jsonx.Reader) (Coupon, error) {
	var c Coupon
	err := r.Object(func(k string) error {
		switch k {
		case "id":
			return str(r, &c.ID)
		case "name":
			return str(r, &c.Name)
		case "amount":
			return field(k, num(r, &c.Amount))
		case "percent":
			return field(k, num(r, &c.Percent))
		case "min_spend":
			return field(k, num(r, &c.MinSpend))
		case "products":
			return strs(r, &c.Products)
		case "new_viewers_only":
			return field(k, flag(r, &c.NewViewersOnly))
		case "remaining":
			return field(k, optInt(r, &c.Remaining))
		case "per_buyer":
			return field(k, integer(r, &c.PerBuyer))
		case "starts":
			return field(k, tm(r, &c.Starts))
		case "ends":
			return field(k, tm(r, &c.Ends))
		}
		return r.Skip()
	})
	if err != nil && c.ID != "" {
		err = fmt.Errorf("coupon %s: %w", c.ID, err)
	}
	return c, err
}

func decodePromotion(r *jsonx.Reader) (Promotion, error) {
	var p Promotion
	err := r.Object(func(k string) error {
		switch k {
		case "id":
			return str(r, &p.ID)
		case "title":
			return str(r, &p.Title)
		case "kind":
			s, err := r.String()
			p.Kind = PromotionKind(s)
			return err
		case "products":
			return strs(r, &p.Products)
		case "price":
			return field(k, num(r, &p.Price))
		case "percent":
			return field(k, num(r, &p.Percent))
		case "quantity":
			return field(k, integer(r, &p.Quantity))
		case "nth_percent":
			return field(k, num(r, &p.NthPercent))
		case "gift":
			return str(r, &p.Gift)
		case "min_spend":
			return field(k, num(r, &p.MinSpend))
		case "starts":
			return field(k, tm(r, &p.Starts))
		case "ends":
			return field(k, tm(r, &p.Ends))
		case "text":
			return str(r, &p.Text)
		}
		return r.Skip()
	})
	if err != nil && p.ID != "" {
		err = fmt.Errorf("promotion %s: %w", p.ID, err)
	}
	return p, err
}

// AppendJSON appends the result's JSON, in the host's layout, to b: what
// DecodeCatalogResult reads back.
func (res *CatalogResult) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	w.ObjectStart()
	w.Key("schema")
	w.String(CatalogSchema)
	w.Key("stream")
	w.String(res.Stream)
	w.Key("currency")
	w.String(res.Currency)
	if len(res.Products) > 0 {
		w.Key("products")
		w.ArrayStart()
		for _, p := range res.Products {
			p.write(&w)
		}
		w.ArrayEnd()
	}
	if len(res.Coupons) > 0 {
		w.Key("coupons")
		w.ArrayStart()
		for _, c := range res.Coupons {
			c.write(&w)
		}
		w.ArrayEnd()
	}
	if len(res.Promotions) > 0 {
		w.Key("promotions")
		w.ArrayStart()
		for _, p := range res.Promotions {
			p.write(&w)
		}
		w.ArrayEnd()
	}
	w.ObjectEnd()
	return append(b, w.Bytes()...)
}

// AppendJSON appends the product's JSON (the host's catalog layout) to b.
func (p Product) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	p.write(&w)
	return append(b, w.Bytes()...)
}

// objectWriter writes an object's members, leaving out what is not
// stated.
type objectWriter struct{ w *jsonx.Writer }

func (o objectWriter) str(k, v string) {
	if v != "" {
		o.w.Key(k)
		o.w.String(v)
	}
}

func (o objectWriter) num(k string, v float64) {
	if v != 0 {
		o.w.Key(k)
		o.w.Float(v)
	}
}

func (o objectWriter) integer(k string, v int) {
	if v != 0 {
		o.w.Key(k)
		o.w.Int(int64(v))
	}
}

func (o objectWriter) flag(k string, v bool) {
	if v {
		o.w.Key(k)
		o.w.Bool(v)
	}
}

func (o objectWriter) date(k string, d Date) { o.str(k, d.String()) }

func (o objectWriter) time(k string, t time.Time) {
	if !t.IsZero() {
		o.str(k, t.Format(time.RFC3339Nano))
	}
}

// list writes a list when it is stated; with always, an empty non-nil
// list is written too (allergens: "none").
func (o objectWriter) list(k string, v []string, always bool) {
	if len(v) == 0 && !(always && v != nil) {
		return
	}
	o.w.Key(k)
	o.w.ArrayStart()
	for _, s := range v {
		o.w.String(s)
	}
	o.w.ArrayEnd()
}

func (o objectWriter) optInt(k string, v *int) {
	if v != nil {
		o.w.Key(k)
		o.w.Int(int64(*v))
	}
}

func (o objectWriter) optNum(k string, v *float64) {
	if v != nil {
		o.w.Key(k)
		o.w.Float(*v)
	}
}

func (p Product) write(w *jsonx.Writer) {
	o := objectWriter{w}
	w.ObjectStart()
	w.Key("id")
	w.String(p.ID)
	o.integer("link", p.Link)
	w.Key("name")
	w.String(p.Name)
	o.list("aliases", p.Aliases, false)
	o.str("category", p.Category)
	o.str("description", p.Description)
	w.Key("price")
	w.Float(p.Price)
	o.num("list_price", p.ListPrice)
	o.optInt("stock", p.Stock)
	o.str("stock_state", string(p.StockState))
	o.date("restock_date", p.RestockDate)
	o.date("presale_ship_date", p.PresaleShipDate)
	o.integer("limit_per_buyer", p.LimitPerBuyer)
	if len(p.Variants) > 0 {
		w.Key("variants")
		w.ArrayStart()
		for _, v := range p.Variants {
			w.ObjectStart()
			w.Key("name")
			w.String(v.Name)
			o.str("axis", v.Axis)
			o.optNum("price", v.Price)
			o.optInt("stock", v.Stock)
			o.str("stock_state", string(v.StockState))
			o.date("restock_date", v.RestockDate)
			w.ObjectEnd()
		}
		w.ArrayEnd()
	}
	if len(p.Specs) > 0 {
		w.Key("specs")
		w.ArrayStart()
		for _, s := range p.Specs {
			w.ObjectStart()
			w.Key("key")
			w.String(s.Key)
			o.str("label", s.Label)
			o.str("label_zh", s.LabelZh)
			w.Key("value")
			switch s.Value.Kind {
			case SpecText:
				w.String(s.Value.Text)
			case SpecNumber:
				w.Float(s.Value.Number)
			case SpecBool:
				w.Bool(s.Value.Bool)
			default:
				w.Null()
			}
			o.str("value_zh", s.ValueZh)
			o.str("unit", s.Unit)
			w.ObjectEnd()
		}
		w.ArrayEnd()
	}
	o.list("ingredients", p.Ingredients, false)
	o.list("allergens", p.Allergens, true)
	o.integer("shelf_life_days", p.ShelfLifeDays)
	o.date("best_before", p.BestBefore)
	o.list("certifications", p.Certifications, false)
	if len(p.SizeChart) > 0 {
		w.Key("size_chart")
		w.ArrayStart()
		for _, r := range p.SizeChart {
			w.ObjectStart()
			w.Key("size")
			w.String(r.Size)
			o.num("min_height_cm", r.MinHeightCM)
			o.num("max_height_cm", r.MaxHeightCM)
			o.num("min_weight_kg", r.MinWeightKG)
			o.num("max_weight_kg", r.MaxWeightKG)
			w.ObjectEnd()
		}
		w.ArrayEnd()
	}
	if sh := p.Shipping; sh != nil {
		w.Key("shipping")
		w.ObjectStart()
		o.str("ship_from", sh.ShipFrom)
		o.integer("dispatch_hours", sh.DispatchHours)
		o.optNum("fee", sh.Fee)
		o.str("carrier", sh.Carrier)
		o.list("excluded_regions", sh.ExcludedRegions, false)
		w.ObjectEnd()
	}
	if rt := p.Returns; rt != nil {
		w.Key("returns")
		w.ObjectStart()
		w.Key("accepted")
		w.Bool(rt.Accepted)
		o.integer("days", rt.Days)
		o.flag("no_reason", rt.NoReason)
		o.list("conditions", rt.Conditions, false)
		o.flag("shipping_insurance", rt.ShippingInsurance)
		w.ObjectEnd()
	}
	w.ObjectEnd()
}

func (c Coupon) write(w *jsonx.Writer) {
	o := objectWriter{w}
	w.ObjectStart()
	w.Key("id")
	w.String(c.ID)
	w.Key("name")
	w.String(c.Name)
	o.num("amount", c.Amount)
	o.num("percent", c.Percent)
	o.num("min_spend", c.MinSpend)
	o.list("products", c.Products, false)
	o.flag("new_viewers_only", c.NewViewersOnly)
	o.optInt("remaining", c.Remaining)
	o.integer("per_buyer", c.PerBuyer)
	o.time("starts", c.Starts)
	o.time("ends", c.Ends)
	w.ObjectEnd()
}

func (p Promotion) write(w *jsonx.Writer) {
	o := objectWriter{w}
	w.ObjectStart()
	w.Key("id")
	w.String(p.ID)
	w.Key("title")
	w.String(p.Title)
	o.str("kind", string(p.Kind))
	o.list("products", p.Products, false)
	o.num("price", p.Price)
	o.num("percent", p.Percent)
	o.integer("quantity", p.Quantity)
	o.num("nth_percent", p.NthPercent)
	o.str("gift", p.Gift)
	o.num("min_spend", p.MinSpend)
	o.time("starts", p.Starts)
	o.time("ends", p.Ends)
	o.str("text", p.Text)
	w.ObjectEnd()
}
