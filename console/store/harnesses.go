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

// harnessMigrations are this area's tables: immutable harness versions,
// drafts under optimistic revisions, release-gate runs with the scores and
// failed items they produced, releases, and the harness-evolution loops.
func harnessMigrations() []Migration {
	return []Migration{
		{Version: 20, Name: "harness versions, drafts, gates, releases, evolution", SQL: []string{
			`CREATE TABLE harness_versions (
				org_id TEXT NOT NULL REFERENCES orgs(id),
				version TEXT NOT NULL,
				name TEXT NOT NULL,
				document TEXT NOT NULL,
				parent TEXT NOT NULL DEFAULT '',
				author_id TEXT NOT NULL DEFAULT '',
				notes TEXT NOT NULL DEFAULT '',
				created_at TEXT NOT NULL,
				PRIMARY KEY (org_id, version))`,
			`CREATE TABLE harness_drafts (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				name TEXT NOT NULL,
				base_version TEXT NOT NULL DEFAULT '',
				format TEXT NOT NULL CHECK (format IN ('json', 'yaml')),
				document TEXT NOT NULL,
				notes TEXT NOT NULL DEFAULT '',
				author_id TEXT NOT NULL,
				loop_id TEXT NOT NULL DEFAULT '',
				committed_version TEXT NOT NULL DEFAULT '',
				revision INTEGER NOT NULL DEFAULT 1,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL)`,
			`CREATE INDEX harness_drafts_org ON harness_drafts(org_id, updated_at)`,
			`CREATE TABLE harness_gates (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				candidate TEXT NOT NULL,
				baseline TEXT NOT NULL,
				model TEXT NOT NULL,
				suites TEXT NOT NULL,
				n INTEGER NOT NULL,
				state TEXT NOT NULL CHECK (state IN ('running', 'passed', 'regressed', 'failed', 'cancelled')),
				done INTEGER NOT NULL DEFAULT 0,
				total INTEGER NOT NULL DEFAULT 0,
				report TEXT NOT NULL DEFAULT '{}',
				error TEXT NOT NULL DEFAULT '',
				loop_id TEXT NOT NULL DEFAULT '',
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				finished_at TEXT NOT NULL DEFAULT '')`,
			`CREATE INDEX harness_gates_org ON harness_gates(org_id, created_at)`,
			`CREATE TABLE harness_scores (
				org_id TEXT NOT NULL REFERENCES orgs(id),
				model TEXT NOT NULL,
				version TEXT NOT NULL,
				suite TEXT NOT NULL,
				score REAL NOT NULL,
				n INTEGER NOT NULL,
				categories TEXT NOT NULL DEFAULT '{}',
				gate_id TEXT NOT NULL,
				created_at TEXT NOT NULL,
				PRIMARY KEY (org_id, model, version, suite))`,
			`CREATE TABLE harness_failures (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				gate_id TEXT NOT NULL REFERENCES harness_gates(id) ON DELETE CASCADE,
				version TEXT NOT NULL,
				suite TEXT NOT NULL,
				item_id TEXT NOT NULL,
				category TEXT NOT NULL,
				cause TEXT NOT NULL,
				score REAL NOT NULL,
				deductions TEXT NOT NULL,
				reply TEXT NOT NULL,
				created_at TEXT NOT NULL)`,
			`CREATE INDEX harness_failures_gate ON harness_failures(org_id, gate_id)`,
			`CREATE TABLE harness_releases (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				version TEXT NOT NULL,
				streams TEXT NOT NULL,
				canary_percent INTEGER NOT NULL DEFAULT 0,
				gate_id TEXT NOT NULL DEFAULT '',
				gate_report TEXT NOT NULL DEFAULT '{}',
				override TEXT NOT NULL DEFAULT '',
				loop_id TEXT NOT NULL DEFAULT '',
				state TEXT NOT NULL CHECK (state IN ('active', 'rolled_back')),
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				rolled_back_by TEXT NOT NULL DEFAULT '',
				rolled_back_at TEXT NOT NULL DEFAULT '')`,
			`CREATE INDEX harness_releases_org ON harness_releases(org_id, created_at)`,
			`CREATE TABLE evolution_loops (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				cause TEXT NOT NULL,
				title TEXT NOT NULL,
				base_version TEXT NOT NULL,
				state TEXT NOT NULL,
				created_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL)`,
			`CREATE TABLE evolution_events (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				loop_id TEXT NOT NULL REFERENCES evolution_loops(id) ON DELETE CASCADE,
				kind TEXT NOT NULL CHECK (kind IN ('diagnosis', 'edit', 'evaluation', 'decision')),
				summary TEXT NOT NULL,
				detail TEXT NOT NULL DEFAULT '{}',
				actor TEXT NOT NULL,
				created_at TEXT NOT NULL)`,
			`CREATE INDEX evolution_events_loop ON evolution_events(loop_id, id)`,
		}},
		{Version: 21, Name: "merchants' requests for a harness version", SQL: []string{
			`CREATE TABLE harness_requests (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				stream_id TEXT NOT NULL REFERENCES streams(id) ON DELETE CASCADE,
				version TEXT NOT NULL,
				note TEXT NOT NULL DEFAULT '',
				state TEXT NOT NULL CHECK (state IN ('open', 'granted')),
				release_id TEXT NOT NULL DEFAULT '',
				requested_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				decided_at TEXT NOT NULL DEFAULT '')`,
			`CREATE INDEX harness_requests_org ON harness_requests(org_id, created_at)`,
		}},
	}
}

