package console

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// Limits of the viewer-message endpoint.
const (
	// maxMessageBatch bounds the messages of one ingestion request.
	maxMessageBatch = 200
	// maxMessageBytes bounds one viewer message, as the session's queue does.
	maxMessageBytes = 2000
	// maxViewerID bounds a viewer id, in characters.
	maxViewerID = 64
	// maxIngestBody bounds an ingestion request's body.
	maxIngestBody = 1 << 20
)

// liveRoutes serves live sessions, the avatar's SSE stream, viewer ingestion and /v1/chat/completions.
//
//	GET  /api/streams/:id/live/events    SSE: session, message, chunk, turn, dropped, harness, air, closed, retired
//	POST /api/streams/:id/live/messages  {"messages": [{"viewer", "text", "at"}]} → 202
//	POST /api/streams/:id/live/air       {"on_air": bool} → the stream (on air: operators only)
//	GET  /api/streams/:id/live/stats     latency percentiles and histogram, queue counters
//	GET  /api/streams/:id/live/turns     stored turn traces, newest first (?limit, ?before, ?outcome, ?source)
//	GET  /api/live/turns/:id             one stored turn with its steps and messages
//	POST /v1/chat/completions            OpenAI wire format, one turn through a stream's harness (chat.go)
//
// plus the catalog import and export of catalog.go and the merchant's path
// to air of golive.go (strategy builder, rehearsal, checklist).
func (s *Server) liveRoutes(api fiber.Router) {
	h := newLiveHub(s)
	s.app.Hooks().OnShutdown(func() error { h.close(); return nil })
	h.wg.Add(1)
	go h.resume()

	st := api.Group("/streams/:id/live", requireRole(store.RoleOperator, store.RoleMerchant))
	st.Get("/events", h.events)
	st.Post("/messages", h.messages)
	st.Post("/air", h.air)
	st.Get("/stats", h.stats)
	st.Get("/turns", h.turns)
	api.Get("/live/turns/:id", requireRole(store.RoleOperator, store.RoleMerchant), h.turn)
	s.catalogRoutes(api)
	h.merchantRoutes(api)
	s.chatRoutes(h)
}

// stream reads the stream of the request's :id the caller sees.
func (h *liveHub) stream(c *fiber.Ctx) (*store.Stream, error) {
	st, err := h.s.store.Stream(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return nil, storeError(err, "stream")
	}
	return st, nil
}

// open returns the request's stream with its room and control session,
// opening the room's sessions on first use.
func (h *liveHub) open(c *fiber.Ctx) (*store.Stream, *liveRoom, *liveSession, error) {
	st, err := h.stream(c)
	if err != nil {
		return nil, nil, nil, err
	}
	r := h.room(st)
	ls, err := r.session(c.UserContext(), st)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, r, ls, nil
}

// events streams a room's events to a TTS/avatar renderer or the live
// view. A client that reconnects with Last-Event-ID gets what it missed
// (up to the room's backlog).
func (h *liveHub) events(c *fiber.Ctx) error {
	_, r, _, err := h.open(c)
	if err != nil {
		return err
	}
	hello, _ := json.Marshal(r.state())
	last, _ := strconv.ParseInt(c.Get("Last-Event-ID", c.Query("last_event_id")), 10, 64)
	sub := r.subscribe(last)
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	conn := c.Context().Conn()
	shutdown := c.Context().Done()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer r.unsubscribe(sub)
		ping := time.NewTicker(15 * time.Second)
		defer ping.Stop()
		flush := func() bool {
			// The server's write timeout is armed once per response; an
			// event stream lives longer, so every write extends it.
			_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			return w.Flush() == nil
		}
		// The session's state first, so a client knows what it watches.
		fmt.Fprintf(w, "retry: 2000\nevent: session\ndata: %s\n\n", hello)
		if !flush() {
			return
		}
		for {
			select {
			case ev, ok := <-sub.ch:
				if !ok {
					return
				}
				fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.id, ev.kind, ev.data)
				if len(sub.ch) > 0 {
					continue // flush once a burst is written
				}
			case <-ping.C:
				fmt.Fprint(w, ": ping\n\n")
			case <-shutdown:
				return
			case <-h.ctx.Done():
				return
			}
			if !flush() {
				return
			}
		}
	})
	return nil
}

