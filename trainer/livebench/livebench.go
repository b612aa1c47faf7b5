// Package livebench is the load generator behind `livehat bench live`: it
// plays realistic live rooms (many viewers, bursts, repeated questions,
// spam) against the runtime with a real model and the example WASM hooks,
// and reports time to first speakable chunk and total turn time
// (P50/P95/P99), what was answered, merged or shed, and the share of turn
// time spent outside the model.
package livebench

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Config shapes a load run.
type Config struct {
	Harness *harness.Harness
	Model   runtime.Model
	Sandbox *runtime.Sandbox
	// Streams is the number of live rooms (sessions) at once.
	Streams int
	// Rate is the mean viewer messages per second per stream.
	Rate float64
	// Duration is how long viewers send messages; the run then waits for
	// the queues to drain (at most Drain).
	Duration, Drain time.Duration
	// MaxTokens bounds each generation.
	MaxTokens int
	// Concurrency is the turns each room generates at once (see
	// runtime.Config.Concurrency); default 1.
	Concurrency int
	// MergeWindow is how long a room collects messages before a turn
	// starts (runtime.QueueConfig.MergeWindow): 0 is the bench's 500 ms,
	// negative none, as a console live session has.
	MergeWindow time.Duration
	// Arms are the queue settings compared; default one arm, batch 1
	// with the runtime's default ageing. With several, the rooms split
	// evenly across them (room i takes Arms[i mod n]) and each arm plays
	// the same viewers, so the arms compare under the same machine load;
	// Run reports each arm.
	Arms   []Arm
	Seed   uint64
	Logger *slog.Logger
}

// Arm is one queue setting a run compares.
type Arm struct {
	// Batch is the most questions of one class a turn answers together
	// (runtime.QueueConfig.Batch; 0 is 1).
	Batch int `json:"batch"`
	// PromoteAfter is runtime.QueueConfig.PromoteAfter: the wait after
	// which a question rises one priority class (0: the runtime's default,
	// negative: strict priority).
	PromoteAfter time.Duration `json:"promote_after_ns"`
}

// Report is the outcome of a run. Every message sent ends in exactly one
// of Answered, SafeLines, Denied, Shed, Stale and Closed; Merged and Batched say
// how many of the answered (or safe-lined, or denied) ones shared a turn.
type Report struct {
	// Streams is the arm's number of rooms; Arm its queue setting.
	Streams int `json:"streams"`
	Arm
	Sent int `json:"sent"`
	// Turns is the number of turns that spoke (a reply or the safe line).
	Turns int `json:"turns"`
	// Answered counts messages a spoken reply addressed, SafeLines those
	// whose turn ended with the safe line, Denied those a hook refused.
	Answered  int `json:"answered"`
	SafeLines int `json:"safe_lines"`
	Denied    int `json:"denied"`
	// Merged counts messages answered as a near-duplicate of another;
	// Batched counts questions answered in a turn with other questions.
	Merged  int `json:"merged"`
	Batched int `json:"batched"`
	Shed    int `json:"shed"`
	Stale   int `json:"stale"`
	// Closed counts messages still queued when a room closed (the drain
	// limit ran out).
	Closed int `json:"closed"`
	// FirstChunk and Total are per question (a message with its merged
	// near-duplicates), from its own arrival: with one question a turn,
	// per turn.
	FirstChunk   runtime.Percentiles `json:"first_chunk"`
	Total        runtime.Percentiles `json:"total"`
	Model        runtime.Percentiles `json:"model"`
	OutsideModel float64             `json:"outside_model"`
	// Busy is the process's CPU time (user + system) over the machine's
	// capacity (cores × Wall) from the first viewer's message to the end
	// of the drain.
	Busy float64 `json:"busy"`
	// TrafficBusy is the same over the window in which viewers send
	// (Config.Duration from the first message): the load the latencies
	// were measured under, without the quieter drain.
	TrafficBusy float64 `json:"traffic_busy"`
	// EngineBusy is the share of that window in which the local engine
	// was running steps (engine.Stats.Busy): the utilisation of the
	// server every room's generations queue for. Zero for a remote model.
	EngineBusy float64 `json:"engine_busy"`
	// RoomBusy is the share of the run the rooms' turn workers spent in
	// turns (Σ turn time outside the queue / (streams × concurrency ×
	// wall)): the utilisation that queue wait follows, whatever else
	// shares the machine.
	RoomBusy float64 `json:"room_busy"`
	// OutsideModelP50 is the median time a turn spent outside the model
	// and its queue (hooks, tools, rendering, scheduling).
	OutsideModelP50 time.Duration `json:"outside_model_p50_ns"`
	// Generations, PromptTokens, CachedTokens and CompletionTokens sum
	// the model's work over the spoken turns: its calls, the prompt
	// tokens they read, the part of those the prefix cache held, and the
	// tokens they wrote.
	Generations      int `json:"generations"`
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Wall is the time from the first viewer's message to the end of the
	// drain.
	Wall time.Duration `json:"wall_ns"`
	// ByClass is the turn total per question by priority class
	// (runtime.Classify): the queue serves the urgent classes first, so
	// chit-chat waits by design.
	ByClass map[string]ClassLatency `json:"by_class"`
	// Hooks is what each hook (by its harness name) cost the spoken
	// turns and how often it changed their course.
	Hooks map[string]HookCost `json:"hooks"`
}

