package hsa

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Names are generated, not drawn from a list: words of a name are swapped
// for synonyms from a word bank, abbreviated, given affixes and written in
// a random style, or replaced by coined words (training pool) or random
// opaque ids (held out). The space is open, so a model cannot memorise the
// renamed harness; it has to read it.

// synonymGroup is one concept with the words naming it in each bank. The
// training and held-out banks are disjoint, so held-out names use words
// the model never saw in a training variant.
type synonymGroup struct {
	train, heldout []string
}

// wordBank selects one side of the synonym groups.
type wordBank int

const (
	trainWords wordBank = iota
	heldoutWords
)

// synonymGroups returns the synonym bank for the words tool, parameter and
// skill names of a live-commerce harness are made of.
func synonymGroups() []synonymGroup {
	return []synonymGroup{
		{[]string{"get", "fetch", "retrieve", "lookup", "read"}, []string{"obtain", "pull", "acquire", "grab"}},
		{[]string{"search", "find", "query"}, []string{"seek", "locate", "scan"}},
		{[]string{"list", "enumerate", "browse"}, []string{"catalog", "index", "roster"}},
		{[]string{"check", "verify", "inspect"}, []string{"probe", "validate", "examine"}},
		{[]string{"create", "add", "make", "new"}, []string{"spawn", "issue", "compose"}},
		{[]string{"update", "set", "modify", "change"}, []string{"amend", "patch", "revise"}},
		{[]string{"delete", "remove", "drop"}, []string{"erase", "purge", "discard"}},
		{[]string{"send", "push", "post"}, []string{"dispatch", "emit", "deliver"}},
		{[]string{"apply", "use", "redeem"}, []string{"claim", "activate", "consume"}},
		{[]string{"show", "display", "present"}, []string{"reveal", "render", "surface"}},
		{[]string{"product", "item", "goods"}, []string{"merch", "article", "offering"}},
		{[]string{"price", "cost", "pricing"}, []string{"tariff", "fee", "rate"}},
		{[]string{"coupon", "voucher", "discount"}, []string{"rebate", "promo", "markdown"}},
		{[]string{"stock", "inventory", "availability"}, []string{"supply", "reserve", "holdings"}},
		{[]string{"order", "purchase", "buy"}, []string{"acquisition", "checkout", "procure"}},
		{[]string{"cart", "basket", "bag"}, []string{"trolley", "tote", "carrier"}},
		{[]string{"user", "viewer", "customer"}, []string{"patron", "audience", "shopper"}},
		{[]string{"id", "key", "code"}, []string{"ref", "handle", "token"}},
		{[]string{"info", "detail", "details"}, []string{"facts", "profile", "particulars"}},
		{[]string{"status", "state", "progress"}, []string{"standing", "phase", "condition"}},
		{[]string{"shipping", "delivery", "logistics"}, []string{"freight", "dispatching", "transit"}},
		{[]string{"size", "dimension", "fit"}, []string{"measure", "gauge", "proportion"}},
		{[]string{"color", "colour", "shade"}, []string{"hue", "tint", "pigment"}},
		{[]string{"review", "rating", "feedback"}, []string{"testimonial", "critique", "score"}},
		{[]string{"reply", "answer", "response"}, []string{"rejoinder", "retort", "output"}},
		{[]string{"rule", "policy", "guideline"}, []string{"norm", "canon", "principle"}},
		{[]string{"guide", "tips", "howto"}, []string{"playbook", "manual", "primer"}},
		{[]string{"faq", "question", "ask"}, []string{"inquiry", "enquiry", "doubt"}},
		{[]string{"promotion", "campaign", "event"}, []string{"drive", "blitz", "occasion"}},
		{[]string{"live", "stream", "broadcast"}, []string{"onair", "session", "showtime"}},
		{[]string{"room", "channel", "studio"}, []string{"venue", "hall", "space"}},
		{[]string{"host", "anchor", "streamer"}, []string{"presenter", "emcee", "announcer"}},
		{[]string{"message", "comment", "chat"}, []string{"remark", "note", "memo"}},
		{[]string{"time", "date", "schedule"}, []string{"moment", "slot", "timing"}},
		{[]string{"count", "number", "total"}, []string{"tally", "sum", "figure"}},
		{[]string{"limit", "max", "cap"}, []string{"ceiling", "bound", "quota"}},
		{[]string{"category", "type", "kind"}, []string{"class", "genre", "family"}},
		{[]string{"brand", "label", "maker"}, []string{"marque", "house", "producer"}},
		{[]string{"name", "title"}, []string{"designation", "caption"}},
		{[]string{"text", "content", "body"}, []string{"copy", "wording", "prose"}},
		{[]string{"keyword", "term", "phrase"}, []string{"tag", "cue", "hashtag"}},
		{[]string{"amount", "quantity", "qty"}, []string{"volume", "units", "magnitude"}},
		{[]string{"page", "offset", "cursor"}, []string{"window", "slice", "batch"}},
		{[]string{"refund", "return", "exchange"}, []string{"reimburse", "payback", "swap"}},
		{[]string{"gift", "bonus", "freebie"}, []string{"giveaway", "perk", "reward"}},
		{[]string{"flash", "sale", "deal"}, []string{"bargain", "special", "steal"}},
		{[]string{"recommend", "suggest", "advise"}, []string{"propose", "nominate", "endorse"}},
		{[]string{"compare", "contrast", "versus"}, []string{"weigh", "benchmark", "match"}},
		{[]string{"style", "tone", "voice"}, []string{"manner", "register", "flavor"}},
		{[]string{"beauty", "makeup", "cosmetics"}, []string{"skincare", "grooming", "glam"}},
		{[]string{"material", "fabric", "ingredient"}, []string{"substance", "textile", "component"}},
		{[]string{"compliance", "safety", "audit"}, []string{"conformity", "screening", "vetting"}},
		{[]string{"greeting", "welcome", "hello"}, []string{"salute", "opener", "intro"}},
		{[]string{"script", "pitch", "talk"}, []string{"spiel", "patter", "narration"}},
	}
}

