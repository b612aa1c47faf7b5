// Package langdetect ports the detection half of Python's langdetect 1.0.9
// (itself a port of Shuyo Nakatani's language-detection): character 1- to
// 3-gram profiles of 55 languages, langdetect's text normalisation, and seven
// randomised trials of naive-Bayes updates averaged together.
//
// langdetect draws its n-grams and smoothing from Python's global random
// module and the IFEval checkers never seed it. This port is deterministic:
// every Detect call reseeds a CPython-compatible Mersenne Twister with 0, the
// same as DetectorFactory.seed = 0, so it reproduces langdetect's answers with
// that seed draw for draw.
package langdetect

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/livehat/livehat/trainer/ifeval/internal/pystr"
)

// ErrNoFeatures is returned by Detect when the text has no n-gram known to
// any profile (langdetect's "No features in text." exception).
var ErrNoFeatures = errors.New("langdetect: no features in text")

// Constants of langdetect's Detector.
const (
	alphaDefault   = 0.5
	alphaWidth     = 0.05
	iterationLimit = 1000
	probThreshold  = 0.1
	convThreshold  = 0.99999
	baseFreq       = 10000
	nTrial         = 7
	maxTextLength  = 10000
	seed           = 0
	// Unknown is what Detect returns when no language is likely enough.
	Unknown = "unknown"
)

// Detector holds the loaded language profiles. It is immutable after Load
// and safe for concurrent use.
type Detector struct {
	langs []string
	// index maps an n-gram to its row in probs, which holds the n-gram's
	// relative frequency in each language of langs (len(langs) columns).
	index map[string]int
	probs []float64
}

type profileFile struct {
	Name   string         `json:"name"`
	Freq   map[string]int `json:"freq"`
	NWords []int          `json:"n_words"`
}

// Load reads every language profile (langdetect's JSON layout: name, freq,
// n_words) in dir. Languages are ordered by file name.
func Load(dir string) (*Detector, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("langdetect: %w", err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	if len(files) < 2 {
		return nil, fmt.Errorf("langdetect: %s holds %d profiles, need at least 2", dir, len(files))
	}
	profiles := make([]profileFile, len(files))
	seen := make(map[string]bool, len(files))
	total := 0
	for i, name := range files {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("langdetect: %w", err)
		}
		p := &profiles[i]
		if err := json.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("langdetect: profile %s: %w", path, err)
		}
		if p.Name == "" || len(p.NWords) != 3 {
			return nil, fmt.Errorf("langdetect: profile %s: want a name and 3 n_words, got %q and %d", path, p.Name, len(p.NWords))
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("langdetect: profile %s: duplicate language %q", path, p.Name)
		}
		seen[p.Name] = true
		total += len(p.Freq)
	}
	d := &Detector{index: make(map[string]int, total/2)}
	for _, p := range profiles {
		d.langs = append(d.langs, p.Name)
		for word := range p.Freq {
			if _, ok := d.index[word]; !ok {
				d.index[word] = len(d.index)
			}
		}
	}
	width := len(profiles)
	d.probs = make([]float64, len(d.index)*width)
	for col, p := range profiles {
		for word, count := range p.Freq {
			n := utf8.RuneCountInString(word)
			if n >= 1 && n <= 3 && p.NWords[n-1] > 0 {
				d.probs[d.index[word]*width+col] = float64(count) / float64(p.NWords[n-1])
			}
		}
	}
	return d, nil
}

// Languages returns the language codes in profile order.
func (d *Detector) Languages() []string { return append([]string(nil), d.langs...) }

// Detect returns the most probable language of text as langdetect.detect
// does with seed 0, Unknown when no language reaches probability 0.1, or
// ErrNoFeatures.
func (d *Detector) Detect(text string) (string, error) {
	probs, err := d.Probabilities(text)
	if err != nil {
		return "", err
	}
	best, bestP := Unknown, 0.0
	for i, p := range probs {
		if p > probThreshold && p > bestP {
			best, bestP = d.langs[i], p
		}
	}
	return best, nil
}

// Probabilities returns the averaged probability of each language (in
// Languages order) or ErrNoFeatures.
func (d *Detector) Probabilities(text string) ([]float64, error) {
	ngrams := d.extractNgrams(cleanText(prepareText(text)))
	width := len(d.langs)
	if len(ngrams) == 0 {
		return nil, ErrNoFeatures
	}
	langprob := make([]float64, len(d.langs))
	rng := newPyRandom(seed)
	prob := make([]float64, len(d.langs))
	for range nTrial {
		for j := range prob {
			prob[j] = 1.0 / float64(len(d.langs))
		}
		alpha := alphaDefault + rng.gauss()*alphaWidth
		weight := alpha / baseFreq
		for i := 0; ; i++ {
			row := ngrams[rng.randbelow(len(ngrams))]
			word := d.probs[row*width : (row+1)*width]
			for j := range prob {
				prob[j] *= weight + word[j]
			}
			if i%5 == 0 && (normalize(prob) > convThreshold || i >= iterationLimit) {
				break
			}
		}
		for j := range langprob {
			langprob[j] += prob[j] / nTrial
		}
	}
	return langprob, nil
}

