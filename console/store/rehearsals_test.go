package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestRehearsalsAreTheLatestOfTheirOrganisation(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")

	if _, err := s.LatestRehearsal(ctx, a.op, "st1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before the first rehearsal: %v, want ErrNotFound", err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range []Rehearsal{
		{ID: "r1", StreamID: "st1", Fingerprint: "f1", CreatedBy: "u", CreatedAt: at, Report: json.RawMessage(`{"n":1}`)},
		{ID: "r2", StreamID: "st1", Fingerprint: "f2", CreatedBy: "u", CreatedAt: at.Add(time.Minute), Report: json.RawMessage(`{"n":2}`)},
		{ID: "r3", StreamID: "st2", Fingerprint: "f3", CreatedBy: "u", CreatedAt: at.Add(2 * time.Minute), Report: json.RawMessage(`{"n":3}`)},
	} {
		if err := s.AddRehearsal(ctx, a.op, r); err != nil {
			t.Fatalf("rehearsal %d: %v", i, err)
		}
	}
	got, err := s.LatestRehearsal(ctx, a.m1, "st1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "r2" || got.Fingerprint != "f2" || string(got.Report) != `{"n":2}` || !got.CreatedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("latest of st1 = %+v, want r2", got)
	}
	if _, err := s.LatestRehearsal(ctx, b.op, "st1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another organisation reads st1's rehearsal: %v, want ErrNotFound", err)
	}
	if err := s.AddRehearsal(ctx, a.op, Rehearsal{ID: "bad", StreamID: "st1", Report: json.RawMessage(`{`)}); err == nil {
		t.Error("a report that is not JSON was stored")
	}
	if err := s.AddRehearsal(ctx, a.op, Rehearsal{ID: "r1", StreamID: "st1", Report: json.RawMessage(`{}`)}); err == nil {
		t.Error("a second rehearsal with id r1 was stored")
	}
}
