package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind is what a number in a text states.
type tokenKind uint8

const (
	tokMoney      tokenKind = iota + 1 // an amount in yuan: ¥199, 199元, 九块九, 199 yuan
	tokForeign                         // an amount in another currency: $19, 19 dollars
	tokSpendOff                        // 满X减Y: a coupon's minimum spend (v) and amount (v2)
	tokMinSpend                        // 满X元才能用, a minimum spend of X: a coupon's minimum spend (v)
	tokZhe                             // N折 or N% off: v is the percent off
	tokPercent                         // a plain percentage: 2% hyaluronic acid
	tokDate                            // a calendar date
	tokRelDate                         // 明天补货, ships tomorrow: v days from today, unit the verb
	tokTime                            // a time of day: v hours, v2 minutes
	tokDuration                        // v hours, or v months when unit is "month"
	tokStockCount                      // 还剩8件, only 8 left
	tokHeight                          // a body height in cm
	tokWeight                          // a body weight in kg
	tokSpec                            // a number with a unit of measure: 30ml, 50g
	tokQuantity                        // a count of things: 2件, 3 colours
	tokLink                            // a link number: 3号链接, link 3
	tokSize                            // a clothing size: L码, size L
	tokPriced                          // a bare number after a price word: 只要199
	tokNumber                          // any other number
	tokUnreadable                      // digits no reading states exactly: 300 digits, ٣٣, 16 significant digits
)

// maxDigits is the most significant digits a number may have to be read:
// float64 holds 15 exactly, and no amount, count or date a room states
// has more. A longer run ("33333…", "515055555555555555") reads as no
// number, so the check cannot compare it with a result and flags it.
const maxDigits = 15

// token is one number of a text, at text[start:end].
type token struct {
	kind       tokenKind
	start, end int
	v, v2      float64
	unit       string // the unit a duration or spec was written in
	date       date
	size       string
}

// date is a calendar date; year is 0 when the text did not give one.
type date struct{ year, month, day int }

func (d date) String() string {
	if d.year > 0 {
		return strconv.Itoa(d.year) + "-" + strconv.Itoa(d.month) + "-" + strconv.Itoa(d.day)
	}
	return strconv.Itoa(d.month) + "月" + strconv.Itoa(d.day) + "日"
}

