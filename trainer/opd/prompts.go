package opd

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
)

// PromptKind says what a general prompt exercises.
type PromptKind string

// Prompt kinds: instructions with checkable constraints, chit-chat and
// simple questions with a known answer.
const (
	KindInstruction PromptKind = "instruction"
	KindChitchat    PromptKind = "chitchat"
	KindQuestion    PromptKind = "question"
)

// ConstraintKind names a checkable constraint, in the spirit of IFEval's
// verifiable instructions.
type ConstraintKind string

// Constraint kinds.
const (
	MaxWords  ConstraintKind = "max_words" // at most N words
	MinWords  ConstraintKind = "min_words" // at least N words
	Keyword   ConstraintKind = "keyword"   // mentions Word
	Forbidden ConstraintKind = "forbidden" // never uses Word
	Lowercase ConstraintKind = "lowercase" // no capital letter
	Uppercase ConstraintKind = "uppercase" // no small letter
	JSON      ConstraintKind = "json"      // the whole reply is a JSON object
	Bullets   ConstraintKind = "bullets"   // exactly N lines starting with "- "
	Language  ConstraintKind = "language"  // written in Lang ("en" or "zh")
	EndWith   ConstraintKind = "end_with"  // ends with Word
)

// Constraint is one verifiable instruction.
type Constraint struct {
	Kind ConstraintKind `json:"kind"`
	N    int            `json:"n,omitempty"`
	Word string         `json:"word,omitempty"`
	Lang string         `json:"lang,omitempty"`
}

// Prompt is one general prompt: the user's text, its constraints, and for
// a simple question the answer the reply must contain.
type Prompt struct {
	ID          string       `json:"id"`
	Kind        PromptKind   `json:"kind"`
	Text        string       `json:"text"`
	Constraints []Constraint `json:"constraints,omitempty"`
	Answer      string       `json:"answer,omitempty"`
	// Reference is a reply that follows every constraint, written by rule:
	// data for a base model to learn general behaviour from, never the
	// distillation target (the teacher's own distribution is).
	Reference string `json:"reference"`
}

// Check reports how many of the prompt's checks a reply passes, out of how
// many: each constraint, plus the answer of a simple question.
func (p Prompt) Check(reply string) (passed, total int) {
	for _, c := range p.Constraints {
		total++
		if c.Check(reply) {
			passed++
		}
	}
	if p.Answer != "" {
		total++
		if strings.Contains(strings.ToLower(reply), strings.ToLower(p.Answer)) {
			passed++
		}
	}
	return passed, total
}

// Check reports whether reply follows the constraint.
func (c Constraint) Check(reply string) bool {
	reply = strings.TrimSpace(reply)
	lower := strings.ToLower(reply)
	switch c.Kind {
	case MaxWords:
		return countWords(reply) <= c.N
	case MinWords:
		return countWords(reply) >= c.N
	case Keyword:
		return strings.Contains(lower, strings.ToLower(c.Word))
	case Forbidden:
		return !strings.Contains(lower, strings.ToLower(c.Word))
	case Lowercase:
		return reply != "" && !strings.ContainsFunc(reply, unicode.IsUpper)
	case Uppercase:
		return reply != "" && !strings.ContainsFunc(reply, unicode.IsLower)
	case JSON:
		var v map[string]any
		return json.Unmarshal([]byte(reply), &v) == nil
	case Bullets:
		n := 0
		for line := range strings.SplitSeq(reply, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "- ") {
				n++
			}
		}
		return n == c.N
	case Language:
		han, letters := 0, 0
		for _, r := range reply {
			switch {
			case unicode.Is(unicode.Han, r):
				han++
				letters++
			case unicode.IsLetter(r):
				letters++
			}
		}
		if c.Lang == "zh" {
			return letters > 0 && 2*han >= letters
		}
		return letters > 0 && han == 0
	case EndWith:
		return strings.HasSuffix(reply, c.Word)
	}
	return false
}

