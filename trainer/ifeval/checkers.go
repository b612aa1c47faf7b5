package ifeval

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/livehat/livehat/trainer/ifeval/internal/pystr"
)

// pySpace is Python's Unicode \s as a character-class body for RE2.
const pySpace = `\t\n\v\f\r\x1c-\x1f\x85\p{Z}`

// Patterns of the checkers that take no arguments (immutable).
var (
	placeholderRE  = regexp.MustCompile(`\[.*?\]`)
	starBulletRE   = regexp.MustCompile(`(?m)^[` + pySpace + `]*\*[^*].*$`)
	dashBulletRE   = regexp.MustCompile(`(?m)^[` + pySpace + `]*-.*$`)
	highlightRE    = regexp.MustCompile(`\*[^\n*]*\*`)
	boldRE         = regexp.MustCompile(`\*\*[^\n*]*\*\*`)
	paragraphSepRE = regexp.MustCompile(`[` + pySpace + `]?\*\*\*[` + pySpace + `]?`)
	titleRE        = regexp.MustCompile(`<<[^\n]+>>`)
	ppsRE          = regexp.MustCompile(`(?m)[` + pySpace + `]*p\.[` + pySpace + `]?p\.[` + pySpace + `]?s.*$`)
	psRE           = regexp.MustCompile(`(?m)[` + pySpace + `]*p\.[` + pySpace + `]?s\..*$`)
)

// resources are the shared models some checkers need.
type resources interface {
	countSentences(text string) int
	wordTokens(text string) []string
	detectLanguage(text string) (string, bool)
}

// checkFunc decides whether a response follows one instruction.
type checkFunc func(res resources, response string) bool

// compiledInstruction is one instruction with its kwargs bound.
type compiledInstruction struct {
	id    string
	check checkFunc
}

// instructionIDs lists the 25 registered instruction ids.
var instructionIDs = []string{
	"keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency",
	"language:response_language",
	"length_constraints:number_sentences", "length_constraints:number_paragraphs",
	"length_constraints:number_words", "length_constraints:nth_paragraph_first_word",
	"detectable_content:number_placeholders", "detectable_content:postscript",
	"detectable_format:number_bullet_lists", "detectable_format:constrained_response",
	"detectable_format:number_highlighted_sections", "detectable_format:multiple_sections",
	"detectable_format:json_format", "detectable_format:title",
	"combination:two_responses", "combination:repeat_prompt",
	"startend:end_checker", "startend:quotation",
	"change_case:capital_word_frequency", "change_case:english_capital", "change_case:english_lowercase",
	"punctuation:no_comma",
}

// InstructionIDs returns the ids of the 25 IFEval checkers.
func InstructionIDs() []string { return append([]string(nil), instructionIDs...) }

// kwargs reads typed arguments, recording which keys were used so that
// unexpected ones can be reported. Null values count as absent, as the
// Hugging Face copy of the data pads every kwargs object with nulls.
type kwargs struct {
	m    map[string]any
	used map[string]bool
}

func (k *kwargs) get(name string) (any, error) {
	k.used[name] = true
	v, ok := k.m[name]
	if !ok || v == nil {
		return nil, fmt.Errorf("missing kwarg %q", name)
	}
	return v, nil
}

func (k *kwargs) str(name string) (string, error) {
	v, err := k.get(name)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("kwarg %q is %T, want a string", name, v)
	}
	return s, nil
}