const (
	arNum = `\d+(?:,\d{3})*(?:\.\d+)?`
	cnNum = `[零〇一二两三四五六七八九十百千万]+(?:点[零〇一二三四五六七八九]+)?`
	num   = `(` + arNum + `|` + cnNum + `)`
	sizes = `XXXL|XXL|XL|XXS|XS|[2-6]XL|S|M|L`
	month = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`
)

// pattern is one regular expression of the scanner. need, when set, is a
// cheap test a text (lower-cased) must pass for the pattern to be tried
// at all: a regular expression costs tens of microseconds a text in a
// WASM guest, and most texts hold few of the words patterns look for.
type pattern struct {
	kind tokenKind
	re   *regexp.Regexp
	need func(lower string, runes *runeSet) bool
	// read turns a match (submatch indexes into text) into the token's
	// values; false drops the match.
	read func(text string, m []int, t *token) bool
}

func sub(text string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return text[m[2*i]:m[2*i+1]]
}

// scanPatterns are tried in order; a match may not overlap an earlier
// one, so the more specific patterns come first (a date before a bare
// number, a duration before a stock count).
var scanPatterns = []pattern{
	{tokDate, regexp.MustCompile(`(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`), anyOf("-"), readTimestamp},
	{tokDate, regexp.MustCompile(`(\d{4})\s*[-/年.]\s*(\d{1,2})\s*[-/月.]\s*(\d{1,2})\s*[日号]?`), anyOf("-", "/", "年", "."), readYMD},
	{tokDate, regexp.MustCompile(`(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]`), anyOf("月"), func(s string, m []int, t *token) bool {
		return setDate(t, 0, atoi(sub(s, m, 1)), atoi(sub(s, m, 2)))
	}},
	{tokDate, regexp.MustCompile(`(\d{1,2})/(\d{1,2})`), anyOf("/"), readSlashDate},
	{tokDate, regexp.MustCompile(`(?i)\b(` + month + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(\d{4}))?`), wordThenDigit(months...), func(s string, m []int, t *token) bool {
		return setDate(t, atoi(sub(s, m, 3)), monthNumber(sub(s, m, 1)), atoi(sub(s, m, 2)))
	}},
	{tokDate, regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(` + month + `)\b\.?(?:,?\s*(\d{4}))?`), digitThenWord("stndrh", months...), func(s string, m []int, t *token) bool {
		return setDate(t, atoi(sub(s, m, 3)), monthNumber(sub(s, m, 2)), atoi(sub(s, m, 1)))
	}},
	{tokRelDate, regexp.MustCompile(`(今天|今日|今晚|明天|明日|明早|明晚|后天)\s*(?:就|会|可以|能|开始|晚上|下午|上午)?\s*(补货|到货|上架|发货|发出|开抢|截止|结束|到)`),
		anyOf("今", "明", "后天"), readRelDate},
	{tokRelDate, regexp.MustCompile(`(?i)\b(back in stock|back|restocked|restocks?|ships?|shipped|dispatched|dispatches|arrives?|delivered|ends?)\s+(?:on\s+)?(today|tonight|tomorrow)\b`),
		anyOf("today", "tonight", "tomorrow"), readRelDate},
	{tokTime, regexp.MustCompile(`(\d{1,2}):(\d{2})`), anyOf(":"), func(s string, m []int, t *token) bool {
		t.v, t.v2 = float64(atoi(sub(s, m, 1))), float64(atoi(sub(s, m, 2)))
		return t.v < 24 && t.v2 < 60
	}},
	{tokTime, regexp.MustCompile(`(早上|上午|中午|下午|晚上|今晚|明晚|今早|明早|凌晨|傍晚)?\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*点(?:\s*(\d{1,2})\s*分|(半))?`), anyOf("点"), readClock},
	{tokTime, regexp.MustCompile(`(?i)\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b`), digitThenWord(":", "am", "pm"), func(s string, m []int, t *token) bool {
		t.v, t.v2 = float64(atoi(sub(s, m, 1))), float64(atoi(sub(s, m, 2)))
		if strings.EqualFold(sub(s, m, 3), "pm") && t.v < 12 {
			t.v += 12
		}
		return t.v < 24 && t.v2 < 60
	}},
	{tokLink, regexp.MustCompile(`(\d{1,3}|[一二三四五六七八九十]{1,3})\s*号\s*(?:链接|链|宝贝|商品)`), anyOf("号"), readFirst},
	{tokLink, regexp.MustCompile(`链接\s*(\d{1,3})`), anyOf("链接"), readFirst},
	{tokLink, regexp.MustCompile(`(?i)\blink\s*(?:no\.?\s*|number\s*|#\s*)?(\d{1,3})\b`), anyOf("link"), readFirst},
	{tokSpendOff, regexp.MustCompile(`满\s*` + num + `\s*(?:元|块)?\s*(?:可用|可|就|立)?\s*减\s*` + num + `\s*(?:元|块)?`), anyOf("满"), func(s string, m []int, t *token) bool {
		a, ok1 := parseNumber(sub(s, m, 1))
		b, ok2 := parseNumber(sub(s, m, 2))
		t.v, t.v2 = a, b
		return ok1 && ok2
	}},
	{tokMinSpend, regexp.MustCompile(`满\s*` + num + `\s*(?:元|块)?\s*(?:才能用|才可用|才能使用|才可以用|可用|能用|使用|可以用)`), anyOf("满"), readFirst},
	{tokMinSpend, regexp.MustCompile(`(?i)\b(?:min(?:imum|\.)?\s+spend(?:\s+of)?|spend\s+(?:at\s+least|over)|orders?\s+(?:over|above|of\s+at\s+least))\s*(?:¥|￥|rmb\s*|cny\s*)?\s*(` + arNum + `)`),
		anyOf("spend", "order"), readFirst},
	{tokForeign, regexp.MustCompile(`(US\$|\$|€|£)\s*(` + arNum + `)`), anyOf("$", "€", "£"), func(s string, m []int, t *token) bool {
		t.unit = sub(s, m, 1)
		return readNumber(sub(s, m, 2), &t.v)
	}},
	{tokForeign, regexp.MustCompile(`(` + arNum + `)\s*(美元|美金|欧元|英镑|(?i:dollars?|usd|euros?|eur|gbp)\b)`), anyOf("美元", "美金", "欧元", "英镑", "dollar", "usd", "eur", "gbp"), func(s string, m []int, t *token) bool {
		t.unit = sub(s, m, 2)
		return readNumber(sub(s, m, 1), &t.v)
	}},
	{tokMoney, regexp.MustCompile(`(?:[¥￥]|人民币|(?i:rmb|cny)\b)\s*` + num), anyOf("¥", "￥", "人民币", "rmb", "cny"), readFirst},
	{tokMoney, regexp.MustCompile(num + `\s*(万|千)?\s*(块钱|元|块|(?i:yuan|rmb|cny|kuai)\b)([零一二两三四五六七八九\d]{1,2})?`), anyOf("元", "块", "yuan", "rmb", "cny", "kuai"), readYuan},
	{tokZhe, regexp.MustCompile(`(\d{1,2}(?:\.\d)?|[一二三四五六七八九]{1,2})\s*折`), anyOf("折"), readZhe},
	{tokZhe, regexp.MustCompile(`(?i)(\d{1,3}(?:\.\d+)?)\s*(?:%|percent)\s*off\b`), anyOf("off"), readFirst},
	{tokZhe, regexp.MustCompile(`(?i)\b(?:save|saving|discount of|discounted by)\s*(\d{1,3}(?:\.\d+)?)\s*(?:%|percent)`), anyOf("sav", "discount"), readFirst},
	{tokPercent, regexp.MustCompile(`(\d{1,3}(?:\.\d+)?)\s*%`), anyOf("%"), readPercent},
	{tokPercent, regexp.MustCompile(`百分之` + num), anyOf("百分之"), readPercent},
	{tokDuration, regexp.MustCompile(`(次日|隔天|隔日|第二天)`), anyOf("次日", "隔天", "隔日", "第二天"), func(_ string, _ []int, t *token) bool {
		t.v, t.unit = 24, "day"
		return true
	}},
	{tokDuration, regexp.MustCompile(`(?i)\bnext[- ]day\b`), anyOf("next"), func(_ string, _ []int, t *token) bool {
		t.v, t.unit = 24, "day"
		return true
	}},
	{tokDuration, regexp.MustCompile(num + `\s*(个小时|小时|钟头|个工作日|工作日|天|日内|周|个星期|星期|个月|年|分钟)`), anyOf("小时", "钟头", "工作日", "天", "日内", "周", "星期", "月", "年", "分钟"), readDuration},
	{tokDuration, regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*-?\s*(business days?|working days?|hours?|hrs?|h|days?|weeks?|months?|years?|yrs?|minutes?|mins?)\b`), digitThen("bdhmwy"), readDuration},
	{tokStockCount, regexp.MustCompile(`(?:还剩|仅剩|只剩|剩下|剩余|库存(?:还有|仅剩|只有|还剩|仅|只|为|是|有)?|还有|现货)\s*` + num + `\s*(?:件|个|份|瓶|支|盒|套|台|双|条|包|袋|罐|只)?`), anyOf("剩", "库存", "还有", "现货"), readFirst},
	{tokStockCount, regexp.MustCompile(`(?i)\b(\d+)\s+(?:[a-z]+\s+)?(?:left|remaining|in stock)\b`), anyOf("left", "remaining", "in stock"), readFirst},
	{tokStockCount, regexp.MustCompile(`(?i)\bstock\s+(?:of|is|:)\s*(\d+)\b`), anyOf("stock"), readFirst},
	{tokHeight, regexp.MustCompile(`身高\s*(\d{2,3}(?:\.\d+)?)\s*(?:cm|厘米|公分)?`), anyOf("身高"), readFirst},
	{tokHeight, regexp.MustCompile(`(?i)(\d{3}(?:\.\d)?)\s*(?:cm\b|厘米|公分)`), anyOf("cm", "厘米", "公分"), readFirst},
	{tokHeight, regexp.MustCompile(`(1\.\d{1,2})\s*(?:米|m\b)`), anyOf("米", "m"), func(s string, m []int, t *token) bool {
		ok := readNumber(sub(s, m, 1), &t.v)
		t.v *= 100
		return ok
	}},
	{tokHeight, regexp.MustCompile(`1米(\d{1,2})`), anyOf("米"), func(s string, m []int, t *token) bool {
		d := atoi(sub(s, m, 1))
		if d < 10 {
			d *= 10
		}
		t.v = float64(100 + d)
		return true
	}},
	{tokWeight, regexp.MustCompile(`体重\s*(\d{2,3}(?:\.\d+)?)\s*(kg|公斤|千克|斤)?`), anyOf("体重"), readWeight},
	{tokWeight, regexp.MustCompile(`(?i)(\d{2,3}(?:\.\d+)?)\s*(kg\b|公斤|千克|斤)`), anyOf("kg", "公斤", "千克", "斤"), readWeight},
	{tokWeight, regexp.MustCompile(`(?i)(\d{2,3})\s*(lbs?|pounds)\b`), anyOf("lb", "pound"), readWeight},
	{tokSpec, regexp.MustCompile(`(?i)\bspf\s*(\d+)\+*`), anyOf("spf"), readFirst},
	{tokSpec, regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(ml|mah|mg|kg|g|l|w|v|mm|cm|m|km|hz|gb|tb|mb|inch(?:es)?)\b`), digitThen("cghiklmtvw"), readSpec},
	{tokSpec, regexp.MustCompile(`(\d+(?:\.\d+)?)\s*(毫升|毫安|毫克|公斤|千克|克|升|瓦|伏|英寸|寸|毫米|厘米|米|公里|片|粒|抽|层|度)`), anyOf("毫", "克", "升", "瓦", "伏", "寸", "米", "公里", "片", "粒", "抽", "层", "度"), readSpec},
	{tokSize, regexp.MustCompile(`(?i)(` + sizes + `|均码)\s*(?:码|号)`), anyOf("码", "号"), readSize},
	{tokSize, regexp.MustCompile(`(\d{2,3})\s*码`), anyOf("码"), readSize},
	{tokSize, regexp.MustCompile(`(?:穿|选|拍|建议|推荐|尺码|码数)\s*(` + sizes + `)\b`), anyOf("穿", "选", "拍", "建议", "推荐", "码"), readSize},
	{tokSize, regexp.MustCompile(`(?i:\bsize)\s+(` + sizes + `|\d{1,2}|xxxl|xxl|xl|xxs|xs|s|m|l)\b`), anyOf("size"), readSize},
	{tokSize, regexp.MustCompile(`\b(` + sizes + `)\s+(?i:size)\b`), anyOf("size"), readSize},
	{tokSize, regexp.MustCompile(`(?i:\b(?:take|get|go with|choose|pick|recommend|wear|try))\s+(?:an?\s+|the\s+)?(` + sizes + `)\b`), anyOf("take", "get", "go with", "choose", "pick", "recommend", "wear", "try"), readSize},
	{tokQuantity, regexp.MustCompile(num + `\s*(件|个|份|瓶|支|盒|套|台|双|条|包|袋|罐|只|款|色|种|次|位|人)`), anyOf(quantityWords...), readFirst},
	{tokQuantity, regexp.MustCompile(`(?i)\b(\d+)\s+(pieces?|items?|pcs|bottles?|boxes?|pairs?|packs?|sets?|colou?rs?|shades?|flavou?rs?|sizes?|styles?|people|times)\b`), digitThenWord("", "piece", "item", "pcs", "bottle", "box", "pair", "pack", "set", "colo", "shade", "flavo", "size", "style", "people", "times"), readFirst},
}

// anchored holds, for each scan pattern that starts with a number, the
// pattern anchored at its start (nil for the others): scan tries it only
// where a number starts, not at every byte of the text.
var anchored = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(scanPatterns))
	for i, p := range scanPatterns {
		src := p.re.String()
		rest := strings.TrimLeft(strings.TrimPrefix(src, "(?i)"), "(")
		if strings.HasPrefix(rest, `\d`) || (rest != "" && isDigit(rest[0])) {
			out[i] = regexp.MustCompile(`^(?:` + src + `)`)
		}
	}
	return out
}()

