package liveroom

import (
	"slices"
	"testing"

	"github.com/livehat/livehat/harness/catalog"
)

// TestOpenKinds: rooms of Variety 5 sell kinds beyond the training kinds,
// real and invented, none of the transfer suite's; their catalogs export,
// their questions resolve to the item asked about, and the expert still
// answers every one in full.
func TestOpenKinds(t *testing.T) {
	base := demoHarness(t)
	known := map[string]bool{}
	for _, c := range Categories() {
		for _, k := range productKinds(c) {
			known[k.en] = true
		}
	}
	more, invented := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		r := NewRoom(seed, RoomConfig{MinItems: 1, MaxItems: 6, Variety: 5})
		for _, it := range r.Items {
			kind := it.Aliases[2]
			switch {
			case known[kind]:
			case slices.ContainsFunc(moreKinds(it.Category), func(k productKind) bool { return k.en == kind }):
				more++
			default:
				invented++
			}
		}
		data, err := r.CatalogJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.Parse(data); err != nil {
			t.Fatalf("room %d: the export does not parse: %v", seed, err)
		}
		for _, q := range r.Questions(seed, 30, QuestionConfig{Types: []QuestionType{QPrice, QStock, QLink, QShipping, QSize}}) {
			query, _ := q.Gold.Calls[1].Arguments["query"].(string)
			if it, ok := r.Resolve(query); !ok || it.ID != r.questionItem(q).ID {
				t.Errorf("%s: query %q resolves to %q (%v), the question is about %q", q.ID, query, it.ID, ok, r.questionItem(q).ID)
			}
			if g := r.GradeTranscript(q, mustExpert(t, r, base, q), GradeOptions{ReplyChars: base.Pipeline.ReplyChars.Value}); g.Score != 1 {
				t.Errorf("%s %q: expert graded %+v", q.ID, q.Text, g)
			}
		}
	}
	if more < 20 || invented < 10 {
		t.Errorf("%d items of more kinds and %d invented in 40 rooms, want many of both", more, invented)
	}
	// The transfer suite's kinds stay unseen.
	for _, c := range Categories() {
		for _, k := range moreKinds(c) {
			for _, tk := range transferKinds() {
				if k.en == tk.en || k.zh == tk.zh {
					t.Errorf("%s (%s) is a transfer kind", k.en, k.zh)
				}
			}
		}
	}
}
