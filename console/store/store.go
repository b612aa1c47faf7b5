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
	"io/fs"
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
	extra    []Migration
	now      func() time.Time
	maxConns int
}

// DefaultMaxConns is the most database connections a store opens at once
// unless WithMaxConns says otherwise. SQLite runs one writer at a time and
// WAL readers are quick, so a few connections serve the console; each
// holds open file handles and a page cache, and a burst of requests (an
// SSE reconnect storm) queues for one instead of opening hundreds.
const DefaultMaxConns = 16

// maxIdleConns is how many connections stay open between bursts, and
// connIdleTime how long one more may wait unused before it is closed.
const (
	maxIdleConns = 4
	connIdleTime = time.Minute
)

// WithMaxConns caps the database connections the store opens at once;
// callers past the cap wait for a connection (or their context).
func WithMaxConns(n int) Option { return func(o *options) { o.maxConns = n } }

// WithMigrations adds migrations owned by other console packages (for
// example the experiments' tables) to the built-in ones.
func WithMigrations(ms ...Migration) Option {
	return func(o *options) { o.extra = append(o.extra, ms...) }
}

// WithClock sets the clock used for timestamps and expiry (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Open opens (creating if needed) the database livehat.db in dir and brings
// its schema up to date. A data folder it creates is private to the
// console's user (0700), and so is a database file it creates (0600; SQLite
// gives the -wal and -shm files the database file's mode); an existing
// folder or database keeps the mode its owner gave it.
func Open(ctx context.Context, dir string, opts ...Option) (*Store, error) {
	o := options{now: time.Now, maxConns: DefaultMaxConns}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxConns < 1 {
		return nil, fmt.Errorf("store: WithMaxConns(%d): want at least 1 connection", o.maxConns)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: data folder: %w", err)
	}
	path := filepath.Join(dir, "livehat.db")
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("store: create %s: %w", path, err)
	}
	// WAL: readers never block the writer and a committed transaction
	// survives a crash; synchronous=FULL makes that hold for power loss too.
	dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(o.maxConns)
	db.SetMaxIdleConns(min(maxIdleConns, o.maxConns))
	db.SetConnMaxIdleTime(connIdleTime)
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

// createPrivate creates an empty file at path, readable and writable by
// its owner only, unless a file is there already. SQLite takes an empty
// file as an empty database.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
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

// Migrated reports whether migration version was applied, for console
// packages whose tables come in through WithMigrations.
func (s *Store) Migrated(ctx context.Context, version int) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return false, fmt.Errorf("store: migration %d: %w", version, err)
	}
	return n == 1, nil
}

// Stats reports the use of the store's database connections.
func (s *Store) Stats() sql.DBStats { return s.db.Stats() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

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
