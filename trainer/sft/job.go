package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Sources of the job's trajectories (Trajectory.Source).
const (
	sourceShop     = "shop"
	sourceStrategy = "strategy"
	sourceFault    = "fault"
)

// sessionMemory is how many past messages a live session's prompt shows
// (runtime.Config.Memory's default): a strategy episode's turns see as
// much of the session as the runtime shows.
const sessionMemory = 8

// example is one question to collect a trajectory for, with how it is
// asked and answered.
type example struct {
	q liveroom.Question
	// narration marks a turn the strategy starts: its user message is
	// the instruction behind the runtime's narration prefix.
	narration bool
	// fault, when set, makes one of the question's tools fail.
	fault *liveroom.Fault
	// operator puts an operator's edit on top of the variant, and
	// skillRename another renaming of its skills.
	operator    bool
	skillRename bool
	source      string
	// critic, when set, shows a flawed first reply and the hooks'
	// feedback on it before the right one (DataConfig.FeedbackShare).
	critic Critic
}

// userText is the user message of the example's turn, as the runtime
// writes it.
func (ex example) userText() string {
	if ex.narration {
		return liveroom.NarrationPrefix + ex.q.Text
	}
	return ex.q.Text
}

// roomPlan is what one room of Build collects: its room (generated, or a
// shop catalog), its steps in order, whether every step shows the stream
// context, and the source it counts under.
type roomPlan struct {
	room    *liveroom.Room
	steps   []liveroom.EpisodeStep
	context bool
	source  string
}

// planRoom decides what room r of Build is: a shop catalog (ShopShare), a
// strategy episode in the generated room (StrategyShare), or the
// generated room's questions, as before the job's generators existed.
func planRoom(room *liveroom.Room, mix *rand.Rand, cfg DataConfig, qcfg liveroom.QuestionConfig, r uint64) (roomPlan, error) {
	asSteps := func(qs []liveroom.Question) []liveroom.EpisodeStep {
		out := make([]liveroom.EpisodeStep, len(qs))
		for i, q := range qs {
			out[i] = liveroom.EpisodeStep{Question: q}
		}
		return out
	}
	seed := cfg.Seed*1_000_003 + r
	if cfg.ShopShare > 0 && mix.Float64() < cfg.ShopShare {
		sc := liveroom.ShopConfig{MinItems: cfg.Room.MinItems, MaxItems: cfg.Room.MaxItems}
		long := cfg.LongShare > 0 && mix.Float64() < cfg.LongShare
		if long {
			sc = liveroom.ShopConfig{MinItems: 20, MaxItems: 30}
		}
		shop, err := liveroom.ShopRoom(seed, sc)
		if err != nil {
			return roomPlan{}, err
		}
		return roomPlan{room: shop, steps: asSteps(shop.ShopQuestions(cfg.Seed+r, cfg.Questions)), context: long, source: sourceShop}, nil
	}
	if cfg.StrategyShare > 0 && mix.Float64() < cfg.StrategyShare {
		steps, err := room.StrategyEpisode(cfg.Seed + r)
		if err != nil {
			return roomPlan{}, err
		}
		return roomPlan{room: room, steps: steps, context: true, source: sourceStrategy}, nil
	}
	return roomPlan{room: room, steps: asSteps(room.Questions(cfg.Seed+r, cfg.Questions, qcfg))}, nil
}

// drawFault picks a fault for a question that calls tools: one of its
// tools (never the skill loader), a kind, and whether every call fails;
// nil when the question calls none.
func drawFault(rng *rand.Rand, q liveroom.Question, persistentShare float64) *liveroom.Fault {
	var tools []string
	for _, c := range q.Gold.Calls {
		if c.Name != liveroom.ToolLoadSkill && !slices.Contains(tools, c.Name) {
			tools = append(tools, c.Name)
		}
	}
	if len(tools) == 0 {
		return nil
	}
	f := liveroom.Fault{Tool: tools[rng.IntN(len(tools))], Kind: liveroom.FaultKinds()[rng.IntN(len(liveroom.FaultKinds()))], Times: 1}
	if rng.Float64() < persistentShare {
		f.Times = 0
	}
	return &f
}

