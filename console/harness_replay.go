package console

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/eval"
	"github.com/livehat/livehat/trainer/liveroom"
)

// replaySuite names the gate's suite of the streams' own recent questions.
const replaySuite = "replay"

// replayTurnsPerStream bounds the turns a gate reads back per stream.
const replayTurnsPerStream = 200

// replayItem is one recent viewer question of a stream, asked again under
// each version the gate compares.
type replayItem struct {
	id       string // the turn it came from, and the question's line
	stream   *store.Stream
	viewer   string
	text     string
	category string
}

// replayQuestions picks the n most recent distinct viewer questions of
// the named streams (by default those that run baseline), taking from the
// streams in turn so that each is heard.
func (s *Server) replayQuestions(ctx context.Context, sc store.Scope, baseline string, ids []string, n int) ([]replayItem, error) {
	if n == 0 {
		return nil, nil
	}
	var streams []*store.Stream
	for i, id := range ids {
		st, err := s.store.Stream(ctx, sc, id)
		if err != nil || slices.Contains(ids[:i], id) {
			return nil, fieldError(fiber.StatusNotFound, fmt.Sprintf("streams[%d]", i), fmt.Sprintf("no stream %q (or named twice)", id))
		}
		streams = append(streams, st)
	}
	if len(ids) == 0 {
		all, err := s.store.Streams(ctx, sc)
		if err != nil {
			return nil, err
		}
		for _, st := range all {
			if st.HarnessVersion != baseline {
				continue
			}
			full, err := s.store.Stream(ctx, sc, st.ID)
			if err != nil {
				return nil, err
			}
			streams = append(streams, full)
		}
	}
	perStream := make([][]replayItem, len(streams))
	for i, st := range streams {
		turns, err := s.store.LiveTurns(ctx, sc, store.LiveTurnQuery{StreamID: st.ID, Limit: replayTurnsPerStream})
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, t := range turns { // newest first
			if t.Event != "viewer_message" {
				continue
			}
			for k, line := range strings.Split(t.Input, "\n") {
				text := strings.TrimSpace(line)
				if text == "" || seen[text] {
					continue
				}
				seen[text] = true
				viewer := "replay"
				if len(t.Viewers) > 0 {
					viewer = t.Viewers[min(k, len(t.Viewers)-1)]
				}
				perStream[i] = append(perStream[i], replayItem{id: fmt.Sprintf("%s#%d", t.ID, k), stream: st, viewer: viewer,
					text: text, category: questionCategory(text)})
			}
		}
	}
	var out []replayItem
	for round := 0; len(out) < n; round++ {
		took := false
		for _, list := range perStream {
			if round < len(list) && len(out) < n {
				out = append(out, list[round])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out, nil
}

// questionCategory is what a viewer asked about, by keywords (zh and en):
// a live question has no gold, so the gate groups replayed questions by
// their words. The first topic that matches wins: "券后多少钱" is a coupon
// question before it is a price question.
func questionCategory(text string) string {
	t := strings.ToLower(text)
	for _, c := range []struct {
		name  string
		words []string
	}{
		{"coupon", []string{"券", "优惠", "满减", "coupon", "discount", "voucher"}},
		{"price", []string{"多少钱", "价格", "几块", "价钱", "贵", "price", "how much", "cost"}},
		{"stock", []string{"有货", "库存", "现货", "售罄", "卖完", "补货", "stock", "sold out", "available"}},
		{"size", []string{"尺码", "码数", "多大", "身高", "体重", "size", "fit"}},
		{"shipping", []string{"发货", "快递", "包邮", "退货", "退换", "ship", "deliver", "return"}},
		{"link", []string{"链接", "上车", "怎么买", "link", "buy"}},
	} {
		for _, w := range c.words {
			if strings.Contains(t, w) {
				return c.name
			}
		}
	}
	return "other"
}

// replayMarkup is what never belongs in speech: tool-call markup,
// reasoning tags and raw call JSON a model wrote instead of calling.
var replayMarkup = []string{"<tool_call>", "</tool_call>", "<think>", "</think>", `"arguments":`}

// gradeReplay grades a replayed turn by what its trace shows, as the
// evolution page reads live turns (liveTurnFailure): a hook that denied
// the turn or sent the reply back (the grounding check among them), a
// tool call that failed, a skill that did not load; and markup spoken on
// air. A question both versions refuse fails under both, so it moves no
// difference.
func gradeReplay(t *runtime.Turn) liveroom.Grade {
	steps, err := json.Marshal(t.Steps)
	if err != nil {
		return liveroom.Grade{Deductions: []string{"not run: " + err.Error()}}
	}
	_, deductions, _ := liveTurnFailure(string(t.Outcome), t.Reason, steps)
	for _, m := range replayMarkup {
		if strings.Contains(t.Reply, m) {
			deductions = append(deductions, fmt.Sprintf("speaks markup: %q", m))
			break
		}
	}
	g := liveroom.Grade{Deductions: deductions}
	if len(deductions) == 0 {
		g.Score, g.Accuracy, g.Effectiveness = 1, 1, 1
	}
	return g
}

// runReplay asks every replayed question again under version, each in a
// session of its own set up as its stream's live session would be (the
// stream's persona, banned claims, catalog and plugins), with the gate's
// model, and grades the turns.
func (s *Server) runReplay(ctx context.Context, orgID, version string, items []replayItem, model gateModel, progress func(done int)) (*eval.SuiteReport, error) {
	// setupPinned reads only the server: a hub of its own gives the replay
	// exactly the setup a live session of the stream gets.
	hub := &liveHub{s: s, log: s.log}
	results := make([]eval.ItemResult, len(items))
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := 0
	sem := make(chan struct{}, 2)
	start := time.Now()
	for i, it := range items {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := s.replayOne(ctx, hub, orgID, version, it, model)
			mu.Lock()
			results[i] = res
			done++
			progress(done)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return replayReport(results, time.Since(start)), nil
}

// replayOne asks one question under version and grades the turn.
func (s *Server) replayOne(ctx context.Context, hub *liveHub, orgID, version string, it replayItem, model gateModel) eval.ItemResult {
	res := eval.ItemResult{ID: it.id, Category: it.category}
	fail := func(err error) eval.ItemResult {
		res.Error = err.Error()
		res.Grade = liveroom.Grade{Deductions: []string{"not run: " + err.Error()}}
		return res
	}
	setup, err := hub.setupPinned(ctx, it.stream, version)
	if err != nil {
		return fail(err)
	}
	res.Harness = setup.harness.ShortVersion()
	ps, err := s.plugins.isolatedSet(ctx, orgID, []byte(setup.catalog))
	if err != nil {
		return fail(err)
	}
	m, err := model.factory(eval.Case{Harness: setup.harness})
	if err != nil {
		return fail(err)
	}
	sess, err := runtime.NewSession(ctx, runtime.Config{Stream: it.stream.ID, Harness: setup.harness, Model: m, Plugins: ps,
		Context:         func() []harness.ContextItem { return setup.context },
		CatalogItems:    func() []string { return setup.items },
		CatalogWords:    func() []string { return setup.words },
		CatalogVariants: func() []string { return setup.variants },
		TurnTimeout:     30 * time.Second, ToolTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler),
		Queue: runtime.QueueConfig{StaleAfter: time.Hour}})
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	events := sess.Listen(64)
	t0 := time.Now()
	if err := sess.Submit(runtime.Message{Viewer: it.viewer, Text: it.text}); err != nil {
		return fail(err)
	}
	for {
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case e, ok := <-events:
			if !ok {
				return fail(fmt.Errorf("the session ended without a turn"))
			}
			if e.Kind != runtime.EventTurn {
				continue
			}
			res.Took, res.Turn, res.Outcome, res.Reply = time.Since(t0), e.Record, e.Record.Outcome, e.Record.Reply
			res.Grade = gradeReplay(e.Record)
			return res
		}
	}
}

// replayReport summarises replayed questions as a suite: the share that
// went through cleanly, overall and by category, with a 95% interval.
func replayReport(items []eval.ItemResult, took time.Duration) *eval.SuiteReport {
	rep := &eval.SuiteReport{Name: replaySuite, N: len(items), Categories: map[string]eval.Summary{}, Took: took, Items: items}
	if len(items) == 0 {
		return rep
	}
	byCat := map[string][]float64{}
	sum := 0.0
	for _, it := range items {
		sum += it.Grade.Score
		byCat[it.Category] = append(byCat[it.Category], it.Grade.Score)
		if it.Error != "" {
			rep.Errors++
		}
	}
	p := sum / float64(len(items))
	half := 1.96 * math.Sqrt(p*(1-p)/float64(len(items)))
	rep.Score, rep.CI95 = 100*p, [2]float64{100 * max(0, p-half), 100 * min(1, p+half)}
	rep.Accuracy, rep.Effectiveness = rep.Score, rep.Score
	for k, xs := range byCat {
		total := 0.0
		for _, x := range xs {
			total += x
		}
		rep.Categories[k] = eval.Summary{Score: 100 * total / float64(len(xs)), N: len(xs)}
	}
	return rep
}
