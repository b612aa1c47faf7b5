package langdetect

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestPyRandom checks the generator against values CPython 3.11 prints for
// random.seed(0); random.random(); random.getrandbits(7); random.gauss(0, 1);
// random.choice(range(1000)).
func TestPyRandom(t *testing.T) {
	r := newPyRandom(0)
	if got := r.random(); got != 0.8444218515250481 {
		t.Errorf("random() = %v, want 0.8444218515250481", got)
	}
	if got := r.getrandbits(7); got != 97 {
		t.Errorf("getrandbits(7) = %d, want 97", got)
	}
	if got := r.gauss(); got != 0.22179928933619306 {
		t.Errorf("gauss() = %v, want 0.22179928933619306", got)
	}
	if got := r.randbelow(1000); got != 988 {
		t.Errorf("randbelow(1000) = %d, want 988", got)
	}
}

func dataDir(t testing.TB) string {
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

// TestReferenceDetections compares Detect with langdetect.detect (seed 0) on
// every GPT-4 response (reference-components.jsonl; null where it raised).
func TestReferenceDetections(t *testing.T) {
	d := dataDir(t)
	det, err := Load(filepath.Join(d, "langdetect-profiles"))
	if err != nil {
		t.Fatal(err)
	}
	responses := readLines(t, filepath.Join(d, "input_response_data_gpt4_20231107_145030.jsonl"))
	refs := readLines(t, filepath.Join(d, "reference-components.jsonl"))
	agree := 0
	for i := range refs {
		var resp struct {
			Response string `json:"response"`
		}
		var ref struct {
			Lang *string `json:"langdetect"`
		}
		if err := json.Unmarshal([]byte(responses[i]), &resp); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(refs[i]), &ref); err != nil {
			t.Fatal(err)
		}
		got, err := det.Detect(resp.Response)
		switch {
		case ref.Lang == nil && errors.Is(err, ErrNoFeatures):
			agree++
		case ref.Lang == nil:
			t.Errorf("line %d: got %q, %v; want no features", i, got, err)
		case err != nil:
			t.Errorf("line %d: %v; want %q", i, err, *ref.Lang)
		case got != *ref.Lang:
			t.Errorf("line %d: got %q, want %q", i, got, *ref.Lang)
		default:
			agree++
		}
	}
	t.Logf("langdetect agreement: %d/%d responses", agree, len(refs))
}

func TestDetectEdgeCases(t *testing.T) {
	d := dataDir(t)
	det, err := Load(filepath.Join(d, "langdetect-profiles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "12345 !!! ...", "http://example.com/a", "a@b.cd"} {
		if lang, err := det.Detect(text); !errors.Is(err, ErrNoFeatures) {
			t.Errorf("Detect(%q) = %q, %v; want ErrNoFeatures", text, lang, err)
		}
	}
	for text, want := range map[string]string{
		"This is a perfectly ordinary English sentence about the weather today.": "en",
		"Ceci est une phrase tout à fait ordinaire en français sur la météo.":    "fr",
		"Dies ist ein ganz normaler deutscher Satz über das Wetter heute.":       "de",
		"Это совершенно обычное предложение на русском языке о погоде.":          "ru",
	} {
		if got, err := det.Detect(text); err != nil || got != want {
			t.Errorf("Detect(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty directory succeeded")
	}
}

func TestNormalizeRune(t *testing.T) {
	for in, want := range map[rune]rune{
		'a': 'a', '1': ' ', '\u00A0': ' ', '\u2019': ' ', '\u0219': '\u015F', '\u06CC': '\u064A',
		'\u1EA1': '\u1EC3', 'ひ': '\u3042', 'カ': '\u30A2', 'ㄅ': '\u3105', '한': '\uAC00',
		'\u4E9C': '\u4E80', // KANJI_1_8: 亜 stands for its class representative 亀
		'\u6934': '\u4F7C', // KANJI_1_0
		'\u4E00': '\u4E00', // not in any class
	} {
		if got := normalizeRune(in); got != want {
			t.Errorf("normalizeRune(%U) = %U, want %U", in, got, want)
		}
	}
	if n := len(cjkRepresentative); n != 6667 {
		t.Errorf("%d CJK class members, want 6667", n)
	}
}

func TestTextPreparation(t *testing.T) {
	cases := map[string]string{
		"see https://example.com/x?y=1 now": "see now",
		"mail me@example.com please":        "mail please",
		"a  b   c":                          "a b c",
		"A\u0300":                           "\u00C0",
	}
	for in, want := range cases {
		if got := string(prepareText(in)); got != want {
			t.Errorf("prepareText(%q) = %q, want %q", in, got, want)
		}
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
