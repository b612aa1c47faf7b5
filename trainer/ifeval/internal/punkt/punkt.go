// Package punkt ports the inference half of NLTK's Punkt sentence tokenizer
// (Kiss & Strunk 2006; nltk.tokenize.punkt.PunktSentenceTokenizer as of NLTK
// 3.8, after the ReDoS fix of issue #2866) driven by the pretrained English
// parameters that IFEval loads as tokenizers/punkt/english.pickle.
//
// NLTK finds candidate boundaries and splits words with regular expressions
// that use lookahead, which Go's RE2 lacks; the same scans are written out by
// hand here. All positions are counted in code points, as Python does.
package punkt

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/livehat/livehat/trainer/ifeval/internal/pystr"
)

// Orthographic context flags, as in NLTK's punkt.py.
const (
	orthoBegUC = 1 << 1
	orthoMidUC = 1 << 2
	orthoUnkUC = 1 << 3
	orthoBegLC = 1 << 4
	orthoMidLC = 1 << 5
	orthoUnkLC = 1 << 6
	orthoUC    = orthoBegUC | orthoMidUC | orthoUnkUC
	orthoLC    = orthoBegLC | orthoMidLC | orthoUnkLC
)

// Tokenizer splits text into sentences with a fixed set of Punkt parameters.
// It is immutable after Load and safe for concurrent use.
type Tokenizer struct {
	abbrevs      map[string]bool
	collocations map[[2]string]bool
	sentStarters map[string]bool
	ortho        map[string]int
}

// paramsFile is the layout of punkt-english.json.
type paramsFile struct {
	AbbrevTypes  []string       `json:"abbrev_types"`
	Collocations [][]string     `json:"collocations"`
	SentStarters []string       `json:"sent_starters"`
	OrthoContext map[string]int `json:"ortho_context"`
}

// Load reads Punkt parameters from a JSON file with the keys abbrev_types,
// collocations, sent_starters and ortho_context.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("punkt: %w", err)
	}
	var p paramsFile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("punkt: parse %s: %w", path, err)
	}
	if len(p.AbbrevTypes) == 0 || len(p.OrthoContext) == 0 {
		return nil, fmt.Errorf("punkt: %s has no abbrev_types or ortho_context", path)
	}
	t := &Tokenizer{
		abbrevs:      make(map[string]bool, len(p.AbbrevTypes)),
		collocations: make(map[[2]string]bool, len(p.Collocations)),
		sentStarters: make(map[string]bool, len(p.SentStarters)),
		ortho:        p.OrthoContext,
	}
	for _, a := range p.AbbrevTypes {
		t.abbrevs[a] = true
	}
	for i, c := range p.Collocations {
		if len(c) != 2 {
			return nil, fmt.Errorf("punkt: %s: collocation %d has %d words, want 2", path, i, len(c))
		}
		t.collocations[[2]string{c[0], c[1]}] = true
	}
	for _, s := range p.SentStarters {
		t.sentStarters[s] = true
	}
	return t, nil
}

// span is a half-open range of code-point offsets.
type span struct{ start, stop int }

// Sentences returns the sentences of text as NLTK's tokenize(text) does,
// with boundary realignment.
func (t *Tokenizer) Sentences(text string) []string {
	rs := []rune(text)
	var out []string
	for _, s := range t.realign(rs, t.slices(rs)) {
		out = append(out, string(rs[s.start:s.stop]))
	}
	return out
}

// Count returns len(Sentences(text)).
func (t *Tokenizer) Count(text string) int {
	rs := []rune(text)
	return len(t.realign(rs, t.slices(rs)))
}

// endContext is a candidate boundary: the sentence-ending character at pos,
// the start of the following token (-1 when the boundary is followed by
// punctuation instead of whitespace) and the text that decides it.
type endContext struct {
	pos     int
	nextTok int
	context []rune
}

func isSentEnd(r rune) bool { return r == '.' || r == '?' || r == '!' }

// isNonWord is the class of characters that cannot appear within words.
func isNonWord(r rune) bool {
	return strings.ContainsRune(`)";}]*:@'({[?!`, r)
}

