package ifeval

import (
	"testing"
)

// fuzzKwargs gives every checker valid arguments.
var fuzzKwargs = map[string]map[string]any{
	"keywords:existence":                            {"keywords": []any{"war", "peace"}},
	"keywords:frequency":                            {"keyword": "the", "frequency": 2, "relation": "at least"},
	"keywords:forbidden_words":                      {"forbidden_words": []any{"rock", "-x"}},
	"keywords:letter_frequency":                     {"letter": "#", "let_frequency": 2, "let_relation": "less than"},
	"language:response_language":                    {"language": "en"},
	"length_constraints:number_sentences":           {"num_sentences": 3, "relation": "at least"},
	"length_constraints:number_paragraphs":          {"num_paragraphs": 2},
	"length_constraints:number_words":               {"num_words": 10, "relation": "less than"},
	"length_constraints:nth_paragraph_first_word":   {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
	"detectable_content:number_placeholders":        {"num_placeholders": 1},
	"detectable_content:postscript":                 {"postscript_marker": "P.P.S"},
	"detectable_format:number_bullet_lists":         {"num_bullets": 2},
	"detectable_format:number_highlighted_sections": {"num_highlights": 2},
	"detectable_format:multiple_sections":           {"section_spliter": "Section", "num_sections": 2},
	"combination:repeat_prompt":                     {"prompt_to_repeat": "Repeat me."},
	"startend:end_checker":                          {"end_phrase": "Bye."},
	"change_case:capital_word_frequency":            {"capital_frequency": 3, "capital_relation": "at least"},
}

// FuzzCheckers runs one checker, chosen by the first argument, in both
// modes over an arbitrary response: none may panic, and loose mode must never
// be stricter than strict mode.
func FuzzCheckers(f *testing.F) {
	seeds := []string{
		"", " ", "\n\n", "Hello, world. Mr. Smith went.\n\n* a\n- b\n***\nP.P.S bye",
		"```json\n{\"a\": NaN}\n```", "<<title>>", "A\n******\nB", "\"quoted\"", "ÀÉ ǅ ß İ σΣ",
		"...!!! ?? . . . -- ''", "\xff\xfe invalid utf8", "日本語のテキスト。", "((\"'[{", "\x1c\x1d\u0085\u00a0",
		"Section 1 x Section 2 y", "http://x.y/z a@b.cd",
	}
	for i, s := range seeds {
		for j := range instructionIDs {
			if j%len(seeds) == i {
				f.Add(uint8(j), s)
			}
		}
	}
	ev := evaluator(f)
	f.Fuzz(func(t *testing.T, which uint8, response string) {
		id := instructionIDs[int(which)%len(instructionIDs)]
		kw := fuzzKwargs[id]
		if kw == nil {
			kw = map[string]any{}
		}
		prompts := []Prompt{{Key: 1, InstructionIDs: []string{id}, Kwargs: []map[string]any{kw}}}
		rep, err := ev.Evaluate(t.Context(), prompts, []Response{{Response: response}})
		if err != nil {
			t.Fatal(err)
		}
		if p := rep.Prompts[0]; p.Strict[0] && !p.Loose[0] {
			t.Errorf("%s: strict true, loose false for %q", id, response)
		}
	})
}
