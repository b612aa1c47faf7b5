package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/liveroom"
)

// TurnOf is the experiment's record of a runtime turn: its id, the viewer
// who asked, the latency, the items it mentioned and whether one of the
// named compliance hooks objected to the reply. The caller sets the
// experiment, stream, arm and time. A turn that ended on the safe line
// mentions nothing: the viewer heard only the safe line.
func TurnOf(t *runtime.Turn, complianceHooks []string) TurnRecord {
	r := TurnRecord{ID: t.ID, Latency: t.Timing.Total}
	if len(t.Viewers) > 0 {
		r.Viewer = t.Viewers[0]
	}
	for _, st := range t.Steps {
		if st.Kind == "hook" && st.Event == harness.EventAfterResponse && slices.Contains(complianceHooks, st.Name) &&
			st.Decision != nil && st.Decision.Action != harness.ActionAllow {
			r.Violation = true
		}
	}
	if t.Outcome != runtime.OutcomeReplied {
		return r
	}
	add := func(id string) {
		if id != "" && !slices.Contains(r.Items, id) {
			r.Items = append(r.Items, id)
		}
	}
	for _, a := range t.Actions {
		add(a.Item)
	}
	for _, m := range t.Messages {
		for _, c := range m.ToolCalls {
			var args struct {
				ItemID string `json:"item_id"`
			}
			if json.Unmarshal(c.Arguments, &args) == nil {
				add(args.ItemID)
			}
		}
	}
	return r
}

// WithoutCoupons returns a copy of h that cannot check coupons: the
// coupon_check tool, the coupon strategy skill and the price skill's rule
// about coupons are removed. It is the simulation's worse arm: a model
// that follows the harness can no longer answer coupon questions.
func WithoutCoupons(h *harness.Harness) (*harness.Harness, error) {
	out := h.Clone()
	out.Name = h.Name + "-no-coupon"
	out.Tools = slices.DeleteFunc(out.Tools, func(t harness.Tool) bool { return t.Name == liveroom.ToolCouponCheck })
	out.Skills = slices.DeleteFunc(out.Skills, func(s harness.Skill) bool { return s.ID == liveroom.SkillCoupon })
	for i := range out.Skills {
		out.Skills[i].Rules = slices.DeleteFunc(slices.Clone(out.Skills[i].Rules), func(r harness.Rule) bool {
			return strings.Contains(r.Text, liveroom.ToolCouponCheck)
		})
	}
	if err := harness.Validate(out); err != nil {
		return nil, fmt.Errorf("experiment: harness without coupons: %w", err)
	}
	return out, nil
}

// SimArm is one arm of a simulated experiment: its name and the harness
// its sessions run.
type SimArm struct {
	Name    string
	Harness *harness.Harness
}

// SimConfig describes a simulated experiment in the live room.
type SimConfig struct {
	// Store receives the experiment, exposures, turns and events; the
	// report is computed from it.
	Store *Store
	// Sandbox holds the plugins the arms' harnesses name (the example
	// storefront, moderation, compliance and speech plugins).
	Sandbox *runtime.Sandbox
	// Arms are the variants; the first is the control.
	Arms []SimArm
	// Viewers is how many viewers visit; each asks one shopping question.
	Viewers int
	// Rooms is how many simulated live rooms (streams) they spread over;
	// default 8.
	Rooms int
	// Seed makes rooms, viewers and their choices reproducible.
	Seed uint64
	// Unit is the unit of assignment; default viewer.
	Unit Unit
	// Analysis and PlannedUnitsPerArm set the experiment's peeking guard.
	Analysis           Analysis
	PlannedUnitsPerArm int
	// Parallel is how many turns run at once; default 2.
	Parallel int
	// Resamples is the report's bootstrap resample count; default 2000.
	Resamples int
	// Logger receives session warnings; nil discards them.
	Logger *slog.Logger
}

// SimResult is a finished simulation: the stored experiment, its report,
// and the mean grade each arm's answers got.
type SimResult struct {
	Experiment Experiment
	Report     *Report
	// Score is each arm's mean answer score (accuracy × effectiveness, as
	// the live-room grader gives it).
	Score map[string]float64
	// Events is what ingestion did with the simulated shop's events.
	Events BatchResult
}

// Simulation constants: when the room is on air, how long the attribution
// window is, and the shopping questions viewers ask, with weights.
const (
	simDuration   = 2 * time.Hour
	simAttribute  = 30 * time.Minute
	simIngestSize = 500
)

var simStart = time.Date(2026, 1, 15, 20, 0, 0, 0, time.UTC)

