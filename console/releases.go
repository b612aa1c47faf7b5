package console

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
)

// releaseRoutes serves harness versions and drafts (harnesses.go), the
// release gate (harness_gate.go), releases — publish to streams or as a
// canary, rollback — the compatibility view, and harness evolution
// (harness_evolution.go).
func (s *Server) releaseRoutes(api fiber.Router) {
	s.harnessRoutes(api)
	s.gateRoutes(api)
	s.evolutionRoutes(api)
	op := requireRole(store.RoleOperator)
	api.Get("/releases", op, s.listReleases)
	api.Post("/releases", op, s.publishRelease)
	api.Get("/releases/:id", op, s.getRelease)
	api.Post("/releases/:id/rollback", op, s.rollbackRelease)
	api.Get("/harness-compat", op, s.compatibility)
}

func (s *Server) listReleases(c *fiber.Ctx) error {
	list, err := s.store.HarnessReleases(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

func (s *Server) getRelease(c *fiber.Ctx) error {
	r, err := s.store.HarnessRelease(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "release")
	}
	return c.JSON(r)
}

// publishRequest publishes a version to the chosen streams, or as a canary
// to a percentage of the organisation's streams. GateID names the gate it
// passed (by default the latest finished gate of that version with each
// model that serves the streams); Override is the recorded reason to ship
// without one, or despite a regression.
type publishRequest struct {
	Version       string   `json:"version"`
	Streams       []string `json:"streams"`
	CanaryPercent int      `json:"canary_percent"`
	GateID        string   `json:"gate_id"`
	Override      string   `json:"override"`
	LoopID        string   `json:"loop_id"`
	// Checkpoint is the model that serves the streams with this version
	// when it is not the serving model now (an experiment's ship changes
	// both): the gate must have measured it.
	Checkpoint string `json:"checkpoint"`
}

// canaryStreams picks ceil(percent % of ids) streams for a canary of
// version: those whose hash of version and stream id is smallest. The
// choice depends only on the version and the set of streams, and a larger
// percentage of the same version keeps the streams a smaller one chose.
func canaryStreams(version string, ids []string, percent int) []string {
	if percent <= 0 || len(ids) == 0 {
		return nil
	}
	k := min(len(ids), (len(ids)*percent+99)/100)
	type ranked struct {
		id   string
		rank uint64
	}
	rs := make([]ranked, len(ids))
	for i, id := range ids {
		sum := sha256.Sum256([]byte(version + "\x00" + id))
		rs[i] = ranked{id, binary.BigEndian.Uint64(sum[:8])}
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].rank != rs[j].rank {
			return rs[i].rank < rs[j].rank
		}
		return rs[i].id < rs[j].id
	})
	out := make([]string, k)
	for i := range out {
		out[i] = rs[i].id
	}
	sort.Strings(out)
	return out
}

