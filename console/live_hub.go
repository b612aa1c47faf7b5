package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/plugins"
	"github.com/livehat/livehat/runtime"
)

// Live-session timing.
const (
	// liveIdleAfter closes a session nobody watches, feeds or airs.
	liveIdleAfter = 5 * time.Minute
	// liveRefreshEvery is how often open sessions re-read their stream,
	// so a harness published elsewhere applies at the next turn boundary
	// even when no viewer writes.
	liveRefreshEvery = 2 * time.Second
	// liveBacklog is how many recent events a room replays to a client
	// that reconnects with Last-Event-ID.
	liveBacklog = 256
	// liveRetireAfter is how long a session that left a room (an
	// experiment's arm that ended) may take to answer what it was asked
	// before it is closed and what it still holds is handed on.
	liveRetireAfter = time.Minute
	// liveArrangeRetry is how long a room waits before it tries again to
	// open an experiment's arms that failed to open.
	liveArrangeRetry = 30 * time.Second
)

// liveHub holds the console's live rooms: one per stream that is in use,
// each with one runtime.Session, or one per arm while a viewer-unit
// experiment runs on the stream (live_arms.go).
type liveHub struct {
	s       *Server
	log     *slog.Logger
	metrics *runtime.Metrics

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	rooms map[string]*liveRoom // by stream id
}

func newLiveHub(s *Server) *liveHub {
	h := &liveHub{s: s, log: s.log.With("area", "live"), rooms: map[string]*liveRoom{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if s.cfg.Metrics != nil {
		m, err := runtime.NewMetrics(s.cfg.Metrics)
		if err != nil {
			// Someone registered the runtime's collectors already: the
			// series exist but live sessions cannot feed them.
			h.log.Warn("live sessions run without turn metrics", "err", err)
		}
		h.metrics = m
	}
	h.wg.Add(1)
	go h.maintain()
	return h
}

// close ends every session; the console calls it on shutdown.
func (h *liveHub) close() {
	h.cancel()
	h.mu.Lock()
	rooms := make([]*liveRoom, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	h.mu.Unlock()
	for _, r := range rooms {
		r.stop("console shutting down")
	}
	h.wg.Wait()
}

// room returns the stream's room, creating it (without a session).
func (h *liveHub) room(st *store.Stream) *liveRoom {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rooms[st.ID]
	if !ok {
		r = &liveRoom{hub: h, streamID: st.ID, orgID: st.OrgID, subs: map[*liveSub]struct{}{}, active: time.Now()}
		h.rooms[st.ID] = r
	}
	return r
}

// existing returns the stream's room if it has one.
func (h *liveHub) existing(streamID string) *liveRoom {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rooms[streamID]
}

// maintain refreshes open sessions from the store and closes idle ones.
func (h *liveHub) maintain() {
	defer h.wg.Done()
	t := time.NewTicker(liveRefreshEvery)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		rooms := make([]*liveRoom, 0, len(h.rooms))
		for _, r := range h.rooms {
			rooms = append(rooms, r)
		}
		h.mu.Unlock()
		for _, r := range rooms {
			r.maintain(h.ctx)
		}
	}
}

// resume reopens the sessions of streams left on air by a previous run.
func (h *liveHub) resume() {
	defer h.wg.Done()
	refs, err := h.s.store.OnAirStreams(h.ctx)
	if err != nil {
		h.log.Warn("cannot list on-air streams", "err", err)
		return
	}
	for _, ref := range refs {
		st, err := h.s.store.StreamInOrg(h.ctx, ref.OrgID, ref.ID)
		if err != nil {
			continue
		}
		if _, err := h.room(st).session(h.ctx, st); err != nil {
			h.log.Warn("on-air stream not resumed", "stream", st.ID, "err", err)
		}
	}
}

// streamSetup is what a session of a stream runs, derived from one
// revision of the stream.
type streamSetup struct {
	revision int64
	// bound is the harness version the stream is bound to; harness is
	// that version with the stream's persona and banned claims applied,
	// and effective its content hash.
	bound string
	// pinned is the harness version an experiment's arm fixed, which is
	// then bound; "" follows the stream's.
	pinned    string
	harness   *harness.Harness
	effective string
	catalog   string
	// context is the stream context at the start of the strategy (what a
	// rehearsal, a preview or an API turn shows); source makes it at any
	// moment of the strategy's schedule for a live session.
	context  []harness.ContextItem
	source   *contextSource
	items    []string // the catalog's item ids, which tool arguments are held to
	words    []string // the catalog's ids, names and aliases, which item queries are held to
	variants []string // the catalog's variant names, which variant arguments are held to
	strategy runtime.Strategy
	onAir    bool
}

// errNoModel is answered 503: the console was started without a model.
var errNoModel = fiber.NewError(fiber.StatusServiceUnavailable, "no model is configured for live sessions")

// liveHarness resolves the harness version a stream is bound to: the one
// place live sessions get harness bodies from (the organisation's stored
// versions).
func (s *Server) liveHarness(ctx context.Context, orgID, version string) (*harness.Harness, error) {
	h, _, err := s.harnessVersion(ctx, orgID, version)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous):
		return nil, fieldError(fiber.StatusConflict, "harness_version", fmt.Sprintf("the stream's harness version %q is not a stored version: publish one to the stream", version))
	case err != nil:
		return nil, err
	}
	return h, nil
}

