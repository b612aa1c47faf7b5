package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// harnessArea is the harness area's in-memory state: parsed versions (a
// version is its content hash, so a parsed one never goes stale), the
// release gates running in this process and the area's metrics.
type harnessArea struct {
	mu     sync.Mutex
	parsed map[string]*harness.Harness // by full version
	gates  map[string]*gateRun         // running, by gate id
	// slot lets one gate run at a time: each runs the suites in parallel
	// already, and two at once would only make both slow.
	slot chan struct{}

	gateRuns  *prometheus.CounterVec
	gateItems prometheus.Counter
	releases  *prometheus.CounterVec
	rollbacks prometheus.Counter
}

func newHarnessArea() *harnessArea {
	return &harnessArea{parsed: map[string]*harness.Harness{}, gates: map[string]*gateRun{}, slot: make(chan struct{}, 1),
		gateRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "livehat_harness_gates_total",
			Help: "Release gates finished, by state (passed, regressed, failed, cancelled)."}, []string{"state"}),
		gateItems: prometheus.NewCounter(prometheus.CounterOpts{Name: "livehat_harness_gate_items_total",
			Help: "Evaluation items the release gates ran."}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "livehat_harness_releases_total",
			Help: "Harness releases published, by kind (streams, canary)."}, []string{"kind"}),
		rollbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: "livehat_harness_rollbacks_total",
			Help: "Harness releases rolled back."}),
	}
}

// registerMetrics puts the area's collectors on reg (shared with an
// earlier server on the same registry).
func (a *harnessArea) registerMetrics(reg *prometheus.Registry, log *slog.Logger) {
	a.gateRuns = registerOrReuse(reg, a.gateRuns, log)
	a.gateItems = registerOrReuse(reg, a.gateItems, log)
	a.releases = registerOrReuse(reg, a.releases, log)
	a.rollbacks = registerOrReuse(reg, a.rollbacks, log)
}

// systemScope is an operator scope without a user: the console itself
// seeding an organisation's first versions and release.
func systemScope(orgID string) store.Scope {
	return store.Scope{OrgID: orgID, Role: store.RoleOperator}
}

