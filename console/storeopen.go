package console

import (
	"context"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
)

// OpenStore opens the console's store (store.Open) with the experiments'
// tables (experiment.ConsoleMigrations, versions 50 and 51), so the
// experiment pages and the live sessions' experiment hooks have them, and
// the stream rehearsals' reports as 60 (rehearsal_run.go). opts are passed
// on to store.Open.
func OpenStore(ctx context.Context, dir string, opts ...store.Option) (*store.Store, error) {
	ms := append(experiment.ConsoleMigrations(), store.Migration{Version: rehearsalMigration, Name: "rehearsals", SQL: rehearsalTables()})
	opts = append([]store.Option{store.WithMigrations(ms...)}, opts...)
	return store.Open(ctx, dir, opts...)
}
