package hsa

import (
	"fmt"
	"slices"

	"github.com/livehat/livehat/harness"
)

// skillIDName generates a natural or code-style skill id from id.
func skillIDName(v *variant, id string, bank wordBank) string {
	style := nameStyle(v.rng.IntN(int(numStyles)))
	name := naturalName(v.rng, id, bank, style)
	if bank == trainWords && v.chance(0.25) {
		// Code-style ids carry a kind marker: "skill.price_reply", "priceReply.sk".
		markers := []string{"skill", "sk", "playbook", "guide"}
		m := markers[v.rng.IntN(len(markers))]
		if v.chance(0.5) {
			return m + "." + name
		}
		return name + "." + m
	}
	return name
}

// renameSkills renames some skills (at least one) with gen and rewrites
// their mentions.
func renameSkills(v *variant, family string, gen func(old string) string) (*harness.Harness, Mapping, error) {
	if len(v.h.Skills) == 0 {
		return v.done(family)
	}
	must := v.rng.IntN(len(v.h.Skills))
	var renames [][2]string
	for i := range v.h.Skills {
		if i != must && !v.chance(0.6) {
			continue
		}
		old := v.h.Skills[i].ID
		to := uniqueName(v.rng, old, v.takenSkillIDs(), func() string { return gen(old) })
		v.renameSkill(i, to)
		renames = append(renames, [2]string{old, to})
	}
	if err := v.rewriteMentions(renames); err != nil {
		return nil, Mapping{}, fmt.Errorf("%s: %w", family, err)
	}
	return v.done(family)
}

// skillRename renames skills with training-bank words or, more often,
// coined words: an id built of known words can be recalled ("price_reply"
// is the price skill), a coined one only read from its description, which
// is what a renamed harness asks of the model.
func skillRename(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	return renameSkills(v, "skill-rename", func(old string) string {
		if v.chance(0.6) {
			return coinedName(v.rng, []nameStyle{styleSnake, styleCamel, styleKebab}[v.rng.IntN(3)])
		}
		return skillIDName(v, old, trainWords)
	})
}

func skillRenameOpaque(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	return renameSkills(v, "skill-rename-opaque", func(string) string { return opaqueName(v.rng) })
}

// reword paraphrases a description and may put it in a frame.
func reword(v *variant, p *paraphraser, text string) string {
	out := p.paraphrase(v.rng, text, 0.7)
	if frames := descriptionFrames(isChinese(text)); v.chance(0.5) {
		out = fmt.Sprintf(frames[v.rng.IntN(len(frames))], out)
	}
	return out
}

func skillReword(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	p := newParaphraser()
	for i := range v.h.Skills {
		s := &v.h.Skills[i]
		if nu := reword(v, p, s.Description); nu != s.Description {
			v.edit(fmt.Sprintf("skills[%s].description", s.ID), s.Description, nu)
			s.Description = nu
		}
	}
	return v.done("skill-reword")
}

// noiseTopic is a subject a live-commerce avatar never needs.
type noiseTopic struct {
	words []string // id words
	en    string   // what the skill is about
	zh    string
}

func noiseTopics() []noiseTopic {
	return []noiseTopic{
		{[]string{"weather"}, "chatting about tomorrow's weather forecast", "聊明天的天气预报"},
		{[]string{"poetry"}, "writing classical poems on request", "按要求创作古诗"},
		{[]string{"tax", "filing"}, "explaining personal income tax filing", "讲解个人所得税申报"},
		{[]string{"chess"}, "analysing chess openings", "分析国际象棋开局"},
		{[]string{"recipe"}, "sharing home-cooking recipes", "分享家常菜谱"},
		{[]string{"travel", "visa"}, "answering travel visa questions", "解答旅游签证问题"},
		{[]string{"stock", "market"}, "commenting on stock market trends", "点评股市行情"},
		{[]string{"homework"}, "helping with school homework", "辅导中小学作业"},
		{[]string{"astrology"}, "reading horoscopes", "解读星座运势"},
		{[]string{"car", "repair"}, "diagnosing car engine problems", "诊断汽车发动机故障"},
		{[]string{"football", "score"}, "reporting live football scores", "播报足球比分"},
		{[]string{"legal", "advice"}, "giving general legal advice", "提供一般性法律咨询"},
		{[]string{"translation"}, "translating documents between languages", "翻译各类文档"},
		{[]string{"fitness", "plan"}, "designing gym workout plans", "制定健身训练计划"},
	}
}

func noiseAspects(zh bool) []string {
	if zh {
		return []string{"规范", "话术", "指南", "流程", "技巧"}
	}
	return []string{"rules", "script", "guide", "playbook", "tips"}
}

func skillNoise(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if len(v.h.Skills) == 0 {
		return v.done("skill-noise")
	}
	zh := v.chinese()
	topics := noiseTopics()
	aspectsEN := noiseAspects(false)
	for range 1 + v.rng.IntN(3) {
		t := topics[v.rng.IntN(len(topics))]
		ai := v.rng.IntN(len(aspectsEN))
		words := append(slices.Clone(t.words), aspectsEN[ai])
		style := nameStyle(v.rng.IntN(int(numStyles)))
		id := uniqueName(v.rng, "", v.takenSkillIDs(), func() string { return naturalName(v.rng, joinWords(words, styleSnake), trainWords, style) })
		kind := harness.SkillStrategy
		if v.chance(0.5) {
			kind = harness.SkillReply
		}
		s := harness.Skill{ID: id, Kind: kind, Format: harness.ListBullets}
		if zh {
			s.Description = t.zh + "的" + noiseAspects(true)[ai] + "。"
			s.Instructions = "仅在观众明确问到" + t.zh + "时使用。"
			s.Rules = []harness.Rule{{Text: "先确认观众的具体问题。"}, {Text: "回答要简短。"}}
		} else {
			s.Description = upperFirst(aspectsEN[ai]) + " for " + t.en + "."
			s.Instructions = "Use only when a viewer explicitly asks about " + t.en + "."
			s.Rules = []harness.Rule{{Text: "Confirm what exactly the viewer asks."}, {Text: "Keep the answer short."}}
		}
		at := v.rng.IntN(len(v.h.Skills) + 1)
		v.h.Skills = slices.Insert(v.h.Skills, at, s)
		v.record(Step{Op: OpAddSkill, To: id, LoadTool: v.h.LoadSkillToolName(), LoadParam: v.h.LoadSkillParamName()})
	}
	return v.done("skill-noise")
}

