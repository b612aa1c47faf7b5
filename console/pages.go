package console

import (
	"embed"
	"io/fs"
	"net/http"
	"regexp"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
)

// web holds the UI: one HTML file per page plus shared and per-page
// scripts and styles under static/. The pages call the REST API; nothing
// is rendered from user data on the server, and the scripts insert user
// text only through textContent, so viewer messages cannot inject markup.
//
//go:embed web
var web embed.FS

var pageName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func (s *Server) pages() {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	s.app.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(sub), PathPrefix: "static", MaxAge: 300}))
	s.app.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/streams", fiber.StatusFound) })
	s.app.Get("/:page", func(c *fiber.Ctx) error {
		name := c.Params("page")
		if !pageName.MatchString(name) {
			return c.Next()
		}
		html, err := fs.ReadFile(sub, name+".html")
		if err != nil {
			return c.Next()
		}
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Type("html", "utf-8")
		return c.Send(html)
	})
}
