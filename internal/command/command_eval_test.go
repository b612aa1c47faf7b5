package command

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/ifeval"
	"github.com/livehat/livehat/trainer/liveroom"
)

// ifevalFile returns the path of a file of the shared IFEval data,
// skipping the test when ../shared (from the repository root) is absent.
func ifevalFile(t *testing.T, name string) string {
	t.Helper()
	dir, err := ifeval.DefaultDataDir(".")
	if err != nil {
		t.Skipf("skipping: shared IFEval data (../shared/data/ifeval from the repository root) is absent: %v", err)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: %s absent: %v", p, err)
	}
	return p
}

func TestEvalUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown suite", []string{"--suite", "nonsense"}, `unknown suite "nonsense"`},
		{"unknown flag", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"bad value", []string{"--n", "x"}, `invalid value "x" for flag -n`},
		{"negative timeout", []string{"--model", "expert", "--remote-timeout", "-1s"}, "--remote-timeout -1s"},
		{"timeout of a local model", []string{"--model", "expert", "--remote-timeout", "1s"}, "only a served model"},
		{"no such model", []string{"--model", "no/such/folder"}, `--model "no/such/folder": want bundled`},
		{"served model without its name", []string{"--model", "http://127.0.0.1:9/v1"}, "--remote-model"},
		{"responses, unknown flag", []string{"--responses", "r.jsonl", "--bogus"}, "flag provided but not defined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := evalOn(context.Background(), eval.Config{}, tt.args, nil, io.Discard, io.Discard)
			if !IsUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("evalOn(%q) = %v, want a usage error naming %q", tt.args, err, tt.want)
			}
		})
	}
	var stderr bytes.Buffer
	if err := evalOn(context.Background(), eval.Config{}, []string{"-h"}, nil, io.Discard, &stderr); err != flag.ErrHelp || !strings.Contains(stderr.String(), "-bind-catalog") {
		t.Errorf("-h: %v\n%s", err, stderr.String())
	}
}

// TestEvalExpertNotes: the expert answers no plain prompt, so Mini-IF is
// a note in the report, as text and as JSON.
func TestEvalExpertNotes(t *testing.T) {
	var stdout bytes.Buffer
	if err := evalOn(context.Background(), eval.Config{}, []string{"--suite", "miniif", "--model", "expert"}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "note: miniif: the expert policy only plays the live room") {
		t.Errorf("text report:\n%s", stdout.String())
	}
	stdout.Reset()
	if err := evalOn(context.Background(), eval.Config{}, []string{"--suite", "miniif,ifeval", "--model", "expert", "--json"}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Suites []any    `json:"suites"`
		Notes  []string `json:"notes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Suites) != 0 || len(rep.Notes) != 2 {
		t.Errorf("JSON report %s: %v", stdout.String(), err)
	}
}

// TestWriteEvalReport checks the suite line ("unbacked on air 3/9", the
// replies a hook rewrote and the score they carry), the
// count by kind, the unbacked phrases and the server failures in the text
// report, and the order of the suites in the JSON one.
func TestWriteEvalReport(t *testing.T) {
	stock := liveroom.Unbacked{Kind: liveroom.UnbackedStockState, Phrase: "有货", Why: "no stock check of this turn says it is in stock"}
	amount := liveroom.Unbacked{Kind: liveroom.UnbackedAmount, Phrase: "99元", Why: "no tool result of this turn gives 99 yuan"}
	rep := &eval.SuiteReport{Name: "lsqa", N: 4, OnAir: 9, OnAirUnbacked: 3, OnAirRewritten: 2, RewrittenScore: 37.5, Errors: 1,
		UnbackedKinds: map[string]int{liveroom.UnbackedStockState: 3, liveroom.UnbackedAmount: 1},
		UnbackedItems: []eval.ItemResult{{ID: "a", Category: "stock", Grade: liveroom.Grade{Unbacked: []liveroom.Unbacked{stock, amount}}}},
		ServerErrors:  map[remote.Kind]int{remote.KindTimeout: 1},
		Categories:    map[string]eval.Summary{"stock": {Score: 50, N: 2}, "price": {Score: 100, N: 2}}}
	mini := &eval.MiniIFReport{Name: eval.SuiteMiniIF, N: 2}
	res := &eval.Results{Reports: []*eval.SuiteReport{rep}, Others: []any{mini}, MiniIF: []*eval.MiniIFReport{mini}, Notes: []string{"a note"}}
	var text bytes.Buffer
	if err := writeEvalReport(&text, res, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if !strings.Contains(lines[0], "unbacked on air  rewritten (score)") || !strings.Contains(lines[1], " 3/9 ") || !strings.Contains(lines[1], " 2 (37.5) ") {
		t.Errorf("suite line lacks the count:\n%s\n%s", lines[0], lines[1])
	}
	for _, want := range []string{"lsqa by category:\n  price  100.0  (n=2)\n  stock  50.0   (n=2)",
		"model server failures: 1 items (timeout 1)",
		"unbacked on air: 3 of 9 replies; by kind: amount 1, stock_state 3",
		`unbacked a (stock) score 0.0: stock_state "有货" (no stock check of this turn says it is in stock); amount "99元"`,
		"\nnote: a note"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := writeEvalReport(&js, res, true); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Suites []struct {
			Name          string `json:"name"`
			OnAirUnbacked int    `json:"on_air_unbacked"`
		} `json:"suites"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Suites) != 2 || back.Suites[0].Name != "lsqa" || back.Suites[0].OnAirUnbacked != 3 || back.Suites[1].Name != eval.SuiteMiniIF || len(back.Notes) != 1 {
		t.Errorf("JSON report %s", js.String())
	}
}