// setupOf derives what a session of st runs.
func (h *liveHub) setupOf(ctx context.Context, st *store.Stream) (*streamSetup, error) {
	return h.setupPinned(ctx, st, "")
}

// setupPinned derives what a session of st runs when an experiment's arm
// fixes its harness version (pinned; "" keeps the stream's own): the
// stream's persona, banned claims, catalog and strategy apply to every arm.
func (h *liveHub) setupPinned(ctx context.Context, st *store.Stream, pinned string) (*streamSetup, error) {
	version := st.HarnessVersion
	if pinned != "" {
		version = pinned
	}
	if version == "" {
		return nil, fieldError(fiber.StatusConflict, "harness_version", "the stream is bound to no harness version: publish one to it first")
	}
	base, err := h.s.liveHarness(ctx, st.OrgID, version)
	if err != nil {
		return nil, err
	}
	hs, err := personalize(base, st.Persona, st.BannedClaims)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", st.ID, err)
	}
	// The sessions' plugins read the stored catalog as a version 2
	// document in the stream's currency, whatever version was stored.
	cat, err := storedCatalog(st)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(cat)
	if err != nil {
		return nil, fmt.Errorf("stream %s: catalog: %w", st.ID, err)
	}
	setup := &streamSetup{revision: st.Revision, bound: base.Version(), pinned: pinned, harness: hs, effective: hs.Version(),
		catalog: string(doc), items: productIDs(cat), words: cat.Words(), variants: cat.VariantNames(), onAir: st.OnAir}
	if len(st.Strategy) > 0 && string(st.Strategy) != "null" {
		if err := json.Unmarshal(st.Strategy, &setup.strategy); err != nil {
			return nil, fmt.Errorf("stream %s: strategy: %w", st.ID, err)
		}
	}
	setup.source = &contextSource{cat: cat, feature: featureScheduleOf(cat, setup.strategy)}
	setup.context = setup.source.at("")
	return setup, nil
}

// personalize applies a stream's persona and banned claims to a harness
// version the way the harness and its hooks read them: the persona joins
// the persona section of the prompt; banned claims join the rules and the
// "banned" list of every hook configured with one (the compliance hook),
// which then sends a reply that makes one back to the model.
func personalize(base *harness.Harness, persona string, banned []string) (*harness.Harness, error) {
	persona = strings.TrimSpace(persona)
	if persona == "" && len(banned) == 0 {
		return base, nil
	}
	h := base.Clone()
	if persona != "" {
		found := false
		for i, s := range h.Layout.Sections {
			if s.Kind == harness.SectionPersona {
				h.Layout.Sections[i].Text = strings.TrimSpace(s.Text + "\n" + "The merchant describes the host: " + persona)
				found = true
				break
			}
		}
		if !found {
			h.Layout.Sections = append([]harness.Section{{Kind: harness.SectionPersona, Title: "Persona", Text: persona}}, h.Layout.Sections...)
		}
	}
	if len(banned) > 0 {
		for i, s := range h.Layout.Sections {
			if s.Kind == harness.SectionRules {
				h.Layout.Sections[i].Items = append(h.Layout.Sections[i].Items, "Never say any of these claims: "+strings.Join(banned, "; ")+".")
				break
			}
		}
		for i, k := range h.Hooks {
			cfg := map[string]any{}
			if len(k.Config) == 0 || json.Unmarshal(k.Config, &cfg) != nil {
				continue
			}
			list, ok := cfg["banned"].([]any)
			if !ok {
				continue
			}
			for _, b := range banned {
				if !bannedListHas(list, b) {
					list = append(list, b)
				}
			}
			cfg["banned"] = list
			raw, err := json.Marshal(cfg)
			if err != nil {
				return nil, fmt.Errorf("hook %s: config: %w", k.Name, err)
			}
			h.Hooks[i].Config = raw
		}
	}
	if err := harness.Validate(h); err != nil {
		return nil, fmt.Errorf("persona and banned claims make the harness invalid: %w", err)
	}
	return h, nil
}

