package eval

import (
	"encoding/json"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// priceTurn is a turn that looked the room's first item up and replied.
func priceTurn(t *testing.T, room *liveroom.Room, outcome runtime.Outcome, reply string) *runtime.Turn {
	t.Helper()
	it := room.Items[0]
	result, err := room.CallTool(liveroom.ToolProductLookup, map[string]any{"query": it.ID})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []harness.Message{
		{Role: harness.RoleUser, Content: "How much is " + it.NameEN + "?"},
		{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{Name: liveroom.ToolProductLookup, Arguments: json.RawMessage(`{"query":"` + it.ID + `"}`)}}},
		{Role: harness.RoleTool, Name: liveroom.ToolProductLookup, Content: string(result)},
	}
	if outcome != runtime.OutcomeSafeLine {
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: reply})
	}
	return &runtime.Turn{Outcome: outcome, Reply: reply, Messages: msgs}
}

// TestOnAirCountsOnlyRepliesThatAired checks what reaches the count: a
// reply the runtime spoke, with its unbacked statements by kind; not the
// runtime's safe line (whose statements are not the model's), not a
// denied turn.
func TestOnAirCountsOnlyRepliesThatAired(t *testing.T) {
	room := liveroom.NewRoom(1, roomConfig())
	it := room.Items[0]
	q := liveroom.Question{Type: liveroom.QPrice, Lang: liveroom.LangEN, Text: "How much is " + it.NameEN + "?", Viewer: "Mia"}
	price := liveroom.Yuan(it.Price())
	cases := []struct {
		name            string
		outcome         runtime.Outcome
		reply           string
		onAir, unbacked int
		kinds           map[string]int
	}{
		{"backed reply", runtime.OutcomeReplied, "It is " + price + " yuan now.", 1, 0, nil},
		{"unbacked reply", runtime.OutcomeReplied, "It is " + price + " yuan and in stock! 现在有货", 1, 1,
			map[string]int{liveroom.UnbackedStockState: 1, liveroom.UnbackedLanguage: 1}},
		{"safe line", runtime.OutcomeSafeLine, "Sorry, let me check that and get back to you. 稍等，我确认一下再回复您。", 0, 0, nil},
		{"denied", runtime.OutcomeDenied, "", 0, 0, nil},
	}
	h := base(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := priceTurn(t, room, c.outcome, c.reply)
			g := gradeTurn(room, q, turn, nil, h)
			var res ItemResult
			res.countOnAir(turn, g.Unbacked)
			if res.OnAir != c.onAir || res.OnAirUnbacked != c.unbacked || len(res.UnbackedKinds) != len(c.kinds) {
				t.Fatalf("on air %d, unbacked %d, kinds %v; want %d, %d, %v (grade %+v)", res.OnAir, res.OnAirUnbacked, res.UnbackedKinds, c.onAir, c.unbacked, c.kinds, g)
			}
			for k, n := range c.kinds {
				if res.UnbackedKinds[k] != n {
					t.Errorf("kind %s counted %d, want %d", k, res.UnbackedKinds[k], n)
				}
			}
			if c.unbacked > 0 && g.Accuracy != 0 {
				t.Errorf("an unbacked reply kept accuracy %v", g.Accuracy)
			}
		})
	}
}