// SimStart returns when the rooms of every simulation go on air. A Store
// that records simulations takes it as its clock (NewStore(db, SimStart)),
// so that what it stamps falls inside the simulated period.
func SimStart() time.Time { return simStart }

func simQuestionMix() []liveroom.QuestionType {
	return []liveroom.QuestionType{
		liveroom.QPrice, liveroom.QPrice,
		liveroom.QCoupon, liveroom.QCoupon, liveroom.QCoupon,
		liveroom.QEligibility, liveroom.QEligibility,
		liveroom.QSize, liveroom.QStock, liveroom.QSpecs, liveroom.QLink, liveroom.QShipping, liveroom.QCompare,
	}
}

// simViewer is one viewer's visit: the question, the answer's turn and
// grade, and the shop events that followed.
type simViewer struct {
	id, stream string
	arm        int
	at         time.Time
	turn       TurnRecord
	score      float64
	events     []Event
	err        error
}

// Simulate runs an experiment in simulated live rooms: each viewer is
// assigned an arm, asks a shopping question that the arm's harness
// answers through the real runtime with the live room's expert policy
// (which follows the harness it is given: a harness without a tool cannot
// get that tool's facts), and then views, carts, claims coupons and buys
// with probabilities set by how good the answer was. Everything is stored
// and the report is computed from the store.
func Simulate(ctx context.Context, cfg SimConfig) (*SimResult, error) {
	switch {
	case cfg.Store == nil || cfg.Sandbox == nil:
		return nil, errors.New("experiment: simulate: a store and a sandbox are required")
	case len(cfg.Arms) < 2:
		return nil, fmt.Errorf("experiment: simulate: %d arms; want at least 2", len(cfg.Arms))
	case cfg.Viewers < 4:
		return nil, fmt.Errorf("experiment: simulate: %d viewers; want at least 4", cfg.Viewers)
	}
	if cfg.Rooms <= 0 {
		cfg.Rooms = 8
	}
	if cfg.Unit == "" {
		cfg.Unit = UnitViewer
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 2
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// A fixed id keeps the hash split, and so the whole run, reproducible.
	def := Experiment{ID: fmt.Sprintf("simulation-%d", cfg.Seed), Name: fmt.Sprintf("simulation seed %d", cfg.Seed), Unit: cfg.Unit, Primary: MetricGMVPerViewer,
		// Latency is reported but not a guardrail here: the simulation's
		// turns time a scripted policy on whatever machine runs it.
		Guardrails:        []Metric{MetricViolationsPer1000, MetricShedPer1000},
		AttributionWindow: simAttribute, Analysis: cfg.Analysis, PlannedUnitsPerArm: cfg.PlannedUnitsPerArm}
	for _, a := range cfg.Arms {
		def.Arms = append(def.Arms, Arm{Name: a.Name, HarnessVersion: a.Harness.Version(), Weight: 1})
	}
	store := cfg.Store
	exp, err := store.Create(ctx, def)
	if err != nil {
		return nil, err
	}
	if exp, err = store.Start(ctx, exp.ID, simStart); err != nil {
		return nil, err
	}

	rooms := make([]*liveroom.Room, cfg.Rooms)
	plugins := make([]runtime.Plugins, cfg.Rooms)
	var items []string
	for k := range rooms {
		rooms[k] = liveroom.NewRoom(cfg.Seed*1000+uint64(k)+1, liveroom.RoomConfig{MinItems: 3, MaxItems: 6})
		catalog, err := rooms[k].CatalogJSON()
		if err != nil {
			return nil, err
		}
		ps, err := cfg.Sandbox.Plugins(catalog, nil)
		if err != nil {
			return nil, err
		}
		plugins[k] = ps
		for _, it := range rooms[k].Items {
			items = append(items, it.ID)
		}
		sess := StreamSession{ID: fmt.Sprintf("%s-room-%d", exp.ID, k), Stream: roomStream(rooms[k]), Start: simStart, End: simStart.Add(simDuration)}
		if err := store.RecordSession(ctx, sess); err != nil {
			return nil, err
		}
	}

	viewers := make([]simViewer, cfg.Viewers)
	for i := range viewers {
		v := &viewers[i]
		v.id = fmt.Sprintf("viewer-%d-%d", cfg.Seed, i)
		k := i % cfg.Rooms
		v.stream = roomStream(rooms[k])
		v.at = simStart.Add(time.Duration(i) * (simDuration - simAttribute) / time.Duration(cfg.Viewers))
		unit, err := exp.UnitID(v.stream, v.id)
		if err != nil {
			return nil, err
		}
		arm, err := exp.Assign(unit)
		if err != nil {
			return nil, err
		}
		v.arm = exp.ArmIndex(arm.Name)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range cfg.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				k := i % cfg.Rooms
				visit(ctx, &viewers[i], rooms[k], plugins[k], cfg.Arms[viewers[i].arm], cfg.Seed, i, cfg.Logger)
			}
		}()
	}
	for i := range viewers {
		next <- i
	}
	close(next)
	wg.Wait()

	res := &SimResult{Score: map[string]float64{}}
	counts := map[string]int{}
	var events []Event
	visits := make([]Visit, len(viewers))
	for i := range viewers {
		v := &viewers[i]
		if v.err != nil {
			return nil, fmt.Errorf("experiment: simulate viewer %s: %w", v.id, v.err)
		}
		visits[i] = Visit{Stream: v.stream, Viewer: v.id, Time: v.at}
	}
	arms, err := store.AssignBatch(ctx, exp.ID, visits)
	if err != nil {
		return nil, err
	}
	turns := make([]TurnRecord, len(viewers))
	for i := range viewers {
		v := &viewers[i]
		if arms[i].Name != cfg.Arms[v.arm].Name {
			return nil, fmt.Errorf("experiment: the store assigned %s to %s, the hash %s", v.id, arms[i].Name, cfg.Arms[v.arm].Name)
		}
		v.turn.Experiment, v.turn.Stream, v.turn.Arm, v.turn.Time = exp.ID, v.stream, arms[i].Name, v.at
		turns[i] = v.turn
		res.Score[arms[i].Name] += v.score
		counts[arms[i].Name]++
		events = append(events, v.events...)
	}
	if err := store.RecordTurns(ctx, turns); err != nil {
		return nil, err
	}
	for name, n := range counts {
		res.Score[name] /= float64(n)
	}
	end := simStart.Add(simDuration)
	validator := NewValidator(items, time.Minute, func() time.Time { return end })
	for from := 0; from < len(events); from += simIngestSize {
		b, err := store.Ingest(ctx, events[from:min(from+simIngestSize, len(events))], validator)
		if err != nil {
			return nil, err
		}
		res.Events.Accepted += b.Accepted
		res.Events.Duplicates += b.Duplicates
		res.Events.Rejected += b.Rejected
		for _, r := range b.Events {
			if r.Status == StatusRejected {
				return nil, fmt.Errorf("experiment: simulated event %s rejected: %s", r.ID, r.Reason)
			}
		}
	}
	if exp, err = store.Stop(ctx, exp.ID, end); err != nil {
		return nil, err
	}
	res.Experiment = exp
	res.Report, err = store.Report(ctx, exp.ID, AnalyzeOptions{Resamples: cfg.Resamples})
	return res, err
}

