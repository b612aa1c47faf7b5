package ifeval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// paperTotals are the paper's numbers for the official GPT-4 responses.
var paperTotals = struct{ promptStrict, instStrict, promptLoose, instLoose int }{416, 697, 429, 712}

// TestGPT4MatchesPaper scores the official GPT-4 responses and requires each
// of the four totals to lie within 3 of the paper's.
func TestGPT4MatchesPaper(t *testing.T) {
	ev := evaluator(t)
	prompts, err := LoadPrompts(officialFile(t, "input_data.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	responses, err := LoadResponses(officialFile(t, "input_response_data_gpt4_20231107_145030.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ev.Evaluate(t.Context(), prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got       Accuracy
		want, tot int
	}{
		{"prompt-level strict", rep.PromptStrict, paperTotals.promptStrict, 541},
		{"instruction-level strict", rep.InstStrict, paperTotals.instStrict, 834},
		{"prompt-level loose", rep.PromptLoose, paperTotals.promptLoose, 541},
		{"instruction-level loose", rep.InstLoose, paperTotals.instLoose, 834},
	} {
		t.Logf("%-25s %d/%d (paper %d/%d)", c.name, c.got.Correct, c.got.Total, c.want, c.tot)
		if c.got.Total != c.tot {
			t.Errorf("%s: total %d, want %d", c.name, c.got.Total, c.tot)
		}
		if d := c.got.Correct - c.want; d < -3 || d > 3 {
			t.Errorf("%s: %d, more than 3 away from the paper's %d", c.name, c.got.Correct, c.want)
		}
	}
	if len(rep.PromptMismatches) != 1 || rep.PromptMismatches[0] != 2785 {
		t.Errorf("prompt mismatches %v, want [2785] (see NOTICE.md)", rep.PromptMismatches)
	}
	// Loose mode can only add verdicts.
	for _, p := range rep.Prompts {
		for i := range p.Strict {
			if p.Strict[i] && !p.Loose[i] {
				t.Errorf("key %d instruction %d: strict true but loose false", p.Key, i)
			}
		}
	}
}

// TestReferenceWordCounts compares CountWords with NLTK's \w+ counts in
// reference-components.jsonl.
func TestReferenceWordCounts(t *testing.T) {
	responses, err := LoadResponses(officialFile(t, "input_response_data_gpt4_20231107_145030.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(officialFile(t, "reference-components.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(responses) {
		t.Fatalf("%d reference lines, %d responses", len(lines), len(responses))
	}
	agree := 0
	for i, line := range lines {
		var ref struct {
			Line     int `json:"line"`
			NumWords int `json:"num_words"`
		}
		if err := json.Unmarshal([]byte(line), &ref); err != nil {
			t.Fatalf("reference line %d: %v", i, err)
		}
		if got := CountWords(responses[ref.Line].Response); got != ref.NumWords {
			t.Errorf("response %d: %d words, NLTK counts %d", ref.Line, got, ref.NumWords)
		} else {
			agree++
		}
	}
	t.Logf("word counts: %d/%d agree with NLTK", agree, len(lines))
}

// TestOfficialResultFiles writes the verdict files for a small report and
// checks their layout against Python's json.dumps output.
func TestOfficialResultFiles(t *testing.T) {
	rep := Report{Prompts: []PromptResult{{
		Key:            1,
		Prompt:         "Say \"hi\" in 日本語\n",
		Response:       "こんにちは 😀\t\\",
		InstructionIDs: []string{"punctuation:no_comma", "startend:quotation"},
		Strict:         []bool{true, false},
		Loose:          []bool{true, true},
	}}}
	dir := t.TempDir()
	if err := WriteOfficialResults(dir, rep); err != nil {
		t.Fatal(err)
	}
	// Expected lines produced by CPython 3.11 json.dumps of the same dicts.
	want := map[string]string{
		"eval_results_strict.jsonl": `{"follow_all_instructions": false, "follow_instruction_list": [true, false], "instruction_id_list": ["punctuation:no_comma", "startend:quotation"], "prompt": "Say \"hi\" in \u65e5\u672c\u8a9e\n", "response": "\u3053\u3093\u306b\u3061\u306f \ud83d\ude00\t\\"}` + "\n",
		"eval_results_loose.jsonl":  `{"follow_all_instructions": true, "follow_instruction_list": [true, true], "instruction_id_list": ["punctuation:no_comma", "startend:quotation"], "prompt": "Say \"hi\" in \u65e5\u672c\u8a9e\n", "response": "\u3053\u3093\u306b\u3061\u306f \ud83d\ude00\t\\"}` + "\n",
	}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s:\n got %s\nwant %s", name, got, w)
		}
	}
	if err := WriteOfficialResults(filepath.Join(dir, "eval_results_strict.jsonl", "sub"), rep); err == nil {
		t.Error("writing under a file succeeded")
	}
}
