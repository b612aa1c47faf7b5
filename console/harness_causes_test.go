package console

import (
	"slices"
	"strings"
	"testing"
)

// FuzzDeductionCause checks the deduction parser on any text: it never
// panics, answers a known cause or "", and an episode's "step N (type): "
// prefix changes nothing.
func FuzzDeductionCause(f *testing.F) {
	for _, s := range []string{"missing call a()", "states x", "reply skill s was not loaded", "safe line: x",
		"reply is 9 characters, over the 8 the harness allows for speech", "not run: x", "no reply", "step 1 (price): states x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, d string) {
		got := deductionCause(d)
		if got != "" && !slices.Contains(causesByRank(), got) {
			t.Fatalf("deductionCause(%q) = unknown cause %q", d, got)
		}
		if !strings.HasPrefix(strings.TrimSpace(d), "step ") {
			if again := deductionCause("step 2 (coupon): " + strings.TrimSpace(d)); again != got {
				t.Fatalf("with a step prefix %q became %q (was %q)", d, again, got)
			}
		}
	})
}

// FuzzLiveTurnFailure checks the live-trace reader on any trace text: it
// never panics, a failure always has a known cause and says why, and a
// turn that replied with an empty trace is no failure.
func FuzzLiveTurnFailure(f *testing.F) {
	f.Add("replied", "", `[{"kind":"retry","output":"banned claim"}]`)
	f.Add("denied", "spam", `[]`)
	f.Add("replied", "", `[{"kind":"tool","name":"x","error":"unknown tool"},{"kind":"hook","name":"h","decision":{"action":"deny"}}]`)
	f.Add("safe_line", "r", `{not json`)
	f.Fuzz(func(t *testing.T, outcome, reason, steps string) {
		cause, why, failed := liveTurnFailure(outcome, reason, []byte(steps))
		if failed && (!slices.Contains(causesByRank(), cause) || len(why) == 0) {
			t.Fatalf("failure %q with reasons %q", cause, why)
		}
		if !failed && cause != "" {
			t.Fatalf("no failure but cause %q", cause)
		}
	})
	if _, _, failed := liveTurnFailure("replied", "", nil); failed {
		f.Error("a replied turn without a trace is a failure")
	}
}
