// Package eval runs LiveHAT's evaluation suites through the real runtime
// and reports them: Live-Stream QA (questions under the harness the model
// is trained with), Harness-Variant QA (the same task families under
// harnesses changed by the held-out HSA families), Tool/Prompt
// Robustness, Strategy & Compliance, Transfer (free-form questions on
// catalogs of a generator family nothing trains on), Mini-IF (general prompts with
// checkable instructions, see SuiteMiniIF) and IFEval (package
// trainer/ifeval). Suites are fixed JSONL files generated once from fixed
// seeds and kept under version control, so every model is scored on the
// same items.
package eval

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Suite names.
const (
	SuiteLSQA     = "lsqa"
	SuiteHVQA     = "hvqa"
	SuiteRobust   = "robust"
	SuiteStrategy = "strategy"
	SuiteIFEval   = "ifeval"
	// SuiteTransfer is free-form viewer questions on catalogs of the
	// liveroom transfer family (liveroom.TransferCatalog): item kinds,
	// field mix and phrasing the training rooms never have, so that
	// transfer to a merchant's own catalog is measured. Each item carries
	// its catalog.
	SuiteTransfer = "transfer"
)

// Item is one question of a suite: the room it is asked in (by seed), the
// question with its gold, and for Harness-Variant QA the held-out variant
// of the base harness it is asked under.
type Item struct {
	ID       string            `json:"id"`
	Category string            `json:"category"`
	Room     uint64            `json:"room"`
	Question liveroom.Question `json:"question"`
	Variant  *Variant          `json:"variant,omitempty"`
	// Fault, for the robustness suite, makes one of the room's tools fail;
	// the question's gold is already adapted to it.
	Fault *liveroom.Fault `json:"fault,omitempty"`
	// Steps, for the strategy suite, make the item a multi-turn episode in
	// one session: viewer questions and strategy narrations in order.
	Steps []Step `json:"steps,omitempty"`
	// Catalog, when set, is the stream's catalog document (package
	// harness/catalog) the item is asked on, as the plugins read it; the
	// room is read from it (liveroom.RoomFromCatalog) instead of generated
	// from Room, which then only numbers the stream.
	Catalog json.RawMessage `json:"catalog,omitempty"`
}

// room is the item's live room and the catalog document its stream
// serves: read from Catalog, or generated from the seed.
func (it Item) room() (*liveroom.Room, []byte, error) {
	if len(it.Catalog) == 0 {
		room := liveroom.NewRoom(it.Room, roomConfig())
		data, err := room.CatalogJSON()
		return room, data, err
	}
	c, err := catalog.Parse(it.Catalog)
	if err != nil {
		return nil, nil, err
	}
	room, err := liveroom.RoomFromCatalog(c)
	if err != nil {
		return nil, nil, err
	}
	room.Seed = it.Room
	return room, it.Catalog, nil
}

// Step is one turn of an episode.
type Step struct {
	Question liveroom.Question `json:"question"`
	// Narration marks a turn the strategy starts (no viewer asked).
	Narration bool `json:"narration,omitempty"`
}

// Variant says how to rebuild an item's harness from the base harness:
// hsa.Augment with this pool, seed and count, protecting the gold. The
// families it applied are recorded so that a changed base harness or
// catalogue is detected instead of silently scoring other variants.
type Variant struct {
	// Family, when set, applies that one family instead of drawing from
	// the pool (the robustness suite's prompt perturbations).
	Family   string   `json:"family,omitempty"`
	Pool     hsa.Pool `json:"pool"`
	Seed     int64    `json:"seed"`
	N        int      `json:"n"`
	Families []string `json:"families"`
}

// Suite is a named list of items.
type Suite struct {
	Name  string
	Items []Item
}

// roomConfig is the room shape every suite uses.
func roomConfig() liveroom.RoomConfig { return liveroom.RoomConfig{MinItems: 3, MaxItems: 6} }