// HookCost is one hook's share of the spoken turns: the time it added to
// a turn (all its calls in the turn together) over the turns it ran in,
// and the turns in which it sent the reply back (retry) or rewrote it.
type HookCost struct {
	Turns   int           `json:"turns"`
	P50     time.Duration `json:"p50_ns"`
	P95     time.Duration `json:"p95_ns"`
	Retried int           `json:"retried"`
	Rewrote int           `json:"rewrote"`
}

// hookTally collects one hook's HookCost and its time per turn.
type hookTally struct {
	cost    HookCost
	perTurn []time.Duration
}

// ClassLatency is the latency of one priority class's questions.
type ClassLatency struct {
	Questions int                 `json:"questions"`
	Total     runtime.Percentiles `json:"total"`
}

// arm collects the turns of the rooms that share one batch size.
type arm struct {
	rep       Report
	stats     *runtime.LatencyStats // per turn
	questions *runtime.LatencyStats // per question
	byClass   map[runtime.Priority]*runtime.LatencyStats
	outside   []time.Duration
	working   time.Duration
	hooks     map[string]*hookTally
}

// observeHooks adds a spoken turn's hook steps to the arm's hook costs.
func (a *arm) observeHooks(t *runtime.Turn) {
	type turnHook struct {
		took             time.Duration
		retried, rewrote bool
	}
	in := map[string]*turnHook{}
	for _, st := range t.Steps {
		if st.Kind != "hook" {
			continue
		}
		h := in[st.Name]
		if h == nil {
			h = &turnHook{}
			in[st.Name] = h
		}
		h.took += st.Took
		if st.Decision != nil {
			h.retried = h.retried || st.Decision.Action == harness.ActionRetry
			h.rewrote = h.rewrote || st.Decision.Action == harness.ActionRewrite
		}
	}
	for name, h := range in {
		c := a.hooks[name]
		if c == nil {
			c = &hookTally{}
			a.hooks[name] = c
		}
		c.cost.Turns++
		c.perTurn = append(c.perTurn, h.took)
		if h.retried {
			c.cost.Retried++
		}
		if h.rewrote {
			c.cost.Rewrote++
		}
	}
}

func (a *arm) observe(e runtime.Event) {
	switch e.Kind {
	case runtime.EventTurn:
		t := e.Record
		count(&a.rep, t)
		if t.Outcome == runtime.OutcomeReplied || t.Outcome == runtime.OutcomeSafeLine {
			a.rep.Turns++
			a.stats.Add(t.Timing)
			for _, st := range t.Steps {
				if st.Kind == "model" {
					a.rep.Generations++
				}
			}
			a.rep.PromptTokens += t.Timing.PromptTokens
			a.rep.CachedTokens += t.Timing.CachedTokens
			a.rep.CompletionTokens += t.Timing.CompletionTokens
			a.outside = append(a.outside, t.Timing.Total-t.Timing.Queue-t.Timing.Model)
			a.observeHooks(t)
			a.working += t.Timing.Total - t.Timing.Queue
			for _, q := range questionTimings(t) {
				a.questions.Add(q.timing)
				c := runtime.Classify(q.text)
				if a.byClass[c] == nil {
					a.byClass[c] = runtime.NewLatencyStats(1 << 16)
				}
				a.byClass[c].Add(q.timing)
			}
		}
	case runtime.EventDropped: // one event per message
		switch {
		case strings.HasPrefix(e.Reason, "shed"):
			a.rep.Shed++
		case strings.HasPrefix(e.Reason, "stale"):
			a.rep.Stale++
		default:
			a.rep.Closed++
		}
	}
}

