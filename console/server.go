// Package console is the LiveHAT web console: a Fiber server with a REST +
// SSE API over the SQLite store (console/store) and an embedded web UI for
// operators (plugins, harness versions, training runs, evaluations),
// merchants (their streams and the live view) and plugin developers.
package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// Config configures a Server.
type Config struct {
	// Store is the console's database; required.
	Store *store.Store
	// InsecureCookies drops the Secure attribute of the session cookie, for
	// a console served over plain HTTP on a host other than localhost
	// (browsers accept Secure cookies from http://localhost).
	InsecureCookies bool
	// Logger receives request and lifecycle logs.
	Logger *slog.Logger
	// Harnesses are the versions served at start, e.g. the embedded demo.
	Harnesses []*harness.Harness
	// BodyLimit bounds request bodies in bytes; default 8 MiB.
	BodyLimit int
	// Metrics, when set, is served on /metrics in the Prometheus format;
	// the runtime's and the console's collectors register there.
	Metrics *prometheus.Registry
	// DataDir is the data folder: uploaded plugin packages and training
	// run folders live under it (the database is in Store).
	DataDir string
	// Sandbox is the plugin host that live sessions, plugin trials and the
	// release gate run plugins in; required.
	Sandbox *runtime.Sandbox
	// PluginDirs are Go plugin source folders installed on first run (the
	// example plugins the demo harness names).
	PluginDirs []string
	// Model answers in live sessions, /v1/chat/completions and the release
	// gate; ModelName is how the UI names it.
	Model     runtime.Model
	ModelName string
}

// Server is the console's HTTP server.
type Server struct {
	app           *fiber.App
	log           *slog.Logger
	store         *store.Store
	secureCookies bool
	cfg           Config

	mu        sync.RWMutex
	harnesses map[string]*harness.Harness // by Version()
}

// New builds a server from cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("console: Config.Store is required")
	}
	if cfg.Sandbox == nil {
		return nil, errors.New("console: Config.Sandbox is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 8 << 20
	}
	s := &Server{log: cfg.Logger, store: cfg.Store, secureCookies: !cfg.InsecureCookies, cfg: cfg, harnesses: map[string]*harness.Harness{}}
	for _, h := range cfg.Harnesses {
		s.harnesses[h.Version()] = h
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "livehat",
		DisableStartupMessage: true,
		BodyLimit:             cfg.BodyLimit,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          60 * time.Second,
		ErrorHandler:          s.handleError,
	})
	if cfg.Metrics != nil {
		s.app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{})))
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.app.Use(securityHeaders)
	s.app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Get("/readyz", s.ready)
	s.pages()
	s.app.Post("/api/login", loginLimiter(), s.login)

	api := s.app.Group("/api", s.authenticate)
	api.Get("/me", s.me)
	api.Post("/logout", s.logout)
	api.Get("/tokens", s.listTokens)
	api.Post("/tokens", s.createToken)
	api.Delete("/tokens/:id", s.revokeToken)
	api.Get("/users", requireRole(store.RoleOperator), s.listUsers)
	api.Post("/users", requireRole(store.RoleOperator), s.createUser)
	s.streamRoutes(api)
	s.pluginRoutes(api)
	s.releaseRoutes(api)
	s.liveRoutes(api)
	s.runRoutes(api)

	api.Get("/harnesses", s.listHarnesses)
	api.Get("/harnesses/:version", s.getHarness)
	api.Post("/harnesses/:version/render", s.renderHarness)
	api.Post("/harness/validate", s.validateHarness)
	api.Post("/harness/diff", s.diffHarnesses)

	// Unknown API paths answer JSON, not the UI's HTML.
	api.Use(func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, "no API route "+c.Method()+" "+c.Path())
	})
}

// ready reports whether the store answers: a load balancer stops sending
// traffic to a console whose database is gone.
func (s *Server) ready(c *fiber.Ctx) error {
	if err := s.store.DB().PingContext(c.UserContext()); err != nil {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "store unavailable", "error": err.Error()})
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// securityHeaders keeps the UI out of frames and stops content sniffing;
// the UI loads only its own scripts.
func securityHeaders(c *fiber.Ctx) error {
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
	return c.Next()
}

// App exposes the Fiber app, for tests through app.Test.
func (s *Server) App() *fiber.App { return s.app }

// Serve listens on ln until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.app.Listener(ln) }()
	s.log.Info("console listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		s.log.Info("console shutting down")
		if err := s.app.ShutdownWithTimeout(10 * time.Second); err != nil {
			return fmt.Errorf("console: shutdown: %w", err)
		}
		return nil
	}
}