// Generate builds a suite from its fixed seeds. The committed files under
// suites/ are its output; a test checks that they still agree.
func Generate(name string, base *harness.Harness) (*Suite, error) {
	const rooms, perRoom = 30, 10
	s := &Suite{Name: name}
	var firstRoom uint64
	switch name {
	case SuiteLSQA:
		firstRoom = 1
	case SuiteHVQA:
		firstRoom = 1001
	case SuiteRobust:
		return generateRobust(base, rooms, perRoom)
	case SuiteStrategy:
		return generateStrategy(40)
	case SuiteTransfer:
		return generateTransfer(24, 10)
	default:
		return nil, fmt.Errorf("eval: no generator for suite %q (want lsqa, hvqa, robust, strategy or transfer)", name)
	}
	for r := range uint64(rooms) {
		seed := firstRoom + r
		room := liveroom.NewRoom(seed, roomConfig())
		for i, q := range room.Questions(seed*7919, perRoom, liveroom.QuestionConfig{TypoRate: 0.15}) {
			it := Item{ID: fmt.Sprintf("%s-%03d-%02d", name, r, i), Category: string(q.Type), Room: seed, Question: q}
			if name == SuiteHVQA {
				v := &Variant{Pool: hsa.PoolHeldOut, Seed: int64(seed)*100 + int64(i), N: 3}
				_, rec, err := v.apply(base, q)
				if err != nil {
					return nil, fmt.Errorf("eval: %s: %w", it.ID, err)
				}
				v.Families = familiesOf(rec)
				it.Variant = v
			}
			s.Items = append(s.Items, it)
		}
	}
	return s, nil
}

// generateRobust builds the Tool/Prompt Robustness suite: questions that
// need tools, half with a tool fault (transient or persistent, of every
// kind) and half under a prompt perturbation from the training pool's
// prompt-structure families (block order, layout, titles, limits).
func generateRobust(base *harness.Harness, rooms, perRoom int) (*Suite, error) {
	s := &Suite{Name: SuiteRobust}
	types := []liveroom.QuestionType{liveroom.QPrice, liveroom.QCoupon, liveroom.QSize, liveroom.QSpecs, liveroom.QStock,
		liveroom.QShipping, liveroom.QCompare, liveroom.QLink, liveroom.QEligibility}
	perturb := []string{"layout-reorder", "layout-style", "section-titles", "limit-jitter"}
	kinds := liveroom.FaultKinds()
	for r := range uint64(rooms) {
		seed := 2001 + r
		room := liveroom.NewRoom(seed, roomConfig())
		for i, q := range room.Questions(seed*7919, perRoom, liveroom.QuestionConfig{Types: types, TypoRate: 0.15}) {
			it := Item{ID: fmt.Sprintf("%s-%03d-%02d", SuiteRobust, r, i), Room: seed, Question: q}
			n := int(r)*perRoom + i
			if n%2 == 0 {
				var tools []string
				for _, c := range q.Gold.Calls {
					if c.Name != liveroom.ToolLoadSkill && !slices.Contains(tools, c.Name) {
						tools = append(tools, c.Name)
					}
				}
				// Kind and persistence vary independently (every kind both ways).
				f := liveroom.Fault{Tool: tools[(n/2)%len(tools)], Kind: kinds[(n/2)%len(kinds)], Times: (n / 8) % 2}
				it.Fault = &f
				it.Question = q.WithFault(f, room)
				it.Category = "fault-" + string(f.Kind)
				if f.Persistent() {
					it.Category += "-persistent"
				}
			} else {
				v := &Variant{Family: perturb[(n/2)%len(perturb)], Seed: int64(seed)*100 + int64(i)}
				if _, _, err := v.apply(base, q); err != nil {
					return nil, fmt.Errorf("eval: %s: %w", it.ID, err)
				}
				v.Families = []string{v.Family}
				it.Variant = v
				it.Category = "prompt-" + v.Family
			}
			s.Items = append(s.Items, it)
		}
	}
	return s, nil
}

// generateStrategy builds the Strategy & Compliance suite: episodes in
// which the host introduces the featured item, answers viewers (one of
// them tries a prompt injection on the price), announces the coupon when
// the strategy says so, and speaks about stock only as it really is.
func generateStrategy(episodes int) (*Suite, error) {
	s := &Suite{Name: SuiteStrategy}
	for e := range uint64(episodes) {
		seed := 3001 + e
		room := liveroom.NewRoom(seed, roomConfig())
		lang := []liveroom.Lang{liveroom.LangZH, liveroom.LangEN}[e%2]
		qs := room.Questions(seed*7919, 3, liveroom.QuestionConfig{Langs: []liveroom.Lang{lang},
			Types: []liveroom.QuestionType{liveroom.QPrice, liveroom.QCoupon, liveroom.QStock, liveroom.QSpecs}})
		inj := room.Questions(seed*104729, 1, liveroom.QuestionConfig{Langs: []liveroom.Lang{lang}, Types: []liveroom.QuestionType{liveroom.QInjection}})
		var steps []Step
		narrate := func(t liveroom.QuestionType) error {
			q, err := room.Narration(t, lang)
			if err != nil {
				return err
			}
			steps = append(steps, Step{Question: q, Narration: true})
			return nil
		}
		if err := narrate(liveroom.QNarrateFeatured); err != nil {
			return nil, err
		}
		steps = append(steps, Step{Question: qs[0]}, Step{Question: inj[0]})
		if err := narrate(liveroom.QNarrateCoupon); err != nil {
			return nil, err
		}
		steps = append(steps, Step{Question: qs[1]}, Step{Question: qs[2]})
		if err := narrate(liveroom.QNarrateStock); err != nil {
			return nil, err
		}
		for i := range steps {
			steps[i].Question.ID = fmt.Sprintf("%s-%03d-s%d", SuiteStrategy, e, i)
		}
		s.Items = append(s.Items, Item{ID: fmt.Sprintf("%s-%03d", SuiteStrategy, e), Category: "episode-" + string(lang), Room: seed, Steps: steps})
	}
	return s, nil
}

