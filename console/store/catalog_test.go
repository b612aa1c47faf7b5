package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestUpdateStreamCatalogIsOptimistic(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	st, err := s.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch1.ID, Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if st.CatalogRevision != 1 {
		t.Fatalf("a new stream's catalog revision is %d, want 1", st.CatalogRevision)
	}
	first := json.RawMessage(`{"products":[{"id":"p1"}]}`)
	saved, err := s.UpdateStreamCatalog(ctx, a.m1, st.ID, first, 1)
	if err != nil {
		t.Fatal(err)
	}
	if saved.CatalogRevision != 2 || saved.Revision != st.Revision+1 || string(saved.Catalog) != string(first) {
		t.Fatalf("after a save: catalog revision %d, revision %d, catalog %s", saved.CatalogRevision, saved.Revision, saved.Catalog)
	}
	cases := []struct {
		name  string
		sc    Scope
		rev   int64
		doc   string
		isErr error
	}{
		{"stale revision", a.m1, 1, `{"products":[]}`, ErrConflict},
		{"another merchant's stream", a.m2, 2, `{"products":[]}`, ErrNotFound},
		{"not JSON", a.m1, 2, `{"products":`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.UpdateStreamCatalog(ctx, c.sc, st.ID, json.RawMessage(c.doc), c.rev)
			if err == nil || (c.isErr != nil && !errors.Is(err, c.isErr)) {
				t.Fatalf("got %v, want %v", err, c.isErr)
			}
			got, _ := s.Stream(ctx, a.m1, st.ID)
			if got.CatalogRevision != 2 || string(got.Catalog) != string(first) {
				t.Errorf("a refused save changed the catalog: revision %d, %s", got.CatalogRevision, got.Catalog)
			}
		})
	}
	// A stale stream update would write back the catalog it loaded: the
	// catalog save moved the stream revision, so it is refused.
	if _, err := s.UpdateStream(ctx, a.m1, *st); !errors.Is(err, ErrConflict) {
		t.Fatalf("a stream update based on the revision before the catalog save: %v, want ErrConflict", err)
	}
}

func TestUpdateStreamMovesCatalogRevisionOnlyWithTheCatalog(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	st, err := s.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch1.ID, Name: "s", Catalog: json.RawMessage(`{"products":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	st.Persona = "warm host"
	st, err = s.UpdateStream(ctx, a.m1, *st)
	if err != nil || st.CatalogRevision != 1 {
		t.Fatalf("a persona change: %v, catalog revision %d, want 1", err, st.CatalogRevision)
	}
	st.Catalog = json.RawMessage(`{"products":[{"id":"p1"}]}`)
	st, err = s.UpdateStream(ctx, a.m1, *st)
	if err != nil || st.CatalogRevision != 2 {
		t.Fatalf("a catalog change through the stream: %v, catalog revision %d, want 2", err, st.CatalogRevision)
	}
}

// TestCatalogRevisionMigration checks that a database made before the
// catalog revision keeps its streams, each at catalog revision 1.
func TestCatalogRevisionMigration(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	old, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	a := newTenant(t, old, "a")
	st, err := old.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch1.ID, Name: "s", Catalog: json.RawMessage(`{"products":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Undo migration 2, as a database from before it has it.
	for _, q := range []string{`ALTER TABLE streams DROP COLUMN catalog_revision`, `DELETE FROM schema_migrations WHERE version = 2`} {
		if _, err := old.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	s := openTest(t, dir)
	got, err := s.Stream(ctx, a.m1, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CatalogRevision != 1 || string(got.Catalog) != `{"products":[]}` || got.Revision != st.Revision {
		t.Errorf("after the migration: %+v", got)
	}
}
