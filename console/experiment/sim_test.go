package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/liveroom"
)

// demoArms returns the demo harness and the same harness without coupons.
func demoArms(t testing.TB) []SimArm {
	t.Helper()
	h := testfixture.DemoHarness(t)
	worse, err := WithoutCoupons(h)
	if err != nil {
		t.Fatal(err)
	}
	return []SimArm{{Name: "demo", Harness: h}, {Name: "no-coupon", Harness: worse}}
}

// TestSimulationBetterArmWins runs the same harness without its coupon
// tool (the control, as if it were what serves today) against the demo
// harness through the real runtime, the example WASM plugins and the live
// room's expert policy. The demo arm answers coupon questions; the other
// arm's expert, following its harness, cannot, so its viewers buy less.
// The report must find the demo arm better on GMV (bootstrap interval)
// and conversion (Welch interval) with intervals that exclude zero, and
// say to ship it.
func TestSimulationBetterArmWins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	sb := testfixture.DemoSandbox(t, nil)
	arms := demoArms(t)
	arms[0], arms[1] = arms[1], arms[0]
	res, err := Simulate(context.Background(), SimConfig{Store: newStore(t, simStart), Sandbox: sb, Arms: arms,
		Viewers: 1600, Seed: 1, PlannedUnitsPerArm: 700, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if res.Score["demo"] < 0.99 || res.Score["no-coupon"] > 0.8 {
		t.Errorf("answer scores %v: the demo arm should answer (almost) everything, the other fail coupon questions", res.Score)
	}
	g, _ := rep.Comparison("demo", MetricGMVPerViewer)
	if g.Basis != BasisBootstrap || g.BootstrapDiffCI == nil || g.BootstrapDiffCI.Lo <= 0 || !g.Better {
		t.Errorf("GMV per viewer: %.2f vs %.2f, bootstrap %v: want an interval above zero", g.ControlValue, g.TreatmentValue, g.BootstrapDiffCI)
	}
	c, _ := rep.Comparison("demo", MetricConversionRate)
	if c.DiffCI.Lo <= 0 || !c.Better {
		t.Errorf("conversion: %.3f vs %.3f, Welch %v: want an interval above zero", c.ControlValue, c.TreatmentValue, c.DiffCI)
	}
	if rep.SRM.Mismatch {
		t.Errorf("SRM flagged on a hash split: %+v", rep.SRM)
	}
	if v := rep.Verdict; !v.Allowed || v.Decision != DecisionShip || v.Winner != "demo" {
		t.Errorf("verdict %+v, want ship demo", v)
	}
	if rep.Excluded.NotAttributed+rep.Excluded.Unexposed+rep.Excluded.OutsidePeriod > 0 || res.Events.Rejected > 0 {
		t.Errorf("simulated events lost: excluded %+v, ingestion %+v", rep.Excluded, res.Events)
	}
	arm0 := rep.Arms[0]
	if arm0.Units+rep.Arms[1].Units != 1600 || arm0.Replies != arm0.Units {
		t.Errorf("units %d + %d, replies %d", arm0.Units, rep.Arms[1].Units, arm0.Replies)
	}
}

// TestShopperBehaviour: the viewer model without the runtime. A correct,
// effective answer to a purchase question makes buying likelier than a
// partial one, a refusal or a wrong price, in that order; over many
// viewers the purchase rates follow; coupons are claimed only after a
// correct coupon answer, and every event is about the question's item.
func TestShopperBehaviour(t *testing.T) {
	room := liveroom.NewRoom(42, liveroom.RoomConfig{MinItems: 3, MaxItems: 6})
	var q liveroom.Question
	for seed := uint64(0); ; seed++ {
		if seed == 1000 {
			t.Fatal("room 42 has no coupon that applies to one piece")
		}
		q = room.Questions(seed, 1, liveroom.QuestionConfig{Types: []liveroom.QuestionType{liveroom.QCoupon}})[0]
		if it, ok := questionItem(room, q); ok {
			if c, has := room.Coupon(it.ID); has && it.Price() >= c.MinSpend {
				break // a coupon that applies to one piece
			}
		}
	}
	grades := []liveroom.Grade{
		{Accuracy: 1, Effectiveness: 1, Score: 1},
		{Accuracy: 1, Effectiveness: 0.5, Score: 0.5},
		{Accuracy: 1, Effectiveness: 0, Score: 0},
		{Accuracy: 0, Effectiveness: 1, Score: 0},
	}
	item, _ := questionItem(room, q)
	var rates []float64
	for gi, g := range grades {
		buys := 0
		const n = 4000
		for i := range n {
			rng := rand.New(rand.NewPCG(7, uint64(i)))
			v := &simViewer{id: fmt.Sprintf("v%d", i), stream: "s", at: simStart}
			for _, ev := range shopperEvents(rng, room, q, g, v) {
				if ev.Item != item.ID {
					t.Fatalf("event about %s, the question is about %s", ev.Item, item.ID)
				}
				switch ev.Kind {
				case KindPurchase:
					buys++
				case KindCouponClaim:
					if gi != 0 {
						t.Fatalf("coupon claimed after an answer graded %+v", g)
					}
				}
			}
		}
		rates = append(rates, float64(buys)/n)
	}
	for i := 1; i < len(rates); i++ {
		if rates[i] >= rates[i-1] {
			t.Errorf("purchase rates by answer quality %v: want strictly falling (good, partial, refusal, wrong)", rates)
		}
	}
}
