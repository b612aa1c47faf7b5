package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/plugins"
)

// maxCatalogBytes bounds an imported catalog file.
const maxCatalogBytes = 2 << 20

// catalogRoutes serves a stream's catalog:
//
//	GET  /api/streams/:id/catalog              {"revision", "catalog"}; ?format=csv downloads the products as CSV
//	POST /api/streams/:id/catalog?revision=N   import a CSV (text/csv) or JSON (application/json) file
//
// An import is all or nothing: a file with any problem stores nothing and
// answers 422 with every problem found (row, column, message; at most 100).
// A CSV replaces the products and keeps the coupons and promotions; a
// JSON file (the plugins.Catalog shape) replaces the whole catalog.
// ?dry_run=true checks the file and reports what would be stored. The
// revision is the stream revision the merchant looked at: a stream changed
// since then answers 409 and nothing is stored. Files over 2 MiB answer 413.
func (s *Server) catalogRoutes(api fiber.Router) {
	g := api.Group("/streams/:id/catalog", requireRole(store.RoleOperator, store.RoleMerchant))
	g.Get("/", s.getCatalog)
	g.Post("/", s.importCatalog)
}

func (s *Server) getCatalog(c *fiber.Ctx) error {
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	cat, err := storedCatalog(st)
	if err != nil {
		return err
	}
	switch c.Query("format", "json") {
	case "json":
		return c.JSON(fiber.Map{"revision": st.Revision, "catalog": cat})
	case "csv":
		var b bytes.Buffer
		if err := writeCatalogCSV(&b, cat.Products); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="catalog-`+st.ID+`.csv"`)
		return c.Send(b.Bytes())
	}
	return badRequest("format", "want json or csv")
}

// storedCatalog decodes a stream's catalog; an empty one has no products.
func storedCatalog(st *store.Stream) (*plugins.Catalog, error) {
	cat := &plugins.Catalog{}
	if len(st.Catalog) > 0 && string(st.Catalog) != "{}" {
		if err := json.Unmarshal(st.Catalog, cat); err != nil {
			return nil, fmt.Errorf("stream %s: stored catalog: %w", st.ID, err)
		}
	}
	if cat.Currency == "" {
		cat.Currency = st.Currency
	}
	if cat.Products == nil {
		cat.Products = []plugins.Product{}
	}
	return cat, nil
}

// catalogImportError is the 422 answer of an import with problems.
type catalogImportError struct {
	Error    string           `json:"error"`
	Field    string           `json:"field"`
	Problems []catalogProblem `json:"problems"`
}

func (s *Server) importCatalog(c *fiber.Ctx) error {
	body := c.Body()
	if len(body) > maxCatalogBytes {
		return fieldError(fiber.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the file is %d bytes, over the %d-byte limit", len(body), maxCatalogBytes))
	}
	rev, err := strconv.ParseInt(c.Query("revision"), 10, 64)
	if err != nil || rev <= 0 {
		return badRequest("revision", "send ?revision= with the stream revision your import is based on")
	}
	dryRun := c.QueryBool("dry_run")
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	if st.Revision != rev {
		return storeError(store.ErrConflict, "stream")
	}
	current, err := storedCatalog(st)
	if err != nil {
		return err
	}
	var next *plugins.Catalog
	var probs problemList
	var warnings []string
	format := strings.ToLower(strings.TrimSpace(strings.Split(string(c.Request().Header.ContentType()), ";")[0]))
	switch format {
	case "text/csv", "application/csv", "text/plain":
		var products []plugins.Product
		products, probs = parseCatalogCSV(body)
		next = &plugins.Catalog{Stream: current.Stream, Currency: current.Currency, Products: products,
			Coupons: current.Coupons, Promotions: current.Promotions}
		warnings = danglingReferences(next)
	case "application/json":
		next, probs = parseCatalogJSON(body)
	default:
		return fieldError(fiber.StatusUnsupportedMediaType, "content_type", "send the file as text/csv or application/json")
	}
	if len(probs) > 0 {
		msg := fmt.Sprintf("the catalog has %d problem(s); nothing was stored. First: %s", len(probs), probs[0])
		if probs.full() {
			msg = fmt.Sprintf("the catalog has at least %d problems; nothing was stored. First: %s", len(probs), probs[0])
		}
		return c.Status(fiber.StatusUnprocessableEntity).JSON(catalogImportError{Error: msg, Field: "file", Problems: probs})
	}
	if next.Currency == "" {
		next.Currency = st.Currency
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if _, err := plugins.ParseCatalog(raw); err != nil {
		// Every rule of ParseCatalog is checked above with its row; this
		// is the plugins' own last word.
		return c.Status(fiber.StatusUnprocessableEntity).JSON(catalogImportError{Error: err.Error(), Field: "file",
			Problems: []catalogProblem{{Section: "file", Message: err.Error()}}})
	}
	summary := fiber.Map{"dry_run": dryRun, "products": len(next.Products), "coupons": len(next.Coupons),
		"promotions": len(next.Promotions), "warnings": orEmpty(warnings)}
	if dryRun {
		summary["revision"] = st.Revision
		return c.JSON(summary)
	}
	st.Catalog = raw
	updated, err := s.store.UpdateStream(c.UserContext(), scopeOf(c), *st)
	if err != nil {
		return storeError(err, "stream")
	}
	summary["revision"] = updated.Revision
	return c.JSON(summary)
}

// danglingReferences lists the coupons and promotions of a catalog that
// name products it no longer has.
func danglingReferences(c *plugins.Catalog) []string {
	ids := map[string]bool{}
	for _, p := range c.Products {
		ids[p.ID] = true
	}
	var out []string
	for _, cp := range c.Coupons {
		for _, id := range cp.Products {
			if !ids[id] {
				out = append(out, fmt.Sprintf("coupon %s names product %s, which the catalog no longer has", cp.ID, id))
			}
		}
	}
	for _, pr := range c.Promotions {
		for _, id := range pr.Products {
			if !ids[id] {
				out = append(out, fmt.Sprintf("promotion %s names product %s, which the catalog no longer has", pr.ID, id))
			}
		}
	}
	return out
}

// parseCatalogJSON reads a whole catalog (the plugins.Catalog shape) and
// checks every product, coupon and promotion; rows are 1-based positions
// in their lists.
func parseCatalogJSON(data []byte) (*plugins.Catalog, problemList) {
	var probs problemList
	// The lists are read entry by entry, so that a wrong value is
	// reported at its row.
	var shell struct {
		Stream     string            `json:"stream"`
		Currency   string            `json:"currency"`
		Products   []json.RawMessage `json:"products"`
		Coupons    []json.RawMessage `json:"coupons"`
		Promotions []json.RawMessage `json:"promotions"`
	}
	if err := decodeStrict(data, &shell); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			msg = fmt.Sprintf("line %d: %s", line, se.Error())
		case errors.As(err, &te):
			msg = fmt.Sprintf("%s: want %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		probs.add("file", 0, "", "%s", strings.TrimPrefix(msg, "json: "))
		return nil, probs
	}
	if len(shell.Products) > maxCatalogProducts {
		probs.add("products", 0, "", "%d products is more than %d", len(shell.Products), maxCatalogProducts)
		return nil, probs
	}
	c := plugins.Catalog{Stream: shell.Stream, Currency: shell.Currency}
	entry := func(section string, i int, raw json.RawMessage, v any) bool {
		err := decodeStrict(raw, v)
		if err == nil {
			return true
		}
		column, msg := "", strings.TrimPrefix(err.Error(), "json: ")
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			column = te.Field
			msg = fmt.Sprintf("want %s, got a JSON %s", te.Type, te.Value)
			if te.Value == "string" && (te.Type.Kind() == reflect.Float64 || te.Type.Kind() == reflect.Int) {
				msg = fmt.Sprintf("non-numeric %s (a JSON string where a number belongs)", te.Field)
			}
		}
		probs.add(section, i+1, column, "%s", msg)
		return false
	}
	for i, raw := range shell.Products {
		var p plugins.Product
		if entry("products", i, raw, &p) {
			c.Products = append(c.Products, p)
		}
	}
	for i, raw := range shell.Coupons {
		var cp plugins.Coupon
		if entry("coupons", i, raw, &cp) {
			c.Coupons = append(c.Coupons, cp)
		}
	}
	for i, raw := range shell.Promotions {
		var pr plugins.Promotion
		if entry("promotions", i, raw, &pr) {
			c.Promotions = append(c.Promotions, pr)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	ids := map[string]int{}
	for i, p := range c.Products {
		for _, cp := range checkProduct(p) {
			probs.add("products", i+1, cp.column, "%s", cp.message)
		}
		if p.ID != "" {
			if first, dup := ids[p.ID]; dup {
				probs.add("products", i+1, "id", "duplicate id %q (first at product %d)", p.ID, first)
			} else {
				ids[p.ID] = i + 1
			}
		}
	}
	if c.Currency != "" && len(c.Currency) != 3 {
		probs.add("file", 0, "currency", "want an ISO 4217 code such as CNY or USD")
	}
	seen := map[string]bool{}
	for i, cp := range c.Coupons {
		row := i + 1
		switch {
		case cp.ID == "":
			probs.add("coupons", row, "id", "missing id")
		case seen[cp.ID]:
			probs.add("coupons", row, "id", "duplicate coupon id %q", cp.ID)
		}
		seen[cp.ID] = true
		switch {
		case cp.Amount < 0:
			probs.add("coupons", row, "amount", "negative amount %v", cp.Amount)
		case cp.Percent < 0 || cp.Percent > 100:
			probs.add("coupons", row, "percent", "percent %v is not between 0 and 100", cp.Percent)
		case cp.Amount == 0 && cp.Percent == 0:
			probs.add("coupons", row, "amount", "a coupon needs an amount or a percent")
		}
		if cp.MinSpend < 0 {
			probs.add("coupons", row, "min_spend", "negative minimum spend %v", cp.MinSpend)
		}
		if cp.Remaining < 0 {
			probs.add("coupons", row, "remaining", "negative remaining %d", cp.Remaining)
		}
		if !cp.Starts.IsZero() && !cp.Ends.IsZero() && !cp.Ends.After(cp.Starts) {
			probs.add("coupons", row, "ends", "ends before it starts")
		}
		for _, id := range cp.Products {
			if _, ok := ids[id]; !ok {
				probs.add("coupons", row, "products", "unknown product %q", id)
			}
		}
	}
	seen = map[string]bool{}
	for i, pr := range c.Promotions {
		row := i + 1
		switch {
		case pr.ID == "":
			probs.add("promotions", row, "id", "missing id")
		case seen[pr.ID]:
			probs.add("promotions", row, "id", "duplicate promotion id %q", pr.ID)
		}
		seen[pr.ID] = true
		if pr.Price < 0 {
			probs.add("promotions", row, "price", "negative price %v", pr.Price)
		}
		if pr.Percent < 0 || pr.Percent > 100 {
			probs.add("promotions", row, "percent", "percent %v is not between 0 and 100", pr.Percent)
		}
		if !pr.Ends.After(pr.Starts) {
			probs.add("promotions", row, "ends", "ends before it starts (give both starts and ends)")
		}
		for _, id := range pr.Products {
			if _, ok := ids[id]; !ok {
				probs.add("promotions", row, "products", "unknown product %q", id)
			}
		}
	}
	return &c, probs
}
