package runtime

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/plugins"
)

// maxSpanUnits bounds a span of the viewer's words: twelve Han characters
// or twelve words hold any item name a viewer types, and the bound keeps
// the list a query is held to near a few hundred entries.
const maxSpanUnits = 12

// maxSpanText bounds the viewer text whose spans are listed: past it (a
// pasted wall of text) a query keeps to the catalog's words.
const maxSpanText = 400

// viewerSpans lists the spans of a viewer's message a lookup may name the
// item by, each once: every run of one to maxSpanUnits units, where a unit
// is a Han character (or any other character of a script without spaces)
// or a word of letters and digits, and a span never crosses punctuation.
// A lone character is no span: no item is named by one ("城" of
// "城堡积木"), and a compact model that stops after one looks up nothing.
// Nor is a span that begins or ends with the question around the item
// (edgeWord): a compact model looked up "ship" of "where do the building
// blocks ship from", "does", "how" and "耳环能" of "耳环能退吗". The
// catalog's own words are listed apart and stay whole. "珍珠耳环还有货吗"
// gives "珍珠", "珍珠耳", …, "珍珠耳环", …; "pearl earrings?" gives
// "pearl", "pearl earrings" and "earrings".
func viewerSpans(text string) []string {
	if len(text) > maxSpanText {
		return nil
	}
	type unit struct{ start, end int }
	var out []string
	seen := map[string]bool{}
	var run []unit // the units since the last punctuation
	flush := func() {
		for i := range run {
			for j := i; j < len(run) && j-i < maxSpanUnits; j++ {
				s := text[run[i].start:run[j].end]
				if utf8.RuneCountInString(s) < 2 || edgeWord(text[run[i].start:run[i].end], true) || edgeWord(text[run[j].start:run[j].end], false) {
					continue
				}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
		run = run[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWordRune(r):
			j := i + size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if isWordRune(r2) || (r2 == '-' || r2 == '\'' || r2 == '.') && wordContinues(text, j+s2) {
					j += s2
					continue
				}
				break
			}
			run = append(run, unit{i, j})
			i = j
			continue
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			run = append(run, unit{i, i + size})
		case r == ' ' || r == '\t':
			// a space joins the words on either side of it
		default:
			flush()
		}
		i += size
	}
	flush()
	return out
}

// isWordRune reports whether r belongs to a word of a script written
// with spaces between words (Latin letters, digits and the like).
func isWordRune(r rune) bool {
	return r < 0x2E80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// wordContinues reports whether a word rune follows at i: "t-shirt",
// "don't" and "7.5ml" are one word, "shirt-" and "it." end before the
// mark.
func wordContinues(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return isWordRune(r)
}

// edgeWord reports whether unit (a word, or one Han character) is part of
// the question rather than of an item's name when it begins (first) or
// ends a span: English function and question words and the words of what
// is asked ("where", "does", "ship", "price"), Chinese particles and
// modal verbs ("吗", "的", "能"), and a trailing "退" ("能退吗") or
// attribute noun ("length", lastWords). "link" stays: "link 3" names an
// item.
func edgeWord(unit string, first bool) bool {
	if r, _ := utf8.DecodeRuneInString(unit); !isWordRune(r) {
		if first {
			return strings.ContainsRune("的了吗呢吧啊呀能会还请问求么", r)
		}
		return strings.ContainsRune("的了吗呢吧啊呀哦嘛么能会还退", r)
	}
	w := strings.ToLower(unit)
	return edgeWords[w] || !first && lastWords[w]
}

// lastWords are the English words of what is asked about an item that end
// no span ("jump rope length") though they may begin an item's name
// ("power bank", "color pencils").
var lastWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`length width height weight capacity power material colour colours color colors age
		volume count pieces piece ingredients warranty battery life expiry`) {
		m[w] = true
	}
	return m
}()

