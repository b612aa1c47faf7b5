package sft

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/liveroom"
)

// jobData is a small build with every generator of the job.
func jobData() DataConfig {
	c := DefaultDataConfig()
	c.Rooms, c.Questions = 50, 8
	c.Room.Variety = 3
	c.ShopShare, c.LongShare, c.StrategyShare, c.FaultShare, c.PersistentShare, c.OperatorShare, c.ContextShare = 0.4, 0.2, 0.4, 0.2, 0.6, 0.5, 0.9
	c.SkillRenameShare, c.SkillPicks = 0.5, 20
	return c
}

// TestJobDataIsPerfectAndDeterministic checks the job's trajectories: the
// expert passes the suites' grader on every one it keeps and none is
// rejected (so the data is what the generators ask, not what survived a
// filter); a seed always gives the same data; narration turns show the
// runtime's narration message; persistent faults end in the honest
// "unavailable"; operator edits, skills renamed on top and skill picks
// occur.
func TestJobDataIsPerfectAndDeterministic(t *testing.T) {
	base := demo(t)
	c := jobData()
	trs, st, err := Build(context.Background(), base, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rejected > 0 || st.NotApplicable > 0 {
		t.Errorf("%d trajectories rejected, %d variants not applicable: %+v", st.Rejected, st.NotApplicable, st)
	}
	if st.Shop == 0 || st.Strategy == 0 || st.Faults == 0 {
		t.Fatalf("the job's generators made nothing: %+v", st)
	}
	again, _, err := Build(context.Background(), base, c)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(trs)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Fatal("the same config built different data")
	}
	operators, narrations, renamedOnTop, picks := 0, 0, 0, 0
	for _, tr := range trs {
		if strings.HasPrefix(tr.ID, "skill-pick-") {
			picks++
		}
		if strings.HasPrefix(string(tr.Question.Type), "narrate_") {
			narrations++
			asked := false
			for _, m := range tr.Messages {
				asked = asked || m.Role == harness.RoleUser && m.Content == liveroom.NarrationPrefix+tr.Question.Text
			}
			if !asked {
				t.Errorf("%s: no turn asks the narration %q as the runtime does", tr.ID, tr.Question.Text)
			}
		}
		if f := tr.Fault; f != nil && f.Persistent() {
			if last := tr.Messages[len(tr.Messages)-1].Content; last != liveroom.UnavailableReply(tr.Question.Lang) {
				t.Errorf("%s: a persistent %s fault of %s answered %q", tr.ID, f.Kind, f.Tool, last)
			}
		}
		if tr.Record != nil {
			for i, x := range tr.Record.Transforms {
				if x.Family == "operator-edit" {
					operators++
				}
				if x.Family == "skill-rename" && i >= c.Transforms {
					renamedOnTop++
				}
			}
		}
	}
	if operators == 0 || narrations == 0 || renamedOnTop == 0 || picks != c.SkillPicks {
		t.Errorf("%d operator edits, %d narrations, %d skill renames on top, %d skill picks (want %d)", operators, narrations, renamedOnTop, picks, c.SkillPicks)
	}
}

// TestJobSharesAreValidated refuses shares outside [0, 1] and job
// generators a remote teacher cannot answer.
func TestJobSharesAreValidated(t *testing.T) {
	for name, edit := range map[string]func(*DataConfig){
		"shop":    func(c *DataConfig) { c.ShopShare = 1.5 },
		"fault":   func(c *DataConfig) { c.FaultShare = -0.1 },
		"rename":  func(c *DataConfig) { c.SkillRenameShare = 2 },
		"picks":   func(c *DataConfig) { c.SkillPicks = -1 },
		"teacher": func(c *DataConfig) { c.StrategyShare, c.Teacher = 0.2, "http://localhost:1" },
	} {
		t.Run(name, func(t *testing.T) {
			c := DefaultDataConfig()
			edit(&c)
			if err := c.validate(); err == nil {
				t.Errorf("%+v validated", c)
			}
		})
	}
}
