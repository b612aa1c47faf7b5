package console

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
)

// releaseOnly is why a stream edit cannot bind a harness version.
const releaseOnly = "a stream's harness version changes only through a release (POST /api/releases, by an operator, " +
	"after a passed gate or with a recorded override); to ask for one, POST /api/streams/{id}/harness-requests"

// sameVersion reports whether ref (a full version or a prefix of 8+ hex
// digits, with or without "sha256:") names the full version.
func sameVersion(ref, full string) bool {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "sha256:")
	return ref == strings.TrimPrefix(full, "sha256:") || len(ref) >= 8 && strings.HasPrefix(strings.TrimPrefix(full, "sha256:"), ref)
}

// keepsHarness refuses a stream update that names another harness version
// than the stream runs: the edit form sends the version it shows, and
// binding is the releases' business.
func (s *Server) keepsHarness(c *fiber.Ctx, id, version string) error {
	if strings.TrimSpace(version) == "" {
		return nil
	}
	cur, err := s.store.Stream(c.UserContext(), scopeOf(c), id)
	if err != nil {
		return storeError(err, "stream")
	}
	if !sameVersion(version, cur.HarnessVersion) {
		return fieldError(fiber.StatusConflict, "harness_version", releaseOnly)
	}
	return nil
}

// harnessAtCreate is the version a new stream starts on: none, or for an
// operator the version named, which must be one the installed plugins
// serve; the binding is recorded as a release (recordCreateRelease).
// A merchant's new stream starts on none and asks for one.
func (s *Server) harnessAtCreate(c *fiber.Ctx, ref string) (string, error) {
	if strings.TrimSpace(ref) == "" {
		return "", nil
	}
	if scopeOf(c).Role != store.RoleOperator {
		return "", fieldError(fiber.StatusForbidden, "harness_version", "merchants do not bind versions: create the stream, then ask an operator "+
			"for one with POST /api/streams/{id}/harness-requests")
	}
	h, v, err := s.lookupVersion(c, "harness_version", ref)
	if err != nil {
		return "", err
	}
	if err := s.checkPlugins(c.UserContext(), scopeOf(c).OrgID, h); err != nil {
		if !isCompatibility(err) {
			return "", err
		}
		return "", fieldError(fiber.StatusConflict, "harness_version", "the installed plugins cannot serve "+h.ShortVersion()+": "+err.Error())
	}
	return v.Version, nil
}

// recordCreateRelease records an operator's binding of a new stream as
// the release it is, so that every version a stream ever ran has one.
func (s *Server) recordCreateRelease(c *fiber.Ctx, st *store.Stream) error {
	_, err := s.store.CreateHarnessRelease(c.UserContext(), scopeOf(c), store.HarnessRelease{Version: st.HarnessVersion,
		Streams:  []store.ReleaseStream{{StreamID: st.ID, Name: st.Name}},
		Override: "bound by the operator who created the stream"})
	return err
}

// harnessRequestBody is a merchant's request for a version.
type harnessRequestBody struct {
	Version string `json:"version"`
	Note    string `json:"note"`
}

// requestHarness records a request for the stream to run a version: it
// binds nothing, and operators see it in the compatibility view and the
// requests list; a release of that version to the stream grants it.
func (s *Server) requestHarness(c *fiber.Ctx) error {
	var req harnessRequestBody
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"version\", \"note\"}: "+err.Error())
	}
	if len(req.Note) > 2000 {
		return badRequest("note", "at most 2000 characters")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	st, err := s.store.Stream(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	h, v, err := s.lookupVersion(c, "version", req.Version)
	if err != nil {
		return err
	}
	if v.Version == st.HarnessVersion {
		return fieldError(fiber.StatusConflict, "version", "the stream runs "+h.ShortVersion()+" already")
	}
	r, err := s.store.CreateHarnessRequest(ctx, sc, store.HarnessRequest{StreamID: st.ID, Version: v.Version, Note: strings.TrimSpace(req.Note)})
	if err != nil {
		return storeError(err, "stream")
	}
	return c.Status(fiber.StatusCreated).JSON(r)
}

// listHarnessRequests lists the requests of the streams the caller sees.
func (s *Server) listHarnessRequests(c *fiber.Ctx) error {
	list, err := s.store.HarnessRequests(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

// listStreamHarnessRequests lists one stream's requests.
func (s *Server) listStreamHarnessRequests(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	st, err := s.store.Stream(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "stream")
	}
	list, err := s.store.HarnessRequests(ctx, sc)
	if err != nil {
		return err
	}
	out := []store.HarnessRequest{}
	for _, r := range list {
		if r.StreamID == st.ID {
			out = append(out, r)
		}
	}
	return c.JSON(out)
}
