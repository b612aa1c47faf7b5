package console

import "github.com/gofiber/fiber/v2"

// liveRoutes serves live sessions, the avatar's SSE stream, viewer ingestion and /v1/chat/completions.
func (s *Server) liveRoutes(api fiber.Router) {}
