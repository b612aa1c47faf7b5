package console

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

func TestRehearsalVerdictOfATurn(t *testing.T) {
	grounding := map[string]bool{"grounding": true}
	hook := func(name string, d harness.HookDecision) runtime.Step {
		return runtime.Step{Kind: "hook", Name: name, Event: harness.EventAfterResponse, Decision: &d}
	}
	allow := harness.HookDecision{Action: harness.ActionAllow}
	retry := harness.HookDecision{Action: harness.ActionRetry, Feedback: "「99元」: the lookup says 199"}
	rewrite := harness.HookDecision{Action: harness.ActionRewrite, Text: "It is 199 yuan."}
	tests := []struct {
		name      string
		turn      runtime.Turn
		grounding map[string]bool
		verdict   string
		why       []string
	}{
		{"backed at once", runtime.Turn{Outcome: runtime.OutcomeReplied, Steps: []runtime.Step{hook("compliance", allow), hook("grounding", allow)}},
			grounding, verdictAllow, []string{}},
		{"backed after a retry", runtime.Turn{Outcome: runtime.OutcomeReplied, Steps: []runtime.Step{hook("grounding", retry), {Kind: "retry"}, hook("grounding", allow)}},
			grounding, verdictRetried, []string{retry.Feedback}},
		{"rewritten on the last attempt", runtime.Turn{Outcome: runtime.OutcomeReplied, Steps: []runtime.Step{hook("grounding", retry), hook("grounding", rewrite)}},
			grounding, verdictRewritten, []string{retry.Feedback}},
		{"another hook's retry is not the check's", runtime.Turn{Outcome: runtime.OutcomeReplied,
			Steps: []runtime.Step{hook("compliance", retry), hook("grounding", allow)}}, grounding, verdictAllow, []string{}},
		{"safe line", runtime.Turn{Outcome: runtime.OutcomeSafeLine, Reason: "retry budget spent: too long"},
			grounding, verdictSafeLine, []string{"retry budget spent: too long"}},
		{"denied question", runtime.Turn{Outcome: runtime.OutcomeDenied, Reason: "spam"}, grounding, verdictDenied, []string{"spam"}},
		{"cancelled", runtime.Turn{Outcome: runtime.OutcomeCancelled, Reason: "deadline"}, grounding, verdictFailed, []string{"cancelled: deadline"}},
		{"no grounding hook", runtime.Turn{Outcome: runtime.OutcomeReplied}, map[string]bool{}, verdictUnchecked,
			[]string{"the stream's harness has no grounding check"}},
		{"check did not run", runtime.Turn{Outcome: runtime.OutcomeReplied, Steps: []runtime.Step{hook("compliance", allow)}}, grounding,
			verdictUnchecked, []string{"the grounding check did not run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, why := verdictOf(&tt.turn, tt.grounding)
			if v != tt.verdict || !reflect.DeepEqual(why, tt.why) {
				t.Errorf("verdict = %s %q, want %s %q", v, why, tt.verdict, tt.why)
			}
		})
	}
}

func TestRehearsalGroundingHooksFollowTheExport(t *testing.T) {
	h := &harness.Harness{Hooks: []harness.Hook{
		{Name: "fact_guard", Event: harness.EventAfterResponse, Plugin: "grounding", Export: "check_grounding"},
		{Name: "grounding_v2", Event: harness.EventAfterResponse, Plugin: "other", Export: "check"},
		{Name: "compliance", Event: harness.EventAfterResponse, Plugin: "compliance", Export: "check_reply"},
		{Name: "grounding_in", Event: harness.EventViewerMessage, Plugin: "grounding", Export: "check_grounding"},
	}}
	if got := groundingHooks(h); !reflect.DeepEqual(got, map[string]bool{"fact_guard": true, "grounding_v2": true}) {
		t.Errorf("grounding hooks = %v", got)
	}
}

