// Command shop is an example plugin with three tools a merchant's stream
// needs: product lookup (by id, name, alias or free text), stock, and
// coupon eligibility. The logic here is plain Go over SDK types and is
// tested natively; main_wasm.go binds it to the host.
package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

// LookupRequest are the arguments of lookup_product; one field is enough.
type LookupRequest struct {
	ID, Name, Query string
}

// DecodeJSON implements sdk.JSONDecoder, skipping encoding/json.
func (r *LookupRequest) DecodeJSON(rd *jsonx.Reader) error {
	return rd.Object(func(k string) error {
		var err error
		switch k {
		case "id":
			r.ID, err = rd.String()
		case "name":
			r.Name, err = rd.String()
		case "query":
			r.Query, err = rd.String()
		default:
			err = rd.Skip()
		}
		return err
	})
}

// CatalogQuery turns the request into the host's catalog query.
func (r *LookupRequest) CatalogQuery() (sdk.CatalogQuery, error) {
	switch {
	case strings.TrimSpace(r.ID) != "":
		return sdk.CatalogQuery{Kind: "product", ID: strings.TrimSpace(r.ID)}, nil
	case strings.TrimSpace(r.Name) != "":
		return sdk.CatalogQuery{Kind: "product", Name: r.Name}, nil
	case strings.TrimSpace(r.Query) != "":
		return sdk.CatalogQuery{Kind: "product", Text: r.Query, Limit: 3}, nil
	}
	return sdk.CatalogQuery{}, errors.New("lookup_product: give an id, a name or a query")
}

// ProductView is a product as the model reads it.
type ProductView struct {
	ID, Name, Description string
	// Link is the cart position ("3号链接"); 0 when the product has none.
	Link             int
	Price, ListPrice float64
	// DiscountPercent is how much below the list price the price is.
	DiscountPercent int
	// Stock is the count on hand; nil when the merchant did not state it.
	Stock *int
	// State is the stock state, stated or derived from Stock; "" when
	// neither is stated.
	State sdk.StockState
}

// LookupResponse is the result of lookup_product.
type LookupResponse struct {
	Found    bool
	Currency string
	Products []ProductView
}

// AppendJSON implements sdk.JSONAppender.
func (r LookupResponse) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	w.ObjectStart()
	w.Key("found")
	w.Bool(r.Found)
	w.Key("currency")
	w.String(r.Currency)
	w.Key("products")
	w.ArrayStart()
	for _, p := range r.Products {
		w.ObjectStart()
		w.Key("id")
		w.String(p.ID)
		if p.Link > 0 {
			w.Key("link")
			w.Int(int64(p.Link))
		}
		w.Key("name")
		w.String(p.Name)
		w.Key("price")
		w.Float(p.Price)
		w.Key("list_price")
		w.Float(p.ListPrice)
		w.Key("discount_percent")
		w.Int(int64(p.DiscountPercent))
		// What the merchant did not state is said to be not stated.
		w.Key("stock")
		if p.Stock != nil {
			w.Int(int64(*p.Stock))
		} else {
			w.String(notStated)
		}
		w.Key("stock_state")
		if p.State == "" {
			w.String(notStated)
		} else {
			w.String(string(p.State))
		}
		w.Key("in_stock")
		if p.State == "" {
			w.String(notStated)
		} else {
			w.Bool(p.State != sdk.SoldOut)
		}
		w.Key("description")
		w.String(p.Description)
		w.ObjectEnd()
	}
	w.ArrayEnd()
	w.ObjectEnd()
	return append(b, w.Bytes()...)
}

// Lookup builds the lookup_product result from the catalog's answer.
func Lookup(res *sdk.CatalogResult) LookupResponse {
	out := LookupResponse{Found: len(res.Products) > 0, Currency: res.Currency, Products: []ProductView{}}
	for _, p := range res.Products {
		v := ProductView{ID: p.ID, Name: p.Name, Description: p.Description, Link: p.Link, Price: p.Price,
			ListPrice: p.ListPrice, Stock: p.Stock, State: p.State()}
		if p.ListPrice > p.Price && p.ListPrice > 0 {
			v.DiscountPercent = int(math.Round(100 * (p.ListPrice - p.Price) / p.ListPrice))
		}
		out.Products = append(out.Products, v)
	}
	return out
}

// StockRequest are the arguments of check_stock.
type StockRequest struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Quantity int    `json:"quantity"`
}

// StockResponse is the result of check_stock.
type StockResponse struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Stock is the count on hand; absent when the merchant did not state it.
	Stock *int `json:"stock,omitempty"`
	// Status is in_stock, low_stock, sold_out, presale, or not_stated.
	Status  string `json:"status"`
	CanBuy  bool   `json:"can_buy"`
	Message string `json:"message"`
}

// LowStock is the stock under which the avatar should create urgency.
const LowStock = 10

