// Command grounding is an example after_response hook that keeps the
// avatar from saying anything the turn did not back: every amount, stock
// level, size, date, duration, item name, link number, yes/no fact and
// action a reply states must be among this turn's tool results, the
// stream context the model saw and the stream's catalog. Tool-call
// markup, reasoning tags, JSON, template placeholders, item ids and broken
// text (bytes that are not UTF-8, U+FFFD, control characters) never reach
// viewers, and the reply is in the viewer's language.
//
// An unbacked reply goes back to the model (retry) with feedback that
// names each unbacked statement and lists the backed facts; on the
// turn's last attempt the hook rewrites the reply into one that states
// only backed facts for what the viewer asked, or says honestly that the
// host will check. A backed reply that leaves out the attribute the
// viewer asked for, which a result states, goes back with feedback naming
// it while attempts remain; being true, it is never rewritten. The logic is plain Go over the types of this file,
// tested natively; main_wasm.go binds it to the host (issue #18).
package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

// Turn is what the check reads: the reply and everything that backs it.
type Turn struct {
	// Reply is the model's reply, the text that would go on air.
	Reply string
	// Message is the viewer's message as the model read it (several
	// questions one per line, or a host strategy's instruction).
	Message string
	// Viewer is the name of the viewer who asked, when one did.
	Viewer string
	// Lang is the language the reply must be in, "zh" or "en"; empty
	// skips the language check.
	Lang string
	// Calls are the turn's tool calls in order, with their results.
	Calls []Call
	// Context is the stream context the model saw.
	Context []ContextItem
	// Items are the catalog items the turn is about: those the reply or
	// the message names and those the calls looked up.
	Items []Item
	// Now is the stream's local time, which 今天/明天 and today/tomorrow
	// in a reply refer to; zero when the hook has no clock, and such
	// claims are then unbacked.
	Now time.Time
	// Attempt is the reply's attempt (1 for the first); Attempts the most
	// the turn allows. On the last attempt an unbacked reply is rewritten.
	Attempt, Attempts int
	// Config switches checks off and sets thresholds.
	Config Config

	// parsed are Calls with their JSON parsed (see parsedCalls).
	parsed []parsedCall
}

// Call is one tool call of the turn.
type Call struct {
	// Name is the harness's name for the tool; Export the plugin export
	// that ran it ("product_lookup", "check_stock", "send_link", …),
	// which stays the same when a harness renames the tool.
	Name, Export string
	// Arguments and Result are JSON; a failed call's Result is
	// {"error": "…"}.
	Arguments, Result []byte
}

// ContextItem is one item of the stream context the model saw.
type ContextItem struct {
	Title, Text string
}

// Item is a catalog item as far as naming it goes.
type Item struct {
	ID, Name string
	Aliases  []string
	// Link is the item's position in the shop's cart ("3号链接"), 0 when
	// the catalog does not say.
	Link int
}

// Kind is a kind of statement the check finds.
type Kind string

// The kinds of statements, which are also the names Config.Skip takes.
const (
	KindAmount   Kind = "amount"   // prices, coupons, totals, minimum spends
	KindDiscount Kind = "discount" // percentages off, N折
	KindStock    Kind = "stock"    // stock counts and states
	KindSize     Kind = "size"     // sizes and size advice
	KindDate     Kind = "date"     // dates and times of day
	KindDuration Kind = "duration" // dispatch, return windows, battery life
	KindNumber   Kind = "number"   // any other number: specs, quantities
	KindItem     Kind = "item"     // item names
	KindLink     Kind = "link"     // link numbers
	KindFact     Kind = "fact"     // yes/no facts: material, allergens, colours, features, shipping, returns
	KindAction   Kind = "action"   // claims that something was done: link pinned, coupon sent
	KindResidue  Kind = "residue"  // markup, JSON, placeholders, ids, field names, URLs
	KindLanguage Kind = "language" // the reply's language
	// KindAnswer is no statement but one missing: the fact the viewer
	// asked for, which a result states and the reply leaves out.
	KindAnswer Kind = "answer"
)

// kinds lists every kind in the order feedback reports them.
var kinds = []Kind{KindResidue, KindLanguage, KindAmount, KindDiscount, KindStock, KindSize, KindDate, KindDuration,
	KindNumber, KindItem, KindLink, KindFact, KindAction, KindAnswer}

// Finding is one statement of a reply that nothing backs.
type Finding struct {
	Kind Kind
	// Phrase is the statement as the reply wrote it.
	Phrase string
	// Why says what the results give instead.
	Why string
	at  int
}

