package hsa

import (
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// phrase is one way of saying something in a rule. notAfter and notBefore
// list neighbouring texts that make a match something else (要不要 is
// not 不要, 不得不 is not 不得).
type phrase struct {
	text      string
	notAfter  []string
	notBefore []string
}

// phraseGroups returns the paraphrase bank: groups of phrases that say
// the same thing in the rules of a live-commerce harness, in English and
// Chinese. English phrases match whole words, case-insensitively.
func phraseGroups() [][]phrase {
	p := func(texts ...string) []phrase {
		out := make([]phrase, len(texts))
		for i, t := range texts {
			out[i] = phrase{text: t}
		}
		return out
	}
	notAfter := func(g []phrase, texts ...string) []phrase {
		for i := range g {
			g[i].notAfter = texts
		}
		return g
	}
	notBefore := func(g []phrase, texts ...string) []phrase {
		for i := range g {
			g[i].notBefore = texts
		}
		return g
	}
	return [][]phrase{
		notBefore(p("you must", "you have to", "you need to", "you are required to"), " not"),
		p("do not", "don't", "never"),
		notAfter(p("always", "make sure to", "be sure to"), "not ", "almost "),
		p("make sure", "ensure"),
		p("please", "kindly"),
		p("avoid", "refrain from", "stay away from"),
		p("mention", "bring up"),
		p("viewers", "audience members"),
		p("viewer", "audience member"),
		p("products", "items"),
		p("product", "item"),
		p("replies", "responses", "answers"),
		p("your reply", "your response", "your answer"),
		p("short", "brief", "concise"),
		notBefore(notAfter(p("if", "when"), "as ", "what ", "since "), " any", " not", " so"),
		p("coupon", "voucher"),
		p("coupons", "vouchers"),
		p("customer", "shopper", "buyer"),
		p("customers", "shoppers", "buyers"),
		p("recommend", "suggest"),
		p("exaggerate", "overstate"),
		p("promise", "guarantee"),
		p("immediately", "right away"),
		p("politely", "courteously"),
		p("questions", "queries"),
		p("in stock", "available"),
		p("out of stock", "sold out"),
		p("for example", "for instance"),
		p("务必", "一定要", "必须"),
		{{text: "不要", notAfter: []string{"要"}, notBefore: []string{"紧"}}, {text: "切勿"},
			{text: "不得", notBefore: []string{"不", "了"}}, {text: "禁止"}},
		{{text: "请", notAfter: []string{"申", "邀", "聘", "宴", "恳", "敬"}, notBefore: []string{"求", "教", "问", "假", "客", "柬", "您"}}, {text: "请您"}},
		p("不能", "不可以"),
		p("回复", "回答", "答复"),
		p("简短", "简洁", "精炼"),
		p("商品", "产品", "宝贝"),
		p("价格", "价钱", "售价"),
		p("优惠券", "折扣券"),
		p("观众", "直播间观众"),
		p("如果", "假如", "若是"),
		p("提到", "提及", "说到"),
		{{text: "介绍", notAfter: []string{"我"}}, {text: "讲解"}},
		p("立即", "马上", "立刻"),
		p("承诺", "保证"),
		p("总是", "始终"),
		p("例如", "比如"),
		p("库存", "存货"),
		p("顾客", "买家", "消费者"),
		p("夸大", "夸张"),
	}
}

type phraseEntry struct {
	phrase
	group int
}

// paraphraser rewrites text through the phrase bank.
type paraphraser struct {
	groups  [][]phrase
	entries []phraseEntry // longest first, so "do not" wins over a shorter match
}

func newParaphraser() *paraphraser {
	p := &paraphraser{groups: phraseGroups()}
	for g, group := range p.groups {
		for _, ph := range group {
			p.entries = append(p.entries, phraseEntry{ph, g})
		}
	}
	sort.SliceStable(p.entries, func(i, j int) bool { return len(p.entries[i].text) > len(p.entries[j].text) })
	return p
}

func isASCIIWord(r rune) bool {
	return r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// matchAt returns the entry that matches text at byte offset i.
func (p *paraphraser) matchAt(text string, i int) (phraseEntry, bool) {
	for _, e := range p.entries {
		n := len(e.text)
		if i+n > len(text) {
			continue
		}
		cand := text[i : i+n]
		ascii := e.text[0] < utf8.RuneSelf
		if ascii {
			if !strings.EqualFold(cand, e.text) {
				continue
			}
			before, _ := utf8.DecodeLastRuneInString(text[:i])
			after, _ := utf8.DecodeRuneInString(text[i+n:])
			if i > 0 && isASCIIWord(before) || i+n < len(text) && isASCIIWord(after) {
				continue
			}
		} else if cand != e.text {
			continue
		}
		if hasAnySuffix(text[:i], e.notAfter) || hasAnyPrefix(text[i+n:], e.notBefore) {
			continue
		}
		return e, true
	}
	return phraseEntry{}, false
}

// hasAnySuffix reports whether s ends with one of list, ignoring ASCII case.
func hasAnySuffix(s string, list []string) bool {
	for _, x := range list {
		if len(s) >= len(x) && strings.EqualFold(s[len(s)-len(x):], x) {
			return true
		}
	}
	return false
}

// hasAnyPrefix reports whether s starts with one of list, ignoring ASCII case.
func hasAnyPrefix(s string, list []string) bool {
	for _, x := range list {
		if len(s) >= len(x) && strings.EqualFold(s[:len(x)], x) {
			return true
		}
	}
	return false
}

// paraphrase replaces each phrase of the bank found in text, with
// probability rate, by another phrase of its group. Spans in backticks,
// braces or angle brackets (identifiers, placeholders, tags) are kept.
func (p *paraphraser) paraphrase(rng *rand.Rand, text string, rate float64) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if end := protectedEnd(text, i); end > i {
			b.WriteString(text[i:end])
			i = end
			continue
		}
		e, ok := p.matchAt(text, i)
		if !ok {
			_, n := utf8.DecodeRuneInString(text[i:])
			b.WriteString(text[i : i+n])
			i += n
			continue
		}
		matched := text[i : i+len(e.text)]
		i += len(e.text)
		if rng.Float64() >= rate {
			b.WriteString(matched)
			continue
		}
		group := p.groups[e.group]
		alt := group[rng.IntN(len(group))].text
		if alt == e.text {
			alt = group[(indexOf(group, e.text)+1)%len(group)].text
		}
		if r, _ := utf8.DecodeRuneInString(matched); unicode.IsUpper(r) {
			alt = upperFirst(alt)
		}
		fixArticle(&b, alt)
		b.WriteString(alt)
	}
	return b.String()
}

