package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/livehat/livehat/harness"
)

// Config configures a Session.
type Config struct {
	// Stream names the merchant's stream the session serves.
	Stream string
	// Harness is the version the session starts on; Swap changes it.
	Harness *harness.Harness
	Model   Model
	Plugins Plugins
	// Context returns the stream's current state for the prompt's context
	// section (featured item, active coupon); nil for none.
	Context func() []harness.ContextItem
	// CatalogItems returns the ids of the stream's catalog items; nil for
	// a stream without one. With it, a tool argument the harness binds to
	// the catalog (harness.Tool.CatalogArgs) is held to these ids: a local
	// model's constrained decoder cannot write another, and a call from any
	// backend naming another is refused with the ids listed, before the
	// plugin runs.
	CatalogItems func() []string
	// CatalogWords returns what the catalog calls its items by (ids, names
	// and aliases: catalog.Catalog.Words); nil for none. With CatalogItems,
	// a local model's constrained decoder holds a tool argument the harness
	// marks as an item query (harness.Tool.QueryArgs) to these words and to
	// spans of the viewer's message, so that a lookup names what the
	// viewer or the catalog named, never an item the model remembers from
	// training. The plugin still resolves the words; nothing is refused.
	// A viewer's message with a span that finds an item makes the turn's
	// call after the reply skill a lookup (the first tool with query
	// arguments), so that an item question is answered from its lookup
	// even when the model does not know the lookup by its name.
	CatalogWords func() []string
	// CatalogVariants returns the names of the catalog's variants (sizes,
	// colours: catalog.Catalog.VariantNames), nil or empty when no item
	// has one. With CatalogItems, a local model's constrained decoder holds
	// a tool argument the harness marks as a variant
	// (harness.Tool.VariantArgs) to these names, and cannot write it at all
	// when there are none, so that a stock check never asks for a size
	// nobody sells. Left nil, variant arguments keep their own schema.
	CatalogVariants func() []string
	// Lang is the stream's language, "zh" or "en": what a turn no viewer
	// asked (a strategy narration) is spoken in before any viewer spoke.
	// Empty: the language of the strategy's instruction. Viewers' turns
	// are answered in the viewer's language.
	Lang string
	// Signals reports stream signals for strategy rules (e.g. "stock_low":
	// 1 when the featured item runs low); nil for none.
	Signals func() map[string]float64
	// RuleFired, when set, is called by RunStrategy as a rule fires,
	// before its narration is queued, so that Context can show what that
	// narration presents (the item of the featured rule that fired last)
	// rather than what a schedule computed apart from the firing says.
	RuleFired func(StrategyRule)
	// Metrics, when set, receives every turn and dropped message.
	Metrics *Metrics
	// SafeLine is said when a turn cannot produce an acceptable reply.
	SafeLine string
	// MaxTokens bounds each generation, per question the turn answers;
	// default 512 (a spoken reply or a tool call is far shorter; a model
	// that never stops must not run to the end of its context).
	MaxTokens int
	// TurnTimeout bounds a whole turn; default 20 s.
	TurnTimeout time.Duration
	// ToolTimeout bounds one tool call; default 3 s.
	ToolTimeout time.Duration
	// Memory is how many past messages of the conversation the prompt
	// keeps; default 8.
	Memory int
	// Concurrency is how many turns the session generates at once; default
	// 1. The avatar speaks one reply at a time, but with 2 the next reply
	// is generated while the current one is spoken, so a burst of distinct
	// questions waits less. Replies are emitted as they finish; a turn
	// sees the memory of the turns finished before it started.
	Concurrency int
	// Queue shapes the viewer-message queue.
	Queue QueueConfig
	// Logger receives session logs; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now. Tests replace it.
	Now func() time.Time
}

// EventKind names what a session Event carries.
type EventKind string

// Event kinds.
const (
	// EventChunk is a speakable piece of a reply.
	EventChunk EventKind = "chunk"
	// EventTurn is a finished turn (its full record in Turn).
	EventTurn EventKind = "turn"
	// EventDropped is a viewer message that will not be answered, with
	// the reason (shed, stale, duplicate merged into another).
	EventDropped EventKind = "dropped"
)