// viewerMessage is one message of an ingestion batch.
type viewerMessage struct {
	Viewer string    `json:"viewer"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

// check validates message i of a batch, naming the field at fault.
func (m *viewerMessage) check(i int, now time.Time) error {
	field := func(f string) string { return fmt.Sprintf("messages[%d].%s", i, f) }
	m.Viewer = strings.TrimSpace(m.Viewer)
	switch {
	case m.Viewer == "":
		return badRequest(field("viewer"), "a message needs the viewer's id")
	case utf8.RuneCountInString(m.Viewer) > maxViewerID:
		return badRequest(field("viewer"), fmt.Sprintf("viewer id longer than %d characters", maxViewerID))
	case strings.TrimSpace(m.Text) == "":
		return badRequest(field("text"), "the message is empty")
	case len(m.Text) > maxMessageBytes:
		return fieldError(fiber.StatusRequestEntityTooLarge, field("text"), fmt.Sprintf("%d bytes is over the %d-byte limit", len(m.Text), maxMessageBytes))
	case !utf8.ValidString(m.Text) || !utf8.ValidString(m.Viewer):
		return badRequest(field("text"), "not valid UTF-8")
	case strings.ContainsRune(m.Text, 0) || strings.ContainsRune(m.Viewer, 0):
		return badRequest(field("text"), "contains a NUL character")
	case !m.At.IsZero() && m.At.After(now.Add(time.Minute)):
		return badRequest(field("at"), "the message is dated in the future")
	}
	return nil
}

// messages ingests a batch of viewer messages into the stream's session:
// each goes to the session that serves its viewer (their arm's, while a
// viewer-unit experiment runs on the stream), and one another arm answers
// is also counted toward the control session's strategy signals
// (Session.Observe). The whole batch is validated
// before any message is queued.
func (h *liveHub) messages(c *fiber.Ctx) error {
	if len(c.Body()) > maxIngestBody {
		return fieldError(fiber.StatusRequestEntityTooLarge, "body", fmt.Sprintf("over the %d-byte limit of one batch", maxIngestBody))
	}
	var req struct {
		Messages []viewerMessage `json:"messages"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"messages\": [{\"viewer\", \"text\", \"at\"}]}: "+err.Error())
	}
	switch {
	case len(req.Messages) == 0:
		return badRequest("messages", "the batch is empty")
	case len(req.Messages) > maxMessageBatch:
		return fieldError(fiber.StatusRequestEntityTooLarge, "messages", fmt.Sprintf("%d messages is over the %d-message limit of one batch", len(req.Messages), maxMessageBatch))
	}
	now := time.Now()
	for i := range req.Messages {
		if err := req.Messages[i].check(i, now); err != nil {
			return err
		}
	}
	_, r, ls, err := h.open(c)
	if err != nil {
		return err
	}
	for _, m := range req.Messages {
		at := m.At
		if at.IsZero() {
			at = now
		}
		to, control := r.route(m.Viewer)
		if to == nil {
			return fiber.NewError(fiber.StatusServiceUnavailable, "the session is closing: send the batch again")
		}
		ev := fiber.Map{"viewer": m.Viewer, "text": m.Text, "at": at}
		if arm := to.pinned().arm; arm != "" {
			ev["arm"] = arm
		}
		r.publish("message", ev)
		msg := runtime.Message{Viewer: m.Viewer, Text: m.Text, At: at}
		if err := to.sess.Submit(msg); err != nil {
			return fiber.NewError(fiber.StatusServiceUnavailable, "the session is closing: send the batch again")
		}
		if control != nil {
			// The strategy's signals count the whole room; Observe refuses
			// only what Submit just accepted, so its error is not news.
			_ = control.sess.Observe(msg)
		}
	}
	r.mu.Lock()
	queue := r.queueStatsLocked()
	r.mu.Unlock()
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"accepted": len(req.Messages), "session": ls.sess.ID(), "queue": queue})
}