// potentialEnds mirrors _match_potential_end_contexts: every sentence-ending
// character followed by punctuation or by whitespace and a token, scanned
// right to left so that one preceding word serves only one candidate.
func potentialEnds(rs []rune) []endContext {
	type match struct {
		pos, afterEnd, nextTok int
	}
	var all []match
	n := len(rs)
	for i, r := range rs {
		if !isSentEnd(r) {
			continue
		}
		if i+1 < n && isNonWord(rs[i+1]) {
			all = append(all, match{i, i + 2, -1})
			continue
		}
		j := i + 1
		for j < n && pystr.IsSpace(rs[j]) {
			j++
		}
		if j == i+1 || j == n {
			continue
		}
		k := j
		for k < n && !pystr.IsSpace(rs[k]) {
			k++
		}
		all = append(all, match{i, k, j})
	}
	var kept []endContext
	beforeStart := 0
	for idx := len(all) - 1; idx >= 0; idx-- {
		m := all[idx]
		if len(kept) > 0 && m.pos+1 > beforeStart {
			continue
		}
		var word []rune
		word, beforeStart = lastWord(rs[:m.pos])
		ctx := make([]rune, 0, len(word)+m.afterEnd-m.pos)
		ctx = append(ctx, word...)
		ctx = append(ctx, rs[m.pos:m.afterEnd]...)
		kept = append(kept, endContext{pos: m.pos, nextTok: m.nextTok, context: ctx})
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept
}

// lastWord is Python's s.rsplit(maxsplit=1): it returns the last
// whitespace-separated word and the length of what remains before it (the
// remainder keeps its leading whitespace but loses the separating run), or 0
// when there is no second piece.
func lastWord(rs []rune) ([]rune, int) {
	end := len(rs)
	for end > 0 && pystr.IsSpace(rs[end-1]) {
		end--
	}
	start := end
	for start > 0 && !pystr.IsSpace(rs[start-1]) {
		start--
	}
	word := rs[start:end]
	rest := start
	for rest > 0 && pystr.IsSpace(rs[rest-1]) {
		rest--
	}
	if rest == 0 {
		return word, 0
	}
	return word, rest
}

// slices mirrors _slices_from_text.
func (t *Tokenizer) slices(rs []rune) []span {
	var out []span
	lastBreak := 0
	for _, c := range potentialEnds(rs) {
		if !t.containsSentbreak(c.context) {
			continue
		}
		out = append(out, span{lastBreak, c.pos + 1})
		if c.nextTok >= 0 {
			lastBreak = c.nextTok
		} else {
			lastBreak = c.pos + 1
		}
	}
	end := len(rs)
	for end > 0 && pystr.IsSpace(rs[end-1]) {
		end--
	}
	return append(out, span{lastBreak, end})
}

func isClosing(r rune) bool { return strings.ContainsRune(`"')]}`, r) }

// realignLen matches re_boundary_realignment (`["')\]}]+?(?:\s+|(?=--)|$)`,
// multiline) at the start of seg, returning the match length and the length
// of the match without trailing whitespace, or ok=false.
func realignLen(seg []rune) (full, trimmed int, ok bool) {
	for k := 0; k < len(seg) && isClosing(seg[k]); {
		k++
		switch {
		case k < len(seg) && pystr.IsSpace(seg[k]):
			e := k
			for e < len(seg) && pystr.IsSpace(seg[e]) {
				e++
			}
			return e, k, true
		case k+1 < len(seg) && seg[k] == '-' && seg[k+1] == '-':
			return k, k, true
		case k == len(seg):
			return k, k, true
		}
	}
	return 0, 0, false
}

// realign mirrors _realign_boundaries: closing quotes and brackets that
// follow a boundary move into the sentence they close.
func (t *Tokenizer) realign(rs []rune, slices []span) []span {
	var out []span
	realign := 0
	for i, s1 := range slices {
		s1.start += realign
		if i == len(slices)-1 {
			if s1.start < s1.stop {
				out = append(out, s1)
			}
			continue
		}
		s2 := slices[i+1]
		var seg []rune
		if s2.start < s2.stop {
			seg = rs[s2.start:s2.stop]
		}
		if full, trimmed, ok := realignLen(seg); ok {
			out = append(out, span{s1.start, s2.start + trimmed})
			realign = full
		} else {
			realign = 0
			if s1.start < s1.stop {
				out = append(out, s1)
			}
		}
	}
	return out
}

// token is PunktToken: a word with its type and first- and second-pass
// annotations.
type token struct {
	tok         []rune
	typ         string
	periodFinal bool
	sentbreak   bool
	abbr        bool
	ellipsis    bool
}

func newToken(tok []rune) *token {
	return &token{
		tok:         tok,
		typ:         tokenType(tok),
		periodFinal: tok[len(tok)-1] == '.',
	}
}

// tokenType lowercases the token and replaces numbers by "##number##"
// (_RE_NUMERIC = `^-?[\.,]?\d[\d,\.-]*\.?$`).
func tokenType(tok []rune) string {
	lower := pystr.Lower(string(tok))
	rs := []rune(lower)
	i := 0
	if i < len(rs) && rs[i] == '-' {
		i++
	}
	if i < len(rs) && (rs[i] == '.' || rs[i] == ',') {
		i++
	}
	if i < len(rs) && pystr.IsDecimal(rs[i]) {
		numeric := true
		for _, r := range rs[i+1:] {
			if !pystr.IsDecimal(r) && r != ',' && r != '.' && r != '-' {
				numeric = false
				break
			}
		}
		if numeric {
			return "##number##"
		}
	}
	return lower
}

func (k *token) typeNoPeriod() string {
	if len(k.typ) > 1 && strings.HasSuffix(k.typ, ".") {
		return k.typ[:len(k.typ)-1]
	}
	return k.typ
}

func (k *token) typeNoSentperiod() string {
	if k.sentbreak {
		return k.typeNoPeriod()
	}
	return k.typ
}

func (k *token) firstUpper() bool { return pystr.IsUpper(string(k.tok[:1])) }
func (k *token) firstLower() bool { return pystr.IsLower(string(k.tok[:1])) }

func (k *token) isEllipsis() bool {
	if len(k.tok) < 2 {
		return false
	}
	for _, r := range k.tok {
		if r != '.' {
			return false
		}
	}
	return true
}

// isInitial is _RE_INITIAL `[^\W\d]\.$`: one non-digit word character and a period.
func (k *token) isInitial() bool {
	return len(k.tok) == 2 && k.tok[1] == '.' && pystr.IsWord(k.tok[0]) && !pystr.IsDecimal(k.tok[0])
}

// containsSentbreak mirrors text_contains_sentbreak: whether any token but
// the last of the context is annotated as a sentence break.
func (t *Tokenizer) containsSentbreak(context []rune) bool {
	toks := tokenizeWords(context)
	for _, k := range toks {
		t.firstPass(k)
	}
	found := false
	for i, k := range toks {
		if i+1 < len(toks) {
			t.secondPass(k, toks[i+1])
		}
		if found {
			return true
		}
		if k.sentbreak {
			found = true
		}
	}
	return false
}

// firstPass mirrors _first_pass_annotation.
func (t *Tokenizer) firstPass(k *token) {
	s := string(k.tok)
	switch {
	case s == "." || s == "?" || s == "!":
		k.sentbreak = true
	case k.isEllipsis():
		k.ellipsis = true
	case k.periodFinal && !strings.HasSuffix(s, ".."):
		base := pystr.Lower(string(k.tok[:len(k.tok)-1]))
		parts := strings.Split(base, "-")
		if t.abbrevs[base] || t.abbrevs[parts[len(parts)-1]] {
			k.abbr = true
		} else {
			k.sentbreak = true
		}
	}
}

// orthoVerdict is the three-valued result of the orthographic heuristic.
type orthoVerdict int

const (
	orthoUnknown orthoVerdict = iota
	orthoStarter
	orthoNotStarter
)

// secondPass mirrors _second_pass_annotation for a token and its successor.
func (t *Tokenizer) secondPass(k1, k2 *token) {
	if !k1.periodFinal {
		return
	}
	typ := k1.typeNoPeriod()
	nextTyp := k2.typeNoSentperiod()
	initial := k1.isInitial()

	if t.collocations[[2]string{typ, nextTyp}] {
		k1.sentbreak = false
		k1.abbr = true
		return
	}
	if (k1.abbr || k1.ellipsis) && !initial {
		if t.orthoHeuristic(k2) == orthoStarter {
			k1.sentbreak = true
			return
		}
		if k2.firstUpper() && t.sentStarters[nextTyp] {
			k1.sentbreak = true
			return
		}
	}
	if initial || typ == "##number##" {
		v := t.orthoHeuristic(k2)
		if v == orthoNotStarter {
			k1.sentbreak = false
			k1.abbr = true
			return
		}
		if v == orthoUnknown && initial && k2.firstUpper() && t.ortho[nextTyp]&orthoLC == 0 {
			k1.sentbreak = false
			k1.abbr = true
		}
	}
}

// orthoHeuristic mirrors _ortho_heuristic: whether the token starts a sentence.
func (t *Tokenizer) orthoHeuristic(k *token) orthoVerdict {
	if s := string(k.tok); len(k.tok) == 1 && strings.Contains(";:,.!?", s) {
		return orthoNotStarter
	}
	ctx := t.ortho[k.typeNoSentperiod()]
	if k.firstUpper() && ctx&orthoLC != 0 && ctx&orthoMidUC == 0 {
		return orthoStarter
	}
	if k.firstLower() && (ctx&orthoUC != 0 || ctx&orthoBegLC == 0) {
		return orthoNotStarter
	}
	return orthoUnknown
}

// tokenizeWords mirrors _tokenize_words: the Punkt word tokenizer applied to
// each non-blank line.
func tokenizeWords(text []rune) []*token {
	var out []*token
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' {
			continue
		}
		line := text[start:i]
		start = i + 1
		for _, w := range wordTokens(line) {
			out = append(out, newToken(w))
		}
	}
	return out
}