func bannedListHas(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// catalogContext is the stream context a session's prompt shows: the
// featured item (the product of id featured; the catalog's first when
// there is none) and the items on sale; none for an empty catalog.
func catalogContext(c *catalog.Catalog, featured string) []harness.ContextItem {
	if len(c.Products) == 0 {
		return nil
	}
	// The lines are runtime's, which the training rooms write too, so the
	// bundled model reads here exactly what it was trained on.
	names, ids := make([]string, len(c.Products)), make([]string, len(c.Products))
	for i, p := range c.Products {
		names[i], ids[i] = p.Name, p.ID
	}
	f := c.Product(featured)
	if f == nil {
		f = &c.Products[0]
	}
	return []harness.ContextItem{runtime.FeaturedItem(f.Name, f.ID), runtime.ItemsOnSale(names, ids)}
}

// featureSchedule is what a stream features: before any rule fired, the
// item of the strategy's first featured rule (the catalog's first without
// one); then the item the featuring rule that fired last presented. A
// sold-out item that a switch rule moves away from is replaced by the item
// the host presents instead.
type featureSchedule struct {
	cat     *catalog.Catalog
	first   string
	instead map[string]string
}

// featureScheduleOf reads the featured and sold-out rules the strategy
// builder wrote (rules it did not write feature nothing).
func featureScheduleOf(cat *catalog.Catalog, st runtime.Strategy) featureSchedule {
	f := featureSchedule{cat: cat}
	if len(cat.Products) > 0 {
		f.first = cat.Products[0].ID
	}
	plan := planOf(st)
	for _, r := range plan.Featured {
		if cat.Product(r.Item) != nil {
			f.first = r.Item
			break
		}
	}
	for _, r := range plan.SoldOut {
		if p := cat.Product(r.Item); p != nil && soldOut(p) && cat.Product(r.To) != nil {
			if f.instead == nil {
				f.instead = map[string]string{}
			}
			f.instead[r.Item] = r.To
		}
	}
	return f
}

// presents is the item a rule presents as it fires: a builder's featured
// rule's item, a sold-out switch's replacement; "" for any other rule and
// for items the catalog does not have.
func (f featureSchedule) presents(r runtime.StrategyRule) string {
	b, ok := builderRule(r)
	var id string
	switch {
	case !ok:
		return ""
	case b.featured != nil:
		id = b.featured.Item
	case b.soldOut != nil:
		id = b.soldOut.To
	}
	if id == "" || f.cat.Product(id) == nil {
		return ""
	}
	return id
}

// at is the item featured now, given the item the featuring rule that
// fired last presented ("" before any fired).
func (f featureSchedule) at(presented string) string {
	id := presented
	if id == "" || f.cat.Product(id) == nil {
		id = f.first
	}
	// Follow switches away from sold-out items; a cycle of them ends
	// after one round.
	for range len(f.instead) {
		to, ok := f.instead[id]
		if !ok {
			break
		}
		id = to
	}
	return id
}

// contextSource makes a stream's context from its catalog and strategy.
type contextSource struct {
	cat     *catalog.Catalog
	feature featureSchedule
}

// at is the stream context once the featuring rule that fired last
// presented the item presented ("" before any fired).
func (c *contextSource) at(presented string) []harness.ContextItem {
	return catalogContext(c.cat, c.feature.at(presented))
}

// switchablePlugins serves a session from the plugins of the stream's
// current catalog; a catalog import swaps them between tool calls.
type switchablePlugins struct {
	cur atomic.Pointer[runtime.Plugins]
}

func (p *switchablePlugins) set(ps runtime.Plugins) { p.cur.Store(&ps) }

func (p *switchablePlugins) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	return (*p.cur.Load()).Tool(ctx, plugin, export, args)
}

