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
