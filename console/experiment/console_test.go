package experiment

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/livehat/livehat/console/store"
)

// consoleTenant is an organisation of the console's store with an
// operator and a stream.
type consoleTenant struct {
	sc     store.Scope
	stream string
}

func newConsoleTenant(t *testing.T, st *store.Store, name string) consoleTenant {
	t.Helper()
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: name + "-op", Role: store.RoleOperator, PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sc := store.Scope{OrgID: org.ID, UserID: u.ID, Role: store.RoleOperator}
	m, err := st.CreateMerchant(ctx, sc, name+" shop")
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.CreateStream(ctx, sc, store.Stream{MerchantID: m.ID, Name: name + " live"})
	if err != nil {
		t.Fatal(err)
	}
	return consoleTenant{sc: sc, stream: s.ID}
}

// namedTwoArms is a new two-arm experiment named name.
func namedTwoArms(name string) Experiment {
	e := twoArms("", 1, 1)
	e.Name = name
	return e
}

// TestConsoleTablesScope checks that the console's experiment tables answer
// only the owning organisation: another one's experiment is ErrNotFound
// and has no streams or ships, and it cannot change them.
func TestConsoleTablesScope(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, t.TempDir(), store.WithMigrations(ConsoleMigrations()...), store.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if ok, err := st.Migrated(ctx, ConsoleMigration); err != nil || !ok {
		t.Fatalf("Migrated(%d) = %v, %v; want true", ConsoleMigration, ok, err)
	}
	a, b := newConsoleTenant(t, st, "a"), newConsoleTenant(t, st, "b")
	s := OnConsole(st)
	e, err := s.Create(ctx, namedTwoArms("running"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, a.sc, e.ID, []string{a.stream}); err != nil {
		t.Fatal(err)
	}

	t.Run("owner", func(t *testing.T) {
		if got, err := s.OrgGet(ctx, a.sc, e.ID); err != nil || got.ID != e.ID {
			t.Fatalf("OrgGet = %v, %v", got.ID, err)
		}
		list, err := s.OrgList(ctx, a.sc)
		if err != nil || len(list) != 1 || list[0].ID != e.ID {
			t.Fatalf("OrgList = %v, %v", list, err)
		}
		ps, err := s.Participants(ctx, a.sc, e.ID)
		if err != nil || len(ps) != 1 || ps[0].StreamID != a.stream || ps[0].Name != "a live" {
			t.Fatalf("Participants = %+v, %v", ps, err)
		}
	})
	t.Run("other organisation", func(t *testing.T) {
		if _, err := s.OrgGet(ctx, b.sc, e.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("OrgGet = %v, want ErrNotFound", err)
		}
		if list, err := s.OrgList(ctx, b.sc); err != nil || len(list) != 0 {
			t.Fatalf("OrgList = %v, %v; want none", list, err)
		}
		if ps, err := s.Participants(ctx, b.sc, e.ID); err != nil || len(ps) != 0 {
			t.Fatalf("Participants = %v, %v; want none", ps, err)
		}
		if err := s.SetParticipant(ctx, b.sc, e.ID, Participant{StreamID: a.stream, Arm: "control"}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("SetParticipant = %v, want ErrNotFound", err)
		}
		if err := s.AddShip(ctx, b.sc, &Ship{ExperimentID: e.ID, Arm: "control"}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("AddShip = %v, want ErrNotFound", err)
		}
	})
	t.Run("running on a stream", func(t *testing.T) {
		if _, _, ok, err := s.RunningOn(ctx, a.stream); err != nil || ok {
			t.Fatalf("RunningOn a draft = %v, %v; want none", ok, err)
		}
		if _, err := s.Start(ctx, e.ID, now); err != nil {
			t.Fatal(err)
		}
		if err := s.SetParticipant(ctx, a.sc, e.ID, Participant{StreamID: a.stream, Arm: "treatment", HarnessVersion: "v2", PreviousVersion: "v1"}); err != nil {
			t.Fatal(err)
		}
		id, p, ok, err := s.RunningOn(ctx, a.stream)
		if err != nil || !ok || id != e.ID || p != (Participant{StreamID: a.stream, Arm: "treatment", HarnessVersion: "v2", PreviousVersion: "v1"}) {
			t.Fatalf("RunningOn = %q, %+v, %v, %v", id, p, ok, err)
		}
		if err := s.DeleteDraft(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, e.ID); err != nil {
			t.Fatalf("DeleteDraft removed a running experiment: %v", err)
		}
	})
	t.Run("ships", func(t *testing.T) {
		x := &Ship{ExperimentID: e.ID, Arm: "treatment", HarnessVersion: "v2", Gate: []byte(`{"candidate":"c"}`), Override: "why"}
		if err := s.AddShip(ctx, a.sc, x); err != nil {
			t.Fatal(err)
		}
		ships, err := s.Ships(ctx, a.sc, e.ID)
		if err != nil || len(ships) != 1 {
			t.Fatalf("Ships = %v, %v", ships, err)
		}
		got := ships[0]
		if got.ID != x.ID || got.Shipper != "a-op" || got.ShippedBy != a.sc.UserID || !got.ShippedAt.Equal(now) || string(got.Gate) != `{"candidate":"c"}` || got.Override != "why" {
			t.Fatalf("ship = %+v", got)
		}
		if ships, err := s.Ships(ctx, b.sc, e.ID); err != nil || len(ships) != 0 {
			t.Fatalf("another organisation's Ships = %v, %v; want none", ships, err)
		}
	})
	t.Run("draft deleted with its records", func(t *testing.T) {
		d, err := s.Create(ctx, namedTwoArms("draft"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Claim(ctx, a.sc, d.ID, []string{a.stream}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteDraft(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.OrgGet(ctx, a.sc, d.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("OrgGet of a deleted draft = %v, want ErrNotFound", err)
		}
	})
}