func (p *switchablePlugins) Hook(ctx context.Context, plugin, export string, input json.RawMessage) (harness.HookDecision, error) {
	return (*p.cur.Load()).Hook(ctx, plugin, export, input)
}

func (p *switchablePlugins) Skill(ctx context.Context, plugin, export string, input json.RawMessage) (string, error) {
	return (*p.cur.Load()).Skill(ctx, plugin, export, input)
}

// liveSession is a room's runtime.Session with what it was built from.
type liveSession struct {
	sess    *runtime.Session
	plugins *switchablePlugins
	model   string // the model's name, fixed for the session
	context atomic.Pointer[contextSource]

	mu       sync.Mutex
	setup    *streamSetup
	pin      armPin
	versions map[string]string // effective version → bound version
	strategy context.CancelFunc
	// presented is the item the featuring rule that fired last presented
	// while the running strategy runs ("" before any fired, or when none
	// runs): the featured-item line follows the firing, not a clock.
	presented string

	// finished counts the turns the pump has seen end, to tell when a
	// retired session has answered everything it started.
	finished atomic.Int64
	// retired is set when the session left its room's routing: what it
	// still holds when it closes is handed to the room's sessions.
	retired atomic.Bool
	// waiting is the effective version the session waits to switch to
	// while its plugins load ("" when none), so the wait is told once.
	waiting atomic.Value

	pumped chan struct{} // closed when the event pump has stored the last turn
}

// streamContext is the session's stream context for the turn being
// built: the featured item is the one the strategy's featuring rule that
// fired last presented, so that a question about "this one" and the
// narration refer to what the host presents; before any fired, the
// strategy's first featured item.
func (ls *liveSession) streamContext() []harness.ContextItem {
	ls.mu.Lock()
	presented := ls.presented
	ls.mu.Unlock()
	return ls.context.Load().at(presented)
}

// ruleFired records the item a strategy rule presents as it fires, before
// its narration turn reads the context.
func (ls *liveSession) ruleFired(r runtime.StrategyRule) {
	item := ls.context.Load().feature.presents(r)
	if item == "" {
		return
	}
	ls.mu.Lock()
	if ls.strategy != nil {
		ls.presented = item
	}
	ls.mu.Unlock()
}

// catalogItems returns the item ids of the session's current catalog.
func (ls *liveSession) catalogItems() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.setup.items
}

// catalogWords returns the ids, names and aliases of the session's
// current catalog.
func (ls *liveSession) catalogWords() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.setup.words
}

// catalogVariants returns the variant names of the session's current
// catalog.
func (ls *liveSession) catalogVariants() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.setup.variants
}

// newSession builds a runtime session for a stream setup. The model is
// the checkpoint an experiment's arm names (checkpointModel), or with ""
// the stream's own model server or else the organisation's serving model
// when the session opens (streamModel); a promotion or a new server
// setting reaches sessions opened after it.
func (h *liveHub) newSession(ctx context.Context, st *store.Stream, setup *streamSetup, checkpoint string, cfg runtime.Config) (*runtime.Session, *switchablePlugins, string, error) {
	model, modelName, err := h.s.streamModel(ctx, st.OrgID, st.ID, checkpoint)
	if err != nil {
		return nil, nil, "", err
	}
	ps, err := h.s.sessionPlugins(ctx, st.OrgID, []byte(setup.catalog))
	if err != nil {
		return nil, nil, "", fmt.Errorf("stream %s: plugins: %w", st.ID, err)
	}
	sp := &switchablePlugins{}
	sp.set(ps)
	cfg.Stream, cfg.Harness, cfg.Model, cfg.Plugins, cfg.Metrics = st.ID, setup.harness, model, sp, h.metrics
	cfg.Logger = h.log
	cfg.Lang = streamLang(setup.context)
	sess, err := runtime.NewSession(ctx, cfg)
	if err != nil {
		return nil, nil, "", err
	}
	return sess, sp, modelName, nil
}

// streamLang is the language a stream's host speaks on its own initiative
// before any viewer spoke: Chinese when the items it sells (the stream
// context) are named in Chinese, else English.
func streamLang(context []harness.ContextItem) string {
	for _, c := range context {
		for _, r := range c.Text {
			if unicode.Is(unicode.Han, r) {
				return "zh"
			}
		}
	}
	return "en"
}