// String writes the finding the way feedback shows it.
func (f Finding) String() string {
	return fmt.Sprintf("「%s」: %s", f.Phrase, f.Why)
}

// Config is the hook's configuration.
type Config struct {
	// Skip lists kinds of statements not to check.
	Skip []Kind
	// LowStock is the stock under which "only a few left" is honest and
	// from which "plenty in stock" is (default 20, the demo harness's
	// product_facts rule).
	LowStock int
}

// defaultLowStock is LowStock when the config does not set it.
const defaultLowStock = 20

// ParseConfig reads the hook's config JSON: {"skip": ["language"],
// "low_stock": 20}, every field optional; empty means the defaults.
func ParseConfig(raw []byte) (Config, error) {
	c := Config{LowStock: defaultLowStock}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return c, nil
	}
	r := jsonx.NewReader(raw)
	err := r.Object(func(k string) error {
		switch k {
		case "skip":
			return r.Array(func() error {
				s, err := r.String()
				if err != nil {
					return err
				}
				if !slices.Contains(kinds, Kind(s)) {
					return fmt.Errorf("skip: unknown kind %q (want one of %s)", s, kindList())
				}
				c.Skip = append(c.Skip, Kind(s))
				return nil
			})
		case "low_stock":
			n, err := r.Int()
			if err != nil {
				return fmt.Errorf("low_stock: %w", err)
			}
			if n < 1 || n > 1_000_000 {
				return fmt.Errorf("low_stock: %d is not from 1 to 1000000", n)
			}
			c.LowStock = int(n)
			return nil
		}
		return fmt.Errorf("unknown field %q (want skip or low_stock)", k)
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return Config{}, fmt.Errorf("grounding config: %w", err)
	}
	return c, nil
}

func kindList() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (c Config) checks(k Kind) bool { return !slices.Contains(c.Skip, k) }

func (c Config) lowStock() int {
	if c.LowStock <= 0 {
		return defaultLowStock
	}
	return c.LowStock
}

// Check returns the statements of t.Reply that nothing of the turn backs,
// in the order the reply makes them.
func Check(t Turn) []Finding {
	_, findings := analyze(&t)
	return findings
}

// Decide is the hook's decision: allow a backed reply; send an unbacked
// one back with feedback while attempts remain; on the last attempt
// rewrite it into a reply of backed facts only.
func Decide(t Turn) sdk.Decision {
	tf, findings := analyze(&t)
	if strings.TrimSpace(t.Reply) == "" {
		// The runtime asks about an empty reply on the last attempt: the
		// results may still answer the viewer.
		if t.Attempt < t.Attempts {
			return sdk.Retry("Your reply was empty. Answer the viewer.")
		}
		return sdk.Rewrite(fallback(&t, tf))
	}
	if len(findings) == 0 {
		// A backed reply that leaves out the fact asked for goes back
		// while attempts remain; on the last the fact is said before it.
		if !t.Config.checks(KindAnswer) {
			return sdk.Allow()
		}
		if export, fb, ok := missingCall(&t, tf); ok && t.Attempt < t.Attempts {
			return sdk.RetryCall(fb, export)
		}
		if unasked(&t, tf) {
			if t.Attempt < t.Attempts {
				return sdk.Retry(unaskedFeedback)
			}
			return sdk.Rewrite(speaker{zh: replyLang(&t, tf)}.thanks())
		}
		m, ok := unanswered(&t, tf)
		switch {
		case !ok:
			return sdk.Allow()
		case t.Attempt < t.Attempts:
			return sdk.Retry(answerFeedback(&t, tf, m))
		}
		if out, ok := answered(&t, tf, m); ok {
			return sdk.Rewrite(out)
		}
		return sdk.Allow()
	}
	if t.Attempt < t.Attempts {
		if t.Config.checks(KindAnswer) && asksNothing(&t, tf) {
			// The backed facts the feedback lists would invite a price.
			return sdk.Retry(unaskedFeedback)
		}
		if export, _, ok := missingCall(&t, tf); ok && t.Config.checks(KindAnswer) {
			// The unbacked claim is often the fact the missing call
			// would give ("有货" with no stock check).
			return sdk.RetryCall(feedback(&t, tf, findings), export)
		}
		return sdk.Retry(feedback(&t, tf, findings))
	}
	return sdk.Rewrite(fallback(&t, tf))
}

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