// isExcludedStart lists the characters that cannot start a word token.
func isExcludedStart(r rune) bool { return strings.ContainsRune("(\"`{[:;&#*@)}]-,", r) }

// multiChar matches `(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)` at i and returns the
// end of the match or -1.
func multiChar(rs []rune, i int) int {
	n := len(rs)
	if i+1 >= n {
		return -1
	}
	if (rs[i] == '-' || rs[i] == '.') && rs[i+1] == rs[i] {
		e := i
		for e < n && rs[e] == rs[i] {
			e++
		}
		return e
	}
	pairs := 0
	for p := i; p+1 < n && rs[p] == '.' && pystr.IsSpace(rs[p+1]); p += 2 {
		pairs++
	}
	switch {
	case pairs >= 2 && i+2*pairs < n && rs[i+2*pairs] == '.':
		return i + 2*pairs + 1
	case pairs >= 3:
		return i + 2*pairs - 1
	}
	return -1
}

// wordEnds reports whether a word token may end before position j.
func wordEnds(rs []rune, j int) bool {
	n := len(rs)
	if j >= n || pystr.IsSpace(rs[j]) || isNonWord(rs[j]) || multiChar(rs, j) >= 0 {
		return true
	}
	if rs[j] == ',' {
		return j+1 >= n || pystr.IsSpace(rs[j+1]) || isNonWord(rs[j+1]) || multiChar(rs, j+1) >= 0
	}
	return false
}

// wordTokens is PunktLanguageVars.word_tokenize: multi-character
// punctuation, words up to whitespace or punctuation, or single characters.
func wordTokens(line []rune) [][]rune {
	var out [][]rune
	for i := 0; i < len(line); {
		if e := multiChar(line, i); e >= 0 {
			out = append(out, line[i:e])
			i = e
			continue
		}
		r := line[i]
		if pystr.IsSpace(r) {
			i++
			continue
		}
		if isExcludedStart(r) {
			out = append(out, line[i:i+1])
			i++
			continue
		}
		j := i + 1
		for !wordEnds(line, j) {
			j++
		}
		out = append(out, line[i:j])
		i = j
	}
	return out
}
