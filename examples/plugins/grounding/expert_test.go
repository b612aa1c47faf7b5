package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// roomTurn is the turn the hook would see for the expert's answer to q in
// room r: the expert's tool calls and results, its reply, the stream
// context, and the catalog items a host lookup would return (those the
// reply or the message names, and those the calls looked up).
func roomTurn(t *testing.T, r *liveroom.Room, h *harness.Harness, q liveroom.Question, narration bool) (Turn, bool) {
	t.Helper()
	msgs, err := r.Expert(h, nil, q)
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	turn := Turn{Message: q.Text, Viewer: q.Viewer, Lang: runtimeLang(q.Text), Attempt: 1, Attempts: 2, Config: Config{LowStock: defaultLowStock}}
	if narration {
		turn.Message, turn.Viewer = narrationPrefix+q.Text, ""
	}
	var pending []harness.ToolCall
	for _, m := range msgs {
		switch m.Role {
		case harness.RoleAssistant:
			if len(m.ToolCalls) == 0 {
				turn.Reply = m.Content
			}
			pending = append(pending, m.ToolCalls...)
		case harness.RoleTool:
			if len(pending) == 0 {
				t.Fatalf("%s: a tool result without a call", q.ID)
			}
			c := pending[0]
			pending = pending[1:]
			turn.Calls = append(turn.Calls, Call{Name: c.Name, Export: c.Name, Arguments: c.Arguments, Result: []byte(m.Content)})
		}
	}
	if turn.Reply == "" {
		return turn, false // spam: the expert stays silent
	}
	for _, c := range r.StreamContext() {
		turn.Context = append(turn.Context, ContextItem{Title: c.Title, Text: c.Text})
	}
	turn.Items = catalogFor(r, turn)
	return turn, true
}

// runtimeLang is the language the runtime tells the hook a reply must be
// in: "zh" when the message holds any Chinese, else "en".
func runtimeLang(message string) string {
	if hasHan(message) {
		return "zh"
	}
	return "en"
}

// catalogFor returns the room's items a host lookup would give the hook:
// by text (reply and message) and by the ids the calls name.
func catalogFor(r *liveroom.Room, turn Turn) []Item {
	text := strings.ToLower(turn.Reply + "\n" + turn.Message)
	var ids []string
	for _, c := range turn.parsedCalls() {
		ids = append(ids, c.itemIDs()...)
	}
	var out []Item
	for _, it := range r.Items {
		item := Item{ID: it.ID, Name: it.NameZH, Aliases: append([]string{it.NameEN}, it.Aliases...)}
		if n, ok := aliasLink(it.Aliases[0]); ok {
			item.Link = n
		}
		hit := false
		for _, id := range ids {
			hit = hit || id == it.ID
		}
		for _, n := range append([]string{item.Name}, item.Aliases...) {
			hit = hit || strings.Contains(text, strings.ToLower(n))
		}
		if hit {
			out = append(out, item)
		}
	}
	return out
}

