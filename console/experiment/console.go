package experiment

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/livehat/livehat/console/store"
)

// The console keeps three tables of its own about experiments: which
// organisation owns one (the rest of this package knows no tenants), the
// streams it runs on with the arm each runs, and the history of its shipped
// winners. They live here, beside the tables they reference, so that every
// query of an experiment_* table is in this package, and every query that
// reads or changes one organisation's experiments takes its store.Scope.

// ConsoleMigration is the console store's schema version that adds the
// experiment tables (Migrations) with experiment_orgs and
// experiment_streams; ShipsMigration adds experiment_ships.
const (
	ConsoleMigration = 50
	ShipsMigration   = 51
)

// ConsoleMigrations are the experiments' migrations of the console's
// store, for store.WithMigrations.
func ConsoleMigrations() []store.Migration {
	tables := append(Migrations(),
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
	)
	ships := []string{
		`CREATE TABLE experiment_ships (
			id TEXT PRIMARY KEY,
			experiment_id TEXT NOT NULL REFERENCES experiment_experiments(id) ON DELETE CASCADE,
			org_id TEXT NOT NULL REFERENCES orgs(id),
			arm TEXT NOT NULL,
			harness_version TEXT NOT NULL DEFAULT '',
			release_id TEXT NOT NULL DEFAULT '',
			checkpoint TEXT NOT NULL DEFAULT '',
			serving TEXT NOT NULL DEFAULT '',
			previous_serving TEXT NOT NULL DEFAULT '',
			serving_changed INTEGER NOT NULL DEFAULT 0,
			gate TEXT NOT NULL DEFAULT '',
			override TEXT NOT NULL DEFAULT '',
			shipped_by TEXT NOT NULL,
			shipped_at TEXT NOT NULL)`,
		`CREATE INDEX experiment_ships_experiment ON experiment_ships(experiment_id, shipped_at)`,
	}
	return []store.Migration{
		{Version: ConsoleMigration, Name: "experiments", SQL: tables},
		{Version: ShipsMigration, Name: "experiment ships", SQL: ships},
	}
}

// OnConsole returns the store over the console's database; it holds no
// state of its own, so it may be built per use. The database has the
// experiment tables once it was opened with ConsoleMigrations.
func OnConsole(st *store.Store) *Store { return NewStore(st.DB(), st.Now) }

// Participant is one stream of an experiment: once the experiment
// started, the arm a stream-unit experiment gave it, the harness version
// it runs for that arm, and the version it ran before (restored at stop).
type Participant struct {
	StreamID        string `json:"stream_id"`
	Name            string `json:"name"`
	Arm             string `json:"arm,omitempty"`
	HarnessVersion  string `json:"harness_version,omitempty"`
	PreviousVersion string `json:"previous_version,omitempty"`
}

// Claim records, in one transaction, that the experiment id belongs to
// the scope's organisation (created by its user) and runs on streams.
func (s *Store) Claim(ctx context.Context, sc store.Scope, id string, streams []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_orgs (experiment_id, org_id, created_by) VALUES (?, ?, ?)`, id, sc.OrgID, sc.UserID); err != nil {
		return fmt.Errorf("experiment %s: organisation: %w", id, err)
	}
	for _, st := range streams {
		if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_streams (experiment_id, stream_id) VALUES (?, ?)`, id, st); err != nil {
			return fmt.Errorf("experiment %s: stream %s: %w", id, st, err)
		}
	}
	return tx.Commit()
}

// DeleteDraft removes a draft experiment with everything recorded about
// it; a started one is left as it is.
func (s *Store) DeleteDraft(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM experiment_experiments WHERE id = ? AND state = 'draft'`, id)
	if err != nil {
		return fmt.Errorf("experiment %q: delete: %w", id, err)
	}
	return nil
}

// OrgGet returns an experiment of the scope's organisation; another
// organisation's is ErrNotFound, as a missing one is.
func (s *Store) OrgGet(ctx context.Context, sc store.Scope, id string) (Experiment, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM experiment_orgs WHERE experiment_id = ? AND org_id = ?`, id, sc.OrgID).Scan(&n); err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: %w", id, err)
	}
	if n == 0 {
		return Experiment{}, fmt.Errorf("experiment %q: %w", id, ErrNotFound)
	}
	return s.Get(ctx, id)
}

