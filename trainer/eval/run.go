package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// evalTimeoutFloor is the least per-call deadline hooks get in an
// evaluation (see runtime.Sandbox.SetTimeoutFloor).
const evalTimeoutFloor = 5 * time.Second

// Case is what a model factory gets for one item: the room, the harness
// the item runs under and, for a variant, the mapping from the base names.
type Case struct {
	Item    Item
	Room    *liveroom.Room
	Harness *harness.Harness
	Mapping *hsa.Mapping
}

// ModelFactory returns the model that answers one case. A served model
// ignores the case; the expert policy reads its gold.
type ModelFactory func(c Case) (runtime.Model, error)

// Runner runs suites through the runtime.
type Runner struct {
	// Base is the harness Live-Stream QA runs under and HVQA varies.
	Base *harness.Harness
	// Sandbox holds the hook plugins the harness names.
	Sandbox *runtime.Sandbox
	// Plugins, when set, chooses the plugin set an item's catalog is bound
	// to instead of everything loaded in Sandbox: a console evaluates an
	// organisation's active plugin versions, not the last one loaded.
	Plugins func(ctx context.Context, catalog []byte) (*runtime.PluginSet, error)
	Model   ModelFactory
	// Parallel is how many items run at once; default 2.
	Parallel int
	// TurnTimeout bounds each item's turn; default 60 s.
	TurnTimeout time.Duration
	Logger      *slog.Logger
	// Progress, when set, is called after each item.
	Progress func(done, total int)
	// BindCatalog holds the model's item arguments to the room's item ids
	// (runtime.Config.CatalogItems), as live sessions do. Off, the model
	// is measured alone, as the recorded tables were.
	BindCatalog bool
}

// ItemResult is one graded item.
type ItemResult struct {
	ID       string          `json:"id"`
	Category string          `json:"category"`
	Grade    liveroom.Grade  `json:"grade"`
	Reply    string          `json:"reply"`
	Outcome  runtime.Outcome `json:"outcome"`
	Took     time.Duration   `json:"took_ns"`
	Error    string          `json:"error,omitempty"`
	// ServerError is the kind of failure of the model server the item's
	// turn (an episode's step) ended on, with Error saying what happened;
	// empty when the server answered or no server was asked.
	ServerError remote.Kind   `json:"server_error,omitempty"`
	Turn        *runtime.Turn `json:"-"`
	Harness     string        `json:"harness_version"`
	Families    []string      `json:"families,omitempty"`
	// OnAir counts the item's replies that reached the audience: turns
	// the runtime replied with (not denied, not its safe line), with
	// something said. An episode has one per step that did.
	OnAir int `json:"on_air"`
	// OnAirUnbacked counts those with at least one unbacked statement
	// (Grade.Unbacked), and UnbackedKinds those with one of each kind.
	OnAirUnbacked int            `json:"on_air_unbacked,omitempty"`
	UnbackedKinds map[string]int `json:"unbacked_kinds,omitempty"`
	// OnAirRewritten counts those an after_response hook rewrote: the
	// words on air are the hook's (the grounding check's fallback of
	// backed facts on a turn's last attempt), not the model's.
	OnAirRewritten int `json:"on_air_rewritten,omitempty"`
}

// rewritten reports whether an after_response hook replaced the turn's
// reply.
func rewritten(t *runtime.Turn) bool {
	for _, st := range t.Steps {
		if st.Kind == "hook" && st.Event == harness.EventAfterResponse && st.Decision != nil && st.Decision.Action == harness.ActionRewrite {
			return true
		}
	}
	return false
}

// onAir reports whether a turn's reply reached the audience as the model
// wrote it: a hook denied nothing and the runtime did not speak its safe
// line instead.
func onAir(t *runtime.Turn) bool {
	return t.Outcome == runtime.OutcomeReplied && strings.TrimSpace(t.Reply) != ""
}

// countOnAir adds one turn's reply and its unbacked statements to the
// item's counts.
func (res *ItemResult) countOnAir(t *runtime.Turn, unbacked []liveroom.Unbacked) {
	if !onAir(t) {
		return
	}
	res.OnAir++
	if rewritten(t) {
		res.OnAirRewritten++
	}
	if len(unbacked) == 0 {
		return
	}
	res.OnAirUnbacked++
	if res.UnbackedKinds == nil {
		res.UnbackedKinds = map[string]int{}
	}
	seen := map[string]bool{}
	for _, u := range unbacked {
		if !seen[u.Kind] {
			seen[u.Kind] = true
			res.UnbackedKinds[u.Kind]++
		}
	}
}

