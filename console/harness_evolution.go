package console

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
)

// The harness-evolution loop of the report: Diagnose (failed turns grouped
// by cause) → Confirm and Edit (a draft opened from the diagnosis) →
// Evaluate (the release gate, with the loop id) → Regression check →
// ship or roll back (a release with the loop id). Every step is an event
// of the loop, so the history of how the harness evolved is kept.

func (s *Server) evolutionRoutes(api fiber.Router) {
	op := requireRole(store.RoleOperator)
	api.Get("/evolution/failures", op, s.evolutionFailures)
	api.Get("/evolution/loops", op, s.listLoops)
	api.Post("/evolution/loops", op, s.startLoop)
	api.Get("/evolution/loops/:id", op, s.getLoop)
	api.Post("/evolution/loops/:id/close", op, s.closeLoop)
}

// causeLabels say what each cause means, for the page.
func causeLabels() map[string]string {
	return map[string]string{
		CauseWrongTool:     "Wrong tool: a needed call missing, a needless or malformed one",
		CauseWrongFact:     "Wrong fact: a false, unsupported or banned statement, or a fact left out",
		CauseMissingSkill:  "Missing skill: the reply skill the question needs was not loaded",
		CauseHookRejection: "Hook rejection: a hook denied the turn or it ended on the safe line",
		CauseReplyForm:     "Reply form: no reply, or too long for speech",
		CauseRunError:      "Run error: the turn did not run (backend error, timeout)",
	}
}

// causeGroup is the failed items of one cause.
type causeGroup struct {
	Cause string                 `json:"cause"`
	Label string                 `json:"label"`
	Count int                    `json:"count"`
	Items []store.HarnessFailure `json:"items"`
}

// evolutionFailures groups the failed items of a version (by default the
// current one) by cause: the newest result of each item across the gates
// that evaluated the version, and the live turns (the newest thousand the
// operator sees) that ran it and whose trace shows a failure. With ?gate=
// only that gate's items count.
func (s *Server) evolutionFailures(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	version := c.Query("version")
	if version == "" {
		cur, err := s.currentVersion(ctx, sc.OrgID)
		if err != nil {
			return badRequest("version", err.Error())
		}
		version = cur
	}
	_, v, err := s.lookupVersion(c, "version", version)
	if err != nil {
		return err
	}
	gate := c.Query("gate")
	if gate != "" {
		if _, err := s.store.HarnessGate(ctx, sc, gate); err != nil {
			return fieldError(fiber.StatusNotFound, "gate", "no such release gate")
		}
	}
	fails, err := s.store.HarnessFailures(ctx, sc, gate, v.Version, 2000)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	groups := map[string]*causeGroup{}
	labels := causeLabels()
	gates := map[string]bool{}
	for _, f := range fails { // newest first
		key := f.Suite + "\x00" + f.ItemID
		if seen[key] {
			continue
		}
		seen[key] = true
		gates[f.GateID] = true
		g := groups[f.Cause]
		if g == nil {
			g = &causeGroup{Cause: f.Cause, Label: labels[f.Cause], Items: []store.HarnessFailure{}}
			groups[f.Cause] = g
		}
		g.Count++
		if len(g.Items) < 50 {
			g.Items = append(g.Items, f)
		}
	}
	// Live traces of streams that ran the version: the turns whose own
	// trace shows a failure (they have no gold to grade against).
	turns, err := s.store.LiveTurns(ctx, sc, store.LiveTurnQuery{Limit: 1000})
	if err != nil {
		return err
	}
	live := 0
	for _, t := range turns {
		if t.HarnessVersion != v.Version || gate != "" {
			continue
		}
		live++
		cause, deductions, failed := liveTurnFailure(t.Outcome, t.Reason, t.Steps)
		if !failed {
			continue
		}
		g := groups[cause]
		if g == nil {
			g = &causeGroup{Cause: cause, Label: labels[cause], Items: []store.HarnessFailure{}}
			groups[cause] = g
		}
		g.Count++
		if len(g.Items) < 50 {
			g.Items = append(g.Items, store.HarnessFailure{Version: t.HarnessVersion, Suite: "live", ItemID: t.ID,
				Category: t.Event, Cause: cause, Deductions: deductions, Reply: t.Reply, At: t.CreatedAt})
		}
	}
	out := []causeGroup{}
	for _, cause := range causesByRank() {
		if g := groups[cause]; g != nil {
			out = append(out, *g)
		}
	}
	return c.JSON(fiber.Map{"version": v.Version, "gates": len(gates), "live_turns": live, "causes": out})
}

