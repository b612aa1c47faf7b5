package experiment

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Migrations returns the statements that create the experiment tables. The
// console's migration runner applies them, in order, as one version.
// Times are Unix nanoseconds (UTC); 0 is "not set".
func Migrations() []string {
	return []string{
		`CREATE TABLE experiment_experiments (
			id TEXT PRIMARY KEY,
			name TEXT NOT NULL,
			state TEXT NOT NULL CHECK (state IN ('draft', 'running', 'stopped')),
			definition TEXT NOT NULL,
			created_at INTEGER NOT NULL,
			started_at INTEGER NOT NULL DEFAULT 0,
			stopped_at INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE experiment_exposures (
			experiment_id TEXT NOT NULL REFERENCES experiment_experiments(id) ON DELETE CASCADE,
			stream_id TEXT NOT NULL,
			viewer_id TEXT NOT NULL,
			unit_id TEXT NOT NULL,
			arm TEXT NOT NULL,
			at INTEGER NOT NULL,
			PRIMARY KEY (experiment_id, stream_id, viewer_id)
		)`,
		`CREATE INDEX experiment_exposures_unit ON experiment_exposures (experiment_id, unit_id)`,
		`CREATE TABLE experiment_sessions (
			id TEXT PRIMARY KEY,
			stream_id TEXT NOT NULL,
			started_at INTEGER NOT NULL,
			ended_at INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX experiment_sessions_stream ON experiment_sessions (stream_id, started_at)`,
		`CREATE TABLE experiment_turns (
			id TEXT PRIMARY KEY,
			experiment_id TEXT NOT NULL REFERENCES experiment_experiments(id) ON DELETE CASCADE,
			stream_id TEXT NOT NULL,
			viewer_id TEXT NOT NULL,
			arm TEXT NOT NULL,
			at INTEGER NOT NULL,
			latency_ns INTEGER NOT NULL,
			items TEXT NOT NULL,
			violation INTEGER NOT NULL,
			shed INTEGER NOT NULL
		)`,
		`CREATE INDEX experiment_turns_experiment ON experiment_turns (experiment_id, at)`,
		`CREATE TABLE experiment_events (
			id TEXT PRIMARY KEY,
			stream_id TEXT NOT NULL,
			viewer_id TEXT NOT NULL,
			item_id TEXT NOT NULL,
			kind TEXT NOT NULL,
			amount_minor INTEGER NOT NULL,
			currency TEXT NOT NULL,
			at INTEGER NOT NULL,
			experiment_id TEXT NOT NULL,
			arm TEXT NOT NULL,
			received_at INTEGER NOT NULL
		)`,
		`CREATE INDEX experiment_events_stream ON experiment_events (stream_id, at)`,
	}
}

// ErrNotFound is returned (wrapped) for an experiment id that does not
// exist.
var ErrNotFound = errors.New("not found")

// ErrState is returned (wrapped) for an operation the experiment's state
// does not allow: starting a running experiment, assigning in a stopped
// one.
var ErrState = errors.New("wrong experiment state")

// MaxBatch is the most events one Ingest call takes.
const MaxBatch = 10000

// Store keeps experiments, exposures, sessions, turns and commerce events
// in SQLite (the tables of Migrations). Every write is one transaction, so
// a killed process loses nothing it reported as stored.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