// needsDigit marks the scan patterns that only match text holding an
// ASCII digit (a \d and no Chinese numeral or size letters to match
// instead), so that scan skips them on text without one.
var needsDigit = func() []bool {
	out := make([]bool, len(scanPatterns))
	for i, p := range scanPatterns {
		src := p.re.String()
		out[i] = strings.Contains(src, `\d`) && !strings.Contains(src, "一") && !strings.Contains(src, "XL")
	}
	return out
}()

var (
	months        = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	quantityWords = []string{"件", "个", "份", "瓶", "支", "盒", "套", "台", "双", "条", "包", "袋", "罐", "只", "款", "色", "种", "次", "位", "人"}
	// priceCueRE ends where a bare number stating a price would start.
	priceCueRE = regexp.MustCompile(`(?i)(?:只要|仅需|仅要|仅|才|现在|价格是|价格|价|到手|券后|原价|售价|卖|only|just|price is|costs?|priced at|pay)\s*[:：]?\s*$`)
)

// kindSet is a set of token kinds, one bit each.
type kindSet uint32

const (
	// allKinds is every kind: what a reply or a message states.
	allKinds kindSet = 1<<32 - 1
	// factKinds are the kinds a result or context text backs beyond its
	// plain numbers, which scanFacts reads without the scanner.
	factKinds kindSet = 1<<tokMoney | 1<<tokSpendOff | 1<<tokZhe | 1<<tokPercent | 1<<tokDate | 1<<tokTime |
		1<<tokDuration | 1<<tokSize | 1<<tokQuantity
)