func (k *kwargs) integer(name string) (int, error) {
	v, err := k.get(name)
	if err != nil {
		return 0, err
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case json.Number:
		f, err = x.Float64()
		if err != nil {
			return 0, fmt.Errorf("kwarg %q: %w", name, err)
		}
	default:
		return 0, fmt.Errorf("kwarg %q is %T, want an integer", name, v)
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<40 {
		return 0, fmt.Errorf("kwarg %q is %v, want an integer", name, f)
	}
	return int(f), nil
}

func (k *kwargs) strings(name string) ([]string, error) {
	v, err := k.get(name)
	if err != nil {
		return nil, err
	}
	var out []string
	switch x := v.(type) {
	case []string:
		out = x
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("kwarg %q[%d] is %T, want a string", name, i, e)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("kwarg %q is %T, want a list of strings", name, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kwarg %q is empty", name)
	}
	return out, nil
}

// relation reads a "less than" / "at least" comparison.
func (k *kwargs) relation(name string) (func(count, n int) bool, error) {
	s, err := k.str(name)
	if err != nil {
		return nil, err
	}
	switch s {
	case "less than":
		return func(count, n int) bool { return count < n }, nil
	case "at least":
		return func(count, n int) bool { return count >= n }, nil
	}
	return nil, fmt.Errorf("kwarg %q is %q, want \"less than\" or \"at least\"", name, s)
}

func (k *kwargs) unused() error {
	var extra []string
	for name, v := range k.m {
		if !k.used[name] && v != nil {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("unexpected kwargs %q", extra)
	}
	return nil
}

// pythonRegexp compiles a pattern that the official checkers pass to re
// unescaped. Plain words (all of IFEval's) mean the same in RE2; a pattern
// RE2 cannot compile is an error instead of a Python exception at check time.
func pythonRegexp(flags, pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return re, nil
}

// compileInstruction builds the checker for one instruction. randomLetter,
// when not nil, replaces a letter_frequency letter outside a–z as most
// official revisions do; nil counts such letters literally.
func compileInstruction(id string, m map[string]any, randomLetter func() rune) (compiledInstruction, error) {
	k := &kwargs{m: m, used: map[string]bool{}}
	check, err := buildCheck(id, k, randomLetter)
	if err != nil {
		return compiledInstruction{}, fmt.Errorf("%s: %w", id, err)
	}
	if err := k.unused(); err != nil {
		return compiledInstruction{}, fmt.Errorf("%s: %w", id, err)
	}
	return compiledInstruction{id: id, check: check}, nil
}

func buildCheck(id string, k *kwargs, randomLetter func() rune) (checkFunc, error) {
	switch id {
	case "keywords:existence":
		return keywordExistence(k)
	case "keywords:frequency":
		return keywordFrequency(k)
	case "keywords:forbidden_words":
		return forbiddenWords(k)
	case "keywords:letter_frequency":
		return letterFrequency(k, randomLetter)
	case "language:response_language":
		lang, err := k.str("language")
		if err != nil {
			return nil, err
		}
		return func(res resources, s string) bool {
			got, ok := res.detectLanguage(s)
			return !ok || got == lang
		}, nil
	case "length_constraints:number_sentences":
		return countCheck(k, "num_sentences", "relation", func(res resources, s string) int { return res.countSentences(s) })
	case "length_constraints:number_paragraphs":
		n, err := k.integer("num_paragraphs")
		if err != nil {
			return nil, err
		}
		return func(_ resources, s string) bool { return countStarParagraphs(s) == n }, nil
	case "length_constraints:number_words":
		return countCheck(k, "num_words", "relation", func(_ resources, s string) int { return CountWords(s) })
	case "length_constraints:nth_paragraph_first_word":
		return nthParagraphFirstWord(k)
	case "detectable_content:number_placeholders":
		n, err := k.integer("num_placeholders")
		if err != nil {
			return nil, err
		}
		return func(_ resources, s string) bool { return len(placeholderRE.FindAllStringIndex(s, -1)) >= n }, nil
	case "detectable_content:postscript":
		return postscript(k)
	case "detectable_format:number_bullet_lists":
		n, err := k.integer("num_bullets")
		if err != nil {
			return nil, err
		}
		return func(_ resources, s string) bool {
			return len(starBulletRE.FindAllStringIndex(s, -1))+len(dashBulletRE.FindAllStringIndex(s, -1)) == n
		}, nil
	case "detectable_format:constrained_response":
		return func(_ resources, s string) bool {
			s = pystr.Strip(s)
			for _, option := range []string{"My answer is yes.", "My answer is no.", "My answer is maybe."} {
				if strings.Contains(s, option) {
					return true
				}
			}
			return false
		}, nil
	case "detectable_format:number_highlighted_sections":
		n, err := k.integer("num_highlights")
		if err != nil {
			return nil, err
		}
		return func(_ resources, s string) bool { return CountHighlights(s) >= n }, nil
	case "detectable_format:multiple_sections":
		return multipleSections(k)
	case "detectable_format:json_format":
		return func(_ resources, s string) bool { return isJSONResponse(s) }, nil
	case "detectable_format:title":
		return func(_ resources, s string) bool {
			for _, t := range titleRE.FindAllString(s, -1) {
				if pystr.Strip(strings.TrimRight(strings.TrimLeft(t, "<"), ">")) != "" {
					return true
				}
			}
			return false
		}, nil
	case "combination:two_responses":
		return func(_ resources, s string) bool { return twoResponses(s) }, nil
	case "combination:repeat_prompt":
		p, err := k.str("prompt_to_repeat")
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, fmt.Errorf("kwarg \"prompt_to_repeat\" is empty")
		}
		want := pystr.Lower(pystr.Strip(p))
		return func(_ resources, s string) bool {
			return strings.HasPrefix(pystr.Lower(pystr.Strip(s)), want)
		}, nil
	case "startend:end_checker":
		p, err := k.str("end_phrase")
		if err != nil {
			return nil, err
		}
		want := pystr.Lower(pystr.Strip(p))
		return func(_ resources, s string) bool {
			return strings.HasSuffix(pystr.Lower(strings.Trim(pystr.Strip(s), `"`)), want)
		}, nil
	case "startend:quotation":
		return func(_ resources, s string) bool {
			s = pystr.Strip(s)
			return utf8.RuneCountInString(s) > 1 && s[0] == '"' && s[len(s)-1] == '"'
		}, nil
	case "change_case:capital_word_frequency":
		return countCheck(k, "capital_frequency", "capital_relation", func(res resources, s string) int {
			n := 0
			for _, w := range res.wordTokens(s) {
				if pystr.IsUpper(w) {
					n++
				}
			}
			return n
		})
	case "change_case:english_capital":
		return englishCase(pystr.IsUpper), nil
	case "change_case:english_lowercase":
		return englishCase(pystr.IsLower), nil
	case "punctuation:no_comma":
		return func(_ resources, s string) bool { return !strings.Contains(s, ",") }, nil
	}
	return nil, fmt.Errorf("unknown instruction id")
}

// countCheck compares a count with the threshold kwarg under the relation kwarg.
func countCheck(k *kwargs, numKey, relKey string, count func(resources, string) int) (checkFunc, error) {
	n, err := k.integer(numKey)
	if err != nil {
		return nil, err
	}
	rel, err := k.relation(relKey)
	if err != nil {
		return nil, err
	}
	return func(res resources, s string) bool { return rel(count(res, s), n) }, nil
}

func keywordExistence(k *kwargs) (checkFunc, error) {
	words, err := k.strings("keywords")
	if err != nil {
		return nil, err
	}
	var res []*regexp.Regexp
	for _, w := range words {
		re, err := pythonRegexp("(?i)", w)
		if err != nil {
			return nil, err
		}
		res = append(res, re)
	}
	return func(_ resources, s string) bool {
		for _, re := range res {
			if !re.MatchString(s) {
				return false
			}
		}
		return true
	}, nil
}

func keywordFrequency(k *kwargs) (checkFunc, error) {
	word, err := k.str("keyword")
	if err != nil {
		return nil, err
	}
	word = pystr.Strip(word)
	if word == "" {
		return nil, fmt.Errorf("kwarg \"keyword\" is blank")
	}
	re, err := pythonRegexp("(?i)", word)
	if err != nil {
		return nil, err
	}
	return countCheck(k, "frequency", "relation", func(_ resources, s string) int {
		return len(re.FindAllStringIndex(s, -1))
	})
}

func forbiddenWords(k *kwargs) (checkFunc, error) {
	words, err := k.strings("forbidden_words")
	if err != nil {
		return nil, err
	}
	var res []*regexp.Regexp
	for _, w := range words {
		re, err := pythonRegexp("(?i)", w)
		if err != nil {
			return nil, err
		}
		res = append(res, re)
	}
	return func(_ resources, s string) bool {
		for _, re := range res {
			if containsBounded(re, s) {
				return false
			}
		}
		return true
	}, nil
}

// containsBounded reports whether re matches somewhere in s with Python's
// Unicode \b on both sides, trying every start position as re.search does.
func containsBounded(re *regexp.Regexp, s string) bool {
	for pos := 0; pos <= len(s); {
		loc := re.FindStringIndex(s[pos:])
		if loc == nil {
			return false
		}
		start, end := pos+loc[0], pos+loc[1]
		if wordBoundary(s, start) && wordBoundary(s, end) {
			return true
		}
		if start >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		pos = start + size
	}
	return false
}

// wordBoundary is Python's Unicode \b at byte offset i of s.
func wordBoundary(s string, i int) bool {
	before, after := false, false
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		before = pystr.IsWord(r)
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		after = pystr.IsWord(r)
	}
	return before != after
}

func letterFrequency(k *kwargs, randomLetter func() rune) (checkFunc, error) {
	letter, err := k.str("letter")
	if err != nil {
		return nil, err
	}
	letter = pystr.Lower(pystr.Strip(letter))
	if utf8.RuneCountInString(letter) != 1 {
		return nil, fmt.Errorf("kwarg \"letter\" is %q, want one character", letter)
	}
	target, _ := utf8.DecodeRuneInString(letter)
	if randomLetter != nil && (target < 'a' || target > 'z') {
		target = []rune(pystr.Lower(string(randomLetter())))[0]
	}
	return countCheck(k, "let_frequency", "let_relation", func(_ resources, s string) int {
		n := 0
		for _, r := range pystr.Lower(s) {
			if r == target {
				n++
			}
		}
		return n
	})
}

func postscript(k *kwargs) (checkFunc, error) {
	marker, err := k.str("postscript_marker")
	if err != nil {
		return nil, err
	}
	marker = pystr.Strip(marker)
	var re *regexp.Regexp
	switch marker {
	case "P.P.S":
		re = ppsRE
	case "P.S.":
		re = psRE
	default:
		re, err = pythonRegexp("(?m)", `[`+pySpace+`]*`+pystr.Lower(marker)+`.*$`)
		if err != nil {
			return nil, err
		}
	}
	return func(_ resources, s string) bool { return re.MatchString(pystr.Lower(s)) }, nil
}

func multipleSections(k *kwargs) (checkFunc, error) {
	splitter, err := k.str("section_spliter")
	if err != nil {
		return nil, err
	}
	splitter = pystr.Strip(splitter)
	n, err := k.integer("num_sections")
	if err != nil {
		return nil, err
	}
	re, err := pythonRegexp("", `[`+pySpace+`]?`+splitter+`[`+pySpace+`]?\p{Nd}+[`+pySpace+`]?`)
	if err != nil {
		return nil, err
	}
	return func(_ resources, s string) bool { return len(re.FindAllStringIndex(s, -1)) >= n }, nil
}

func nthParagraphFirstWord(k *kwargs) (checkFunc, error) {
	num, err := k.integer("num_paragraphs")
	if err != nil {
		return nil, err
	}
	nth, err := k.integer("nth_paragraph")
	if err != nil {
		return nil, err
	}
	if nth <= 0 || nth > num {
		return nil, fmt.Errorf("nth_paragraph %d outside 1..num_paragraphs (%d)", nth, num)
	}
	first, err := k.str("first_word")
	if err != nil {
		return nil, err
	}
	first = pystr.Lower(first)
	return func(_ resources, s string) bool {
		paragraphs := strings.Split(s, "\n\n")
		count := 0
		for _, p := range paragraphs {
			if pystr.Strip(p) != "" {
				count++
			}
		}
		if nth > count {
			return false
		}
		p := pystr.Strip(paragraphs[nth-1])
		if p == "" {
			return false
		}
		word := strings.TrimLeft(strings.TrimLeft(pystr.Fields(p)[0], "'"), `"`)
		if i := strings.IndexAny(word, `.,?!'"`); i >= 0 {
			word = word[:i]
		}
		return count == num && pystr.Lower(word) == first
	}, nil
}

// englishCase is english_capital / english_lowercase: the case test first,
// then langdetect, whose failure counts as followed.
func englishCase(caseOK func(string) bool) checkFunc {
	return func(res resources, s string) bool {
		if !caseOK(s) {
			return false
		}
		lang, ok := res.detectLanguage(s)
		return !ok || lang == "en"
	}
}

// countStarParagraphs counts paragraphs separated by "***" dividers, or
// returns -1 when a blank paragraph sits between two others.
func countStarParagraphs(s string) int {
	parts := paragraphSepRE.Split(s, -1)
	n := len(parts)
	for i, p := range parts {
		if pystr.Strip(p) == "" {
			if i == 0 || i == len(parts)-1 {
				n--
			} else {
				return -1
			}
		}
	}
	return n
}

// CountHighlights counts markdown highlights as the official checker does:
// non-blank *single* spans plus non-blank **double** spans.
func CountHighlights(s string) int {
	n := 0
	for _, h := range highlightRE.FindAllString(s, -1) {
		if pystr.Strip(strings.Trim(h, "*")) != "" {
			n++
		}
	}
	for _, h := range boldRE.FindAllString(s, -1) {
		if pystr.Strip(h[2:len(h)-2]) != "" {
			n++
		}
	}
	return n
}

// CountWords counts maximal runs of Unicode word characters (NLTK's
// RegexpTokenizer(r"\w+"), as the official count_words uses).
func CountWords(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		w := pystr.IsWord(r)
		if w && !inWord {
			n++
		}
		inWord = w
	}
	return n
}