// Run plays the rooms and collects every turn. It returns one report per
// entry of cfg.Arms, in that order.
func Run(ctx context.Context, cfg Config) ([]Report, error) {
	if len(cfg.Arms) == 0 {
		cfg.Arms = []Arm{{Batch: 1}}
	}
	switch {
	case cfg.Streams <= 0 || cfg.Rate <= 0 || cfg.Duration <= 0:
		return nil, fmt.Errorf("livebench: streams, rate and duration must be positive")
	case cfg.Streams%len(cfg.Arms) != 0:
		return nil, fmt.Errorf("livebench: %d streams do not split evenly across %d arms", cfg.Streams, len(cfg.Arms))
	}
	mergeWindow := cfg.MergeWindow
	switch {
	case mergeWindow == 0:
		mergeWindow = 500 * time.Millisecond
	case mergeWindow < 0:
		mergeWindow = 0
	}
	for i := range cfg.Arms {
		if cfg.Arms[i].Batch < 0 {
			return nil, fmt.Errorf("livebench: arm %d: batch %d must be at least 1", i, cfg.Arms[i].Batch)
		}
		cfg.Arms[i].Batch = max(cfg.Arms[i].Batch, 1)
	}
	if cfg.Drain <= 0 {
		cfg.Drain = time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	arms := make([]*arm, len(cfg.Arms))
	for k, setting := range cfg.Arms {
		arms[k] = &arm{rep: Report{Streams: cfg.Streams / len(cfg.Arms), Arm: setting},
			stats: runtime.NewLatencyStats(1 << 16), questions: runtime.NewLatencyStats(1 << 16), byClass: map[runtime.Priority]*runtime.LatencyStats{},
			hooks: map[string]*hookTally{}}
	}
	type room struct {
		arm    *arm
		pair   uint64
		view   *liveroom.Room
		sess   *runtime.Session
		events <-chan runtime.Event
	}
	rooms := make([]room, 0, cfg.Streams)
	defer func() {
		for _, r := range rooms {
			r.sess.Close()
		}
	}()
	for i := range cfg.Streams {
		// Room i belongs to arm i mod len(Arms) and plays the viewers of
		// room i div len(Arms): every arm gets the same rooms.
		a, pair := arms[i%len(arms)], uint64(i/len(arms))
		view := liveroom.NewRoom(cfg.Seed+pair+1, liveroom.RoomConfig{})
		catalog, err := view.CatalogJSON()
		if err != nil {
			return nil, err
		}
		// The storefront plugin serves the room's tools from its catalog;
		// the hook plugins see the same catalog.
		hooks, err := cfg.Sandbox.Plugins(catalog, nil)
		if err != nil {
			return nil, err
		}
		sess, err := runtime.NewSession(ctx, runtime.Config{
			Stream: fmt.Sprintf("bench-%d", i), Harness: cfg.Harness, Model: cfg.Model, MaxTokens: cfg.MaxTokens,
			Plugins: hooks, CatalogItems: view.ItemIDs, CatalogWords: view.ItemWords, CatalogVariants: view.ItemVariants, Logger: log, Concurrency: cfg.Concurrency,
			Queue: runtime.QueueConfig{Capacity: 16, StaleAfter: 30 * time.Second, MergeWindow: mergeWindow,
				Batch: a.rep.Batch, PromoteAfter: a.rep.PromoteAfter},
		})
		if err != nil {
			return nil, err
		}
		rooms = append(rooms, room{arm: a, pair: pair, view: view, sess: sess, events: sess.Listen(1024)})
		if err := sess.Warm(ctx); err != nil {
			return nil, err
		}
	}
	// Every room is open and warm before the first viewer sends, so the
	// load measured is that of the traffic, not of the set-up.
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(cfg.Duration)
	cpu0, busy0 := processCPU(), engineBusy(cfg.Model)
	type window struct{ cpu, engine time.Duration }
	traffic := make(chan window, 1)
	go func() {
		select {
		case <-time.After(time.Until(end)):
		case <-ctx.Done():
		}
		traffic <- window{processCPU() - cpu0, engineBusy(cfg.Model) - busy0}
	}()
	errs := make(chan error, cfg.Streams)
	for _, r := range rooms {
		a := r.arm
		var turns atomic.Int64
		wg.Add(2)
		go func() { // collect
			defer wg.Done()
			for e := range r.events {
				if e.Kind == runtime.EventTurn {
					turns.Add(1)
				}
				mu.Lock()
				a.observe(e)
				mu.Unlock()
			}
		}()
		go func() { // viewers
			defer wg.Done()
			defer r.sess.Close()
			sent, err := play(ctx, r.sess, r.view, cfg, r.pair, end)
			mu.Lock()
			a.rep.Sent += sent
			mu.Unlock()
			if err != nil {
				errs <- err
				return
			}
			drain(ctx, r.sess, &turns, cfg.Drain)
		}()
	}
	wg.Wait()
	close(errs)
	wall := time.Since(start)
	cores := float64(goruntime.NumCPU())
	busy := (processCPU() - cpu0).Seconds() / (cores * wall.Seconds())
	w := <-traffic
	trafficBusy := w.cpu.Seconds() / (cores * cfg.Duration.Seconds())
	engineShare := w.engine.Seconds() / cfg.Duration.Seconds()
	var out []Report
	for _, a := range arms {
		rep := a.rep
		rep.Wall, rep.Busy, rep.TrafficBusy, rep.EngineBusy = wall, busy, trafficBusy, engineShare
		rep.RoomBusy = a.working.Seconds() / (float64(rep.Streams*max(cfg.Concurrency, 1)) * wall.Seconds())
		snap, qsnap := a.stats.Snapshot(), a.questions.Snapshot()
		rep.FirstChunk, rep.Total, rep.Model, rep.OutsideModel = qsnap.FirstChunk, qsnap.Total, snap.Model, snap.OutsideModel
		rep.ByClass = map[string]ClassLatency{}
		for c, st := range a.byClass {
			snap := st.Snapshot()
			rep.ByClass[c.String()] = ClassLatency{Questions: snap.Turns, Total: snap.Total}
		}
		if len(a.outside) > 0 {
			slices.Sort(a.outside)
			rep.OutsideModelP50 = a.outside[len(a.outside)/2]
		}
		rep.Hooks = map[string]HookCost{}
		for name, c := range a.hooks {
			slices.Sort(c.perTurn)
			c.cost.P50 = c.perTurn[len(c.perTurn)/2]
			c.cost.P95 = c.perTurn[min(len(c.perTurn)-1, len(c.perTurn)*95/100)]
			rep.Hooks[name] = c.cost
		}
		out = append(out, rep)
	}
	for err := range errs {
		return out, err
	}
	return out, nil
}

// count files each message of a finished turn under what became of it.
func count(rep *Report, t *runtime.Turn) {
	seen := map[int]bool{}
	for _, a := range t.Asked {
		switch {
		case a.Denied != "" || t.Outcome == runtime.OutcomeDenied:
			rep.Denied++
		case t.Outcome == runtime.OutcomeReplied:
			rep.Answered++
		case t.Outcome == runtime.OutcomeSafeLine:
			rep.SafeLines++
		}
		if seen[a.Question] {
			rep.Merged++
		} else if seen[a.Question] = true; a.Question > 0 {
			rep.Batched++
		}
	}
}

// questionTiming is one question's text and timing.
type questionTiming struct {
	text   string
	timing runtime.Timing
}

// questionTimings returns one timing per question of a spoken turn, from
// that question's first message's arrival: a question batched behind
// another waited less than the turn's first.
func questionTimings(t *runtime.Turn) []questionTiming {
	var out []questionTiming
	seen := map[int]bool{}
	for _, a := range t.Asked {
		if seen[a.Question] {
			continue
		}
		seen[a.Question] = true
		tm := t.Timing
		shift := tm.Queue - a.Waited
		tm.Queue, tm.Total, tm.FirstChunk = a.Waited, tm.Total-shift, tm.FirstChunk-shift
		out = append(out, questionTiming{a.Text, tm})
	}
	return out
}

// engineBusy is the local engine's step time so far (zero for a remote
// model).
func engineBusy(m runtime.Model) time.Duration {
	if lm, ok := m.(runtime.LocalModel); ok {
		return lm.Engine.Stats().Busy
	}
	return 0
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// play sends one stream's viewer messages: Poisson arrivals with bursts
// (a flash sale makes many ask at once), repeated questions and spam.
func play(ctx context.Context, s *runtime.Session, room *liveroom.Room, cfg Config, stream uint64, end time.Time) (int, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, stream))
	qs := room.Questions(cfg.Seed*31+stream, 400, liveroom.QuestionConfig{TypoRate: 0.2})
	sent := 0
	for i := 0; time.Now().Before(end); i++ {
		wait := time.Duration(rng.ExpFloat64() / cfg.Rate * float64(time.Second))
		select {
		case <-ctx.Done():
			return sent, ctx.Err()
		case <-time.After(wait):
		}
		burst := 1
		if rng.IntN(10) == 0 {
			burst = 3 + rng.IntN(5) // many viewers ask the same at once
		}
		q := qs[i%len(qs)]
		for b := range burst {
			if err := s.Submit(runtime.Message{Viewer: fmt.Sprintf("%s-%d", q.Viewer, b), Text: q.Text}); err != nil {
				return sent, err
			}
			sent++
		}
	}
	return sent, nil
}

// drain waits until the session's queue is empty and every started turn
// has ended, or until limit.
func drain(ctx context.Context, s *runtime.Session, turns *atomic.Int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		q := s.QueueStats()
		if q.Queued == 0 && turns.Load() >= int64(q.Started) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