// Run runs every item of the suite and reports. Items that fail to run
// (a backend error, a timeout) score 0 and carry the error; the run goes
// on, so partial results are kept.
func (r *Runner) Run(ctx context.Context, s *Suite) (*SuiteReport, error) {
	par := r.Parallel
	if par <= 0 {
		par = 2
	}
	results := make([]ItemResult, len(s.Items))
	var finished []ItemResult // in completion order, for an interrupted run
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, par)
	start := time.Now()
	for i := range s.Items {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			res := r.runItem(ctx, s.Items[i])
			mu.Lock()
			results[i] = res
			if res.Error == "" || ctx.Err() == nil {
				finished = append(finished, res)
			}
			done++
			if r.Progress != nil {
				r.Progress(done, len(s.Items))
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return summarize(s.Name, finished, time.Since(start)), fmt.Errorf("eval: %s interrupted after %d finished items: %w", s.Name, len(finished), err)
	}
	return summarize(s.Name, results, time.Since(start)), nil
}

func (r *Runner) runItem(ctx context.Context, it Item) ItemResult {
	res := ItemResult{ID: it.ID, Category: it.Category}
	fail := func(err error) ItemResult {
		res.Error = err.Error()
		res.Grade = liveroom.Grade{Deductions: []string{"not run: " + err.Error()}}
		return res
	}
	room, catalog, err := it.room()
	if err != nil {
		return fail(err)
	}
	// The room's gold is in the plugins' names; an operator may have
	// renamed tools and arguments of the base (hsa.FromPlugins).
	h, mapping := r.Base, (*hsa.Mapping)(nil)
	if base := hsa.FromPlugins(r.Base); len(base.Steps) > 0 {
		mapping = &base
	}
	if it.Variant != nil {
		q := it.Question
		if mapping != nil {
			q.Gold.Calls = make([]hsa.Call, len(it.Question.Gold.Calls))
			for i, c := range it.Question.Gold.Calls {
				mc, err := mapping.Map(c)
				if err != nil {
					return fail(err)
				}
				q.Gold.Calls[i] = mc
			}
		}
		vh, rec, err := it.Variant.apply(r.Base, q)
		if err != nil {
			return fail(err)
		}
		m := rec.Mapping()
		if mapping != nil {
			m = mapping.Then(m)
		}
		h, mapping = vh, &m
		res.Families = it.Variant.Families
	}
	res.Harness = h.ShortVersion()
	model, err := r.Model(Case{Item: it, Room: room, Harness: h, Mapping: mapping})
	if err != nil {
		return fail(err)
	}
	watch := &serverWatch{Model: model}
	var hooks *runtime.PluginSet
	if r.Plugins != nil {
		hooks, err = r.Plugins(ctx, catalog)
	} else {
		hooks, err = r.Sandbox.Plugins(catalog, nil)
	}
	if err != nil {
		return fail(err)
	}
	timeout := r.TurnTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := runtime.Config{
		Stream: fmt.Sprintf("liveroom-%d", it.Room), Harness: h, Model: watch,
		Plugins: roomPlugins{PluginSet: hooks, tools: toolsFor(ctx, hooks, r.Base, it), harness: h, mapping: mapping}, TurnTimeout: timeout, Logger: log,
		// Tool calls get the hooks' floor: a busy machine must not turn a
		// slow first call of a WASM tool into an item the model failed.
		ToolTimeout: evalTimeoutFloor,
		Queue:       runtime.QueueConfig{StaleAfter: time.Hour},
		// The stream context a live session shows (the featured item and
		// the items on sale): what the model and the hooks see when served.
		Context: room.StreamContext,
	}
	if r.BindCatalog {
		cfg.CatalogItems, cfg.CatalogWords, cfg.CatalogVariants = room.ItemIDs, room.ItemWords, room.ItemVariants
	}
	sess, err := runtime.NewSession(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	events := sess.Listen(256)
	if len(it.Steps) > 0 {
		return r.runEpisode(ctx, sess, events, watch, room, h, mapping, it, res)
	}
	t0 := time.Now()
	if err := sess.Submit(runtime.Message{Viewer: it.Question.Viewer, Text: it.Question.Text}); err != nil {
		return fail(err)
	}
	for {
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case e, ok := <-events:
			if !ok {
				return fail(fmt.Errorf("session ended without a turn"))
			}
			if e.Kind != runtime.EventTurn {
				continue
			}
			t := e.Record
			res.Took, res.Turn, res.Outcome, res.Reply = time.Since(t0), t, t.Outcome, t.Reply
			res.Grade = gradeTurn(room, it.Question, t, mapping, h)
			res.countOnAir(t, res.Grade.Unbacked)
			if failed := watch.failure(t); failed != nil {
				res.serverFailed(failed)
			}
			return res
		}
	}
}

