package console

import (
	"context"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
)

// experimentsMigration is the schema version that adds the experiments'
// tables: the experiment package's own, plus the console's record of
// which organisation owns an experiment and which streams it runs on.
const experimentsMigration = 50

// OpenStore opens the console's store (store.Open) with the experiments'
// tables added as migration 50 and their ship history as 51, so the
// experiment pages and the live sessions' experiment hooks have them, and
// the stream rehearsals' reports as 60 (rehearsal_run.go). opts are passed
// on to store.Open.
func OpenStore(ctx context.Context, dir string, opts ...store.Option) (*store.Store, error) {
	sql := append(experiment.Migrations(), experimentConsoleTables()...)
	opts = append([]store.Option{store.WithMigrations(store.Migration{Version: experimentsMigration, Name: "experiments", SQL: sql},
		store.Migration{Version: experimentShipsMigration, Name: "experiment ships", SQL: experimentShipTables()},
		store.Migration{Version: rehearsalMigration, Name: "rehearsals", SQL: rehearsalTables()})}, opts...)
	return store.Open(ctx, dir, opts...)
}

// experimentConsoleTables are the console's tables about experiments:
// experiment_orgs scopes each experiment to an organisation (the
// experiment package knows no tenants), experiment_streams lists the
// streams an experiment runs on and, once it started, the arm each runs
// (stream units) with the harness version it was bound to before, which
// the stop restores.
func experimentConsoleTables() []string {
	return []string{
		`CREATE TABLE experiment_orgs (
			experiment_id TEXT PRIMARY KEY REFERENCES experiment_experiments(id) ON DELETE CASCADE,
			org_id TEXT NOT NULL REFERENCES orgs(id),
			created_by TEXT NOT NULL)`,
		`CREATE INDEX experiment_orgs_org ON experiment_orgs(org_id)`,
		`CREATE TABLE experiment_streams (
			experiment_id TEXT NOT NULL REFERENCES experiment_experiments(id) ON DELETE CASCADE,
			stream_id TEXT NOT NULL,
			arm TEXT NOT NULL DEFAULT '',
			harness_version TEXT NOT NULL DEFAULT '',
			previous_version TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (experiment_id, stream_id))`,
		`CREATE INDEX experiment_streams_stream ON experiment_streams(stream_id)`,
	}
}
