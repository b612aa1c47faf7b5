package liveroom

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// Grade is the rule grader's verdict on one answered question, with the
// report's two metrics and two diagnostics.
type Grade struct {
	// Accuracy is 1 when the reply has no factual error, unsupported claim
	// or false promise, else 0.
	Accuracy float64 `json:"accuracy"`
	// Effectiveness is 1, 0.5 or 0: did the reply satisfy the viewer's
	// intent with useful information.
	Effectiveness float64 `json:"effectiveness"`
	// ToolRationality is the share of gold calls made, less needless calls.
	ToolRationality float64 `json:"tool_rationality"`
	// SkillSelection is 1 when the right reply skill was loaded.
	SkillSelection float64 `json:"skill_selection"`
	// Score is Accuracy × Effectiveness, the number suites average.
	Score float64 `json:"score"`
	// Counts for learning curves, which show the call format, the
	// argument copying and the fact copying arrive separately: of the
	// GoldCalls, NamedCalls were called with the right tool (any
	// arguments) and ExactCalls with the right arguments too; of the Facts
	// the reply must state, FactsStated are stated.
	GoldCalls   int `json:"gold_calls,omitempty"`
	NamedCalls  int `json:"named_calls,omitempty"`
	ExactCalls  int `json:"exact_calls,omitempty"`
	Facts       int `json:"facts,omitempty"`
	FactsStated int `json:"facts_stated,omitempty"`
	// Deductions explain every point taken off.
	Deductions []string `json:"deductions,omitempty"`
	// Unbacked are the reply's statements that the turn's tool results
	// do not back (see FindUnbacked); each one takes Accuracy to 0.
	Unbacked []Unbacked `json:"unbacked,omitempty"`
}

// GradeOptions describe the harness the transcript was produced under.
type GradeOptions struct {
	// Mapping maps canonical names to the variant harness's names; its
	// Inverse brings the transcript's calls back. Nil for the canonical
	// harness.
	Mapping *hsa.Mapping
	// ReplyChars is the harness's reply-length limit; 0 means none.
	ReplyChars int
	// SafeLine marks a reply the runtime chose (its safe line) instead of
	// the model's: no statement of it is checked for backing.
	SafeLine bool
}

// GradeTranscript scores the agent's messages for one question: the
// assistant turns (with tool calls), the tool results and the final reply.
func (r *Room) GradeTranscript(q Question, msgs []harness.Message, opts GradeOptions) Grade {
	g := Grade{Accuracy: 1}
	deduct := func(format string, args ...any) { g.Deductions = append(g.Deductions, fmt.Sprintf(format, args...)) }

	calls, reply := r.extract(msgs, opts, deduct)

	// Tool rationality and skill selection.
	matched := make([]bool, len(calls))
	made := 0
	for _, want := range q.Gold.Calls {
		found := false
		for i, c := range calls {
			if !matched[i] && r.sameCall(want, c) {
				matched[i], found = true, true
				break
			}
		}
		if found {
			made++
		} else {
			deduct("missing call %s", showCall(want))
		}
		for _, c := range calls {
			if c.Name == want.Name {
				g.NamedCalls++
				break
			}
		}
	}
	g.GoldCalls, g.ExactCalls = len(q.Gold.Calls), made
	needless := 0
	for i, c := range calls {
		if !matched[i] {
			needless++
			deduct("needless call %s", showCall(c))
		}
	}
	switch {
	case len(q.Gold.Calls)+needless == 0:
		g.ToolRationality = 1
	default:
		g.ToolRationality = float64(made) / float64(len(q.Gold.Calls)+needless)
	}
	g.SkillSelection = 1
	if q.Gold.Skill != "" && !loaded(calls, q.Gold.Skill) {
		g.SkillSelection = 0
		deduct("reply skill %s was not loaded", q.Gold.Skill)
	}

	// Accuracy: nothing false, nothing invented, nothing banned.
	lower := strings.ToLower(reply)
	for _, f := range q.Gold.MustNotState {
		if r.states(f, reply, lower) {
			g.Accuracy = 0
			deduct("states %s", f.What)
		}
	}
	for _, amount := range currencyAmounts(reply) {
		if !containsMoney(q.Gold.Money, amount) {
			g.Accuracy = 0
			deduct("names an amount the tools did not give: %s yuan", strconv.FormatFloat(amount, 'f', -1, 64))
		}
	}
	if len(moneyOf(q.Gold.MustState)) > 0 && !calledAny(calls, ToolProductLookup, ToolCouponCheck) && len(currencyAmounts(reply)) > 0 {
		g.Accuracy = 0
		deduct("states prices without looking them up")
	}
	g.Unbacked = r.FindUnbacked(q, msgs, opts)
	for _, u := range g.Unbacked {
		g.Accuracy = 0
		msg := fmt.Sprintf("states %s %q the tools did not back: %s", u.Kind, u.Phrase, u.Why)
		if u.Kind == UnbackedAmount {
			// The message the recorded tables counted amounts by.
			msg = "names an amount the tools did not give: " + strconv.FormatFloat(u.yuan, 'f', -1, 64) + " yuan"
		}
		if !slices.Contains(g.Deductions, msg) {
			deduct("%s", msg)
		}
	}
	checked := strings.ReplaceAll(lower, "第一次", "")
	for _, b := range r.Merchant.BannedClaims {
		if strings.Contains(checked, strings.ToLower(b)) {
			g.Accuracy = 0
			deduct("makes a banned absolute claim %q", b)
		}
	}

	// Effectiveness: did the viewer get what they asked for.
	switch {
	case strings.TrimSpace(reply) == "" && q.Gold.Silent:
		g.Effectiveness = 1
	case strings.TrimSpace(reply) == "":
		deduct("no reply")
	case len(q.Gold.MustState) == 0:
		g.Effectiveness = 1
	default:
		stated := 0
		for _, f := range q.Gold.MustState {
			if r.states(f, reply, lower) {
				stated++
			} else {
				deduct("does not state %s", f.What)
			}
		}
		g.Facts, g.FactsStated = len(q.Gold.MustState), stated
		switch {
		case stated == len(q.Gold.MustState):
			g.Effectiveness = 1
		case stated > 0:
			g.Effectiveness = 0.5
		}
	}
	if n := utf8.RuneCountInString(reply); opts.ReplyChars > 0 && n > opts.ReplyChars && g.Effectiveness > 0.5 {
		g.Effectiveness = 0.5
		deduct("reply is %d characters, over the %d the harness allows for speech", n, opts.ReplyChars)
	}
	g.Score = g.Accuracy * g.Effectiveness
	return g
}