// gradeTurn grades one turn. A turn that ended on the runtime's safe line
// spoke that line, not its last draft; and "let me check and get back to
// you" satisfies no viewer's intent, so it earns no effectiveness unless
// silence was a correct answer (spam). The safe line is the runtime's, not
// the model's: its statements are not checked for backing.
func gradeTurn(room *liveroom.Room, q liveroom.Question, t *runtime.Turn, mapping *hsa.Mapping, h *harness.Harness) liveroom.Grade {
	msgs := t.Messages
	safe := t.Outcome == runtime.OutcomeSafeLine
	if safe {
		msgs = append(append([]harness.Message(nil), msgs...), harness.Message{Role: harness.RoleAssistant, Content: t.Reply})
	}
	g := room.GradeTranscript(q, msgs, liveroom.GradeOptions{Mapping: mapping, ReplyChars: h.Pipeline.ReplyChars.Value, SafeLine: safe})
	if t.Outcome == runtime.OutcomeSafeLine {
		g.Deductions = append(g.Deductions, "safe line: "+t.Reason)
		if !q.Gold.Silent {
			g.Effectiveness, g.Score = 0, 0
		}
	}
	return g
}

// nextTurn waits for the session's next finished turn.
func nextTurn(ctx context.Context, events <-chan runtime.Event) (*runtime.Turn, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("session ended without a turn")
			}
			if e.Kind == runtime.EventTurn {
				return e.Record, nil
			}
		}
	}
}

// runEpisode plays an episode's steps in one session, grading each turn;
// the episode's grade is the mean of its steps, except accuracy, which a
// single false or banned statement anywhere takes to 0.
func (r *Runner) runEpisode(ctx context.Context, sess *runtime.Session, events <-chan runtime.Event, watch *serverWatch, room *liveroom.Room,
	h *harness.Harness, mapping *hsa.Mapping, it Item, res ItemResult) ItemResult {
	t0 := time.Now()
	g := liveroom.Grade{Accuracy: 1}
	var replies []string
	for i, st := range it.Steps {
		var err error
		if st.Narration {
			err = sess.Narrate(st.Question.Text)
		} else {
			err = sess.Submit(runtime.Message{Viewer: st.Question.Viewer, Text: st.Question.Text})
		}
		if err != nil {
			res.Error = err.Error()
			break
		}
		t, err := nextTurn(ctx, events)
		if err != nil {
			res.Error = err.Error()
			break
		}
		if failed := watch.failure(t); failed != nil {
			// The rest of the episode would be played against a server
			// that just failed; the item is an error either way.
			res.serverFailed(failed)
			break
		}
		sg := gradeTurn(room, st.Question, t, mapping, h)
		res.countOnAir(t, sg.Unbacked)
		for _, u := range sg.Unbacked {
			u.Why = fmt.Sprintf("step %d (%s): %s", i+1, st.Question.Type, u.Why)
			g.Unbacked = append(g.Unbacked, u)
		}
		g.Accuracy = min(g.Accuracy, sg.Accuracy)
		g.Effectiveness += sg.Effectiveness
		g.ToolRationality += sg.ToolRationality
		g.SkillSelection += sg.SkillSelection
		g.Score += sg.Score
		g.GoldCalls += sg.GoldCalls
		g.NamedCalls += sg.NamedCalls
		g.ExactCalls += sg.ExactCalls
		g.Facts += sg.Facts
		g.FactsStated += sg.FactsStated
		for _, d := range sg.Deductions {
			g.Deductions = append(g.Deductions, fmt.Sprintf("step %d (%s): %s", i+1, st.Question.Type, d))
		}
		replies = append(replies, t.Reply)
	}
	n := float64(len(it.Steps))
	g.Effectiveness, g.ToolRationality, g.SkillSelection, g.Score = g.Effectiveness/n, g.ToolRationality/n, g.SkillSelection/n, g.Score/n
	if g.Accuracy == 0 {
		g.Score = 0
	}
	if res.Error != "" {
		g.Score = 0
		g.Deductions = append(g.Deductions, "not finished: "+res.Error)
	}
	res.Grade, res.Took, res.Reply = g, time.Since(t0), strings.Join(replies, " | ")
	return res
}