// runeSet records the runes a text holds, each by its low 8 bits: a
// literal whose first rune is not in the set is not in the text, which
// costs one lookup to learn instead of a search (the searches a WASM
// guest makes add up, each paying the host's deadline checks).
type runeSet [256]bool

func newRuneSet(s string) *runeSet {
	var set runeSet
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			set[c] = true
			i++
			continue
		}
		key, n := runeKey(s[i:])
		set[key] = true
		i += n
	}
	return &set
}

// mayHold reports whether the text of the set may hold literal.
func (set *runeSet) mayHold(literal string) bool {
	if literal != "" && literal[0] < utf8.RuneSelf {
		return set[literal[0]]
	}
	key, _ := runeKey(literal)
	return set[key]
}

// runeKey returns the low 8 bits of the first rune of s (U+FFFD when s
// is empty or starts with a byte that is not UTF-8) and the rune's
// length. The three-byte runes of Chinese text are read without a
// decode, which costs a WASM guest a call for every phrase it tests.
func runeKey(s string) (byte, int) {
	if len(s) >= 3 && (s[0] >= 0xE1 && s[0] <= 0xEC || s[0] == 0xEE || s[0] == 0xEF) && s[1]&0xC0 == 0x80 && s[2]&0xC0 == 0x80 {
		return s[1]<<6 | s[2]&0x3F, 3
	}
	r, n := utf8.DecodeRuneInString(s)
	return byte(r), n
}

// literals are words a text is searched for, each with the rune-set key
// of its first rune, read once: a text is searched only for the words
// whose first rune it holds.
type literals struct {
	words []string
	keys  []byte
}

func newLiterals(words ...string) literals {
	l := literals{words: words, keys: make([]byte, len(words))}
	for i, w := range words {
		if w != "" && w[0] < utf8.RuneSelf {
			l.keys[i] = w[0]
		} else {
			l.keys[i], _ = runeKey(w)
		}
	}
	return l
}

// in reports whether lower, whose runes set holds, holds one of the words.
func (l literals) in(lower string, set *runeSet) bool {
	for i, k := range l.keys {
		if set[k] && strings.Contains(lower, l.words[i]) {
			return true
		}
	}
	return false
}

// anyOf is a need: the text holds one of the literals.
func anyOf(words ...string) func(string, *runeSet) bool {
	l := newLiterals(words...)
	return l.in
}

// digitThen is a need: a digit is followed, after spaces or a hyphen, by
// one of the letters (the first letters of the units a pattern reads).
func digitThen(letters string) func(string, *runeSet) bool {
	return func(lower string, _ *runeSet) bool {
		for i := 0; i < len(lower); i++ {
			if !isDigit(lower[i]) {
				continue
			}
			j := i + 1
			for j < len(lower) && (lower[j] == ' ' || lower[j] == '-') {
				j++
			}
			if j < len(lower) && strings.IndexByte(letters, lower[j]) >= 0 {
				return true
			}
		}
		return false
	}
}

// isSpace reports whether c is white space as \s reads it.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// hasWordAt reports whether lower holds one of words at i.
func hasWordAt(lower string, i int, words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(lower[i:], w) {
			return true
		}
	}
	return false
}

// digitThenWord is a need: a digit, after more digits or bytes of glue
// and then white space (or "of" and white space), is followed by one of
// words. It is tighter than anyOf for patterns that start with a number
// and end in a common English word ("4 pm", "2 pairs", "5th of May"):
// product texts hold "stream", "repair" and "may" far more often than
// such a phrase.
func digitThenWord(glue string, words ...string) func(string, *runeSet) bool {
	return func(lower string, _ *runeSet) bool {
		for i := 0; i < len(lower); i++ {
			if !isDigit(lower[i]) {
				continue
			}
			j := i + 1
			for j < len(lower) && (isDigit(lower[j]) || strings.IndexByte(glue, lower[j]) >= 0) {
				j++
			}
			for j < len(lower) && isSpace(lower[j]) {
				j++
			}
			if hasWordAt(lower, j, words) {
				return true
			}
			if strings.HasPrefix(lower[j:], "of") {
				k := j + 2
				for k < len(lower) && isSpace(lower[k]) {
					k++
				}
				if hasWordAt(lower, k, words) {
					return true
				}
			}
			i = j - 1 // a start inside the run skips to the same place
		}
		return false
	}
}