// publishRelease binds the version to the streams: the only way a
// stream's harness version changes. The installed plugins must serve the
// version, and a gate of the model that serves the streams must have
// passed it, for a stream with a model server of its own a gate of that
// server (or an operator's override is recorded). A stream switches
// at its next turn boundary once every plugin of the version is loaded
// (liveSession.apply).
func (s *Server) publishRelease(c *fiber.Ctx) error {
	var req publishRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"version\", \"streams\" or \"canary_percent\", \"gate_id\", \"override\"}: "+err.Error())
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	h, v, err := s.lookupVersion(c, "version", req.Version)
	if err != nil {
		return err
	}
	switch {
	case len(req.Streams) > 0 && req.CanaryPercent != 0:
		return badRequest("canary_percent", "publish to chosen streams or as a canary, not both")
	case len(req.Streams) == 0 && req.CanaryPercent == 0:
		return badRequest("streams", "choose the streams, or a canary percentage")
	case req.CanaryPercent < 0 || req.CanaryPercent > 100:
		return badRequest("canary_percent", fmt.Sprintf("%d: want 1 to 100", req.CanaryPercent))
	case len(req.Override) > 2000:
		return badRequest("override", "at most 2000 characters")
	}
	req.Override = strings.TrimSpace(req.Override)
	named, err := s.namedGate(ctx, sc, v.Version, req.GateID)
	if err != nil {
		return err
	}
	serving := s.servingModelName(ctx, sc.OrgID)
	if req.Checkpoint != "" {
		_, name, err := s.checkpointModel(ctx, sc.OrgID, req.Checkpoint)
		if err != nil {
			return fieldError(fiber.StatusNotFound, "checkpoint", err.Error())
		}
		serving = name
	}
	if req.LoopID != "" {
		if _, err := s.store.EvolutionLoop(ctx, sc, req.LoopID); err != nil {
			return fieldError(fiber.StatusNotFound, "loop_id", "no such evolution loop")
		}
	}
	all, err := s.store.Streams(ctx, sc)
	if err != nil {
		return err
	}
	byID := map[string]store.Stream{}
	ids := make([]string, 0, len(all))
	for _, st := range all {
		byID[st.ID] = st
		ids = append(ids, st.ID)
	}
	chosen := req.Streams
	if req.CanaryPercent > 0 {
		chosen = canaryStreams(v.Version, ids, req.CanaryPercent)
		if len(chosen) == 0 {
			return badRequest("canary_percent", "the organisation has no streams")
		}
	}
	moved := make([]store.ReleaseStream, 0, len(chosen))
	for i, id := range chosen {
		st, ok := byID[id]
		if !ok || slices.Contains(chosen[:i], id) {
			return fieldError(fiber.StatusNotFound, fmt.Sprintf("streams[%d]", i), fmt.Sprintf("no stream %q (or named twice)", id))
		}
		moved = append(moved, store.ReleaseStream{StreamID: id, Name: st.Name, Previous: st.HarnessVersion})
	}
	gate, err := s.gateStreams(ctx, sc, v.Version, serving, named, moved, req.Override != "")
	if err != nil {
		return err
	}
	// No override reaches past this: a version the installed plugins cannot
	// serve would fail on air, whatever a gate said.
	if err := s.checkPlugins(ctx, sc.OrgID, h); err != nil {
		if !isCompatibility(err) {
			return err
		}
		return incompatible(c, fiber.StatusConflict, "version", "version "+h.ShortVersion(), err, v.Document, harness.FormatJSON)
	}
	rel := store.HarnessRelease{Version: v.Version, Streams: moved, CanaryPercent: req.CanaryPercent, Override: req.Override, LoopID: req.LoopID}
	if gate != nil {
		rel.GateID, rel.GateReport = gate.ID, gate.Report
	}
	r, err := s.store.CreateHarnessRelease(ctx, sc, rel)
	if err != nil {
		return err
	}
	kind := "streams"
	if req.CanaryPercent > 0 {
		kind = "canary"
	}
	s.harnesses.releases.WithLabelValues(kind).Inc()
	for _, m := range moved {
		if err := s.store.SetStreamHarness(ctx, sc, m.StreamID, v.Version); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("release %s: stream %s: %w", r.ID, m.StreamID, err)
		}
		if err := s.store.GrantHarnessRequests(ctx, sc, m.StreamID, v.Version, r.ID); err != nil {
			return fmt.Errorf("release %s: stream %s: requests: %w", r.ID, m.StreamID, err)
		}
	}
	if req.LoopID != "" {
		how := fmt.Sprintf("%d chosen streams", len(moved))
		if req.CanaryPercent > 0 {
			how = fmt.Sprintf("a %d%% canary (%d streams)", req.CanaryPercent, len(moved))
		}
		detail, _ := json.Marshal(fiber.Map{"release_id": r.ID, "version": v.Version, "override": req.Override})
		if err := s.store.AddEvolutionEvent(ctx, sc, req.LoopID, store.EvolutionEvent{Kind: "decision",
			Summary: "shipped " + v.Version[7:19] + " to " + how, Detail: detail}, store.LoopShipped); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusCreated).JSON(r)
}

// namedGate is the gate an operator names for a release of version (nil
// when id is empty): it must have finished for that version with a model
// that serves (not the expert's sanity check).
func (s *Server) namedGate(ctx context.Context, sc store.Scope, version, id string) (*store.HarnessGate, error) {
	if id == "" {
		return nil, nil
	}
	g, err := s.store.HarnessGate(ctx, sc, id)
	if err != nil {
		return nil, fieldError(fiber.StatusNotFound, "gate_id", "no such release gate")
	}
	switch {
	case g.Candidate != version:
		return nil, fieldError(fiber.StatusConflict, "gate_id", "that gate evaluated "+g.Candidate[:19]+", not this version")
	case g.State != store.GatePassed && g.State != store.GateRegressed:
		return nil, fieldError(fiber.StatusConflict, "gate_id", "that gate has not finished with a report (state "+g.State+")")
	case g.Model == gateExpert:
		return nil, fieldError(fiber.StatusConflict, "gate_id", "that gate ran the expert, a sanity check of the harness: "+
			"a release needs a gate of the model that serves the streams")
	}
	return g, nil
}

// releaseGates lists the finished gates of version that a release may
// rely on (not the expert's sanity checks), newest first.
func (s *Server) releaseGates(ctx context.Context, sc store.Scope, version string) ([]store.HarnessGate, error) {
	gates, err := s.store.HarnessGates(ctx, sc, 200)
	if err != nil {
		return nil, err
	}
	var out []store.HarnessGate
	for _, g := range gates {
		if g.Candidate == version && g.Model != gateExpert && (g.State == store.GatePassed || g.State == store.GateRegressed) {
			out = append(out, g)
		}
	}
	return out, nil
}

