package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestOpenCreatesPrivateFiles is finding 6 of issue #21: the data folder
// was created 0755 and livehat.db 0644. What Open creates is its user's
// only; what was there keeps its owner's mode.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	t.Run("created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "livehat")
		s := openTest(t, dir)
		// A write makes SQLite create the -wal and -shm files.
		if _, err := s.CreateOrg(context.Background(), "modes"); err != nil {
			t.Fatal(err)
		}
		if m := modeOf(t, dir); m != 0o700 {
			t.Errorf("data folder %v, want 0700", m)
		}
		if m := modeOf(t, filepath.Dir(dir)); m != 0o700 {
			t.Errorf("created parent folder %v, want 0700", m)
		}
		for _, name := range []string{"livehat.db", "livehat.db-wal", "livehat.db-shm"} {
			if m := modeOf(t, filepath.Join(dir, name)); m != 0o600 {
				t.Errorf("%s %v, want 0600", name, m)
			}
		}
	})
	t.Run("existing", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "livehat.db")
		if err := os.WriteFile(db, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		openTest(t, dir)
		if m := modeOf(t, dir); m != 0o755 {
			t.Errorf("an existing data folder changed to %v", m)
		}
		if m := modeOf(t, db); m != 0o640 {
			t.Errorf("an existing database changed to %v", m)
		}
	})
}

// TestConnectionsAreCapped is part of finding 3 of issue #21: an SSE burst
// left 275 SQLite connections open. Callers past the cap wait for a
// connection, bounded by their context, and no more are opened.
func TestConnectionsAreCapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if got := openTest(t, t.TempDir()).Stats().MaxOpenConnections; got != DefaultMaxConns {
		t.Errorf("default cap %d, want %d", got, DefaultMaxConns)
	}
	const limit = 3
	s := openTest(t, t.TempDir(), WithMaxConns(limit))
	var held []*sql.Conn
	for range limit {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.Orgs(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a query past the cap: %v, want it to wait and time out", err)
	}
	for _, c := range held {
		c.Close()
	}
	// A burst of concurrent readers shares the capped connections.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			if _, err := s.Orgs(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := s.Stats(); st.OpenConnections > limit || st.MaxOpenConnections != limit {
		t.Errorf("after a burst: %d open (cap %d), want at most %d", st.OpenConnections, st.MaxOpenConnections, limit)
	}
	if _, err := Open(ctx, t.TempDir(), WithMaxConns(0)); err == nil || !strings.Contains(err.Error(), "WithMaxConns(0)") {
		t.Errorf("WithMaxConns(0): %v, want an error naming it", err)
	}
}