// air switches a stream on or off air. On air, its session runs the
// stream's strategy; off air, the session closes. Going on air here is
// unchecked, so it is the operators' switch (their pages and scripts); a
// merchant goes on air through the go-live checklist (POST …/golive) and
// gets 403 golive_required here. Anyone who may drive the stream may stop it.
func (h *liveHub) air(c *fiber.Ctx) error {
	var req struct {
		OnAir *bool `json:"on_air"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"on_air\": true|false}: "+err.Error())
	}
	if req.OnAir == nil {
		return badRequest("on_air", "say true (go on air) or false (stop)")
	}
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	if *req.OnAir && userOf(c).Role != store.RoleOperator {
		return codedError(fiber.StatusForbidden, "golive_required", "on_air",
			"a merchant goes on air through the go-live checklist: POST /api/streams/"+st.ID+"/golive")
	}
	return h.setAir(c, st, *req.OnAir)
}

// setAir puts st on or off air and answers the stream: on air, its session
// opens first (a stream that cannot run does not go on air); off air, the
// session closes. Both the operator's switch and the checklist come here.
func (h *liveHub) setAir(c *fiber.Ctx, st *store.Stream, onAir bool) error {
	if onAir {
		if _, err := h.setupOf(c.UserContext(), st); err != nil {
			return err
		}
		if _, _, err := h.s.streamModel(c.UserContext(), st.OrgID, st.ID, ""); err != nil {
			return err
		}
	}
	st, err := h.s.store.SetStreamOnAir(c.UserContext(), scopeOf(c), st.ID, onAir)
	if err != nil {
		return storeError(err, "stream")
	}
	r := h.room(st)
	if st.OnAir {
		if _, err := r.session(c.UserContext(), st); err != nil {
			return err
		}
	} else {
		r.mu.Lock()
		r.closeSession("stopped")
		r.mu.Unlock()
	}
	r.publish("air", fiber.Map{"on_air": st.OnAir, "revision": st.Revision})
	return c.JSON(st)
}

// percentiles are P50, P95 and P99 in milliseconds.
type percentiles struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
}

func percentilesOf(v []float64) percentiles {
	if len(v) == 0 {
		return percentiles{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99)}
}

// histogramBounds are the upper bounds (ms) of the latency histogram, the
// buckets of the runtime's Prometheus histograms.
func histogramBounds() []float64 {
	return []float64{50, 100, 250, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 20000}
}

// bucket is one histogram bucket: the turns with total time ≤ LE (ms),
// and above the previous bound; LE 0 means +Inf.
type bucket struct {
	LE    float64 `json:"le_ms"`
	Count int     `json:"count"`
}

// statsWindow is how many recent turns the statistics cover.
const statsWindow = 500

// stats reports a stream's latency over its recent stored turns and its
// session's queue counters.
func (h *liveHub) stats(c *fiber.Ctx) error {
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	lat, err := h.s.store.LiveLatencies(c.UserContext(), scopeOf(c), st.ID, statsWindow)
	if err != nil {
		return storeError(err, "stream")
	}
	var total, first []float64
	outcomes := map[string]int{}
	for _, l := range lat {
		outcomes[l.Outcome]++
		if l.Outcome == string(runtime.OutcomeReplied) || l.Outcome == string(runtime.OutcomeSafeLine) {
			total, first = append(total, l.TotalMS), append(first, l.FirstChunkMS)
		}
	}
	bounds := histogramBounds()
	buckets := make([]bucket, len(bounds)+1)
	for i, b := range bounds {
		buckets[i].LE = b
	}
	for _, v := range total {
		i := sort.SearchFloat64s(bounds, v)
		buckets[i].Count++
	}
	recent := total[:min(len(total), 200)]
	out := fiber.Map{
		"stream": st.ID, "on_air": st.OnAir, "model": h.s.streamServingView(c.UserContext(), st.OrgID, st.ID).Spec, "harness_version": st.HarnessVersion,
		"turns": len(lat), "window": statsWindow, "outcomes": outcomes,
		"total": percentilesOf(total), "first_chunk": percentilesOf(first),
		"histogram": buckets, "values_ms": orEmpty(recent),
		"session": "", "queue": runtime.QueueStats{}, "dropped": map[string]int{},
	}
	if r := h.existing(st.ID); r != nil {
		r.mu.Lock()
		if r.live != nil {
			out["session"], out["queue"] = r.live.sess.ID(), r.queueStatsLocked()
		}
		dropped := map[string]int{}
		for k, v := range r.dropped {
			dropped[k] = v
		}
		out["dropped"] = dropped
		r.mu.Unlock()
	}
	return c.JSON(out)
}

// turns lists a stream's stored turn traces, newest first.
func (h *liveHub) turns(c *fiber.Ctx) error {
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	q := store.LiveTurnQuery{StreamID: st.ID, Outcome: c.Query("outcome"), Source: c.Query("source")}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return badRequest("limit", "want a number from 1 to 1000")
		}
		q.Limit = n
	}
	if v := c.Query("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return badRequest("before", "want the seq of a turn")
		}
		q.Before = n
	}
	if q.Source != "" && q.Source != store.TurnSourceLive && q.Source != store.TurnSourceAPI {
		return badRequest("source", "want live or api")
	}
	list, err := h.s.store.LiveTurns(c.UserContext(), scopeOf(c), q)
	if err != nil {
		return err
	}
	out := make([]turnTrace, 0, len(list))
	for _, t := range list {
		out = append(out, storedTrace(t))
	}
	return c.JSON(out)
}

// turn returns one stored turn: its trace plus the full steps and the
// conversation the model saw.
func (h *liveHub) turn(c *fiber.Ctx) error {
	t, err := h.s.store.LiveTurn(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "turn")
	}
	return c.JSON(fiber.Map{"trace": storedTrace(*t), "turn": t})
}

// chunkEvent is a speakable piece of a reply, for TTS and the avatar.
type chunkEvent struct {
	Turn    string                 `json:"turn"`
	Text    string                 `json:"text"`
	Actions []runtime.AvatarAction `json:"actions,omitempty"`
	// Lang is "zh" or "en": which voice should speak it.
	Lang string `json:"lang"`
	// Arm is the experiment arm whose session answered, if any.
	Arm string `json:"arm,omitempty"`
}

// langOfText is "zh" for text with Chinese characters, else "en".
func langOfText(s string) string {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return "zh"
		}
	}
	return "en"
}

// turnTrace is a turn as the live view and API clients read it: what came
// in and went out, each hook decision and tool call, and the timing.
type turnTrace struct {
	ID               string   `json:"id"`
	Session          string   `json:"session"`
	Source           string   `json:"source"`
	Event            string   `json:"event"`
	Viewers          []string `json:"viewers"`
	Input            string   `json:"input"`
	Reply            string   `json:"reply"`
	Outcome          string   `json:"outcome"`
	Reason           string   `json:"reason,omitempty"`
	HarnessVersion   string   `json:"harness_version"`
	EffectiveVersion string   `json:"effective_version"`
	Model            string   `json:"model"`
	// Arm is the experiment arm whose session answered a live turn, if
	// any (the live feed's; stored traces do not keep it).
	Arm       string                 `json:"arm,omitempty"`
	Actions   []runtime.AvatarAction `json:"actions"`
	Hooks     []hookTrace            `json:"hooks"`
	Tools     []toolTrace            `json:"tools"`
	Retries   []string               `json:"retries"`
	Timing    timingTrace            `json:"timing"`
	CreatedAt time.Time              `json:"created_at"`
	Seq       int64                  `json:"seq,omitempty"`
}

// hookTrace is one hook decision.
type hookTrace struct {
	Name     string  `json:"name"`
	Event    string  `json:"event"`
	Action   string  `json:"action"`
	Reason   string  `json:"reason,omitempty"`
	Feedback string  `json:"feedback,omitempty"`
	Text     string  `json:"text,omitempty"`
	Context  string  `json:"context,omitempty"`
	Error    string  `json:"error,omitempty"`
	TookMS   float64 `json:"took_ms"`
}

// toolTrace is one tool call or skill load.
type toolTrace struct {
	Kind      string          `json:"kind"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Output    string          `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	TookMS    float64         `json:"took_ms"`
}

// timingTrace is a turn's latency breakdown in milliseconds.
type timingTrace struct {
	QueueMS      float64 `json:"queue_ms"`
	HooksMS      float64 `json:"hooks_ms"`
	RenderMS     float64 `json:"render_ms"`
	ModelMS      float64 `json:"model_ms"`
	PrefillMS    float64 `json:"prefill_ms"`
	DecodeMS     float64 `json:"decode_ms"`
	ToolsMS      float64 `json:"tools_ms"`
	FirstChunkMS float64 `json:"first_chunk_ms"`
	TotalMS      float64 `json:"total_ms"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
}

// maxTraceOutput bounds a tool output in a trace; the stored steps keep
// all of it.
const maxTraceOutput = 2000

func traceSteps(steps []runtime.Step) ([]hookTrace, []toolTrace, []string) {
	hooks, tools, retries := []hookTrace{}, []toolTrace{}, []string{}
	for _, st := range steps {
		switch st.Kind {
		case "hook":
			ht := hookTrace{Name: st.Name, Event: string(st.Event), Error: st.Error, TookMS: durationMS(st.Took)}
			if d := st.Decision; d != nil {
				ht.Action, ht.Reason, ht.Feedback, ht.Text, ht.Context = string(d.Action), d.Reason, d.Feedback, d.Text, d.Context
			}
			hooks = append(hooks, ht)
		case "tool", "skill":
			out := st.Output
			if len(out) > maxTraceOutput {
				out = strings.ToValidUTF8(out[:maxTraceOutput], "") + "…"
			}
			tools = append(tools, toolTrace{Kind: st.Kind, Name: st.Name, Arguments: st.Input, Output: out, Error: st.Error, TookMS: durationMS(st.Took)})
		case "retry":
			retries = append(retries, st.Output)
		}
	}
	return hooks, tools, retries
}

func timingOf(t runtime.Timing) timingTrace {
	return timingTrace{QueueMS: durationMS(t.Queue), HooksMS: durationMS(t.Hooks), RenderMS: durationMS(t.Render),
		ModelMS: durationMS(t.Model), PrefillMS: durationMS(t.Prefill), DecodeMS: durationMS(t.Decode), ToolsMS: durationMS(t.Tools),
		FirstChunkMS: durationMS(t.FirstChunk), TotalMS: durationMS(t.Total), PromptTokens: t.PromptTokens, CachedTokens: t.CachedTokens}
}

// traceOf is the trace of a turn the runtime just finished.
func traceOf(t *runtime.Turn) turnTrace {
	hooks, tools, retries := traceSteps(t.Steps)
	viewers := t.Viewers
	if t.Event == harness.EventNarrationTick {
		viewers = nil
	}
	return turnTrace{ID: t.ID, Session: t.Session, Event: string(t.Event), Viewers: orEmpty(viewers), Input: t.Input, Reply: t.Reply,
		Outcome: string(t.Outcome), Reason: t.Reason, EffectiveVersion: t.HarnessVersion, Actions: orEmpty(t.Actions),
		Hooks: hooks, Tools: tools, Retries: retries, Timing: timingOf(t.Timing), CreatedAt: time.Now().UTC()}
}

// storedTrace is the trace of a stored turn.
func storedTrace(t store.LiveTurn) turnTrace {
	var steps []runtime.Step
	_ = json.Unmarshal(t.Steps, &steps)
	var actions []runtime.AvatarAction
	_ = json.Unmarshal(t.Actions, &actions)
	var timing runtime.Timing
	_ = json.Unmarshal(t.Timing, &timing)
	hooks, tools, retries := traceSteps(steps)
	return turnTrace{ID: t.ID, Session: t.SessionID, Source: t.Source, Event: t.Event, Viewers: orEmpty(t.Viewers), Input: t.Input,
		Reply: t.Reply, Outcome: t.Outcome, Reason: t.Reason, HarnessVersion: t.HarnessVersion, EffectiveVersion: t.EffectiveVersion,
		Model: t.Model, Actions: orEmpty(actions), Hooks: hooks, Tools: tools, Retries: retries, Timing: timingOf(timing),
		CreatedAt: t.CreatedAt, Seq: t.Seq}
}
