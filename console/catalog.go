package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness/catalog"
)

// maxCatalogBytes bounds an imported catalog file.
const maxCatalogBytes = 2 << 20

// catalogRoutes serves a stream's catalog and the catalog layout:
//
//	GET  /api/catalog/schema                   the catalog's JSON Schema (application/schema+json)
//	GET  /api/streams/:id/catalog              {"revision", "catalog_revision", "catalog"}; ?format=csv downloads the products as CSV
//	POST /api/streams/:id/catalog?revision=N   import a CSV (text/csv) or JSON (application/json) file
//
// The catalog is package harness/catalog's document, version 2; a stored
// or imported version 1 document reads as version 2. An import is all or
// nothing: a file with any problem stores nothing and answers 422 with
// every problem found (section, row, column, message; at most 100). A CSV
// replaces the products and keeps the coupons and promotions (dropping
// references to products the file no longer has, with a warning); a JSON
// file replaces the whole catalog. ?dry_run=true checks the file and
// reports what would be stored. The revision is the stream revision the
// merchant looked at: a stream changed since then answers 409 and nothing
// is stored. Files over 2 MiB answer 413.
func (s *Server) catalogRoutes(api fiber.Router) {
	api.Get("/catalog/schema", s.catalogSchema)
	g := api.Group("/streams/:id/catalog", requireRole(store.RoleOperator, store.RoleMerchant))
	g.Get("/", s.getCatalog)
	g.Post("/", s.importCatalog)
	s.catalogEditRoutes(g)
}

// catalogSchema serves the JSON Schema that imports are validated against.
func (s *Server) catalogSchema(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/schema+json")
	return c.Send(catalog.Schema())
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
		return c.JSON(fiber.Map{"revision": st.Revision, "catalog_revision": st.CatalogRevision, "catalog": cat})
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

// emptyCatalog reports whether a stored catalog value holds no catalog.
func emptyCatalog(raw []byte) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "" || s == "null" || s == "{}"
}

// noCurrency is ISO 4217's code for "no currency": what a catalog
// document read without its stream is in when it states no currency
// (documents stored before version 2 could leave it to the stream).
const noCurrency = "XXX"

// parseStreamCatalog reads a stream's catalog document in any version
// catalog.Parse reads; nothing, null or {} is an empty catalog. A
// document without a currency is in the stream's currency (when given):
// the stream states it.
func parseStreamCatalog(raw []byte, currency string) (*catalog.Catalog, error) {
	if emptyCatalog(raw) {
		return &catalog.Catalog{Currency: currency, Products: []catalog.Product{}}, nil
	}
	if currency != "" {
		raw, _ = withCurrency(raw, currency)
	}
	return catalog.Parse(raw)
}

// storedCatalog decodes a stream's stored catalog (a stored version 1
// catalog reads as version 2).
func storedCatalog(st *store.Stream) (*catalog.Catalog, error) {
	cat, err := parseStreamCatalog(st.Catalog, st.Currency)
	if err != nil {
		return nil, fmt.Errorf("stream %s: stored catalog: %w", st.ID, err)
	}
	return cat, nil
}

// withCurrency returns a catalog document that states no currency with
// currency stated first, and the number of characters it inserted on the
// line of the opening brace, so that problem columns can be mapped back.
// Other documents are returned as they are.
func withCurrency(doc []byte, currency string) ([]byte, int) {
	var members map[string]json.RawMessage
	if json.Unmarshal(doc, &members) != nil {
		return doc, 0
	}
	if _, ok := members["currency"]; ok {
		return doc, 0
	}
	brace := bytes.IndexByte(doc, '{')
	insert := `"currency":` + strconv.Quote(currency)
	if len(members) > 0 {
		insert += ","
	}
	out := make([]byte, 0, len(doc)+len(insert))
	out = append(append(append(out, doc[:brace+1]...), insert...), doc[brace+1:]...)
	return out, utf8.RuneCountInString(insert)
}

