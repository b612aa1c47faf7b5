package ifeval

import (
	"context"
	"strings"
	"testing"
)

func TestReadPromptsErrors(t *testing.T) {
	cases := []struct {
		name, input, wantErr string
	}{
		{"malformed json", `{"key": 1, "prompt": "x", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}` + "\n{oops\n", "line 2: malformed prompt"},
		{"unknown id", `{"key": 7, "prompt": "x", "instruction_id_list": ["keywords:telepathy"], "kwargs": [{}]}`, "line 1 (key 7): instruction 0: keywords:telepathy: unknown instruction id"},
		{"missing kwarg", `{"key": 8, "prompt": "x", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at least"}]}`, `missing kwarg "num_words"`},
		{"null kwarg is missing", `{"key": 8, "prompt": "x", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at least", "num_words": null}]}`, `missing kwarg "num_words"`},
		{"bad relation", `{"key": 9, "prompt": "x", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at most", "num_words": 3}]}`, `want "less than" or "at least"`},
		{"non-integer", `{"key": 9, "prompt": "x", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at least", "num_words": 2.5}]}`, "want an integer"},
		{"wrong type", `{"key": 9, "prompt": "x", "instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": "war"}]}`, "want a list of strings"},
		{"unexpected kwarg", `{"key": 9, "prompt": "x", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{"comma": 1}]}`, `unexpected kwargs ["comma"]`},
		{"kwargs count", `{"key": 9, "prompt": "x", "instruction_id_list": ["punctuation:no_comma"], "kwargs": []}`, "1 instruction ids but 0 kwargs"},
		{"no instructions", `{"key": 9, "prompt": "x", "instruction_id_list": [], "kwargs": []}`, "empty instruction_id_list"},
		{"long letter", `{"key": 9, "prompt": "x", "instruction_id_list": ["keywords:letter_frequency"], "kwargs": [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}]}`, "want one character"},
		{"nth out of range", `{"key": 9, "prompt": "x", "instruction_id_list": ["length_constraints:nth_paragraph_first_word"], "kwargs": [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"}]}`, "outside 1..num_paragraphs"},
		{"bad regexp keyword", `{"key": 9, "prompt": "x", "instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": ["(unclosed"]}]}`, "pattern"},
	}
	for _, c := range cases {
		_, err := ReadPrompts(strings.NewReader(c.input))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.wantErr)
		}
	}
}

func TestReadPromptsAndResponses(t *testing.T) {
	prompts, err := ReadPrompts(strings.NewReader("\n" + `{"key": 3, "prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}` + "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 1 || prompts[0].Line != 2 || prompts[0].Key != 3 {
		t.Errorf("prompts = %+v", prompts)
	}
	responses, err := ReadResponses(strings.NewReader(`{"prompt": "p", "response": "r"}` + "\n" + `{"response": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(responses) != 2 || responses[1].Line != 2 || responses[0].Response != "r" {
		t.Errorf("responses = %+v", responses)
	}
	for input, want := range map[string]string{
		`{"prompt": "p"}`:       `line 1: no "response" string`,
		`{"response": 3}`:       "line 1: malformed response",
		"{}\n[1, 2]":            "line 1: no \"response\"",
		`{"response": "x"} {}x`: "line 1: malformed response",
	} {
		if _, err := ReadResponses(strings.NewReader(input)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadResponses(%q) err = %v, want %q", input, err, want)
		}
	}
	if _, err := LoadPrompts("/nonexistent/input_data.jsonl"); err == nil {
		t.Error("LoadPrompts of a missing file succeeded")
	}
	if _, err := LoadResponses("/nonexistent/responses.jsonl"); err == nil {
		t.Error("LoadResponses of a missing file succeeded")
	}
}

func TestEvaluateErrors(t *testing.T) {
	ev := evaluator(t)
	p := Prompt{Key: 5, Line: 4, InstructionIDs: []string{"punctuation:no_comma"}, Kwargs: []map[string]any{{}}}
	if _, err := ev.Evaluate(t.Context(), []Prompt{p}, nil); err == nil || !strings.Contains(err.Error(), "1 prompts but 0 responses") {
		t.Errorf("count mismatch err = %v", err)
	}
	if _, err := ev.Evaluate(t.Context(), nil, nil); err == nil {
		t.Error("empty evaluation succeeded")
	}
	bad := p
	bad.InstructionIDs = []string{"nope:nope"}
	if _, err := ev.Evaluate(t.Context(), []Prompt{bad}, []Response{{Response: "x"}}); err == nil || !strings.Contains(err.Error(), "prompt line 4 (key 5)") {
		t.Errorf("unknown id err = %v", err)
	}
	bad = p
	bad.Kwargs = nil
	if _, err := ev.Evaluate(t.Context(), []Prompt{bad}, []Response{{Response: "x"}}); err == nil {
		t.Error("missing kwargs accepted")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ev.Evaluate(ctx, []Prompt{p}, []Response{{Response: "x"}}); err == nil {
		t.Error("cancelled evaluation succeeded")
	}
	if _, err := NewEvaluator(t.TempDir(), Options{}); err == nil {
		t.Error("NewEvaluator over an empty directory succeeded")
	}
}