// liveRoom is one stream in the live view: its event feed (with a backlog
// for reconnecting clients) and its sessions, if they are open.
type liveRoom struct {
	hub      *liveHub
	streamID string
	orgID    string

	mu      sync.Mutex
	seq     int64
	backlog []liveEvent
	subs    map[*liveSub]struct{}
	// live is the control session: it runs the strategy (narration) and
	// answers every viewer unless a viewer-unit experiment splits them.
	live *liveSession
	// split is the running viewer-unit experiment whose arms each have a
	// session in arms (by arm name; the control arm's is live).
	split *experiment.Experiment
	arms  map[string]*liveSession
	// retiring are sessions that left the routing and close once they
	// have answered what they were asked (closeRetired).
	retiring []retiringSession
	// failedLayout and failedAt hold back a layout that failed to open.
	failedLayout string
	failedAt     time.Time
	active       time.Time
	// dropped counts messages the sessions will not answer, by reason.
	dropped map[string]int
}

// liveEvent is one server-sent event of a room.
type liveEvent struct {
	id   int64
	kind string
	data []byte
}

// liveSub is one SSE client of a room.
type liveSub struct {
	ch chan liveEvent
	// lost is set when the client fell too far behind; its stream ends
	// and the browser reconnects, replaying from the backlog.
	lost atomic.Bool
}

// publish sends an event to every subscriber and keeps it in the backlog.
func (r *liveRoom) publish(kind string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.publishLocked(kind, v)
}

// publishLocked is publish for callers holding r.mu.
func (r *liveRoom) publishLocked(kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		r.hub.log.Error("live event not encodable", "kind", kind, "err", err)
		return
	}
	r.seq++
	ev := liveEvent{id: r.seq, kind: kind, data: data}
	r.backlog = append(r.backlog, ev)
	if n := len(r.backlog) - liveBacklog; n > 0 {
		r.backlog = append([]liveEvent(nil), r.backlog[n:]...)
	}
	for sub := range r.subs {
		select {
		case sub.ch <- ev:
		default:
			sub.lost.Store(true)
			delete(r.subs, sub)
			close(sub.ch)
		}
	}
}

// subscribe adds an SSE client; it first receives the backlog after
// lastID (0: none).
func (r *liveRoom) subscribe(lastID int64) *liveSub {
	r.mu.Lock()
	defer r.mu.Unlock()
	sub := &liveSub{ch: make(chan liveEvent, liveBacklog+64)}
	if lastID > 0 {
		for _, ev := range r.backlog {
			if ev.id > lastID {
				sub.ch <- ev
			}
		}
	}
	r.subs[sub] = struct{}{}
	r.active = time.Now()
	return sub
}

func (r *liveRoom) unsubscribe(sub *liveSub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.subs[sub]; ok {
		delete(r.subs, sub)
		close(sub.ch)
	}
	r.active = time.Now()
}

// session returns the room's control session, opening the room's
// sessions (or bringing them to a newer revision of st, or to the arms of
// an experiment that started or stopped) first.
func (r *liveRoom) session(ctx context.Context, st *store.Stream) (*liveSession, error) {
	r.mu.Lock()
	r.active = time.Now()
	r.mu.Unlock()
	return r.sync(ctx, st, true)
}