func indexOf(group []phrase, text string) int {
	for i, ph := range group {
		if ph.text == text {
			return i
		}
	}
	return 0
}

// fixArticle turns a preceding "a" into "an" (and back) to fit the
// phrase that follows it.
func fixArticle(b *strings.Builder, next string) {
	s := b.String()
	vowel := next != "" && strings.ContainsRune("aeiouAEIOU", rune(next[0]))
	for _, art := range []string{"a ", "an ", "A ", "An "} {
		if !strings.HasSuffix(s, art) {
			continue
		}
		head := s[:len(s)-len(art)]
		if r, _ := utf8.DecodeLastRuneInString(head); head != "" && isASCIIWord(r) {
			return
		}
		want := art[:1]
		if vowel {
			want += "n"
		}
		b.Reset()
		b.WriteString(head + want + " ")
		return
	}
}

// protectedEnd returns the end of a protected span starting at i, or i.
func protectedEnd(text string, i int) int {
	var closer byte
	switch text[i] {
	case '`':
		closer = '`'
	case '{':
		closer = '}'
	case '<':
		closer = '>'
	default:
		return i
	}
	if j := strings.IndexByte(text[i+1:], closer); j >= 0 {
		return i + 1 + j + 1
	}
	return i
}

// isChinese reports whether text is mostly Chinese.
func isChinese(text string) bool {
	han, latin := 0, 0
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			latin++
		}
	}
	return han*3 > latin // a Han character carries about as much as a short word
}

