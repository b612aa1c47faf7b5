package sft

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
)

// TestCompactTokenizerShortensEpisodesAndSpellsIdentifiers trains a plain
// and a compact tokenizer on the same rendered trajectories: the compact
// one encodes them in far fewer tokens, decodes them back exactly,
// survives tokenizer.json, and has no phrase holding a tool name,
// parameter name or skill id — those stay spelled in BPE pieces, so a
// renamed tool is a new sequence to copy, not a memorised token.
func TestCompactTokenizerShortensEpisodesAndSpellsIdentifiers(t *testing.T) {
	cfg := smallData(true)
	cfg.Rooms = 12
	trajs, _, err := Build(context.Background(), demo(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	var tools []chat.Tool
	for _, tr := range trajs {
		text, err := Render(tr, chat.Qwen3)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text)
		_, ts := tr.ChatMessages()
		tools = append(tools, ts...)
	}
	ctx := context.Background()
	plain, err := TrainTokenizer(ctx, trajs, chat.Qwen3, 1024)
	if err != nil {
		t.Fatal(err)
	}
	protected := ToolIdentifiers(tools)
	compact, err := TrainCompactTokenizer(ctx, texts, protected, CompactConfig{VocabSize: 1024, Phrases: 400, MinCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The engine reads a call only from a <tool_call> that is text, as in
	// Qwen2's tokenizer.json; the turn markers stay special.
	for _, tok := range []*tokenizer.Tokenizer{plain, compact} {
		for _, a := range tok.AddedTokens()[:len(ScaffoldTokens())] {
			if want := strings.HasPrefix(a.Content, "<|"); a.Special != want {
				t.Errorf("%q: special %v, want %v", a.Content, a.Special, want)
			}
		}
	}
	phrases := compact.AddedTokens()[len(ScaffoldTokens()):]
	if len(phrases) < 50 {
		t.Fatalf("only %d phrases learned", len(phrases))
	}
	for _, p := range phrases {
		if p.Special || len(p.Content) < minPhraseBytes {
			t.Errorf("phrase %q: special %v", p.Content, p.Special)
		}
		for _, id := range protected {
			if indexWord(p.Content, id) >= 0 {
				t.Errorf("phrase %q holds the identifier %q", p.Content, id)
			}
		}
	}
	for _, want := range []string{"load_skill", "product_lookup", "item_id", "price_answer"} {
		if _, ok := compact.TokenID(want); ok {
			t.Errorf("%q is a single token", want)
		}
	}
	data, err := compact.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	reread, err := tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var nPlain, nCompact int
	for _, text := range texts {
		ids := compact.EncodeWithSpecial(text)
		if got := compact.Decode(ids); got != text {
			t.Fatalf("round trip changed the text:\n%q\n%q", text, got)
		}
		if again := reread.EncodeWithSpecial(text); len(again) != len(ids) {
			t.Fatalf("tokenizer.json encodes %d tokens, the trained tokenizer %d", len(again), len(ids))
		}
		nPlain += len(plain.EncodeWithSpecial(text))
		nCompact += len(ids)
	}
	if ratio := float64(nPlain) / float64(nCompact); ratio < 2.5 {
		t.Errorf("compact episodes are only %.2f× shorter (%d vs %d tokens)", ratio, nCompact, nPlain)
	}
}

// TestWarmupData: the retrieval warm-up's answers are copies of something
// in the question (an id, a price, a tool name), the general corpus holds
// prompts with replies, both are deterministic, and tool names come from an
// open space.
func TestWarmupData(t *testing.T) {
	r1, r2 := Retrieval(7, 200, 0), Retrieval(7, 200, 0)
	for i, tr := range r1 {
		q, a := tr.Messages[0].Content, tr.Messages[1].Content
		if a == "" || !strings.Contains(q, a) {
			t.Fatalf("%s: the answer %q is not copied from the question %q", tr.ID, a, q)
		}
		if r2[i].Messages[0].Content != q {
			t.Fatal("Retrieval is not deterministic")
		}
	}
	for _, tr := range General(3, 300) {
		if tr.Messages[0].Content == "" || tr.Messages[1].Content == "" {
			t.Fatalf("%s has no prompt or no reference reply", tr.ID)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 2000 {
		seen[RandomIdentifier(rng)] = true
	}
	if len(seen) < 1800 {
		t.Errorf("2000 random identifiers gave only %d distinct names: not an open space", len(seen))
	}
	base := demo(t)
	cfg := DefaultDataConfig()
	cfg.Rooms, cfg.General, cfg.Retrieval = 0, 20, 30
	trajs, st, err := Build(context.Background(), base, cfg)
	if err != nil || len(trajs) != 50 || st.Kept != 50 {
		t.Fatalf("a base corpus without rooms: %d trajectories, %+v, %v", len(trajs), st, err)
	}
	cfg.General, cfg.Retrieval = 0, 0
	if _, _, err := Build(context.Background(), base, cfg); err == nil {
		t.Error("no rooms and no warm-up must be an error")
	}
}

// The warm-up's catalogs follow the rooms back to level -1 (category codes
// only, as when the recipe's first stages were trained) and stay at level 0
// above it, as the recorded continuations had them.
func TestRetrievalCatalogsFollowTheFirstStagesRooms(t *testing.T) {
	code := regexp.MustCompile(`^[A-Z]{2}\d+$`)
	ids := func(variety int) (codes, others int) {
		for _, tr := range Retrieval(7, 400, variety) {
			q := tr.Messages[0].Content
			if !strings.HasPrefix(q, "Catalog:\n") {
				continue
			}
			lines := strings.Split(q, "\n")
			for _, l := range lines[1 : len(lines)-1] {
				if code.MatchString(strings.Fields(l)[0]) {
					codes++
				} else {
					others++
				}
			}
		}
		return codes, others
	}
	if codes, others := ids(-1); codes == 0 || others != 0 {
		t.Errorf("level -1: %d category codes, %d other ids; want codes only", codes, others)
	}
	if _, others := ids(0); others == 0 {
		t.Error("level 0: no slug, SKU or platform ids in the warm-up's catalogs")
	}
	a, b := Retrieval(7, 200, 0), Retrieval(7, 200, 3)
	for i := range a {
		if a[i].Messages[0].Content != b[i].Messages[0].Content {
			t.Fatalf("warm-up %d differs between levels 0 and 3; the recorded continuations had level 0's", i)
		}
	}
}