// wordThenDigit is a need: one of words, after more letters, a '.' and
// white space, is followed by a digit ("May 5", "Sept. 12").
func wordThenDigit(words ...string) func(string, *runeSet) bool {
	return func(lower string, set *runeSet) bool {
		for _, w := range words {
			if !set.mayHold(w) {
				continue
			}
			for at := 0; ; {
				k := strings.Index(lower[at:], w)
				if k < 0 {
					break
				}
				j := at + k + len(w)
				for j < len(lower) && lower[j] >= 'a' && lower[j] <= 'z' {
					j++
				}
				if j < len(lower) && lower[j] == '.' {
					j++
				}
				for j < len(lower) && isSpace(lower[j]) {
					j++
				}
				if j < len(lower) && isDigit(lower[j]) {
					return true
				}
				at += k + 1
			}
		}
		return false
	}
}

// scanFacts reads the values of a result or context text: amounts,
// percentages, dates, durations, sizes and quantities as scan does, and
// every number, even one glued to a unit or a word ("30ml", "SPF50").
func scanFacts(text string) []token {
	toks := scanKinds(text, make([]bool, len(text)), factKinds)
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && (isDigit(text[j]) || (text[j] == '.' && j+1 < len(text) && isDigit(text[j+1]))) {
			j++
		}
		if v, err := strconv.ParseFloat(text[i:j], 64); err == nil {
			toks = append(toks, token{kind: tokNumber, start: i, end: j, v: v})
		}
		i = j
	}
	return toks
}

// scan finds the numbers of text with what each states. used marks bytes
// already claimed (residue, item names); scan claims the bytes of every
// token it returns.
func scan(text string, used []bool) []token {
	return scanKinds(text, used, allKinds)
}

// scanKinds is scan for the token kinds of kinds only.
func scanKinds(text string, used []bool, kinds kindSet) []token {
	lower := asciiLower(text)
	set := newRuneSet(lower)
	hasDigit := digits.in(lower, set)
	if !hasDigit && !mayHoldNumber(lower, set) && (kinds&(1<<tokNumber) == 0 || !hasOtherDigit(text)) {
		return nil
	}
	var out []token
	runs := numberRuns(text)
	for i := range scanPatterns {
		p := &scanPatterns[i]
		if kinds&(1<<p.kind) == 0 || (needsDigit[i] && !hasDigit) || (p.need != nil && !p.need(lower, set)) {
			continue
		}
		try := func(m []int) {
			if overlaps(used, m[0], m[1]) || !numberBounded(text, m[0], m[1]) {
				return
			}
			t := token{kind: p.kind, start: m[0], end: m[1]}
			if !p.read(text, m, &t) {
				return
			}
			claim(used, t.start, t.end)
			out = append(out, t)
		}
		if re := anchored[i]; re != nil {
			// The pattern starts with a number: try it where one does.
			for _, r := range runs {
				if used[r[0]] {
					continue
				}
				if m := re.FindStringSubmatchIndex(text[r[0]:]); m != nil {
					for j := range m {
						if m[j] >= 0 {
							m[j] += r[0]
						}
					}
					try(m)
				}
			}
			continue
		}
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			try(m)
		}
	}
	if kinds&(1<<tokNumber) == 0 {
		return out
	}
	for _, r := range runs {
		if overlaps(used, r[0], r[1]) {
			continue
		}
		s := text[r[0]:r[1]]
		if unreadable(s) {
			// Fail closed: digits the check cannot read are no backed
			// number, glued to a word or not.
			claim(used, r[0], r[1])
			out = append(out, token{kind: tokUnreadable, start: r[0], end: r[1]})
			continue
		}
		if isCNNumeral(s[0]) && !plausibleCN(s) {
			continue
		}
		claim(used, r[0], r[1])
		if glued(text, r[0], r[1]) {
			continue // part of a word or an id: "SE107", "5G", "No.1"
		}
		v, ok := parseNumber(s)
		if !ok {
			continue
		}
		t := token{kind: tokNumber, start: r[0], end: r[1], v: v}
		if priceCueRE.MatchString(text[max(0, r[0]-15):r[0]]) {
			t.kind = tokPriced
		} else if isCNNumeral(s[0]) {
			continue // Chinese numerals outside a price are words ("一起", "十分")
		}
		out = append(out, t)
	}
	return out
}

// numberRuns returns the numbers of text as arNum and cnNum read them:
// "1,299.00", "19.9", "一百九十九", "九点九", and the runs of other
// decimal digits ("٣٣", "𝟑"), which no pattern reads.
func numberRuns(text string) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case isDigit(c):
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			for j+3 < len(text) && text[j] == ',' && isDigit(text[j+1]) && isDigit(text[j+2]) && isDigit(text[j+3]) &&
				(j+4 == len(text) || !isDigit(text[j+4])) {
				j += 4
			}
			if j+1 < len(text) && text[j] == '.' && isDigit(text[j+1]) {
				j++
				for j < len(text) && isDigit(text[j]) {
					j++
				}
			}
			out = append(out, [2]int{i, j})
			i = j
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsDigit(r) {
				j := i + size
				for j < len(text) {
					r, size := utf8.DecodeRuneInString(text[j:])
					if !unicode.IsDigit(r) {
						break
					}
					j += size
				}
				out = append(out, [2]int{i, j})
				i = j
				continue
			}
			if !strings.ContainsRune(cnNumerals, r) {
				i += size
				continue
			}
			j := i
			for j < len(text) {
				r, size := utf8.DecodeRuneInString(text[j:])
				if !strings.ContainsRune(cnNumerals, r) {
					break
				}
				j += size
			}
			if strings.HasPrefix(text[j:], "点") {
				k := j + len("点")
				for k < len(text) {
					r, size := utf8.DecodeRuneInString(text[k:])
					if !strings.ContainsRune(cnDigitRunes, r) {
						break
					}
					k += size
				}
				if k > j+len("点") {
					j = k
				}
			}
			out = append(out, [2]int{i, j})
			i = j
		default:
			i++
		}
	}
	return out
}

