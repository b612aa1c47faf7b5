package sdk

import (
	"fmt"
	"time"

	"github.com/livehat/livehat/sdk/jsonx"
)

// Product is one item of the stream's catalog. Prices are in the
// catalog's currency.
type Product struct {
	ID          string
	Name        string
	Aliases     []string
	Category    string
	Price       float64
	ListPrice   float64
	Stock       int
	Description string
	Attributes  map[string]string
	// Variants are sizes or colors with their own stock.
	Variants []Variant
	// SizeChart maps body measures to sizes (apparel).
	SizeChart []SizeRow
	// Shipping is the delivery and return policy; nil when unknown.
	Shipping *Shipping
}

// Variant is a size or color of a product.
type Variant struct {
	Name  string
	Stock int
}

// SizeRow recommends Size for heights (cm) and weights (kg) in its ranges.
type SizeRow struct {
	Size                 string
	MinHeight, MaxHeight int
	MinWeight, MaxWeight int
}

// Shipping is a product's delivery and return policy: days to dispatch,
// the fee (zero: free) and the no-reason return window (zero: none).
type Shipping struct {
	Days       int
	Fee        float64
	ReturnDays int
}

// Names returns the product's name followed by its aliases.
func (p Product) Names() []string { return append([]string{p.Name}, p.Aliases...) }

// Coupon is a coupon of the stream's strategy.
type Coupon struct {
	ID, Name string
	// Amount is a fixed discount; Percent a percentage off (0-100).
	Amount, Percent float64
	MinSpend        float64
	// Products limits the coupon to these ids; empty means every product.
	Products       []string
	NewViewersOnly bool
	Remaining      int
	Starts, Ends   time.Time
}

// Promotion is a timed offer of the stream's strategy.
type Promotion struct {
	ID, Title    string
	Products     []string
	Price        float64
	Percent      float64
	Starts, Ends time.Time
	Text         string
}

// CatalogQuery asks the host's catalog. Kind is "product" (by ID, Name or
// alias, or every product whose name or alias occurs in Text),
// "coupons" or "promotions".
type CatalogQuery struct {
	Kind  string
	ID    string
	Name  string
	Text  string
	Limit int
}

// AppendJSON appends the query's JSON to b.
func (q CatalogQuery) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	w.ObjectStart()
	w.Key("kind")
	w.String(q.Kind)
	for _, f := range [...]struct{ k, v string }{{"id", q.ID}, {"name", q.Name}, {"text", q.Text}} {
		if f.v != "" {
			w.Key(f.k)
			w.String(f.v)
		}
	}
	if q.Limit > 0 {
		w.Key("limit")
		w.Int(int64(q.Limit))
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

// DecodeCatalogResult reads a CatalogResult's JSON.
func DecodeCatalogResult(b []byte) (*CatalogResult, error) {
	res := &CatalogResult{}
	r := jsonx.NewReader(b)
	err := r.Object(func(k string) error {
		switch k {
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

func decodeProduct(r *jsonx.Reader) (Product, error) {
	var p Product
	err := r.Object(func(k string) error {
		switch k {
		case "id":
			return str(r, &p.ID)
		case "name":
			return str(r, &p.Name)
		case "aliases":
			return strs(r, &p.Aliases)
		case "category":
			return str(r, &p.Category)
		case "price":
			return num(r, &p.Price)
		case "list_price":
			return num(r, &p.ListPrice)
		case "stock":
			return integer(r, &p.Stock)
		case "description":
			return str(r, &p.Description)
		case "attributes":
			return r.Object(func(k string) error {
				v, err := r.String()
				if p.Attributes == nil {
					p.Attributes = map[string]string{}
				}
				p.Attributes[k] = v
				return err
			})
		case "variants":
			return r.Array(func() error {
				var v Variant
				err := r.Object(func(k string) error {
					switch k {
					case "name":
						return str(r, &v.Name)
					case "stock":
						return integer(r, &v.Stock)
					}
					return r.Skip()
				})
				p.Variants = append(p.Variants, v)
				return err
			})
		case "size_chart":
			return r.Array(func() error {
				var row SizeRow
				err := r.Object(func(k string) error {
					switch k {
					case "size":
						return str(r, &row.Size)
					case "min_height_cm":
						return integer(r, &row.MinHeight)
					case "max_height_cm":
						return integer(r, &row.MaxHeight)
					case "min_weight_kg":
						return integer(r, &row.MinWeight)
					case "max_weight_kg":
						return integer(r, &row.MaxWeight)
					}
					return r.Skip()
				})
				p.SizeChart = append(p.SizeChart, row)
				return err
			})
		case "shipping":
			if r.Null() {
				return nil
			}
			sh := &Shipping{}
			p.Shipping = sh
			return r.Object(func(k string) error {
				switch k {
				case "days":
					return integer(r, &sh.Days)
				case "fee":
					return num(r, &sh.Fee)
				case "return_days":
					return integer(r, &sh.ReturnDays)
				}
				return r.Skip()
			})
		}
		return r.Skip()
	})
	return p, err
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
			return num(r, &c.Amount)
		case "percent":
			return num(r, &c.Percent)
		case "min_spend":
			return num(r, &c.MinSpend)
		case "products":
			return strs(r, &c.Products)
		case "new_viewers_only":
			b, err := r.Bool()
			c.NewViewersOnly = b
			return err
		case "remaining":
			return integer(r, &c.Remaining)
		case "starts":
			return tm(r, &c.Starts)
		case "ends":
			return tm(r, &c.Ends)
		}
		return r.Skip()
	})
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
		case "products":
			return strs(r, &p.Products)
		case "price":
			return num(r, &p.Price)
		case "percent":
			return num(r, &p.Percent)
		case "starts":
			return tm(r, &p.Starts)
		case "ends":
			return tm(r, &p.Ends)
		case "text":
			return str(r, &p.Text)
		}
		return r.Skip()
	})
	return p, err
}

// AppendJSON appends the product's JSON (the host's catalog format) to b.
func (p Product) AppendJSON(b []byte) []byte {
	var w jsonx.Writer
	p.write(&w)
	return append(b, w.Bytes()...)
}

func (p Product) write(w *jsonx.Writer) {
	w.ObjectStart()
	w.Key("id")
	w.String(p.ID)
	w.Key("name")
	w.String(p.Name)
	if len(p.Aliases) > 0 {
		w.Key("aliases")
		w.ArrayStart()
		for _, a := range p.Aliases {
			w.String(a)
		}
		w.ArrayEnd()
	}
	if p.Category != "" {
		w.Key("category")
		w.String(p.Category)
	}
	w.Key("price")
	w.Float(p.Price)
	if p.ListPrice != 0 {
		w.Key("list_price")
		w.Float(p.ListPrice)
	}
	w.Key("stock")
	w.Int(int64(p.Stock))
	if p.Description != "" {
		w.Key("description")
		w.String(p.Description)
	}
	w.ObjectEnd()
}
