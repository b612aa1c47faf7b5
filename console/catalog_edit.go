package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness/catalog"
)

// The catalog editor (/catalog?stream=ID) edits a stream's catalog in the
// page and saves it whole, checked against the catalog revision it
// loaded:
//
//	PUT  /api/streams/:id/catalog         {"catalog_revision", "catalog"}: save; 409 catalog_conflict when stale
//	POST /api/streams/:id/catalog/check   a catalog document: {"problems"} found in it, as the merchant types
//	POST /api/streams/:id/catalog/parse   a CSV or JSON file: the catalog it makes, or 422 with every problem; stores nothing
//
// A problem is the import's: section, 1-based row in its list, column
// (the field inside the entry) and message.
func (s *Server) catalogEditRoutes(g fiber.Router) {
	g.Put("/", s.saveCatalog)
	g.Post("/check", s.checkCatalog)
	g.Post("/parse", s.parseCatalogFile)
}

// catalogSaveRequest is the body of a catalog save.
type catalogSaveRequest struct {
	// CatalogRevision is the catalog revision the edit was based on.
	CatalogRevision int64           `json:"catalog_revision"`
	Catalog         json.RawMessage `json:"catalog"`
}

// catalogConflict is the 409 answer of a stale save: the catalog as it is
// now, so that the page can merge the merchant's edit into it.
type catalogConflict struct {
	Error           string           `json:"error"`
	Code            string           `json:"code"`
	CatalogRevision int64            `json:"catalog_revision"`
	Catalog         *catalog.Catalog `json:"catalog"`
}

func (s *Server) saveCatalog(c *fiber.Ctx) error {
	var req catalogSaveRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", `want {"catalog_revision", "catalog"}: `+err.Error())
	}
	if req.CatalogRevision <= 0 {
		return badRequest("catalog_revision", "send the catalog revision your edit is based on")
	}
	if emptyCatalog(req.Catalog) {
		return badRequest("catalog", "send the whole catalog document")
	}
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	if st.CatalogRevision != req.CatalogRevision {
		return s.catalogConflict(c, st)
	}
	cat, probs := checkEditedCatalog(req.Catalog, st.Currency)
	if len(probs) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(catalogImportError{
			Error: fmt.Sprintf("the catalog has %d problem(s); nothing was stored. First: %s", len(probs), probs[0]),
			Code:  codeCatalogInvalid, Field: "catalog", Problems: probs})
	}
	raw, err := json.Marshal(cat)
	if err != nil {
		return err
	}
	updated, err := s.store.UpdateStreamCatalog(c.UserContext(), scopeOf(c), st.ID, raw, req.CatalogRevision)
	if errors.Is(err, store.ErrConflict) {
		// Changed between the read above and the write.
		if st, err = s.store.Stream(c.UserContext(), scopeOf(c), st.ID); err != nil {
			return storeError(err, "stream")
		}
		return s.catalogConflict(c, st)
	}
	if err != nil {
		return storeError(err, "stream")
	}
	return c.JSON(fiber.Map{"revision": updated.Revision, "catalog_revision": updated.CatalogRevision, "catalog": cat})
}

// catalogConflict answers a save based on a catalog revision that is no
// longer current.
func (s *Server) catalogConflict(c *fiber.Ctx, st *store.Stream) error {
	cur, err := storedCatalog(st)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusConflict).JSON(catalogConflict{
		Error: fmt.Sprintf("the catalog was changed by someone else since you loaded it (now revision %d): reload, or merge your edit into it and save again",
			st.CatalogRevision),
		Code: codeCatalogConflict, CatalogRevision: st.CatalogRevision, Catalog: cur})
}

// checkCatalog reports the problems of a catalog document being edited;
// it answers 200 with an empty list when there are none.
func (s *Server) checkCatalog(c *fiber.Ctx) error {
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	_, probs := checkEditedCatalog(c.Body(), st.Currency)
	return c.JSON(fiber.Map{"problems": orEmpty([]catalogProblem(probs))})
}

// parseCatalogFile reads an import file as the import would (a CSV
// replaces the stored catalog's products, a JSON file the whole catalog)
// and answers the catalog it makes, storing nothing: the editor shows it
// for review, or the problems by row and column.
func (s *Server) parseCatalogFile(c *fiber.Ctx) error {
	body := c.Body()
	if len(body) > maxCatalogBytes {
		return fieldError(fiber.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the file is %d bytes, over the %d-byte limit", len(body), maxCatalogBytes))
	}
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	current, err := storedCatalog(st)
	if err != nil {
		return err
	}
	var next *catalog.Catalog
	var probs problemList
	var warnings []string
	switch mediaType(c) {
	case "text/csv", "application/csv", "text/plain":
		next, warnings, probs = importCatalogCSV(body, current)
	case "application/json":
		next, probs = parseCatalogJSON(body, st.Currency)
	default:
		return fieldError(fiber.StatusUnsupportedMediaType, "content_type", "send the file as text/csv or application/json")
	}
	if len(probs) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(catalogImportError{
			Error: fmt.Sprintf("the file has %d problem(s); nothing was read into the editor. First: %s", len(probs), probs[0]),
			Code:  codeCatalogInvalid, Field: "file", Problems: probs})
	}
	return c.JSON(fiber.Map{"catalog": next, "warnings": orEmpty(warnings), "catalog_revision": st.CatalogRevision})
}

// mediaType is the request's content type without parameters, lower-cased.
func mediaType(c *fiber.Ctx) string {
	return strings.ToLower(strings.TrimSpace(strings.Split(string(c.Request().Header.ContentType()), ";")[0]))
}

// checkEditedCatalog parses a catalog document from the editor. Its
// problems name the section, the entry's 1-based row and the field; the
// place in the text is left out, since the editor sends no file.
func checkEditedCatalog(doc []byte, currency string) (*catalog.Catalog, problemList) {
	cat, err := parseStreamCatalog(doc, currency)
	if err == nil {
		return cat, nil
	}
	var probs problemList
	var ps *catalog.Problems
	if !errors.As(err, &ps) {
		probs.add("file", 0, "", "catalog_unreadable", []string{err.Error()}, "%v", err)
		return nil, probs
	}
	for _, p := range ps.List {
		section, row, column := jsonPlace(p.Path)
		probs.addCatalog(p, section, row, column, 0, 0, p.Message, func(i int) int { return i + 1 })
	}
	if ps.Omitted > 0 {
		probs.add("file", 0, "", "more_problems", []string{strconv.Itoa(ps.Omitted)}, "and %d more problems", ps.Omitted)
	}
	return nil, probs
}