// catalogImportError is the 422 answer of an import with problems.
type catalogImportError struct {
	Error    string           `json:"error"`
	Code     string           `json:"code"`
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
	var next *catalog.Catalog
	var probs problemList
	var warnings []string
	format := strings.ToLower(strings.TrimSpace(strings.Split(string(c.Request().Header.ContentType()), ";")[0]))
	switch format {
	case "text/csv", "application/csv", "text/plain":
		next, warnings, probs = importCatalogCSV(body, current)
	case "application/json":
		next, probs = parseCatalogJSON(body, st.Currency)
	default:
		return fieldError(fiber.StatusUnsupportedMediaType, "content_type", "send the file as text/csv or application/json")
	}
	if len(probs) > 0 {
		msg := fmt.Sprintf("the catalog has %d problem(s); nothing was stored. First: %s", len(probs), probs[0])
		if probs.full() {
			msg = fmt.Sprintf("the catalog has at least %d problems; nothing was stored. First: %s", len(probs), probs[0])
		}
		return c.Status(fiber.StatusUnprocessableEntity).JSON(catalogImportError{Error: msg, Code: codeCatalogInvalid, Field: "file", Problems: probs})
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return err
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

// importCatalogCSV reads a CSV's products into the current catalog,
// keeping its coupons and promotions. A coupon or promotion that names a
// product the file drops keeps the products it still has, or is dropped
// when none is left (a bundle needs two); each change is a warning.
func importCatalogCSV(data []byte, current *catalog.Catalog) (*catalog.Catalog, []string, problemList) {
	products, rows, probs := parseCatalogCSV(data)
	if len(products) == 0 {
		return nil, nil, probs
	}
	next := &catalog.Catalog{Stream: current.Stream, Currency: current.Currency, Products: products}
	ids := map[string]bool{}
	for _, p := range products {
		ids[p.ID] = true
	}
	var warnings []string
	kept := func(what, id string, refs []string, least int) ([]string, bool) {
		var out []string
		for _, ref := range refs {
			if ids[ref] {
				out = append(out, ref)
			} else {
				warnings = append(warnings, fmt.Sprintf("%s %s names product %s, which the catalog no longer has", what, id, ref))
			}
		}
		if len(out) == len(refs) {
			return refs, true
		}
		if len(out) < least {
			warnings = append(warnings, fmt.Sprintf("%s %s is dropped: it names no product the catalog still has", what, id))
			return nil, false
		}
		return out, true
	}
	for _, cp := range current.Coupons {
		// A coupon limited to products must not become one for every
		// product when they are gone.
		if refs, ok := kept("coupon", cp.ID, cp.Products, min(1, len(cp.Products))); ok {
			cp.Products = refs
			next.Coupons = append(next.Coupons, cp)
		}
	}
	for _, pr := range current.Promotions {
		least := 1
		if pr.Kind == catalog.PromoBundle {
			least = 2
		}
		if refs, ok := kept("promotion", pr.ID, pr.Products, least); ok {
			pr.Products = refs
			next.Promotions = append(next.Promotions, pr)
		}
	}
	// The rules that relate fields are the catalog's own: check the whole
	// catalog, and name each problem's CSV row and column, except where a
	// cell did not read (its field is unset, and already reported).
	if _, err := reparse(next); err != nil {
		unread := map[[2]string]bool{}
		for _, p := range probs {
			unread[[2]string{strconv.Itoa(p.Row), p.Column}] = true
		}
		for _, p := range csvProblems(err, rows) {
			if !unread[[2]string{strconv.Itoa(p.Row), p.Column}] && !probs.full() {
				probs = append(probs, p)
			}
		}
	}
	if len(probs) > 0 {
		// Products in row order; the coupons and promotions after them.
		slices.SortStableFunc(probs, func(a, b catalogProblem) int {
			if pa, pb := a.Section == "products", b.Section == "products"; pa != pb {
				return map[bool]int{true: -1, false: 1}[pa]
			}
			return a.Row - b.Row
		})
		return nil, nil, probs
	}
	return next, warnings, nil
}

// reparse checks a catalog built in memory as catalog.Parse checks a
// document.
func reparse(c *catalog.Catalog) (*catalog.Catalog, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return catalog.Parse(raw)
}

// parseCatalogJSON reads a whole catalog document (version 2, or version
// 1, which is upgraded) and reports every problem: the list position as
// the row (products 1 is the first product), the field inside the entry
// as the column, and the line and column in the file. A document without
// a currency is in the stream's currency.
func parseCatalogJSON(data []byte, currency string) (*catalog.Catalog, problemList) {
	doc, inserted := withCurrency(data, currency)
	braceLine := 1 + bytes.Count(data[:max(bytes.IndexByte(data, '{'), 0)], []byte("\n"))
	braceColumn := 0
	if i := bytes.IndexByte(data, '{'); i >= 0 {
		braceColumn = utf8.RuneCount(data[bytes.LastIndexByte(data[:i], '\n')+1:i]) + 1
	}
	c, err := catalog.Parse(doc)
	if err == nil {
		return c, nil
	}
	var ps *catalog.Problems
	if !errors.As(err, &ps) {
		var probs problemList
		probs.add("file", 0, "", "catalog_unreadable", []string{err.Error()}, "%v", err)
		return nil, probs
	}
	var probs problemList
	for _, p := range ps.List {
		if inserted > 0 && p.Line == braceLine && p.Column > braceColumn {
			p.Column = max(p.Column-inserted, braceColumn+1)
		}
		section, row, column := jsonPlace(p.Path)
		probs.addCatalog(p, section, row, column, p.Line, p.Column, p.Message, func(i int) int { return i + 1 })
	}
	if ps.Omitted > 0 {
		probs.add("file", 0, "", "more_problems", []string{strconv.Itoa(ps.Omitted)}, "and %d more problems", ps.Omitted)
	}
	return nil, probs
}

// listPath splits "products[3].shipping.fee" into the list, the index and
// the rest.
var listPath = regexp.MustCompile(`^(products|coupons|promotions)\[(\d+)\](?:\.(.*))?$`)

// jsonPlace turns a catalog.Problem path into the section, 1-based row and
// column of a catalogProblem: "products[3].shipping.fee" is products, row
// 4, column "shipping.fee"; a top-level field is section file with the
// field as its column.
func jsonPlace(path string) (section string, row int, column string) {
	if m := listPath.FindStringSubmatch(path); m != nil {
		i, _ := strconv.Atoi(m[2])
		return m[1], i + 1, m[3]
	}
	return "file", 0, path
}