// sync arranges the room's sessions for the experiment running on the
// stream (liveRoom.arrange) and applies st to each. A closed room is
// opened only when reopen is set; otherwise sync leaves it closed.
func (r *liveRoom) sync(ctx context.Context, st *store.Stream, reopen bool) (*liveSession, error) {
	want, lookupErr := r.hub.s.layoutFor(ctx, st.ID)
	if lookupErr != nil {
		r.hub.log.Warn("live room: experiment lookup failed; the sessions stay as they are", "stream", st.ID, "err", lookupErr)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil && (!reopen || r.hub.ctx.Err() != nil) {
		if !reopen {
			return nil, nil
		}
		return nil, fiber.NewError(fiber.StatusServiceUnavailable, "the console is shutting down")
	}
	held := r.live != nil && want.key() == r.failedLayout && time.Since(r.failedAt) < liveArrangeRetry
	if (lookupErr == nil || r.live == nil) && !held && r.hub.ctx.Err() == nil {
		if err := r.arrange(ctx, st, want); err != nil {
			if r.live == nil {
				return nil, err
			}
			r.failedLayout, r.failedAt = want.key(), time.Now()
			r.hub.log.Warn("live room: the experiment's sessions could not be opened; the room keeps its sessions", "stream", st.ID, "err", err)
		}
	}
	for _, ls := range r.sessionsLocked() {
		if err := ls.apply(r, st); err != nil {
			if ls == r.live {
				return r.live, err
			}
			r.hub.log.Warn("live arm session not updated", "stream", st.ID, "arm", ls.pinned().arm, "err", err)
		}
	}
	return r.live, nil
}

// open starts a session of the room for st under an arm's pin, with its
// event pump and warm-up; the caller holds r.mu and places it.
func (r *liveRoom) open(ctx context.Context, st *store.Stream, pin armPin) (*liveSession, error) {
	setup, err := r.hub.setupPinned(ctx, st, pin.version)
	if err != nil {
		return nil, err
	}
	ls := &liveSession{versions: map[string]string{setup.effective: setup.bound}, setup: setup, pin: pin, pumped: make(chan struct{})}
	ls.context.Store(setup.source)
	sess, sp, modelName, err := r.hub.newSession(r.hub.ctx, st, setup, pin.checkpoint, runtime.Config{
		Context:      ls.streamContext,
		CatalogItems: ls.catalogItems,
		CatalogWords: ls.catalogWords, CatalogVariants: ls.catalogVariants,
		Signals:   ls.strategySignals,
		RuleFired: ls.ruleFired,
	})
	if err != nil {
		return nil, err
	}
	ls.sess, ls.plugins, ls.model = sess, sp, modelName
	r.hub.wg.Add(2)
	go r.pump(ls, sess.Listen(512))
	go ls.warm(r.hub, setup.harness)
	r.hub.log.Info("live session opened", "stream", st.ID, "session", sess.ID(), "harness", setup.harness.ShortVersion(),
		"experiment", pin.experiment, "arm", pin.arm, "model", modelName)
	return ls, nil
}

// warm prepares a new session before its first viewer asks: the model
// computes the harness prefix (Session.Warm), and every hook of the
// harness runs once on a neutral input, since the first call of a plugin
// instance can outlast its deadline on a busy machine and turn a
// fail-closed hook into a safe line.
func (ls *liveSession) warm(h *liveHub, hs *harness.Harness) {
	defer h.wg.Done()
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	if err := ls.sess.Warm(ctx); err != nil {
		h.log.Debug("model warm-up failed", "err", err)
	}
	for _, k := range hs.Hooks {
		in, _ := json.Marshal(plugins.HookInput{Event: k.Event, Text: "hello", Viewer: &plugins.Viewer{ID: "warm-up"},
			Config: k.Config, ReplyChars: hs.Pipeline.ReplyChars.Value})
		if _, err := ls.plugins.Hook(ctx, k.Plugin, k.Export, in); err != nil {
			h.log.Debug("hook warm-up failed", "hook", k.Name, "err", err)
		}
	}
}

// state describes the session for the live view.
func (ls *liveSession) state(streamID string) fiber.Map {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	m := fiber.Map{"stream": streamID, "session": ls.sess.ID(), "harness_version": ls.setup.bound,
		"effective_version": ls.setup.effective, "on_air": ls.setup.onAir, "model": ls.model}
	if ls.pin.arm != "" {
		m["experiment"], m["arm"] = ls.pin.experiment, ls.pin.arm
	}
	return m
}

// pinned is the arm the session serves.
func (ls *liveSession) pinned() armPin {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.pin
}

// repin moves a kept session to another arm of the same model; the next
// apply brings its harness to the arm's version.
func (ls *liveSession) repin(pin armPin) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.pin = pin
}

// onAir reports whether the stream was on air at the session's revision.
func (ls *liveSession) onAir() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.setup.onAir
}

// idle reports whether the session has no question queued or in a turn.
func (ls *liveSession) idle() bool {
	qs := ls.sess.QueueStats()
	return qs.Queued == 0 && int64(qs.Started) <= ls.finished.Load()
}