func demoHarness(t testing.TB) *harness.Harness {
	t.Helper()
	h, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestExpertRepliesPass is the no-false-positive evidence of issue #18:
// the scripted expert's replies state exactly the facts of the tool
// results, so the check must allow every one of them, over the rooms
// and questions of the evaluation suites and of the varied training
// rooms, in both languages.
func TestExpertRepliesPass(t *testing.T) {
	h := demoHarness(t)
	checked := 0
	check := func(r *liveroom.Room, q liveroom.Question, narration bool) {
		turn, ok := roomTurn(t, r, h, q, narration)
		if !ok {
			return
		}
		checked++
		if fs := Check(turn); len(fs) > 0 {
			t.Errorf("room %d %s %s %q → %q: %v", r.Seed, q.Type, q.Lang, turn.Message, turn.Reply, fs)
		}
	}
	for _, cfg := range []liveroom.RoomConfig{{MinItems: 3, MaxItems: 6}, {Variety: 1}, {Variety: 2}, {Variety: 3}} {
		for seed := uint64(1); seed <= 30; seed++ {
			r := liveroom.NewRoom(seed, cfg)
			for _, q := range r.Questions(seed*7919, 10, liveroom.QuestionConfig{TypoRate: 0.15}) {
				check(r, q, false)
			}
			for _, nt := range []liveroom.QuestionType{liveroom.QNarrateFeatured, liveroom.QNarrateCoupon, liveroom.QNarrateStock} {
				for _, l := range []liveroom.Lang{liveroom.LangZH, liveroom.LangEN} {
					q, err := r.Narration(nt, l)
					if err != nil {
						t.Fatal(err)
					}
					check(r, q, true)
				}
			}
		}
	}
	// The transfer family: catalogs, item kinds and phrasing no training
	// room has (link numbers, allergens, restock dates, unstated facts).
	for seed := uint64(1); seed <= 100; seed++ {
		r, err := liveroom.TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range r.TransferQuestions(seed, 10) {
			check(r, q, false)
		}
	}
	if checked < 2500 {
		t.Fatalf("only %d expert replies checked", checked)
	}
	t.Logf("%d expert replies checked", checked)
}

// TestExpertFallbacksPass rewrites every expert turn as if its reply
// were unbacked: the fallback must pass the check itself and, where the
// expert stated a price, state the same price.
func TestExpertFallbacksPass(t *testing.T) {
	h := demoHarness(t)
	for seed := uint64(1); seed <= 20; seed++ {
		r := liveroom.NewRoom(seed, liveroom.RoomConfig{Variety: 2})
		for _, q := range r.Questions(seed*31, 12, liveroom.QuestionConfig{}) {
			turn, ok := roomTurn(t, r, h, q, false)
			if !ok {
				continue
			}
			tf, _ := analyze(&turn)
			text := fallback(&turn, tf)
			check := turn
			check.Reply = text
			if fs := Check(check); len(fs) > 0 {
				t.Errorf("room %d %s %q: fallback %q is itself unbacked: %v", seed, q.Type, q.Text, text, fs)
			}
			if q.Type == liveroom.QPrice {
				it, _ := r.Item(idOf(turn))
				if p := liveroom.Yuan(it.Price()); !strings.Contains(text, p) {
					t.Errorf("room %d %q: fallback %q does not give the price %s", seed, q.Text, text, p)
				}
			}
		}
	}
}

// idOf is the item id the turn's first result names.
func idOf(t Turn) string {
	for _, c := range t.parsedCalls() {
		if ids := c.itemIDs(); len(ids) > 0 {
			return ids[0]
		}
	}
	return ""
}

func TestRoomTurnBuildsTheHookInput(t *testing.T) {
	h := demoHarness(t)
	r := liveroom.NewRoom(7, liveroom.RoomConfig{})
	q := r.Questions(1, 1, liveroom.QuestionConfig{Types: []liveroom.QuestionType{liveroom.QCoupon}, Langs: []liveroom.Lang{liveroom.LangZH}})[0]
	turn, ok := roomTurn(t, r, h, q, false)
	if !ok || len(turn.Calls) != 3 || turn.Reply == "" || len(turn.Items) == 0 || len(turn.Context) != 2 {
		t.Fatalf("turn %+v", turn)
	}
	if got := turn.Calls[2].Export; got != "coupon_check" {
		t.Fatalf("third call %s, want coupon_check", got)
	}
}

// TestMutatedExpertRepliesFail is the other half of the evidence: the
// expert's replies with one fact made wrong (another price, the
// opposite stock state, another dispatch time, a coupon the item does
// not have) must each be caught.
func TestMutatedExpertRepliesFail(t *testing.T) {
	h := demoHarness(t)
	mutated := 0
	for seed := uint64(1); seed <= 30; seed++ {
		r := liveroom.NewRoom(seed, liveroom.RoomConfig{Variety: 2})
		types := []liveroom.QuestionType{liveroom.QPrice, liveroom.QStock, liveroom.QShipping, liveroom.QCoupon}
		for _, q := range r.Questions(seed*13, 8, liveroom.QuestionConfig{Types: types}) {
			turn, ok := roomTurn(t, r, h, q, false)
			if !ok {
				continue
			}
			it, _ := r.Item(idOf(turn))
			wrong := mutate(turn.Reply, q, it, r)
			if wrong == "" || wrong == turn.Reply {
				continue
			}
			mutated++
			bad := turn
			bad.Reply = wrong
			if len(Check(bad)) == 0 {
				t.Errorf("room %d %s: the wrong reply %q (right: %q) passed", seed, q.Type, wrong, turn.Reply)
			}
		}
	}
	for seed := uint64(1); seed <= 40; seed++ {
		r, err := liveroom.TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range r.TransferQuestions(seed, 10) {
			turn, ok := roomTurn(t, r, h, q, false)
			if !ok || (q.Type != liveroom.QPrice && q.Type != liveroom.QLinkPrice) {
				continue
			}
			it, _ := r.Item(idOf(turn))
			wrong := strings.Replace(turn.Reply, liveroom.Yuan(it.Price()), liveroom.Yuan(it.Price()+1300), 1)
			if wrong == turn.Reply {
				continue
			}
			mutated++
			bad := turn
			bad.Reply = wrong
			if len(Check(bad)) == 0 {
				t.Errorf("transfer room %d %s: the wrong reply %q (right: %q) passed", seed, q.Type, wrong, turn.Reply)
			}
		}
	}
	if mutated < 180 {
		t.Fatalf("only %d replies mutated", mutated)
	}
}

// mutate makes one fact of an expert reply wrong, or returns "".
func mutate(reply string, q liveroom.Question, it liveroom.Item, r *liveroom.Room) string {
	switch q.Type {
	case liveroom.QPrice:
		p := liveroom.Yuan(it.Price())
		return strings.Replace(reply, p, liveroom.Yuan(it.Price()+1300), 1)
	case liveroom.QStock:
		for _, pair := range [][2]string{{"售罄", "有货"}, {"有货", "售罄"}, {"sold out", "in stock"}, {"in stock", "sold out"}} {
			if strings.Contains(reply, pair[0]) {
				return strings.Replace(reply, pair[0], pair[1], 1)
			}
		}
	case liveroom.QShipping:
		d := strconv.Itoa(it.Shipping.Days)
		return strings.Replace(reply, d, strconv.Itoa(it.Shipping.Days+10), 1)
	case liveroom.QCoupon:
		if _, ok := r.Coupon(it.ID); !ok {
			if q.Lang == liveroom.LangZH {
				return "可以用10元券，券后" + liveroom.Yuan(it.Price()-1000) + "元！"
			}
			return "Yes! A 10 yuan coupon applies, so you pay " + liveroom.Yuan(it.Price()-1000) + " yuan."
		}
	}
	return ""
}

// hostTurn is the turn the hook would see for the rule-based host's
// answer to q in room r: the host model (liveroom.Host) driven step by
// step as the runtime drives it, its calls run on the room's tools.
func hostTurn(t *testing.T, r *liveroom.Room, h *harness.Harness, q liveroom.Question) (Turn, []harness.Message, bool) {
	t.Helper()
	turn := Turn{Message: q.Text, Viewer: q.Viewer, Lang: runtimeLang(q.Text), Attempt: 1, Attempts: 2, Config: Config{LowStock: defaultLowStock}}
	stream := r.StreamContext()
	msgs := []harness.Message{{Role: harness.RoleUser, Content: q.Text}}
	for step := 0; step < 10 && turn.Reply == ""; step++ {
		p, err := harness.Render(h, harness.Conversation{Context: stream, Messages: msgs}, harness.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := liveroom.Host{}.Generate(context.Background(), runtime.Request{Messages: p.Messages, Tools: p.Tools})
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		if len(resp.ToolCalls) == 0 {
			turn.Reply = resp.Content
			msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: resp.Content})
			break
		}
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			var result []byte
			if tc.Name == liveroom.ToolLoadSkill {
				var args struct {
					SkillID string `json:"skill_id"`
				}
				_ = json.Unmarshal(tc.Arguments, &args)
				s, _ := h.Skill(args.SkillID)
				result = []byte(harness.SkillContent(s))
			} else {
				var args map[string]any
				_ = json.Unmarshal(tc.Arguments, &args)
				raw, err := r.CallTool(tc.Name, args)
				if err != nil {
					raw, _ = json.Marshal(map[string]string{"error": err.Error()})
				}
				result = raw
				turn.Calls = append(turn.Calls, Call{Name: tc.Name, Export: tc.Name, Arguments: tc.Arguments, Result: raw})
			}
			msgs = append(msgs, harness.Message{Role: harness.RoleTool, Name: tc.Name, Content: string(result)})
		}
	}
	if turn.Reply == "" {
		return turn, nil, false
	}
	for _, c := range stream {
		turn.Context = append(turn.Context, ContextItem{Title: c.Title, Text: c.Text})
	}
	turn.Items = catalogFor(r, turn)
	return turn, msgs, true
}

