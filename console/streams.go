package console

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/runtime"
)

func (s *Server) streamRoutes(api fiber.Router) {
	api.Get("/merchants", s.listMerchants)
	api.Post("/merchants", requireRole(store.RoleOperator), s.createMerchant)
	st := api.Group("/streams", requireRole(store.RoleOperator, store.RoleMerchant))
	st.Get("/", s.listStreams)
	st.Post("/", s.createStream)
	st.Get("/:id", s.getStream)
	st.Put("/:id", s.updateStream)
	st.Delete("/:id", s.deleteStream)
	st.Get("/:id/harness-requests", s.listStreamHarnessRequests)
	st.Post("/:id/harness-requests", s.requestHarness)
	api.Get("/harness-requests", requireRole(store.RoleOperator, store.RoleMerchant), s.listHarnessRequests)
}

func (s *Server) listMerchants(c *fiber.Ctx) error {
	list, err := s.store.Merchants(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) createMerchant(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"name\"}: "+err.Error())
	}
	if strings.TrimSpace(req.Name) == "" {
		return badRequest("name", "a merchant needs a name")
	}
	m, err := s.store.CreateMerchant(c.UserContext(), scopeOf(c), req.Name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(m)
}

// streamRequest is the editable part of a stream. Revision is required on
// update: it is the revision the edit was based on.
type streamRequest struct {
	MerchantID     string          `json:"merchant_id"`
	Name           string          `json:"name"`
	Persona        string          `json:"persona"`
	Strategy       json.RawMessage `json:"strategy"`
	Catalog        json.RawMessage `json:"catalog"`
	BannedClaims   []string        `json:"banned_claims"`
	Currency       string          `json:"currency"`
	HarnessVersion string          `json:"harness_version"`
	OnAir          bool            `json:"on_air"`
	Revision       int64           `json:"revision"`
}

// check validates the request's fields, naming the first one at fault,
// and keeps the catalog as a version 2 document (a version 1 one is
// upgraded; one without a currency takes the stream's).
func (r *streamRequest) check() error {
	if strings.TrimSpace(r.Name) == "" {
		return badRequest("name", "a stream needs a name")
	}
	if len(r.Strategy) > 0 && string(r.Strategy) != "null" {
		var st runtime.Strategy
		if err := decodeStrict(r.Strategy, &st); err != nil {
			return badRequest("strategy", err.Error())
		}
		if err := st.Validate(); err != nil {
			return badRequest("strategy", err.Error())
		}
	}
	if r.Currency != "" && len(r.Currency) != 3 {
		return badRequest("currency", "want an ISO 4217 code such as CNY or USD")
	}
	if !emptyCatalog(r.Catalog) {
		cat, err := parseStreamCatalog(r.Catalog, strings.ToUpper(r.Currency))
		if err != nil {
			return badRequest("catalog", err.Error())
		}
		if r.Catalog, err = json.Marshal(cat); err != nil {
			return badRequest("catalog", err.Error())
		}
	}
	for i, b := range r.BannedClaims {
		if strings.TrimSpace(b) == "" {
			return badRequest("banned_claims", fmt.Sprintf("entry %d is empty", i))
		}
	}
	return nil
}

func (r *streamRequest) stream() store.Stream {
	return store.Stream{MerchantID: r.MerchantID, Name: strings.TrimSpace(r.Name), Persona: r.Persona, Strategy: r.Strategy,
		Catalog: r.Catalog, BannedClaims: r.BannedClaims, Currency: strings.ToUpper(r.Currency),
		HarnessVersion: r.HarnessVersion, OnAir: r.OnAir, Revision: r.Revision}
}

func (s *Server) listStreams(c *fiber.Ctx) error {
	list, err := s.store.Streams(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) createStream(c *fiber.Ctx) error {
	var req streamRequest
	var err error
	if err = decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", err.Error())
	}
	sc := scopeOf(c)
	if req.MerchantID == "" && sc.Role == store.RoleMerchant {
		req.MerchantID = sc.MerchantID
	}
	if req.MerchantID == "" {
		return badRequest("merchant_id", "merchant_id is required")
	}
	if err := req.check(); err != nil {
		return err
	}
	if req.HarnessVersion, err = s.harnessAtCreate(c, req.HarnessVersion); err != nil {
		return err
	}
	st, err := s.store.CreateStream(c.UserContext(), sc, req.stream())
	if err != nil {
		return storeError(err, "merchant")
	}
	if st.HarnessVersion != "" {
		if err := s.recordCreateRelease(c, st); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusCreated).JSON(st)
}

func (s *Server) getStream(c *fiber.Ctx) error {
	st, err := s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	return c.JSON(st)
}

func (s *Server) updateStream(c *fiber.Ctx) error {
	var req streamRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", err.Error())
	}
	if req.Revision <= 0 {
		return badRequest("revision", "send the revision your edit is based on")
	}
	if err := req.check(); err != nil {
		return err
	}
	if err := s.keepsHarness(c, c.Params("id"), req.HarnessVersion); err != nil {
		return err
	}
	st := req.stream()
	st.ID = c.Params("id")
	out, err := s.store.UpdateStream(c.UserContext(), scopeOf(c), st)
	if err != nil {
		return storeError(err, "stream")
	}
	return c.JSON(out)
}

func (s *Server) deleteStream(c *fiber.Ctx) error {
	if err := s.store.DeleteStream(c.UserContext(), scopeOf(c), c.Params("id")); err != nil {
		return storeError(err, "stream")
	}
	return c.SendStatus(fiber.StatusNoContent)
}
