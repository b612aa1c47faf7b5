package console

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/runtime"
)

// pluginRoutes serves the plugin registry: upload, versions, enable, trial.
func (s *Server) pluginRoutes(api fiber.Router) {}

// streamPlugins is the plugin set a stream's sessions run: the plugins
// loaded in the sandbox, bound to the stream's catalog.
func (s *Server) streamPlugins(ctx context.Context, orgID string, catalog []byte) (*runtime.PluginSet, error) {
	return s.cfg.Sandbox.Plugins(catalog, nil)
}