// releaseGate is the latest finished gate of version that measured model
// ("" for any model a release may rely on); nil when there is none.
func (s *Server) releaseGate(ctx context.Context, sc store.Scope, version, model string) (*store.HarnessGate, error) {
	gates, err := s.releaseGates(ctx, sc, version)
	if err != nil {
		return nil, err
	}
	for _, g := range gates {
		if model == "" || g.Model == model {
			return &g, nil
		}
	}
	return nil, nil
}

// gateStreams checks that a gate of the model that will serve each stream
// passed version: serving (the organisation's serving model, or the
// checkpoint released with the version) for most streams, its own model
// server for a stream that has one, since a stream that runs the version
// on another model is not covered by a gate of this one. named, the gate
// the operator chose, counts for the streams of the model it measured; the
// others rely on the latest gate of theirs. Each stream records the model
// and the gate it was released on. Without override, a model with no gate
// or a regressed one is refused, naming its streams. The gate returned is
// the release's own record: that of the organisation's model, else the
// first stream's.
func (s *Server) gateStreams(ctx context.Context, sc store.Scope, version, serving string, named *store.HarnessGate,
	streams []store.ReleaseStream, override bool) (*store.HarnessGate, error) {
	finished, err := s.releaseGates(ctx, sc, version)
	if err != nil {
		return nil, err
	}
	type group struct {
		model string
		ids   []string
		names []string
		gate  *store.HarnessGate
		org   bool // the organisation's model (or the released checkpoint)
	}
	var groups []*group
	byModel := map[string]*group{}
	for i, st := range streams {
		model := serving
		if v := s.streamServingView(ctx, sc.OrgID, st.StreamID); v.Own {
			model = v.Spec
		}
		g := byModel[model]
		if g == nil {
			g = &group{model: model, org: model == serving}
			if named != nil && named.Model == model {
				g.gate = named
			}
			for k := range finished {
				if g.gate == nil && finished[k].Model == model {
					g.gate = &finished[k]
				}
			}
			byModel[model] = g
			groups = append(groups, g)
		}
		g.ids, g.names = append(g.ids, st.StreamID), append(g.names, strconv.Quote(st.Name))
		streams[i].Model = model
		if g.gate != nil {
			streams[i].GateID = g.gate.ID
		}
	}
	// The organisation's model first: its refusals read as they did before
	// streams had models of their own.
	slices.SortStableFunc(groups, func(a, b *group) int {
		switch {
		case a.org == b.org:
			return 0
		case a.org:
			return -1
		}
		return 1
	})
	if named != nil && byModel[named.Model] == nil && !override {
		models := make([]string, len(groups))
		for i, g := range groups {
			models[i] = g.model
		}
		return nil, fieldError(fiber.StatusConflict, "gate_id", fmt.Sprintf("the gate measured %s, and the streams are served by %s now: "+
			"run the gate again, or give an override reason (it is recorded)", named.Model, strings.Join(models, " and ")))
	}
	// A gate of a model no chosen stream runs explains a missing one.
	var other *store.HarnessGate
	for k := range finished {
		if other == nil && byModel[finished[k].Model] == nil {
			other = &finished[k]
		}
	}
	for _, g := range groups {
		switch {
		case override:
		case g.gate == nil && g.org && other != nil:
			return nil, fieldError(fiber.StatusConflict, "gate_id", fmt.Sprintf("the gate measured %s, and the streams are served by %s now: "+
				"run the gate again, or give an override reason (it is recorded)", other.Model, g.model))
		case g.gate == nil && g.org:
			return nil, fieldError(fiber.StatusConflict, "gate_id", "no finished release gate of the serving model for "+version[:19]+
				": run the gate first, or give an override reason (it is recorded)")
		case g.gate == nil:
			return nil, fieldError(fiber.StatusConflict, "streams", fmt.Sprintf("%s, and no finished release gate of that model measured %s: "+
				"run the gate for the stream (\"stream\": %q), or give an override reason (it is recorded)", ownModelPhrase(g.names, g.model), version[:19], g.ids[0]))
		case g.gate.State == store.GateRegressed && g.org:
			return nil, fieldError(fiber.StatusConflict, "override", "the gate found regressions: give an override reason to ship anyway (it is recorded)")
		case g.gate.State == store.GateRegressed:
			return nil, fieldError(fiber.StatusConflict, "override", fmt.Sprintf("%s, whose gate found regressions: "+
				"give an override reason to ship anyway (it is recorded)", ownModelPhrase(g.names, g.model)))
		}
	}
	for _, g := range groups {
		if g.gate != nil {
			return g.gate, nil
		}
	}
	return nil, nil
}