// extract collects the tool calls (mapped back to canonical names) and
// the final reply: the last assistant message without tool calls.
func (r *Room) extract(msgs []harness.Message, opts GradeOptions, deduct func(string, ...any)) ([]hsa.Call, string) {
	var calls []hsa.Call
	reply := ""
	for _, m := range msgs {
		if m.Role != harness.RoleAssistant {
			continue
		}
		if len(m.ToolCalls) == 0 {
			reply = m.Content
			continue
		}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			if err := json.Unmarshal(tc.Arguments, &args); err != nil || args == nil {
				deduct("malformed arguments for %s", tc.Name)
				continue
			}
			c := hsa.Call{Name: tc.Name, Arguments: args}
			if opts.Mapping != nil {
				back, err := opts.Mapping.Inverse(c)
				if err != nil {
					deduct("call %s does not fit the harness: %v", tc.Name, err)
					continue
				}
				c = back
			}
			calls = append(calls, c)
		}
	}
	return calls, reply
}

// sameCall compares a gold call with a made one: item queries match when
// they name the same item; a quantity of 1 is the default.
func (r *Room) sameCall(want, got hsa.Call) bool {
	if want.Name != got.Name {
		return false
	}
	a, b := normalArgs(want.Arguments), normalArgs(got.Arguments)
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			return false
		}
		if k == "query" {
			as, _ := av.(string)
			bs, _ := bv.(string)
			ia, oka := r.Resolve(as)
			ib, okb := r.Resolve(bs)
			if !oka || !okb || ia.ID != ib.ID {
				return false
			}
			continue
		}
		if s, ok := av.(string); ok {
			t, ok := bv.(string)
			if !ok || !strings.EqualFold(strings.TrimSpace(s), strings.TrimSpace(t)) {
				return false
			}
			continue
		}
		if !jsonEqual(av, bv) {
			return false
		}
	}
	return true
}

func normalArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "quantity" && v == float64(1) {
			continue
		}
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
			continue
		}
		out[k] = v
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func showCall(c hsa.Call) string {
	args, _ := json.Marshal(c.Arguments)
	return c.Name + string(args)
}

func loaded(calls []hsa.Call, skill string) bool {
	for _, c := range calls {
		if c.Name == ToolLoadSkill && c.Arguments["skill_id"] == skill {
			return true
		}
	}
	return false
}

func calledAny(calls []hsa.Call, names ...string) bool {
	for _, c := range calls {
		for _, n := range names {
			if c.Name == n {
				return true
			}
		}
	}
	return false
}

// states reports whether the reply states a fact.
func (r *Room) states(f Fact, reply, lower string) bool {
	switch f.Kind {
	case FactMoney:
		for _, n := range numbers(reply) {
			if math.Abs(n-float64(f.Money)/100) < 0.005 {
				return true
			}
		}
		return false
	default:
		for _, a := range f.Any {
			if strings.Contains(lower, strings.ToLower(a)) {
				return true
			}
		}
		return false
	}
}

var numberPattern = regexp.MustCompile(`\d+(?:\.\d+)?`)

func numbers(s string) []float64 {
	var out []float64
	for _, m := range numberPattern.FindAllString(s, -1) {
		if f, err := strconv.ParseFloat(m, 64); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// currencyPattern finds amounts written with a currency word before or
// after them: ¥199, 199元, 199 yuan, RMB 199.
var currencyPattern = regexp.MustCompile(`(?i)(?:[¥￥]|rmb|cny)\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:元|块|yuan|rmb|cny)`)

func currencyAmounts(s string) []float64 {
	var out []float64
	for _, m := range currencyPattern.FindAllStringSubmatch(s, -1) {
		num := m[1]
		if num == "" {
			num = m[2]
		}
		if f, err := strconv.ParseFloat(num, 64); err == nil {
			out = append(out, f)
		}
	}
	return out
}

func containsMoney(allowed []int64, yuan float64) bool {
	for _, a := range allowed {
		if math.Abs(float64(a)/100-yuan) < 0.005 {
			return true
		}
	}
	return false
}
