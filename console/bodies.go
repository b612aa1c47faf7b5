package console

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Request bodies are read by the console, not by fasthttp before the
// handlers run (the server streams request bodies), so that each is bounded
// before it is buffered: the default limit applies before authentication,
// and the few routes that take larger bodies read them only once the
// caller is authenticated (issue #21, finding 3). The routes that differ
// from the default, in limit or in the media types they take, are listed
// here in one table.

// Default body limits.
const (
	// DefaultBodyLimit is Config.BodyLimit's default: JSON requests, live
	// message batches (maxIngestBody) and harness documents fit in it.
	DefaultBodyLimit = 1 << 20
	// uploadEnvelope is the room a multipart envelope takes around a
	// plugin package.
	uploadEnvelope = 64 << 10
	// DefaultUploadBodyLimit is Config.UploadBodyLimit's default: the
	// largest plugin package and its multipart envelope.
	DefaultUploadBodyLimit = maxPluginUpload + uploadEnvelope
)

// bodyRoute is a route whose request body differs from the default: a
// larger limit, read after authentication, or media types besides JSON.
type bodyRoute struct {
	method string
	path   *regexp.Regexp
	// limit is the route's body limit for a server's configuration; nil
	// for the server's BodyLimit.
	limit func(*Config) int
	// types are the media types the route takes besides JSON, checked on
	// cookie-authenticated requests; "*" takes any.
	types []string
}

func routePath(pattern string) *regexp.Regexp {
	// Fiber routes case-insensitively and ignores a trailing slash.
	return regexp.MustCompile(`(?i)^` + pattern + `/?$`)
}

func fixedLimit(n int) func(*Config) int { return func(*Config) int { return n } }

// catalogBodyLimit bounds the bodies that carry a catalog: the file of an
// import (maxCatalogBytes, which the handler names when it is over) or a
// stream with its catalog.
const catalogBodyLimit = maxCatalogBytes + 64<<10

// draftBodyLimit bounds a harness draft's body: its document, escaped
// into a JSON string, and the draft's other fields.
const draftBodyLimit = 2*maxDraftBytes + 64<<10

// csvTypes are the media types a catalog import takes as CSV.
var csvTypes = []string{"text/csv", "application/csv", "text/plain"}

// bodyRoutes are the routes whose bodies are not the default's.
var bodyRoutes = []bodyRoute{
	{method: fiber.MethodPost, path: routePath(`/api/plugins`), limit: func(c *Config) int { return c.UploadBodyLimit }, types: []string{"*"}},
	{method: fiber.MethodPost, path: routePath(`/api/streams`), limit: fixedLimit(catalogBodyLimit)},
	{method: fiber.MethodPut, path: routePath(`/api/streams/[^/]+`), limit: fixedLimit(catalogBodyLimit)},
	{method: fiber.MethodPost, path: routePath(`/api/streams/[^/]+/catalog(/parse)?`), limit: fixedLimit(catalogBodyLimit), types: csvTypes},
	{method: fiber.MethodPut, path: routePath(`/api/streams/[^/]+/catalog`), limit: fixedLimit(catalogBodyLimit)},
	{method: fiber.MethodPost, path: routePath(`/api/streams/[^/]+/catalog/check`), limit: fixedLimit(catalogBodyLimit)},
	{method: fiber.MethodPost, path: routePath(`/api/streams/[^/]+/events`), limit: fixedLimit(maxEventBody)},
	{method: fiber.MethodPost, path: routePath(`/api/harness-drafts`), limit: fixedLimit(draftBodyLimit)},
	{method: fiber.MethodPut, path: routePath(`/api/harness-drafts/[^/]+`), limit: fixedLimit(draftBodyLimit)},
	{method: fiber.MethodPost, path: routePath(`/api/harness/validate`), types: []string{"application/yaml", "application/x-yaml", "text/yaml", "yaml"}},
}

// bodyRouteOf is the table's entry for the request's route, or nil.
func bodyRouteOf(c *fiber.Ctx) *bodyRoute {
	path := c.Path()
	for i := range bodyRoutes {
		r := &bodyRoutes[i]
		if r.method == c.Method() && r.path.MatchString(path) {
			return r
		}
	}
	return nil
}

// bodyLimitOf is the body limit of the request's route, and whether that
// route reads its body only after authentication (a limit over the
// server's default).
func (s *Server) bodyLimitOf(c *fiber.Ctx) (limit int, afterAuth bool) {
	r := bodyRouteOf(c)
	if r == nil || r.limit == nil {
		return s.cfg.BodyLimit, false
	}
	if n := r.limit(&s.cfg); n > s.cfg.BodyLimit {
		return n, true
	}
	return s.cfg.BodyLimit, false
}

// limitBody runs first on every request. A declared length over the
// route's limit is refused at once, unread; a body within the default
// limit is read here, bounded, before authentication; a larger route's
// body waits for authenticate (readBody). A body left unread when the
// request ends would be read as the connection's next request, so the
// connection is closed instead.
func (s *Server) limitBody(c *fiber.Ctx) error {
	limit, afterAuth := s.bodyLimitOf(c)
	var err error
	switch {
	case c.Request().Header.ContentLength() > limit:
		err = bodyTooLarge(limit)
	case !afterAuth:
		err = readBody(c, limit)
	}
	if err == nil {
		err = c.Next()
	}
	if c.Request().IsBodyStream() {
		c.Context().SetConnectionClose()
	}
	return err
}

// readAuthenticatedBody reads the body of a route whose limit is over
// the default, once authenticate has accepted the caller.
func (s *Server) readAuthenticatedBody(c *fiber.Ctx) error {
	limit, _ := s.bodyLimitOf(c)
	return readBody(c, limit)
}

// readBody buffers the rest of a streamed request body, refusing it as
// soon as it is over limit bytes. The buffer is the request's own (not
// fasthttp's pool), so a large body is not kept after its request.
func readBody(c *fiber.Ctx, limit int) error {
	req := c.Request()
	if !req.IsBodyStream() {
		if len(req.Body()) > limit {
			return bodyTooLarge(limit)
		}
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(limit)+1))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fieldError(fiber.StatusRequestTimeout, "body", "the request body did not arrive in time")
		}
		return badRequest("body", "reading the request body: "+err.Error())
	}
	if len(body) > limit {
		return bodyTooLarge(limit)
	}
	req.SetBodyRaw(body)
	return nil
}

func bodyTooLarge(limit int) error {
	return fieldError(fiber.StatusRequestEntityTooLarge, "body",
		fmt.Sprintf("the request body is over this route's limit of %d bytes (%s)", limit, mib(limit)))
}

// checkBodyType refuses a body whose media type the route does not take:
// JSON, or one of the route's other types. Cookie-authenticated writes and
// logins go through it, so that a cross-site form (text/plain,
// urlencoded or multipart) is not taken as JSON.
func checkBodyType(c *fiber.Ctx) error {
	if len(c.Request().Body()) == 0 && !c.Request().IsBodyStream() {
		return nil
	}
	ct := string(c.Request().Header.ContentType())
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == fiber.MIMEApplicationJSON || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	var others []string
	if r := bodyRouteOf(c); r != nil {
		others = r.types
	}
	for _, t := range others {
		if t == "*" || (err == nil && mt == t) {
			return nil
		}
	}
	want := append([]string{fiber.MIMEApplicationJSON}, others...)
	if ct == "" {
		ct = "none"
	}
	return fieldError(fiber.StatusUnsupportedMediaType, "content_type",
		fmt.Sprintf("Content-Type %s: this route takes %s", ct, strings.Join(want, ", ")))
}