func twoResponses(s string) bool {
	parts := strings.Split(s, "******")
	var valid []string
	for i, p := range parts {
		if pystr.Strip(p) == "" {
			if i != 0 && i != len(parts)-1 {
				return false
			}
			continue
		}
		valid = append(valid, p)
	}
	return len(valid) == 2 && pystr.Strip(valid[0]) != pystr.Strip(valid[1])
}

// isJSONResponse strips optional markdown fences and reports whether the
// rest parses as Python's json.loads would accept it.
func isJSONResponse(s string) bool {
	s = pystr.Strip(s)
	for _, prefix := range []string{"```json", "```Json", "```JSON", "```"} {
		s = strings.TrimPrefix(s, prefix)
	}
	s = pystr.Strip(strings.TrimSuffix(s, "```"))
	return pythonJSONValid(s)
}

// pythonJSONValid is json.Valid extended with the constants Python's json
// accepts as values (NaN, Infinity, -Infinity): outside strings they are
// rewritten to null before validation.
func pythonJSONValid(s string) bool {
	if !strings.Contains(s, "NaN") && !strings.Contains(s, "Infinity") {
		return json.Valid([]byte(s))
	}
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			b.WriteByte(c)
		case strings.HasPrefix(s[i:], "-Infinity"):
			b.WriteString("null")
			i += len("-Infinity") - 1
		case strings.HasPrefix(s[i:], "Infinity"):
			b.WriteString("null")
			i += len("Infinity") - 1
		case strings.HasPrefix(s[i:], "NaN"):
			b.WriteString("null")
			i += len("NaN") - 1
		default:
			b.WriteByte(c)
		}
	}
	return json.Valid([]byte(b.String()))
}