func skillMask(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	keep := opts.protectedSkills(v.h)
	var droppable []int
	for i, s := range v.h.Skills {
		if !keep[s.ID] {
			droppable = append(droppable, i)
		}
	}
	// Keep at least one skill, and a reply skill when the pipeline needs one.
	drop := map[int]bool{}
	for _, i := range droppable {
		if v.chance(0.5) {
			drop[i] = true
		}
	}
	if len(drop) == 0 && len(droppable) > 0 {
		drop[droppable[v.rng.IntN(len(droppable))]] = true
	}
	left, replies := 0, 0
	for i, s := range v.h.Skills {
		if !drop[i] {
			left++
			if s.Kind == harness.SkillReply {
				replies++
			}
		}
	}
	for _, i := range droppable {
		needReply := v.h.Pipeline.RequireReplySkill && replies == 0 && v.h.Skills[i].Kind == harness.SkillReply
		if drop[i] && (left == 0 || needReply) {
			delete(drop, i)
			left++
			if v.h.Skills[i].Kind == harness.SkillReply {
				replies++
			}
		}
	}
	var kept []harness.Skill
	for i, s := range v.h.Skills {
		if drop[i] {
			v.record(Step{Op: OpDropSkill, From: s.ID, LoadTool: v.h.LoadSkillToolName(), LoadParam: v.h.LoadSkillParamName()})
			continue
		}
		kept = append(kept, s)
	}
	v.h.Skills = kept
	return v.done("skill-mask")
}

func skillReorder(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if shuffle(v.rng, v.h.Skills) {
		v.edit("skills", "", "reordered")
	}
	return v.done("skill-reorder")
}

func ruleParaphrase(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	p := newParaphraser()
	changed := 0
	para := func(s string) string {
		out := p.paraphrase(v.rng, s, 0.7)
		if out != s {
			changed++
		}
		return out
	}
	for i := range v.h.Skills {
		s := &v.h.Skills[i]
		s.Instructions = para(s.Instructions)
		for j := range s.Rules {
			s.Rules[j].Text = para(s.Rules[j].Text)
		}
	}
	for i := range v.h.Layout.Sections {
		s := &v.h.Layout.Sections[i]
		if s.Kind == harness.SectionRules || s.Kind == harness.SectionOutputFormat || s.Kind == harness.SectionPersona {
			s.Text = para(s.Text)
			for j := range s.Items {
				s.Items[j] = para(s.Items[j])
			}
		}
	}
	if changed > 0 {
		v.edit("rules", "", fmt.Sprintf("paraphrased %d texts", changed))
	}
	return v.done("rule-paraphrase")
}

func ruleReorder(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	for i := range v.h.Skills {
		if shuffle(v.rng, v.h.Skills[i].Rules) {
			v.edit(fmt.Sprintf("skills[%s].rules", v.h.Skills[i].ID), "", "reordered")
		}
	}
	return v.done("rule-reorder")
}

// otherFormat returns a list format other than f (empty means bullets).
func otherFormat(v *variant, f harness.ListFormat) harness.ListFormat {
	if f == "" {
		f = harness.ListBullets
	}
	all := []harness.ListFormat{harness.ListBullets, harness.ListNumbered, harness.ListProse}
	all = slices.DeleteFunc(all, func(x harness.ListFormat) bool { return x == f })
	return all[v.rng.IntN(len(all))]
}

func ruleReformat(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	for i := range v.h.Skills {
		s := &v.h.Skills[i]
		if len(s.Rules) == 0 {
			continue
		}
		nu := otherFormat(v, s.Format)
		v.edit(fmt.Sprintf("skills[%s].format", s.ID), string(s.Format), string(nu))
		s.Format = nu
	}
	for i := range v.h.Layout.Sections {
		s := &v.h.Layout.Sections[i]
		if len(s.Items) == 0 {
			continue
		}
		nu := otherFormat(v, s.Format)
		v.edit(fmt.Sprintf("layout.sections[%s].format", s.Key()), string(s.Format), string(nu))
		s.Format = nu
	}
	return v.done("rule-reformat")
}

func ruleMask(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	for i := range v.h.Skills {
		s := &v.h.Skills[i]
		var kept []harness.Rule
		dropped := 0
		for _, r := range s.Rules {
			if !r.Essential && v.chance(0.5) {
				dropped++
				continue
			}
			kept = append(kept, r)
		}
		// A skill must keep some content.
		if len(kept) == 0 && len(s.Rules) > 0 && s.Instructions == "" && s.Plugin == "" {
			kept, dropped = s.Rules[:1], dropped-1
		}
		if dropped > 0 {
			v.edit(fmt.Sprintf("skills[%s].rules", s.ID), "", fmt.Sprintf("dropped %d non-essential rules", dropped))
			s.Rules = kept
		}
	}
	return v.done("rule-mask")
}
