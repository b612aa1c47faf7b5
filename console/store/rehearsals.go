package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// rehearsalMigrations are the merchants' rehearsals: each stored report of
// practice questions asked of a stream before it goes on air. Version 60
// sits after console/experiment's 50s, where it was first applied.
func rehearsalMigrations() []Migration {
	return []Migration{
		{Version: 60, Name: "rehearsals", SQL: []string{
			`CREATE TABLE rehearsals (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				stream_id TEXT NOT NULL,
				fingerprint TEXT NOT NULL,
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				report TEXT NOT NULL)`,
			`CREATE INDEX rehearsals_stream ON rehearsals(stream_id, created_at)`,
		}},
	}
}

// Rehearsal is one stored rehearsal of a stream. Report is the console's
// report as JSON; the store keeps it whole.
type Rehearsal struct {
	ID       string
	StreamID string
	// Fingerprint identifies the stream setup the rehearsal ran against.
	Fingerprint string
	CreatedBy   string
	CreatedAt   time.Time
	Report      json.RawMessage
}

// AddRehearsal stores a rehearsal of a stream of the scope's organisation.
func (s *Store) AddRehearsal(ctx context.Context, sc Scope, r Rehearsal) error {
	if !json.Valid(r.Report) {
		return fmt.Errorf("rehearsal %s: report is not valid JSON", r.ID)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO rehearsals(id, org_id, stream_id, fingerprint, created_by, created_at, report)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, sc.OrgID, r.StreamID, r.Fingerprint, r.CreatedBy,
		r.CreatedAt.UTC().Format(time.RFC3339Nano), string(r.Report))
	if err != nil {
		return fmt.Errorf("rehearsal %s: store: %w", r.ID, err)
	}
	return nil
}

// LatestRehearsal returns the latest stored rehearsal of a stream of the
// scope's organisation, or ErrNotFound before the first.
func (s *Store) LatestRehearsal(ctx context.Context, sc Scope, streamID string) (*Rehearsal, error) {
	var r Rehearsal
	var created, report string
	err := s.db.QueryRowContext(ctx, `SELECT id, stream_id, fingerprint, created_by, created_at, report FROM rehearsals
		WHERE org_id = ? AND stream_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, sc.OrgID, streamID).
		Scan(&r.ID, &r.StreamID, &r.Fingerprint, &r.CreatedBy, &created, &report)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("rehearsal of stream %s: read: %w", streamID, err)
	}
	if r.CreatedAt, err = time.Parse(time.RFC3339Nano, created); err != nil {
		return nil, fmt.Errorf("rehearsal %s: created_at %q: %w", r.ID, created, err)
	}
	r.Report = json.RawMessage(report)
	return &r, nil
}
