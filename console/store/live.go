package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// liveMigrations are this area's tables: the record of every live turn
// (the traces the live view, the evolution page and audits read).
func liveMigrations() []Migration {
	return []Migration{
		{Version: 40, Name: "live turns", SQL: []string{
			// seq orders turns in the order they were stored; ids are
			// the runtime's turn ids.
			`CREATE TABLE live_turns (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				id TEXT NOT NULL UNIQUE,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				merchant_id TEXT NOT NULL REFERENCES merchants(id),
				stream_id TEXT NOT NULL REFERENCES streams(id) ON DELETE CASCADE,
				session_id TEXT NOT NULL,
				source TEXT NOT NULL CHECK (source IN ('live', 'api')),
				event TEXT NOT NULL,
				viewers TEXT NOT NULL DEFAULT '[]',
				input TEXT NOT NULL,
				reply TEXT NOT NULL,
				outcome TEXT NOT NULL,
				reason TEXT NOT NULL DEFAULT '',
				harness_version TEXT NOT NULL,
				effective_version TEXT NOT NULL,
				model TEXT NOT NULL,
				steps TEXT NOT NULL DEFAULT '[]',
				messages TEXT NOT NULL DEFAULT '[]',
				actions TEXT NOT NULL DEFAULT '[]',
				timing TEXT NOT NULL DEFAULT '{}',
				total_ms REAL NOT NULL,
				first_chunk_ms REAL NOT NULL,
				created_at TEXT NOT NULL)`,
			`CREATE INDEX live_turns_stream ON live_turns(stream_id, seq)`,
			`CREATE INDEX live_turns_org ON live_turns(org_id, seq)`,
		}},
	}
}

// Turn sources.
const (
	// TurnSourceLive is a turn of a stream's live session (viewer chat or
	// strategy narration).
	TurnSourceLive = "live"
	// TurnSourceAPI is a turn run through POST /v1/chat/completions.
	TurnSourceAPI = "api"
)

