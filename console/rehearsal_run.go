package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/rehearsal"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// A rehearsal asks a stream's practice questions (generated for its
// catalog by package rehearsal, plus the merchant's own) through the
// runtime exactly as its live session would answer them — the stream's
// released harness version with its persona and banned claims, its
// catalog and plugins, the organisation's serving model — each in a
// session of its own, and keeps each answer with its tool calls and the
// grounding check's verdict. The latest rehearsal of a stream is what the
// go-live checklist reads.

// Rehearsal limits.
const (
	// maxRehearsalQuestions bounds the questions of one rehearsal.
	maxRehearsalQuestions = 20
	// rehearsalTurnTimeout bounds one practice answer.
	rehearsalTurnTimeout = 60 * time.Second
	// rehearsalParallel is how many practice answers run at once.
	rehearsalParallel = 2
)

// Grounding verdicts of a practice answer.
const (
	verdictAllow     = "allow"     // the first reply was backed
	verdictRetried   = "retried"   // sent back as unbacked, then a backed reply went on air
	verdictRewritten = "rewritten" // still unbacked on the last attempt: the check rewrote it to backed facts
	verdictSafeLine  = "safe_line" // no acceptable reply: the safe line went on air
	verdictDenied    = "denied"    // the question was refused by a hook
	verdictUnchecked = "unchecked" // the harness has no grounding check
	verdictFailed    = "failed"    // the turn did not run
)

// rehearsalQuestion is a question of a rehearsal request.
type rehearsalQuestion struct {
	Text     string `json:"text"`
	Category string `json:"category,omitempty"`
	Item     string `json:"item,omitempty"`
	// Stated is the generator's: whether the catalog states what the
	// question asks (package rehearsal).
	Stated bool `json:"stated,omitempty"`
	// Own marks a question the merchant typed.
	Own bool `json:"own,omitempty"`
}

// rehearsalAnswer is one practice question with its answer.
type rehearsalAnswer struct {
	rehearsalQuestion
	Reply   string      `json:"reply"`
	Outcome string      `json:"outcome"`
	Reason  string      `json:"reason,omitempty"`
	Verdict string      `json:"verdict"`
	Why     []string    `json:"why"`
	Tools   []toolTrace `json:"tools"`
	Hooks   []hookTrace `json:"hooks"`
	TookMS  float64     `json:"took_ms"`
	Error   string      `json:"error,omitempty"`
}

// rehearsalReport is a finished rehearsal.
type rehearsalReport struct {
	ID             string            `json:"id"`
	StreamID       string            `json:"stream_id"`
	Lang           string            `json:"lang"`
	HarnessVersion string            `json:"harness_version"`
	Model          string            `json:"model"`
	Fingerprint    string            `json:"fingerprint"`
	CreatedBy      string            `json:"created_by"`
	CreatedAt      time.Time         `json:"created_at"`
	Answers        []rehearsalAnswer `json:"answers"`
	// Verdicts counts the answers by verdict.
	Verdicts map[string]int `json:"verdicts"`
	// Current is set when read: whether the stream is still set up as
	// the rehearsal ran (same harness, persona, banned claims, catalog).
	Current bool `json:"current"`
}

// rehearsalFingerprint identifies what a stream's answers depend on:
// its harness version, persona, banned claims and catalog. A rehearsal
// of another fingerprint is out of date.
func rehearsalFingerprint(st *store.Stream) string {
	h := sha256.New()
	for _, part := range []string{st.HarnessVersion, st.Persona, strings.Join(st.BannedClaims, "\x1f"), string(st.Catalog)} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{0})
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// groundingHooks names the harness's grounding checks: its
// after_response hooks that run the grounding export (a harness may
// rename the hook, not what it runs) or are named for grounding.
func groundingHooks(h *harness.Harness) map[string]bool {
	out := map[string]bool{}
	for _, k := range h.Hooks {
		if k.Event == harness.EventAfterResponse && (k.Export == "check_grounding" || strings.Contains(strings.ToLower(k.Name), "grounding")) {
			out[k.Name] = true
		}
	}
	return out
}

