package console

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
)

// experimentStream is one stream of an experiment: once the experiment
// started, the arm a stream-unit experiment gave it, the harness version
// it runs for that arm, and the version it ran before (restored at stop).
type experimentStream struct {
	StreamID        string `json:"stream_id"`
	Name            string `json:"name"`
	Arm             string `json:"arm,omitempty"`
	HarnessVersion  string `json:"harness_version,omitempty"`
	PreviousVersion string `json:"previous_version,omitempty"`
}

// errNoExperimentTables is answered when the console's store was opened
// without the experiments' migration (store.Open instead of OpenStore).
var errNoExperimentTables = fiber.NewError(fiber.StatusServiceUnavailable,
	"the console's store has no experiment tables: open it with console.OpenStore")

// experiments is the experiment package's store over the console's
// database. It holds no state of its own, so it is built per use.
func (s *Server) experiments() *experiment.Store {
	return experiment.NewStore(s.store.DB(), s.store.Now)
}

// experimentsReady reports whether the experiments' migration was applied.
func (s *Server) experimentsReady(ctx context.Context) bool {
	var n int
	err := s.store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, experimentsMigration).Scan(&n)
	return err == nil && n == 1
}

// orgExperiment returns an experiment of the organisation; another
// organisation's is store.ErrNotFound, as a missing one is.
func (s *Server) orgExperiment(ctx context.Context, orgID, id string) (experiment.Experiment, error) {
	var n int
	if err := s.store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM experiment_orgs WHERE experiment_id = ? AND org_id = ?`, id, orgID).Scan(&n); err != nil {
		return experiment.Experiment{}, err
	}
	if n == 0 {
		return experiment.Experiment{}, store.ErrNotFound
	}
	e, err := s.experiments().Get(ctx, id)
	if errors.Is(err, experiment.ErrNotFound) {
		return experiment.Experiment{}, store.ErrNotFound
	}
	return e, err
}

// orgExperiments lists the organisation's experiments, newest first.
func (s *Server) orgExperiments(ctx context.Context, orgID string) ([]experiment.Experiment, error) {
	rows, err := s.store.DB().QueryContext(ctx, `SELECT o.experiment_id FROM experiment_orgs o
		JOIN experiment_experiments e ON e.id = o.experiment_id WHERE o.org_id = ? ORDER BY e.created_at DESC, e.id`, orgID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]experiment.Experiment, 0, len(ids))
	for _, id := range ids {
		e, err := s.experiments().Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// scopeExperiment records the organisation and streams of a new
// experiment in one transaction.
func (s *Server) scopeExperiment(ctx context.Context, sc store.Scope, id string, streams []string) error {
	return s.store.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_orgs (experiment_id, org_id, created_by) VALUES (?, ?, ?)`, id, sc.OrgID, sc.UserID); err != nil {
			return fmt.Errorf("experiment %s: organisation: %w", id, err)
		}
		for _, st := range streams {
			if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_streams (experiment_id, stream_id) VALUES (?, ?)`, id, st); err != nil {
				return fmt.Errorf("experiment %s: stream %s: %w", id, st, err)
			}
		}
		return nil
	})
}

// deleteExperiment removes an experiment whose scoping failed, so no
// experiment is left that no organisation sees.
func (s *Server) deleteExperiment(ctx context.Context, id string) error {
	_, err := s.store.DB().ExecContext(ctx, `DELETE FROM experiment_experiments WHERE id = ? AND state = 'draft'`, id)
	return err
}

// experimentStreams lists an experiment's streams with their names (a
// deleted stream keeps its id and an empty name).
func (s *Server) experimentStreams(ctx context.Context, id string) ([]experimentStream, error) {
	rows, err := s.store.DB().QueryContext(ctx, `SELECT es.stream_id, COALESCE(st.name, ''), es.arm, es.harness_version, es.previous_version
		FROM experiment_streams es LEFT JOIN streams st ON st.id = es.stream_id WHERE es.experiment_id = ? ORDER BY es.stream_id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []experimentStream
	for rows.Next() {
		var x experimentStream
		if err := rows.Scan(&x.StreamID, &x.Name, &x.Arm, &x.HarnessVersion, &x.PreviousVersion); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// setExperimentStream records the arm a stream runs and the versions
// before and during the experiment.
func (s *Server) setExperimentStream(ctx context.Context, id string, x experimentStream) error {
	_, err := s.store.DB().ExecContext(ctx, `UPDATE experiment_streams SET arm = ?, harness_version = ?, previous_version = ?
		WHERE experiment_id = ? AND stream_id = ?`, x.Arm, x.HarnessVersion, x.PreviousVersion, id, x.StreamID)
	return err
}

// runningExperimentOn returns the running experiment a stream takes part
// in and the stream's record in it; ok is false when there is none.
func (s *Server) runningExperimentOn(ctx context.Context, streamID string) (id string, x experimentStream, ok bool, err error) {
	err = s.store.DB().QueryRowContext(ctx, `SELECT es.experiment_id, es.stream_id, es.arm, es.harness_version, es.previous_version
		FROM experiment_streams es JOIN experiment_experiments e ON e.id = es.experiment_id
		WHERE es.stream_id = ? AND e.state = 'running' ORDER BY e.started_at DESC LIMIT 1`, streamID).
		Scan(&id, &x.StreamID, &x.Arm, &x.HarnessVersion, &x.PreviousVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return "", x, false, nil
	}
	return id, x, err == nil, err
}