// bankWords returns the words of bank b for the concept w belongs to
// (w itself excluded), or nil when the bank does not know w.
func bankWords(groups []synonymGroup, b wordBank, w string) []string {
	for _, g := range groups {
		if !slices.Contains(g.train, w) && !slices.Contains(g.heldout, w) {
			continue
		}
		words := g.train
		if b == heldoutWords {
			words = g.heldout
		}
		return slices.DeleteFunc(slices.Clone(words), func(s string) bool { return s == w })
	}
	return nil
}

// affixes returns prefixes and suffixes that keep a name's meaning.
func affixes(b wordBank) (prefixes, suffixes []string) {
	if b == heldoutWords {
		return []string{"svc", "api", "op", "x"}, []string{"op", "svc", "call", "x"}
	}
	return []string{"live", "shop", "do", "my"}, []string{"tool", "v2", "now", "fn"}
}

// nameStyle is how the words of a name are joined.
type nameStyle int

const (
	styleSnake nameStyle = iota
	styleCamel
	stylePascal
	styleKebab
	numStyles
)

// splitWords splits an identifier into lower-case words at separators,
// case humps and letter/digit boundaries: "getProduct_price2" → get,
// product, price, 2.
func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
		case i > 0 && unicode.IsDigit(r) != unicode.IsDigit(rs[i-1]) && (unicode.IsLetter(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

func joinWords(words []string, style nameStyle) string {
	switch style {
	case styleCamel, stylePascal:
		var b strings.Builder
		for i, w := range words {
			if i == 0 && style == styleCamel {
				b.WriteString(w)
				continue
			}
			b.WriteString(upperFirst(w))
		}
		return b.String()
	case styleKebab:
		return strings.Join(words, "-")
	}
	return strings.Join(words, "_")
}

func upperFirst(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// styleOf guesses the style a name is written in, so new parameters
// can match their siblings.
func styleOf(name string) nameStyle {
	switch {
	case strings.Contains(name, "-"):
		return styleKebab
	case strings.Contains(name, "_"):
		return styleSnake
	case name != "" && unicode.IsUpper([]rune(name)[0]):
		return stylePascal
	case strings.IndexFunc(name, unicode.IsUpper) > 0:
		return styleCamel
	}
	return styleSnake
}

// abbreviate shortens a word by truncation or by dropping inner vowels,
// an open way to make names no bank lists ("inventory" → "inv", "invntry").
func abbreviate(rng *rand.Rand, w string) string {
	if len(w) < 5 {
		return w
	}
	if rng.IntN(2) == 0 {
		return w[:3+rng.IntN(2)]
	}
	var b strings.Builder
	for i, r := range w {
		if i == 0 || !strings.ContainsRune("aeiou", r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// naturalName rewrites name with synonyms from bank, abbreviations and
// affixes, written in style.
func naturalName(rng *rand.Rand, name string, bank wordBank, style nameStyle) string {
	groups := synonymGroups()
	words := splitWords(name)
	if len(words) == 0 {
		words = []string{"item"}
	}
	out := make([]string, 0, len(words)+1)
	for _, w := range words {
		syn := bankWords(groups, bank, w)
		switch {
		case len(syn) > 0 && rng.Float64() < 0.7:
			out = append(out, syn[rng.IntN(len(syn))])
		case rng.Float64() < 0.2:
			out = append(out, abbreviate(rng, w))
		default:
			out = append(out, w)
		}
	}
	pre, suf := affixes(bank)
	switch rng.IntN(5) {
	case 0:
		out = append([]string{pre[rng.IntN(len(pre))]}, out...)
	case 1:
		out = append(out, suf[rng.IntN(len(suf))])
	}
	return joinWords(out, style)
}

// coinedName returns a name of one or two made-up words (a vowel-led
// syllable chain, sometimes with a two-digit number) written in style —
// the training pool's open vocabulary. It names nothing a model could
// recall, so a variant under it can only be read from the descriptions;
// its shape (joined words, a leading vowel, a trailing number) differs
// from the held-out pool's opaque ids, which stay unseen in training.
func coinedName(rng *rand.Rand, style nameStyle) string {
	const (
		cons   = "bdfgklmnprstvwyz"
		vowels = "aeiou"
	)
	word := func() string {
		var b strings.Builder
		b.WriteByte(vowels[rng.IntN(len(vowels))])
		for range 1 + rng.IntN(2) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
		}
		return b.String()
	}
	words := []string{word()}
	if rng.IntN(2) == 0 {
		words = append(words, word())
	}
	if rng.IntN(4) == 0 {
		words = append(words, strconv.Itoa(10+rng.IntN(90)))
	}
	return joinWords(words, style)
}

// opaqueName returns a random identifier that carries no meaning, in one
// of several shapes: a short prefix and random base-36 characters, a
// pronounceable pseudo-word, or a letter and hex digits.
func opaqueName(rng *rand.Rand) string {
	const (
		letters = "abcdefghijklmnopqrstuvwxyz"
		base36  = "abcdefghijklmnopqrstuvwxyz0123456789"
		hex     = "0123456789abcdef"
		cons    = "bcdfghjklmnprstvz"
		vowels  = "aeiou"
	)
	pick := func(set string) byte { return set[rng.IntN(len(set))] }
	var b strings.Builder
	switch rng.IntN(3) {
	case 0:
		for range 1 + rng.IntN(2) {
			b.WriteByte(pick(letters))
		}
		b.WriteByte('_')
		for range 4 + rng.IntN(5) {
			b.WriteByte(pick(base36))
		}
	case 1:
		for range 2 + rng.IntN(3) {
			b.WriteByte(pick(cons))
			b.WriteByte(pick(vowels))
			if rng.IntN(3) == 0 {
				b.WriteByte(pick(cons))
			}
		}
	default:
		b.WriteByte(pick(letters))
		for range 6 + rng.IntN(5) {
			b.WriteByte(pick(hex))
		}
	}
	return b.String()
}

// uniqueName calls gen until it returns a name that differs from old, is
// not taken and fits in 64 bytes (tool names must), falling back to an
// opaque id with a counter, which cannot collide forever.
func uniqueName(rng *rand.Rand, old string, taken map[string]bool, gen func() string) string {
	for range 16 {
		n := gen()
		if n != "" && n != old && !taken[n] && len(n) <= 64 {
			return n
		}
	}
	for i := 0; ; i++ {
		n := opaqueName(rng)
		if i > 0 {
			n += "_" + strings.Repeat("x", i%8) + string(rune('a'+i%26))
		}
		if n != old && !taken[n] && len(n) <= 64 {
			return n
		}
	}
}
