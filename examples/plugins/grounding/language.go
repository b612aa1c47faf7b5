package main

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// unitWords are Latin words a Chinese reply may hold without being in
// English, as the majority rule reads it.
var unitWords = []string{"ml", "cm", "kg", "mm", "mah", "spf", "xl", "xxl", "xxxl", "xs", "vs", "ok", "app", "led", "usb", "vip", "pa", "ip",
	"mg", "gb", "tb", "yuan", "rmb", "cny"}

// plainLatin are the Latin words the room's grader (trainer/liveroom
// FindUnbacked) reads as Chinese in a reply to a Chinese-speaking viewer:
// units, sizes, currencies. The run rule counts every other Latin word,
// so it is never looser than the grader; TestGraderLanguageVocabulary
// holds the list to the grader's.
var plainLatin = []string{"cm", "kg", "ml", "g", "mah", "spf", "pa", "ok", "s", "m", "l", "xl", "xs", "xxl", "xxxl", "yuan", "rmb", "cny",
	"vip", "app", "vc", "h", "x", "d", "pp"}

var (
	// foreignWordRE finds Latin words as the room's grader counts them:
	// one letter is a word too.
	foreignWordRE = regexp.MustCompile(`[A-Za-z][A-Za-z'’]*`)
	// addresseeRE finds the name a greeting addresses ("谢谢小2024！",
	// "Thank you Kiki_88,") as the room's grader does. The grader reads
	// no Chinese there, so the run rule counts none there either: "Thank
	// you L多件一下再回复您。" is English with a name, not Chinese.
	addresseeRE = regexp.MustCompile(`(?:谢谢|感谢|@|\b(?i:thank you|thanks|hi|hello)\b)\s*([^\s，。！？、,.!?;；:：]{1,12})(?:[\s，。！？、,.!?;；:：]|$)`)
)

// language checks that the reply is in the viewer's language. A message
// mostly in the other language ("笔记本 pages?", which the runtime calls
// zh) may be answered in that one too (viewerLang).
//
// For en, no Han character may be spoken outside a catalog name of the
// turn's items and the viewer's name. For zh, two rules: the reply is not
// mostly Latin words (names, units and the viewer's words left out), and,
// as the room's grader reads it, it holds no run of four Latin words
// without Chinese between them, nor two Latin words and no Chinese at all.
// Aliases are no names here: "Smart Watch" or "3号链接" is how viewers
// call an item, words of their language, not the catalog's name.
func (c *checker) language() {
	var f *Finding
	switch viewerLang(c.t, c.tf) {
	case "en":
		f = c.chineseRun(c.nameMarks())
	case "zh":
		if f = c.mostlyLatin(); f == nil {
			f = c.latinRun(c.nameMarks())
		}
	}
	if f != nil {
		c.findings = append(c.findings, *f)
	}
}

// nameMarks marks the bytes of the reply the language rules leave out:
// the catalog names of the turn's items, the places they ship from, the
// viewer's name and residue, which is flagged on its own.
func (c *checker) nameMarks() []bool {
	marks := slices.Clone(c.unspoken)
	for _, it := range c.t.Items {
		n := asciiLower(strings.TrimSpace(normalize(it.Name)))
		if len(n) < 2 {
			continue
		}
		for start, end := range occurrences(c.lower, n) {
			if wordBounded(c.lower, start, end) {
				claim(marks, start, end)
			}
		}
	}
	// A ship-from place the results write only in Chinese is said as
	// written to an English-speaking viewer too.
	for _, f := range c.tf.inPlay() {
		for _, a := range f.attrs {
			if a[0] != shipFromKey {
				continue
			}
			for start, end := range occurrences(c.lower, asciiLower(a[1])) {
				claim(marks, start, end)
			}
		}
	}
	return marks
}

// chineseRun finds the first run of Han characters outside marks.
func (c *checker) chineseRun(marks []bool) *Finding {
	runs := hanRuns(c.text, marks)
	if len(runs) == 0 {
		return nil
	}
	return &Finding{Kind: KindLanguage, Phrase: c.text[runs[0][0]:runs[0][1]], Why: "Chinese in a reply to an English-speaking viewer", at: runs[0][0]}
}

// mostlyLatin finds a reply to a Chinese-speaking viewer that is mostly
// Latin words: names, units, the viewer's words and the results' values
// left out.
func (c *checker) mostlyLatin() *Finding {
	var names []string
	for _, f := range append(slices.Clone(c.tf.items), c.tf.global) {
		names = append(names, f.names...)
	}
	names = append(names, asciiLower(c.t.Viewer), asciiLower(normalize(c.t.Message)))
	known := func(s string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return n != "" && strings.Contains(n, s) })
	}
	han, words, first := scripts(c.text, c.lower, c.named, known)
	if first < 0 || (han > 0 && (words < 3 || words*2 <= han)) {
		return nil
	}
	_, end := sentence(c.text, first)
	return &Finding{Kind: KindLanguage, Phrase: strings.TrimSpace(c.text[first:end]), Why: "English in a reply to a Chinese-speaking viewer", at: first}
}