// NewStore returns a store over a database the migrations were applied
// to. now is the clock for creation and receipt times; nil means time.Now.
func NewStore(db *sql.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Create stores a new draft experiment. An empty ID gets a fresh UUID.
func (s *Store) Create(ctx context.Context, e Experiment) (Experiment, error) {
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	if e.State != "" && e.State != StateDraft {
		return Experiment{}, fmt.Errorf("experiment %q: create: state %q: %w (a new experiment is a draft)", e.ID, e.State, ErrState)
	}
	e.State, e.Started, e.Stopped = StateDraft, time.Time{}, time.Time{}
	e.Created = s.now().UTC()
	e = e.withDefaults()
	if err := e.Validate(); err != nil {
		return Experiment{}, err
	}
	def, err := json.Marshal(e)
	if err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: %w", e.ID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO experiment_experiments (id, name, state, definition, created_at) VALUES (?, ?, ?, ?, ?)`,
		e.ID, e.Name, e.State, string(def), nanos(e.Created))
	if err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: create: %w", e.ID, err)
	}
	return e, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getExperiment(ctx context.Context, q querier, id string) (Experiment, error) {
	var def, state string
	var started, stopped int64
	err := q.QueryRowContext(ctx, `SELECT definition, state, started_at, stopped_at FROM experiment_experiments WHERE id = ?`, id).Scan(&def, &state, &started, &stopped)
	if errors.Is(err, sql.ErrNoRows) {
		return Experiment{}, fmt.Errorf("experiment %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: %w", id, err)
	}
	var e Experiment
	if err := json.Unmarshal([]byte(def), &e); err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: stored definition: %w", id, err)
	}
	e.State, e.Started, e.Stopped = State(state), fromNanos(started), fromNanos(stopped)
	return e, nil
}

// Get returns an experiment.
func (s *Store) Get(ctx context.Context, id string) (Experiment, error) {
	return getExperiment(ctx, s.db, id)
}

// List returns every experiment, newest first.
func (s *Store) List(ctx context.Context) ([]Experiment, error) {
	return s.listWhere(ctx, `SELECT id FROM experiment_experiments ORDER BY created_at DESC, id`)
}

