package console

import (
	"math"
	"slices"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/liveroom"
)

func TestQuestionCategory(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"防晒霜多少钱", "price"},
		{"券后多少钱", "coupon"},
		{"How much is the serum?", "price"},
		{"is the flask sold out", "stock"},
		{"我身高170穿什么码", "size"},
		{"几天发货", "shipping"},
		{"2号链接", "link"},
		{"主播好美", "other"},
	} {
		t.Run(c.text, func(t *testing.T) {
			if got := questionCategory(c.text); got != c.want {
				t.Errorf("questionCategory(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

func TestGradeReplay(t *testing.T) {
	allow := &harness.HookDecision{Action: harness.ActionAllow}
	for _, c := range []struct {
		name  string
		turn  runtime.Turn
		score float64
		cause string
	}{
		{"a clean reply", runtime.Turn{Outcome: runtime.OutcomeReplied, Reply: "现在199元。",
			Steps: []runtime.Step{{Kind: "tool", Name: "product_lookup"}, {Kind: "hook", Name: "compliance", Decision: allow}}}, 1, ""},
		{"moderation refused the message", runtime.Turn{Outcome: runtime.OutcomeDenied, Reason: "spam",
			Steps: []runtime.Step{{Kind: "hook", Name: "spam_filter", Decision: &harness.HookDecision{Action: harness.ActionDeny, Reason: "spam"}}}}, 0, CauseHookRejection},
		{"the safe line", runtime.Turn{Outcome: runtime.OutcomeSafeLine, Reason: "retry budget spent"}, 0, CauseHookRejection},
		{"a reply sent back once", runtime.Turn{Outcome: runtime.OutcomeReplied, Reply: "ok",
			Steps: []runtime.Step{{Kind: "retry", Output: "「直播间」 is a forbidden claim"}}}, 0, CauseHookRejection},
		{"a tool that failed", runtime.Turn{Outcome: runtime.OutcomeReplied, Reply: "ok",
			Steps: []runtime.Step{{Kind: "tool", Name: "product_lookup", Error: "unknown tool"}}}, 0, CauseWrongTool},
		{"markup on air", runtime.Turn{Outcome: runtime.OutcomeReplied, Reply: `<tool_call>{"name":"send_link"}</tool_call>`}, 0, CauseReplyForm},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := gradeReplay(&c.turn)
			if g.Score != c.score {
				t.Errorf("score %v, want %v (deductions %v)", g.Score, c.score, g.Deductions)
			}
			if c.cause == "" {
				return
			}
			if got := failureCause(eval.ItemResult{Outcome: c.turn.Outcome, Grade: g}); got != c.cause {
				t.Errorf("cause %q, want %q (deductions %v)", got, c.cause, g.Deductions)
			}
		})
	}
}

func TestPairedInterval(t *testing.T) {
	report := func(scores ...float64) *eval.SuiteReport {
		r := &eval.SuiteReport{}
		for i, s := range scores {
			cat := "a"
			if i%2 == 1 {
				cat = "b"
			}
			r.Items = append(r.Items, eval.ItemResult{ID: string(rune('p' + i)), Category: cat, Grade: liveroom.Grade{Score: s}})
		}
		return r
	}
	b := "b"
	for _, c := range []struct {
		name       string
		base, cand *eval.SuiteReport
		category   *string
		want       [2]float64
	}{
		{"no change", report(1, 0, 1, 1), report(1, 0, 1, 1), nil, [2]float64{0, 0}},
		{"one item says nothing", report(1), report(0), nil, [2]float64{-100, 100}},
		// Differences −100, 0, −100, 0: mean −50, sd 57.7, t(3) 3.182,
		// so −50 ± 91.9, the lower end held to −100.
		{"paired differences", report(1, 1, 1, 1), report(0, 1, 0, 1), nil, [2]float64{-100, 41.9}},
		{"one category", report(1, 1, 1, 1), report(0, 1, 0, 1), &b, [2]float64{0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pairedInterval(c.base, c.cand, c.category)
			if math.Abs(got[0]-c.want[0]) > 0.11 || math.Abs(got[1]-c.want[1]) > 0.11 {
				t.Errorf("pairedInterval = %v, want %v", got, c.want)
			}
		})
	}
}

// TestCompareGateRegressions: a candidate regresses on a lower score, on
// more unbacked statements on air whatever its score, and on a score held
// only because the grounding check rewrote more of its replies (the
// model's own words lost).
func TestCompareGateRegressions(t *testing.T) {
	suite := func(score float64, unbacked int, rewritten float64) map[string]*eval.SuiteReport {
		return map[string]*eval.SuiteReport{"lsqa": {Name: "lsqa", Score: score, RewrittenScore: rewritten, N: 4, OnAir: 4, OnAirUnbacked: unbacked,
			Categories: map[string]eval.Summary{}}}
	}
	for _, c := range []struct {
		name       string
		base, cand map[string]*eval.SuiteReport
		want       []regression
	}{
		{"the same", suite(80, 1, 10), suite(80, 1, 10), []regression{}},
		{"fewer unbacked", suite(80, 2, 0), suite(80, 0, 0), []regression{}},
		{"more unbacked at the same score", suite(80, 0, 0), suite(80, 2, 0), []regression{{Suite: "lsqa", Category: unbackedOnAir, Delta: -2}}},
		{"a lower score", suite(80, 0, 0), suite(70, 0, 0), []regression{{Suite: "lsqa", Delta: -10}}},
		{"more rewritten inside the tolerance", suite(80, 0, 10), suite(80, 0, 10.5), []regression{}},
		{"the score held by rewrites", suite(80, 0, 10), suite(80, 0, 20), []regression{{Suite: "lsqa", Category: modelOwnWords, Delta: -10}}},
		{"fewer rewrites", suite(80, 0, 20), suite(80, 0, 10), []regression{}},
		{"a lower score says it already", suite(80, 0, 10), suite(70, 0, 20), []regression{{Suite: "lsqa", Delta: -10}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := compareGate(c.base, c.cand, 1)
			if !slices.Equal(rep.Regressions, c.want) {
				t.Fatalf("regressions %v, want %v", rep.Regressions, c.want)
			}
			cand := c.cand["lsqa"]
			if s := rep.Suites[0]; s.Candidate.OnAirUnbacked != cand.OnAirUnbacked || s.Candidate.OwnScore != cand.Score-cand.RewrittenScore ||
				s.Regressed != (len(c.want) > 0) {
				t.Errorf("suite %+v", s)
			}
		})
	}
}
