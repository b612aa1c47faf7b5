// Command compliance is an example after_response hook that keeps the
// avatar within advertising law and the facts of the catalog:
//
//   - absolute claims ("最好", "第一", "best", "#1") are softened in place
//     (rewrite), since the fix needs no new facts;
//   - banned claims (medical efficacy, "无副作用", "guaranteed cure", and
//     the merchant's own list) and prices or discounts that disagree with
//     the catalog send the reply back to the model (retry) with feedback
//     that says what is wrong and what is right.
package main

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

// Config is the hook's configuration.
type Config struct {
	// Banned are extra phrases the merchant forbids.
	Banned []string
	// Soften rewrites absolute claims in place; off, they cause a retry.
	Soften bool
}

// ParseConfig reads the hook's config JSON; empty means the defaults.
func ParseConfig(raw []byte) (Config, error) {
	c := Config{Soften: true}
	if len(raw) == 0 {
		return c, nil
	}
	r := jsonx.NewReader(raw)
	err := r.Object(func(k string) error {
		switch k {
		case "banned":
			return r.Array(func() error {
				s, err := r.String()
				if s = strings.TrimSpace(s); s != "" {
					c.Banned = append(c.Banned, s)
				}
				return err
			})
		case "soften":
			var err error
			c.Soften, err = r.Bool()
			return err
		}
		return r.Skip()
	})
	return c, err
}

// absolute maps absolute claims to the softer wording used on rewrite.
// Longer phrases come first so that "全网第一" wins over "第一".
var absolute = [][2]string{
	{"全网最低价", "很实惠的价格"}, {"史上最低", "很低"}, {"全网第一", "很受欢迎"}, {"独一无二", "很有特色"},
	{"最便宜", "很实惠"}, {"最好", "很好"}, {"最佳", "很好"}, {"最强", "很强"}, {"第一", "领先"},
	{"顶级", "高品质"}, {"国家级", "专业"}, {"万能", "多用途"}, {"绝对", "非常"}, {"永久", "持久"},
	{"lowest price ever", "a great price"}, {"number one", "a favourite"}, {"the best", "a great choice"},
	{"cheapest", "very affordable"}, {"#1", "a favourite"}, {"best", "great"}, {"perfect", "excellent"},
}

// banned are claims no rewrite can save: the model must say something else.
var banned = []string{
	"治愈", "根治", "治疗", "抗癌", "药到病除", "无副作用", "医用级", "立即见效", "100%有效", "永不反弹",
	"cure", "cures", "heals", "no side effects", "clinically proven", "guaranteed results", "100% effective",
}

// Finding is one problem in a reply.
type Finding struct {
	Kind   string // absolute, banned, price or discount
	Phrase string
	Detail string
}