// LiveTurn is the stored trace of one turn of a stream: what came in, what
// was said, every hook decision and tool call (Steps, the runtime's trace
// as JSON) and where the time went.
type LiveTurn struct {
	ID         string `json:"id"`
	OrgID      string `json:"org_id"`
	MerchantID string `json:"merchant_id"`
	StreamID   string `json:"stream_id"`
	SessionID  string `json:"session_id"`
	// Source is TurnSourceLive or TurnSourceAPI.
	Source string `json:"source"`
	// Event is the hook event that started the turn: viewer_message or
	// narration_tick.
	Event   string   `json:"event"`
	Viewers []string `json:"viewers"`
	// Input is the viewer message (merged duplicates answered at once
	// share it) or the strategy's instruction.
	Input   string `json:"input"`
	Reply   string `json:"reply"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// HarnessVersion is the version the stream was bound to;
	// EffectiveVersion the hash of the harness the turn really ran: the
	// bound version with the stream's persona and banned claims applied.
	HarnessVersion   string          `json:"harness_version"`
	EffectiveVersion string          `json:"effective_version"`
	Model            string          `json:"model"`
	Steps            json.RawMessage `json:"steps"`
	Messages         json.RawMessage `json:"messages"`
	Actions          json.RawMessage `json:"actions"`
	Timing           json.RawMessage `json:"timing"`
	TotalMS          float64         `json:"total_ms"`
	FirstChunkMS     float64         `json:"first_chunk_ms"`
	CreatedAt        time.Time       `json:"created_at"`
	// Seq orders a stream's turns; pass it as LiveTurnQuery.Before to page.
	Seq int64 `json:"seq"`
}

const liveTurnColumns = `seq, id, org_id, merchant_id, stream_id, session_id, source, event, viewers, input, reply, outcome,
	reason, harness_version, effective_version, model, steps, messages, actions, timing, total_ms, first_chunk_ms, created_at`

func scanLiveTurn(row interface{ Scan(...any) error }) (*LiveTurn, error) {
	var t LiveTurn
	var viewers, steps, messages, actions, timing, created string
	err := row.Scan(&t.Seq, &t.ID, &t.OrgID, &t.MerchantID, &t.StreamID, &t.SessionID, &t.Source, &t.Event, &viewers, &t.Input,
		&t.Reply, &t.Outcome, &t.Reason, &t.HarnessVersion, &t.EffectiveVersion, &t.Model, &steps, &messages, &actions, &timing,
		&t.TotalMS, &t.FirstChunkMS, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(viewers), &t.Viewers); err != nil {
		return nil, fmt.Errorf("live turn %s: viewers: %w", t.ID, err)
	}
	t.Steps, t.Messages, t.Actions, t.Timing = json.RawMessage(steps), json.RawMessage(messages), json.RawMessage(actions), json.RawMessage(timing)
	t.CreatedAt = parseStamp(created)
	return &t, nil
}

// jsonOr returns raw as text, or def when raw is empty; invalid JSON is an
// error naming the field.
func jsonOr(field string, raw json.RawMessage, def string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return def, nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("live turn: %s is not valid JSON", field)
	}
	return string(raw), nil
}

// AddLiveTurn stores a turn of stream t.StreamID. The stream's
// organisation and merchant are read from the stream itself, so a turn can
// never be filed under another tenant; the caller is the runtime side of
// the console, which has already checked who may drive the stream.
func (s *Store) AddLiveTurn(ctx context.Context, t LiveTurn) error {
	switch {
	case t.ID == "":
		return errors.New("live turn: id is required")
	case t.StreamID == "":
		return errors.New("live turn: stream id is required")
	case t.Source != TurnSourceLive && t.Source != TurnSourceAPI:
		return fmt.Errorf("live turn: source %q is not live or api", t.Source)
	}
	if t.Viewers == nil {
		t.Viewers = []string{}
	}
	viewers, _ := json.Marshal(t.Viewers)
	var docs [4]string
	for i, f := range []struct {
		name string
		raw  json.RawMessage
		def  string
	}{{"steps", t.Steps, "[]"}, {"messages", t.Messages, "[]"}, {"actions", t.Actions, "[]"}, {"timing", t.Timing, "{}"}} {
		v, err := jsonOr(f.name, f.raw, f.def)
		if err != nil {
			return err
		}
		docs[i] = v
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO live_turns(id, org_id, merchant_id, stream_id, session_id, source, event, viewers,
		input, reply, outcome, reason, harness_version, effective_version, model, steps, messages, actions, timing, total_ms,
		first_chunk_ms, created_at)
		SELECT ?, org_id, merchant_id, id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM streams WHERE id = ?`,
		t.ID, t.SessionID, t.Source, t.Event, string(viewers), t.Input, t.Reply, t.Outcome, t.Reason, t.HarnessVersion,
		t.EffectiveVersion, t.Model, docs[0], docs[1], docs[2], docs[3], t.TotalMS, t.FirstChunkMS, s.stamp(), t.StreamID)
	if err != nil {
		return fmt.Errorf("live turn %s: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("live turn %s: stream %q: %w", t.ID, t.StreamID, ErrNotFound)
	}
	return nil
}

// LiveTurnQuery selects stored turns.
type LiveTurnQuery struct {
	// StreamID limits the turns to one stream; empty means every stream
	// the scope sees.
	StreamID string
	// Outcome limits them to one outcome (replied, denied, safe_line, …).
	Outcome string
	// Source limits them to TurnSourceLive or TurnSourceAPI.
	Source string
	// Before pages backwards: only turns with a smaller Seq.
	Before int64
	// Limit bounds the result; default 50, at most 1000.
	Limit int
}

// liveScopeFilter limits live_turns rows to what a scope sees, as
// scopeFilter does for streams.
const liveScopeFilter = `org_id = ? AND (? = 'operator' OR merchant_id = ?)`