const (
	cnNumerals   = "零〇一二两三四五六七八九十百千万"
	cnDigitRunes = "零〇一二三四五六七八九"
)

// mayHoldNumber is a cheap test that a text without a digit (lower, its
// ASCII lower-cased form, whose runes set holds) holds a Chinese numeral,
// a duration word or a size; most result strings hold none. The set
// spares the guest a search for each word a text cannot hold.
func mayHoldNumber(lower string, set *runeSet) bool {
	return numberCues.in(lower, set) || numberWords.in(lower, set)
}

var (
	digits = newLiterals(strings.Split("0123456789", "")...)
	// numberCues are the runes that start a number or a size in words.
	numberCues = newLiterals(strings.Split("零〇一二两三四五六七八九十百千万码号穿选拍荐今明后", "")...)
	// numberWords are the words of durations, dates and size advice.
	numberWords = newLiterals("次日", "隔天", "隔日", "next", "size", "take", "get", "go with", "choose", "pick", "recommend", "wear", "try",
		"today", "tonight", "tomorrow")
)

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func overlaps(used []bool, start, end int) bool {
	for i := start; i < end && i < len(used); i++ {
		if used[i] {
			return true
		}
	}
	return false
}

func claim(used []bool, start, end int) {
	for i := start; i < end && i < len(used); i++ {
		used[i] = true
	}
}

// numberBounded rejects a match whose number continues a longer number
// or a word: the "5" of "15折" matched alone, the "10" of "v10元".
func numberBounded(text string, start, end int) bool {
	if start > 0 && isDigit(text[start]) {
		c := text[start-1]
		if isDigit(c) || (c == '.' && start > 1 && isDigit(text[start-2])) {
			return false
		}
		if isASCIILetter(c) && isDigit(text[start]) {
			return false
		}
	}
	return !(end < len(text) && isDigit(text[end-1]) && isDigit(text[end]))
}

// glued reports whether the number at text[start:end] is part of a
// word or an identifier rather than a number of its own.
func glued(text string, start, end int) bool {
	if start > 0 {
		c := text[start-1]
		// A hyphen does not glue: "entyp-5" states a 5 no result gave, as
		// the room grader reads it; the ids and names the turn knows
		// ("KIT-5806") are claimed before numbers are read.
		if isASCIILetter(c) || c == '_' || c == '#' || c == '/' || c == '.' || c == '@' {
			return true
		}
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); r == '第' {
			return true
		}
	}
	if end < len(text) {
		// Nor after it: "50-storage" states a 50, as the grader reads it.
		c := text[end]
		if isASCIILetter(c) || c == '_' || c == '@' {
			return true
		}
	}
	return false
}

// unreadable reports whether the run s of numberRuns is digits no reading
// states exactly: more than maxDigits digits (Arabic or Chinese), or
// decimal digits of another script, which normalize does not fold.
func unreadable(s string) bool {
	n := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', strings.ContainsRune(cnDigitRunes, r) || r == '两':
			n++
		case r >= utf8.RuneSelf && unicode.IsDigit(r):
			return true
		}
	}
	return n > maxDigits
}

