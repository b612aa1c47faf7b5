package sft

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/opd"
)

// General returns n single-turn conversations of the general corpus: the
// general prompts of package opd (chit-chat, simple questions, formatting
// and length instructions checkable like IFEval's) answered with their
// rule-written reference replies. They teach a base model general
// behaviour; OPD later distils that behaviour back after SFT.
func General(seed uint64, n int) []Trajectory {
	out := make([]Trajectory, 0, n)
	for _, p := range opd.Prompts(seed, n) {
		out = append(out, plainTrajectory("general-"+p.ID, p.Text, p.Reference))
	}
	return out
}

// Retrieval returns n copy and retrieval warm-up conversations, the skills
// the calibration run never acquired from live-room episodes alone: find
// an item's id from a catalog list by its name (English or Chinese), copy
// a fact from a tool-style JSON object, and name the tool whose
// description matches from a list of tools with freshly generated names.
// Catalogs come from the live room's generator and tool names from an
// open generator, so nothing can be memorised instead of copied. variety
// is the level of the rooms the warm-up goes with: at -1 its catalogs are
// the older rooms' too, as they were when the recipe's first stages were
// trained; levels 1 to 4 vary what viewers say, not this warm-up, which
// stays as the recorded runs had it; from 5 its catalogs sell open kinds
// too, as the rooms do.
func Retrieval(seed uint64, n, variety int) []Trajectory {
	rng := rand.New(rand.NewPCG(seed, 0x636f7079)) // "copy"
	out := make([]Trajectory, 0, n)
	rooms := liveroom.RoomConfig{MinItems: 1, MaxItems: 6, Variety: min(variety, 0)}
	if variety >= 5 {
		// Open kinds: catalogs whose names cannot be recalled.
		rooms.Variety = 5
	}
	for i := range n {
		room := liveroom.NewRoom(rng.Uint64(), rooms)
		it := room.Items[rng.IntN(len(room.Items))]
		var q, a string
		switch rng.IntN(4) {
		case 0:
			var b strings.Builder
			b.WriteString("Catalog:\n")
			for _, x := range room.Items {
				fmt.Fprintf(&b, "%s %s\n", x.ID, x.NameEN)
			}
			fmt.Fprintf(&b, "What is the id of %s?", it.NameEN)
			q, a = b.String(), it.ID
		case 1:
			var b strings.Builder
			b.WriteString("商品列表：\n")
			for _, x := range room.Items {
				fmt.Fprintf(&b, "%s %s\n", x.ID, x.NameZH)
			}
			fmt.Fprintf(&b, "%s的编号是什么？", it.NameZH)
			q, a = b.String(), it.ID
		case 2:
			price := liveroom.Yuan(it.Price())
			q = fmt.Sprintf(`{"item_id":"%s","name":"%s","price":"%s","stock":%d}`+"\nHow much is it? Answer with the number.", it.ID, it.NameEN, price, it.TotalStock())
			a = price
		default:
			q, a = toolPick(rng)
		}
		out = append(out, plainTrajectory(fmt.Sprintf("retrieval-%d-%d", seed, i), q, a))
	}
	return out
}

// toolPick asks which of a few freshly named tools does a described job.
func toolPick(rng *rand.Rand) (question, answer string) {
	jobs := []string{"Return the price of an item.", "Return the stock left for an item.", "Pin the purchase link of an item.",
		"Return the shipping time and cost.", "Check which coupon applies to an item.", "Load the instructions of a skill."}
	perm := rng.Perm(len(jobs))[:2+rng.IntN(3)]
	var b strings.Builder
	b.WriteString("Tools:\n")
	names := make([]string, len(perm))
	for i, j := range perm {
		names[i] = RandomIdentifier(rng)
		fmt.Fprintf(&b, "- %s: %s\n", names[i], jobs[j])
	}
	k := rng.IntN(len(perm))
	fmt.Fprintf(&b, "Which tool should I call to %s Answer with its name.", strings.ToLower(jobs[perm[k]][:1])+jobs[perm[k]][1:])
	return b.String(), names[k]
}

// RandomIdentifier draws a tool or parameter name from an open space:
// one to three random syllable words in snake_case or camelCase, with an
// optional number, or an opaque name like "h_748b" — so that a model
// trained on them must copy names rather than recall a list.
func RandomIdentifier(rng *rand.Rand) string {
	const cons, vow = "bcdfghjklmnprstvwz", "aeiou"
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vow[rng.IntN(len(vow))])
		}
		return b.String()
	}
	if rng.IntN(5) == 0 {
		return fmt.Sprintf("%c_%d%c", cons[rng.IntN(len(cons))], rng.IntN(1000), vow[rng.IntN(len(vow))])
	}
	parts := make([]string, 1+rng.IntN(3))
	for i := range parts {
		parts[i] = word()
	}
	var name string
	if rng.IntN(2) == 0 {
		name = strings.Join(parts, "_")
	} else {
		name = parts[0]
		for _, p := range parts[1:] {
			name += strings.ToUpper(p[:1]) + p[1:]
		}
	}
	if rng.IntN(3) == 0 {
		name += fmt.Sprint(rng.IntN(100))
	}
	return name
}

// plainTrajectory is a one-question conversation without a harness.
func plainTrajectory(id, question, answer string) Trajectory {
	return Trajectory{ID: id, Messages: []Message{
		{Message: chat.Message{Role: chat.RoleUser, Content: question}},
		{Message: chat.Message{Role: chat.RoleAssistant, Content: answer}},
	}}
}