// collectRows scans every row with scan and closes rows.
func collectRows[T any](rows *sql.Rows, err error, scan func(interface{ Scan(...any) error }) (*T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// ErrAmbiguous is returned when a short harness version names more than one
// stored version.
var ErrAmbiguous = errors.New("ambiguous: names more than one version")

// harnessOperatorOnly keeps harness management to operators: merchants and
// developers see nothing of drafts, gates, releases or evolution loops.
func harnessOperatorOnly(sc Scope) error {
	if sc.Role != RoleOperator {
		return ErrNotFound
	}
	return nil
}

// HarnessVersion is one immutable harness version of an organisation: its
// content hash (harness.Version), the canonical JSON document and where
// it came from.
type HarnessVersion struct {
	Version  string          `json:"version"`
	Name     string          `json:"name"`
	Document json.RawMessage `json:"document,omitempty"`
	// Parent is the version it was edited from ("" for a seed).
	Parent   string    `json:"parent"`
	AuthorID string    `json:"author_id"`
	Author   string    `json:"author"`
	Notes    string    `json:"notes"`
	Created  time.Time `json:"created_at"`
}

const harnessVersionColumns = `version, name, document, parent, author_id,
	COALESCE((SELECT username FROM users WHERE users.id = author_id), ''), notes, created_at`

func scanHarnessVersion(row interface{ Scan(...any) error }) (*HarnessVersion, error) {
	var v HarnessVersion
	var doc, at string
	if err := row.Scan(&v.Version, &v.Name, &doc, &v.Parent, &v.AuthorID, &v.Author, &v.Notes, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	v.Document, v.Created = json.RawMessage(doc), parseStamp(at)
	return &v, nil
}

// PutHarnessVersion stores v in the scope's organisation unless that
// version is already there: versions are content hashes, so storing the
// same content twice keeps the first record (author, parent, notes). It
// returns the stored record and whether it was new. sc.UserID is the
// author; an operator scope without a user is the console seeding the store.
func (s *Store) PutHarnessVersion(ctx context.Context, sc Scope, v HarnessVersion) (*HarnessVersion, bool, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, false, err
	}
	switch {
	case !strings.HasPrefix(v.Version, "sha256:") || len(v.Version) != len("sha256:")+64:
		return nil, false, fmt.Errorf("harness version: %q is not a sha256 content hash", v.Version)
	case !json.Valid(v.Document):
		return nil, false, fmt.Errorf("harness version %s: document is not valid JSON", v.Version)
	}
	res, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO harness_versions(org_id, version, name, document, parent, author_id, notes, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sc.OrgID, v.Version, v.Name, string(v.Document), v.Parent, sc.UserID, v.Notes, s.stamp())
	if err != nil {
		return nil, false, fmt.Errorf("harness version: %w", err)
	}
	n, _ := res.RowsAffected()
	got, err := s.HarnessVersion(ctx, sc, v.Version)
	return got, n == 1, err
}

// HarnessVersion reads one version of the scope's organisation by its full
// hash, or by a prefix of at least 8 hex digits of it (the 12-digit short
// form the console and the CLI show). Every role of the organisation may
// read versions: a merchant's stream and a developer's plugin run under
// them.
func (s *Store) HarnessVersion(ctx context.Context, sc Scope, ref string) (*HarnessVersion, error) {
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) < 8 || len(hex) > 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return nil, ErrNotFound
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+harnessVersionColumns+` FROM harness_versions
		WHERE org_id = ? AND substr(version, 1, ?) = ? LIMIT 2`, sc.OrgID, len("sha256:")+len(hex), "sha256:"+hex)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []*HarnessVersion
	for rows.Next() {
		v, err := scanHarnessVersion(rows)
		if err != nil {
			return nil, err
		}
		found = append(found, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, ErrNotFound
	case 1:
		return found[0], nil
	}
	return nil, ErrAmbiguous
}

// HarnessVersions lists the organisation's versions, newest first.
func (s *Store) HarnessVersions(ctx context.Context, sc Scope) ([]HarnessVersion, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+harnessVersionColumns+` FROM harness_versions WHERE org_id = ?
		ORDER BY created_at DESC, version`, sc.OrgID)
	return collectRows(rows, err, scanHarnessVersion)
}