// operatorEdit puts the operator pool's edit on top of a variant, and
// records it after the variant's transforms.
func operatorEdit(v *harness.Harness, rec hsa.Record, seed int64, opts hsa.Options) (*harness.Harness, hsa.Record, error) {
	fams, err := hsa.PoolFamilies(hsa.PoolOperator)
	if err != nil {
		return nil, rec, err
	}
	f := fams[int(uint64(seed)%uint64(len(fams)))]
	return onTop(v, rec, f, seed^0x6f70657261746f72, opts) // "operator"
}

// skillRenameOnTop renames the variant's skills once more (hsa family
// skill-rename, mostly coined ids), so that the reply skill can only be
// found by its description.
func skillRenameOnTop(v *harness.Harness, rec hsa.Record, seed int64, opts hsa.Options) (*harness.Harness, hsa.Record, error) {
	f, err := hsa.Lookup("skill-rename")
	if err != nil {
		return nil, rec, err
	}
	return onTop(v, rec, f, seed^0x736b696c6c6e616d, opts) // "skillnam"
}

// onTop applies family f to a variant, the gold carried through the
// variant's mapping, and records it after the variant's transforms.
func onTop(v *harness.Harness, rec hsa.Record, f hsa.Family, fseed int64, opts hsa.Options) (*harness.Harness, hsa.Record, error) {
	m := rec.Mapping()
	through := hsa.Options{MinToolRounds: opts.MinToolRounds}
	for _, c := range opts.Gold {
		mc, err := m.Map(c)
		if err != nil {
			return nil, rec, err
		}
		through.Gold = append(through.Gold, mc)
	}
	edited, em, err := f.Apply(v, fseed, through)
	if err != nil {
		return nil, rec, fmt.Errorf("%s: %w", f.Name, err)
	}
	if err := harness.Validate(edited); err != nil {
		return nil, rec, fmt.Errorf("%s produced an invalid harness: %w", f.Name, err)
	}
	rec.Transforms = append(rec.Transforms, hsa.Transform{Family: f.Name, Pool: f.Pool, Seed: fseed, Mapping: em})
	return edited, rec, nil
}

// DumpData builds the data cfg chooses and writes n of its trajectories,
// spread evenly over it, as JSONL (the run folder's layout: messages,
// tools, question with its gold, harness and HSA record, source, fault)
// to w, and a summary of what was built — counts by source, by question
// type and language, and the lengths of the rendered conversations in
// characters — to summary. It is `livehat train --dump-data N`, for
// reading samples of the data before a run trains on it.
func DumpData(ctx context.Context, base *harness.Harness, cfg DataConfig, n int, w, summary io.Writer) error {
	trajs, st, err := Build(ctx, base, cfg)
	if err != nil {
		return err
	}
	bySource, byType := map[string]int{}, map[string]int{}
	var lengths []int
	for _, t := range trajs {
		src := t.Source
		switch {
		case src != "":
		case t.Question.Type == "":
			src = "general"
		default:
			src = "room"
		}
		bySource[src]++
		if t.Question.Type != "" {
			byType[fmt.Sprintf("%s/%s", t.Question.Type, t.Question.Lang)]++
		}
		chars := 0
		for _, m := range t.Messages {
			chars += utf8.RuneCountInString(m.Content)
		}
		lengths = append(lengths, chars)
	}
	slices.Sort(lengths)
	pct := func(p float64) int { return lengths[min(len(lengths)-1, int(p*float64(len(lengths))))] }
	fmt.Fprintf(summary, "data: %d trajectories (%d under variants, %d kept retries, %d rejected, %d not applicable, %d silent)\n",
		st.Kept, st.Variants, st.Retries, st.Rejected, st.NotApplicable, st.Silent)
	fmt.Fprintf(summary, "data: by source %v\n", bySource)
	fmt.Fprintf(summary, "data: by type/lang %v\n", byType)
	fmt.Fprintf(summary, "data: characters per conversation p50 %d, p90 %d, p99 %d, max %d\n", pct(0.5), pct(0.9), pct(0.99), lengths[len(lengths)-1])
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n = min(n, len(trajs))
	for i := range n {
		if err := enc.Encode(trajs[i*len(trajs)/n]); err != nil {
			return fmt.Errorf("sft: dump: %w", err)
		}
	}
	return nil
}