// roomPlugins serves a variant harness's tools and hooks from the WASM
// plugins: tool calls arrive in the variant's names and shapes and are
// mapped back to the base harness's, which the plugins implement, and for
// the robustness suite they pass a fault injector on the way.
type roomPlugins struct {
	*runtime.PluginSet
	tools   liveroom.ToolRunner
	harness *harness.Harness
	mapping *hsa.Mapping
}

// pluginTools runs the base harness's tools by name in the stream's
// plugins (the storefront plugin over the room's catalog).
type pluginTools struct {
	ctx  context.Context
	ps   *runtime.PluginSet
	base *harness.Harness
}

// CallTool implements liveroom.ToolRunner. The room names tools by their
// plugin export, which a base harness may call otherwise.
func (t pluginTools) CallTool(name string, args map[string]any) (json.RawMessage, error) {
	tool, ok := t.base.Tool(name)
	if !ok {
		for _, bt := range t.base.Tools {
			if bt.Export == name {
				tool, ok = bt, true
				break
			}
		}
	}
	if !ok || tool.Plugin == "" {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return t.ps.Tool(t.ctx, tool.Plugin, tool.Export, raw)
}

func toolsFor(ctx context.Context, ps *runtime.PluginSet, base *harness.Harness, it Item) liveroom.ToolRunner {
	tools := pluginTools{ctx: ctx, ps: ps, base: base}
	if it.Fault != nil {
		return &liveroom.FaultInjector{Tools: tools, Faults: []liveroom.Fault{*it.Fault}}
	}
	return tools
}

// Tool runs a tool call. A variant harness keeps each tool's plugin and
// export but may rename it and reshape its arguments, so the call is
// mapped back to the base harness's names first, as a plugin serving
// several harness versions would. Renamed arguments the runtime has given
// back already (the tools' argument maps); the rest is undone here.
func (p roomPlugins) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	call := hsa.Call{Name: export, Arguments: a}
	if p.mapping != nil {
		for _, t := range p.harness.Tools {
			if t.Plugin == plugin && t.Export == export {
				back, err := p.mapping.ExceptArgumentRenames().Inverse(hsa.Call{Name: t.Name, Arguments: a})
				if err != nil {
					return nil, err
				}
				call = back
				break
			}
		}
	}
	return p.tools.CallTool(call.Name, call.Arguments)
}

// SuiteReport is a suite's result.
type SuiteReport struct {
	Name            string     `json:"name"`
	Score           float64    `json:"score"`
	N               int        `json:"n"`
	CI95            [2]float64 `json:"ci95"`
	Accuracy        float64    `json:"accuracy"`
	Effectiveness   float64    `json:"effectiveness"`
	ToolRationality float64    `json:"tool_rationality"`
	SkillSelection  float64    `json:"skill_selection"`
	// ToolNames, CallArgs and Facts are the learning-curve diagnostics,
	// pooled over the suite's gold calls and facts (percent): calls made
	// with the right tool, calls made with the right arguments too, and
	// facts the replies state.
	ToolNames float64 `json:"tool_names"`
	CallArgs  float64 `json:"call_args"`
	Facts     float64 `json:"facts"`
	Errors    int     `json:"errors"`
	// ServerErrors counts, by kind, the items that failed on the model
	// server (ItemResult.ServerError); they are among Errors.
	ServerErrors map[remote.Kind]int `json:"server_errors,omitempty"`
	// OnAir counts the replies that reached the audience (ItemResult.OnAir)
	// and OnAirUnbacked those with a statement the tools did not back: the
	// number the grounding target holds at 0. UnbackedKinds counts them by
	// kind (a reply counts once for each kind it has), and UnbackedItems
	// are the worst-scored items with one, at most maxUnbackedItems.
	OnAir         int `json:"on_air"`
	OnAirUnbacked int `json:"on_air_unbacked"`
	// OnAirRewritten counts the replies on air a hook rewrote
	// (ItemResult.OnAirRewritten), and RewrittenScore is the part of Score
	// their items carry: Score less it is what the model's own words
	// earned. An episode whose steps mix both counts with its share.
	OnAirRewritten int                `json:"on_air_rewritten"`
	RewrittenScore float64            `json:"rewritten_score"`
	UnbackedKinds  map[string]int     `json:"unbacked_kinds,omitempty"`
	UnbackedItems  []ItemResult       `json:"unbacked_items,omitempty"`
	Categories     map[string]Summary `json:"categories"`
	Took           time.Duration      `json:"took_ns"`
	Worst          []ItemResult       `json:"worst,omitempty"`
	Slowest        []ItemResult       `json:"slowest,omitempty"`
	Items          []ItemResult       `json:"-"`
}