// countWords counts white-space separated words, each Han character as
// one word.
func countWords(s string) int {
	n := 0
	for f := range strings.FieldsSeq(s) {
		han := 0
		for _, r := range f {
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
		n += max(han, 1)
	}
	return n
}

// topic is something an instruction asks about, with sentences about it.
type topic struct {
	name string
	en   []string
	zh   []string
}

func topics() []topic {
	return []topic{
		{"tea", []string{"Green tea tastes light and fresh.", "Black tea is stronger and pairs well with milk.", "Brew tea with water just below boiling."},
			[]string{"绿茶口感清新。", "红茶味道更浓，适合加奶。", "泡茶的水不要太烫。"}},
		{"running", []string{"Running builds stamina over time.", "Start slowly and rest between runs.", "Good shoes protect your knees."},
			[]string{"跑步可以慢慢提高耐力。", "刚开始要慢跑并注意休息。", "合适的跑鞋能保护膝盖。"}},
		{"the ocean", []string{"The ocean covers most of the planet.", "Waves are driven by the wind.", "Many animals live deep in the sea."},
			[]string{"海洋覆盖了地球的大部分。", "海浪主要由风推动。", "深海里生活着很多动物。"}},
		{"reading", []string{"Reading a little every day adds up.", "Stories help us see other lives.", "A quiet place makes reading easier."},
			[]string{"每天读一点书会有很大收获。", "故事让我们了解别人的生活。", "安静的地方更适合阅读。"}},
		{"cooking", []string{"Fresh vegetables make simple dishes shine.", "Taste the food while you cook.", "A sharp knife is safer than a dull one."},
			[]string{"新鲜蔬菜让家常菜更好吃。", "做饭时要边做边尝。", "锋利的刀反而更安全。"}},
		{"sleep", []string{"Adults need about eight hours of sleep.", "Screens before bed make sleep harder.", "A regular bedtime helps the body rest."},
			[]string{"成年人大约需要八小时睡眠。", "睡前看屏幕会影响入睡。", "规律的作息有助于休息。"}},
	}
}

// keywords are words an instruction may require or forbid.
func keywords() []string { return []string{"simple", "daily", "friendly", "quick", "healthy", "calm"} }

func endings() []string { return []string{"Thanks!", "Hope this helps.", "Have a nice day."} }

// Prompts generates n general prompts; the same seed gives the same
// prompts. About two thirds are instructions with one or two constraints,
// the rest chit-chat and simple questions.
func Prompts(seed uint64, n int) []Prompt {
	rng := rand.New(rand.NewPCG(seed, 0x6f7064)) // "opd"
	out := make([]Prompt, 0, n)
	for i := range n {
		var p Prompt
		switch r := rng.IntN(6); {
		case r < 4:
			p = instruction(rng)
		case r == 4:
			p = chitchat(rng)
		default:
			p = question(rng)
		}
		p.ID = fmt.Sprintf("g%d-%d", seed, i)
		out = append(out, p)
	}
	return out
}

func instruction(rng *rand.Rand) Prompt {
	tp := topics()[rng.IntN(len(topics()))]
	sentences := slicesPick(rng, tp.en, 2)
	text := fmt.Sprintf("Tell me about %s.", tp.name)
	var cs []Constraint
	kw := keywords()[rng.IntN(len(keywords()))]
	switch rng.IntN(8) {
	case 0:
		n := 8 + rng.IntN(8)
		cs = append(cs, Constraint{Kind: MaxWords, N: n})
		text += fmt.Sprintf(" Answer in at most %d words.", n)
		sentences = fitWords(sentences[:1], n)
	case 1:
		cs = append(cs, Constraint{Kind: Keyword, Word: kw})
		text += fmt.Sprintf(" Use the word %q.", kw)
		sentences = append(sentences, fmt.Sprintf("Keep it %s.", kw))
	case 2:
		bad := sentenceWord(sentences[0])
		cs = append(cs, Constraint{Kind: Forbidden, Word: bad})
		text += fmt.Sprintf(" Do not use the word %q.", bad)
		sentences = dropWord(sentences, bad)
	case 3:
		cs = append(cs, Constraint{Kind: Lowercase})
		text += " Write everything in lowercase letters."
		for i := range sentences {
			sentences[i] = strings.ToLower(sentences[i])
		}
	case 4:
		cs = append(cs, Constraint{Kind: Uppercase})
		text += " Write everything in capital letters."
		for i := range sentences {
			sentences[i] = strings.ToUpper(sentences[i])
		}
	case 5:
		cs = append(cs, Constraint{Kind: JSON})
		text += ` Reply with a JSON object whose key "answer" holds your text.`
		js, _ := json.Marshal(map[string]string{"answer": strings.Join(sentences, " ")})
		return Prompt{Kind: KindInstruction, Text: text, Constraints: cs, Reference: string(js)}
	case 6:
		n := 2 + rng.IntN(2)
		cs = append(cs, Constraint{Kind: Bullets, N: n})
		text += fmt.Sprintf(" Use exactly %d bullet points starting with \"- \".", n)
		lines := slicesPick(rng, tp.en, n)
		for i := range lines {
			lines[i] = "- " + lines[i]
		}
		return Prompt{Kind: KindInstruction, Text: text, Constraints: cs, Reference: strings.Join(lines, "\n")}
	default:
		cs = append(cs, Constraint{Kind: Language, Lang: "zh"})
		text += " Please answer in Chinese."
		return Prompt{Kind: KindInstruction, Text: text, Constraints: cs, Reference: strings.Join(slicesPick(rng, tp.zh, 2), "")}
	}
	if rng.IntN(3) == 0 {
		end := endings()[rng.IntN(len(endings()))]
		if cs[0].Kind == Lowercase {
			end = strings.ToLower(end)
		} else if cs[0].Kind == Uppercase {
			end = strings.ToUpper(end)
		}
		if cs[0].Kind != MaxWords {
			cs = append(cs, Constraint{Kind: EndWith, Word: end})
			text += fmt.Sprintf(" End your reply with %q.", end)
			sentences = append(sentences, end)
		}
	}
	return Prompt{Kind: KindInstruction, Text: text, Constraints: cs, Reference: strings.Join(sentences, " ")}
}

func chitchat(rng *rand.Rand) Prompt {
	pairs := [][2]string{
		{"Hi! How are you today?", "I'm doing well, thank you for asking. How are you?"},
		{"Good morning!", "Good morning! I hope your day goes well."},
		{"Thanks for your help.", "You're welcome. I'm glad I could help."},
		{"Can you tell me a fun fact?", "Sure. Honey never spoils if it is kept sealed."},
		{"I feel a bit tired.", "Sorry to hear that. A short rest and some water may help."},
		{"你好！", "你好！很高兴和你聊天。"},
		{"今天天气不错。", "是啊，适合出去走走。"},
	}
	p := pairs[rng.IntN(len(pairs))]
	return Prompt{Kind: KindChitchat, Text: p[0], Reference: p[1]}
}

func question(rng *rand.Rand) Prompt {
	if rng.IntN(2) == 0 {
		a, b := 1+rng.IntN(9), 1+rng.IntN(9)
		ans := fmt.Sprint(a + b)
		return Prompt{Kind: KindQuestion, Text: fmt.Sprintf("What is %d plus %d?", a, b), Answer: ans,
			Reference: fmt.Sprintf("%d plus %d is %s.", a, b, ans)}
	}
	qa := [][2]string{
		{"What color is the sky on a clear day?", "blue"},
		{"How many days are in a week?", "seven"},
		{"What do bees make?", "honey"},
		{"Which season comes after winter?", "spring"},
		{"What is frozen water called?", "ice"},
	}
	q := qa[rng.IntN(len(qa))]
	return Prompt{Kind: KindQuestion, Text: q[0], Answer: q[1], Reference: fmt.Sprintf("The answer is %s.", q[1])}
}

// slicesPick returns n distinct elements of xs (all of them, shuffled,
// when n ≥ len(xs)).
func slicesPick(rng *rand.Rand, xs []string, n int) []string {
	perm := rng.Perm(len(xs))
	out := make([]string, 0, n)
	for _, i := range perm[:min(n, len(xs))] {
		out = append(out, xs[i])
	}
	return out
}

// fitWords cuts the sentences to at most n words.
func fitWords(sentences []string, n int) []string {
	words := strings.Fields(strings.Join(sentences, " "))
	if len(words) > n {
		words = words[:n]
	}
	return []string{strings.Join(words, " ")}
}

// sentenceWord picks the longest word of a sentence to forbid.
func sentenceWord(s string) string {
	best := ""
	for _, w := range strings.Fields(s) {
		w = strings.Trim(strings.ToLower(w), ".,!?")
		if len(w) > len(best) {
			best = w
		}
	}
	return best
}

// dropWord keeps the sentences that do not use word.
func dropWord(sentences []string, word string) []string {
	var out []string
	for _, s := range sentences {
		if !strings.Contains(strings.ToLower(s), word) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []string{"Here is a short note on that."}
	}
	return out
}
