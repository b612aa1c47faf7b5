package hsa

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
)

func effectiveFormat(f harness.InjectFormat) harness.InjectFormat {
	if f == "" {
		return harness.InjectTags
	}
	return f
}

func effectivePosition(p harness.InjectPosition) harness.InjectPosition {
	if p == "" {
		return harness.InjectSystem
	}
	return p
}

func (v *variant) setInjection(to harness.Injection) {
	from := v.h.Pipeline.Injection
	if effectiveFormat(from.Format) != effectiveFormat(to.Format) {
		v.edit("pipeline.injection.format", string(from.Format), string(to.Format))
	}
	if effectivePosition(from.Position) != effectivePosition(to.Position) {
		v.edit("pipeline.injection.position", string(from.Position), string(to.Position))
	}
	if from.Tag != to.Tag && effectiveFormat(to.Format) == harness.InjectTags {
		v.edit("pipeline.injection.tag", from.Tag, to.Tag)
	}
	v.h.Pipeline.Injection = to
}

// injectTag generates an element name for tag-formatted injections.
func injectTag(v *variant) string {
	bases := []string{"context", "info", "note", "live_context", "hint", "notice", "memo", "stream_info"}
	base := bases[v.rng.IntN(len(bases))]
	return naturalName(v.rng, base, trainWords, []nameStyle{styleSnake, styleKebab}[v.rng.IntN(2)])
}

func positions() []harness.InjectPosition {
	return []harness.InjectPosition{harness.InjectSystem, harness.InjectBeforeUser, harness.InjectAfterUser}
}

func injectFormat(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	cur := v.h.Pipeline.Injection
	formats := slices.DeleteFunc([]harness.InjectFormat{harness.InjectTags, harness.InjectProse},
		func(f harness.InjectFormat) bool { return f == effectiveFormat(cur.Format) && v.chance(0.7) })
	to := harness.Injection{Format: formats[v.rng.IntN(len(formats))]}
	ps := positions()
	to.Position = ps[v.rng.IntN(len(ps))]
	if to.Format == harness.InjectTags {
		to.Tag = injectTag(v)
	}
	v.setInjection(to)
	if len(v.steps) == 0 {
		// The draw repeated the current convention: move it.
		ps = slices.DeleteFunc(ps, func(p harness.InjectPosition) bool { return p == effectivePosition(to.Position) })
		to.Position = ps[v.rng.IntN(len(ps))]
		v.setInjection(to)
	}
	return v.done("inject-format")
}

func injectJSON(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	cur := v.h.Pipeline.Injection
	ps := positions()
	if effectiveFormat(cur.Format) == harness.InjectJSON {
		// Already JSON: move it, so the variant still differs.
		ps = slices.DeleteFunc(ps, func(p harness.InjectPosition) bool { return p == effectivePosition(cur.Position) })
	}
	v.setInjection(harness.Injection{Format: harness.InjectJSON, Position: ps[v.rng.IntN(len(ps))]})
	return v.done("inject-json")
}

func retryPolicy(bank wordBank) applyFunc {
	family := "retry-policy"
	if bank == heldoutWords {
		family = "retry-heldout"
	}
	return func(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
		v := newVariant(h, seed, opts)
		if v.chance(0.7) {
			v.jitterLimit("retries", &v.h.Pipeline.Retries, 0)
		}
		cur := v.h.Pipeline.RetryFeedback
		if cur == "" {
			cur = harness.DefaultRetryFeedback
		}
		tmpls := slices.DeleteFunc(feedbackTemplates(v.chinese(), bank), func(t string) bool { return t == cur })
		to := tmpls[v.rng.IntN(len(tmpls))]
		v.edit("pipeline.retry_feedback", v.h.Pipeline.RetryFeedback, to)
		v.h.Pipeline.RetryFeedback = to
		return v.done(family)
	}
}

// Flaw is what the first, rejected reply of a simulated correction did wrong.
type Flaw string

// Flaws a simulated correction can plant.
const (
	// FlawTooLong pads the reply past the reply-length limit; an
	// after_response hook rejects it.
	FlawTooLong Flaw = "too_long"
	// FlawBannedClaim adds an absolute advertising claim (全网最低价,
	// "the best in the world"); a compliance hook rejects it.
	FlawBannedClaim Flaw = "banned_claim"
	// FlawSkippedSkill answers before loading a reply skill; the runtime
	// rejects it when the pipeline requires a reply skill.
	FlawSkippedSkill Flaw = "skipped_skill"
)

// Correction is a planned hook-triggered correction: ApplyCorrection
// turns a gold transcript into one where a first reply with Flaw is
// rejected with feedback and the gold reply follows.
type Correction struct {
	Flaw Flaw `json:"flaw"`
	// Hook names the hook that rejects the reply; empty when the runtime
	// itself does (a skipped reply skill).
	Hook string `json:"hook,omitempty"`
	// Seed picks the planted text, so applying the plan is reproducible.
	Seed int64 `json:"seed"`
}

func correction(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if v.h.Pipeline.Retries.Value < 1 {
		return v.done("correction")
	}
	var checker string
	for _, k := range v.h.Hooks {
		if k.Event == harness.EventAfterResponse {
			checker = k.Name
			break
		}
	}
	var flaws []Flaw
	if checker != "" {
		flaws = append(flaws, FlawTooLong, FlawBannedClaim)
	}
	if v.h.Pipeline.RequireReplySkill && len(v.h.Skills) > 0 {
		flaws = append(flaws, FlawSkippedSkill)
	}
	if len(flaws) == 0 {
		return v.done("correction")
	}
	c := Correction{Flaw: flaws[v.rng.IntN(len(flaws))], Seed: v.rng.Int64()}
	if c.Flaw != FlawSkippedSkill {
		c.Hook = checker
	}
	v.record(Step{Op: OpCorrection, Correction: &c})
	return v.done("correction")
}