// OrgList returns the experiments of the scope's organisation, newest
// first.
func (s *Store) OrgList(ctx context.Context, sc store.Scope) ([]Experiment, error) {
	return s.listWhere(ctx, `SELECT o.experiment_id FROM experiment_orgs o
		JOIN experiment_experiments e ON e.id = o.experiment_id WHERE o.org_id = ? ORDER BY e.created_at DESC, e.id`, sc.OrgID)
}

// orgOnly restricts a statement's experiment_id to the experiments of the
// organisation its last argument names.
const orgOnly = ` AND experiment_id IN (SELECT experiment_id FROM experiment_orgs WHERE org_id = ?)`

// Participants lists the streams of an experiment of the scope's
// organisation, with their names (a deleted stream keeps its id and an
// empty name); another organisation's experiment has none.
func (s *Store) Participants(ctx context.Context, sc store.Scope, id string) ([]Participant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT es.stream_id, COALESCE(st.name, ''), es.arm, es.harness_version, es.previous_version
		FROM experiment_streams es LEFT JOIN streams st ON st.id = es.stream_id WHERE es.experiment_id = ?`+orgOnly+
		` ORDER BY es.stream_id`, id, sc.OrgID)
	if err != nil {
		return nil, fmt.Errorf("experiment %q: streams: %w", id, err)
	}
	defer rows.Close()
	var out []Participant
	for rows.Next() {
		var p Participant
		if err := rows.Scan(&p.StreamID, &p.Name, &p.Arm, &p.HarnessVersion, &p.PreviousVersion); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SetParticipant records the arm stream p.StreamID runs in an experiment
// of the scope's organisation and its versions before and during the
// experiment. A stream that is not the experiment's is ErrNotFound.
func (s *Store) SetParticipant(ctx context.Context, sc store.Scope, id string, p Participant) error {
	res, err := s.db.ExecContext(ctx, `UPDATE experiment_streams SET arm = ?, harness_version = ?, previous_version = ?
		WHERE experiment_id = ? AND stream_id = ?`+orgOnly, p.Arm, p.HarnessVersion, p.PreviousVersion, id, p.StreamID, sc.OrgID)
	if err != nil {
		return fmt.Errorf("experiment %q: stream %s: %w", id, p.StreamID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("experiment %q: stream %s: %w", id, p.StreamID, ErrNotFound)
	}
	return nil
}

// RunningOn returns the running experiment a stream takes part in (the
// latest started, should there be more) and the stream's record in it; ok
// is false when there is none. It serves the live sessions, which act for
// the stream rather than a user, so it takes no scope.
func (s *Store) RunningOn(ctx context.Context, streamID string) (id string, p Participant, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT es.experiment_id, es.stream_id, es.arm, es.harness_version, es.previous_version
		FROM experiment_streams es JOIN experiment_experiments e ON e.id = es.experiment_id
		WHERE es.stream_id = ? AND e.state = 'running' ORDER BY e.started_at DESC LIMIT 1`, streamID).
		Scan(&id, &p.StreamID, &p.Arm, &p.HarnessVersion, &p.PreviousVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return "", p, false, nil
	}
	if err != nil {
		return "", p, false, fmt.Errorf("stream %s: running experiment: %w", streamID, err)
	}
	return id, p, true, nil
}