func (s *Server) listLoops(c *fiber.Ctx) error {
	list, err := s.store.EvolutionLoops(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) getLoop(c *fiber.Ctx) error {
	l, err := s.store.EvolutionLoop(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "evolution loop")
	}
	return c.JSON(l)
}

// loopRequest starts a loop from a diagnosis: the cause, the version it
// was seen in, what the operator concluded, and the failed items that
// show it. A draft of the version is opened for the edit.
type loopRequest struct {
	Cause       string   `json:"cause"`
	Title       string   `json:"title"`
	BaseVersion string   `json:"base_version"`
	Diagnosis   string   `json:"diagnosis"`
	Items       []string `json:"items"`
}

func (s *Server) startLoop(c *fiber.Ctx) error {
	var req loopRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"cause\", \"title\", \"base_version\", \"diagnosis\", \"items\"}: "+err.Error())
	}
	if !slices.Contains(causesByRank(), req.Cause) {
		return badRequest("cause", fmt.Sprintf("%q: want one of %s", req.Cause, strings.Join(causesByRank(), ", ")))
	}
	req.Title = strings.TrimSpace(req.Title)
	switch {
	case req.Title == "":
		return badRequest("title", "say in a few words what the loop fixes")
	case len(req.Title) > 200:
		return badRequest("title", "at most 200 characters")
	case len(req.Diagnosis) > 10000:
		return badRequest("diagnosis", "at most 10000 characters")
	case len(req.Items) > 200:
		return badRequest("items", "at most 200 items")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	h, v, err := s.lookupVersion(c, "base_version", req.BaseVersion)
	if err != nil {
		return err
	}
	detail, _ := json.Marshal(fiber.Map{"diagnosis": req.Diagnosis, "items": orEmpty(req.Items), "version": v.Version})
	summary := fmt.Sprintf("%s in %s: %d failed items", req.Cause, h.ShortVersion(), len(req.Items))
	if req.Diagnosis != "" {
		summary += " — " + req.Diagnosis
	}
	loop, err := s.store.CreateEvolutionLoop(ctx, sc, store.EvolutionLoop{Cause: req.Cause, Title: req.Title, BaseVersion: v.Version},
		store.EvolutionEvent{Summary: summary, Detail: detail})
	if err != nil {
		return err
	}
	notes := "evolution: " + req.Title
	draft, err := s.openDraft(c, draftRequest{BaseVersion: v.Version, Name: h.Name, Format: "json", Notes: &notes}, loop.ID)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"loop": loop, "draft": draft})
}

// closeLoop ends an open loop without shipping: the edit did not help, or
// the diagnosis was wrong. The note says why.
func (s *Server) closeLoop(c *fiber.Ctx) error {
	var req struct {
		Note string `json:"note"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"note\"}: "+err.Error())
	}
	if strings.TrimSpace(req.Note) == "" {
		return badRequest("note", "say why the loop ends without shipping")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	l, err := s.store.EvolutionLoop(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "evolution loop")
	}
	if l.State != store.LoopOpen {
		return fiber.NewError(fiber.StatusConflict, "the loop is "+l.State+", not open")
	}
	if err := s.store.AddEvolutionEvent(ctx, sc, l.ID, store.EvolutionEvent{Kind: "decision", Summary: "abandoned: " + req.Note},
		store.LoopAbandoned); err != nil {
		return err
	}
	l, err = s.store.EvolutionLoop(ctx, sc, l.ID)
	if err != nil {
		return err
	}
	return c.JSON(l)
}