// ownModelPhrase says which streams (quoted names) a model server of their
// own serves.
func ownModelPhrase(names []string, model string) string {
	if len(names) == 1 {
		return "stream " + names[0] + " is served by its own model " + model
	}
	return "streams " + strings.Join(names, ", ") + " are served by their own model " + model
}

// servingModelName is the name of the model an organisation's live
// sessions answer with (a promoted checkpoint's folder, else the
// console's model), "" when there is none: what a gate must have measured.
func (s *Server) servingModelName(ctx context.Context, orgID string) string {
	v := s.servingView(ctx, orgID)
	if v.Default || v.Spec == "" {
		if s.cfg.Model == nil {
			return ""
		}
		return s.configuredModelName()
	}
	return v.Spec
}

// rollbackRelease puts every stream of the release that still runs its
// version back on the version it ran before; streams moved since by
// another release are left alone and listed as skipped.
func (s *Server) rollbackRelease(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	r, err := s.store.MarkHarnessReleaseRolledBack(ctx, sc, c.Params("id"))
	if errors.Is(err, store.ErrConflict) {
		return fiber.NewError(fiber.StatusConflict, "the release was already rolled back")
	}
	if err != nil {
		return storeError(err, "release")
	}
	s.harnesses.rollbacks.Inc()
	type skipped struct {
		StreamID string `json:"stream_id"`
		Reason   string `json:"reason"`
	}
	restored := []store.ReleaseStream{}
	skips := []skipped{}
	for _, m := range r.Streams {
		st, err := s.store.Stream(ctx, sc, m.StreamID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			skips = append(skips, skipped{m.StreamID, "the stream was deleted"})
			continue
		case err != nil:
			return err
		case m.Previous == "":
			skips = append(skips, skipped{m.StreamID, "the release was the stream's first version"})
			continue
		case st.HarnessVersion != r.Version:
			skips = append(skips, skipped{m.StreamID, "the stream runs " + st.HarnessVersion + " now, from a later change"})
			continue
		}
		if err := s.store.SetStreamHarness(ctx, sc, m.StreamID, m.Previous); err != nil {
			return err
		}
		restored = append(restored, m)
	}
	if r.LoopID != "" {
		if err := s.store.AddEvolutionEvent(ctx, sc, r.LoopID, store.EvolutionEvent{Kind: "decision",
			Summary: fmt.Sprintf("rolled back %s: %d streams restored", r.Version[7:19], len(restored))}, store.LoopRolledBack); err != nil {
			return err
		}
	}
	return c.JSON(fiber.Map{"release": r, "restored": restored, "skipped": skips})
}

// compatibility is the models × harness versions table (each cell holds
// the model's latest score on each suite under that version) and the
// stream × harness version × installed plugin versions matrix: whether
// the plugins live sessions run can serve each version, and why not.
func (s *Server) compatibility(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	scores, err := s.store.HarnessScores(ctx, sc)
	if err != nil {
		return err
	}
	versions, err := s.store.HarnessVersions(ctx, sc)
	if err != nil {
		return err
	}
	type cell struct {
		Model   string             `json:"model"`
		Version string             `json:"version"`
		Suites  map[string]float64 `json:"suites"`
		N       map[string]int     `json:"n"`
		Mean    float64            `json:"mean"`
	}
	cells := map[string]*cell{}
	var keys []string
	models := map[string]bool{}
	suites := map[string]bool{}
	for _, score := range scores {
		k := score.Model + "\x00" + score.Version
		if cells[k] == nil {
			cells[k] = &cell{Model: score.Model, Version: score.Version, Suites: map[string]float64{}, N: map[string]int{}}
			keys = append(keys, k)
		}
		cells[k].Suites[score.Suite], cells[k].N[score.Suite] = round1(score.Score), score.N
		models[score.Model], suites[score.Suite] = true, true
	}
	out := make([]cell, 0, len(keys))
	for _, k := range keys {
		cl := cells[k]
		for _, v := range cl.Suites {
			cl.Mean += v
		}
		cl.Mean = round1(cl.Mean / float64(len(cl.Suites)))
		out = append(out, *cl)
	}
	type versionInfo struct {
		Version string `json:"version"`
		Name    string `json:"name"`
	}
	vs := make([]versionInfo, 0, len(versions))
	for _, v := range versions {
		vs = append(vs, versionInfo{v.Version, v.Name})
	}
	matrix, err := s.pluginMatrix(ctx, sc)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"models": sortedKeys(models), "suites": sortedKeys(suites), "versions": vs, "cells": out, "plugins": matrix})
}