// LiveTurns lists the newest turns the scope sees that match q, newest
// first.
func (s *Store) LiveTurns(ctx context.Context, sc Scope, q LiveTurnQuery) ([]LiveTurn, error) {
	where := []string{liveScopeFilter}
	args := scopeArgs(sc)
	if q.StreamID != "" {
		where, args = append(where, "stream_id = ?"), append(args, q.StreamID)
	}
	if q.Outcome != "" {
		where, args = append(where, "outcome = ?"), append(args, q.Outcome)
	}
	if q.Source != "" {
		where, args = append(where, "source = ?"), append(args, q.Source)
	}
	if q.Before > 0 {
		where, args = append(where, "seq < ?"), append(args, q.Before)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	rows, err := s.db.QueryContext(ctx, `SELECT `+liveTurnColumns+` FROM live_turns WHERE `+strings.Join(where, " AND ")+
		` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LiveTurn
	for rows.Next() {
		t, err := scanLiveTurn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// LiveTurn reads one turn the scope sees.
func (s *Store) LiveTurn(ctx context.Context, sc Scope, id string) (*LiveTurn, error) {
	return scanLiveTurn(s.db.QueryRowContext(ctx, `SELECT `+liveTurnColumns+` FROM live_turns WHERE id = ? AND `+liveScopeFilter,
		append([]any{id}, scopeArgs(sc)...)...))
}

// TurnLatency is the timing of one stored turn, for latency statistics.
type TurnLatency struct {
	TotalMS      float64
	FirstChunkMS float64
	Outcome      string
}

// LiveLatencies returns the timings of a stream's newest turns (at most
// limit), newest first; ErrNotFound when the scope does not see the stream.
func (s *Store) LiveLatencies(ctx context.Context, sc Scope, streamID string, limit int) ([]TurnLatency, error) {
	if _, err := s.Stream(ctx, sc, streamID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT total_ms, first_chunk_ms, outcome FROM live_turns WHERE stream_id = ?
		ORDER BY seq DESC LIMIT ?`, streamID, max(limit, 1))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TurnLatency
	for rows.Next() {
		var l TurnLatency
		if err := rows.Scan(&l.TotalMS, &l.FirstChunkMS, &l.Outcome); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// SetStreamOnAir switches a stream on or off air. Like any change of the
// stream it increases the revision, so a form loaded before the switch
// cannot silently switch it back.
func (s *Store) SetStreamOnAir(ctx context.Context, sc Scope, id string, onAir bool) (*Stream, error) {
	if _, err := s.db.ExecContext(ctx, `UPDATE streams SET on_air = ?, revision = revision + 1, updated_at = ?
		WHERE id = ? AND on_air != ? AND `+scopeFilter, append([]any{onAir, s.stamp(), id, onAir}, scopeArgs(sc)...)...); err != nil {
		return nil, err
	}
	// No row changed when the stream is invisible (Stream says so) or
	// already in the wanted state (no change, no new revision).
	return s.Stream(ctx, sc, id)
}

// StreamRef names a stream and the organisation it belongs to.
type StreamRef struct {
	ID    string
	OrgID string
}

// OnAirStreams lists every stream marked on air, across organisations:
// the console resumes their sessions when it starts.
func (s *Store) OnAirStreams(ctx context.Context) ([]StreamRef, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, org_id FROM streams WHERE on_air ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StreamRef
	for rows.Next() {
		var r StreamRef
		if err := rows.Scan(&r.ID, &r.OrgID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// StreamInOrg reads a stream by id for the console's own background work
// (resuming on-air sessions), within one organisation.
func (s *Store) StreamInOrg(ctx context.Context, orgID, id string) (*Stream, error) {
	return scanStream(s.db.QueryRowContext(ctx, `SELECT `+streamColumns+` FROM streams WHERE id = ? AND org_id = ?`, id, orgID))
}