var (
	pricePatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?:¥|￥|RMB\s?|CNY\s?)(\d+(?:\.\d+)?)`),
		regexp.MustCompile(`(\d+(?:\.\d+)?)\s?(?:元|块钱|块)`),
	}
	zheRE     = regexp.MustCompile(`([0-9一二三四五六七八九]{1,2}(?:\.[0-9])?)\s?折`)
	percentRE = regexp.MustCompile(`(\d{1,2})\s?%\s?off`)
)

// Check finds the problems of text, a reply about the given products
// (those the text mentions, with the positions where it mentions them).
func Check(text string, mentions []Mention, cfg Config) []Finding {
	var out []Finding
	lower := strings.ToLower(text)
	for _, b := range append(slices.Clone(banned), cfg.Banned...) {
		if containsPhrase(lower, strings.ToLower(b)) {
			out = append(out, Finding{Kind: "banned", Phrase: b, Detail: fmt.Sprintf("「%s」 is a forbidden claim", b)})
		}
	}
	seen := map[string]bool{}
	for _, a := range absolute {
		if containsPhrase(lower, a[0]) && !covered(seen, a[0]) {
			seen[a[0]] = true
			out = append(out, Finding{Kind: "absolute", Phrase: a[0], Detail: fmt.Sprintf("「%s」 is an absolute claim", a[0])})
		}
	}
	out = append(out, checkPrices(text, mentions)...)
	return out
}

// covered reports whether phrase is part of a longer phrase already found.
func covered(seen map[string]bool, phrase string) bool {
	for s := range seen {
		if strings.Contains(s, phrase) {
			return true
		}
	}
	return false
}

// containsPhrase matches CJK phrases anywhere and Latin phrases only on
// word boundaries ("best" is not in "bestseller").
func containsPhrase(text, phrase string) bool {
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return false
		}
		i += from
		if onBoundary(text, i, i+len(phrase), phrase) {
			return true
		}
		from = i + 1
	}
	return false
}

// onBoundary reports whether phrase at text[i:end] starts and ends on
// word boundaries where the phrase itself starts or ends with a letter.
func onBoundary(text string, i, end int, phrase string) bool {
	if phrase == "" {
		return false
	}
	if isLatin(phrase[0]) && isWordByte(text, i-1) {
		return false
	}
	return !(isLatin(phrase[len(phrase)-1]) && isWordByte(text, end))
}

func isLatin(c byte) bool { return c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) }

func isWordByte(s string, i int) bool {
	return i >= 0 && i < len(s) && isLatin(s[i])
}

// Mention is a product the reply names, at byte offset At.
type Mention struct {
	Product sdk.Product
	At      int
	// Prices are other prices the product legitimately has now:
	// promotion prices and prices after a coupon.
	Prices []float64
	// Offs are the percentages off the list price it legitimately has:
	// its own discount, promotion percentages, promotion prices.
	Offs []float64
}

// FindMentions locates the products of the catalog answer in text.
func FindMentions(text string, products []sdk.Product) []Mention {
	lower := strings.ToLower(text)
	var out []Mention
	for _, p := range products {
		at := -1
		for _, n := range p.Names() {
			if n = strings.ToLower(strings.TrimSpace(n)); n == "" {
				continue
			}
			if i := strings.Index(lower, n); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at >= 0 {
			out = append(out, Mention{Product: p, At: at})
		}
	}
	slices.SortFunc(out, func(a, b Mention) int { return a.At - b.At })
	return out
}

// AddOffers records the legitimate reduced prices and discounts of each
// mention at time now: promotions and coupons running now.
func AddOffers(mentions []Mention, coupons []sdk.Coupon, promotions []sdk.Promotion, now time.Time) {
	running := func(start, end time.Time) bool {
		return (start.IsZero() || !now.Before(start)) && (end.IsZero() || now.Before(end))
	}
	for i := range mentions {
		m := &mentions[i]
		p := m.Product
		off := func(price float64) {
			if p.ListPrice > 0 {
				m.Offs = append(m.Offs, 100*(1-price/p.ListPrice))
			}
		}
		off(p.Price)
		for _, v := range p.Variants {
			if v.Price != nil {
				m.Prices = append(m.Prices, *v.Price)
				off(*v.Price)
			}
		}
		for _, pr := range promotions {
			if !running(pr.Starts, pr.Ends) || (len(pr.Products) > 0 && !slices.Contains(pr.Products, p.ID)) {
				continue
			}
			if pr.Price > 0 {
				// A multi-buy or bundle price is what the items cost
				// together: a price a reply may name, not a discount.
				m.Prices = append(m.Prices, pr.Price)
				if pr.Kind == sdk.PromoPrice {
					off(pr.Price)
				}
			}
			if pr.Percent > 0 {
				m.Prices = append(m.Prices, round2(p.Price*(1-pr.Percent/100)))
				m.Offs = append(m.Offs, pr.Percent)
			}
			if pr.NthPercent > 0 {
				m.Prices = append(m.Prices, round2(p.Price*(1-pr.NthPercent/100)))
			}
		}
		for _, c := range coupons {
			if (c.Remaining != nil && *c.Remaining <= 0) || !running(c.Starts, c.Ends) || (len(c.Products) > 0 && !slices.Contains(c.Products, p.ID)) {
				continue
			}
			m.Prices = append(m.Prices, round2(p.Price-c.Amount-p.Price*c.Percent/100))
		}
	}
}

// checkPrices compares every price and discount in text with the product
// mentioned closest before it (or the only product mentioned).
func checkPrices(text string, mentions []Mention) []Finding {
	if len(mentions) == 0 {
		return nil
	}
	owner := func(at int) *Mention {
		var best *Mention
		for i := range mentions {
			if mentions[i].At <= at {
				best = &mentions[i]
			}
		}
		if best == nil && len(mentions) == 1 {
			best = &mentions[0]
		}
		return best
	}
	var out []Finding
	for _, re := range pricePatterns {
		for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
			v, err := strconv.ParseFloat(text[loc[2]:loc[3]], 64)
			m := owner(loc[0])
			if err != nil || m == nil {
				continue
			}
			p := m.Product
			ok := near(v, p.Price) || near(v, p.ListPrice)
			for _, x := range m.Prices {
				ok = ok || near(v, x)
			}
			if !ok {
				out = append(out, Finding{Kind: "price", Phrase: text[loc[0]:loc[1]],
					Detail: fmt.Sprintf("%s costs %s, not %s", p.Name, money(p.Price), money(v))})
			}
		}
	}
	for _, loc := range zheRE.FindAllStringSubmatchIndex(text, -1) {
		m := owner(loc[0])
		tenths, ok := zheValue(text[loc[2]:loc[3]])
		if m == nil || !ok || m.Product.ListPrice <= 0 {
			continue
		}
		if !offMatches(m, 100-10*tenths, 5) {
			actual := 10 * m.Product.Price / m.Product.ListPrice
			out = append(out, Finding{Kind: "discount", Phrase: text[loc[0]:loc[1]],
				Detail: fmt.Sprintf("%s is %.1f折 of its list price %s, not %s", m.Product.Name, actual, money(m.Product.ListPrice), text[loc[0]:loc[1]])})
		}
	}
	for _, loc := range percentRE.FindAllStringSubmatchIndex(strings.ToLower(text), -1) {
		m := owner(loc[0])
		pct, err := strconv.ParseFloat(text[loc[2]:loc[3]], 64)
		if m == nil || err != nil || m.Product.ListPrice <= 0 {
			continue
		}
		if !offMatches(m, pct, 2) {
			actual := 100 * (1 - m.Product.Price/m.Product.ListPrice)
			out = append(out, Finding{Kind: "discount", Phrase: text[loc[0]:loc[1]],
				Detail: fmt.Sprintf("%s is %.0f%% off its list price, not %.0f%%", m.Product.Name, actual, pct)})
		}
	}
	return out
}

// offMatches reports whether a claimed percentage off is within
// tolerance points of one the product has.
func offMatches(m *Mention, claimed, tolerance float64) bool {
	for _, o := range m.Offs {
		if math.Abs(o-claimed) <= tolerance {
			return true
		}
	}
	return false
}

// zheValue reads the number of "N折": "5", "8.5", "五", "八五" (85 → 8.5).
func zheValue(s string) (float64, bool) {
	const digits = "零一二三四五六七八九"
	var ds []float64
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			ds = append(ds, float64(r-'0'))
		case r == '.':
			ds = append(ds, -1)
		default:
			i := strings.IndexRune(digits, r)
			if i < 0 {
				return 0, false
			}
			ds = append(ds, float64(i/3)) // each CJK digit is 3 bytes
		}
	}
	switch {
	case len(ds) == 1 && ds[0] >= 0:
		return ds[0], true
	case len(ds) == 2 && ds[0] >= 0 && ds[1] >= 0:
		return ds[0] + ds[1]/10, true
	case len(ds) == 3 && ds[1] == -1:
		return ds[0] + ds[2]/10, true
	}
	return 0, false
}

func near(a, b float64) bool { return b > 0 && math.Abs(a-b) < 0.01 }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func money(f float64) string {
	return "¥" + strconv.FormatFloat(f, 'f', -1, 64)
}

// Decide turns findings into a decision: allow when clean, rewrite when
// only absolute claims were found and soften is on, retry otherwise.
func Decide(text string, findings []Finding, cfg Config) sdk.Decision {
	if len(findings) == 0 {
		return sdk.Allow()
	}
	onlyAbsolute := true
	var details []string
	for _, f := range findings {
		onlyAbsolute = onlyAbsolute && f.Kind == "absolute"
		details = append(details, f.Detail)
	}
	if onlyAbsolute && cfg.Soften {
		return sdk.Rewrite(Soften(text))
	}
	return sdk.Retry("Fix these before answering again: " + strings.Join(details, "; ") + ".")
}

// Soften replaces absolute claims with the softer wording.
func Soften(text string) string {
	for _, a := range absolute {
		text = replacePhrase(text, a[0], a[1])
	}
	return text
}

// replacePhrase replaces phrase case-insensitively on the same
// boundaries containsPhrase uses.
func replacePhrase(text, phrase, with string) string {
	var b strings.Builder
	lower := strings.ToLower(text)
	last := 0
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], phrase)
		if i < 0 {
			break
		}
		i += from
		end := i + len(phrase)
		if !onBoundary(lower, i, end, phrase) {
			from = i + 1
			continue
		}
		b.WriteString(text[last:i])
		b.WriteString(with)
		last, from = end, end
	}
	b.WriteString(text[last:])
	return b.String()
}

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
