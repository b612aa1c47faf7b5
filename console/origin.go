package console

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// parseOrigins checks Config.TrustedOrigins: each is scheme://host[:port],
// as browsers send it in the Origin header, and is returned lower-cased.
func parseOrigins(list []string) (map[string]bool, error) {
	out := make(map[string]bool, len(list))
	for i, o := range list {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("console: Config.TrustedOrigins[%d] %q: want scheme://host[:port], as a browser's Origin header names a site", i, o)
		}
		out[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return out, nil
}

// refuseCrossSite refuses a request that a browser sent from a page of
// another site: Sec-Fetch-Site other than same-origin or none (typed in
// the address bar), or an Origin that is neither this console (the
// request's Host) nor one of Config.TrustedOrigins. A request with
// neither header is not a modern browser's, and passes: the session's
// CSRF token and the JSON content type still stand in its way. Cookie-
// authenticated writes and logins go through it (issue #21, finding 4).
func (s *Server) refuseCrossSite(c *fiber.Ctx) error {
	origin := c.Get(fiber.HeaderOrigin)
	if origin != "" && s.trustedOrigins[strings.ToLower(origin)] {
		return nil
	}
	switch site := c.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return fieldError(fiber.StatusForbidden, "origin",
			fmt.Sprintf("cross-site request refused: the browser says it came from a %s page", site))
	}
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if origin == "null" || err != nil || u.Host == "" || !strings.EqualFold(u.Host, string(c.Request().Host())) {
		return fieldError(fiber.StatusForbidden, "origin",
			fmt.Sprintf("cross-site request refused: Origin %q is not this console (%s)", origin, c.Request().Host()))
	}
	return nil
}
