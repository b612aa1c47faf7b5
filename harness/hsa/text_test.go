package hsa

import (
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
)

func TestParaphrase(t *testing.T) {
	p := newParaphraser()
	cases := []struct {
		in      string
		changes bool
		keeps   []string
	}{
		{"Do not promise delivery dates.", true, []string{"delivery dates."}},
		{"You must mention the price of a product.", true, nil},
		{"务必说明商品的价格，不要夸大。", true, nil},
		{"Call `get_price` with {item_id} first.", false, []string{"`get_price`", "{item_id}"}},
		{"要不要下单由观众决定", true, []string{"要不要"}},
		{"不得不说", false, []string{"不得不说"}},
		{"申请退款", false, []string{"申请"}},
		{"Mention coupons if any, as if it matters.", true, []string{"if any", "as if"}},
		{"You must not lie; it is not always easy.", false, []string{"You must not", "not always"}},
	}
	for _, c := range cases {
		changed := false
		for seed := range int64(20) {
			out := p.paraphrase(newRand(seed), c.in, 1)
			if out != c.in {
				changed = true
			}
			for _, k := range c.keeps {
				if !strings.Contains(out, k) {
					t.Errorf("paraphrase(%q) = %q lost %q", c.in, out, k)
				}
			}
		}
		if changed != c.changes {
			t.Errorf("paraphrase(%q): changed = %v, want %v", c.in, changed, c.changes)
		}
	}
	if got := p.paraphrase(newRand(1), "Do not lie.", 1); !strings.HasPrefix(got, "Don't") && !strings.HasPrefix(got, "Never") {
		t.Errorf("capitalisation lost: %q", got)
	}
	// "a product" → "an item": the article follows the new word.
	for seed := range int64(10) {
		if got := p.paraphrase(newRand(seed), "Describe a product.", 1); strings.Contains(got, "a item") {
			t.Errorf("article not fixed: %q", got)
		}
	}
}

func TestNames(t *testing.T) {
	if got, want := splitWords("getProduct_price2-URLList"), []string{"get", "product", "price", "2", "url", "list"}; !reflect.DeepEqual(got, want) {
		t.Errorf("splitWords = %v, want %v", got, want)
	}
	words := []string{"get", "item", "price"}
	for style, want := range map[nameStyle]string{styleSnake: "get_item_price", styleCamel: "getItemPrice", stylePascal: "GetItemPrice", styleKebab: "get-item-price"} {
		if got := joinWords(words, style); got != want {
			t.Errorf("joinWords(%v) = %q, want %q", style, got, want)
		}
		if got := styleOf(want); got != style {
			t.Errorf("styleOf(%q) = %v, want %v", want, got, style)
		}
	}
	// Open generators: many seeds give many distinct names, all legal tool names.
	seen := map[string]bool{}
	rng := newRand(1)
	for range 500 {
		for _, n := range []string{naturalName(rng, "get_product_price", trainWords, nameStyle(rng.IntN(4))), opaqueName(rng),
			coinedName(rng, nameStyle(rng.IntN(4)))} {
			if !isToolName(n) {
				t.Fatalf("generated name %q is not a legal tool name", n)
			}
			seen[n] = true
		}
	}
	if len(seen) < 600 {
		t.Errorf("only %d distinct names in 1500 draws; the generators are not open", len(seen))
	}
	// Each word names one concept, and the two banks are disjoint, so
	// held-out names use words no training variant showed.
	where := map[string]int{}
	for i, g := range synonymGroups() {
		for _, w := range append(append([]string{}, g.train...), g.heldout...) {
			if j, dup := where[w]; dup {
				t.Errorf("word %q is listed twice (groups %d and %d)", w, j, i)
			}
			where[w] = i
		}
	}
}

func isToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}

func TestRewriteMentions(t *testing.T) {
	r := [][2]string{{"get_price", "fetchCost"}, {"price", "sk_1"}}
	got := rewriteMentions("Call get_price, then `price`; the price is get_price_v2.", r)
	want := "Call fetchCost, then `sk_1`; the price is get_price_v2."
	if got != want {
		t.Errorf("rewriteMentions = %q, want %q", got, want)
	}
	if got := rewriteLimitMentions("Keep replies under 80 characters, 回复不超过80字, 80 items.", 80, 60); got != "Keep replies under 60 characters, 回复不超过60字, 80 items." {
		t.Errorf("rewriteLimitMentions = %q", got)
	}
}

func TestFitReply(t *testing.T) {
	cases := []struct {
		reply string
		limit int
		want  string
		ok    bool
	}{
		{"Short.", 10, "Short.", true},
		{"First one. Second one is long.", 15, "First one.", true},
		{"这款很好。价格也划算！快来买吧", 12, "这款很好。价格也划算！", true},
		{"No sentence end within the limit", 5, "", false},
	}
	for _, c := range cases {
		got, ok := FitReply(c.reply, c.limit)
		if got != c.want || ok != c.ok {
			t.Errorf("FitReply(%q, %d) = %q, %v; want %q, %v", c.reply, c.limit, got, ok, c.want, c.ok)
		}
		if ok && utf8.RuneCountInString(got) > c.limit {
			t.Errorf("FitReply(%q) = %q is over the limit", c.reply, got)
		}
	}
}

