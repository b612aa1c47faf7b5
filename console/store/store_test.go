package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func openTest(t *testing.T, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tenant makes an org with one operator and two merchants, each with a user.
type tenant struct {
	org             *Org
	op, m1, m2, dev Scope
	merch1, merch2  *Merchant
}

func newTenant(t *testing.T, s *Store, name string) tenant {
	t.Helper()
	ctx := context.Background()
	o, err := s.CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	opu, err := s.CreateUser(ctx, NewUser{OrgID: o.ID, Username: name + "-op", Role: RoleOperator, PasswordHash: "h"})
	if err != nil {
		t.Fatal(err)
	}
	tn := tenant{org: o, op: opu.Scope()}
	tn.merch1, _ = s.CreateMerchant(ctx, tn.op, name+" shop 1")
	tn.merch2, _ = s.CreateMerchant(ctx, tn.op, name+" shop 2")
	u1, err := s.CreateUser(ctx, NewUser{OrgID: o.ID, Username: name + "-m1", Role: RoleMerchant, MerchantID: tn.merch1.ID, PasswordHash: "h"})
	if err != nil {
		t.Fatal(err)
	}
	u2, _ := s.CreateUser(ctx, NewUser{OrgID: o.ID, Username: name + "-m2", Role: RoleMerchant, MerchantID: tn.merch2.ID, PasswordHash: "h"})
	dev, _ := s.CreateUser(ctx, NewUser{OrgID: o.ID, Username: name + "-dev", Role: RoleDeveloper, PasswordHash: "h"})
	tn.m1, tn.m2, tn.dev = u1.Scope(), u2.Scope(), dev.Scope()
	return tn
}

func TestMigrationsAreVersionedAndRunOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	extra := Migration{Version: 900, Name: "extra", SQL: []string{`CREATE TABLE extra_things (id TEXT PRIMARY KEY)`}}
	s := openTest(t, dir, WithMigrations(extra))
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != 900 {
		t.Fatalf("schema version %d, %v; want 900", v, err)
	}
	s.Close()
	// Reopening must not re-run a migration (CREATE TABLE would fail).
	s2 := openTest(t, dir, WithMigrations(extra))
	var n int
	s2.DB().QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE version = 900`).Scan(&n)
	if n != 1 {
		t.Fatalf("migration 900 recorded %d times", n)
	}
	var mode string
	s2.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal mode %q, want wal", mode)
	}
	if _, err := Open(ctx, t.TempDir(), WithMigrations(Migration{Version: 1, Name: "dup"})); err == nil {
		t.Error("a duplicate migration version was accepted")
	}
	bad := Migration{Version: 901, Name: "broken", SQL: []string{`CREATE TABLE extra_things (id TEXT)`}}
	if _, err := Open(ctx, dir, WithMigrations(extra, bad)); err == nil {
		t.Error("a failing migration did not fail Open")
	}
}

func TestMerchantsSeeOnlyTheirOwnStreams(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	b := newTenant(t, s, "b")
	s1, err := s.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch1.ID, Name: "morning"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch2.ID, Name: "not mine"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("merchant created a stream for another merchant: %v", err)
	}
	s2, _ := s.CreateStream(ctx, a.op, Stream{MerchantID: a.merch2.ID, Name: "evening"})
	bs, _ := s.CreateStream(ctx, b.op, Stream{MerchantID: b.merch1.ID, Name: "other org"})

	for _, tc := range []struct {
		sc   Scope
		want []string
	}{{a.op, []string{s2.ID, s1.ID}}, {a.m1, []string{s1.ID}}, {a.m2, []string{s2.ID}}, {b.op, []string{bs.ID}}, {a.dev, nil}} {
		got, err := s.Streams(ctx, tc.sc)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, st := range got {
			ids = append(ids, st.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
			t.Errorf("%s sees %v, want %v", tc.sc.Role, ids, tc.want)
		}
	}
	for _, sc := range []Scope{a.m2, b.op, b.m1, a.dev} {
		if _, err := s.Stream(ctx, sc, s1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v read another's stream: %v", sc, err)
		}
		st := *s1
		st.Name = "hijacked"
		if _, err := s.UpdateStream(ctx, sc, st); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v updated another's stream: %v", sc, err)
		}
		if err := s.SetStreamHarness(ctx, sc, s1.ID, "sha256:x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v rebound another's stream: %v", sc, err)
		}
		if err := s.DeleteStream(ctx, sc, s1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v deleted another's stream: %v", sc, err)
		}
	}
	got, _ := s.Stream(ctx, a.op, s1.ID)
	if got.Name != "morning" {
		t.Errorf("stream changed by an outsider: %q", got.Name)
	}
	if ms, _ := s.Merchants(ctx, a.m1); len(ms) != 1 || ms[0].ID != a.merch1.ID {
		t.Errorf("merchant sees merchants %v", ms)
	}
	if _, err := s.CreateMerchant(ctx, a.m1, "sneaky"); err == nil {
		t.Error("a merchant created a merchant")
	}
}

func TestUpdateStreamIsOptimistic(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	st, err := s.CreateStream(ctx, a.m1, Stream{MerchantID: a.merch1.ID, Name: "s", BannedClaims: []string{"cures acne"}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := *st, *st
	first.Persona = "warm host"
	second.Persona = "brisk host"
	saved, err := s.UpdateStream(ctx, a.m1, first)
	if err != nil || saved.Revision != 2 {
		t.Fatalf("first save: %v rev %v", err, saved)
	}
	if _, err := s.UpdateStream(ctx, a.op, second); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale save: %v, want ErrConflict", err)
	}
	got, _ := s.Stream(ctx, a.m1, st.ID)
	if got.Persona != "warm host" || got.BannedClaims[0] != "cures acne" {
		t.Errorf("after conflict: %+v", got)
	}
	bad := *got
	bad.Strategy = json.RawMessage(`{not json`)
	if _, err := s.UpdateStream(ctx, a.m1, bad); err == nil {
		t.Error("invalid strategy JSON accepted")
	}
}

func TestSessionsAndTokens(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := openTest(t, t.TempDir(), WithClock(func() time.Time { return now }))
	ctx := context.Background()
	a := newTenant(t, s, "a")
	ls, err := s.CreateSession(ctx, a.m1.UserID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, csrf, err := s.SessionUser(ctx, ls.Token)
	if err != nil || u.ID != a.m1.UserID || csrf != ls.CSRF {
		t.Fatalf("session user: %v %v", u, err)
	}
	if _, _, err := s.SessionUser(ctx, ls.Token+"x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("forged session: %v", err)
	}
	now = now.Add(2 * time.Hour)
	if _, _, err := s.SessionUser(ctx, ls.Token); !errors.Is(err, ErrExpired) {
		t.Errorf("expired session: %v", err)
	}
	tok, plain, err := s.CreateAPIToken(ctx, a.op, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.TokenUser(ctx, plain); err != nil || u.ID != a.op.UserID {
		t.Fatalf("token user: %v %v", u, err)
	}
	if list, _ := s.APITokens(ctx, a.op); len(list) != 1 || list[0].LastUsedAt == nil {
		t.Errorf("tokens: %+v", list)
	}
	if err := s.RevokeAPIToken(ctx, a.m1, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("someone else revoked the token: %v", err)
	}
	if err := s.RevokeAPIToken(ctx, a.op, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenUser(ctx, plain); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoked token still works: %v", err)
	}
	if _, err := s.CreateUser(ctx, NewUser{OrgID: a.org.ID, Username: "a-op", Role: RoleOperator, PasswordHash: "h"}); !errors.Is(err, ErrUsernameTaken) {
		t.Errorf("duplicate username: %v", err)
	}
	if _, err := s.CreateUser(ctx, NewUser{OrgID: a.org.ID, Username: "x", Role: RoleMerchant, PasswordHash: "h"}); err == nil {
		t.Error("merchant user without a merchant accepted")
	}
}

// TestHelperWriter is the child process of TestKillMidWriteLosesNothing: it
// creates streams forever and prints each id once its transaction committed.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv("LIVEHAT_STORE_WRITER")
	if dir == "" {
		t.Skip("child process of TestKillMidWriteLosesNothing")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	orgs, _ := s.Orgs(ctx)
	op := Scope{OrgID: orgs[0].ID, Role: RoleOperator}
	ms, _ := s.Merchants(ctx, op)
	for i := 0; ; i++ {
		st, err := s.CreateStream(ctx, op, Stream{MerchantID: ms[0].ID, Name: fmt.Sprintf("s%d", i), Catalog: json.RawMessage(`{"products":[]}`)})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(st.ID)
	}
}

func TestKillMidWriteLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	newTenant(t, s, "a")
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.v=false")
	cmd.Env = append(os.Environ(), "LIVEHAT_STORE_WRITER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var committed []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(committed) < 200 {
		if line := sc.Text(); len(line) == 36 {
			committed = append(committed, line)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(committed) < 200 {
		t.Fatalf("writer printed only %d ids", len(committed))
	}
	s2 := openTest(t, dir)
	var n int
	for _, id := range committed {
		if err := s2.DB().QueryRow(`SELECT COUNT(*) FROM streams WHERE id = ?`, id).Scan(&n); err != nil || n != 1 {
			t.Fatalf("committed stream %s lost after kill -9 (%v)", id, err)
		}
	}
	var ok string
	s2.DB().QueryRow(`PRAGMA integrity_check`).Scan(&ok)
	if ok != "ok" {
		t.Errorf("integrity check: %s", ok)
	}
}