func roomStream(r *liveroom.Room) string { return fmt.Sprintf("liveroom-%d", r.Seed) }

// visit plays one viewer: a question of the shopping mix, answered by the
// arm's harness through the runtime, and the shop events that follow.
func visit(ctx context.Context, v *simViewer, room *liveroom.Room, ps runtime.Plugins, arm SimArm, seed uint64, i int, log *slog.Logger) {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	mix := simQuestionMix()
	qt := mix[rng.IntN(len(mix))]
	qs := room.Questions(rng.Uint64(), 1, liveroom.QuestionConfig{Types: []liveroom.QuestionType{qt}})
	q := qs[0]
	q.Viewer = v.id
	turn, err := answer(ctx, room, ps, arm.Harness, q, v.stream, log)
	if err != nil {
		v.err = err
		return
	}
	v.turn = TurnOf(turn, []string{"compliance"})
	g := gradeTurn(room, q, turn, arm.Harness)
	v.score = g.Score
	v.events = shopperEvents(rng, room, q, g, v)
}

// answer runs one question through a fresh runtime session of the arm's
// harness, with the live room's expert policy as the model.
func answer(ctx context.Context, room *liveroom.Room, ps runtime.Plugins, h *harness.Harness, q liveroom.Question, stream string, log *slog.Logger) (*runtime.Turn, error) {
	model, err := eval.NewExpert(eval.Case{Item: eval.Item{ID: q.ID, Category: string(q.Type), Room: room.Seed, Question: q}, Room: room, Harness: h})
	if err != nil {
		return nil, err
	}
	sess, err := runtime.NewSession(ctx, runtime.Config{Stream: stream, Harness: h, Model: model, Plugins: ps,
		TurnTimeout: time.Minute, Logger: log, Queue: runtime.QueueConfig{StaleAfter: time.Hour}})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	events := sess.Listen(64)
	if err := sess.Submit(runtime.Message{Viewer: q.Viewer, Text: q.Text}); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-events:
			if !ok {
				return nil, errors.New("session ended without a turn")
			}
			if e.Kind == runtime.EventTurn {
				return e.Record, nil
			}
		}
	}
}

