package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

func testVersion(digit string) HarnessVersion {
	return HarnessVersion{Version: "sha256:" + strings.Repeat(digit, 64), Name: "h" + digit, Document: json.RawMessage(`{"name":"h"}`)}
}

// TestConcurrentDraftSaves races many saves of one revision: exactly one
// wins, the others get ErrConflict, and the stored text is the winner's.
func TestConcurrentDraftSaves(t *testing.T) {
	s := openTest(t, t.TempDir())
	tn := newTenant(t, s, "acme")
	ctx := context.Background()
	d, err := s.CreateHarnessDraft(ctx, tn.op, HarnessDraft{Name: "d", Format: "json", Document: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	results := make([]error, n)
	texts := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = strings.Repeat("x", i+1)
			_, results[i] = s.SaveHarnessDraft(ctx, tn.op, HarnessDraft{ID: d.ID, Name: "d", Format: "json", Document: texts[i], Revision: 1})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range results {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("saves %d and %d both won", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, ErrConflict):
			t.Fatalf("save %d: %v", i, err)
		}
	}
	got, err := s.HarnessDraft(ctx, tn.op, d.ID)
	if err != nil || won < 0 || got.Document != texts[won] || got.Revision != 2 {
		t.Fatalf("after the race: %+v %v (winner %d)", got, err, won)
	}
}

func TestHarnessAreaIsOperatorOnlyAndOrgScoped(t *testing.T) {
	s := openTest(t, t.TempDir())
	a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
	ctx := context.Background()
	v, created, err := s.PutHarnessVersion(ctx, a.op, testVersion("1"))
	if err != nil || !created || v.Author != "a-op" {
		t.Fatalf("put: %+v %v %v", v, created, err)
	}
	if _, created, _ := s.PutHarnessVersion(ctx, a.op, testVersion("1")); created {
		t.Error("the same version was stored twice")
	}
	if _, _, err := s.PutHarnessVersion(ctx, a.m1, testVersion("2")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant stored a version: %v", err)
	}
	if _, _, err := s.PutHarnessVersion(ctx, a.op, HarnessVersion{Version: "sha256:abc", Document: json.RawMessage(`{}`)}); err == nil {
		t.Error("a version that is not a sha256 hash was stored")
	}
	// Every role of the org reads versions by full or short hash; other
	// orgs see nothing; short prefixes are refused.
	for _, sc := range []Scope{a.op, a.m1, a.dev} {
		if _, err := s.HarnessVersion(ctx, sc, strings.Repeat("1", 12)); err != nil {
			t.Errorf("%s: %v", sc.Role, err)
		}
	}
	if _, err := s.HarnessVersion(ctx, b.op, v.Version); !errors.Is(err, ErrNotFound) {
		t.Errorf("another org read the version: %v", err)
	}
	if _, err := s.HarnessVersion(ctx, a.op, "1111"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a 4-digit prefix: %v", err)
	}
	twin := testVersion("1")
	twin.Version = "sha256:" + strings.Repeat("1", 63) + "2"
	if _, _, err := s.PutHarnessVersion(ctx, a.op, twin); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HarnessVersion(ctx, a.op, strings.Repeat("1", 12)); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	// Drafts, gates, releases and loops are the operator's.
	d, err := s.CreateHarnessDraft(ctx, a.op, HarnessDraft{Name: "d", Format: "yaml", Document: "name: x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []Scope{a.m1, a.dev, b.op} {
		if _, err := s.HarnessDraft(ctx, sc, d.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of %s read the draft: %v", sc.Role, sc.OrgID, err)
		}
	}
	r, err := s.CreateHarnessRelease(ctx, a.op, HarnessRelease{Version: v.Version, Override: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkHarnessReleaseRolledBack(ctx, b.op, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another org rolled back the release: %v", err)
	}
	if _, err := s.MarkHarnessReleaseRolledBack(ctx, a.op, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkHarnessReleaseRolledBack(ctx, a.op, r.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("a second rollback: %v", err)
	}
	// A gate finishes once; its scores replace older ones of the same cell.
	g, err := s.CreateHarnessGate(ctx, a.op, HarnessGate{Candidate: v.Version, Baseline: v.Version, Model: "expert", Suites: []string{"lsqa"}, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	score := HarnessScore{Model: "expert", Version: v.Version, Suite: "lsqa", Score: 90, N: 1}
	fail := HarnessFailure{Version: v.Version, Suite: "lsqa", ItemID: "i", Cause: "wrong_tool", Deductions: []string{"missing call x"}}
	if err := s.FinishHarnessGate(ctx, a.op, g.ID, GatePassed, json.RawMessage(`{"ok":true}`), "", []HarnessScore{score}, []HarnessFailure{fail}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishHarnessGate(ctx, a.op, g.ID, GateFailed, nil, "again", nil, nil); !errors.Is(err, ErrConflict) {
		t.Errorf("a gate finished twice: %v", err)
	}
	scores, _ := s.HarnessScores(ctx, a.op)
	fails, _ := s.HarnessFailures(ctx, a.op, g.ID, "", 10)
	if len(scores) != 1 || scores[0].Score != 90 || len(fails) != 1 || fails[0].Deductions[0] != "missing call x" {
		t.Errorf("scores %+v, failures %+v", scores, fails)
	}
	if other, _ := s.HarnessScores(ctx, b.op); len(other) != 0 {
		t.Errorf("another org sees scores: %+v", other)
	}
}

// TestStreamHarnessChangesOnlyThroughReleases: a stream update leaves the
// bound version alone, and a merchant's request binds nothing until a
// release grants it.
func TestStreamHarnessChangesOnlyThroughReleases(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a := newTenant(t, s, "a")
	st, err := s.CreateStream(ctx, a.op, Stream{MerchantID: a.merch1.ID, Name: "s", HarnessVersion: "sha256:aaa"})
	if err != nil {
		t.Fatal(err)
	}
	edit := *st
	edit.Persona, edit.HarnessVersion = "warm", "sha256:bbb"
	got, err := s.UpdateStream(ctx, a.m1, edit)
	if err != nil {
		t.Fatal(err)
	}
	if got.HarnessVersion != "sha256:aaa" || got.Persona != "warm" {
		t.Errorf("after an update the stream runs %q with persona %q, want the bound version kept", got.HarnessVersion, got.Persona)
	}
	r, err := s.CreateHarnessRequest(ctx, a.m1, HarnessRequest{StreamID: st.ID, Version: "sha256:bbb", Note: "please"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != RequestOpen || r.RequestedBy != "a-m1" || r.StreamName != "s" {
		t.Errorf("request = %+v", r)
	}
	if _, err := s.CreateHarnessRequest(ctx, a.m2, HarnessRequest{StreamID: st.ID, Version: "sha256:bbb"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("another merchant's request: %v, want ErrNotFound", err)
	}
	for _, c := range []struct {
		name string
		sc   Scope
		want int
		err  error
	}{
		{"the requesting merchant", a.m1, 1, nil},
		{"another merchant", a.m2, 0, nil},
		{"an operator", a.op, 1, nil},
		{"a developer", a.dev, 0, ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			list, err := s.HarnessRequests(ctx, c.sc)
			if !errors.Is(err, c.err) || len(list) != c.want {
				t.Errorf("sees %d requests (%v), want %d (%v)", len(list), err, c.want, c.err)
			}
		})
	}
	if err := s.GrantHarnessRequests(ctx, a.m1, st.ID, "sha256:bbb", "rel-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a merchant granted a request: %v", err)
	}
	if err := s.GrantHarnessRequests(ctx, a.op, st.ID, "sha256:bbb", "rel-1"); err != nil {
		t.Fatal(err)
	}
	list, _ := s.HarnessRequests(ctx, a.m1)
	if list[0].State != RequestGranted || list[0].ReleaseID != "rel-1" || list[0].DecidedAt == nil {
		t.Errorf("after the release: %+v", list[0])
	}
}