// Summary is the score of a group of items.
type Summary struct {
	Score float64 `json:"score"`
	N     int     `json:"n"`
}

// maxUnbackedItems bounds the items a report lists with their unbacked
// statements.
const maxUnbackedItems = 10

func summarize(name string, results []ItemResult, took time.Duration) *SuiteReport {
	rep := &SuiteReport{Name: name, N: len(results), Categories: map[string]Summary{}, Took: took, Items: results}
	if len(results) == 0 {
		return rep
	}
	scores := make([]float64, len(results))
	cat := map[string][]float64{}
	var gold, named, exact, facts, stated int
	for i, r := range results {
		scores[i] = r.Grade.Score
		rep.Accuracy += r.Grade.Accuracy
		rep.Effectiveness += r.Grade.Effectiveness
		rep.ToolRationality += r.Grade.ToolRationality
		rep.SkillSelection += r.Grade.SkillSelection
		if r.Error != "" {
			rep.Errors++
		}
		if r.ServerError != "" {
			if rep.ServerErrors == nil {
				rep.ServerErrors = map[remote.Kind]int{}
			}
			rep.ServerErrors[r.ServerError]++
		}
		cat[r.Category] = append(cat[r.Category], r.Grade.Score)
		rep.OnAir += r.OnAir
		rep.OnAirUnbacked += r.OnAirUnbacked
		rep.OnAirRewritten += r.OnAirRewritten
		if r.OnAir > 0 {
			rep.RewrittenScore += r.Grade.Score * float64(r.OnAirRewritten) / float64(r.OnAir)
		}
		for k, n := range r.UnbackedKinds {
			if rep.UnbackedKinds == nil {
				rep.UnbackedKinds = map[string]int{}
			}
			rep.UnbackedKinds[k] += n
		}
		gold += r.Grade.GoldCalls
		named += r.Grade.NamedCalls
		exact += r.Grade.ExactCalls
		facts += r.Grade.Facts
		stated += r.Grade.FactsStated
	}
	rep.ToolNames, rep.CallArgs, rep.Facts = percent(named, gold), percent(exact, gold), percent(stated, facts)
	n := float64(len(results))
	rep.Accuracy, rep.Effectiveness = 100*rep.Accuracy/n, 100*rep.Effectiveness/n
	rep.ToolRationality, rep.SkillSelection = 100*rep.ToolRationality/n, 100*rep.SkillSelection/n
	rep.RewrittenScore = 100 * rep.RewrittenScore / n
	mean, lo, hi := meanCI(scores)
	rep.Score, rep.CI95 = 100*mean, [2]float64{100 * lo, 100 * hi}
	for c, s := range cat {
		m, _, _ := meanCI(s)
		rep.Categories[c] = Summary{Score: 100 * m, N: len(s)}
	}
	worst := append([]ItemResult(nil), results...)
	sort.SliceStable(worst, func(i, j int) bool { return worst[i].Grade.Score < worst[j].Grade.Score })
	for _, w := range worst {
		if w.Grade.Score >= 1 || len(rep.Worst) == 5 {
			break
		}
		rep.Worst = append(rep.Worst, w)
	}
	for _, w := range worst {
		if len(rep.UnbackedItems) == maxUnbackedItems {
			break
		}
		if w.OnAirUnbacked > 0 {
			rep.UnbackedItems = append(rep.UnbackedItems, w)
		}
	}
	slow := append([]ItemResult(nil), results...)
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].Took > slow[j].Took })
	rep.Slowest = slow[:min(3, len(slow))]
	return rep
}

// percent is 100·n/of, or 0 when there is nothing to count.
func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// meanCI returns the mean and a 95% confidence interval from the normal
// approximation, clipped to [0, 1]; when every score is equal it uses the
// rule of three, so a perfect run still shows its uncertainty.
func meanCI(xs []float64) (mean, lo, hi float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	if n < 2 {
		return mean, 0, 1
	}
	sd := math.Sqrt(ss / (n - 1))
	half := 1.96 * sd / math.Sqrt(n)
	if half == 0 {
		half = 3 / n // rule of three: P(failure) < 3/n at 95%
	}
	return mean, math.Max(0, mean-half), math.Min(1, mean+half)
}
