package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Stream is a merchant's live stream and its configuration. Strategy and
// Catalog are JSON documents whose shapes the runtime and the plugins own
// (runtime.Strategy, harness/catalog); the console validates them.
type Stream struct {
	ID             string          `json:"id"`
	OrgID          string          `json:"org_id"`
	MerchantID     string          `json:"merchant_id"`
	Name           string          `json:"name"`
	Persona        string          `json:"persona"`
	Strategy       json.RawMessage `json:"strategy"`
	Catalog        json.RawMessage `json:"catalog,omitempty"`
	BannedClaims   []string        `json:"banned_claims"`
	Currency       string          `json:"currency"`
	HarnessVersion string          `json:"harness_version"`
	OnAir          bool            `json:"on_air"`
	// Revision increases with every change; an update names the revision
	// it was based on and fails with ErrConflict if it is stale.
	Revision int64 `json:"revision"`
	// CatalogRevision increases with every change of the catalog (a
	// catalog save, an import, a stream update that changes it); a
	// catalog save names the one it was based on (UpdateStreamCatalog).
	CatalogRevision int64     `json:"catalog_revision"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

const streamColumns = `id, org_id, merchant_id, name, persona, strategy, catalog, banned_claims, currency,
	harness_version, on_air, revision, catalog_revision, created_at, updated_at`

func scanStream(row interface{ Scan(...any) error }) (*Stream, error) {
	var st Stream
	var strategy, catalog, banned, created, updated string
	err := row.Scan(&st.ID, &st.OrgID, &st.MerchantID, &st.Name, &st.Persona, &strategy, &catalog, &banned, &st.Currency,
		&st.HarnessVersion, &st.OnAir, &st.Revision, &st.CatalogRevision, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st.Strategy, st.Catalog = json.RawMessage(strategy), json.RawMessage(catalog)
	if err := json.Unmarshal([]byte(banned), &st.BannedClaims); err != nil {
		return nil, fmt.Errorf("stream %s: banned claims: %w", st.ID, err)
	}
	st.CreatedAt, st.UpdatedAt = parseStamp(created), parseStamp(updated)
	return &st, nil
}

// scopeFilter is the WHERE clause that limits streams to what sc sees.
const scopeFilter = `org_id = ? AND (? = 'operator' OR merchant_id = ?)`

func scopeArgs(sc Scope) []any { return []any{sc.OrgID, string(sc.Role), sc.MerchantID} }

func normalize(st *Stream) error {
	if st.Name == "" {
		return fmt.Errorf("stream: name is required")
	}
	if len(st.Strategy) == 0 {
		st.Strategy = json.RawMessage(`{}`)
	}
	if len(st.Catalog) == 0 {
		st.Catalog = json.RawMessage(`{}`)
	}
	if !json.Valid(st.Strategy) {
		return fmt.Errorf("stream: strategy is not valid JSON")
	}
	if !json.Valid(st.Catalog) {
		return fmt.Errorf("stream: catalog is not valid JSON")
	}
	if st.BannedClaims == nil {
		st.BannedClaims = []string{}
	}
	if st.Currency == "" {
		st.Currency = "CNY"
	}
	return nil
}

// CreateStream adds a stream for a merchant the scope sees.
func (s *Store) CreateStream(ctx context.Context, sc Scope, st Stream) (*Stream, error) {
	if !sc.SeesMerchant(st.MerchantID) {
		return nil, ErrNotFound
	}
	if err := normalize(&st); err != nil {
		return nil, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM merchants WHERE id = ? AND org_id = ?`, st.MerchantID, sc.OrgID).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("stream: merchant %q: %w", st.MerchantID, ErrNotFound)
	}
	st.ID, st.OrgID, st.Revision = NewID(), sc.OrgID, 1
	banned, _ := json.Marshal(st.BannedClaims)
	now := s.stamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO streams(id, org_id, merchant_id, name, persona, strategy, catalog, banned_claims,
		currency, harness_version, on_air, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
		st.ID, st.OrgID, st.MerchantID, st.Name, st.Persona, string(st.Strategy), string(st.Catalog), string(banned),
		st.Currency, st.HarnessVersion, st.OnAir, now, now)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	return s.Stream(ctx, sc, st.ID)
}

