package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// HostEnv is what the host functions reach during one call: the stream
// the call serves. The runtime implements it per stream; LocalEnv is a
// complete in-memory implementation for tests, the CLI and simulations.
// Methods are called from the goroutine running the plugin and must not
// block for long: the call's deadline keeps running.
type HostEnv interface {
	// CatalogLookup answers a catalog query (see CatalogQuery) with a
	// CatalogResult, both JSON. Backs livehat_catalog_lookup.
	CatalogLookup(ctx context.Context, query []byte) ([]byte, error)
	// KVGet, KVSet, KVDelete and KVUsage are a key-value store scoped by
	// plugin name (scope); the host enforces the manifest's quota with
	// KVUsage, the total bytes of keys and values in the scope. They back
	// Extism's var_get and var_set.
	KVGet(ctx context.Context, scope, key string) ([]byte, bool, error)
	KVSet(ctx context.Context, scope, key string, value []byte) error
	KVDelete(ctx context.Context, scope, key string) error
	KVUsage(ctx context.Context, scope string) (int, error)
	// Log receives the plugin's log lines (scope is the plugin name).
	Log(ctx context.Context, level slog.Level, scope, msg string)
	// Now is the stream's wall clock, which plugins with the clock
	// permission see.
	Now() time.Time
}

// Catalog is a stream's sellable world: products, coupons and promotions.
// It is the data behind livehat_catalog_lookup; its JSON form is the
// catalog file format of examples and the CLI.
type Catalog struct {
	Stream     string      `json:"stream"`
	Currency   string      `json:"currency"`
	Products   []Product   `json:"products"`
	Coupons    []Coupon    `json:"coupons,omitempty"`
	Promotions []Promotion `json:"promotions,omitempty"`
}

// Product is one item of a catalog. Prices are in the catalog currency.
type Product struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Aliases     []string          `json:"aliases,omitempty"`
	Category    string            `json:"category,omitempty"`
	Price       float64           `json:"price"`
	ListPrice   float64           `json:"list_price,omitempty"`
	Stock       int               `json:"stock"`
	Description string            `json:"description,omitempty"`
	Attributes  map[string]string `json:"attributes,omitempty"`
	// Variants are sizes or colors with their own stock; Stock is then
	// their sum.
	Variants []Variant `json:"variants,omitempty"`
	// SizeChart maps body measures to sizes (apparel).
	SizeChart []SizeRow `json:"size_chart,omitempty"`
	// Shipping is the item's delivery and return policy.
	Shipping *Shipping `json:"shipping,omitempty"`
}

// Variant is a size or color of a product.
type Variant struct {
	Name  string `json:"name"`
	Stock int    `json:"stock"`
}

// SizeRow recommends Size for heights and weights inside its ranges.
type SizeRow struct {
	Size      string `json:"size"`
	MinHeight int    `json:"min_height_cm"`
	MaxHeight int    `json:"max_height_cm"`
	MinWeight int    `json:"min_weight_kg"`
	MaxWeight int    `json:"max_weight_kg"`
}

// Shipping is a product's delivery and return policy.
type Shipping struct {
	// Days is the promised time from order to dispatch.
	Days int `json:"days"`
	// Fee is the shipping fee; zero means free shipping.
	Fee float64 `json:"fee"`
	// ReturnDays is the no-reason return window; zero means no returns.
	ReturnDays int `json:"return_days"`
}

// Coupon is a coupon of the stream's strategy.
type Coupon struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Amount is a fixed discount; Percent a percentage off (0-100).
	Amount  float64 `json:"amount,omitempty"`
	Percent float64 `json:"percent,omitempty"`
	// MinSpend is the least order total the coupon applies to.
	MinSpend float64 `json:"min_spend,omitempty"`
	// Products limits the coupon to these product ids; empty means all.
	Products []string `json:"products,omitempty"`
	// NewViewersOnly limits it to viewers without a previous order.
	NewViewersOnly bool      `json:"new_viewers_only,omitempty"`
	Remaining      int       `json:"remaining"`
	Starts         time.Time `json:"starts,omitzero"`
	Ends           time.Time `json:"ends,omitzero"`
}

// Promotion is a timed offer of the stream's strategy.
type Promotion struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Products []string  `json:"products,omitempty"`
	Price    float64   `json:"price,omitempty"`
	Percent  float64   `json:"percent,omitempty"`
	Starts   time.Time `json:"starts"`
	Ends     time.Time `json:"ends"`
	Text     string    `json:"text,omitempty"`
}

