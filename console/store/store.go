// Package store is the console's SQLite store: one database file in the data
// folder, opened in WAL mode, with schema migrations versioned in code.
//
// Every query that reads or changes tenant data takes the caller's Scope, so
// that a merchant can never see another merchant's rows: scoping lives in
// the store, not in each HTTP handler.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// ErrNotFound is returned when a row does not exist or is not visible to
// the caller's scope (the two are deliberately indistinguishable).
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when an optimistic update lost the race: the row
// changed since the caller read it.
var ErrConflict = errors.New("conflict: changed since it was read")

// Migration is one versioned step of the schema. Versions are applied in
// ascending order, each in its own transaction, and recorded in
// schema_migrations so that a step never runs twice.
type Migration struct {
	Version int
	Name    string
	SQL     []string
}

// Store is the console's database.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
}

// Option configures Open.
type Option func(*options)

type options struct {
	extra []Migration
	now   func() time.Time
}

// WithMigrations adds migrations owned by other console packages (for
// example the experiments' tables) to the built-in ones.
func WithMigrations(ms ...Migration) Option {
	return func(o *options) { o.extra = append(o.extra, ms...) }
}

// WithClock sets the clock used for timestamps and expiry (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Open opens (creating if needed) the database livehat.db in dir and brings
// its schema up to date.
func Open(ctx context.Context, dir string, opts ...Option) (*Store, error) {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data folder: %w", err)
	}
	path := filepath.Join(dir, "livehat.db")
	// WAL: readers never block the writer and a committed transaction
	// survives a crash; synchronous=FULL makes that hold for power loss too.
	dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: o.now}
	all := append(builtinMigrations(), o.extra...)
	if err := s.migrate(ctx, all); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB exposes the database handle to console packages that own their tables
// (their migrations come in through WithMigrations).
func (s *Store) DB() *sql.DB { return s.db }

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

func (s *Store) migrate(ctx context.Context, ms []Migration) error {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return fmt.Errorf("store: migrations %q and %q share version %d", ms[i-1].Name, ms[i].Name, ms[i].Version)
		}
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	applied := map[int]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			for _, stmt := range m.SQL {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%w\n  in: %s", err, stmt)
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, s.now().UTC().Format(time.RFC3339Nano))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// SchemaVersion is the highest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

// tx runs fn in a transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Tx runs fn in one transaction, for console packages that own tables.
func (s *Store) Tx(ctx context.Context, fn func(*sql.Tx) error) error { return s.tx(ctx, fn) }

func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339Nano) }

func parseStamp(v string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}