// bannedClaims returns sentences with absolute claims that advertising
// rules forbid, and the term a compliance hook would quote.
func bannedClaims(zh bool) [][2]string {
	if zh {
		return [][2]string{{"这是全网最低价！", "全网最低价"}, {"史上最好用的一款！", "史上最好"}, {"我们是行业第一品牌！", "第一品牌"},
			{"百分百有效，绝对没有副作用！", "百分百有效"}, {"用了保证立刻见效！", "保证立刻见效"}}
	}
	return [][2]string{{"This is the lowest price on the whole internet!", "lowest price on the whole internet"},
		{"It is the best product in the world!", "best in the world"}, {"It works 100% of the time, guaranteed!", "100% guaranteed"},
		{"We are the number one brand on the market!", "number one brand"}, {"It has absolutely no side effects!", "absolutely no side effects"}}
}

func fillers(zh bool) []string {
	if zh {
		return []string{"家人们赶紧下单吧！", "这个价格真的很划算。", "直播间的宝宝们都说好。", "库存不多了，手慢无哦。", "喜欢的话点点关注。"}
	}
	return []string{"Grab it now before it's gone!", "This deal is really worth it.", "Everyone in the room loves it.",
		"Stock is running low, so hurry.", "Follow the stream for more deals."}
}

func joinSentence(zh bool, a, b string) string {
	if zh || a == "" {
		return a + b
	}
	return a + " " + b
}

// ApplyCorrection returns the transcript with the correction c planted
// before its final assistant reply (in h, the harness the transcript is
// rendered under): a first reply with c's flaw, the retry message the
// model reads (as a user turn, which Render accepts), then the gold
// reply. A skipped-skill correction goes before the turn's first
// load-skill call instead. The input is not modified.
func ApplyCorrection(h *harness.Harness, transcript []harness.Message, c Correction) ([]harness.Message, error) {
	if h.Pipeline.Retries.Value < 1 {
		return nil, fmt.Errorf("apply correction: the harness allows no retries (pipeline.retries is %d)", h.Pipeline.Retries.Value)
	}
	final := -1
	for i := len(transcript) - 1; i >= 0; i-- {
		if m := transcript[i]; m.Role == harness.RoleAssistant && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
			final = i
			break
		}
	}
	if final < 0 {
		return nil, fmt.Errorf("apply correction: the transcript has no final assistant reply")
	}
	gold := transcript[final].Content
	zh := isChinese(gold)
	rng := newRand(c.Seed)
	at := final
	var flawed, feedback string
	switch c.Flaw {
	case FlawTooLong:
		limit := h.Pipeline.ReplyChars.Value
		if limit < 1 {
			return nil, fmt.Errorf("apply correction: too_long needs a reply-length limit")
		}
		flawed = gold
		fs := fillers(zh)
		for utf8.RuneCountInString(flawed) <= limit {
			flawed = joinSentence(zh, flawed, fs[rng.IntN(len(fs))])
		}
		n := utf8.RuneCountInString(flawed)
		if zh {
			feedback = fmt.Sprintf("回复共%d字，超过了%d字的上限。", n, limit)
		} else {
			feedback = fmt.Sprintf("The reply has %d characters; the limit is %d.", n, limit)
		}
	case FlawBannedClaim:
		claims := bannedClaims(zh)
		cl := claims[rng.IntN(len(claims))]
		flawed = joinSentence(zh, gold, cl[0])
		if zh {
			feedback = fmt.Sprintf("回复含有绝对化用语“%s”，违反广告法。", cl[1])
		} else {
			feedback = fmt.Sprintf("The reply makes an absolute claim (%q), which advertising rules forbid.", cl[1])
		}
	case FlawSkippedSkill:
		at = -1
		for i := final - 1; i >= 0 && transcript[i].Role != harness.RoleUser; i-- {
			for _, tc := range transcript[i].ToolCalls {
				if tc.Name == h.LoadSkillToolName() {
					at = i
				}
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("apply correction: skipped_skill needs a load-skill call (%s) in the final turn", h.LoadSkillToolName())
		}
		flawed = gold
		// The runtime's own words (runtime/turn.go), so training shows
		// the model the feedback it will meet on air.
		feedback = h.ReplySkillFeedback()
	default:
		return nil, fmt.Errorf("apply correction: unknown flaw %q (want %s, %s or %s)", c.Flaw, FlawTooLong, FlawBannedClaim, FlawSkippedSkill)
	}
	out := make([]harness.Message, 0, len(transcript)+2)
	out = append(out, transcript[:at]...)
	out = append(out,
		harness.Message{Role: harness.RoleAssistant, Content: flawed},
		harness.Message{Role: harness.RoleUser, Content: h.RetryMessage(feedback)})
	return append(out, transcript[at:]...), nil
}

// FitReply fits a gold reply to a reply-length limit (in characters, as
// the pipeline counts them): a reply that fits is returned as is; a
// longer one is cut after the last sentence that fits. ok is false when
// not even the first sentence fits, and the trainer must get a new gold
// reply (from the teacher) instead.
func FitReply(reply string, limit int) (fitted string, ok bool) {
	if utf8.RuneCountInString(reply) <= limit {
		return reply, true
	}
	cut := -1
	n := 0
	for i, r := range reply {
		n++
		if n > limit {
			break
		}
		if strings.ContainsRune("。！？!?.…", r) {
			cut = i + utf8.RuneLen(r)
		}
	}
	if cut < 0 {
		return "", false
	}
	return strings.TrimSpace(reply[:cut]), true
}
