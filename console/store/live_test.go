package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestLiveTurnsAreScopedAndOrdered(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	tn := newTenant(t, s, "acme")
	other := newTenant(t, s, "globex")
	st1, err := s.CreateStream(ctx, tn.op, Stream{MerchantID: tn.merch1.ID, Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := s.CreateStream(ctx, tn.op, Stream{MerchantID: tn.merch2.ID, Name: "two"})
	for i := range 3 {
		err := s.AddLiveTurn(ctx, LiveTurn{ID: fmt.Sprintf("t%d", i), StreamID: st1.ID, SessionID: "s1", Source: TurnSourceLive,
			Event: "viewer_message", Viewers: []string{"v1"}, Input: "多少钱", Reply: "199元", Outcome: "replied",
			HarnessVersion: "sha256:aa", EffectiveVersion: "sha256:bb", Model: "rule-based host",
			Steps: json.RawMessage(`[{"kind":"tool","name":"product_lookup"}]`), TotalMS: float64(10 * (i + 1)), FirstChunkMS: 5})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddLiveTurn(ctx, LiveTurn{ID: "x", StreamID: st2.ID, Source: TurnSourceAPI, Outcome: "denied"}); err != nil {
		t.Fatal(err)
	}

	got, err := s.LiveTurns(ctx, tn.m1, LiveTurnQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != "t2" || got[2].ID != "t0" {
		t.Fatalf("merchant 1 sees %d turns, newest %v; want t2..t0", len(got), got)
	}
	if got[0].OrgID != tn.org.ID || got[0].MerchantID != tn.merch1.ID || string(got[0].Steps) != `[{"kind":"tool","name":"product_lookup"}]` {
		t.Errorf("turn stored as %+v", got[0])
	}
	page, _ := s.LiveTurns(ctx, tn.m1, LiveTurnQuery{Before: got[0].Seq, Limit: 1})
	if len(page) != 1 || page[0].ID != "t1" {
		t.Errorf("page before t2 = %v", page)
	}
	if all, _ := s.LiveTurns(ctx, tn.op, LiveTurnQuery{}); len(all) != 4 {
		t.Errorf("operator sees %d turns, want 4", len(all))
	}
	if api, _ := s.LiveTurns(ctx, tn.op, LiveTurnQuery{Source: TurnSourceAPI}); len(api) != 1 || api[0].ID != "x" {
		t.Errorf("api turns = %v", api)
	}
	for name, sc := range map[string]Scope{"merchant 2": tn.m2, "developer": tn.dev, "other org": other.op} {
		if list, _ := s.LiveTurns(ctx, sc, LiveTurnQuery{StreamID: st1.ID}); len(list) != 0 {
			t.Errorf("%s sees %d turns of merchant 1", name, len(list))
		}
		if _, err := s.LiveTurn(ctx, sc, "t0"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s reads turn t0: %v", name, err)
		}
		if _, err := s.LiveLatencies(ctx, sc, st1.ID, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s reads latencies of merchant 1: %v", name, err)
		}
	}
	lat, err := s.LiveLatencies(ctx, tn.m1, st1.ID, 2)
	if err != nil || len(lat) != 2 || lat[0].TotalMS != 30 {
		t.Errorf("latencies = %v, %v", lat, err)
	}

	if err := s.AddLiveTurn(ctx, LiveTurn{ID: "y", StreamID: "nope", Source: TurnSourceLive}); !errors.Is(err, ErrNotFound) {
		t.Errorf("turn of an unknown stream: %v", err)
	}
	if err := s.AddLiveTurn(ctx, LiveTurn{ID: "z", StreamID: st1.ID, Source: TurnSourceLive, Steps: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid steps JSON was stored")
	}
	if err := s.DeleteStream(ctx, tn.op, st1.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.LiveTurns(ctx, tn.op, LiveTurnQuery{StreamID: st1.ID}); len(list) != 0 {
		t.Errorf("turns of a deleted stream remain: %d", len(list))
	}
}

func TestSetStreamOnAir(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	tn := newTenant(t, s, "acme")
	st, _ := s.CreateStream(ctx, tn.op, Stream{MerchantID: tn.merch1.ID, Name: "one"})
	on, err := s.SetStreamOnAir(ctx, tn.m1, st.ID, true)
	if err != nil || !on.OnAir || on.Revision != 2 {
		t.Fatalf("on air: %+v, %v", on, err)
	}
	again, _ := s.SetStreamOnAir(ctx, tn.m1, st.ID, true)
	if again.Revision != 2 {
		t.Errorf("switching on twice made revision %d", again.Revision)
	}
	if refs, _ := s.OnAirStreams(ctx); len(refs) != 1 || refs[0].ID != st.ID || refs[0].OrgID != tn.org.ID {
		t.Errorf("on-air streams = %v", refs)
	}
	if _, err := s.SetStreamOnAir(ctx, tn.m2, st.ID, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("merchant 2 switched merchant 1's stream: %v", err)
	}
	off, _ := s.SetStreamOnAir(ctx, tn.op, st.ID, false)
	if off.OnAir || off.Revision != 3 {
		t.Errorf("off air: %+v", off)
	}
	if got, err := s.StreamInOrg(ctx, tn.org.ID, st.ID); err != nil || got.ID != st.ID {
		t.Errorf("StreamInOrg = %v, %v", got, err)
	}
	if _, err := s.StreamInOrg(ctx, "other", st.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("StreamInOrg across orgs: %v", err)
	}
}