// gradeTurn grades a turn as the evaluation suites do: a turn that ended
// on the safe line said the safe line, which answers nothing.
func gradeTurn(room *liveroom.Room, q liveroom.Question, t *runtime.Turn, h *harness.Harness) liveroom.Grade {
	msgs := t.Messages
	if t.Outcome == runtime.OutcomeSafeLine {
		msgs = append(slices.Clone(msgs), harness.Message{Role: harness.RoleAssistant, Content: t.Reply})
	}
	g := room.GradeTranscript(q, msgs, liveroom.GradeOptions{ReplyChars: h.Pipeline.ReplyChars.Value})
	if t.Outcome == runtime.OutcomeSafeLine && !q.Gold.Silent {
		g.Effectiveness, g.Score = 0, 0
	}
	return g
}

// shopperOdds are a viewer's chances after an answer of some quality.
type shopperOdds struct{ view, buy float64 }

// oddsFor: a correct, effective answer to a question asked before buying
// raises the chance to buy; a refusal lowers it; a wrong fact (a wrong
// price) lowers it most, because the viewer no longer trusts the host.
func oddsFor(q liveroom.Question, g liveroom.Grade) shopperOdds {
	intent := q.Type != liveroom.QSpecs && q.Type != liveroom.QShipping
	switch {
	case g.Accuracy == 0:
		return shopperOdds{0.45, 0.04}
	case g.Effectiveness == 0:
		return shopperOdds{0.5, 0.08}
	case g.Score < 1:
		return shopperOdds{0.7, 0.18}
	case intent:
		return shopperOdds{0.85, 0.30}
	default:
		return shopperOdds{0.7, 0.2}
	}
}

// shopperEvents draws what a viewer does on the shop side after the
// answer, minutes after the turn (inside the attribution window).
func shopperEvents(rng *rand.Rand, room *liveroom.Room, q liveroom.Question, g liveroom.Grade, v *simViewer) []Event {
	item, ok := questionItem(room, q)
	if !ok {
		return nil
	}
	var out []Event
	at := v.at
	emit := func(k EventKind, amount int64) {
		at = at.Add(time.Duration(20+rng.IntN(160)) * time.Second)
		ev := Event{ID: fmt.Sprintf("%s-%d", v.id, len(out)), Stream: v.stream, Viewer: v.id, Item: item.ID, Kind: k, Time: at}
		if k == KindPurchase {
			ev.AmountMinor, ev.Currency = amount, "CNY"
		}
		out = append(out, ev)
	}
	odds := oddsFor(q, g)
	good := g.Score == 1
	if q.Type == liveroom.QLink && rng.Float64() < map[bool]float64{true: 0.9, false: 0.3}[good] {
		emit(KindLinkClick, 0)
	}
	if rng.Float64() >= odds.view {
		return out
	}
	emit(KindItemView, 0)
	qty := int64(1)
	if q.Type == liveroom.QEligibility {
		for _, c := range q.Gold.Calls {
			if f, ok := c.Arguments["quantity"].(float64); ok {
				qty = int64(f)
			}
		}
	} else if rng.Float64() < 0.08 {
		qty = int64(2 + rng.IntN(4)) // the few who stock up make GMV heavy-tailed
	}
	total := item.Price() * qty
	discount := int64(0)
	buy := odds.buy
	if c, has := room.Coupon(item.ID); has && good && (q.Type == liveroom.QCoupon || q.Type == liveroom.QEligibility) && total >= c.MinSpend {
		if rng.Float64() < 0.8 {
			emit(KindCouponClaim, 0)
			discount = c.Amount
			buy += 0.15
		}
	}
	if rng.Float64() < buy {
		emit(KindAddToCart, 0)
		emit(KindPurchase, total-discount)
	} else if rng.Float64() < 0.15 {
		emit(KindAddToCart, 0)
	}
	return out
}

// questionItem is the item a question is about: the first gold call that
// names one.
func questionItem(room *liveroom.Room, q liveroom.Question) (liveroom.Item, bool) {
	for _, c := range q.Gold.Calls {
		if id, ok := c.Arguments["item_id"].(string); ok {
			if it, ok := room.Item(id); ok {
				return it, true
			}
		}
		if query, ok := c.Arguments["query"].(string); ok {
			if it, ok := room.Resolve(query); ok {
				return it, true
			}
		}
	}
	return liveroom.Item{}, false
}
