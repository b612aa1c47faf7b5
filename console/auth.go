package console

import (
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"

	"github.com/livehat/livehat/console/store"
)

const (
	sessionCookie = "livehat_session"
	csrfHeader    = "X-CSRF-Token"
	sessionTTL    = 12 * time.Hour
	localsUser    = "livehat.user"
	localsCSRF    = "livehat.csrf"
)

// authenticate resolves the caller from an API token (Authorization: Bearer)
// or a session cookie and stores the user in the request's locals. Every
// route after it answers 401 without valid credentials. Cookie-authenticated
// requests that change state must come from this console's pages
// (refuseCrossSite), echo the session's CSRF token in the X-CSRF-Token
// header (a cross-site form cannot read it, so it cannot forge a request)
// and send JSON where the route takes JSON; API tokens are not sent by
// browsers on their own. A route that takes a body over the default limit
// reads it here, once the caller is known.
func (s *Server) authenticate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return fiber.NewError(fiber.StatusUnauthorized, "Authorization: want \"Bearer <token>\"")
		}
		u, err := s.store.TokenUser(ctx, strings.TrimSpace(tok))
		if err != nil {
			return fiber.NewError(fiber.StatusUnauthorized, "invalid API token")
		}
		c.Locals(localsUser, u)
		if err := s.readAuthenticatedBody(c); err != nil {
			return err
		}
		return c.Next()
	}
	cookie := c.Cookies(sessionCookie)
	if cookie == "" {
		return fiber.NewError(fiber.StatusUnauthorized, "not logged in: send a session cookie or an API token")
	}
	u, csrf, err := s.store.SessionUser(ctx, cookie)
	switch {
	case errors.Is(err, store.ErrExpired):
		return fiber.NewError(fiber.StatusUnauthorized, "session expired: log in again")
	case err != nil:
		return fiber.NewError(fiber.StatusUnauthorized, "invalid session: log in again")
	}
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
	default:
		if err := s.refuseCrossSite(c); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(c.Get(csrfHeader)), []byte(csrf)) != 1 {
			return fiber.NewError(fiber.StatusForbidden, "missing or wrong "+csrfHeader+" header")
		}
		if err := checkBodyType(c); err != nil {
			return err
		}
	}
	c.Locals(localsUser, u)
	c.Locals(localsCSRF, csrf)
	if err := s.readAuthenticatedBody(c); err != nil {
		return err
	}
	return c.Next()
}

// sameSiteJSON lets a login through only from this console's pages and
// only as JSON: a cross-site form (text/plain) must not log the browser
// into the attacker's account (issue #21, finding 4).
func (s *Server) sameSiteJSON(c *fiber.Ctx) error {
	if err := s.refuseCrossSite(c); err != nil {
		return err
	}
	if err := checkBodyType(c); err != nil {
		return err
	}
	return c.Next()
}

// userOf is the authenticated caller; routes behind authenticate only.
func userOf(c *fiber.Ctx) *store.User { return c.Locals(localsUser).(*store.User) }

// scopeOf is the caller's store scope.
func scopeOf(c *fiber.Ctx) store.Scope { return userOf(c).Scope() }

// requireRole lets only the given roles through.
func requireRole(roles ...store.Role) fiber.Handler {
	return func(c *fiber.Ctx) error {
		r := userOf(c).Role
		for _, want := range roles {
			if r == want {
				return c.Next()
			}
		}
		return fiber.NewError(fiber.StatusForbidden, "role "+string(r)+" may not do this")
	}
}

// loginLimiter slows password guessing: 20 attempts a minute per address.
func loginLimiter() fiber.Handler {
	return limiter.New(limiter.Config{
		Max:        20,
		Expiration: time.Minute,
		LimitReached: func(c *fiber.Ctx) error {
			return fiber.NewError(fiber.StatusTooManyRequests, "too many login attempts: wait a minute")
		},
	})
}

// loginRequest is the body of /api/login. Next is the page the login
// page was sent from; the answer's next is that page if it is one of this
// console's, else the default page (safeNext).
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Next     string `json:"next"`
}