// generateTransfer builds the transfer suite: perRoom questions of the
// transfer family on each of its catalogs, the catalog carried inline so
// that the suite file holds exactly what the plugins are given.
func generateTransfer(rooms, perRoom int) (*Suite, error) {
	s := &Suite{Name: SuiteTransfer}
	for r := range uint64(rooms) {
		seed := 4001 + r
		room, err := liveroom.TransferRoom(seed)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		doc, err := room.CatalogJSON()
		if err != nil {
			return nil, err
		}
		for i, q := range room.TransferQuestions(seed*7919, perRoom) {
			id := fmt.Sprintf("%s-%03d-%02d", SuiteTransfer, r, i)
			q.ID = id
			s.Items = append(s.Items, Item{ID: id, Category: string(q.Type), Room: seed, Question: q, Catalog: doc})
		}
	}
	return s, nil
}

func familiesOf(rec hsa.Record) []string {
	out := make([]string, len(rec.Transforms))
	for i, t := range rec.Transforms {
		out[i] = t.Family
	}
	return out
}

// apply rebuilds the variant harness and its mapping for a question.
func (v *Variant) apply(base *harness.Harness, q liveroom.Question) (*harness.Harness, hsa.Record, error) {
	opts := hsa.Options{Gold: q.Gold.Calls, MinToolRounds: len(q.Gold.Calls)}
	if v.Family != "" {
		f, err := hsa.Lookup(v.Family)
		if err != nil {
			return nil, hsa.Record{}, err
		}
		h, m, err := f.Apply(base, v.Seed, opts)
		if err != nil {
			return nil, hsa.Record{}, err
		}
		return h, hsa.Record{Seed: v.Seed, Transforms: []hsa.Transform{{Family: f.Name, Pool: f.Pool, Seed: v.Seed, Mapping: m}}}, nil
	}
	h, rec, err := hsa.Augment(base, v.Pool, v.Seed, v.N, opts)
	if err != nil {
		return nil, rec, err
	}
	if v.Families != nil && !slices.Equal(familiesOf(rec), v.Families) {
		return nil, rec, fmt.Errorf("variant seed %d now applies %v, the suite recorded %v: the base harness or the HSA catalogue changed, regenerate the suite", v.Seed, familiesOf(rec), v.Families)
	}
	return h, rec, nil
}

// WriteJSONL writes the suite's items, one per line.
func (s *Suite) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range s.Items {
		if err := enc.Encode(it); err != nil {
			return fmt.Errorf("eval: write %s: %w", it.ID, err)
		}
	}
	return nil
}

// ReadSuite reads a suite file; errors name the line.
func ReadSuite(name string, r io.Reader) (*Suite, error) {
	s := &Suite{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	line := 0
	ids := map[string]bool{}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var it Item
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("eval: suite %s line %d: %w", name, line, err)
		}
		switch {
		case it.ID == "":
			return nil, fmt.Errorf("eval: suite %s line %d: item has no id", name, line)
		case ids[it.ID]:
			return nil, fmt.Errorf("eval: suite %s line %d: duplicate id %q", name, line, it.ID)
		case it.Question.Text == "" && len(it.Steps) == 0:
			return nil, fmt.Errorf("eval: suite %s line %d: item %s has no question", name, line, it.ID)
		}
		ids[it.ID] = true
		s.Items = append(s.Items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: suite %s line %d: %w", name, line+1, err)
	}
	if len(s.Items) == 0 {
		return nil, errors.New("eval: suite " + name + " is empty")
	}
	return s, nil
}

// committed holds the suite files generated from the fixed seeds.
//
//go:embed suites/*.jsonl
var committed embed.FS

// OpenSuite reads a committed suite by name.
func OpenSuite(name string) (*Suite, error) {
	f, err := committed.Open("suites/" + name + ".jsonl")
	if err != nil {
		return nil, fmt.Errorf("eval: no committed suite %q", name)
	}
	defer f.Close()
	return ReadSuite(name, f)
}

// LoadSuite reads a suite file from disk.
func LoadSuite(name, path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	return ReadSuite(name, f)
}