// verdictOf reads the grounding check's verdict of a turn from its
// steps, with why: the check's feedback on what the reply stated that
// nothing backed, or the reason the turn ended as it did.
func verdictOf(t *runtime.Turn, grounding map[string]bool) (string, []string) {
	why := []string{}
	var last *harness.HookDecision
	for _, st := range t.Steps {
		if st.Kind != "hook" || st.Event != harness.EventAfterResponse || !grounding[st.Name] || st.Decision == nil {
			continue
		}
		last = st.Decision
		if st.Decision.Action == harness.ActionRetry {
			why = append(why, st.Decision.Feedback)
		}
	}
	switch {
	case t.Outcome == runtime.OutcomeSafeLine:
		return verdictSafeLine, append(why, t.Reason)
	case t.Outcome == runtime.OutcomeDenied:
		return verdictDenied, append(why, t.Reason)
	case t.Outcome != runtime.OutcomeReplied:
		return verdictFailed, append(why, string(t.Outcome)+": "+t.Reason)
	case len(grounding) == 0:
		return verdictUnchecked, append(why, "the stream's harness has no grounding check")
	case last == nil:
		return verdictUnchecked, append(why, "the grounding check did not run")
	case last.Action == harness.ActionRewrite:
		return verdictRewritten, why
	case len(why) > 0:
		return verdictRetried, why
	}
	return verdictAllow, why
}

// soloTurn runs one viewer question, or with narrate one strategy
// instruction, in a session of its own set up as the stream's live
// session (serving model, harness, plugins, catalog), and returns the
// finished turn and the model's name. Nothing is stored or counted as
// live traffic.
func (h *liveHub) soloTurn(ctx context.Context, st *store.Stream, setup *streamSetup, text string, narrate bool) (*runtime.Turn, string, error) {
	solo := &liveHub{s: h.s, log: h.log}
	sess, _, modelName, err := solo.newSession(ctx, st, setup, "", runtime.Config{
		Context:         func() []harness.ContextItem { return setup.context },
		CatalogItems:    func() []string { return setup.items },
		CatalogWords:    func() []string { return setup.words },
		CatalogVariants: func() []string { return setup.variants },
		TurnTimeout:     rehearsalTurnTimeout,
		Queue:           runtime.QueueConfig{StaleAfter: time.Hour},
	})
	if err != nil {
		return nil, "", err
	}
	defer sess.Close()
	events := sess.Listen(256)
	if narrate {
		err = sess.Narrate(text)
	} else {
		err = sess.Submit(runtime.Message{Viewer: "rehearsal", Text: text})
	}
	if err != nil {
		return nil, modelName, err
	}
	deadline := time.NewTimer(rehearsalTurnTimeout + 5*time.Second)
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, modelName, ctx.Err()
		case <-deadline.C:
			return nil, modelName, errors.New("the turn did not finish in time")
		case e, ok := <-events:
			switch {
			case !ok:
				return nil, modelName, errors.New("the session closed before the turn finished")
			case e.Kind == runtime.EventDropped:
				return nil, modelName, errors.New("the message was dropped: " + e.Reason)
			case e.Kind == runtime.EventTurn:
				return e.Record, modelName, nil
			}
		}
	}
}

// rehearsalQuestions answers the generated practice questions of a
// stream: ?lang= zh or en (default the stream's), ?max= 1 to 20 (default 8).
func (h *liveHub) rehearsalQuestions(c *fiber.Ctx) error {
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	cat, err := storedCatalog(st)
	if err != nil {
		return err
	}
	lang := c.Query("lang", catalogLang(cat))
	if lang != "zh" && lang != "en" {
		return badRequest("lang", "want zh or en")
	}
	limit := 8
	if v := c.Query("max"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxRehearsalQuestions {
			return badRequest("max", fmt.Sprintf("want 1 to %d", maxRehearsalQuestions))
		}
	}
	return c.JSON(fiber.Map{"lang": lang, "questions": orEmpty(rehearsal.Questions(cat, lang, limit))})
}