func TestEvalIFEvalResponsesTable(t *testing.T) {
	responses := ifevalFile(t, "input_response_data_gpt4_20231107_145030.jsonl")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := evalOn(t.Context(), eval.Config{}, []string{"--suite", "ifeval", "--responses", responses, "--out", out}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("evalOn: %v (stderr %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "keys [2785]") {
		t.Errorf("stderr lacks the key 2785 mismatch warning: %q", stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{"prompt-level strict", "instruction-level loose", "/541)", "keywords", "punctuation", "detectable_format"} {
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
		}
		if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
			t.Fatalf("%s line 1: %v", name, err)
		}
		if first.FollowAll == nil || len(first.FollowList) != len(first.IDs) || !strings.HasPrefix(first.Prompt, "Write a 300+ word summary") {
			t.Errorf("%s line 1 = %+v", name, first)
		}
	}
}

// TestEvalIFEvalResponsesJSON scores responses from standard input against
// a prompts file of its own, with the flags only --responses knows.
func TestEvalIFEvalResponsesJSON(t *testing.T) {
	dir := filepath.Dir(ifevalFile(t, "punkt-english.json"))
	prompts := writeFile(t, "prompts.jsonl",
		`{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`+"\n"+
			`{"key": 2, "prompt": "b", "instruction_id_list": ["startend:quotation", "punctuation:no_comma"], "kwargs": [{}, {}]}`+"\n")
	stdin := strings.NewReader(`{"prompt": "a", "response": "no commas"}` + "\n" + `{"prompt": "b", "response": "Sure:\n\"quoted, here\""}` + "\n")
	var stdout, stderr bytes.Buffer
	args := []string{"--responses", "-", "--prompts", prompts, "--data", dir, "--json"}
	if err := evalOn(t.Context(), eval.Config{}, args, stdin, &stdout, &stderr); err != nil {
		t.Fatalf("evalOn: %v", err)
	}
	var got struct {
		Suites []map[string]any `json:"suites"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got.Suites) != 1 {
		t.Fatalf("output %q: %v", stdout.String(), err)
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

func TestEvalIFEvalResponsesErrors(t *testing.T) {
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
		err := evalIFEvalResponses(t.Context(), c.args, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("evalIFEvalResponses(%q) err = %v, want %q", c.args, err, c.want)
		}
	}
	prompts := ifevalFile(t, "input_data.jsonl")
	short := writeFile(t, "short.jsonl", `{"prompt": "p", "response": "r"}`+"\n")
	err := evalOn(t.Context(), eval.Config{}, []string{"--responses", short, "--prompts", prompts}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "541 prompts but 1 responses") {
		t.Errorf("count mismatch err = %v", err)
	}
}