// Ship is one "ship the winner" of an experiment, as its history records
// it: the harness release it made, the serving change, the evaluations the
// checkpoint was gated on, the override reason given for a regression, and
// who shipped.
type Ship struct {
	ID             string `json:"id"`
	ExperimentID   string `json:"experiment_id"`
	Arm            string `json:"arm"`
	HarnessVersion string `json:"harness_version,omitempty"`
	ReleaseID      string `json:"release_id,omitempty"`
	// Checkpoint is the winner's checkpoint as the arm names it; Serving
	// and PreviousServing are the serving model after and before ("" is
	// the console's configured model). ServingChanged is false when the
	// checkpoint already served.
	Checkpoint      string          `json:"checkpoint,omitempty"`
	Serving         string          `json:"serving,omitempty"`
	PreviousServing string          `json:"previous_serving,omitempty"`
	ServingChanged  bool            `json:"serving_changed"`
	Gate            json.RawMessage `json:"gate,omitempty"`
	Override        string          `json:"override,omitempty"`
	ShippedBy       string          `json:"shipped_by"`
	Shipper         string          `json:"shipper"`
	ShippedAt       time.Time       `json:"shipped_at"`
}

// shipTimeLayout stores ship times with a fixed width, so that they sort
// as text.
const shipTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// AddShip records a ship of experiment x.ExperimentID, made by the
// scope's user, in its history; it sets x.ID, x.ShippedBy and x.ShippedAt.
// An experiment of another organisation is ErrNotFound.
func (s *Store) AddShip(ctx context.Context, sc store.Scope, x *Ship) error {
	x.ID, x.ShippedBy, x.ShippedAt = store.NewID(), sc.UserID, s.now().UTC()
	gate := ""
	if x.Gate != nil {
		gate = string(x.Gate)
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO experiment_ships (id, experiment_id, org_id, arm, harness_version, release_id,
		checkpoint, serving, previous_serving, serving_changed, gate, override, shipped_by, shipped_at)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM experiment_orgs WHERE experiment_id = ? AND org_id = ?)`,
		x.ID, x.ExperimentID, sc.OrgID, x.Arm, x.HarnessVersion, x.ReleaseID, x.Checkpoint, x.Serving, x.PreviousServing, x.ServingChanged,
		gate, x.Override, x.ShippedBy, x.ShippedAt.Format(shipTimeLayout), x.ExperimentID, sc.OrgID)
	if err != nil {
		return fmt.Errorf("experiment %s: record the ship: %w", x.ExperimentID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("experiment %q: record the ship: %w", x.ExperimentID, ErrNotFound)
	}
	return nil
}

// Ships lists the ships of an experiment of the scope's organisation,
// oldest first, each with its shipper's user name.
func (s *Store) Ships(ctx context.Context, sc store.Scope, id string) ([]Ship, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT x.id, x.experiment_id, x.arm, x.harness_version, x.release_id, x.checkpoint,
		x.serving, x.previous_serving, x.serving_changed, x.gate, x.override, x.shipped_by, COALESCE(u.username, ''), x.shipped_at
		FROM experiment_ships x LEFT JOIN users u ON u.id = x.shipped_by WHERE x.experiment_id = ? AND x.org_id = ? ORDER BY x.shipped_at, x.id`, id, sc.OrgID)
	if err != nil {
		return nil, fmt.Errorf("experiment %q: ships: %w", id, err)
	}
	defer rows.Close()
	var out []Ship
	for rows.Next() {
		var x Ship
		var gate, at string
		if err := rows.Scan(&x.ID, &x.ExperimentID, &x.Arm, &x.HarnessVersion, &x.ReleaseID, &x.Checkpoint, &x.Serving, &x.PreviousServing,
			&x.ServingChanged, &gate, &x.Override, &x.ShippedBy, &x.Shipper, &at); err != nil {
			return nil, err
		}
		if gate != "" {
			x.Gate = json.RawMessage(gate)
		}
		if x.ShippedAt, err = time.Parse(shipTimeLayout, at); err != nil {
			return nil, fmt.Errorf("experiment ship %s: time %q: %w", x.ID, at, err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}
