package liveroom

import (
	"slices"
	"testing"

	"github.com/livehat/livehat/internal/testfixture"
)

// TestStrategyEpisodesExpertIsPerfect holds every step of generated
// strategy episodes to the strategy suite's bar: the expert scores 1 with
// no unbacked statement, narrations follow the last viewer's language,
// and the episodes vary in length and in the mix of their steps.
func TestStrategyEpisodesExpertIsPerfect(t *testing.T) {
	h := testfixture.DemoHarness(t)
	lengths, kinds := map[int]bool{}, map[QuestionType]int{}
	for seed := uint64(1); seed <= 80; seed++ {
		room := NewRoom(900_000+seed, RoomConfig{MinItems: 1, MaxItems: 6, Variety: 3})
		steps, err := room.StrategyEpisode(seed)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := room.StrategyEpisode(seed)
		if !slices.EqualFunc(steps, again, func(a, b EpisodeStep) bool { return a.Question.Text == b.Question.Text }) {
			t.Fatalf("seed %d: two episodes", seed)
		}
		lengths[len(steps)] = true
		last := Lang("")
		for _, st := range steps {
			q := st.Question
			kinds[q.Type]++
			if st.Narration && last != "" && q.Lang != last {
				t.Errorf("%s: a narration after a %s viewer is in %s", q.ID, last, q.Lang)
			}
			if !st.Narration {
				last = q.Lang
			}
			if q.Gold.Silent {
				continue
			}
			msgs, err := room.Expert(h, nil, q)
			if err != nil {
				t.Fatal(err)
			}
			g := room.GradeTranscript(q, msgs, GradeOptions{ReplyChars: h.Pipeline.ReplyChars.Value})
			if g.Score != 1 || len(g.Unbacked) > 0 {
				t.Errorf("%s %s %q → %q: %v %v", q.ID, q.Type, q.Text, lastReply(msgs), g.Deductions, g.Unbacked)
			}
		}
	}
	if len(lengths) < 3 {
		t.Errorf("episodes of only %d lengths", len(lengths))
	}
	for _, k := range []QuestionType{QNarrateFeatured, QNarrateCoupon, QNarrateStock, QInjection, QPrice} {
		if kinds[k] == 0 {
			t.Errorf("no %s step in 80 episodes", k)
		}
	}
}

// TestExpertUnderFaultIsPerfect holds the expert's answers under every
// kind of tool fault, transient and persistent, to the robustness
// suite's grade: 1, with the retry made, and for a persistent fault the
// honest "unavailable" instead of an answer.
func TestExpertUnderFaultIsPerfect(t *testing.T) {
	h := testfixture.DemoHarness(t)
	n := 0
	for seed := uint64(1); seed <= 40; seed++ {
		rooms := []*Room{NewRoom(800_000+seed, RoomConfig{Variety: 3})}
		shop, err := ShopRoom(seed, ShopConfig{})
		if err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, shop)
		for ri, room := range rooms {
			var qs []Question
			if ri == 0 {
				qs = room.Questions(seed, 8, QuestionConfig{})
			} else {
				qs = room.ShopQuestions(seed, 8)
			}
			for qi, q := range qs {
				var tools []string
				for _, c := range q.Gold.Calls {
					if c.Name != ToolLoadSkill && !slices.Contains(tools, c.Name) {
						tools = append(tools, c.Name)
					}
				}
				if len(tools) == 0 {
					continue
				}
				f := Fault{Tool: tools[qi%len(tools)], Kind: FaultKinds()[(qi+int(seed))%4], Times: qi % 2}
				msgs, err := room.ExpertUnderFault(h, nil, q, f)
				if err != nil {
					t.Fatal(err)
				}
				n++
				fq := q.WithFault(f, room)
				g := room.GradeTranscript(fq, msgs, GradeOptions{ReplyChars: h.Pipeline.ReplyChars.Value})
				if g.Score != 1 || len(g.Unbacked) > 0 {
					t.Errorf("%s %s %+v %q → %q: %v %v", q.ID, q.Type, f, q.Text, lastReply(msgs), g.Deductions, g.Unbacked)
				}
				if f.Persistent() && lastReply(msgs) != UnavailableReply(q.Lang) {
					t.Errorf("%s: a persistent fault answered %q", q.ID, lastReply(msgs))
				}
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d faulted answers", n)
	}
}