// normalize divides prob by its sum and returns the largest probability.
func normalize(prob []float64) float64 {
	sum := 0.0
	for _, p := range prob {
		sum += p
	}
	maxp := 0.0
	for i, p := range prob {
		p /= sum
		if maxp < p {
			maxp = p
		}
		prob[i] = p
	}
	return maxp
}

// prepareText mirrors Detector.append: URLs and e-mail addresses become
// spaces, Vietnamese letter+diacritic pairs are composed, the text is cut
// to 10000 code points and runs of ASCII spaces collapse to one.
func prepareText(text string) []rune {
	rs := normalizeVietnamese(replaceMail(replaceURLs([]rune(text))))
	if len(rs) > maxTextLength {
		rs = rs[:maxTextLength]
	}
	out := make([]rune, 0, len(rs))
	var pre rune
	for _, ch := range rs {
		if ch != ' ' || pre != ' ' {
			out = append(out, ch)
		}
		pre = ch
	}
	return out
}

func isLatinRange(ch rune) bool { return ch >= 'A' && ch <= 'z' }

// cleanText mirrors Detector.cleaning_text: when non-Latin characters
// outnumber Latin ones two to one, the Latin ones are dropped.
func cleanText(rs []rune) []rune {
	latin, nonLatin := 0, 0
	for _, ch := range rs {
		if isLatinRange(ch) {
			latin++
		} else if ch >= 0x300 && !(ch >= 0x1E00 && ch <= 0x1EFF) {
			nonLatin++
		}
	}
	if latin*2 >= nonLatin {
		return rs
	}
	out := rs[:0:0]
	for _, ch := range rs {
		if !isLatinRange(ch) {
			out = append(out, ch)
		}
	}
	return out
}

// extractNgrams mirrors Detector._extract_ngrams over NGram.add_char and
// returns the rows of the known n-grams.
func (d *Detector) extractNgrams(rs []rune) []int {
	var result []int
	grams := []rune{' '}
	capitalWord := false
	for _, raw := range rs {
		ch := normalizeRune(raw)
		last := grams[len(grams)-1]
		if last == ' ' {
			grams = grams[:1]
			grams[0] = ' '
			capitalWord = false
			if ch == ' ' {
				continue
			}
		} else if len(grams) >= 3 {
			grams = append(grams[:0], grams[1:]...)
		}
		grams = append(grams, ch)
		if pystr.IsUpper(string(ch)) {
			if pystr.IsUpper(string(last)) {
				capitalWord = true
			}
		} else {
			capitalWord = false
		}
		if capitalWord {
			continue
		}
		for n := 1; n <= 3 && n <= len(grams); n++ {
			w := string(grams[len(grams)-n:])
			if w == " " {
				continue
			}
			if row, ok := d.index[w]; ok {
				result = append(result, row)
			}
		}
	}
	return result
}

// normalizeRune mirrors NGram.normalize, which folds characters by Unicode
// block (langdetect's own block table).
func normalizeRune(ch rune) rune {
	switch {
	case ch <= 0x7F: // Basic Latin
		if ch < 'A' || (ch > 'Z' && ch < 'a') || ch > 'z' {
			return ' '
		}
	case ch <= 0xFF: // Latin-1 Supplement
		if ch == 0xA0 || ch == 0xAB || ch == 0xB0 || ch == 0xBB {
			return ' '
		}
	case ch >= 0x180 && ch <= 0x24F: // Latin Extended-B: Romanian comma below => cedilla
		switch ch {
		case 0x219:
			return 0x15F
		case 0x21B:
			return 0x163
		}
	case ch >= 0x2000 && ch <= 0x206F: // General Punctuation
		return ' '
	case ch >= 0x600 && ch <= 0x6FF: // Arabic: Farsi yeh => Arabic yeh
		if ch == 0x6CC {
			return 0x64A
		}
	case ch >= 0x1E00 && ch <= 0x1EFF: // Latin Extended Additional
		if ch >= 0x1EA0 {
			return 0x1EC3
		}
	case ch >= 0x3040 && ch <= 0x309F: // Hiragana
		return 0x3042
	case ch >= 0x30A0 && ch <= 0x30FF: // Katakana
		return 0x30A2
	case (ch >= 0x3100 && ch <= 0x312F) || (ch >= 0x31A0 && ch <= 0x31BF): // Bopomofo
		return 0x3105
	case ch >= 0x4E00 && ch <= 0x9FFF: // CJK Unified Ideographs
		if rep, ok := cjkRepresentative[ch]; ok {
			return rep
		}
	case ch >= 0xAC00 && ch <= 0xD7AF: // Hangul Syllables
		return 0xAC00
	}
	return ch
}