// edgeWords are the English words edgeWord refuses at a span's edge.
var edgeWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the do does did is are was were be been how what what's whats where when which
		who why can could would will should shall may might i i'm im you u it it's its this that these those there here
		got get have has any some for of in on at to from with about and or but if so not no yes ok okay hi hey hello
		please pls plz thx thanks me my your much many still just also too very host anchor ship ships shipped price
		prices cost costs coupon coupons voucher vouchers stock left available sold buy order send pin return returns
		returnable size sizes x deal deals bundle total discount off free postage delivery shipping`) {
		m[w] = true
	}
	return m
}()

// linkSpan is a span that names an item by its link: "2号", "2号链接",
// "link 3", "#3", "三号".
var linkSpan = regexp.MustCompile(`(?i)[0-9０-９一二两三四五六七八九十]+\s*号|\blink\s*#?\s*[0-9]+|链接\s*[0-9]+|#[0-9]+`)

// linkWords removes the words of a link reference without its number.
var linkWords = strings.NewReplacer("link", "", "链接", "", "号", "", "#", "")

// findsItem reports whether a catalog lookup of span could find an item,
// given the catalog's words in lower case: span holds one ("山茶积木多少钱"
// holds "山茶积木"), is a part of one ("jigsaw" of "jigsaw puzzle"), or names
// a link. A span that finds nothing ("back", "nah", "时候能再") is no query
// a compact model should be able to write: it looked those up and then
// told the viewer it could not check.
func findsItem(span string, words []string) bool {
	s := strings.ToLower(span)
	if linkSpan.MatchString(s) {
		return true
	}
	if strings.TrimSpace(linkWords.Replace(s)) == "" {
		// "link" is a piece of every alias "link 3", and names none.
		return false
	}
	for _, w := range words {
		if w != "" && (strings.Contains(s, w) || plugins.NamePart(w, s)) {
			return true
		}
	}
	return false
}

// namesVariant reports whether a message names the variant v: the name
// in any case, cutting no Latin word as a lookup reads names
// (plugins.NamePart: "M" of "M码", not of "Mini"; "red" of "red one", not
// of "shred"), and not the "m" of "I'm".
func namesVariant(message, v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return false
	}
	return plugins.NamePart(contractions.Replace(strings.ToLower(message)), v)
}

// contractions spell out the English contractions whose letters read as
// sizes.
var contractions = strings.NewReplacer("i'm", "i am", "i’m", "i am")

// countRE finds how many of an item a message orders: a number with a
// measure word ("3件", "两瓶"), after a verb of buying ("买2", "buy 3",
// "get two"), before "of" or a unit ("2 of", "3 pieces"), or as "x2".
var countRE = regexp.MustCompile(`(?i)([0-9]+|[一二两三四五六七八九十]+)\s*(?:件|个|支|瓶|盒|套|份|袋|双|条|包|罐|只|台|本|张|根|瓶装)` +
	`|(?:买|拍|来|要|下单)\s*([0-9]+|[一二两三四五六七八九十]+)` +
	`|\b(?:buy|buying|get|getting|order|ordering|take|taking)\s+([0-9]+|one|two|three|four|five|six|seven|eight|nine|ten)\b` +
	`|\b([0-9]+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:of|pieces|pcs|items|units|bottles|boxes|pairs|sets|packs)\b` +
	`|\bx\s*([0-9]+)\b`)

// countWords are the counts written in words.
var countWords = map[string]int{"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// viewerCounts returns the counts of items a message orders, each once, in
// order: what a count argument may say (harness.Tool.CountArgs). A link's
// number ("2号链接") and a price are no count.
func viewerCounts(message string) []int {
	text := linkSpan.ReplaceAllString(message, " ")
	var out []int
	for _, m := range countRE.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if g == "" {
				continue
			}
			n, err := strconv.Atoi(g)
			if err != nil {
				n = countWords[strings.ToLower(g)]
			}
			if n >= 1 && n <= 99 && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