// CatalogQuery is the JSON a plugin sends to livehat_catalog_lookup.
// Kind is "product" (match by ID, Name or alias, or every product whose
// name or alias occurs in Text), "coupons" or "promotions".
type CatalogQuery struct {
	Kind  string `json:"kind"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// CatalogResult is the JSON livehat_catalog_lookup returns.
type CatalogResult struct {
	Stream     string      `json:"stream"`
	Currency   string      `json:"currency"`
	Products   []Product   `json:"products,omitempty"`
	Coupons    []Coupon    `json:"coupons,omitempty"`
	Promotions []Promotion `json:"promotions,omitempty"`
}

// ParseCatalog decodes a catalog file strictly and checks that ids are
// unique and prices are not negative.
func ParseCatalog(data []byte) (*Catalog, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Catalog
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	seen := map[string]bool{}
	for _, p := range c.Products {
		if p.ID == "" || seen[p.ID] {
			return nil, fmt.Errorf("catalog: product id %q is empty or repeated", p.ID)
		}
		seen[p.ID] = true
		if p.Price < 0 || p.ListPrice < 0 || p.Stock < 0 {
			return nil, fmt.Errorf("catalog: product %q has a negative price or stock", p.ID)
		}
	}
	return &c, nil
}

// Lookup answers a CatalogQuery (JSON) with a CatalogResult (JSON).
func (c *Catalog) Lookup(query []byte) ([]byte, error) {
	var q CatalogQuery
	if err := json.Unmarshal(query, &q); err != nil {
		return nil, fmt.Errorf("catalog query: %w", err)
	}
	res := CatalogResult{Stream: c.Stream, Currency: c.Currency}
	switch q.Kind {
	case "product", "":
		res.Products = c.matchProducts(q)
	case "coupons":
		res.Coupons = c.Coupons
	case "promotions":
		res.Promotions = c.Promotions
	default:
		return nil, fmt.Errorf("catalog query: unknown kind %q (want product, coupons or promotions)", q.Kind)
	}
	return json.Marshal(res)
}

func (c *Catalog) matchProducts(q CatalogQuery) []Product {
	limit := q.Limit
	if limit <= 0 || limit > 20 {
		limit = 20
	}
	var out []Product
	switch {
	case q.ID != "":
		for _, p := range c.Products {
			if p.ID == q.ID {
				out = append(out, p)
			}
		}
	case q.Name != "":
		name := strings.ToLower(strings.TrimSpace(q.Name))
		for _, p := range c.Products {
			if productNames(p, func(n string) bool { return n == name }) > 0 {
				out = append(out, p)
			}
		}
	case q.Text != "":
		text := strings.ToLower(q.Text)
		type hit struct {
			p   Product
			len int
		}
		var hits []hit
		for _, p := range c.Products {
			if l := productNames(p, func(n string) bool { return strings.Contains(text, n) }); l > 0 {
				hits = append(hits, hit{p, l})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].len > hits[j].len })
		for _, h := range hits {
			out = append(out, h.p)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// productNames returns the length of the longest name or alias of p that
// match accepts (lower-cased), or 0.
func productNames(p Product, match func(string) bool) int {
	best := 0
	for _, n := range append([]string{p.Name}, p.Aliases...) {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" && match(n) && len(n) > best {
			best = len(n)
		}
	}
	return best
}

// LocalEnv is a HostEnv over a catalog and an in-memory key-value store.
// It is safe for concurrent use.
type LocalEnv struct {
	catalog *Catalog
	logger  *slog.Logger
	now     func() time.Time

	mu sync.Mutex
	kv map[string]map[string][]byte
}

// NewLocalEnv returns a LocalEnv serving catalog, logging to logger (nil
// discards) and telling time with now (nil means time.Now).
func NewLocalEnv(catalog *Catalog, logger *slog.Logger, now func() time.Time) *LocalEnv {
	if catalog == nil {
		catalog = &Catalog{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &LocalEnv{catalog: catalog, logger: logger, now: now, kv: map[string]map[string][]byte{}}
}

// CatalogLookup implements HostEnv.
func (e *LocalEnv) CatalogLookup(_ context.Context, query []byte) ([]byte, error) {
	return e.catalog.Lookup(query)
}

// KVGet implements HostEnv.
func (e *LocalEnv) KVGet(_ context.Context, scope, key string) ([]byte, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.kv[scope][key]
	return bytes.Clone(v), ok, nil
}

// KVSet implements HostEnv.
func (e *LocalEnv) KVSet(_ context.Context, scope, key string, value []byte) error {
	if key == "" {
		return errors.New("kv: empty key")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kv[scope] == nil {
		e.kv[scope] = map[string][]byte{}
	}
	e.kv[scope][key] = bytes.Clone(value)
	return nil
}

// KVDelete implements HostEnv.
func (e *LocalEnv) KVDelete(_ context.Context, scope, key string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.kv[scope], key)
	return nil
}

// KVUsage implements HostEnv.
func (e *LocalEnv) KVUsage(_ context.Context, scope string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for k, v := range e.kv[scope] {
		n += len(k) + len(v)
	}
	return n, nil
}

// Log implements HostEnv.
func (e *LocalEnv) Log(ctx context.Context, level slog.Level, scope, msg string) {
	e.logger.Log(ctx, level, msg, "plugin", scope)
}

// Now implements HostEnv.
func (e *LocalEnv) Now() time.Time { return e.now() }