// Vietnamese normalisation tables (langdetect's messages.properties):
// a base letter followed by a combining mark becomes the precomposed letter.
var (
	viBase   = []rune("AEIOUYaeiouy\u00c2\u00ca\u00d4\u00e2\u00ea\u00f4\u0102\u0103\u01a0\u01a1\u01af\u01b0")
	viMarks  = []rune("\u0300\u0301\u0303\u0309\u0323")
	viTarget = [5][]rune{
		[]rune("\u00C0\u00C8\u00CC\u00D2\u00D9\u1EF2\u00E0\u00E8\u00EC\u00F2\u00F9\u1EF3\u1EA6\u1EC0\u1ED2\u1EA7\u1EC1\u1ED3\u1EB0\u1EB1\u1EDC\u1EDD\u1EEA\u1EEB"),
		[]rune("\u00C1\u00C9\u00CD\u00D3\u00DA\u00DD\u00E1\u00E9\u00ED\u00F3\u00FA\u00FD\u1EA4\u1EBE\u1ED0\u1EA5\u1EBF\u1ED1\u1EAE\u1EAF\u1EDA\u1EDB\u1EE8\u1EE9"),
		[]rune("\u00C3\u1EBC\u0128\u00D5\u0168\u1EF8\u00E3\u1EBD\u0129\u00F5\u0169\u1EF9\u1EAA\u1EC4\u1ED6\u1EAB\u1EC5\u1ED7\u1EB4\u1EB5\u1EE0\u1EE1\u1EEE\u1EEF"),
		[]rune("\u1EA2\u1EBA\u1EC8\u1ECE\u1EE6\u1EF6\u1EA3\u1EBB\u1EC9\u1ECF\u1EE7\u1EF7\u1EA8\u1EC2\u1ED4\u1EA9\u1EC3\u1ED5\u1EB2\u1EB3\u1EDE\u1EDF\u1EEC\u1EED"),
		[]rune("\u1EA0\u1EB8\u1ECA\u1ECC\u1EE4\u1EF4\u1EA1\u1EB9\u1ECB\u1ECD\u1EE5\u1EF5\u1EAC\u1EC6\u1ED8\u1EAD\u1EC7\u1ED9\u1EB6\u1EB7\u1EE2\u1EE3\u1EF0\u1EF1"),
	}
)

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

// normalizeVietnamese mirrors NGram.normalize_vi.
func normalizeVietnamese(rs []rune) []rune {
	out := make([]rune, 0, len(rs))
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) {
			a, m := indexRune(viBase, rs[i]), indexRune(viMarks, rs[i+1])
			if a >= 0 && m >= 0 {
				out = append(out, viTarget[m][a])
				i++
				continue
			}
		}
		out = append(out, rs[i])
	}
	return out
}

func isURLChar(r rune) bool {
	return r < 0x80 && (r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || strings.ContainsRune("-_.?&~;+=/#", r))
}

// replaceURLs mirrors URL_RE.sub(' ', text) for
// `https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}` (RE2 caps repetitions at 1000,
// so the scan is written out).
func replaceURLs(rs []rune) []rune {
	var out []rune
	for i := 0; i < len(rs); {
		if end := urlEnd(rs, i); end > 0 {
			out = append(out, ' ')
			i = end
			continue
		}
		out = append(out, rs[i])
		i++
	}
	return out
}

func urlEnd(rs []rune, i int) int {
	for _, prefix := range []string{"https://", "http://"} {
		p := []rune(prefix)
		if i+len(p) > len(rs) || string(rs[i:i+len(p)]) != prefix {
			continue
		}
		j := i + len(p)
		for j < len(rs) && j-(i+len(p)) < 2076 && isURLChar(rs[j]) {
			j++
		}
		if j > i+len(p) {
			return j
		}
	}
	return 0
}

func isMailLocal(r rune) bool {
	return r < 0x80 && (isAlnumASCII(r) || r == '-' || r == '_' || r == '.')
}
func isMailDomain(r rune) bool { return r < 0x80 && (isAlnumASCII(r) || r == '-' || r == '_') }
func isAlnumASCII(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
}

// replaceMail mirrors MAIL_RE.sub(' ', text) for
// `[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}` with
// Python's leftmost, backtracking semantics.
func replaceMail(rs []rune) []rune {
	var out []rune
	done := 0
	for at := 0; at < len(rs); at++ {
		if rs[at] != '@' {
			continue
		}
		start := at
		for start > done && at-start < 64 && isMailLocal(rs[start-1]) {
			start--
		}
		if start == at {
			continue
		}
		d1 := at + 1
		for d1 < len(rs) && d1-(at+1) < 255 && isMailDomain(rs[d1]) {
			d1++
		}
		n1 := d1 - (at + 1)
		if n1 == 0 {
			continue
		}
		if d1 >= len(rs) || !isMailLocal(rs[d1]) {
			if n1 < 2 {
				continue
			}
			d1-- // backtrack one character into the second part
		}
		end := d1
		for end < len(rs) && end-d1 < 255 && isMailLocal(rs[end]) {
			end++
		}
		out = append(out, rs[done:start]...)
		out = append(out, ' ')
		done = end
		at = end - 1
	}
	return append(out, rs[done:]...)
}