// apply brings a session to a newer revision of its stream, or to the
// harness version of the arm it was moved to: a new harness version (or
// persona, banned claims) is swapped in for the next turn, a new catalog
// serves the next tool call, and the control session's strategy starts
// or stops with the on-air switch. The caller holds r.mu.
func (ls *liveSession) apply(r *liveRoom, st *store.Stream) error {
	ls.mu.Lock()
	cur, pin := ls.setup, ls.pin
	ls.mu.Unlock()
	if st.Revision <= cur.revision && pin.version == cur.pinned {
		return nil // the same revision, or a read older than the session's
	}
	next, err := r.hub.setupPinned(r.hub.ctx, st, pin.version)
	if err != nil {
		return err
	}
	// A new harness version takes a plugin set of this moment (the one the
	// session holds may predate a plugin the version needs) and switches
	// only once every plugin it names is loaded; until then the session
	// keeps its version, and the next sync tries again.
	swap := next.effective != cur.effective
	if swap || next.catalog != cur.catalog {
		ps, err := r.hub.s.sessionPlugins(r.hub.ctx, st.OrgID, []byte(next.catalog))
		if err != nil {
			return fmt.Errorf("stream %s: plugins: %w", st.ID, err)
		}
		if missing := r.hub.s.unloadedPlugins(r.hub.ctx, st.OrgID, next.harness); swap && len(missing) > 0 {
			if ls.waiting.Swap(next.effective) != next.effective {
				r.hub.log.Warn("live session keeps its harness until the new version's plugins load", "stream", st.ID,
					"version", next.bound, "missing", missing)
				if ls == r.live {
					r.publishLocked("harness_pending", fiber.Map{"harness_version": next.bound, "waiting_for": missing})
				}
			}
			next.harness, next.effective, next.bound, next.revision = cur.harness, cur.effective, cur.bound, cur.revision
			swap = false
		}
		ls.plugins.set(ps)
		ls.context.Store(next.source)
	}
	if swap {
		if err := ls.sess.Swap(next.harness); err != nil {
			return err
		}
		ls.waiting.Store("")
		if ls == r.live {
			r.publishLocked("harness", fiber.Map{"harness_version": next.bound, "effective_version": next.effective})
		}
	}
	ls.mu.Lock()
	ls.setup = next
	ls.versions[next.effective] = next.bound
	strategyChanged := !sameJSON(cur.strategy, next.strategy)
	ls.mu.Unlock()
	switch {
	case ls != r.live:
		// Only the control session speaks unasked.
	case !next.onAir:
		ls.stopStrategy()
	case !cur.onAir || strategyChanged:
		ls.stopStrategy()
		ls.startStrategy(r.hub.ctx)
	}
	return nil
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// startStrategy runs the stream's marketing strategy while it is on air.
func (ls *liveSession) startStrategy(ctx context.Context) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.strategy != nil || len(ls.setup.strategy.Rules) == 0 {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	ls.strategy, ls.presented = cancel, ""
	go func(st runtime.Strategy) { _, _ = ls.sess.RunStrategy(sctx, st, time.Second) }(ls.setup.strategy)
}

func (ls *liveSession) stopStrategy() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.strategy != nil {
		ls.strategy()
		ls.strategy, ls.presented = nil, ""
	}
}

// boundVersion is the stream's harness version behind an effective one.
func (ls *liveSession) boundVersion(effective string) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.versions[effective]
}

// closeSession ends the room's sessions together (off air, idle, deleted
// stream), the retiring ones included; the room and its subscribers stay.
// The caller holds r.mu.
func (r *liveRoom) closeSession(reason string) {
	control := r.live
	all := r.sessionsLocked()
	for _, x := range r.retiring {
		all = append(all, x.ls)
	}
	if len(all) == 0 {
		return
	}
	r.live, r.split, r.arms, r.retiring = nil, nil, nil, nil
	for _, ls := range all {
		ls.stopStrategy()
	}
	r.mu.Unlock()
	for _, ls := range all {
		ls.sess.Close()
	}
	for _, ls := range all {
		<-ls.pumped
	}
	r.mu.Lock()
	if control == nil {
		return
	}
	r.hub.log.Info("live session closed", "stream", r.streamID, "session", control.sess.ID(), "sessions", len(all), "reason", reason)
	r.publishLocked("closed", fiber.Map{"session": control.sess.ID(), "reason": reason})
}

// stop closes the sessions and every subscriber, and forgets the room.
func (r *liveRoom) stop(reason string) {
	r.mu.Lock()
	r.closeSession(reason)
	for sub := range r.subs {
		delete(r.subs, sub)
		close(sub.ch)
	}
	r.mu.Unlock()
	r.hub.mu.Lock()
	if r.hub.rooms[r.streamID] == r {
		delete(r.hub.rooms, r.streamID)
	}
	r.hub.mu.Unlock()
}