// notStated is what the tools say for a fact the merchant did not state.
const notStated = "not stated"

// Stock says whether quantity of p can be bought now. A stated stock
// state wins over the count; without either, nothing is promised.
func Stock(p sdk.Product, quantity int) StockResponse {
	if quantity < 1 {
		quantity = 1
	}
	r := StockResponse{ID: p.ID, Name: p.Name, Stock: p.Stock}
	switch {
	case p.StockState == sdk.SoldOut || (p.StockState == "" && p.Stock != nil && *p.Stock == 0):
		r.Status, r.Message = "sold_out", fmt.Sprintf("%s is sold out.", p.Name)
		if !p.RestockDate.IsZero() {
			r.Message += fmt.Sprintf(" It is back on %s.", p.RestockDate)
		}
	case p.StockState == sdk.Presale:
		r.Status, r.CanBuy = "presale", true
		r.Message = fmt.Sprintf("%s is on presale.", p.Name)
		if !p.PresaleShipDate.IsZero() {
			r.Message = fmt.Sprintf("%s is on presale and ships on %s.", p.Name, p.PresaleShipDate)
		}
	case p.StockState == sdk.LowStock || (p.StockState == "" && p.Stock != nil && *p.Stock < LowStock):
		r.Status, r.CanBuy = "low_stock", true
		r.Message = fmt.Sprintf("%s is running low.", p.Name)
		if p.Stock != nil {
			r.Message = fmt.Sprintf("Only %d of %s left.", *p.Stock, p.Name)
		}
	case p.StockState == sdk.InStock || p.Stock != nil:
		r.Status, r.CanBuy, r.Message = "in_stock", true, fmt.Sprintf("%s is in stock.", p.Name)
	default:
		r.Status, r.Message = "not_stated", fmt.Sprintf("The stock of %s is not stated.", p.Name)
	}
	if r.CanBuy && p.Stock != nil && *p.Stock < quantity {
		r.CanBuy = false
		r.Message += fmt.Sprintf(" %d wanted, %d available.", quantity, *p.Stock)
	}
	if r.CanBuy && p.LimitPerBuyer > 0 && quantity > p.LimitPerBuyer {
		r.CanBuy = false
		r.Message += fmt.Sprintf(" %d wanted, at most %d per buyer.", quantity, p.LimitPerBuyer)
	}
	return r
}

// CouponRequest are the arguments of best_coupon.
type CouponRequest struct {
	ProductID    string `json:"product_id"`
	Quantity     int    `json:"quantity"`
	ViewerOrders int    `json:"viewer_orders"`
}

// CouponOffer is one coupon judged for an order.
type CouponOffer struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Eligible bool    `json:"eligible"`
	Discount float64 `json:"discount"`
	Reason   string  `json:"reason,omitempty"`
}

// CouponResponse is the result of best_coupon.
type CouponResponse struct {
	ProductID string        `json:"product_id"`
	Total     float64       `json:"total"`
	Coupons   []CouponOffer `json:"coupons"`
	Best      *CouponOffer  `json:"best,omitempty"`
	Pay       float64       `json:"pay"`
	Currency  string        `json:"currency"`
}

// Coupons judges every coupon of the strategy for quantity of p bought
// by a viewer with orders previous orders at time now, and picks the
// largest discount.
func Coupons(p sdk.Product, quantity, orders int, coupons []sdk.Coupon, now time.Time, currency string) CouponResponse {
	if quantity < 1 {
		quantity = 1
	}
	total := round2(p.Price * float64(quantity))
	r := CouponResponse{ProductID: p.ID, Total: total, Pay: total, Currency: currency, Coupons: []CouponOffer{}}
	for _, c := range coupons {
		o := CouponOffer{ID: c.ID, Name: c.Name}
		switch {
		case c.Remaining != nil && *c.Remaining <= 0:
			o.Reason = "no coupons left"
		case !c.Starts.IsZero() && now.Before(c.Starts):
			o.Reason = "not started yet"
		case !c.Ends.IsZero() && !now.Before(c.Ends):
			o.Reason = "expired"
		case len(c.Products) > 0 && !slices.Contains(c.Products, p.ID):
			o.Reason = "not valid for this product"
		case c.NewViewersOnly && orders > 0:
			o.Reason = "for new viewers only"
		case total < c.MinSpend:
			o.Reason = fmt.Sprintf("needs a spend of %.2f %s", c.MinSpend, currency)
		default:
			o.Eligible = true
			o.Discount = round2(c.Amount + total*c.Percent/100)
			o.Discount = min(o.Discount, total)
		}
		r.Coupons = append(r.Coupons, o)
		if o.Eligible && (r.Best == nil || o.Discount > r.Best.Discount) {
			best := o
			r.Best = &best
		}
	}
	if r.Best != nil {
		r.Pay = round2(total - r.Best.Discount)
	}
	return r
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