// seedHarnesses prepares the harness area at start. It stores
// Config.Harnesses as versions of every organisation and, for an
// organisation without releases, records the first-run release of each to
// the streams already bound to it (the demo stream). Gates left running by
// a previous process are marked failed, and the area's metrics are
// registered on Config.Metrics.
func (s *Server) seedHarnesses(ctx context.Context) error {
	if s.cfg.Metrics != nil {
		s.harnesses.registerMetrics(s.cfg.Metrics, s.log)
	}
	if err := s.store.AbandonRunningGates(ctx, "the console restarted while the gate ran"); err != nil {
		return fmt.Errorf("console: harness gates: %w", err)
	}
	orgs, err := s.store.Orgs(ctx)
	if err != nil {
		return err
	}
	for _, org := range orgs {
		sc := systemScope(org.ID)
		for _, h := range s.cfg.Harnesses {
			doc, err := harness.Marshal(h)
			if err != nil {
				return err
			}
			if _, _, err := s.store.PutHarnessVersion(ctx, sc, store.HarnessVersion{Version: h.Version(), Name: h.Name,
				Document: doc, Notes: "embedded with the console"}); err != nil {
				return fmt.Errorf("console: seed harness %s: %w", h.ShortVersion(), err)
			}
		}
		released, err := s.store.HasHarnessReleases(ctx, org.ID)
		if err != nil || released {
			return err
		}
		streams, err := s.store.Streams(ctx, sc)
		if err != nil {
			return err
		}
		for _, h := range s.cfg.Harnesses {
			var bound []store.ReleaseStream
			for _, st := range streams {
				if st.HarnessVersion == h.Version() {
					bound = append(bound, store.ReleaseStream{StreamID: st.ID, Name: st.Name, Previous: ""})
				}
			}
			if len(bound) == 0 {
				continue
			}
			if _, err := s.store.CreateHarnessRelease(ctx, sc, store.HarnessRelease{Version: h.Version(), Streams: bound,
				Override: "first run: the demo harness embedded with the console"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// harnessVersion resolves a version (full hash or a prefix of at least 8
// hex digits) of an organisation to its parsed harness. Live sessions call
// it at each turn boundary with their stream's harness_version.
func (s *Server) harnessVersion(ctx context.Context, orgID, ref string) (*harness.Harness, *store.HarnessVersion, error) {
	v, err := s.store.HarnessVersion(ctx, store.Scope{OrgID: orgID}, ref)
	if err != nil {
		return nil, nil, err
	}
	a := s.harnesses
	a.mu.Lock()
	h, ok := a.parsed[v.Version]
	a.mu.Unlock()
	if ok {
		return h, v, nil
	}
	h, err = harness.Parse(v.Document, harness.FormatJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("stored harness %s: %w", v.Version, err)
	}
	if got := h.Version(); got != v.Version {
		return nil, nil, fmt.Errorf("stored harness %s reads back as %s", v.Version, got)
	}
	a.mu.Lock()
	a.parsed[v.Version] = h
	a.mu.Unlock()
	return h, v, nil
}

// lookupVersion is harnessVersion for a request: field names the request
// field the version came from, for the error.
func (s *Server) lookupVersion(c *fiber.Ctx, field, ref string) (*harness.Harness, *store.HarnessVersion, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, nil, badRequest(field, "name a harness version (its sha256 hash or the 12-digit short form)")
	}
	h, v, err := s.harnessVersion(c.UserContext(), scopeOf(c).OrgID, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, fieldError(fiber.StatusNotFound, field, fmt.Sprintf("no harness version %q", ref))
	case errors.Is(err, store.ErrAmbiguous):
		return nil, nil, fieldError(fiber.StatusConflict, field, fmt.Sprintf("version prefix %q is ambiguous: give more digits", ref))
	}
	return h, v, err
}

// harnessRoutes serves harness versions, drafts and HSA previews. Reading
// versions, validating, diffing and rendering are open to every role of
// the organisation (merchants' streams and developers' plugins run under
// them); changing anything is for operators.
func (s *Server) harnessRoutes(api fiber.Router) {
	api.Get("/harnesses", s.listHarnesses)
	api.Get("/harnesses/:version", s.getHarness)
	api.Post("/harnesses/:version/render", s.renderHarness)
	api.Post("/harness/validate", s.validateHarness)
	api.Post("/harness/diff", s.diffHarnesses)

	op := requireRole(store.RoleOperator)
	api.Get("/harness-drafts", op, s.listDrafts)
	api.Post("/harness-drafts", op, s.createDraft)
	api.Get("/harness-drafts/:id", op, s.getDraft)
	api.Put("/harness-drafts/:id", op, s.saveDraft)
	api.Delete("/harness-drafts/:id", op, s.deleteDraft)
	api.Post("/harness-drafts/:id/commit", op, s.commitDraft)
	api.Get("/harness-drafts/:id/diff", op, s.diffDraft)
	api.Get("/hsa/families", op, s.listFamilies)
	api.Post("/hsa/preview", op, s.previewHSA)
}

// harnessSummary is a version as the versions list shows it.
type harnessSummary struct {
	Version string `json:"version"`
	Short   string `json:"short"`
	Name    string `json:"name"`
	Parent  string `json:"parent,omitempty"`
	Author  string `json:"author,omitempty"`
	Notes   string `json:"notes,omitempty"`
	Created string `json:"created_at,omitempty"`
	Skills  int    `json:"skills"`
	Tools   int    `json:"tools"`
	Hooks   int    `json:"hooks"`
	// Streams is how many of the caller's visible streams run it.
	Streams int `json:"streams"`
}

func summarize(h *harness.Harness) harnessSummary {
	return harnessSummary{Version: h.Version(), Short: h.ShortVersion(), Name: h.Name, Skills: len(h.Skills), Tools: len(h.Tools), Hooks: len(h.Hooks)}
}

func (s *Server) listHarnesses(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	versions, err := s.store.HarnessVersions(ctx, sc)
	if err != nil {
		return err
	}
	bound := map[string]int{}
	if sc.Role != store.RoleDeveloper {
		streams, err := s.store.Streams(ctx, sc)
		if err != nil {
			return err
		}
		for _, st := range streams {
			bound[st.HarnessVersion]++
		}
	}
	out := make([]harnessSummary, 0, len(versions))
	for _, v := range versions {
		h, _, err := s.harnessVersion(ctx, sc.OrgID, v.Version)
		if err != nil {
			return err
		}
		sum := summarize(h)
		sum.Parent, sum.Author, sum.Notes, sum.Created = v.Parent, v.Author, v.Notes, v.Created.Format("2006-01-02T15:04:05Z07:00")
		sum.Streams = bound[v.Version]
		out = append(out, sum)
	}
	return c.JSON(out)
}

func (s *Server) getHarness(c *fiber.Ctx) error {
	h, v, err := s.lookupVersion(c, "version", c.Params("version"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"version": v.Version, "short": h.ShortVersion(), "name": v.Name, "parent": v.Parent, "author": v.Author,
		"notes": v.Notes, "created_at": v.Created, "harness": h})
}

func (s *Server) renderHarness(c *fiber.Ctx) error {
	h, _, err := s.lookupVersion(c, "version", c.Params("version"))
	if err != nil {
		return err
	}
	var conv harness.Conversation
	if len(c.Body()) > 0 {
		if err := decodeStrict(c.Body(), &conv); err != nil {
			return badRequest("conversation", err.Error())
		}
	}
	p, err := harness.Render(h, conv, harness.RenderOptions{OmitToolsSection: c.QueryBool("omit_tools_section")})
	if err != nil {
		return fieldError(fiber.StatusUnprocessableEntity, "conversation", err.Error())
	}
	return c.JSON(p)
}

// formatOf reads a harness document format from a Content-Type or a
// format field: "json" unless it names YAML.
func formatOf(v string) harness.Format {
	switch strings.ToLower(strings.TrimSpace(strings.Split(v, ";")[0])) {
	case "yaml", "application/yaml", "application/x-yaml", "text/yaml":
		return harness.FormatYAML
	}
	return harness.FormatJSON
}

func problemsOf(err error) []harnessProblem {
	var list harness.ErrorList
	var one *harness.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = harness.ErrorList{one}
	default:
		return []harnessProblem{{Message: err.Error()}}
	}
	out := make([]harnessProblem, len(list))
	for i, e := range list {
		out[i] = harnessProblem{Line: e.Line, Col: e.Col, Path: e.Path, Message: e.Msg}
	}
	return out
}

// Error codes of the harness routes' 422 answers (beside json.go's).
const (
	codeHarnessInvalid      = "harness_invalid"      // the document does not parse or validate; problems listed
	codeHarnessIncompatible = "harness_incompatible" // the organisation's plugins cannot serve it; problems listed
)

// invalidHarness is the 422 answer for a document that does not parse or
// validate: code harness_invalid and every problem with its line, column
// and path.
func invalidHarness(c *fiber.Ctx, field string, err error) error {
	return c.Status(fiber.StatusUnprocessableEntity).JSON(apiError{Error: "invalid harness: " + err.Error(), Code: codeHarnessInvalid,
		Field: field, Problems: problemsOf(err)})
}

// validateHarness parses and validates a document, then checks it
// against the organisation's installed plugins: a tool whose plugin
// cannot take what the tool allows is refused here, never on air.
func (s *Server) validateHarness(c *fiber.Ctx) error {
	format := formatOf(string(c.Request().Header.ContentType()))
	h, err := harness.Parse(c.Body(), format)
	if err != nil {
		return invalidHarness(c, "body", err)
	}
	warnings, err := s.checkWritten(c.UserContext(), scopeOf(c).OrgID, h)
	if err != nil {
		if !isCompatibility(err) {
			return err
		}
		return incompatible(c, fiber.StatusUnprocessableEntity, "body", "harness", err, c.Body(), format)
	}
	return c.JSON(validated{harnessSummary: summarize(h), Warnings: warnings})
}

// validated is a harness that validates, with what could not be checked.
type validated struct {
	harnessSummary
	Warnings []string `json:"warnings"`
}

func (s *Server) diffHarnesses(c *fiber.Ctx) error {
	var req struct {
		Old string `json:"old"`
		New string `json:"new"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"old\": VERSION, \"new\": VERSION}: "+err.Error())
	}
	a, _, err := s.lookupVersion(c, "old", req.Old)
	if err != nil {
		return err
	}
	b, _, err := s.lookupVersion(c, "new", req.New)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"old": a.Version(), "new": b.Version(), "changes": harness.Diff(a, b)})
}

// maxDraftBytes bounds a draft document: the demo harness is ~30 KiB.
const maxDraftBytes = 1 << 20

type draftRequest struct {
	Name        string `json:"name"`
	BaseVersion string `json:"base_version"`
	Format      string `json:"format"`
	Document    string `json:"document"`
	// Notes is nil when the request leaves them out: a save keeps the
	// draft's notes then, and only an explicit "" clears them.
	Notes    *string `json:"notes"`
	Revision int64   `json:"revision"`
}

// notes is the request's notes, "" when it has none.
func (r *draftRequest) notes() string {
	if r.Notes == nil {
		return ""
	}
	return *r.Notes
}

func (r *draftRequest) check() error {
	switch {
	case r.Format != "" && r.Format != "json" && r.Format != "yaml":
		return badRequest("format", fmt.Sprintf("%q: want json or yaml", r.Format))
	case len(r.Document) > maxDraftBytes:
		return badRequest("document", fmt.Sprintf("%d bytes, over the %d a harness may have", len(r.Document), maxDraftBytes))
	case len(r.Name) > 200:
		return badRequest("name", "at most 200 characters")
	case len(r.notes()) > 10000:
		return badRequest("notes", "at most 10000 characters")
	}
	return nil
}

func (s *Server) listDrafts(c *fiber.Ctx) error {
	list, err := s.store.HarnessDrafts(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(orEmpty(list))
}

// createDraft opens a draft from a base version (its document, in the
// format asked for) or from a document given in full.
func (s *Server) createDraft(c *fiber.Ctx) error {
	var req draftRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"base_version\", \"name\", \"format\", \"document\", \"notes\"}: "+err.Error())
	}
	if err := req.check(); err != nil {
		return err
	}
	if req.Revision != 0 {
		return badRequest("revision", "a new draft has no revision")
	}
	d, err := s.openDraft(c, req, "")
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(d)
}

// openDraft creates a draft for req (see createDraft), attached to an
// evolution loop when loopID is set.
func (s *Server) openDraft(c *fiber.Ctx, req draftRequest, loopID string) (*store.HarnessDraft, error) {
	if req.Format == "" {
		req.Format = "json"
	}
	if req.BaseVersion != "" {
		h, v, err := s.lookupVersion(c, "base_version", req.BaseVersion)
		if err != nil {
			return nil, err
		}
		req.BaseVersion = v.Version
		if req.Document == "" {
			doc, err := documentIn(h, req.Format)
			if err != nil {
				return nil, err
			}
			req.Document = doc
		}
		if req.Name == "" {
			req.Name = h.Name
		}
	}
	if req.Document == "" {
		return nil, badRequest("base_version", "name the version to start from, or give the document")
	}
	if strings.TrimSpace(req.Name) == "" {
		return nil, badRequest("name", "a draft needs a name")
	}
	return s.store.CreateHarnessDraft(c.UserContext(), scopeOf(c), store.HarnessDraft{Name: req.Name, BaseVersion: req.BaseVersion,
		Format: req.Format, Document: req.Document, Notes: req.notes(), LoopID: loopID})
}

func documentIn(h *harness.Harness, format string) (string, error) {
	var doc []byte
	var err error
	if format == "yaml" {
		doc, err = harness.MarshalYAML(h)
	} else {
		doc, err = harness.Marshal(h)
	}
	return string(doc), err
}

func (s *Server) getDraft(c *fiber.Ctx) error {
	d, err := s.store.HarnessDraft(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "harness draft")
	}
	return c.JSON(d)
}

// saveDraft writes the draft if the revision it names is current; the
// second of two concurrent saves gets 409 and the first one's text stays.
// A draft may be saved while invalid: validation happens on commit.
func (s *Server) saveDraft(c *fiber.Ctx) error {
	var req draftRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"name\", \"format\", \"document\", \"notes\", \"revision\"}: "+err.Error())
	}
	if err := req.check(); err != nil {
		return err
	}
	if req.Revision < 1 {
		return badRequest("revision", "name the revision your edit is based on")
	}
	if req.BaseVersion != "" {
		return badRequest("base_version", "a draft's base is fixed when it is opened")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	cur, err := s.store.HarnessDraft(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "harness draft")
	}
	if req.Format == "" {
		req.Format = cur.Format
	}
	if req.Name == "" {
		req.Name = cur.Name
	}
	notes := cur.Notes
	if req.Notes != nil {
		notes = *req.Notes
	}
	d, err := s.store.SaveHarnessDraft(ctx, sc, store.HarnessDraft{ID: cur.ID, Name: req.Name, Format: req.Format,
		Document: req.Document, Notes: notes, Revision: req.Revision})
	if err != nil {
		return storeError(err, "harness draft")
	}
	return c.JSON(d)
}

func (s *Server) deleteDraft(c *fiber.Ctx) error {
	if err := s.store.DeleteHarnessDraft(c.UserContext(), scopeOf(c), c.Params("id")); err != nil {
		return storeError(err, "harness draft")
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// parseDraft parses and validates a draft's document.
func parseDraft(d *store.HarnessDraft) (*harness.Harness, error) {
	return harness.Parse([]byte(d.Document), formatOf(d.Format))
}

// commitDraft turns the draft, at the revision named, into an immutable
// version whose parent is the draft's base, if it validates and the
// installed plugins can serve it. The same content committed twice is the
// same version.
func (s *Server) commitDraft(c *fiber.Ctx) error {
	var req struct {
		Revision int64  `json:"revision"`
		Notes    string `json:"notes"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"revision\", \"notes\"}: "+err.Error())
	}
	if req.Revision < 1 {
		return badRequest("revision", "name the revision you are committing")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	d, err := s.store.HarnessDraft(ctx, sc, c.Params("id"))
	if err != nil {
		return storeError(err, "harness draft")
	}
	if d.Revision != req.Revision {
		return storeError(store.ErrConflict, "harness draft")
	}
	h, err := parseDraft(d)
	if err != nil {
		return invalidHarness(c, "document", err)
	}
	warnings, err := s.checkWritten(ctx, sc.OrgID, h)
	if err != nil {
		if !isCompatibility(err) {
			return err
		}
		return incompatible(c, fiber.StatusUnprocessableEntity, "document", "draft", err, []byte(d.Document), formatOf(d.Format))
	}
	doc, err := harness.Marshal(h)
	if err != nil {
		return err
	}
	notes := req.Notes
	if notes == "" {
		notes = d.Notes
	}
	v, d, err := s.store.CommitHarnessDraft(ctx, sc, d.ID, req.Revision, store.HarnessVersion{Version: h.Version(), Name: h.Name,
		Document: doc, Parent: d.BaseVersion, Notes: notes})
	if err != nil {
		return storeError(err, "harness draft")
	}
	if d.LoopID != "" {
		changes := 0
		if base, _, err := s.harnessVersion(ctx, sc.OrgID, d.BaseVersion); err == nil {
			changes = len(harness.Diff(base, h))
		}
		detail, _ := json.Marshal(fiber.Map{"draft_id": d.ID, "version": v.Version, "changes": changes})
		if err := s.store.AddEvolutionEvent(ctx, sc, d.LoopID, store.EvolutionEvent{Kind: "edit",
			Summary: fmt.Sprintf("committed %s (%d changes from the base)", h.ShortVersion(), changes), Detail: detail}, ""); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"version": v, "draft": d, "summary": summarize(h), "warnings": warnings})
}

// diffDraft compares a draft, as it is saved, with a version: the draft's
// base unless ?against= names another. A draft that does not parse
// answers 422 with its problems.
func (s *Server) diffDraft(c *fiber.Ctx) error {
	d, err := s.store.HarnessDraft(c.UserContext(), scopeOf(c), c.Params("id"))
	if err != nil {
		return storeError(err, "harness draft")
	}
	against := c.Query("against", d.BaseVersion)
	old, _, err := s.lookupVersion(c, "against", against)
	if err != nil {
		return err
	}
	h, err := parseDraft(d)
	if err != nil {
		return invalidHarness(c, "document", err)
	}
	return c.JSON(fiber.Map{"old": old.Version(), "new": h.Version(), "summary": summarize(h), "changes": harness.Diff(old, h)})
}

// familyInfo is an HSA family as the console lists it.
type familyInfo struct {
	Name        string `json:"name"`
	Pool        string `json:"pool"`
	Dimension   string `json:"dimension"`
	Description string `json:"description"`
}

func (s *Server) listFamilies(c *fiber.Ctx) error {
	fams := hsa.Families()
	out := make([]familyInfo, len(fams))
	for i, f := range fams {
		out[i] = familyInfo{f.Name, string(f.Pool), f.Dimension, f.Description}
	}
	return c.JSON(out)
}

// hsaPreviewRequest asks for one HSA variant of a version or a draft: one
// family, or N families drawn from a pool, with a seed; gold calls under
// the base harness are mapped to the variant.
type hsaPreviewRequest struct {
	Version string     `json:"version"`
	DraftID string     `json:"draft_id"`
	Family  string     `json:"family"`
	Pool    string     `json:"pool"`
	N       int        `json:"n"`
	Seed    int64      `json:"seed"`
	Gold    []hsa.Call `json:"gold"`
}

// mappedCall is a gold call under the base harness and under the variant.
type mappedCall struct {
	Base    hsa.Call  `json:"base"`
	Variant *hsa.Call `json:"variant,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// previewHSA answers the variant of the base and its gold mapping, with
// both rendered system prompts for a side-by-side view.
func (s *Server) previewHSA(c *fiber.Ctx) error {
	var req hsaPreviewRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"version\" or \"draft_id\", \"family\" or \"pool\", \"seed\", \"gold\"}: "+err.Error())
	}
	var base *harness.Harness
	switch {
	case req.DraftID != "" && req.Version != "":
		return badRequest("draft_id", "give a version or a draft, not both")
	case req.DraftID != "":
		d, err := s.store.HarnessDraft(c.UserContext(), scopeOf(c), req.DraftID)
		if err != nil {
			return fieldError(fiber.StatusNotFound, "draft_id", "no such harness draft")
		}
		if base, err = parseDraft(d); err != nil {
			return invalidHarness(c, "draft_id", err)
		}
	default:
		h, _, err := s.lookupVersion(c, "version", req.Version)
		if err != nil {
			return err
		}
		base = h
	}
	for i, g := range req.Gold {
		if g.Name == "" {
			return badRequest(fmt.Sprintf("gold[%d].name", i), "a gold call names a tool")
		}
	}
	opts := hsa.Options{Gold: req.Gold, MinToolRounds: len(req.Gold)}
	var variant *harness.Harness
	var rec hsa.Record
	switch {
	case req.Family != "" && req.Pool != "":
		return badRequest("pool", "give a family or a pool, not both")
	case req.Family != "":
		f, err := hsa.Lookup(req.Family)
		if err != nil {
			return badRequest("family", err.Error())
		}
		h, m, err := f.Apply(base, req.Seed, opts)
		if err != nil {
			return fieldError(fiber.StatusUnprocessableEntity, "family", err.Error())
		}
		variant, rec = h, hsa.Record{Seed: req.Seed, Transforms: []hsa.Transform{{Family: f.Name, Pool: f.Pool, Seed: req.Seed, Mapping: m}}}
	case req.Pool != "":
		if req.N < 0 || req.N > 8 {
			return badRequest("n", "draw 1 to 8 families")
		}
		n := max(req.N, 1)
		if _, err := hsa.PoolFamilies(hsa.Pool(req.Pool)); err != nil {
			return badRequest("pool", err.Error())
		}
		h, r, err := hsa.Augment(base, hsa.Pool(req.Pool), req.Seed, n, opts)
		if err != nil {
			return fieldError(fiber.StatusUnprocessableEntity, "pool", err.Error())
		}
		variant, rec = h, r
	default:
		return badRequest("family", "name an HSA family, or a pool to draw from")
	}
	m := rec.Mapping()
	gold := make([]mappedCall, len(req.Gold))
	for i, g := range req.Gold {
		gold[i].Base = g
		if mc, err := m.Map(g); err != nil {
			gold[i].Error = err.Error()
		} else {
			gold[i].Variant = &mc
		}
	}
	return c.JSON(fiber.Map{
		"base":    fiber.Map{"version": base.Version(), "prompt": systemPrompt(base), "harness": base},
		"variant": fiber.Map{"version": variant.Version(), "prompt": systemPrompt(variant), "harness": variant},
		"record":  rec, "mapping": m, "gold": gold, "changes": harness.Diff(base, variant),
	})
}

// systemPrompt renders a harness's system prompt for a one-question
// conversation, or says why it cannot.
func systemPrompt(h *harness.Harness) string {
	p, err := harness.Render(h, harness.Conversation{Messages: []harness.Message{{Role: harness.RoleUser, Content: "…"}}}, harness.RenderOptions{})
	if err != nil || len(p.Messages) == 0 {
		return fmt.Sprintf("(cannot render: %v)", err)
	}
	return p.Messages[0].Content
}

// currentVersion is the version most of the organisation's streams run:
// the baseline a gate compares a candidate against by default. Ties go to
// the most recently created version.
func (s *Server) currentVersion(ctx context.Context, orgID string) (string, error) {
	streams, err := s.store.Streams(ctx, systemScope(orgID))
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	for _, st := range streams {
		if st.HarnessVersion != "" {
			count[st.HarnessVersion]++
		}
	}
	versions, err := s.store.HarnessVersions(ctx, systemScope(orgID))
	if err != nil {
		return "", err
	}
	best, bestN := "", -1
	for _, v := range versions { // newest first
		if n := count[v.Version]; n > bestN {
			best, bestN = v.Version, n
		}
	}
	if best == "" {
		return "", errors.New("the organisation has no harness version yet")
	}
	return best, nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