// HarnessDraft is a harness being edited: the document as the operator
// wrote it (JSON or YAML), based on a version. Revision guards concurrent
// saves like a stream's.
type HarnessDraft struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	BaseVersion string `json:"base_version"`
	Format      string `json:"format"`
	Document    string `json:"document"`
	Notes       string `json:"notes"`
	AuthorID    string `json:"author_id"`
	Author      string `json:"author"`
	// LoopID is the evolution loop the draft was opened from, if any.
	LoopID string `json:"loop_id"`
	// CommittedVersion is the version the draft was last committed as.
	CommittedVersion string    `json:"committed_version"`
	Revision         int64     `json:"revision"`
	Created          time.Time `json:"created_at"`
	Updated          time.Time `json:"updated_at"`
}

const harnessDraftColumns = `id, name, base_version, format, document, notes, author_id, ` +
	`COALESCE((SELECT username FROM users WHERE users.id = author_id), ''), loop_id, committed_version, revision, created_at, updated_at`

func scanHarnessDraft(row interface{ Scan(...any) error }) (*HarnessDraft, error) {
	var d HarnessDraft
	var created, updated string
	err := row.Scan(&d.ID, &d.Name, &d.BaseVersion, &d.Format, &d.Document, &d.Notes, &d.AuthorID, &d.Author, &d.LoopID,
		&d.CommittedVersion, &d.Revision, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	d.Created, d.Updated = parseStamp(created), parseStamp(updated)
	return &d, nil
}

func checkHarnessDraft(d *HarnessDraft) error {
	if d.Format != "json" && d.Format != "yaml" {
		return fmt.Errorf("harness draft: format %q, want json or yaml", d.Format)
	}
	if strings.TrimSpace(d.Name) == "" {
		return fmt.Errorf("harness draft: name is required")
	}
	return nil
}

// CreateHarnessDraft adds a draft authored by the scope's user.
func (s *Store) CreateHarnessDraft(ctx context.Context, sc Scope, d HarnessDraft) (*HarnessDraft, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	if err := checkHarnessDraft(&d); err != nil {
		return nil, err
	}
	d.ID = NewID()
	now := s.stamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_drafts(id, org_id, name, base_version, format, document, notes, author_id,
		loop_id, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
		d.ID, sc.OrgID, d.Name, d.BaseVersion, d.Format, d.Document, d.Notes, sc.UserID, d.LoopID, now, now)
	if err != nil {
		return nil, fmt.Errorf("harness draft: %w", err)
	}
	return s.HarnessDraft(ctx, sc, d.ID)
}

// HarnessDraft reads one draft of the scope's organisation.
func (s *Store) HarnessDraft(ctx context.Context, sc Scope, id string) (*HarnessDraft, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	return scanHarnessDraft(s.db.QueryRowContext(ctx, `SELECT `+harnessDraftColumns+` FROM harness_drafts WHERE id = ? AND org_id = ?`, id, sc.OrgID))
}

// HarnessDrafts lists the organisation's drafts, most recently saved first.
func (s *Store) HarnessDrafts(ctx context.Context, sc Scope) ([]HarnessDraft, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+harnessDraftColumns+` FROM harness_drafts WHERE org_id = ? ORDER BY updated_at DESC, id`, sc.OrgID)
	return collectRows(rows, err, scanHarnessDraft)
}

