package ifeval

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalMainTable(t *testing.T) {
	responses := officialFile(t, "input_response_data_gpt4_20231107_145030.jsonl")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := EvalMain(t.Context(), []string{"--suite", "ifeval", "--responses", responses, "--out", out}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("EvalMain: %v (stderr %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "keys [2785]") {
		t.Errorf("stderr lacks the key 2785 mismatch warning: %q", stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{"prompt-level strict", "instruction-level loose", "(541)", "keywords", "punctuation", "detectable_format"} {
		if want == "(541)" {
			want = "/541)"
		}
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	for _, name := range []string{"eval_results_strict.jsonl", "eval_results_loose.jsonl"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 541 {
			t.Errorf("%s: %d lines, want 541", name, len(lines))
		}
		var first struct {
			Prompt     string   `json:"prompt"`
			IDs        []string `json:"instruction_id_list"`
			FollowAll  *bool    `json:"follow_all_instructions"`
			FollowList []bool   `json:"follow_instruction_list"`
			Response   string   `json:"response"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
			t.Fatalf("%s line 1: %v", name, err)
		}
		if first.FollowAll == nil || len(first.FollowList) != len(first.IDs) || !strings.HasPrefix(first.Prompt, "Write a 300+ word summary") {
			t.Errorf("%s line 1 = %+v", name, first)
		}
	}
}

func TestEvalMainJSON(t *testing.T) {
	dir := sharedData(t)
	prompts := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(prompts, []byte(
		`{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`+"\n"+
			`{"key": 2, "prompt": "b", "instruction_id_list": ["startend:quotation", "punctuation:no_comma"], "kwargs": [{}, {}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := strings.NewReader(`{"prompt": "a", "response": "no commas"}` + "\n" + `{"prompt": "b", "response": "Sure:\n\"quoted, here\""}` + "\n")
	var stdout, stderr bytes.Buffer
	args := []string{"--responses", "-", "--prompts", prompts, "--data", dir, "--json"}
	if err := EvalMain(t.Context(), args, stdin, &stdout, &stderr); err != nil {
		t.Fatalf("EvalMain: %v", err)
	}
	var got struct {
		Suites []map[string]any `json:"suites"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	if len(got.Suites) != 1 {
		t.Fatalf("suites = %v", got.Suites)
	}
	s := got.Suites[0]
	// Loose mode drops the last line, which holds the only comma.
	want := map[string]float64{"score": 50, "n": 2, "prompt_strict": 50, "inst_strict": 100.0 / 3, "prompt_loose": 100, "inst_loose": 100}
	if s["name"] != "ifeval" {
		t.Errorf("name = %v", s["name"])
	}
	for k, v := range want {
		if got, ok := s[k].(float64); !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
}

func TestEvalMainErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--responses FILE is required"},
		{[]string{"--suite", "lsqa", "--responses", "x"}, `--suite "lsqa" is not ifeval`},
		{[]string{"--responses", "x", "extra"}, "unexpected arguments"},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"--responses", "/nonexistent.jsonl", "--prompts", "/nonexistent-prompts.jsonl", "--data", "/nonexistent"}, "nonexistent-prompts.jsonl"},
	} {
		err := EvalMain(t.Context(), c.args, strings.NewReader(""), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EvalMain(%q) err = %v, want %q", c.args, err, c.want)
		}
	}
	prompts := officialFile(t, "input_data.jsonl")
	short := filepath.Join(t.TempDir(), "short.jsonl")
	if err := os.WriteFile(short, []byte(`{"prompt": "p", "response": "r"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := EvalMain(t.Context(), []string{"--responses", short, "--prompts", prompts}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "541 prompts but 1 responses") {
		t.Errorf("count mismatch err = %v", err)
	}
}