// calledLowWhenInStock reports whether every finding is a low-stock
// claim of a stock the tools state "in_stock" without a count.
func calledLowWhenInStock(fs []Finding) bool {
	for _, f := range fs {
		if f.Kind != KindStock || !strings.Contains(f.Why, "in_stock") || !containsAny(strings.ToLower(f.Phrase), []string{"limited", "紧张", "few"}) {
			return false
		}
	}
	return true
}

// TestHostRepliesPass runs the rule-based host (`serve --model host`)
// over the suites' rooms and the transfer family. The host states what
// its tools return, but it is rule-based and has faults; the room's own
// grader (GradeTranscript and its unbacked finder, written apart from
// this check) is the referee: a reply the check stops must be one the
// grader scores as inaccurate or unbacked, else the finding is a false
// positive of the check.
func TestHostRepliesPass(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the host over 1300 questions; skipped with -short")
	}
	h := demoHarness(t)
	checked, stopped := 0, 0
	check := func(r *liveroom.Room, q liveroom.Question) {
		turn, msgs, ok := hostTurn(t, r, h, q)
		if !ok {
			return
		}
		checked++
		fs := Check(turn)
		if len(fs) == 0 {
			return
		}
		stopped++
		g := r.GradeTranscript(q, msgs, liveroom.GradeOptions{})
		switch {
		case g.Accuracy == 1 && len(g.Unbacked) == 0 && calledLowWhenInStock(fs):
			// The grader's blind spot: the host calls a stock the tools
			// state "in_stock" without a count "limited" (the tools state
			// "low" when it is); see the report of #18.
			t.Logf("%s %q → %q: stopped; the grader misses it: %v", q.ID, turn.Message, turn.Reply, fs)
		case g.Accuracy == 1 && len(g.Unbacked) == 0:
			t.Errorf("%s room %d %s %q → %q: the grader finds it right, the check stops it: %v", q.ID, r.Seed, q.Type, turn.Message, turn.Reply, fs)
		default:
			t.Logf("%s %q → %q: stopped, as the grader agrees (%v): %v", q.ID, turn.Message, turn.Reply, g.Deductions, fs)
		}
	}
	for seed := uint64(1); seed <= 30; seed++ {
		r := liveroom.NewRoom(seed, liveroom.RoomConfig{MinItems: 3, MaxItems: 6})
		for _, q := range r.Questions(seed*7919, 10, liveroom.QuestionConfig{TypoRate: 0.15}) {
			check(r, q)
		}
	}
	for seed := uint64(1); seed <= 100; seed++ {
		r, err := liveroom.TransferRoom(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range r.TransferQuestions(seed, 10) {
			check(r, q)
		}
	}
	t.Logf("%d host replies checked, %d stopped", checked, stopped)
}