// SaveHarnessDraft writes d's name, format, document and notes if
// d.Revision is still the stored one; otherwise it returns ErrConflict and
// changes nothing, so the second of two concurrent saves loses nothing
// silently: its author reloads and applies the edit again.
func (s *Store) SaveHarnessDraft(ctx context.Context, sc Scope, d HarnessDraft) (*HarnessDraft, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	if err := checkHarnessDraft(&d); err != nil {
		return nil, err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE harness_drafts SET name = ?, format = ?, document = ?, notes = ?, revision = revision + 1,
		updated_at = ? WHERE id = ? AND org_id = ? AND revision = ?`, d.Name, d.Format, d.Document, d.Notes, s.stamp(), d.ID, sc.OrgID, d.Revision)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.HarnessDraft(ctx, sc, d.ID); err != nil {
			return nil, err
		}
		return nil, ErrConflict
	}
	return s.HarnessDraft(ctx, sc, d.ID)
}

// CommitHarnessDraft stores v as an immutable version made from the draft
// id at the given revision and records it on the draft, in one
// transaction; a stale revision is ErrConflict.
func (s *Store) CommitHarnessDraft(ctx context.Context, sc Scope, id string, revision int64, v HarnessVersion) (*HarnessVersion, *HarnessDraft, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, nil, err
	}
	if !json.Valid(v.Document) {
		return nil, nil, fmt.Errorf("harness version %s: document is not valid JSON", v.Version)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var rev int64
		err := tx.QueryRowContext(ctx, `SELECT revision FROM harness_drafts WHERE id = ? AND org_id = ?`, id, sc.OrgID).Scan(&rev)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if rev != revision {
			return ErrConflict
		}
		now := s.stamp()
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO harness_versions(org_id, version, name, document, parent, author_id, notes, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sc.OrgID, v.Version, v.Name, string(v.Document), v.Parent, sc.UserID, v.Notes, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE harness_drafts SET committed_version = ?, revision = revision + 1, updated_at = ? WHERE id = ?`,
			v.Version, now, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	got, err := s.HarnessVersion(ctx, sc, v.Version)
	if err != nil {
		return nil, nil, err
	}
	d, err := s.HarnessDraft(ctx, sc, id)
	return got, d, err
}

// DeleteHarnessDraft removes a draft.
func (s *Store) DeleteHarnessDraft(ctx context.Context, sc Scope, id string) error {
	if err := harnessOperatorOnly(sc); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM harness_drafts WHERE id = ? AND org_id = ?`, id, sc.OrgID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Gate states.
const (
	GateRunning   = "running"
	GatePassed    = "passed"
	GateRegressed = "regressed"
	GateFailed    = "failed"
	GateCancelled = "cancelled"
)

// HarnessGate is one run of the release gate: the evaluation suites run
// against a model under a candidate version and a baseline version.
type HarnessGate struct {
	ID        string   `json:"id"`
	Candidate string   `json:"candidate"`
	Baseline  string   `json:"baseline"`
	Model     string   `json:"model"`
	Suites    []string `json:"suites"`
	N         int      `json:"n"`
	State     string   `json:"state"`
	Done      int      `json:"done"`
	Total     int      `json:"total"`
	// Report is the comparison the console computed (its shape belongs to
	// the console package).
	Report     json.RawMessage `json:"report"`
	Error      string          `json:"error,omitempty"`
	LoopID     string          `json:"loop_id"`
	CreatedBy  string          `json:"created_by"`
	Created    time.Time       `json:"created_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

const harnessGateColumns = `id, candidate, baseline, model, suites, n, state, done, total, report, error, loop_id, ` +
	`COALESCE((SELECT username FROM users WHERE users.id = created_by), ''), created_at, finished_at`

func scanHarnessGate(row interface{ Scan(...any) error }) (*HarnessGate, error) {
	var g HarnessGate
	var suites, report, created, finished string
	err := row.Scan(&g.ID, &g.Candidate, &g.Baseline, &g.Model, &suites, &g.N, &g.State, &g.Done, &g.Total, &report, &g.Error,
		&g.LoopID, &g.CreatedBy, &created, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(suites), &g.Suites); err != nil {
		return nil, fmt.Errorf("gate %s: suites: %w", g.ID, err)
	}
	g.Report, g.Created, g.FinishedAt = json.RawMessage(report), parseStamp(created), optionalStamp(finished)
	return &g, nil
}

// CreateHarnessGate records a gate run as running.
func (s *Store) CreateHarnessGate(ctx context.Context, sc Scope, g HarnessGate) (*HarnessGate, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	suites, _ := json.Marshal(g.Suites)
	g.ID = NewID()
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_gates(id, org_id, candidate, baseline, model, suites, n, state, total, loop_id,
		created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`,
		g.ID, sc.OrgID, g.Candidate, g.Baseline, g.Model, string(suites), g.N, g.Total, g.LoopID, sc.UserID, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("harness gate: %w", err)
	}
	return s.HarnessGate(ctx, sc, g.ID)
}

// HarnessGate reads one gate run.
func (s *Store) HarnessGate(ctx context.Context, sc Scope, id string) (*HarnessGate, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	return scanHarnessGate(s.db.QueryRowContext(ctx, `SELECT `+harnessGateColumns+` FROM harness_gates WHERE id = ? AND org_id = ?`, id, sc.OrgID))
}

// HarnessGates lists the organisation's gate runs, newest first, at most limit.
func (s *Store) HarnessGates(ctx context.Context, sc Scope, limit int) ([]HarnessGate, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+harnessGateColumns+` FROM harness_gates WHERE org_id = ? ORDER BY created_at DESC, id LIMIT ?`,
		sc.OrgID, limit)
	return collectRows(rows, err, scanHarnessGate)
}

// SetHarnessGateProgress records how many items of a running gate are done.
func (s *Store) SetHarnessGateProgress(ctx context.Context, id string, done, total int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE harness_gates SET done = ?, total = ? WHERE id = ? AND state = 'running'`, done, total, id)
	return err
}

// HarnessScore is a model's score on one suite under one harness version,
// from the latest gate that ran it.
type HarnessScore struct {
	Model      string          `json:"model"`
	Version    string          `json:"version"`
	Suite      string          `json:"suite"`
	Score      float64         `json:"score"`
	N          int             `json:"n"`
	Categories json.RawMessage `json:"categories"`
	GateID     string          `json:"gate_id"`
	At         time.Time       `json:"at"`
}

// HarnessFailure is an item a gate's model did not get fully right, with
// the cause the console derived from the grader's deductions.
type HarnessFailure struct {
	ID         int64     `json:"id"`
	GateID     string    `json:"gate_id"`
	Version    string    `json:"version"`
	Suite      string    `json:"suite"`
	ItemID     string    `json:"item_id"`
	Category   string    `json:"category"`
	Cause      string    `json:"cause"`
	Score      float64   `json:"score"`
	Deductions []string  `json:"deductions"`
	Reply      string    `json:"reply"`
	At         time.Time `json:"at"`
}

// FinishHarnessGate ends a running gate with its state, report (or error),
// the per-suite scores it measured and the items that failed, in one
// transaction. A gate that already ended is ErrConflict.
func (s *Store) FinishHarnessGate(ctx context.Context, sc Scope, id, state string, report json.RawMessage, errMsg string,
	scores []HarnessScore, failures []HarnessFailure) error {
	if len(report) == 0 {
		report = json.RawMessage(`{}`)
	}
	if !json.Valid(report) {
		return fmt.Errorf("gate %s: report is not valid JSON", id)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		res, err := tx.ExecContext(ctx, `UPDATE harness_gates SET state = ?, report = ?, error = ?, finished_at = ?
			WHERE id = ? AND org_id = ? AND state = 'running'`, state, string(report), errMsg, now, id, sc.OrgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrConflict
		}
		for _, score := range scores {
			cats := score.Categories
			if len(cats) == 0 {
				cats = json.RawMessage(`{}`)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO harness_scores(org_id, model, version, suite, score, n, categories, gate_id, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(org_id, model, version, suite) DO UPDATE SET
				score = excluded.score, n = excluded.n, categories = excluded.categories, gate_id = excluded.gate_id, created_at = excluded.created_at`,
				sc.OrgID, score.Model, score.Version, score.Suite, score.Score, score.N, string(cats), id, now); err != nil {
				return err
			}
		}
		for _, f := range failures {
			ded, _ := json.Marshal(harnessStrings(f.Deductions))
			if _, err := tx.ExecContext(ctx, `INSERT INTO harness_failures(org_id, gate_id, version, suite, item_id, category, cause, score,
				deductions, reply, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				sc.OrgID, id, f.Version, f.Suite, f.ItemID, f.Category, f.Cause, f.Score, string(ded), f.Reply, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func harnessStrings(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// AbandonRunningGates marks every gate still running as failed: the
// process that ran them is gone (a restart), so they will never finish.
func (s *Store) AbandonRunningGates(ctx context.Context, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE harness_gates SET state = 'failed', error = ?, finished_at = ? WHERE state = 'running'`,
		reason, s.stamp())
	return err
}

// HarnessScores lists every stored score of the organisation.
func (s *Store) HarnessScores(ctx context.Context, sc Scope) ([]HarnessScore, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT model, version, suite, score, n, categories, gate_id, created_at FROM harness_scores
		WHERE org_id = ? ORDER BY model, version, suite`, sc.OrgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HarnessScore
	for rows.Next() {
		var h HarnessScore
		var cats, at string
		if err := rows.Scan(&h.Model, &h.Version, &h.Suite, &h.Score, &h.N, &cats, &h.GateID, &at); err != nil {
			return nil, err
		}
		h.Categories, h.At = json.RawMessage(cats), parseStamp(at)
		out = append(out, h)
	}
	return out, rows.Err()
}

// HarnessFailures lists failed items of the organisation's gates, newest
// gate first: of one gate when gateID is set, of one version when version
// is set, at most limit.
func (s *Store) HarnessFailures(ctx context.Context, sc Scope, gateID, version string, limit int) ([]HarnessFailure, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, gate_id, version, suite, item_id, category, cause, score, deductions, reply, created_at
		FROM harness_failures WHERE org_id = ? AND (? = '' OR gate_id = ?) AND (? = '' OR version = ?)
		ORDER BY id DESC LIMIT ?`, sc.OrgID, gateID, gateID, version, version, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HarnessFailure
	for rows.Next() {
		var f HarnessFailure
		var ded, at string
		if err := rows.Scan(&f.ID, &f.GateID, &f.Version, &f.Suite, &f.ItemID, &f.Category, &f.Cause, &f.Score, &ded, &f.Reply, &at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(ded), &f.Deductions); err != nil {
			return nil, fmt.Errorf("failure %d: deductions: %w", f.ID, err)
		}
		f.At = parseStamp(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// Release states.
const (
	ReleaseActive     = "active"
	ReleaseRolledBack = "rolled_back"
)

// ReleaseStream is one stream a release moved, and the version it ran before.
type ReleaseStream struct {
	StreamID string `json:"stream_id"`
	Name     string `json:"name"`
	Previous string `json:"previous"`
	// Model is the model that served the stream when the release was made
	// (a stream may have a model server of its own), GateID the gate of
	// that model the release relied on; both empty in releases made before
	// streams had models of their own.
	Model  string `json:"model,omitempty"`
	GateID string `json:"gate_id,omitempty"`
}

// HarnessRelease binds a harness version to streams: chosen ones, or a
// canary share of the organisation's streams. GateReport is the gate the
// release passed; Override, when set, is why it shipped without one.
type HarnessRelease struct {
	ID            string          `json:"id"`
	Version       string          `json:"version"`
	Streams       []ReleaseStream `json:"streams"`
	CanaryPercent int             `json:"canary_percent"`
	GateID        string          `json:"gate_id"`
	GateReport    json.RawMessage `json:"gate_report"`
	Override      string          `json:"override"`
	LoopID        string          `json:"loop_id"`
	State         string          `json:"state"`
	CreatedBy     string          `json:"created_by"`
	Created       time.Time       `json:"created_at"`
	RolledBackBy  string          `json:"rolled_back_by,omitempty"`
	RolledBackAt  *time.Time      `json:"rolled_back_at,omitempty"`
}

const harnessReleaseColumns = `id, version, streams, canary_percent, gate_id, gate_report, override, loop_id, state, ` +
	`COALESCE((SELECT username FROM users WHERE users.id = created_by), created_by), created_at, ` +
	`COALESCE((SELECT username FROM users WHERE users.id = rolled_back_by), rolled_back_by), rolled_back_at`

func scanHarnessRelease(row interface{ Scan(...any) error }) (*HarnessRelease, error) {
	var r HarnessRelease
	var streams, report, created, rolled string
	err := row.Scan(&r.ID, &r.Version, &streams, &r.CanaryPercent, &r.GateID, &report, &r.Override, &r.LoopID, &r.State,
		&r.CreatedBy, &created, &r.RolledBackBy, &rolled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(streams), &r.Streams); err != nil {
		return nil, fmt.Errorf("release %s: streams: %w", r.ID, err)
	}
	r.GateReport, r.Created, r.RolledBackAt = json.RawMessage(report), parseStamp(created), optionalStamp(rolled)
	return &r, nil
}

// CreateHarnessRelease records a release. It does not move the streams:
// the caller binds each through SetStreamHarness (the release lists the
// streams and their previous versions, which rollback restores). An
// operator scope without a user is the console recording the first-run
// release; its author is then "system".
func (s *Store) CreateHarnessRelease(ctx context.Context, sc Scope, r HarnessRelease) (*HarnessRelease, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	by := sc.UserID
	if by == "" {
		by = "system"
	}
	if r.Streams == nil {
		r.Streams = []ReleaseStream{}
	}
	if len(r.GateReport) == 0 {
		r.GateReport = json.RawMessage(`{}`)
	}
	if !json.Valid(r.GateReport) {
		return nil, fmt.Errorf("release: gate report is not valid JSON")
	}
	streams, _ := json.Marshal(r.Streams)
	r.ID = NewID()
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_releases(id, org_id, version, streams, canary_percent, gate_id, gate_report,
		override, loop_id, state, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
		r.ID, sc.OrgID, r.Version, string(streams), r.CanaryPercent, r.GateID, string(r.GateReport), r.Override, r.LoopID, by, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	return s.harnessRelease(ctx, sc.OrgID, r.ID)
}

func (s *Store) harnessRelease(ctx context.Context, orgID, id string) (*HarnessRelease, error) {
	return scanHarnessRelease(s.db.QueryRowContext(ctx, `SELECT `+harnessReleaseColumns+` FROM harness_releases WHERE id = ? AND org_id = ?`, id, orgID))
}

// HarnessRelease reads one release.
func (s *Store) HarnessRelease(ctx context.Context, sc Scope, id string) (*HarnessRelease, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	return s.harnessRelease(ctx, sc.OrgID, id)
}

// HarnessReleases lists the organisation's releases, newest first.
func (s *Store) HarnessReleases(ctx context.Context, sc Scope) ([]HarnessRelease, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	return s.harnessReleases(ctx, sc.OrgID)
}

func (s *Store) harnessReleases(ctx context.Context, orgID string) ([]HarnessRelease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+harnessReleaseColumns+` FROM harness_releases WHERE org_id = ? ORDER BY created_at DESC, id`, orgID)
	return collectRows(rows, err, scanHarnessRelease)
}

// HasHarnessReleases reports whether the organisation has any release.
func (s *Store) HasHarnessReleases(ctx context.Context, orgID string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM harness_releases WHERE org_id = ?`, orgID).Scan(&n)
	return n > 0, err
}

// MarkHarnessReleaseRolledBack moves an active release to rolled back; a
// release already rolled back is ErrConflict, so two rollbacks at once
// restore the streams once.
func (s *Store) MarkHarnessReleaseRolledBack(ctx context.Context, sc Scope, id string) (*HarnessRelease, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE harness_releases SET state = 'rolled_back', rolled_back_by = ?, rolled_back_at = ?
		WHERE id = ? AND org_id = ? AND state = 'active'`, sc.UserID, s.stamp(), id, sc.OrgID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.harnessRelease(ctx, sc.OrgID, id); err != nil {
			return nil, err
		}
		return nil, ErrConflict
	}
	return s.harnessRelease(ctx, sc.OrgID, id)
}

// Evolution loop states.
const (
	LoopOpen       = "open"
	LoopShipped    = "shipped"
	LoopRolledBack = "rolled_back"
	LoopAbandoned  = "abandoned"
)

// EvolutionLoop is one round of the harness-evolution loop: a diagnosed
// failure cause, the edit made for it, its evaluation and the decision.
type EvolutionLoop struct {
	ID          string           `json:"id"`
	Cause       string           `json:"cause"`
	Title       string           `json:"title"`
	BaseVersion string           `json:"base_version"`
	State       string           `json:"state"`
	CreatedBy   string           `json:"created_by"`
	Created     time.Time        `json:"created_at"`
	Updated     time.Time        `json:"updated_at"`
	Events      []EvolutionEvent `json:"events"`
}

// EvolutionEvent is one step of a loop: kind is diagnosis, edit,
// evaluation or decision.
type EvolutionEvent struct {
	Kind    string          `json:"kind"`
	Summary string          `json:"summary"`
	Detail  json.RawMessage `json:"detail"`
	Actor   string          `json:"actor"`
	At      time.Time       `json:"at"`
}

// CreateEvolutionLoop starts a loop with its diagnosis event.
func (s *Store) CreateEvolutionLoop(ctx context.Context, sc Scope, l EvolutionLoop, diagnosis EvolutionEvent) (*EvolutionLoop, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	if strings.TrimSpace(l.Title) == "" {
		return nil, fmt.Errorf("evolution loop: title is required")
	}
	l.ID = NewID()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		if _, err := tx.ExecContext(ctx, `INSERT INTO evolution_loops(id, org_id, cause, title, base_version, state, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'open', ?, ?, ?)`, l.ID, sc.OrgID, l.Cause, l.Title, l.BaseVersion, sc.UserID, now, now); err != nil {
			return err
		}
		diagnosis.Kind = "diagnosis"
		return s.insertEvolutionEvent(ctx, tx, sc, l.ID, diagnosis, now)
	})
	if err != nil {
		return nil, fmt.Errorf("evolution loop: %w", err)
	}
	return s.EvolutionLoop(ctx, sc, l.ID)
}

func (s *Store) insertEvolutionEvent(ctx context.Context, tx *sql.Tx, sc Scope, loopID string, ev EvolutionEvent, now string) error {
	if len(ev.Detail) == 0 {
		ev.Detail = json.RawMessage(`{}`)
	}
	if !json.Valid(ev.Detail) {
		return fmt.Errorf("evolution event: detail is not valid JSON")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO evolution_events(loop_id, kind, summary, detail, actor, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		loopID, ev.Kind, ev.Summary, string(ev.Detail), sc.UserID, now)
	return err
}

// AddEvolutionEvent appends an event to a loop and, when state is not
// empty, moves the loop to that state.
func (s *Store) AddEvolutionEvent(ctx context.Context, sc Scope, loopID string, ev EvolutionEvent, state string) error {
	if err := harnessOperatorOnly(sc); err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		res, err := tx.ExecContext(ctx, `UPDATE evolution_loops SET state = CASE WHEN ? = '' THEN state ELSE ? END, updated_at = ?
			WHERE id = ? AND org_id = ?`, state, state, now, loopID, sc.OrgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return s.insertEvolutionEvent(ctx, tx, sc, loopID, ev, now)
	})
}

// EvolutionLoop reads one loop with its events in order.
func (s *Store) EvolutionLoop(ctx context.Context, sc Scope, id string) (*EvolutionLoop, error) {
	loops, err := s.evolutionLoops(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if len(loops) == 0 {
		return nil, ErrNotFound
	}
	return &loops[0], nil
}

// EvolutionLoops lists the organisation's loops, most recently active
// first, each with its events: the history of the harness's evolution.
func (s *Store) EvolutionLoops(ctx context.Context, sc Scope) ([]EvolutionLoop, error) {
	return s.evolutionLoops(ctx, sc, "")
}

func (s *Store) evolutionLoops(ctx context.Context, sc Scope, id string) ([]EvolutionLoop, error) {
	if err := harnessOperatorOnly(sc); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, cause, title, base_version, state,
		COALESCE((SELECT username FROM users WHERE users.id = created_by), ''), created_at, updated_at
		FROM evolution_loops WHERE org_id = ? AND (? = '' OR id = ?) ORDER BY updated_at DESC, id`, sc.OrgID, id, id)
	if err != nil {
		return nil, err
	}
	var out []EvolutionLoop
	index := map[string]int{}
	for rows.Next() {
		var l EvolutionLoop
		var created, updated string
		if err := rows.Scan(&l.ID, &l.Cause, &l.Title, &l.BaseVersion, &l.State, &l.CreatedBy, &created, &updated); err != nil {
			rows.Close()
			return nil, err
		}
		l.Created, l.Updated, l.Events = parseStamp(created), parseStamp(updated), []EvolutionEvent{}
		index[l.ID] = len(out)
		out = append(out, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	evs, err := s.db.QueryContext(ctx, `SELECT e.loop_id, e.kind, e.summary, e.detail,
		COALESCE((SELECT username FROM users WHERE users.id = e.actor), ''), e.created_at
		FROM evolution_events e JOIN evolution_loops l ON l.id = e.loop_id
		WHERE l.org_id = ? AND (? = '' OR l.id = ?) ORDER BY e.id`, sc.OrgID, id, id)
	if err != nil {
		return nil, err
	}
	defer evs.Close()
	for evs.Next() {
		var loop, detail, at string
		var e EvolutionEvent
		if err := evs.Scan(&loop, &e.Kind, &e.Summary, &detail, &e.Actor, &at); err != nil {
			return nil, err
		}
		e.Detail, e.At = json.RawMessage(detail), parseStamp(at)
		if i, ok := index[loop]; ok {
			out[i].Events = append(out[i].Events, e)
		}
	}
	return out, evs.Err()
}

// Harness request states.
const (
	RequestOpen    = "open"
	RequestGranted = "granted"
)

// HarnessRequest is a merchant asking for their stream to run a harness
// version. It binds nothing: an operator's release does, and marks the
// request granted.
type HarnessRequest struct {
	ID          string     `json:"id"`
	StreamID    string     `json:"stream_id"`
	StreamName  string     `json:"stream_name"`
	Version     string     `json:"version"`
	Note        string     `json:"note"`
	State       string     `json:"state"`
	ReleaseID   string     `json:"release_id,omitempty"`
	RequestedBy string     `json:"requested_by"`
	Created     time.Time  `json:"created_at"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
}

const harnessRequestColumns = `r.id, r.stream_id, COALESCE(st.name, ''), r.version, r.note, r.state, r.release_id, ` +
	`COALESCE((SELECT username FROM users WHERE users.id = r.requested_by), r.requested_by), r.created_at, r.decided_at`

func scanHarnessRequest(row interface{ Scan(...any) error }) (*HarnessRequest, error) {
	var r HarnessRequest
	var created, decided string
	err := row.Scan(&r.ID, &r.StreamID, &r.StreamName, &r.Version, &r.Note, &r.State, &r.ReleaseID, &r.RequestedBy, &created, &decided)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Created, r.DecidedAt = parseStamp(created), optionalStamp(decided)
	return &r, nil
}

// CreateHarnessRequest records a request for a stream the scope sees.
func (s *Store) CreateHarnessRequest(ctx context.Context, sc Scope, r HarnessRequest) (*HarnessRequest, error) {
	if _, err := s.Stream(ctx, sc, r.StreamID); err != nil {
		return nil, err
	}
	r.ID = NewID()
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_requests(id, org_id, stream_id, version, note, state, requested_by, created_at)
		VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`, r.ID, sc.OrgID, r.StreamID, r.Version, r.Note, sc.UserID, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("harness request: %w", err)
	}
	list, err := s.harnessRequests(ctx, sc, "r.id = ?", r.ID)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return &list[0], nil
}

// HarnessRequests lists the requests of the streams the scope sees,
// newest first: an operator's organisation, a merchant's own streams.
func (s *Store) HarnessRequests(ctx context.Context, sc Scope) ([]HarnessRequest, error) {
	return s.harnessRequests(ctx, sc, "1 = 1")
}

func (s *Store) harnessRequests(ctx context.Context, sc Scope, where string, args ...any) ([]HarnessRequest, error) {
	if sc.Role != RoleOperator && sc.Role != RoleMerchant {
		return nil, ErrNotFound
	}
	q := `SELECT ` + harnessRequestColumns + ` FROM harness_requests r JOIN streams st ON st.id = r.stream_id
		WHERE r.org_id = ? AND (? = 'operator' OR st.merchant_id = ?) AND ` + where + ` ORDER BY r.created_at DESC, r.id`
	rows, err := s.db.QueryContext(ctx, q, append([]any{sc.OrgID, string(sc.Role), sc.MerchantID}, args...)...)
	return collectRows(rows, err, scanHarnessRequest)
}

// GrantHarnessRequests marks the open requests of a stream for version
// granted by a release.
func (s *Store) GrantHarnessRequests(ctx context.Context, sc Scope, streamID, version, releaseID string) error {
	if err := harnessOperatorOnly(sc); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `UPDATE harness_requests SET state = 'granted', release_id = ?, decided_at = ?
		WHERE org_id = ? AND stream_id = ? AND version = ? AND state = 'open'`, releaseID, s.stamp(), sc.OrgID, streamID, version)
	return err
}
