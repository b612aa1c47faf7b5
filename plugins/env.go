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
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/plugins/internal/engine"
)

// HostEnv is what the host functions reach during one call: the stream
// the call serves. The runtime implements it per stream; LocalEnv is a
// complete in-memory implementation for tests, the CLI and simulations.
// Its methods, declared once with the sandbox that calls them, are
// CatalogLookup (answers a CatalogQuery with a CatalogResult, both JSON),
// KVGet, KVSet, KVDelete and KVUsage (a key-value store scoped by plugin
// name, whose quota the host enforces with KVUsage), Log and Now (the
// stream's wall clock). They are called from the goroutine running the
// plugin and must not block for long: the call's deadline keeps running.
type HostEnv = engine.Env

// CatalogQuery is the JSON a plugin sends to livehat_catalog_lookup.
// Schema names the catalog layout the plugin reads and must be
// catalog.SchemaVersion: a plugin built before version 2 would read the
// answer wrongly (a stock or a return window that is not stated as 0), so
// its query is refused rather than answered. Kind is "product",
// "coupons" or "promotions". A product query matches by ID, else by Link
// (the cart position, "3号链接"), else by Name or alias (whole,
// case-insensitive), else every product whose name or alias occurs in
// Text, longest name first, else (none occurring) every product whose
// name or alias holds Text as a part of at least two characters that
// cuts no Latin word ("jigsaw" of "Jigsaw Puzzle"); Limit caps the
// products (20 when 0 or above 20). NamesOnly answers each product with
// its id, link, name and aliases only: a plugin that tells items apart by
// name need not decode whole products, which costs a WASM guest more than
// the rest of its lookup.
type CatalogQuery struct {
	Schema    string `json:"schema"`
	Kind      string `json:"kind"`
	ID        string `json:"id,omitempty"`
	Link      int    `json:"link,omitempty"`
	Name      string `json:"name,omitempty"`
	Text      string `json:"text,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	NamesOnly bool   `json:"names_only,omitempty"`
}

// CatalogResult is the JSON livehat_catalog_lookup returns: the parts of
// the catalog a query asked for, in the catalog's version 2 layout
// (Schema is catalog.SchemaVersion), so that what a merchant did not state
// stays absent for the plugin too.
type CatalogResult struct {
	Schema     string              `json:"schema"`
	Stream     string              `json:"stream"`
	Currency   string              `json:"currency"`
	Products   []catalog.Product   `json:"products,omitempty"`
	Coupons    []catalog.Coupon    `json:"coupons,omitempty"`
	Promotions []catalog.Promotion `json:"promotions,omitempty"`
}

// maxLookupProducts caps the products of one answer.
const maxLookupProducts = 20

// LookupCatalog answers a CatalogQuery (JSON) over c with a CatalogResult
// (JSON). A nil c is an empty catalog.
func LookupCatalog(c *catalog.Catalog, query []byte) ([]byte, error) {
	if c == nil {
		c = &catalog.Catalog{}
	}
	var q CatalogQuery
	if err := json.Unmarshal(query, &q); err != nil {
		return nil, fmt.Errorf("catalog query: %w", err)
	}
	if q.Schema != catalog.SchemaVersion {
		return nil, fmt.Errorf("catalog query: schema is %q; this host answers in the catalog layout %q only: "+
			`send "schema": %q (the LiveHAT SDK does; rebuild a plugin built before it did)`, q.Schema, catalog.SchemaVersion, catalog.SchemaVersion)
	}
	res := CatalogResult{Schema: catalog.SchemaVersion, Stream: c.Stream, Currency: c.Currency}
	switch q.Kind {
	case "product", "":
		res.Products = matchProducts(c, q)
		if q.NamesOnly {
			return json.Marshal(productNamesOf(res))
		}
	case "coupons":
		res.Coupons = c.Coupons
	case "promotions":
		res.Promotions = c.Promotions
	default:
		return nil, fmt.Errorf("catalog query: unknown kind %q (want product, coupons or promotions)", q.Kind)
	}
	return json.Marshal(res)
}

// namedProduct is a product as a names-only query answers it.
type namedProduct struct {
	ID      string   `json:"id"`
	Link    int      `json:"link,omitempty"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitzero"`
}

