package punkt

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// dataDir returns ../shared/data/ifeval relative to the repository root, or
// skips the test when the shared data is absent.
func dataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("go.mod not found above the test directory")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "data", "ifeval")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("shared IFEval data absent (%s): %v", d, err)
	}
	return d
}

func loadTokenizer(t *testing.T) (*Tokenizer, string) {
	t.Helper()
	d := dataDir(t)
	tok, err := Load(filepath.Join(d, "punkt-english.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tok, d
}

// TestReferenceSentences compares every GPT-4 response's sentences with the
// ones NLTK produced (reference-components.jsonl).
func TestReferenceSentences(t *testing.T) {
	tok, d := loadTokenizer(t)
	responses := readLines(t, filepath.Join(d, "input_response_data_gpt4_20231107_145030.jsonl"))
	refs := readLines(t, filepath.Join(d, "reference-components.jsonl"))
	if len(responses) != len(refs) {
		t.Fatalf("%d responses, %d references", len(responses), len(refs))
	}
	exact, sameCount := 0, 0
	for i := range refs {
		var resp struct {
			Response string `json:"response"`
		}
		var ref struct {
			Sentences []string `json:"sentences"`
		}
		if err := json.Unmarshal([]byte(responses[i]), &resp); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(refs[i]), &ref); err != nil {
			t.Fatal(err)
		}
		got := tok.Sentences(resp.Response)
		if len(got) == len(ref.Sentences) {
			sameCount++
		}
		if len(got) == 0 && len(ref.Sentences) == 0 || reflect.DeepEqual(got, ref.Sentences) {
			exact++
			continue
		}
		for j := 0; j < len(got) && j < len(ref.Sentences); j++ {
			if got[j] != ref.Sentences[j] {
				t.Errorf("line %d sentence %d:\n got %q\nwant %q", i, j, got[j], ref.Sentences[j])
				break
			}
		}
		if len(got) != len(ref.Sentences) {
			t.Errorf("line %d: %d sentences, want %d", i, len(got), len(ref.Sentences))
		}
	}
	t.Logf("Punkt agreement: %d/%d responses identical, %d/%d same sentence count", exact, len(refs), sameCount, len(refs))
}

func TestSentencesExamples(t *testing.T) {
	tok, _ := loadTokenizer(t)
	cases := []struct {
		text string
		want []string
	}{
		{"Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.  And sometimes sentences\ncan start with non-capitalized words.  i is a good variable\nname.",
			[]string{"Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.", "And sometimes sentences\ncan start with non-capitalized words.", "i is a good variable\nname."}},
		{"(How does it deal with this parenthesis?)  \"It should be part of the\nprevious sentence.\" \"(And the same with this one.)\" ('And this one!')\n\"('(And (this)) '?)\" [(and this. )]",
			[]string{"(How does it deal with this parenthesis?)", "\"It should be part of the\nprevious sentence.\"", "\"(And the same with this one.)\"", "('And this one!')", "\"('(And (this)) '?)\"", "[(and this. )]"}},
		{"Very bad acting!!! I promise.", []string{"Very bad acting!!!", "I promise."}},
		{"", nil},
		{"   ", nil},
		{"No boundary here", []string{"No boundary here"}},
		{"It costs 3.5 dollars. Next one.", []string{"It costs 3.5 dollars.", "Next one."}},
		// nltk/test/tokenize.doctest regression tests.
		{"See Section 3).  Or Section 2).  ", []string{"See Section 3).", "Or Section 2)."}},
		{"See Section 3.)  Or Section 2.)  ", []string{"See Section 3.)", "Or Section 2.)"}},
		{". This input starts with a dot. This used to cause issues.", []string{".", "This input starts with a dot.", "This used to cause issues."}},
		{"I called Dr. Jones. I called Dr. Jones.", []string{"I called Dr. Jones.", "I called Dr. Jones."}},
	}
	for _, c := range cases {
		got := tok.Sentences(c.text)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Sentences(%q)\n got %q\nwant %q", c.text, got, c.want)
		}
		if n := tok.Count(c.text); n != len(c.want) {
			t.Errorf("Count(%q) = %d, want %d", c.text, n, len(c.want))
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"abbrev_types": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("Load of malformed JSON succeeded")
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