// Stream reads one stream the scope sees.
func (s *Store) Stream(ctx context.Context, sc Scope, id string) (*Stream, error) {
	return scanStream(s.db.QueryRowContext(ctx, `SELECT `+streamColumns+` FROM streams WHERE id = ? AND `+scopeFilter,
		append([]any{id}, scopeArgs(sc)...)...))
}

// Streams lists the streams the scope sees (catalogs left out).
func (s *Store) Streams(ctx context.Context, sc Scope) ([]Stream, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+streamColumns+` FROM streams WHERE `+scopeFilter+` ORDER BY name, id`, scopeArgs(sc)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Stream
	for rows.Next() {
		st, err := scanStream(rows)
		if err != nil {
			return nil, err
		}
		st.Catalog = nil
		out = append(out, *st)
	}
	return out, rows.Err()
}

// UpdateStream writes st's configuration (name, persona, strategy, catalog,
// banned claims, currency, on air) if st.Revision is still current;
// otherwise it returns ErrConflict and changes nothing. It leaves the
// harness version alone: only a release changes it (SetStreamHarness).
func (s *Store) UpdateStream(ctx context.Context, sc Scope, st Stream) (*Stream, error) {
	if err := normalize(&st); err != nil {
		return nil, err
	}
	banned, _ := json.Marshal(st.BannedClaims)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var rev int64
		err := tx.QueryRowContext(ctx, `SELECT revision FROM streams WHERE id = ? AND `+scopeFilter,
			append([]any{st.ID}, scopeArgs(sc)...)...).Scan(&rev)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if rev != st.Revision {
			return ErrConflict
		}
		// The catalog revision moves only when the catalog does, so that a
		// catalog editor open beside a settings form sees its own conflicts.
		_, err = tx.ExecContext(ctx, `UPDATE streams SET name = ?, persona = ?, strategy = ?,
			catalog_revision = catalog_revision + (catalog IS NOT ?), catalog = ?, banned_claims = ?,
			currency = ?, on_air = ?, revision = revision + 1, updated_at = ? WHERE id = ?`,
			st.Name, st.Persona, string(st.Strategy), string(st.Catalog), string(st.Catalog), string(banned), st.Currency,
			st.OnAir, s.stamp(), st.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Stream(ctx, sc, st.ID)
}

// UpdateStreamCatalog replaces a stream's catalog if baseRevision is still
// its catalog revision; otherwise it returns ErrConflict and changes
// nothing. The stream's revision moves too: a stream update based on the
// old revision carries the old catalog and must not write it back.
func (s *Store) UpdateStreamCatalog(ctx context.Context, sc Scope, id string, catalog json.RawMessage, baseRevision int64) (*Stream, error) {
	if !json.Valid(catalog) {
		return nil, fmt.Errorf("stream: catalog is not valid JSON")
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var rev int64
		err := tx.QueryRowContext(ctx, `SELECT catalog_revision FROM streams WHERE id = ? AND `+scopeFilter,
			append([]any{id}, scopeArgs(sc)...)...).Scan(&rev)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if rev != baseRevision {
			return ErrConflict
		}
		_, err = tx.ExecContext(ctx, `UPDATE streams SET catalog = ?, catalog_revision = catalog_revision + 1,
			revision = revision + 1, updated_at = ? WHERE id = ?`, string(catalog), s.stamp(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Stream(ctx, sc, id)
}

// SetStreamHarness binds a stream to a harness version without a revision
// check (publishing and rollback act on many streams at once); the stream
// picks it up at its next turn boundary.
func (s *Store) SetStreamHarness(ctx context.Context, sc Scope, id, version string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE streams SET harness_version = ?, revision = revision + 1, updated_at = ?
		WHERE id = ? AND `+scopeFilter, append([]any{version, s.stamp(), id}, scopeArgs(sc)...)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteStream removes a stream the scope sees.
func (s *Store) DeleteStream(ctx context.Context, sc Scope, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM streams WHERE id = ? AND `+scopeFilter, append([]any{id}, scopeArgs(sc)...)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