// sectionTitles returns alternative titles for a section kind in a
// language and bank.
func sectionTitles(kind string, zh bool, bank wordBank) []string {
	type titles struct{ enTrain, enHeld, zhTrain, zhHeld []string }
	all := map[string]titles{
		"persona":       {[]string{"Persona", "Who You Are", "Your Role", "Character"}, []string{"Identity", "About You", "Host Profile"}, []string{"人设", "你的角色", "身份设定"}, []string{"主播人设", "角色说明", "你是谁"}},
		"rules":         {[]string{"Rules", "Guidelines", "Ground Rules", "Do's and Don'ts"}, []string{"Policies", "Constraints", "House Rules"}, []string{"规则", "行为准则", "注意事项"}, []string{"守则", "约束", "直播规范"}},
		"skills":        {[]string{"Skills", "Available Skills", "Skill Library"}, []string{"Capabilities", "Playbooks", "Loadable Guides"}, []string{"技能", "可用技能", "技能列表"}, []string{"能力清单", "技能库", "可加载的指南"}},
		"tools":         {[]string{"Tools", "Available Tools", "Functions"}, []string{"Actions", "Callable Functions", "Toolbox"}, []string{"工具", "可用工具", "函数"}, []string{"可调用的功能", "工具箱", "操作"}},
		"context":       {[]string{"Context", "Stream Context", "Live Context"}, []string{"Situation", "Current State", "Background"}, []string{"上下文", "直播间信息", "当前情况"}, []string{"背景信息", "实时状态", "场景"}},
		"output_format": {[]string{"Output Format", "Response Format", "How to Reply"}, []string{"Answer Style", "Reply Constraints", "Format"}, []string{"输出格式", "回复格式", "回复要求"}, []string{"作答方式", "输出规范", "格式要求"}},
	}
	t, ok := all[kind]
	if !ok {
		return nil
	}
	switch {
	case zh && bank == heldoutWords:
		return t.zhHeld
	case zh:
		return t.zhTrain
	case bank == heldoutWords:
		return t.enHeld
	}
	return t.enTrain
}

// titleCase varies the case of an English title: as written, upper or lower.
func titleCase(rng *rand.Rand, title string) string {
	switch rng.IntN(4) {
	case 0:
		return strings.ToUpper(title)
	case 1:
		return strings.ToLower(title)
	}
	return title
}

// descriptionFrames returns templates that frame a description ("%s"
// is the description) without changing what it says.
func descriptionFrames(zh bool) []string {
	if zh {
		return []string{"%s", "用途：%s", "说明：%s", "%s（需要时加载）", "适用场景：%s"}
	}
	return []string{"%s", "Use for: %s", "Purpose: %s", "%s (load when relevant)", "When to use: %s"}
}

// feedbackTemplates returns retry-feedback templates; each contains
// {feedback}, where the hook's feedback goes.
func feedbackTemplates(zh bool, bank wordBank) []string {
	switch {
	case zh && bank == heldoutWords:
		return []string{"合规提示——{feedback}请给出修正后的回答。", "{feedback}（上一条回复已被拦截，请再答一次）", "审核未通过，问题：{feedback} 请重新组织回答。"}
	case zh:
		return []string{"上一条回复未通过：{feedback} 请重新回答。", "回复被拦截，原因：{feedback} 请修改后再答。", "请根据以下反馈修改回复：{feedback}"}
	case bank == heldoutWords:
		return []string{"Compliance notice: {feedback} Produce a corrected answer.", "{feedback} (your reply was blocked; respond once more)", "Review failed. Issue: {feedback} Give the viewer a new answer."}
	}
	return []string{"Your previous reply was rejected: {feedback} Please answer again.", "The last answer did not pass review. {feedback} Try again.", "Rejected by a check: {feedback} Write a new reply.", "Please revise your reply. Reason: {feedback}"}
}

// identifierLike reports whether a name would not be mistaken for a
// plain word in prose, so its bare mentions can be rewritten safely.
func identifierLike(name string) bool {
	return len(name) >= 4 && strings.ContainsAny(name, "_-.0123456789") ||
		strings.IndexFunc(name, unicode.IsUpper) > 0
}

// rewriteMentions replaces mentions of renamed identifiers in text: in
// backticks always, bare only for identifier-like names and only as a
// whole token.
func rewriteMentions(text string, renames [][2]string) string {
	for _, r := range renames {
		old, nu := r[0], r[1]
		if old == "" || !strings.Contains(text, old) {
			continue
		}
		text = strings.ReplaceAll(text, "`"+old+"`", "`"+nu+"`")
		if !identifierLike(old) {
			continue
		}
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_\-])` + regexp.QuoteMeta(old) + `($|[^A-Za-z0-9_\-])`)
		// A second pass catches mentions that shared a separator with
		// the previous one ("a_b a_b").
		for range 2 {
			text = re.ReplaceAllString(text, "${1}"+strings.ReplaceAll(nu, "$", "$$")+"${2}")
		}
	}
	return text
}
