package console

import "github.com/gofiber/fiber/v2"

// runRoutes serves training runs and evaluations.
func (s *Server) runRoutes(api fiber.Router) {}
