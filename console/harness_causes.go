package console

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
)

// Failure causes the evolution page groups failed turns by, derived from
// the grader's deductions (trainer/liveroom) and the turn's outcome.
const (
	CauseWrongTool     = "wrong_tool"
	CauseWrongFact     = "wrong_fact"
	CauseMissingSkill  = "missing_skill"
	CauseHookRejection = "hook_rejection"
	CauseReplyForm     = "reply_form"
	CauseRunError      = "run_error"
)

// causesByRank ranks causes for a turn that has several: the first is what
// the operator should look at first. A hook that stopped the turn explains
// everything after it; a skill never loaded explains wrong tools and
// facts; a wrong tool explains a wrong fact.
func causesByRank() []string {
	return []string{CauseRunError, CauseHookRejection, CauseMissingSkill, CauseWrongTool, CauseWrongFact, CauseReplyForm}
}

// stepPrefix is how an episode's grade prefixes a step's deductions:
// "step 2 (price): ".
var stepPrefix = regexp.MustCompile(`^step \d+ \([^)]*\): `)

// deductionCause classifies one deduction of the live-room grader, or of
// a live or replayed turn's trace (liveTurnFailure, gradeReplay), or
// returns "" for one it does not recognise.
func deductionCause(d string) string {
	d = stepPrefix.ReplaceAllString(strings.TrimSpace(d), "")
	switch {
	case strings.HasPrefix(d, "not run: "), strings.HasPrefix(d, "not finished: "), strings.HasPrefix(d, "unreadable trace: "):
		return CauseRunError
	case strings.HasPrefix(d, "safe line: "), strings.HasPrefix(d, "safe_line: "), strings.HasPrefix(d, "denied: "),
		strings.HasPrefix(d, "a hook rejected the reply: "), strings.HasPrefix(d, "hook "):
		return CauseHookRejection
	case strings.HasPrefix(d, "reply skill ") && strings.HasSuffix(d, " was not loaded"), strings.HasPrefix(d, "skill: "):
		return CauseMissingSkill
	case strings.HasPrefix(d, "missing call "), strings.HasPrefix(d, "needless call "),
		strings.HasPrefix(d, "malformed arguments for "), strings.HasPrefix(d, "call ") && strings.Contains(d, " does not fit the harness"),
		strings.HasPrefix(d, "tool "), strings.HasPrefix(d, "limit "):
		return CauseWrongTool
	case strings.HasPrefix(d, "states "), strings.HasPrefix(d, "names an amount "), strings.HasPrefix(d, "does not state "),
		strings.HasPrefix(d, "makes a banned absolute claim "):
		return CauseWrongFact
	case d == "no reply", strings.HasPrefix(d, "reply is ") && strings.Contains(d, " characters, over the "), strings.HasPrefix(d, "speaks markup: "):
		return CauseReplyForm
	}
	return ""
}

// failureCause is the main cause of a failed item: the highest-ranked
// cause among its deductions and outcome. An item whose deductions name
// nothing known is a reply-form failure (it lost points for its answer).
func failureCause(it eval.ItemResult) string {
	found := map[string]bool{}
	if it.Error != "" {
		found[CauseRunError] = true
	}
	if it.Outcome == runtime.OutcomeDenied || it.Outcome == runtime.OutcomeSafeLine {
		found[CauseHookRejection] = true
	}
	for _, d := range it.Grade.Deductions {
		if c := deductionCause(d); c != "" {
			found[c] = true
		}
	}
	for _, c := range causesByRank() {
		if found[c] {
			return c
		}
	}
	return CauseReplyForm
}

// liveTurnFailure reads a stored live turn's outcome and trace (the
// runtime's Steps as JSON) for what went wrong. A live turn has no gold
// answer, so only what the trace itself shows counts: a hook that denied
// the turn, rejected a reply (a retry) or failed; a tool call that
// failed or went past the round limit; a skill that did not load. ok is
// false for a turn that shows none of these.
func liveTurnFailure(outcome, reason string, steps []byte) (cause string, deductions []string, ok bool) {
	found := map[string]bool{}
	if outcome == string(runtime.OutcomeDenied) || outcome == string(runtime.OutcomeSafeLine) {
		found[CauseHookRejection] = true
		deductions = append(deductions, outcome+": "+reason)
	}
	var trace []runtime.Step
	if len(steps) > 0 {
		if err := json.Unmarshal(steps, &trace); err != nil {
			return CauseRunError, append(deductions, "unreadable trace: "+err.Error()), true
		}
	}
	for _, st := range trace {
		switch {
		case st.Kind == "retry":
			found[CauseHookRejection] = true
			deductions = append(deductions, "a hook rejected the reply: "+st.Output)
		case st.Kind == "hook" && (st.Error != "" || st.Decision != nil && st.Decision.Action == harness.ActionDeny):
			found[CauseHookRejection] = true
			deductions = append(deductions, "hook "+st.Name+": "+hookProblem(st))
		case (st.Kind == "tool" || st.Kind == "limit") && st.Error != "":
			found[CauseWrongTool] = true
			deductions = append(deductions, st.Kind+" "+st.Name+": "+st.Error)
		case st.Kind == "skill" && st.Error != "":
			found[CauseMissingSkill] = true
			deductions = append(deductions, "skill: "+st.Error)
		}
	}
	for _, c := range causesByRank() {
		if found[c] {
			return c, deductions, true
		}
	}
	return "", nil, false
}

func hookProblem(st runtime.Step) string {
	if st.Error != "" {
		return st.Error
	}
	return "denied: " + st.Decision.Reason
}
