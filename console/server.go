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
	// Harnesses are stored as versions of every organisation at start
	// (the embedded demo); a stream bound to one on first run gets a
	// first release of it.
	Harnesses []*harness.Harness
	// BodyLimit bounds the request body of every route but those that
	// take larger ones, in bytes; default DefaultBodyLimit (1 MiB). It is
	// enforced before the body is buffered and before authentication.
	BodyLimit int
	// UploadBodyLimit bounds a plugin upload's body, the package and its
	// multipart envelope; default DefaultUploadBodyLimit. Like the other
	// larger bodies (catalogs, harness drafts, commerce event batches), it
	// is read only after the caller is authenticated.
	UploadBodyLimit int
	// ReadTimeout bounds the time a client takes to send a request, its
	// headers and body; default 30 s. A client that stops sending mid-body
	// is cut off, and what it sent is released.
	ReadTimeout time.Duration
	// TrustedOrigins are sites (scheme://host[:port]) besides the
	// console's own whose pages may send logins and cookie-authenticated
	// writes: a reverse proxy's public name when the proxy rewrites Host.
	TrustedOrigins []string
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
	// PluginMemory is the process-wide budget of plugin memory; zero
	// fields take the defaults.
	PluginMemory PluginMemory
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
	// trustedOrigins is cfg.TrustedOrigins, lower-cased, for look-ups.
	trustedOrigins map[string]bool
	// checkPassword is CheckPassword; tests count its calls.
	checkPassword func(encoded, password string) bool

	// harnesses holds parsed harness versions and running release gates
	// (harnesses.go, harness_gate.go).
	harnesses *harnessArea
	// plugins holds loaded plugin versions, cached plugin sets and call
	// statistics (plugin_runtime.go); pluginRoutes sets it up.
	plugins *pluginRuntime
	// served holds the engines of promoted checkpoints that live sessions
	// answer with (run_serving.go).
	served servedModels
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
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.UploadBodyLimit <= 0 {
		cfg.UploadBodyLimit = DefaultUploadBodyLimit
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	origins, err := parseOrigins(cfg.TrustedOrigins)
	if err != nil {
		return nil, err
	}
	if cfg.PluginMemory, err = cfg.PluginMemory.withDefaults(); err != nil {
		return nil, err
	}
	s := &Server{log: cfg.Logger, store: cfg.Store, secureCookies: !cfg.InsecureCookies, cfg: cfg, harnesses: newHarnessArea(),
		trustedOrigins: origins, checkPassword: CheckPassword}
	if err := s.seedHarnesses(context.Background()); err != nil {
		return nil, err
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "livehat",
		DisableStartupMessage: true,
		// Values read from a request (c.Params, c.Query, c.Get, c.Cookies,
		// c.Body) are copies, not views of fasthttp's buffers, which the
		// next request on the connection overwrites: handlers keep them as
		// metrics labels, map keys and in goroutines (issue #21, finding 2).
		Immutable: true,
		// Handlers see a request once its headers are read; limitBody and
		// authenticate read the body, each bounded by the route's limit,
		// so no body is buffered before its size is checked.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    cfg.BodyLimit,
		ReadTimeout:                  cfg.ReadTimeout,
		WriteTimeout:                 60 * time.Second,
		ErrorHandler:                 s.handleError,
	})
	// Security headers first, so that every answer has them, refusals of
	// limitBody included.
	s.app.Use(securityHeaders, s.limitBody)
	if cfg.Metrics != nil {
		em, err := runtime.NewEngineMetrics(cfg.Metrics)
		if err != nil {
			return nil, fmt.Errorf("console: engine metrics: %w", err)
		}
		if lm, ok := cfg.Model.(runtime.LocalModel); ok {
			em.Watch(s.configuredModelName(), lm.Engine)
		}
		s.served.metrics = em
		s.app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{})))
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Get("/readyz", s.ready)
	s.pages()
	s.app.Post("/api/login", s.sameSiteJSON, loginLimiter(), s.login)

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
	s.experimentRoutes(api)

	// Unknown API paths answer JSON, not the UI's HTML.
	api.Use(func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, "no API route "+c.Method()+" "+c.Path())
	})
}

// ready reports whether the store answers: a load balancer stops sending
// traffic to a console whose database is gone.
func (s *Server) ready(c *fiber.Ctx) error {
	if err := s.store.Ping(c.UserContext()); err != nil {
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
		err := s.app.ShutdownWithTimeout(10 * time.Second)
		s.served.close()
		if err != nil {
			return fmt.Errorf("console: shutdown: %w", err)
		}
		return nil
	}
}

type apiError struct {
	Error    string           `json:"error"`
	Code     string           `json:"code,omitempty"`
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
	var coded *codedErr
	switch {
	case errors.As(err, &fld):
		return c.Status(fld.code).JSON(apiError{Error: fld.Error(), Code: fld.errCode, Field: fld.field})
	case errors.As(err, &coded):
		return c.Status(coded.status).JSON(apiError{Error: coded.Error(), Code: coded.errCode})
	case errors.As(err, &fe):
		code = fe.Code
	}
	if code >= 500 {
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	return c.Status(code).JSON(apiError{Error: err.Error(), Code: statusCode(code)})
}
