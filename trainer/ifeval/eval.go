// Package ifeval is a Go port of IFEval (Zhou et al., 2023, "Instruction-
// Following Evaluation for Large Language Models"): the 25 verifiable
// instruction checkers of google-research's instruction_following_eval, its
// strict and loose protocols, and prompt- and instruction-level accuracy.
//
// The checkers follow the official definitions with Python semantics
// (Unicode \w, \s and \b, str.strip, str.isupper). Sentence counting uses a
// port of NLTK's pretrained Punkt English model and language identification
// a port of langdetect, both loaded from the data directory that holds
// punkt-english.json and langdetect-profiles/. See README.md for the
// deviations and the measured agreement with the paper.
package ifeval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"

	"github.com/livehat/livehat/trainer/ifeval/internal/langdetect"
	"github.com/livehat/livehat/trainer/ifeval/internal/punkt"
	"github.com/livehat/livehat/trainer/ifeval/internal/pystr"
	"github.com/livehat/livehat/trainer/ifeval/internal/treebank"
)

// Options changes how an Evaluator scores.
type Options struct {
	// RandomLetterCompat reproduces the official revisions that replace a
	// keywords:letter_frequency letter outside a–z (keys 1122 "#" and 1129
	// "!") by a random ASCII letter. The letter is drawn from a generator
	// seeded with LetterSeed, the prompt and the instruction, separately for
	// strict and loose mode as the official code does. The default counts
	// such letters literally.
	RandomLetterCompat bool
	LetterSeed         uint64
}

// Evaluator scores responses. It holds the Punkt and langdetect models and
// is safe for concurrent use.
type Evaluator struct {
	sentences *punkt.Tokenizer
	languages *langdetect.Detector
	opts      Options
}

// NewEvaluator loads punkt-english.json and langdetect-profiles/ from
// dataDir (the shared IFEval data directory).
func NewEvaluator(dataDir string, opts Options) (*Evaluator, error) {
	tok, err := punkt.Load(filepath.Join(dataDir, "punkt-english.json"))
	if err != nil {
		return nil, fmt.Errorf("ifeval: %w", err)
	}
	det, err := langdetect.Load(filepath.Join(dataDir, "langdetect-profiles"))
	if err != nil {
		return nil, fmt.Errorf("ifeval: %w", err)
	}
	return &Evaluator{sentences: tok, languages: det, opts: opts}, nil
}

func (e *Evaluator) countSentences(text string) int { return e.sentences.Count(text) }

// wordTokens is nltk.word_tokenize: Punkt sentences, then the Treebank rules.
func (e *Evaluator) wordTokens(text string) []string {
	var out []string
	for _, s := range e.sentences.Sentences(text) {
		out = append(out, treebank.Tokenize(s)...)
	}
	return out
}

// detectLanguage returns langdetect's answer, or ok=false where langdetect
// raises (no features), which the checkers count as followed.
func (e *Evaluator) detectLanguage(text string) (string, bool) {
	lang, err := e.languages.Detect(text)
	return lang, err == nil
}

// CountSentences returns the number of sentences NLTK's Punkt English model
// finds in text.
func (e *Evaluator) CountSentences(text string) int { return e.countSentences(text) }

// DetectLanguage returns langdetect's language for text (seed 0) and an
// error when the text has no detectable features.
func (e *Evaluator) DetectLanguage(text string) (string, error) {
	return e.languages.Detect(text)
}

// Accuracy is a count of followed items out of a total.
type Accuracy struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
}

// Fraction returns Correct/Total, or 0 for an empty total.
func (a Accuracy) Fraction() float64 {
	if a.Total == 0 {
		return 0
	}
	return float64(a.Correct) / float64(a.Total)
}

// Percent returns 100 × Fraction.
func (a Accuracy) Percent() float64 { return 100 * a.Fraction() }

func (a *Accuracy) add(ok bool) {
	a.Total++
	if ok {
		a.Correct++
	}
}

// Breakdown is the instruction-level accuracy of one category ("keywords")
// or one instruction id ("keywords:existence") in both modes.
type Breakdown struct {
	Name   string   `json:"name"`
	Strict Accuracy `json:"strict"`
	Loose  Accuracy `json:"loose"`
}

// PromptResult holds the verdicts for one prompt.
type PromptResult struct {
	Key            int      `json:"key"`
	Prompt         string   `json:"prompt"`
	Response       string   `json:"response"`
	InstructionIDs []string `json:"instruction_id_list"`
	Strict         []bool   `json:"strict"`
	Loose          []bool   `json:"loose"`
}

// FollowAllStrict reports whether every instruction was followed in strict mode.
func (r PromptResult) FollowAllStrict() bool { return allTrue(r.Strict) }

// FollowAllLoose reports whether every instruction was followed in loose mode.
func (r PromptResult) FollowAllLoose() bool { return allTrue(r.Loose) }

func allTrue(v []bool) bool {
	for _, b := range v {
		if !b {
			return false
		}
	}
	return true
}