// TestRehearsalRunsThroughTheStreamsRuntime: generated questions for the
// demo catalog, asked with the rule-based host through the stream's
// harness and plugins, come back with tool calls and the grounding
// check's verdict; the report is stored, and goes out of date when the
// catalog changes.
func TestRehearsalRunsThroughTheStreamsRuntime(t *testing.T) {
	e := newLiveEnv(t)
	base := "/api/streams/" + e.demoStream
	code, qs, raw := e.call(t, e.merchant, "GET", base+"/rehearsal/questions?max=3", "", "")
	if code != 200 || qs["lang"] != "zh" {
		t.Fatalf("questions: %d %s", code, raw)
	}
	questions := qs["questions"].([]any)
	if len(questions) != 3 || questions[0].(map[string]any)["text"] != "玻尿酸精华多少钱？" {
		t.Fatalf("questions = %v", questions)
	}
	if code, _, _ := e.call(t, e.merchant, "GET", base+"/rehearsals/latest", "", ""); code != 200 {
		t.Fatalf("latest before any: %d", code)
	}
	own := map[string]any{"text": "面霜有没有优惠券？", "own": true}
	body, _ := json.Marshal(map[string]any{"questions": append(questions, own)})
	code, rep, raw := e.call(t, e.merchant, "POST", base+"/rehearsals", "application/json", string(body))
	if code != 201 {
		t.Fatalf("rehearsal: %d %s", code, raw)
	}
	answers := rep["answers"].([]any)
	if len(answers) != 4 || rep["current"] != true || rep["lang"] != "zh" || rep["model"] == "" {
		t.Fatalf("report = %s", raw)
	}
	for _, a := range answers {
		a := a.(map[string]any)
		if a["outcome"] != "replied" || a["reply"] == "" {
			t.Errorf("answer to %q: %v %q (%v)", a["text"], a["outcome"], a["reply"], a["why"])
		}
		if v := a["verdict"]; v != verdictAllow && v != verdictRetried && v != verdictRewritten {
			t.Errorf("answer to %q has verdict %v: %v", a["text"], v, a["why"])
		}
		if len(a["tools"].([]any)) == 0 {
			t.Errorf("answer to %q called no tool", a["text"])
		}
		if !slicesHave(traceNames(a["hooks"], "name"), "grounding") {
			t.Errorf("answer to %q: hooks %v, no grounding check", a["text"], traceNames(a["hooks"], "name"))
		}
	}
	price := answers[0].(map[string]any)
	if !strings.Contains(price["reply"].(string), "199") || !slicesHave(traceNames(price["tools"], "name"), "product_lookup") {
		t.Errorf("price answer = %v via %v", price["reply"], traceNames(price["tools"], "name"))
	}
	if own := answers[3].(map[string]any); own["own"] != true || !slicesHave(traceNames(own["tools"], "name"), "coupon_check") {
		t.Errorf("own question = %v", own)
	}
	// Rehearsals are not live traffic: nothing in the stream's turn log.
	if _, _, raw := e.call(t, e.merchant, "GET", base+"/live/turns", "", ""); string(raw) != "[]" {
		t.Errorf("live turns after a rehearsal: %s", raw)
	}
	_, latest, _ := e.call(t, e.merchant, "GET", base+"/rehearsals/latest", "", "")
	if r := latest["rehearsal"].(map[string]any); r["id"] != rep["id"] || r["current"] != true {
		t.Errorf("latest = %v", latest)
	}
	// A changed catalog makes it out of date.
	code, st, raw := e.call(t, e.merchant, "GET", base, "", "")
	if code != 200 {
		t.Fatal(string(raw))
	}
	st["persona"] = "A cheerful host."
	b, _ := json.Marshal(map[string]any{"name": st["name"], "persona": st["persona"], "strategy": st["strategy"], "catalog": st["catalog"],
		"banned_claims": st["banned_claims"], "currency": st["currency"], "harness_version": st["harness_version"], "revision": st["revision"]})
	if code, _, raw := e.call(t, e.merchant, "PUT", base, "application/json", string(b)); code != 200 {
		t.Fatalf("edit: %d %s", code, raw)
	}
	_, latest, _ = e.call(t, e.merchant, "GET", base+"/rehearsals/latest", "", "")
	if r := latest["rehearsal"].(map[string]any); r["current"] != false {
		t.Errorf("rehearsal still current after the persona changed: %v", r["current"])
	}
}

func TestRehearsalRequestsAreValidated(t *testing.T) {
	e := newLiveEnv(t)
	path := "/api/streams/" + e.demoStream + "/rehearsals"
	many := make([]map[string]string, maxRehearsalQuestions+1)
	for i := range many {
		many[i] = map[string]string{"text": fmt.Sprint("q", i)}
	}
	tooMany, _ := json.Marshal(map[string]any{"questions": many})
	tests := []struct {
		body, field string
	}{
		{`{"questions": []}`, "questions"},
		{`{"questions": [{"text": "  "}]}`, "questions[0].text"},
		{`{"questions": [{"text": "ok"}, {"text": "` + strings.Repeat("x", maxMessageBytes+1) + `"}]}`, "questions[1].text"},
		{`{"lang": "fr", "questions": [{"text": "ok"}]}`, "lang"},
		{`{"questions": [{"text": "ok", "grade": 1}]}`, "body"},
		{string(tooMany), "questions"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			code, body, raw := e.call(t, e.merchant, "POST", path, "application/json", tt.body)
			if code != 400 || body["field"] != tt.field {
				t.Errorf("%d %s, want 400 naming %s", code, raw, tt.field)
			}
		})
	}
	if code, _, _ := e.call(t, e.merchant, "GET", "/api/streams/"+e.demoStream+"/rehearsal/questions?max=99", "", ""); code != 400 {
		t.Errorf("max=99: %d", code)
	}
	if code, _, _ := e.call(t, e.rival, "POST", path, "application/json", `{"questions": [{"text": "hi"}]}`); code != 404 {
		t.Errorf("another merchant's stream: %d", code)
	}
}

func slicesHave(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
