package sft

import (
	"reflect"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

// TestSkillPicks holds the skill-choice warm-up to what it is for: the
// answer is always one of the ids the prompt lists (hsa's mappings carry
// the gold's skill to it), the ids are mostly not the base harness's, so
// that they must be read, and the same seed gives the same picks.
func TestSkillPicks(t *testing.T) {
	base := demo(t)
	picks, err := SkillPicks(7, 200, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) != 200 {
		t.Fatalf("%d picks, want 200", len(picks))
	}
	baseIDs := map[string]bool{}
	for _, sk := range base.Skills {
		baseIDs[sk.ID] = true
	}
	renamed, answers := 0, map[string]bool{}
	for _, p := range picks {
		if len(p.Messages) != 2 {
			t.Fatalf("%s: %d messages, want a question and an answer", p.ID, len(p.Messages))
		}
		prompt, id := p.Messages[0].Content, p.Messages[1].Content
		listed := false
		for _, line := range strings.Split(prompt, "\n") {
			// "- id: description" or "1. id: description"
			if _, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(rest, id+": ") {
				listed = true
			}
		}
		if !listed {
			t.Fatalf("%s: the answer %q is not a listed skill:\n%s", p.ID, id, prompt)
		}
		if !baseIDs[id] {
			renamed++
		}
		answers[id] = true
	}
	if renamed < 100 {
		t.Errorf("only %d of 200 answers are renamed ids; the warm-up would let ids be recalled", renamed)
	}
	if len(answers) < 100 {
		t.Errorf("only %d distinct answers in 200 picks", len(answers))
	}
	again, err := SkillPicks(7, 200, base)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(picks, again) {
		t.Error("the same seed gave other picks")
	}
	if _, err := SkillPicks(1, 3, &harness.Harness{}); err == nil {
		t.Error("a harness without skills gave picks")
	}
}