// TestReportShowsUnbacked checks the unbacked counts of a suite's report,
// by kind and by item, and their fields in its JSON.
func TestReportShowsUnbacked(t *testing.T) {
	stock := liveroom.Unbacked{Kind: liveroom.UnbackedStockState, Phrase: "有货", Why: "no stock check of this turn says it is in stock"}
	amount := liveroom.Unbacked{Kind: liveroom.UnbackedAmount, Phrase: "99元", Why: "no tool result of this turn gives 99 yuan"}
	results := []ItemResult{
		{ID: "a", Category: "stock", Grade: liveroom.Grade{Unbacked: []liveroom.Unbacked{stock, amount}}, OnAir: 1, OnAirUnbacked: 1,
			UnbackedKinds: map[string]int{liveroom.UnbackedStockState: 1, liveroom.UnbackedAmount: 1}},
		{ID: "b", Category: "price", Grade: liveroom.Grade{Accuracy: 1, Effectiveness: 1, Score: 1}, OnAir: 1},
		{ID: "c", Category: "spam", Grade: liveroom.Grade{Accuracy: 1, Effectiveness: 1, Score: 1}},
		{ID: "d", Category: "episode", Grade: liveroom.Grade{Unbacked: []liveroom.Unbacked{stock}}, OnAir: 7, OnAirUnbacked: 2,
			UnbackedKinds: map[string]int{liveroom.UnbackedStockState: 2}},
	}
	rep := summarize("lsqa", results, 0)
	if rep.OnAir != 9 || rep.OnAirUnbacked != 3 || rep.UnbackedKinds[liveroom.UnbackedStockState] != 3 || rep.UnbackedKinds[liveroom.UnbackedAmount] != 1 {
		t.Fatalf("on air %d, unbacked %d, kinds %v; want 9, 3, stock_state 3 and amount 1", rep.OnAir, rep.OnAirUnbacked, rep.UnbackedKinds)
	}
	if len(rep.UnbackedItems) != 2 || rep.UnbackedItems[0].ID != "a" || rep.UnbackedItems[1].ID != "d" {
		t.Fatalf("unbacked items %v, want a and d", rep.UnbackedItems)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		OnAir         int            `json:"on_air"`
		OnAirUnbacked int            `json:"on_air_unbacked"`
		UnbackedKinds map[string]int `json:"unbacked_kinds"`
		UnbackedItems []struct {
			ID    string         `json:"id"`
			Grade liveroom.Grade `json:"grade"`
		} `json:"unbacked_items"`
	}
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatal(err)
	}
	if s.OnAir != 9 || s.OnAirUnbacked != 3 || s.UnbackedKinds[liveroom.UnbackedStockState] != 3 || len(s.UnbackedItems) != 2 ||
		len(s.UnbackedItems[0].Grade.Unbacked) != 2 || s.UnbackedItems[0].Grade.Unbacked[0].Phrase != "有货" {
		t.Errorf("JSON report %s", js)
	}
}

// TestRewrittenRepliesAreCounted: a reply an after_response hook rewrote
// is on air in the hook's words; the report counts it and the score its
// item carries, so that what the model earned alone can be read off.
func TestRewrittenRepliesAreCounted(t *testing.T) {
	room := liveroom.NewRoom(1, roomConfig())
	turn := priceTurn(t, room, runtime.OutcomeReplied, "It is "+liveroom.Yuan(room.Items[0].Price())+" yuan.")
	var plain ItemResult
	plain.countOnAir(turn, nil)
	turn.Steps = append(turn.Steps,
		runtime.Step{Kind: "hook", Name: "speech_length", Event: harness.EventAfterResponse, Decision: &harness.HookDecision{Action: harness.ActionAllow}},
		runtime.Step{Kind: "hook", Name: "grounding", Event: harness.EventAfterResponse, Decision: &harness.HookDecision{Action: harness.ActionRewrite, Text: "x"}})
	var hooked ItemResult
	hooked.countOnAir(turn, nil)
	if plain.OnAirRewritten != 0 || hooked.OnAir != 1 || hooked.OnAirRewritten != 1 {
		t.Fatalf("rewritten %d without a rewrite, %d of %d with one; want 0, 1 of 1", plain.OnAirRewritten, hooked.OnAirRewritten, hooked.OnAir)
	}
	rep := summarize("lsqa", []ItemResult{
		{ID: "a", Grade: liveroom.Grade{Score: 1}, OnAir: 1, OnAirRewritten: 1},
		{ID: "b", Grade: liveroom.Grade{Score: 1}, OnAir: 1},
		{ID: "c", Grade: liveroom.Grade{Score: 0.5}, OnAir: 4, OnAirRewritten: 2},
		{ID: "d", Grade: liveroom.Grade{Score: 0}, OnAir: 1, OnAirRewritten: 1},
	}, 0)
	if rep.OnAirRewritten != 4 || rep.RewrittenScore != 100*(1+0.25)/4 {
		t.Errorf("rewritten %d carrying %.2f; want 4 carrying 31.25", rep.OnAirRewritten, rep.RewrittenScore)
	}
}
