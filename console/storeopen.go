package console

import (
	"context"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
)

// OpenStore opens the console's store (store.Open) with the experiments'
// tables (experiment.ConsoleMigrations, versions 50 and 51), so the
// experiment pages and the live sessions' experiment hooks have them. opts
// are passed on to store.Open.
func OpenStore(ctx context.Context, dir string, opts ...store.Option) (*store.Store, error) {
	opts = append([]store.Option{store.WithMigrations(experiment.ConsoleMigrations()...)}, opts...)
	return store.Open(ctx, dir, opts...)
}