// Event is what a session tells its listeners.
type Event struct {
	Kind EventKind `json:"kind"`
	Turn string    `json:"turn,omitempty"`
	Text string    `json:"text,omitempty"`
	// Actions come with a reply's first chunk: what the avatar does as it
	// starts speaking.
	Actions []AvatarAction `json:"actions,omitempty"`
	Record  *Turn          `json:"record,omitempty"`
	Message *Message       `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
}

// Session is one stream on air. Submit viewer messages; listen for chunks
// and turn records; Swap the harness between turns; Close when the stream
// ends. It is safe for concurrent use.
type Session struct {
	id  string
	cfg Config
	log *slog.Logger

	harness atomic.Pointer[installed]
	queue   *messageQueue
	stats   *LatencyStats
	schemas sync.Map // schemaKey → *jsonschema.Schema
	signals signalCounter

	mu        sync.Mutex
	history   []harness.Message
	listeners []chan Event

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSession validates cfg and starts the session's turn loop, which runs
// until ctx is cancelled or Close is called.
func NewSession(ctx context.Context, cfg Config) (*Session, error) {
	switch {
	case cfg.Harness == nil:
		return nil, errors.New("runtime: session needs a harness")
	case cfg.Model == nil:
		return nil, errors.New("runtime: session needs a model")
	case cfg.Plugins == nil:
		return nil, errors.New("runtime: session needs plugins")
	}
	if err := harness.Validate(cfg.Harness); err != nil {
		return nil, fmt.Errorf("runtime: harness %q: %w", cfg.Harness.Name, err)
	}
	if cfg.SafeLine == "" {
		cfg.SafeLine = "Sorry, let me check that and get back to you. 稍等，我确认一下再回复您。"
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 20 * time.Second
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = 3 * time.Second
	}
	if cfg.Memory <= 0 {
		cfg.Memory = 8
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 512
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Session{
		id:    uuid.NewString(),
		cfg:   cfg,
		stats: NewLatencyStats(1024),
		done:  make(chan struct{}),
	}
	s.log = cfg.Logger.With("session", s.id, "stream", cfg.Stream)
	s.harness.Store(&installed{cfg.Harness, cfg.Harness.Version()})
	s.queue = newMessageQueue(cfg.Queue, cfg.Now)
	if m := cfg.Metrics; m != nil {
		s.queue.depth = func(n int) { m.setQueueDepth(cfg.Stream, n) }
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	go s.loop()
	return s, nil
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Harness returns the version new turns start with.
func (s *Session) Harness() *harness.Harness { return s.harness.Load().h }

// installed is a harness version with its content hash, computed once at
// install rather than on every turn (it encodes the whole harness).
type installed struct {
	h       *harness.Harness
	version string
}

// Swap installs a new harness version. A turn in flight finishes on the
// version it started with; the next turn uses h. Rolling back is the same
// operation with the older version.
func (s *Session) Swap(h *harness.Harness) error {
	if err := harness.Validate(h); err != nil {
		return fmt.Errorf("runtime: swap to %q: %w", h.Name, err)
	}
	old := s.harness.Swap(&installed{h, h.Version()}).h
	s.log.Info("harness swapped", "from", old.ShortVersion(), "to", h.ShortVersion())
	return nil
}

// Stats returns the session's latency statistics.
func (s *Session) Stats() *LatencyStats { return s.stats }

// QueueStats returns the counters of the viewer-message queue.
func (s *Session) QueueStats() QueueStats { return s.queue.stats() }

// Listen returns a channel of the session's events, closed when the
// session ends. A listener that falls behind by more than buffer events
// loses the oldest ones rather than stalling the stream.
func (s *Session) Listen(buffer int) <-chan Event {
	ch := make(chan Event, max(buffer, 1))
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		close(ch)
	default:
		s.listeners = append(s.listeners, ch)
	}
	return ch
}

func (s *Session) publish(e Event) {
	s.cfg.Metrics.observe(s.cfg.Stream, e)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.listeners {
		for {
			select {
			case ch <- e:
			default:
				select { // full: drop the oldest event and try again
				case <-ch:
				default:
				}
				continue
			}
			break
		}
	}
}

// Submit queues a viewer message. It returns an error only when the
// session has ended or the message is unusable; shedding and merging are
// reported as EventDropped events and in QueueStats.
func (s *Session) Submit(m Message) error {
	select {
	case <-s.done:
		return errors.New("runtime: session closed")
	default:
	}
	if err := m.check(s.cfg.Queue.maxBytes()); err != nil {
		s.queue.countRejected()
		return err
	}
	if m.At.IsZero() {
		m.At = s.cfg.Now()
	}
	if !m.narration {
		s.signals.observe(m)
	}
	for _, d := range s.queue.push(m) {
		s.publish(Event{Kind: EventDropped, Message: &d.msg, Reason: d.reason})
	}
	return nil
}

// Observe counts a viewer message toward the session's strategy signals
// ("messages" and "price_questions") without queueing or answering it:
// for a message of the same room that another session answers, as when a
// live room splits its viewers over several sessions and only one runs the
// strategy. The message's time is m.At (now when zero). Unusable messages
// (empty, too long, not UTF-8) are not counted and return the error Submit
// would. Observe is safe to call concurrently with Submit and RunStrategy.
func (s *Session) Observe(m Message) error {
	if err := m.check(s.cfg.Queue.maxBytes()); err != nil {
		return err
	}
	if m.At.IsZero() {
		m.At = s.cfg.Now()
	}
	s.signals.observe(m)
	return nil
}

// Warm computes the harness prefix of the prompt before the first viewer
// asks: one generation of a single token over the rendered harness, which
// a backend with a prefix cache keeps, so the first question of a stream
// costs what later ones do. Call it when a stream goes on air and after a
// harness swap.
func (s *Session) Warm(ctx context.Context) error {
	h := s.harness.Load().h
	opts := harness.RenderOptions{OmitToolsSection: appliesToolTemplate(s.cfg.Model)}
	p, err := harness.Render(h, harness.Conversation{Context: s.context(), Messages: []harness.Message{{Role: harness.RoleUser, Content: "hi"}}}, opts)
	if err != nil {
		return fmt.Errorf("runtime: warm: %w", err)
	}
	if _, err := s.cfg.Model.Generate(ctx, Request{Messages: p.Messages, Tools: p.Tools, MaxTokens: 1}); err != nil {
		return fmt.Errorf("runtime: warm: %w", err)
	}
	return nil
}

// Narrate queues a proactive turn (a narration_tick) with the given
// instruction, e.g. "introduce the featured item".
func (s *Session) Narrate(instruction string) error {
	return s.Submit(Message{Viewer: "host", Text: instruction, narration: true})
}

// Close stops the session: the turn in flight is cancelled, queued
// messages are dropped (an EventDropped each, reason "session closed"),
// listeners are closed. It waits for the loop.
func (s *Session) Close() {
	s.cancel()
	<-s.done
}

// loop runs cfg.Concurrency turn workers until the session ends, then
// closes the listeners.
func (s *Session) loop() {
	defer func() {
		s.mu.Lock()
		for _, ch := range s.listeners {
			close(ch)
		}
		s.listeners = nil
		s.mu.Unlock()
	}()
	defer close(s.done)
	var wg sync.WaitGroup
	for range s.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work()
		}()
	}
	<-s.ctx.Done()
	// Closing the queue wakes the workers; what it still held is dropped
	// with a reason, so no message is lost without one.
	for _, d := range s.queue.close() {
		s.publish(Event{Kind: EventDropped, Message: &d.msg, Reason: d.reason})
	}
	wg.Wait()
}

// work takes questions off the queue and answers them, one turn at a time.
func (s *Session) work() {
	for {
		batch, dropped, ok := s.queue.pop(s.ctx)
		for _, d := range dropped {
			s.publish(Event{Kind: EventDropped, Message: &d.msg, Reason: d.reason})
		}
		if !ok {
			return
		}
		t := s.runTurn(batch)
		s.publish(Event{Kind: EventTurn, Turn: t.ID, Record: t})
	}
}

// context returns the stream context for the prompt.
func (s *Session) context() []harness.ContextItem {
	if s.cfg.Context == nil {
		return nil
	}
	return s.cfg.Context()
}

// runTurn answers the questions of one turn: one, or several of one
// class when QueueConfig.Batch allows. The first is the oldest.
func (s *Session) runTurn(batch []input) *Turn {
	cur := s.harness.Load() // the whole turn runs on this version
	h := cur.h
	now := s.cfg.Now()
	t := &Turn{
		ID:             uuid.NewString(),
		Session:        s.id,
		HarnessVersion: cur.version,
		Event:          batch[0].event,
	}
	var texts []string
	for i, in := range batch {
		texts = append(texts, in.text)
		for _, m := range in.asks {
			t.Asked = append(t.Asked, Asked{Viewer: m.Viewer, Text: m.Text, Question: i, Waited: now.Sub(m.At)})
		}
	}
	t.Input = strings.Join(texts, "\n")
	t.Timing.Queue = now.Sub(batch[0].at)
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.TurnTimeout)
	defer cancel()
	r := &turnRunner{s: s, h: h, turn: t, start: time.Now()}
	s.mu.Lock()
	history := append([]harness.Message(nil), s.history...)
	s.mu.Unlock()
	r.run(ctx, batch, history)
	t.Timing.Total = time.Since(r.start) + t.Timing.Queue
	if t.Outcome == OutcomeReplied || t.Outcome == OutcomeSafeLine {
		s.remember(t)
		s.stats.Add(t.Timing)
	}
	s.log.Debug("turn", "id", t.ID, "outcome", t.Outcome, "reason", t.Reason, "total", t.Timing.Total)
	return t
}

// remember keeps the viewer's message and the final reply (not the tool
// chatter) as conversation memory, bounded by cfg.Memory.
func (s *Session) remember(t *Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(t.Messages) > 0 {
		s.history = append(s.history, t.Messages[0])
	}
	s.history = append(s.history, harness.Message{Role: harness.RoleAssistant, Content: t.Reply})
	if n := len(s.history) - s.cfg.Memory; n > 0 {
		s.history = append([]harness.Message(nil), s.history[n:]...)
	}
}

// schemaKey identifies a tool of one harness version; versions are
// immutable once installed, so the pointer names the version.
type schemaKey struct {
	h    *harness.Harness
	tool string
}

// schema returns the compiled parameter schema of a tool, compiled once
// per harness version rather than on every call.
func (s *Session) schema(h *harness.Harness, tool harness.Tool) (*jsonschema.Schema, error) {
	key := schemaKey{h, tool.Name}
	if v, ok := s.schemas.Load(key); ok {
		return v.(*jsonschema.Schema), nil
	}
	sc, err := harness.CompileSchema(tool.Parameters)
	if err != nil {
		return nil, err
	}
	s.schemas.Store(key, sc)
	return sc, nil
}
