package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
)

// CompactConfig sizes a compact tokenizer: a byte-level BPE vocabulary plus
// whole phrases that the corpus repeats (the harness's rule and skill lines,
// the JSON scaffolding around calls and tool results, reply templates),
// each a single added token. This is the calibration run's "hybrid"
// vocabulary learned from data instead of written by hand: a trajectory of
// the demo harness shrinks several-fold, while tool names, parameter names,
// skill ids and numbers stay spelled in BPE pieces, so that a renamed tool
// is still a new sequence the model has to copy, not a memorised token.
type CompactConfig struct {
	// VocabSize is the BPE vocabulary (special and byte tokens included).
	VocabSize int `json:"vocab_size"`
	// Phrases is the most phrase tokens added on top.
	Phrases int `json:"phrases"`
	// MinCount is how often a phrase must occur in the corpus (0: 8).
	MinCount int `json:"min_count,omitempty"`
}

// minPhraseBytes keeps short fragments, which BPE already covers and which
// would match inside unrelated words, out of the phrase list.
const minPhraseBytes = 6

// TrainCompactTokenizer learns a compact tokenizer from texts (rendered
// conversations with ChatML markers): BPE with ScaffoldTokens as special
// tokens, then the cfg.Phrases phrases that save the most tokens, as
// non-special added tokens (Hugging Face's added_tokens, so any reader of
// tokenizer.json splits them out the same way). A phrase never crosses a
// line end, a chat marker, a digit run or any string of protected: pass
// every tool name, parameter name and enum value the corpus lists.
func TrainCompactTokenizer(ctx context.Context, texts []string, protected []string, cfg CompactConfig) (*tokenizer.Tokenizer, error) {
	if cfg.Phrases < 0 {
		return nil, fmt.Errorf("sft: compact tokenizer: %d phrases", cfg.Phrases)
	}
	corpus := func(yield func(string) bool) {
		for _, s := range texts {
			if !yield(s) {
				return
			}
		}
	}
	tok, err := tokenizer.Train(ctx, iter.Seq[string](corpus), tokenizer.TrainConfig{VocabSize: cfg.VocabSize, MinFrequency: 2, SpecialTokens: ScaffoldTokens()})
	if err != nil {
		return nil, fmt.Errorf("sft: train tokenizer: %w", err)
	}
	if cfg.Phrases == 0 {
		return withAddedTokens(tok, nil)
	}
	minCount := cfg.MinCount
	if minCount <= 0 {
		minCount = 8
	}
	counts := map[string]int{}
	for _, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, seg := range phraseSegments(text, protected) {
			if len(seg) >= minPhraseBytes {
				counts[seg]++
			}
		}
	}
	type cand struct {
		text  string
		saved int
	}
	var cands []cand
	for s, n := range counts {
		if n < minCount {
			continue
		}
		if k := len(tok.Encode(s)); k > 1 {
			cands = append(cands, cand{s, n * (k - 1)})
		}
	}
	// Most tokens saved first; ties in byte order, so training is deterministic.
	slices.SortFunc(cands, func(a, b cand) int {
		if a.saved != b.saved {
			return b.saved - a.saved
		}
		return strings.Compare(a.text, b.text)
	})
	phrases := make([]string, 0, min(cfg.Phrases, len(cands)))
	for _, c := range cands[:min(cfg.Phrases, len(cands))] {
		phrases = append(phrases, c.text)
	}
	return withAddedTokens(tok, phrases)
}

// textTags are the scaffold tokens that are text, not control: Qwen2's
// tokenizer.json marks the tool and thinking tags "special": false, and
// the engine reads a call only from a <tool_call> that is not special
// (special tokens are dropped from replies).
func textTags() []string {
	return []string{chat.ToolCallOpen, chat.ToolCallClose, "<tool_response>", "</tool_response>", "<think>", "</think>"}
}

// withAddedTokens returns tok with the textTags marked not special and
// the phrases appended as non-special added tokens, through the
// tokenizer.json layout the tokenizer package reads.
func withAddedTokens(tok *tokenizer.Tokenizer, phrases []string) (*tokenizer.Tokenizer, error) {
	data, err := tok.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: %w", err)
	}
	var file map[string]json.RawMessage
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: %w", err)
	}
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var list []added
	if err := json.Unmarshal(file["added_tokens"], &list); err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: added_tokens: %w", err)
	}
	for i := range list {
		if slices.Contains(textTags(), list[i].Content) {
			list[i].Special = false
		}
	}
	next := tok.VocabSize()
	for _, p := range phrases {
		if _, ok := tok.TokenID(p); ok {
			continue
		}
		list = append(list, added{ID: next, Content: p})
		next++
	}
	if file["added_tokens"], err = json.Marshal(list); err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: %w", err)
	}
	if data, err = json.Marshal(file); err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: %w", err)
	}
	out, err := tokenizer.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("sft: compact tokenizer: %w", err)
	}
	return out, nil
}

// phraseSegments cuts a rendered text into the pieces a phrase may be:
// lines (each keeps its line end), cut again at chat markers, digit runs
// and protected strings, which are not pieces themselves.
func phraseSegments(text string, protected []string) []string {
	var out []string
	cut := func(s string) {
		for s != "" {
			i, n := firstProtected(s, protected)
			if i < 0 {
				out = append(out, s)
				return
			}
			if i > 0 {
				out = append(out, s[:i])
			}
			s = s[i+n:]
		}
	}
	for line := range strings.SplitAfterSeq(text, "\n") {
		cut(line)
	}
	return out
}

// firstProtected finds the earliest chat marker, digit run or protected
// string in s (the longest at that place) and its length; -1 when none.
func firstProtected(s string, protected []string) (at, n int) {
	at = -1
	consider := func(i, m int) {
		if i >= 0 && m > 0 && (at < 0 || i < at || (i == at && m > n)) {
			at, n = i, m
		}
	}
	for _, p := range ScaffoldTokens() {
		consider(strings.Index(s, p), len(p))
	}
	for _, p := range protected {
		if p != "" {
			consider(indexWord(s, p), len(p))
		}
	}
	if i := strings.IndexAny(s, "0123456789"); i >= 0 {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		consider(i, j-i)
	}
	return at, n
}

// indexWord is strings.Index for a whole identifier: p neither preceded
// nor followed by a letter, digit or underscore, so that a parameter
// called "item" does not cut the word "items" of a rule line.
func indexWord(s, p string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], p)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(p)
		if (i == 0 || !isIdentByte(s[i-1])) && (end == len(s) || !isIdentByte(s[end])) {
			return i
		}
		off = i + 1
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// ToolIdentifiers returns the strings of a tool list that a compact
// tokenizer must keep spelled out: the tool names, their parameter names
// and enum values (the skill ids load_skill lists), longest first.
func ToolIdentifiers(tools []chat.Tool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, t := range tools {
		add(t.Name)
		var schema struct {
			Properties map[string]struct {
				Enum []any `json:"enum"`
			} `json:"properties"`
		}
		if json.Unmarshal(t.Parameters, &schema) != nil {
			continue
		}
		for name, p := range schema.Properties {
			add(name)
			for _, e := range p.Enum {
				if s, ok := e.(string); ok {
					add(s)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return out
}