// listWhere returns the experiments whose ids query selects, in its order.
// The ids are read in full before any experiment is, so that the query's
// rows are closed while Get runs its own queries.
func (s *Store) listWhere(ctx context.Context, query string, args ...any) ([]Experiment, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
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
	out := make([]Experiment, 0, len(ids))
	for _, id := range ids {
		e, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Start moves a draft experiment to running at time at.
func (s *Store) Start(ctx context.Context, id string, at time.Time) (Experiment, error) {
	return s.transition(ctx, id, StateDraft, StateRunning, at)
}

// Stop moves a running experiment to stopped at time at. Data after at is
// not counted, and tagged events after it are rejected.
func (s *Store) Stop(ctx context.Context, id string, at time.Time) (Experiment, error) {
	return s.transition(ctx, id, StateRunning, StateStopped, at)
}

func (s *Store) transition(ctx context.Context, id string, from, to State, at time.Time) (Experiment, error) {
	if at.IsZero() {
		return Experiment{}, fmt.Errorf("experiment %q: %s: time is missing", id, to)
	}
	// One conditional UPDATE: concurrent callers cannot both move the
	// experiment, and SQLite takes the write lock at once instead of
	// upgrading a read.
	query := `UPDATE experiment_experiments SET state = ?, started_at = ? WHERE id = ? AND state = ?`
	args := []any{to, nanos(at), id, from}
	if to == StateStopped {
		query = `UPDATE experiment_experiments SET state = ?, stopped_at = ? WHERE id = ? AND state = ? AND started_at < ?`
		args = append(args, nanos(at))
	}
	out, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return Experiment{}, fmt.Errorf("experiment %q: %s: %w", id, to, err)
	}
	e, err := s.Get(ctx, id)
	if err != nil {
		return Experiment{}, err
	}
	if n, _ := out.RowsAffected(); n == 0 {
		if e.State != from {
			return Experiment{}, fmt.Errorf("experiment %q is %s, not %s: %w", id, e.State, from, ErrState)
		}
		return Experiment{}, fmt.Errorf("experiment %q: stop time %s is not after the start %s", id, at.UTC().Format(time.RFC3339Nano), e.Started.Format(time.RFC3339Nano))
	}
	return e, nil
}

// Assign returns the arm a stream's viewer gets in a running experiment
// and records the exposure (the first one of a stream and viewer is
// kept). viewerID may be empty for a stream-unit experiment. The session
// serving the viewer runs the returned arm.
func (s *Store) Assign(ctx context.Context, experimentID, streamID, viewerID string, at time.Time) (Arm, error) {
	arms, err := s.AssignBatch(ctx, experimentID, []Visit{{Stream: streamID, Viewer: viewerID, Time: at}})
	if err != nil {
		return Arm{}, err
	}
	return arms[0], nil
}

// Visit is a viewer (or, for a stream-unit experiment, a stream) arriving
// at a time.
type Visit struct {
	Stream string
	Viewer string
	Time   time.Time
}

// AssignBatch assigns and records many visits in one transaction, all or
// none; the arms come back in the visits' order.
func (s *Store) AssignBatch(ctx context.Context, experimentID string, visits []Visit) ([]Arm, error) {
	e, err := s.Get(ctx, experimentID)
	if err != nil {
		return nil, err
	}
	arms := make([]Arm, len(visits))
	for i, v := range visits {
		if !e.Running(v.Time) {
			return nil, fmt.Errorf("experiment %q is %s at %s: %w", e.ID, e.State, v.Time.UTC().Format(time.RFC3339), ErrState)
		}
		unit, err := e.UnitID(v.Stream, v.Viewer)
		if err != nil {
			return nil, err
		}
		if arms[i], err = e.Assign(unit); err != nil {
			return nil, err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for i, v := range visits {
		unit, _ := e.UnitID(v.Stream, v.Viewer)
		_, err = tx.ExecContext(ctx, `INSERT INTO experiment_exposures (experiment_id, stream_id, viewer_id, unit_id, arm, at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (experiment_id, stream_id, viewer_id) DO NOTHING`, e.ID, v.Stream, v.Viewer, unit, arms[i].Name, nanos(v.Time))
		if err != nil {
			return nil, fmt.Errorf("experiment %q: record exposure: %w", e.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("experiment %q: record exposures: %w", e.ID, err)
	}
	return arms, nil
}

// RecordSession stores (or updates, by id) a stream's time on air; call it
// when a session starts and again when it ends. The start is the first
// call's, and an end never moves back: the turns of a stream's sessions
// may be recorded out of order.
func (s *Store) RecordSession(ctx context.Context, sess StreamSession) error {
	switch {
	case sess.ID == "" || sess.Stream == "":
		return fmt.Errorf("stream session %q: id and stream_id are required", sess.ID)
	case sess.Start.IsZero():
		return fmt.Errorf("stream session %q: start is missing", sess.ID)
	case !sess.End.IsZero() && sess.End.Before(sess.Start):
		return fmt.Errorf("stream session %q: end is before start", sess.ID)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO experiment_sessions (id, stream_id, started_at, ended_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET ended_at = MAX(ended_at, excluded.ended_at)`, sess.ID, sess.Stream, nanos(sess.Start), nanos(sess.End))
	if err != nil {
		return fmt.Errorf("stream session %q: %w", sess.ID, err)
	}
	return nil
}

// RecordTurn stores a turn of a running experiment; a turn id stored
// before is kept as it was.
func (s *Store) RecordTurn(ctx context.Context, t TurnRecord) error {
	return s.RecordTurns(ctx, []TurnRecord{t})
}

// RecordTurns stores turns in one transaction, all or none.
func (s *Store) RecordTurns(ctx context.Context, turns []TurnRecord) error {
	exps := map[string]Experiment{}
	for _, t := range turns {
		if t.ID == "" || t.Stream == "" {
			return fmt.Errorf("turn %q: id and stream_id are required", t.ID)
		}
		e, ok := exps[t.Experiment]
		if !ok {
			var err error
			if e, err = s.Get(ctx, t.Experiment); err != nil {
				return fmt.Errorf("turn %q: %w", t.ID, err)
			}
			exps[t.Experiment] = e
		}
		switch {
		case e.ArmIndex(t.Arm) < 0:
			return fmt.Errorf("turn %q: arm %q is not an arm of experiment %q", t.ID, t.Arm, e.ID)
		case !e.Running(t.Time):
			return fmt.Errorf("turn %q at %s: experiment %q is not running then: %w", t.ID, t.Time.UTC().Format(time.RFC3339), e.ID, ErrState)
		case t.Latency < 0 || t.Shed < 0:
			return fmt.Errorf("turn %q: negative latency or shed count", t.ID)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range turns {
		items, err := json.Marshal(t.Items)
		if err != nil {
			return err
		}
		violation := 0
		if t.Violation {
			violation = 1
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO experiment_turns (id, experiment_id, stream_id, viewer_id, arm, at, latency_ns, items, violation, shed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			t.ID, t.Experiment, t.Stream, t.Viewer, t.Arm, nanos(t.Time), int64(t.Latency), string(items), violation, t.Shed)
		if err != nil {
			return fmt.Errorf("turn %q: %w", t.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record turns: %w", err)
	}
	return nil
}

// Ingest validates and stores a batch of commerce events in one
// transaction. Each event is accepted, a duplicate of a stored event
// (same id and content: counted, not stored again), or rejected with the
// reason; an id reused with other content is rejected. The error is for
// the batch as a whole (too large, the database failing); nothing of a
// batch that returns an error is stored.
func (s *Store) Ingest(ctx context.Context, events []Event, v Validator) (BatchResult, error) {
	if len(events) > MaxBatch {
		return BatchResult{}, fmt.Errorf("batch of %d events is larger than %d", len(events), MaxBatch)
	}
	res := BatchResult{Events: make([]EventResult, 0, len(events))}
	// Experiments named by tagged events are read before the transaction,
	// so that its first statement is a write: a transaction that reads and
	// then writes can fail under a concurrent writer in WAL mode, where
	// SQLite's busy handler does not retry it.
	exps := map[string]*Experiment{}
	for _, ev := range events {
		if _, seen := exps[ev.Experiment]; ev.Experiment == "" || seen {
			continue
		}
		e, err := s.Get(ctx, ev.Experiment)
		switch {
		case errors.Is(err, ErrNotFound):
			exps[ev.Experiment] = nil
		case err != nil:
			return BatchResult{}, err
		default:
			exps[ev.Experiment] = &e
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return BatchResult{}, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO experiment_events (id, stream_id, viewer_id, item_id, kind, amount_minor, currency, at, experiment_id, arm, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return BatchResult{}, err
	}
	defer ins.Close()
	received := nanos(s.now())
	for i, ev := range events {
		r := EventResult{Index: i, ID: ev.ID, Status: StatusAccepted}
		if err := v.Check(ev); err != nil {
			r.Status, r.Reason = StatusRejected, err.Error()
			res.add(r)
			continue
		}
		ev.Time = ev.Time.UTC()
		if err := checkTagged(ev, exps[ev.Experiment]); err != nil {
			r.Status, r.Reason = StatusRejected, err.Error()
			res.add(r)
			continue
		}
		out, err := ins.ExecContext(ctx, ev.ID, ev.Stream, ev.Viewer, ev.Item, ev.Kind, ev.AmountMinor, ev.Currency, nanos(ev.Time), ev.Experiment, ev.Arm, received)
		if err != nil {
			return BatchResult{}, fmt.Errorf("event %q: %w", ev.ID, err)
		}
		if n, _ := out.RowsAffected(); n == 0 {
			stored, err := loadEvent(ctx, tx, ev.ID)
			if err != nil {
				return BatchResult{}, err
			}
			if sameEvent(stored, ev) {
				r.Status, r.Reason = StatusDuplicate, "event id already stored"
			} else {
				r.Status, r.Reason = StatusRejected, "event id already stored with different content"
			}
		}
		res.add(r)
	}
	if err := tx.Commit(); err != nil {
		return BatchResult{}, fmt.Errorf("commit events: %w", err)
	}
	return res, nil
}

// sameEvent compares events field by field, times by instant.
func sameEvent(a, b Event) bool {
	ta, tb := a.Time, b.Time
	a.Time, b.Time = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}

const eventColumns = `id, stream_id, viewer_id, item_id, kind, amount_minor, currency, at, experiment_id, arm`

type scanner interface{ Scan(dest ...any) error }

func scanEvent(row scanner) (Event, error) {
	var ev Event
	var at int64
	err := row.Scan(&ev.ID, &ev.Stream, &ev.Viewer, &ev.Item, &ev.Kind, &ev.AmountMinor, &ev.Currency, &at, &ev.Experiment, &ev.Arm)
	ev.Time = fromNanos(at)
	return ev, err
}

func loadEvent(ctx context.Context, q querier, id string) (Event, error) {
	ev, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM experiment_events WHERE id = ?`, id))
	if err != nil {
		return Event{}, fmt.Errorf("event %q: %w", id, err)
	}
	return ev, nil
}

// CountEvents returns how many commerce events are stored.
func (s *Store) CountEvents(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM experiment_events`).Scan(&n)
	return n, err
}

// Data loads what an experiment's report is computed from: its exposures,
// turns, the sessions and the events of its streams from the pre-period
// to the stop time (or now).
func (s *Store) Data(ctx context.Context, id string) (Experiment, Data, error) {
	e, err := s.Get(ctx, id)
	if err != nil {
		return Experiment{}, Data{}, err
	}
	var d Data
	if e.Started.IsZero() {
		return e, d, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT stream_id, viewer_id, unit_id, arm, at FROM experiment_exposures WHERE experiment_id = ? ORDER BY at, stream_id, viewer_id`, id)
	if err != nil {
		return e, d, err
	}
	for rows.Next() {
		var x Exposure
		var at int64
		if err := rows.Scan(&x.Stream, &x.Viewer, &x.Unit, &x.Arm, &at); err != nil {
			rows.Close()
			return e, d, err
		}
		x.Time = fromNanos(at)
		d.Exposures = append(d.Exposures, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return e, d, err
	}
	end := nanos(e.Stopped)
	if end == 0 {
		end = nanos(s.now())
	}
	from := nanos(e.Started.Add(-e.PrePeriod))
	streams := `SELECT DISTINCT stream_id FROM experiment_exposures WHERE experiment_id = ?`

	rows, err = s.db.QueryContext(ctx, `SELECT id, stream_id, started_at, ended_at FROM experiment_sessions
		WHERE stream_id IN (`+streams+`) AND started_at <= ? AND (ended_at = 0 OR ended_at >= ?) ORDER BY started_at, id`, id, end, nanos(e.Started))
	if err != nil {
		return e, d, err
	}
	for rows.Next() {
		var ss StreamSession
		var a, b int64
		if err := rows.Scan(&ss.ID, &ss.Stream, &a, &b); err != nil {
			rows.Close()
			return e, d, err
		}
		ss.Start, ss.End = fromNanos(a), fromNanos(b)
		d.Sessions = append(d.Sessions, ss)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return e, d, err
	}

	rows, err = s.db.QueryContext(ctx, `SELECT id, stream_id, viewer_id, arm, at, latency_ns, items, violation, shed FROM experiment_turns WHERE experiment_id = ? ORDER BY at, id`, id)
	if err != nil {
		return e, d, err
	}
	for rows.Next() {
		t := TurnRecord{Experiment: id}
		var at, lat int64
		var items string
		var violation int
		if err := rows.Scan(&t.ID, &t.Stream, &t.Viewer, &t.Arm, &at, &lat, &items, &violation, &t.Shed); err != nil {
			rows.Close()
			return e, d, err
		}
		t.Time, t.Latency, t.Violation = fromNanos(at), time.Duration(lat), violation != 0
		if err := json.Unmarshal([]byte(items), &t.Items); err != nil {
			rows.Close()
			return e, d, fmt.Errorf("turn %q: stored items: %w", t.ID, err)
		}
		d.Turns = append(d.Turns, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return e, d, err
	}

	rows, err = s.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM experiment_events
		WHERE stream_id IN (`+streams+`) AND at >= ? AND at <= ? AND (experiment_id = '' OR experiment_id = ?) ORDER BY at, id`, id, from, end, id)
	if err != nil {
		return e, d, err
	}
	defer rows.Close()
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return e, d, err
		}
		d.Events = append(d.Events, ev)
	}
	return e, d, rows.Err()
}

// Report computes an experiment's report from the stored data. A running
// experiment is reported as of now (the store's clock) unless opts.AsOf
// says otherwise.
func (s *Store) Report(ctx context.Context, id string, opts AnalyzeOptions) (*Report, error) {
	e, d, err := s.Data(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.Started.IsZero() {
		return nil, fmt.Errorf("experiment %q has not started: %w", id, ErrState)
	}
	if opts.AsOf.IsZero() && e.Stopped.IsZero() {
		opts.AsOf = s.now().UTC()
	}
	return Analyze(e, d, opts)
}
