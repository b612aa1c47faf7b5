package sft

import (
	"fmt"
	"math/rand/v2"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/trainer/liveroom"
)

// SkillPicks returns n skill-choice warm-up conversations: the skills of
// base, renamed (mostly to coined ids), reworded and reordered by the
// training pool's families, listed as the prompt lists them ("id:
// description"), a viewer's message from a shop room, and, as the answer,
// the id of the skill the message's gold loads. A renamed harness asks
// this one decision of the model; a live-room trajectory teaches it
// through one short id among hundreds of tokens, this warm-up through
// nothing else. The same base, seed and n always give the same
// conversations.
func SkillPicks(seed uint64, n int, base *harness.Harness) ([]Trajectory, error) {
	if n == 0 {
		return nil, nil
	}
	if base == nil || len(base.Skills) == 0 {
		return nil, fmt.Errorf("sft: skill picks need a harness with skills")
	}
	var fams []hsa.Family
	for _, name := range []string{"skill-reword", "skill-rename", "skill-reorder"} {
		f, err := hsa.Lookup(name)
		if err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
	loadTool, loadParam := base.LoadSkillToolName(), base.LoadSkillParamName()
	rng := rand.New(rand.NewPCG(seed, 0x736b696c6c706b)) // "skillpk"
	out := make([]Trajectory, 0, n)
	for tries := 0; len(out) < n && tries < 10*n; tries++ {
		room, err := liveroom.ShopRoom(rng.Uint64(), liveroom.ShopConfig{MinItems: 1, MaxItems: 6})
		if err != nil {
			return nil, err
		}
		qs := room.ShopQuestions(rng.Uint64(), 1)
		if len(qs) == 0 {
			continue
		}
		q := qs[0]
		var gold *hsa.Call
		for i, c := range q.Gold.Calls {
			if c.Name == loadTool {
				gold = &q.Gold.Calls[i]
				break
			}
		}
		if gold == nil {
			continue
		}
		h, rec := base, hsa.Record{}
		opts := hsa.Options{Gold: []hsa.Call{*gold}}
		for _, f := range fams {
			if h, rec, err = onTop(h, rec, f, rng.Int64(), opts); err != nil {
				return nil, fmt.Errorf("sft: skill picks: %w", err)
			}
		}
		m := rec.Mapping()
		mapped, err := m.Map(*gold)
		if err != nil {
			return nil, fmt.Errorf("sft: skill picks: %w", err)
		}
		id, _ := mapped.Arguments[loadParam].(string)
		if id == "" {
			continue
		}
		items := make([]string, len(h.Skills))
		for i, sk := range h.Skills {
			items[i] = sk.ID + ": " + sk.Description
		}
		format := []harness.ListFormat{harness.ListBullets, harness.ListNumbered}[rng.IntN(2)]
		var prompt string
		if q.Lang == liveroom.LangZH {
			prompt = fmt.Sprintf("技能：\n%s\n\n观众：%s\n回答前应该加载哪个技能？只回答它的编号。", harness.FormatList(items, format), q.Text)
		} else {
			prompt = fmt.Sprintf("Skills:\n%s\n\nViewer: %s\nWhich skill should be loaded before answering? Answer with its id.", harness.FormatList(items, format), q.Text)
		}
		out = append(out, plainTrajectory(fmt.Sprintf("skill-pick-%d-%d", seed, len(out)), prompt, id))
	}
	return out, nil
}