// maintain re-reads the stream for open sessions (and the experiment on
// it), closes retired sessions that are done, and closes the sessions
// when nobody has used them for liveIdleAfter.
func (r *liveRoom) maintain(ctx context.Context) {
	r.closeRetired()
	r.mu.Lock()
	ls, idle := r.live, len(r.subs) == 0 && time.Since(r.active) > liveIdleAfter
	r.mu.Unlock()
	if ls == nil {
		if idle {
			r.stop("idle")
		}
		return
	}
	st, err := r.hub.s.store.StreamInOrg(ctx, r.orgID, r.streamID)
	if errors.Is(err, store.ErrNotFound) {
		r.stop("the stream was deleted")
		return
	}
	if err != nil {
		return
	}
	if _, err := r.sync(ctx, st, false); err != nil {
		r.hub.log.Warn("live session not updated", "stream", r.streamID, "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Plugins enabled, disabled or rolled back since reach the sessions
	// here (the plugin sets are cached, so this is cheap).
	for _, ls := range r.sessionsLocked() {
		ls.mu.Lock()
		catalog := ls.setup.catalog
		ls.mu.Unlock()
		if ps, err := r.hub.s.sessionPlugins(ctx, r.orgID, []byte(catalog)); err == nil {
			ls.plugins.set(ps)
		}
	}
	if idle && !st.OnAir {
		r.closeSession("idle")
	}
}

// pump turns a session's events into the room's feed and stores every
// finished turn, under the arm the session serves.
func (r *liveRoom) pump(ls *liveSession, events <-chan runtime.Event) {
	defer r.hub.wg.Done()
	defer close(ls.pumped)
	shed := 0 // messages dropped since the last turn, for the experiment's guardrail
	for e := range events {
		switch e.Kind {
		case runtime.EventChunk:
			r.publish("chunk", chunkEvent{Turn: e.Turn, Text: e.Text, Actions: e.Actions, Lang: langOfText(e.Text), Arm: ls.pinned().arm})
		case runtime.EventTurn:
			ls.finished.Add(1)
			pin := ls.pinned()
			trace := r.hub.record(r.streamID, store.TurnSourceLive, ls.boundVersion(e.Record.HarnessVersion), ls.model, e.Record)
			trace.Arm = pin.arm
			r.hub.s.experimentTurn(r.streamID, trace.HarnessVersion, pin, e.Record, shed)
			shed = 0
			r.publish("turn", trace)
		case runtime.EventDropped:
			if ls.retired.Load() && strings.HasPrefix(e.Reason, "session closed") && r.handOff(*e.Message) {
				continue
			}
			shed++
			r.mu.Lock()
			if r.dropped == nil {
				r.dropped = map[string]int{}
			}
			reason, _, _ := strings.Cut(e.Reason, ":")
			r.dropped[reason]++
			r.mu.Unlock()
			r.publish("dropped", fiber.Map{"viewer": e.Message.Viewer, "text": e.Message.Text, "reason": e.Reason})
		}
	}
}

// record stores a finished turn and returns its trace.
func (h *liveHub) record(streamID, source, bound, model string, t *runtime.Turn) turnTrace {
	trace := traceOf(t)
	trace.Source, trace.HarnessVersion, trace.Model = source, bound, model
	steps, _ := json.Marshal(t.Steps)
	msgs, _ := json.Marshal(t.Messages)
	actions, _ := json.Marshal(orEmpty(t.Actions))
	timing, _ := json.Marshal(t.Timing)
	viewers := t.Viewers
	if t.Event == harness.EventNarrationTick {
		viewers = nil // the strategy, not a viewer, asked
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.s.store.AddLiveTurn(ctx, store.LiveTurn{ID: t.ID, StreamID: streamID, SessionID: t.Session, Source: source,
		Event: string(t.Event), Viewers: viewers, Input: t.Input, Reply: t.Reply, Outcome: string(t.Outcome), Reason: t.Reason,
		HarnessVersion: bound, EffectiveVersion: t.HarnessVersion, Model: trace.Model, Steps: steps, Messages: msgs,
		Actions: actions, Timing: timing, TotalMS: durationMS(t.Timing.Total), FirstChunkMS: durationMS(t.Timing.FirstChunk)})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.log.Error("live turn not stored", "stream", streamID, "turn", t.ID, "err", err)
	}
	return trace
}

func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