// namesResult is a CatalogResult of a names-only query.
type namesResult struct {
	Schema   string         `json:"schema"`
	Stream   string         `json:"stream"`
	Currency string         `json:"currency"`
	Products []namedProduct `json:"products,omitempty"`
}

// productNamesOf keeps the naming fields of res's products.
func productNamesOf(res CatalogResult) namesResult {
	out := namesResult{Schema: res.Schema, Stream: res.Stream, Currency: res.Currency}
	for _, p := range res.Products {
		out.Products = append(out.Products, namedProduct{ID: p.ID, Link: p.Link, Name: p.Name, Aliases: p.Aliases})
	}
	return out
}

func matchProducts(c *catalog.Catalog, q CatalogQuery) []catalog.Product {
	limit := q.Limit
	if limit <= 0 || limit > maxLookupProducts {
		limit = maxLookupProducts
	}
	var out []catalog.Product
	switch {
	case q.ID != "":
		if p := c.Product(q.ID); p != nil {
			out = append(out, *p)
		}
	case q.Link > 0:
		if p := c.ByLink(q.Link); p != nil {
			out = append(out, *p)
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
			p   catalog.Product
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
		if len(out) == 0 {
			out = partOfName(c, text)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// partOfName returns the products whose name or alias holds text as a
// part — "jigsaw" of "Jigsaw Puzzle", "珍珠耳环" of "喵屿耳夹式珍珠耳环":
// a viewer names an item by a piece of it. The part is whole words in
// Latin script ("ring" is no part of "earrings") and at least two
// characters, so that a lone character finds nothing.
func partOfName(c *catalog.Catalog, text string) []catalog.Product {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) < 2 {
		return nil
	}
	var out []catalog.Product
	for _, p := range c.Products {
		if productNames(p, func(n string) bool { return NamePart(n, text) }) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// NamePart reports whether part occurs in name without cutting a Latin
// word or number: how a catalog lookup's text finds an item by a piece of
// its name ("jigsaw" of "jigsaw puzzle", not "ring" of "earrings").
func NamePart(name, part string) bool {
	for from := 0; from < len(name); {
		i := strings.Index(name[from:], part)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(name[:i])
		after, _ := utf8.DecodeRuneInString(name[i+len(part):])
		first, _ := utf8.DecodeRuneInString(part)
		last, _ := utf8.DecodeLastRuneInString(part)
		if !(latinWord(before) && latinWord(first)) && !(latinWord(after) && latinWord(last)) {
			return true
		}
		from = i + 1
	}
	return false
}

// latinWord reports whether r is a letter or digit of a script written
// with spaces between words.
func latinWord(r rune) bool { return r < 0x2E80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// productNames returns the length of the longest name or alias of p that
// match accepts (lower-cased), or 0.
func productNames(p catalog.Product, match func(string) bool) int {
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
	catalog *catalog.Catalog
	logger  *slog.Logger
	now     func() time.Time

	mu sync.Mutex
	kv map[string]map[string][]byte
}

// NewLocalEnv returns a LocalEnv serving cat (nil: an empty catalog),
// logging to logger (nil discards) and telling time with now (nil means
// time.Now).
func NewLocalEnv(cat *catalog.Catalog, logger *slog.Logger, now func() time.Time) *LocalEnv {
	if cat == nil {
		cat = &catalog.Catalog{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &LocalEnv{catalog: cat, logger: logger, now: now, kv: map[string]map[string][]byte{}}
}

// CatalogLookup implements HostEnv.
func (e *LocalEnv) CatalogLookup(_ context.Context, query []byte) ([]byte, error) {
	return LookupCatalog(e.catalog, query)
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