// Report is the outcome of an evaluation.
type Report struct {
	PromptStrict Accuracy `json:"prompt_strict"`
	InstStrict   Accuracy `json:"inst_strict"`
	PromptLoose  Accuracy `json:"prompt_loose"`
	InstLoose    Accuracy `json:"inst_loose"`
	// Categories and Instructions are sorted by name.
	Categories   []Breakdown    `json:"categories"`
	Instructions []Breakdown    `json:"instructions"`
	Prompts      []PromptResult `json:"prompts"`
	// PromptMismatches lists the keys of prompts whose response line carries
	// a different, non-empty prompt text. Responses are joined by position,
	// so many mismatches mean a misordered responses file; the official
	// GPT-4 file has one (key 2785, whose prompt was revised later).
	PromptMismatches []int `json:"prompt_mismatches,omitempty"`
}

// Evaluate scores responses against prompts, joined by position as the
// input_response_data files are. It fails on a count mismatch or an invalid
// instruction, naming the prompt.
func (e *Evaluator) Evaluate(ctx context.Context, prompts []Prompt, responses []Response) (Report, error) {
	if len(prompts) != len(responses) {
		return Report{}, fmt.Errorf("ifeval: %d prompts but %d responses", len(prompts), len(responses))
	}
	if len(prompts) == 0 {
		return Report{}, errors.New("ifeval: no prompts")
	}
	var rep Report
	categories := map[string]*Breakdown{}
	ids := map[string]*Breakdown{}
	for pi, p := range prompts {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("ifeval: %w", err)
		}
		if len(p.Kwargs) != len(p.InstructionIDs) {
			return Report{}, fmt.Errorf("ifeval: %s: %d instruction ids but %d kwargs", p.where(), len(p.InstructionIDs), len(p.Kwargs))
		}
		resp := responses[pi].Response
		if rp := responses[pi].Prompt; rp != "" && rp != p.Prompt {
			rep.PromptMismatches = append(rep.PromptMismatches, p.Key)
		}
		loose := looseCandidates(resp)
		res := PromptResult{Key: p.Key, Prompt: p.Prompt, Response: resp, InstructionIDs: p.InstructionIDs}
		for i, id := range p.InstructionIDs {
			strictInst, err := compileInstruction(id, p.Kwargs[i], e.letterPicker(pi, i, 0))
			if err != nil {
				return Report{}, fmt.Errorf("ifeval: %s: instruction %d: %w", p.where(), i, err)
			}
			looseInst, err := compileInstruction(id, p.Kwargs[i], e.letterPicker(pi, i, 1))
			if err != nil {
				return Report{}, fmt.Errorf("ifeval: %s: instruction %d: %w", p.where(), i, err)
			}
			strict := pystr.Strip(resp) != "" && strictInst.check(e, resp)
			followed := false
			for _, c := range loose {
				if pystr.Strip(c) != "" && looseInst.check(e, c) {
					followed = true
					break
				}
			}
			res.Strict = append(res.Strict, strict)
			res.Loose = append(res.Loose, followed)
			rep.InstStrict.add(strict)
			rep.InstLoose.add(followed)
			tally(categories, category(id), strict, followed)
			tally(ids, id, strict, followed)
		}
		rep.PromptStrict.add(res.FollowAllStrict())
		rep.PromptLoose.add(res.FollowAllLoose())
		rep.Prompts = append(rep.Prompts, res)
	}
	rep.Categories = sortedBreakdowns(categories)
	rep.Instructions = sortedBreakdowns(ids)
	return rep, nil
}

// letterPicker returns the random-letter source for one instruction in one
// mode, or nil when letters are counted literally.
func (e *Evaluator) letterPicker(prompt, inst, mode int) func() rune {
	if !e.opts.RandomLetterCompat {
		return nil
	}
	rng := rand.New(rand.NewPCG(e.opts.LetterSeed, uint64(prompt)<<20|uint64(inst)<<1|uint64(mode)))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	return func() rune { return rune(letters[rng.IntN(len(letters))]) }
}

// tally adds one instruction's verdicts to the breakdown called name.
func tally(table map[string]*Breakdown, name string, strict, loose bool) {
	b := table[name]
	if b == nil {
		b = &Breakdown{Name: name}
		table[name] = b
	}
	b.Strict.add(strict)
	b.Loose.add(loose)
}

// category is the part of an instruction id before the colon.
func category(id string) string {
	c, _, _ := strings.Cut(id, ":")
	return c
}

func sortedBreakdowns(m map[string]*Breakdown) []Breakdown {
	out := make([]Breakdown, 0, len(m))
	for _, b := range m {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// looseCandidates returns the eight variants loose mode tries: the response,
// without its first line, without its last line, without both, and each of
// those with every "*" removed.
func looseCandidates(r string) []string {
	lines := strings.Split(r, "\n")
	first := pystr.Strip(strings.Join(lines[1:], "\n"))
	last := pystr.Strip(strings.Join(lines[:len(lines)-1], "\n"))
	both := ""
	if len(lines) > 2 {
		both = pystr.Strip(strings.Join(lines[1:len(lines)-1], "\n"))
	}
	noStar := func(s string) string { return strings.ReplaceAll(s, "*", "") }
	return []string{r, noStar(r), first, last, both, noStar(first), noStar(last), noStar(both)}
}