func TestApplyCorrection(t *testing.T) {
	h := genHarness(t, newRand(2))
	h.Pipeline.RequireReplySkill = true
	h.Pipeline.ReplyChars = harness.Limit{Value: 40, Min: 20, Max: 200}
	load := h.LoadSkillToolName()
	transcript := []harness.Message{
		{Role: harness.RoleUser, Content: "How much is it?"},
		{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{Name: load, Arguments: []byte(`{}`)}}},
		{Role: harness.RoleTool, Name: load, Content: "rules"},
		{Role: harness.RoleAssistant, Content: "It is 99 yuan today."},
	}
	for _, flaw := range []Flaw{FlawTooLong, FlawBannedClaim, FlawSkippedSkill} {
		c := Correction{Flaw: flaw, Seed: 5}
		out, err := ApplyCorrection(h, transcript, c)
		if err != nil {
			t.Fatalf("%s: %v", flaw, err)
		}
		if len(out) != len(transcript)+2 {
			t.Fatalf("%s: %d messages, want %d", flaw, len(out), len(transcript)+2)
		}
		at := 3
		if flaw == FlawSkippedSkill {
			at = 1
		}
		rejected, retry := out[at], out[at+1]
		if rejected.Role != harness.RoleAssistant || retry.Role != harness.RoleUser || !reflect.DeepEqual(out[len(out)-1], transcript[3]) {
			t.Fatalf("%s: wrong shape: %+v", flaw, out)
		}
		if rejected.Content == "" || !strings.Contains(h.RetryMessage("X"), "X") || retry.Content == h.RetryMessage("") {
			t.Errorf("%s: rejected %q, retry %q", flaw, rejected.Content, retry.Content)
		}
		switch flaw {
		case FlawTooLong:
			if utf8.RuneCountInString(rejected.Content) <= 40 {
				t.Errorf("too_long reply fits the limit: %q", rejected.Content)
			}
		case FlawBannedClaim:
			if rejected.Content == transcript[3].Content {
				t.Errorf("banned_claim reply has no claim")
			}
		}
		again, _ := ApplyCorrection(h, transcript, c)
		if !reflect.DeepEqual(out, again) {
			t.Errorf("%s: not reproducible", flaw)
		}
	}
	if _, err := ApplyCorrection(h, transcript[:2], Correction{Flaw: FlawTooLong}); err == nil {
		t.Error("no final reply: want an error")
	}
	noRetry := h.Clone()
	noRetry.Pipeline.Retries.Value = 0
	if _, err := ApplyCorrection(noRetry, transcript, Correction{Flaw: FlawTooLong}); err == nil {
		t.Error("no retry budget: want an error")
	}
	if _, err := ApplyCorrection(h, transcript, Correction{Flaw: "bogus"}); err == nil {
		t.Error("unknown flaw: want an error")
	}
}

// TestTrainingRenamesCoinNames holds the training pool's renames to the
// open vocabulary they exist for: most renamed skills, and many renamed
// tools, get coined names that no word bank lists, so that a model trained
// on them has to read what a skill or tool is for from its description.
func TestTrainingRenamesCoinNames(t *testing.T) {
	coined := regexp.MustCompile(`^[aeiou]([bdfgklmnprstvwyz][aeiou]){1,2}$`)
	isCoined := func(name string) bool {
		words := splitWords(name)
		for _, w := range words {
			if _, err := strconv.Atoi(w); err != nil && !coined.MatchString(w) {
				return false
			}
		}
		return len(words) > 0
	}
	for _, tc := range []struct {
		family   string
		names    func(*harness.Harness) []string
		minShare float64
	}{
		{"skill-rename", func(h *harness.Harness) []string {
			var out []string
			for _, s := range h.Skills {
				out = append(out, s.ID)
			}
			return out
		}, 0.4},
		{"tool-rename", func(h *harness.Harness) []string {
			var out []string
			for _, tl := range h.Tools {
				out = append(out, tl.Name)
			}
			return out
		}, 0.2},
	} {
		t.Run(tc.family, func(t *testing.T) {
			f, err := Lookup(tc.family)
			if err != nil {
				t.Fatal(err)
			}
			renamed, coinedCount := 0, 0
			for hi := range 20 {
				h := genHarness(t, newRand(int64(hi)))
				before := map[string]bool{}
				for _, n := range tc.names(h) {
					before[n] = true
				}
				nh, _, err := f.Apply(h, int64(hi), Options{})
				if errors.Is(err, ErrNotApplicable) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range tc.names(nh) {
					if before[n] {
						continue
					}
					renamed++
					if isCoined(n) {
						coinedCount++
					}
				}
			}
			if renamed == 0 {
				t.Fatal("nothing was renamed")
			}
			if share := float64(coinedCount) / float64(renamed); share < tc.minShare || coinedCount == renamed {
				t.Errorf("%d of %d renamed names are coined; want at least %.0f %%, and some from the word bank", coinedCount, renamed, 100*tc.minShare)
			}
		})
	}
}
