package console

import "github.com/gofiber/fiber/v2"

// releaseRoutes serves harness releases: publish, canary, rollback, the release gate.
func (s *Server) releaseRoutes(api fiber.Router) {}