// latinRun finds, as the room's grader does, Latin words outside marks
// that make a reply to a Chinese-speaking viewer English: two or more
// when no Chinese is left once names and the addressee of a greeting are
// left out, else four or more with no Chinese between them. Units,
// sizes and the variant names of the turn's items are no English words.
func (c *checker) latinRun(marks []bool) *Finding {
	var variants []string
	for _, f := range c.tf.items {
		for _, v := range f.variants {
			variants = append(variants, asciiLower(v))
		}
	}
	var foreign [][]int
	for _, m := range foreignWordRE.FindAllStringIndex(c.text, -1) {
		w := asciiLower(c.text[m[0]:m[1]])
		if !overlaps(marks, m[0], m[1]) && !slices.Contains(plainLatin, w) && !slices.Contains(variants, w) {
			foreign = append(foreign, m)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	unread := slices.Clone(c.named)
	for i := range unread {
		unread[i] = unread[i] || marks[i]
	}
	blanked := []byte(c.text)
	for i := range blanked {
		if c.unspoken[i] {
			blanked[i] = ' '
		}
	}
	for _, m := range addresseeRE.FindAllSubmatchIndex(blanked, -1) {
		claim(unread, m[2], m[3])
	}
	chinese := func(start, end int) bool {
		for i, r := range c.text[start:end] {
			if !unread[start+i] && unicode.Is(unicode.Han, r) {
				return true
			}
		}
		return false
	}
	english := func(from, to int) *Finding {
		start, end := foreign[from][0], foreign[to][1]
		return &Finding{Kind: KindLanguage, Phrase: strings.TrimSpace(c.text[start:end]), Why: "English in a reply to a Chinese-speaking viewer", at: start}
	}
	if !chinese(0, len(c.text)) {
		if len(foreign) >= 2 {
			return english(0, len(foreign)-1)
		}
		return nil
	}
	start := 0
	for i := 1; i <= len(foreign); i++ {
		if i < len(foreign) && !chinese(foreign[i-1][1], foreign[i][0]) {
			continue
		}
		if i-start >= 4 {
			return english(start, i-1)
		}
		start = i
	}
	return nil
}

// viewerLang is the language a reply must be in: the language the
// viewer's message is mostly in, names of the catalog left out ("is
// 青柠手链 in stock?" is English, which the runtime calls zh for its Han
// characters), else the turn's Lang. A narration's instruction says
// nothing of the audience's language: the turn's Lang rules.
func viewerLang(t *Turn, tf *turnFacts) string {
	if t.Lang == "" || strings.HasPrefix(normalize(t.Message), narrationPrefix) {
		return t.Lang
	}
	if l := messageLang(t, tf); l != "" {
		return l
	}
	return t.Lang
}

// narrationPrefix starts the message of a turn no viewer asked.
const narrationPrefix = "(host strategy, no viewer asked) "

// scripts counts the Han characters and the Latin words of a text outside
// the marked bytes, leaving out units and what known reports as known
// (names, result values); first is where the first counted word starts.
func scripts(text, lower string, marked []bool, known func(string) bool) (han, words, first int) {
	first = -1
	for i, r := range text {
		if !marked[i] && unicode.Is(unicode.Han, r) {
			han++
		}
	}
	for _, m := range latinWords(lower) {
		w := lower[m[0]:m[1]]
		if overlaps(marked, m[0], m[1]) || slices.Contains(unitWords, w) || known(w) {
			continue
		}
		words++
		if first < 0 {
			first = m[0]
		}
	}
	return han, words, first
}

// messageLang is the language the viewer's message is mostly in, names
// of the catalog left out: "zh", "en", or "" when it has neither.
func messageLang(t *Turn, tf *turnFacts) string {
	msg := strings.TrimPrefix(normalize(t.Message), narrationPrefix)
	lower := asciiLower(msg)
	marked := make([]bool, len(msg))
	for _, f := range tf.items {
		for _, n := range f.names {
			for from := 0; from < len(lower); {
				i := strings.Index(lower[from:], n)
				if i < 0 {
					break
				}
				claim(marked, from+i, from+i+len(n))
				from += i + len(n)
			}
		}
	}
	han, words, _ := scripts(msg, lower, marked, func(string) bool { return false })
	switch {
	case han == 0 && words == 0:
		return ""
	case words*2 > han:
		return "en"
	}
	return "zh"
}

// latinWords returns the runs of two or more ASCII letters of lower.
func latinWords(lower string) [][2]int {
	var out [][2]int
	for i := 0; i < len(lower); {
		if lower[i] < 'a' || lower[i] > 'z' {
			i++
			continue
		}
		j := i
		for j < len(lower) && lower[j] >= 'a' && lower[j] <= 'z' {
			j++
		}
		if j-i >= 2 {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

// hanRuns returns the runs of Han characters outside the marked bytes.
func hanRuns(text string, marked []bool) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range text {
		han := unicode.Is(unicode.Han, r) && !marked[i]
		switch {
		case han && start < 0:
			start = i
		case !han && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}