// runRehearsal runs a rehearsal: {"lang", "questions": [{"text",
// "category", "item", "own"}]}, answers each question and stores the
// report.
func (h *liveHub) runRehearsal(c *fiber.Ctx) error {
	var req struct {
		Lang      string              `json:"lang"`
		Questions []rehearsalQuestion `json:"questions"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"lang\", \"questions\": [{\"text\"}]}: "+err.Error())
	}
	switch {
	case len(req.Questions) == 0:
		return badRequest("questions", "ask at least one question")
	case len(req.Questions) > maxRehearsalQuestions:
		return badRequest("questions", fmt.Sprintf("%d questions is over the %d of one rehearsal", len(req.Questions), maxRehearsalQuestions))
	case req.Lang != "" && req.Lang != "zh" && req.Lang != "en":
		return badRequest("lang", "want zh or en")
	}
	for i := range req.Questions {
		q := &req.Questions[i]
		q.Text = strings.TrimSpace(q.Text)
		field := fmt.Sprintf("questions[%d].text", i)
		switch {
		case q.Text == "":
			return badRequest(field, "the question is empty")
		case len(q.Text) > maxMessageBytes:
			return badRequest(field, fmt.Sprintf("%d bytes is over the %d-byte limit", len(q.Text), maxMessageBytes))
		case !utf8.ValidString(q.Text) || strings.ContainsRune(q.Text, 0):
			return badRequest(field, "not valid UTF-8 text")
		}
	}
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	setup, err := h.setupOf(c.UserContext(), st)
	if err != nil {
		return err
	}
	if _, _, err := h.s.streamModel(c.UserContext(), st.OrgID, st.ID, ""); err != nil {
		return err
	}
	lang := req.Lang
	if lang == "" {
		lang = streamLang(setup.context)
	}
	grounding := groundingHooks(setup.harness)
	ctx := c.UserContext() // the goroutines do not touch the fiber context
	answers := make([]rehearsalAnswer, len(req.Questions))
	models := make([]string, len(req.Questions))
	var wg sync.WaitGroup
	sem := make(chan struct{}, rehearsalParallel)
	for i, q := range req.Questions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			a := rehearsalAnswer{rehearsalQuestion: q, Tools: []toolTrace{}, Hooks: []hookTrace{}, Why: []string{}}
			t0 := time.Now()
			turn, model, err := h.soloTurn(ctx, st, setup, q.Text, false)
			a.TookMS, models[i] = durationMS(time.Since(t0)), model
			if err != nil {
				a.Verdict, a.Error, a.Why = verdictFailed, err.Error(), []string{err.Error()}
				answers[i] = a
				return
			}
			a.Reply, a.Outcome, a.Reason = turn.Reply, string(turn.Outcome), turn.Reason
			a.Hooks, a.Tools, _ = traceSteps(turn.Steps)
			a.Verdict, a.Why = verdictOf(turn, grounding)
			answers[i] = a
		}()
	}
	wg.Wait()
	rep := rehearsalReport{ID: newRehearsalID(), StreamID: st.ID, Lang: lang, HarnessVersion: setup.bound, Model: firstNonEmpty(models),
		Fingerprint: rehearsalFingerprint(st), CreatedBy: userOf(c).Username, CreatedAt: time.Now().UTC(), Answers: answers,
		Verdicts: map[string]int{}, Current: true}
	for _, a := range answers {
		rep.Verdicts[a.Verdict]++
	}
	if err := h.s.saveRehearsal(c.UserContext(), st.OrgID, rep); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(rep)
}

func firstNonEmpty(list []string) string {
	for _, s := range list {
		if s != "" {
			return s
		}
	}
	return ""
}

// newRehearsalID is a rehearsal's random id.
func newRehearsalID() string { return "rh-" + strings.ToLower(rand.Text()[:16]) }

// latestRehearsal answers the stream's latest rehearsal ({"rehearsal":
// null} before the first), marked current or out of date.
func (h *liveHub) latestRehearsal(c *fiber.Ctx) error {
	st, err := h.stream(c)
	if err != nil {
		return err
	}
	rep, err := h.s.lastRehearsal(c.UserContext(), st)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"rehearsal": rep})
}

// saveRehearsal stores a rehearsal's report.
func (s *Server) saveRehearsal(ctx context.Context, orgID string, rep rehearsalReport) error {
	raw, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return s.store.AddRehearsal(ctx, store.Scope{OrgID: orgID}, store.Rehearsal{ID: rep.ID, StreamID: rep.StreamID,
		Fingerprint: rep.Fingerprint, CreatedBy: rep.CreatedBy, CreatedAt: rep.CreatedAt, Report: raw})
}

// lastRehearsal is a stream's latest rehearsal, nil before the first;
// Current says whether the stream is still set up as it ran.
func (s *Server) lastRehearsal(ctx context.Context, st *store.Stream) (*rehearsalReport, error) {
	stored, err := s.store.LatestRehearsal(ctx, store.Scope{OrgID: st.OrgID}, st.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rep rehearsalReport
	if err := json.Unmarshal(stored.Report, &rep); err != nil {
		return nil, fmt.Errorf("rehearsal %s: stored report: %w", st.ID, err)
	}
	rep.Current = rep.Fingerprint == rehearsalFingerprint(st)
	return &rep, nil
}