type meResponse struct {
	User *store.User `json:"user"`
	CSRF string      `json:"csrf,omitempty"`
	// Next is where the login page goes after a login.
	Next string `json:"next,omitempty"`
}

func (s *Server) login(c *fiber.Ctx) error {
	var req loginRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"username\", \"password\", \"next\"}: "+err.Error())
	}
	if req.Username == "" {
		return badRequest("username", "username is required")
	}
	u, err := s.store.UserByUsername(c.UserContext(), req.Username)
	// An unknown username costs the same hash as a wrong password, so the
	// answer's timing does not tell which usernames exist (issue #21,
	// finding 6).
	hash := dummyPasswordHash
	if err == nil {
		hash = u.PasswordHash
	}
	if ok := s.checkPassword(hash, req.Password); err != nil || !ok {
		return statusError(fiber.StatusUnauthorized, codeBadCredentials, "wrong username or password")
	}
	ls, err := s.store.CreateSession(c.UserContext(), u.ID, sessionTTL)
	if err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{
		Name: sessionCookie, Value: ls.Token, Path: "/", Expires: ls.ExpiresAt,
		HTTPOnly: true, Secure: s.secureCookies, SameSite: fiber.CookieSameSiteStrictMode,
	})
	return c.JSON(meResponse{User: u, CSRF: ls.CSRF, Next: safeNext(req.Next)})
}

func (s *Server) logout(c *fiber.Ctx) error {
	if err := s.store.DeleteSession(c.UserContext(), c.Cookies(sessionCookie)); err != nil {
		return err
	}
	c.ClearCookie(sessionCookie)
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) me(c *fiber.Ctx) error {
	csrf, _ := c.Locals(localsCSRF).(string)
	return c.JSON(meResponse{User: userOf(c), CSRF: csrf})
}

func (s *Server) listTokens(c *fiber.Ctx) error {
	list, err := s.store.APITokens(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) createToken(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"name\"}: "+err.Error())
	}
	if strings.TrimSpace(req.Name) == "" {
		return badRequest("name", "a token needs a name")
	}
	t, plain, err := s.store.CreateAPIToken(c.UserContext(), scopeOf(c), req.Name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"token": t, "secret": plain})
}

func (s *Server) revokeToken(c *fiber.Ctx) error {
	if err := s.store.RevokeAPIToken(c.UserContext(), scopeOf(c), c.Params("id")); err != nil {
		return storeError(err, "token")
	}
	return c.SendStatus(fiber.StatusNoContent)
}

type newUserRequest struct {
	Username    string     `json:"username"`
	DisplayName string     `json:"display_name"`
	Role        store.Role `json:"role"`
	MerchantID  string     `json:"merchant_id"`
	Password    string     `json:"password"`
}

func (s *Server) listUsers(c *fiber.Ctx) error {
	list, err := s.store.Users(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) createUser(c *fiber.Ctx) error {
	var req newUserRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", err.Error())
	}
	switch {
	case strings.TrimSpace(req.Username) == "":
		return badRequest("username", "username is required")
	case !req.Role.Valid():
		return badRequest("role", "role must be operator, merchant or developer")
	case (req.Role == store.RoleMerchant) != (req.MerchantID != ""):
		return badRequest("merchant_id", "merchant_id is required for, and only for, the merchant role")
	}
	if req.MerchantID != "" && !s.merchantVisible(c, req.MerchantID) {
		return fieldError(fiber.StatusNotFound, "merchant_id", "no merchant "+req.MerchantID)
	}
	hash, err := HashPassword(req.Password)
	if err != nil {
		return badRequest("password", err.Error())
	}
	sc := scopeOf(c)
	u, err := s.store.CreateUser(c.UserContext(), store.NewUser{OrgID: sc.OrgID, Username: req.Username,
		DisplayName: req.DisplayName, Role: req.Role, MerchantID: req.MerchantID, PasswordHash: hash})
	if errors.Is(err, store.ErrUsernameTaken) {
		return fieldError(fiber.StatusConflict, "username", err.Error())
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(u)
}

func (s *Server) merchantVisible(c *fiber.Ctx, id string) bool {
	ms, err := s.store.Merchants(c.UserContext(), scopeOf(c))
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}