// hasOtherDigit reports whether text holds a decimal digit of a script
// other than ASCII's, which scan reads as unreadable.
func hasOtherDigit(text string) bool {
	for _, r := range text {
		if r >= utf8.RuneSelf && unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isCNNumeral reports whether a string starting with byte c starts with a
// Chinese numeral (they are all 3-byte runes starting 0xE3-0xE9).
func isCNNumeral(c byte) bool { return c >= 0x80 }

// plausibleCN accepts Chinese numerals that read as a number: more than
// one character, and not the words that are made of numerals.
func plausibleCN(s string) bool {
	if utf8.RuneCountInString(s) < 2 {
		return false
	}
	for _, w := range []string{"千万", "万一", "十分", "一一", "百万"} {
		if s == w {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

func readNumber(s string, v *float64) bool {
	f, ok := parseNumber(s)
	*v = f
	return ok
}

// writtenNumber reads the first number of s as it is written ("1" of
// "1年", "七" of "七天").
func writtenNumber(s string) (float64, bool) {
	runs := numberRuns(s)
	if len(runs) == 0 {
		return 0, false
	}
	return parseNumber(s[runs[0][0]:runs[0][1]])
}

func readFirst(s string, m []int, t *token) bool { return readNumber(sub(s, m, 1), &t.v) }

func readTimestamp(s string, m []int, t *token) bool {
	if !setDate(t, atoi(sub(s, m, 1)), atoi(sub(s, m, 2)), atoi(sub(s, m, 3))) {
		return false
	}
	t.v, t.v2 = float64(atoi(sub(s, m, 4))), float64(atoi(sub(s, m, 5)))
	t.unit = sub(s, m, 6)
	return true
}

func readYMD(s string, m []int, t *token) bool {
	return setDate(t, atoi(sub(s, m, 1)), atoi(sub(s, m, 2)), atoi(sub(s, m, 3)))
}

// readSlashDate reads "12/10" as December 10th, but not "1/2/3" or a
// fraction inside a longer number.
func readSlashDate(s string, m []int, t *token) bool {
	if m[1] < len(s) && (s[m[1]] == '/' || isDigit(s[m[1]])) {
		return false
	}
	if m[0] > 0 && (s[m[0]-1] == '/' || isDigit(s[m[0]-1])) {
		return false
	}
	return setDate(t, 0, atoi(sub(s, m, 1)), atoi(sub(s, m, 2)))
}

func setDate(t *token, y, mo, d int) bool {
	if mo < 1 || mo > 12 || d < 1 || d > 31 || (y != 0 && (y < 1900 || y > 2200)) {
		return false
	}
	t.date = date{y, mo, d}
	return true
}

func monthNumber(s string) int {
	s = asciiLower(s)
	for i, m := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if strings.HasPrefix(s, m) {
			return i + 1
		}
	}
	return 0
}

// readRelDate reads a day relative to today and what happens on it:
// unit is "ship" (dispatch), "arrive" (delivery) or "date" (restock,
// promotion start or end).
func readRelDate(s string, m []int, t *token) bool {
	day, verb := asciiLower(sub(s, m, 1)), asciiLower(sub(s, m, 2))
	if !hasDay(day) {
		day, verb = verb, day // the English order: "ships tomorrow"
	}
	if next, _ := utf8.DecodeRuneInString(s[m[1]:]); verb == "到" && strings.ContainsRune("手账位", next) {
		return false // 今天到手价 is a price, not a delivery
	}
	switch {
	case strings.HasPrefix(day, "明") || day == "tomorrow":
		t.v = 1
	case day == "后天":
		t.v = 2
	}
	switch {
	case strings.Contains(verb, "发") || strings.HasPrefix(verb, "ship") || strings.HasPrefix(verb, "dispatch"):
		t.unit = "ship"
	case verb == "到" || strings.HasPrefix(verb, "arrive") || verb == "delivered":
		t.unit = "arrive"
	default:
		t.unit = "date"
	}
	return true
}

func hasDay(s string) bool {
	return strings.ContainsAny(s, "今明后") || s == "today" || s == "tonight" || s == "tomorrow"
}

// readClock reads "8点", "晚上8点半", "20点30分"; a Chinese numeral hour
// only after a word of the day ("一点" alone is "a little").
func readClock(s string, m []int, t *token) bool {
	part, hour := sub(s, m, 1), sub(s, m, 2)
	if isCNNumeral(hour[0]) && part == "" {
		return false
	}
	h, ok := parseNumber(hour)
	if !ok || h > 24 {
		return false
	}
	switch part {
	case "下午", "晚上", "今晚", "明晚", "傍晚":
		if h < 12 {
			h += 12
		}
	}
	t.v = h
	if sub(s, m, 4) != "" {
		t.v2 = 30
	} else {
		t.v2 = float64(atoi(sub(s, m, 3)))
	}
	return t.v2 < 60
}

// readYuan reads 199元, 1.2万元, 九块九 (9.9), 19块9 (19.9).
func readYuan(s string, m []int, t *token) bool {
	n, unit, tail := sub(s, m, 1), sub(s, m, 3), sub(s, m, 4)
	v, ok := parseNumber(n)
	if !ok {
		return false
	}
	if tail != "" && (unit != "块" || (m[1] < len(s) && followsTail(s[m[1]:]))) {
		// "199元2件": the digits after the unit are the next word's.
		tail, t.end = "", m[8]
	}
	if unit == "块" && isCNNumeral(n[0]) && utf8.RuneCountInString(n) == 1 && tail == "" {
		return false // "一块" is "together" as often as "one yuan"
	}
	switch sub(s, m, 2) {
	case "万":
		v *= 10000
	case "千":
		v *= 1000
	}
	if tail != "" {
		d, ok := parseNumber(tail)
		if !ok {
			return false
		}
		// The tail is jiao (one digit) or jiao and fen (two).
		if utf8.RuneCountInString(tail) == 1 {
			v += d / 10
		} else {
			v += d / 100
		}
	}
	t.v = v
	return true
}

// readZhe reads N折: 8折 is 20% off, 8.5折 and 八五折 15% off.
func readZhe(s string, m []int, t *token) bool {
	n := sub(s, m, 1)
	var tenths float64
	if isCNNumeral(n[0]) {
		var digits []float64
		for _, r := range n {
			d, ok := parseNumber(string(r))
			if !ok {
				return false
			}
			digits = append(digits, d)
		}
		tenths = digits[0]
		if len(digits) == 2 {
			tenths += digits[1] / 10
		}
	} else {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return false
		}
		tenths = v
		if v >= 10 {
			tenths = v / 10 // 85折
		}
	}
	if tenths <= 0 || tenths >= 10 {
		return false
	}
	t.v = 100 - 10*tenths
	return true
}

// readPercent reads a percentage; after a discount word it is a percent off.
func readPercent(s string, m []int, t *token) bool {
	if !readNumber(sub(s, m, 1), &t.v) {
		return false
	}
	if discountCue(s[max(0, m[0]-12):m[0]]) {
		t.kind = tokZhe
	}
	return true
}

func discountCue(before string) bool {
	return containsAny(asciiLower(before), []string{"优惠", "折扣", "便宜", "降", "减", "off", "discount"})
}

func readDuration(s string, m []int, t *token) bool {
	n, unit := sub(s, m, 1), asciiLower(sub(s, m, 2))
	v, ok := parseNumber(n)
	if !ok {
		return false
	}
	switch {
	case unit == "年" && v >= 1000:
		return false // a year, not a duration
	case strings.Contains(unit, "小时") || unit == "钟头" || strings.HasPrefix(unit, "h"):
		t.v, t.unit = v, "hour"
	case strings.Contains(unit, "分钟") || strings.HasPrefix(unit, "min"):
		t.v, t.unit = v/60, "minute"
	case unit == "周" || strings.Contains(unit, "星期") || strings.HasPrefix(unit, "week"):
		t.v, t.unit = v*24*7, "week"
	case strings.Contains(unit, "月") || strings.HasPrefix(unit, "month"):
		t.v, t.unit = v, "month"
	case unit == "年" || strings.HasPrefix(unit, "y"):
		t.v, t.unit = v*12, "month"
	default: // days, working days
		t.v, t.unit = v*24, "day"
	}
	return true
}

// readWeight reads a weight in kg; 斤 are half kilograms, pounds 0.4536,
// and a bare weight over 100 is in 斤, as Chinese viewers give it.
func readWeight(s string, m []int, t *token) bool {
	if !readNumber(sub(s, m, 1), &t.v) {
		return false
	}
	switch unit := asciiLower(sub(s, m, 2)); {
	case unit == "斤" || (unit == "" && t.v > 100):
		t.v /= 2
	case strings.HasPrefix(unit, "lb") || unit == "pounds":
		t.v = math.Round(t.v*0.4536*10) / 10
	}
	return true
}

func readSpec(s string, m []int, t *token) bool {
	t.unit = asciiLower(sub(s, m, 2))
	return readNumber(sub(s, m, 1), &t.v)
}

func readSize(s string, m []int, t *token) bool {
	t.size = strings.ToUpper(sub(s, m, 1))
	return true
}

// parseNumber reads Arabic ("1,299.00") or Chinese ("一百九十九",
// "两百五", "九点九") numerals.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	if unreadable(s) {
		return 0, false
	}
	if isDigit(s[0]) {
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		return f, err == nil
	}
	return parseCN(s)
}

var cnDigits = map[rune]float64{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}

// parseCN reads Chinese numerals: positional ("一百零五", "两万三千"),
// abbreviated ("两百五" is 250, "一万二" 12000), digit by digit ("一九九")
// and with a decimal part ("九点九").
func parseCN(s string) (float64, bool) {
	intPart, frac, hasFrac := strings.Cut(s, "点")
	var total, section, digit float64
	var lastUnit float64
	seenDigit, positional, digitsOnly := false, false, true
	var digitString float64
	for _, r := range intPart {
		if d, ok := cnDigits[r]; ok {
			digit, seenDigit = d, true
			digitString = digitString*10 + d
			continue
		}
		digitsOnly = false
		var unit float64
		switch r {
		case '十':
			unit = 10
		case '百':
			unit = 100
		case '千':
			unit = 1000
		case '万':
			unit = 10000
		default:
			return 0, false
		}
		positional = true
		if unit == 10000 {
			total = (total + section + digit) * 10000
			section, digit = 0, 0
		} else {
			if digit == 0 && unit == 10 {
				digit = 1 // "十五" is 15
			}
			section += digit * unit
			digit = 0
		}
		lastUnit, seenDigit = unit, false
	}
	if intPart == "" || (total+section+digit == 0 && !strings.ContainsAny(intPart, "零〇")) {
		return 0, false // "万" or "百" alone is no number
	}
	var v float64
	switch {
	case digitsOnly:
		v = digitString
	case positional && seenDigit && lastUnit > 10 && strings.IndexRune("零〇", lastRune(intPart)) < 0 && !strings.ContainsRune(intPart[:len(intPart)-3], '零'):
		// "两百五": the trailing digit counts in the next lower unit.
		v = total + section + digit*lastUnit/10
	default:
		v = total + section + digit
	}
	if hasFrac {
		scale := 0.1
		for _, r := range frac {
			d, ok := cnDigits[r]
			if !ok {
				return 0, false
			}
			v += d * scale
			scale /= 10
		}
	}
	return v, true
}

// followsTail reports whether rest, the text after "N块M", makes M the
// start of a word of its own: a digit, a unit or a classifier.
func followsTail(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return isDigit(rest[0]) || strings.ContainsRune("件个份瓶支盒套台双条袋罐只款色种次位人天小月年分号码折元块毛角", r)
}

// asciiLower lower-cases ASCII letters only, so that byte offsets into
// the result are offsets into s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// toFen is an amount in yuan as whole fen. An amount past maxFen is no
// price; it saturates there rather than wrap around to one.
func toFen(v float64) int64 {
	if math.Abs(v) >= maxFen/100 || math.IsNaN(v) {
		return maxFen
	}
	return int64(math.Round(v * 100))
}

// maxFen is the amount toFen saturates at: 10^15 yuan in fen, which no
// amount of a room reaches and int64 holds.
const maxFen = 1e17

// yuan writes fen as the room speaks it: "199", "179.1", "9.9".
func yuan(fen int64) string {
	if fen%100 == 0 {
		return strconv.FormatInt(fen/100, 10)
	}
	return strconv.FormatFloat(float64(fen)/100, 'f', -1, 64)
}

// unicodeDigits counts the decimal digits of s, of any script.
func unicodeDigits(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsDigit(r) || strings.ContainsRune(cnDigitRunes, r) || r == '两' {
			n++
		}
	}
	return n
}