type apiError struct {
	Error    string           `json:"error"`
	Field    string           `json:"field,omitempty"`
	Problems []harnessProblem `json:"problems,omitempty"`
}

type harnessProblem struct {
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func (s *Server) handleError(c *fiber.Ctx, err error) error {
	code := fiber.StatusInternalServerError
	var fe *fiber.Error
	var fld *fieldErr
	switch {
	case errors.As(err, &fld):
		return c.Status(fld.code).JSON(apiError{Error: fld.Error(), Field: fld.field})
	case errors.As(err, &fe):
		code = fe.Code
	}
	if code >= 500 {
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	return c.Status(code).JSON(apiError{Error: err.Error()})
}

type harnessSummary struct {
	Version string `json:"version"`
	Name    string `json:"name"`
	Skills  int    `json:"skills"`
	Tools   int    `json:"tools"`
	Hooks   int    `json:"hooks"`
}

func (s *Server) listHarnesses(c *fiber.Ctx) error {
	s.mu.RLock()
	out := make([]harnessSummary, 0, len(s.harnesses))
	for v, h := range s.harnesses {
		out = append(out, harnessSummary{Version: v, Name: h.Name, Skills: len(h.Skills), Tools: len(h.Tools), Hooks: len(h.Hooks)})
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name+out[i].Version < out[j].Name+out[j].Version })
	return c.JSON(out)
}

func (s *Server) lookup(version string) (*harness.Harness, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if h, ok := s.harnesses[version]; ok {
		return h, nil
	}
	// Accept the short form people copy from the console and the CLI.
	var found *harness.Harness
	for v, h := range s.harnesses {
		if len(version) >= 8 && len(v) > len("sha256:")+len(version) && v[len("sha256:"):len("sha256:")+len(version)] == version {
			if found != nil {
				return nil, fiber.NewError(fiber.StatusConflict, fmt.Sprintf("version prefix %q is ambiguous", version))
			}
			found = h
		}
	}
	if found == nil {
		return nil, fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("no harness version %q", version))
	}
	return found, nil
}

func (s *Server) getHarness(c *fiber.Ctx) error {
	h, err := s.lookup(c.Params("version"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"version": h.Version(), "harness": h})
}

func (s *Server) renderHarness(c *fiber.Ctx) error {
	h, err := s.lookup(c.Params("version"))
	if err != nil {
		return err
	}
	var conv harness.Conversation
	if len(c.Body()) > 0 {
		if err := decodeStrict(c.Body(), &conv); err != nil {
			return fiber.NewError(fiber.StatusBadRequest, "conversation: "+err.Error())
		}
	}
	p, err := harness.Render(h, conv, harness.RenderOptions{OmitToolsSection: c.QueryBool("omit_tools_section")})
	if err != nil {
		return fiber.NewError(fiber.StatusUnprocessableEntity, err.Error())
	}
	return c.JSON(p)
}

// parseBody reads a harness document in the request body, JSON or YAML by
// Content-Type.
func (s *Server) parseBody(c *fiber.Ctx) (*harness.Harness, error) {
	format := harness.FormatJSON
	switch string(c.Request().Header.ContentType()) {
	case "application/yaml", "application/x-yaml", "text/yaml":
		format = harness.FormatYAML
	}
	return harness.Parse(c.Body(), format)
}

func problemsOf(err error) []harnessProblem {
	var list harness.ErrorList
	var one *harness.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = harness.ErrorList{one}
	default:
		return []harnessProblem{{Message: err.Error()}}
	}
	out := make([]harnessProblem, len(list))
	for i, e := range list {
		out[i] = harnessProblem{Line: e.Line, Col: e.Col, Path: e.Path, Message: e.Msg}
	}
	return out
}

func (s *Server) validateHarness(c *fiber.Ctx) error {
	h, err := s.parseBody(c)
	if err != nil {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiError{Error: "invalid harness", Problems: problemsOf(err)})
	}
	return c.JSON(harnessSummary{Version: h.Version(), Name: h.Name, Skills: len(h.Skills), Tools: len(h.Tools), Hooks: len(h.Hooks)})
}

func (s *Server) diffHarnesses(c *fiber.Ctx) error {
	var req struct {
		Old string `json:"old"`
		New string `json:"new"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "want {\"old\": VERSION, \"new\": VERSION}: "+err.Error())
	}
	a, err := s.lookup(req.Old)
	if err != nil {
		return err
	}
	b, err := s.lookup(req.New)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"old": a.Version(), "new": b.Version(), "changes": harness.Diff(a, b)})
}
