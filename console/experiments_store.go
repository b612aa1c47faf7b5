package console

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
)

// errNoExperimentTables is answered when the console's store was opened
// without the experiments' migration (store.Open instead of OpenStore).
var errNoExperimentTables = fiber.NewError(fiber.StatusServiceUnavailable,
	"the console's store has no experiment tables: open it with console.OpenStore")

// experiments is the experiment package's store over the console's
// database. It holds no state of its own, so it is built per use.
func (s *Server) experiments() *experiment.Store { return experiment.OnConsole(s.store) }

// experimentsReady reports whether the experiments' migration was applied.
func (s *Server) experimentsReady(ctx context.Context) bool {
	ok, err := s.store.Migrated(ctx, experiment.ConsoleMigration)
	return err == nil && ok
}

// orgExperiment returns an experiment of the scope's organisation; another
// organisation's is store.ErrNotFound, as a missing one is, so that
// storeError answers both alike.
func (s *Server) orgExperiment(ctx context.Context, sc store.Scope, id string) (experiment.Experiment, error) {
	e, err := s.experiments().OrgGet(ctx, sc, id)
	if errors.Is(err, experiment.ErrNotFound) {
		return experiment.Experiment{}, store.ErrNotFound
	}
	return e, err
}
