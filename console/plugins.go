package console

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/plugins"
	"github.com/livehat/livehat/runtime"
)

// maxPluginUpload bounds an uploaded package; the server's body limit
// bounds it further (a multipart envelope needs a little room).
const maxPluginUpload = 32 << 20

// pluginRoutes serves the plugin registry: upload, versions, enable, trial.
// It also sets up the plugin runtime the routes and streamPlugins share.
func (s *Server) pluginRoutes(api fiber.Router) {
	s.plugins = newPluginRuntime(s.cfg, s.store, s.log)
	g := api.Group("/plugins", requireRole(store.RoleOperator, store.RoleDeveloper))
	g.Get("/", s.listPlugins)
	g.Post("/", s.uploadPlugin)
	g.Get("/:name", s.getPlugin)
	g.Get("/:name/versions", s.listPluginVersions)
	g.Get("/:name/versions/:version/package", s.downloadPlugin)
	g.Post("/:name/enable", s.enablePlugin(true))
	g.Post("/:name/disable", s.enablePlugin(false))
	g.Post("/:name/rollback", s.rollbackPlugin)
	g.Post("/:name/try", s.tryPlugin)
	keys := api.Group("/plugin-keys", requireRole(store.RoleOperator, store.RoleDeveloper))
	keys.Get("/", s.listPluginKeys)
	keys.Post("/", requireRole(store.RoleOperator), s.addPluginKey)
	keys.Delete("/:id", requireRole(store.RoleOperator), s.deletePluginKey)
}

// streamPlugins is the plugin set a stream's sessions run: the active
// versions of the organisation's enabled plugins, loaded in the sandbox,
// bound to the stream's catalog. Live sessions call it at every turn
// boundary, so a set is cached until a plugin of the org changes.
func (s *Server) streamPlugins(ctx context.Context, orgID string, catalog []byte) (*runtime.PluginSet, error) {
	return s.plugins.set(ctx, orgID, catalog)
}

// sessionPlugins is streamPlugins with every call counted and timed for
// the Plugins page and the livehat_plugin_* metrics.
func (s *Server) sessionPlugins(ctx context.Context, orgID string, catalog []byte) (runtime.Plugins, error) {
	set, err := s.streamPlugins(ctx, orgID, catalog)
	if err != nil {
		return nil, err
	}
	return meteredPlugins{next: set, r: s.plugins, org: orgID}, nil
}

// exportView is one tool, hook or skill a plugin declares, with an input
// the "try it" panel starts from.
type exportView struct {
	Kind        plugins.Kind    `json:"kind"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Event       string          `json:"event,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Example     json.RawMessage `json:"example_input"`
}

// pluginView is a plugin as the API shows it: the stored row, what its
// active version declares, and its calls since the console started.
type pluginView struct {
	Name        string                      `json:"name"`
	Owner       string                      `json:"owner"`
	OwnerID     string                      `json:"owner_id"`
	Enabled     bool                        `json:"enabled"`
	Revision    int64                       `json:"revision"`
	UpdatedAt   time.Time                   `json:"updated_at"`
	Version     string                      `json:"version"`
	Description string                      `json:"description,omitempty"`
	Kinds       []plugins.Kind              `json:"kinds"`
	SHA256      string                      `json:"sha256"`
	Signature   string                      `json:"signature"`
	Signer      string                      `json:"signer,omitempty"`
	Size        int64                       `json:"size"`
	UploadedAt  time.Time                   `json:"uploaded_at"`
	Exports     []exportView                `json:"exports"`
	Permissions []plugins.PermissionRequest `json:"permissions"`
	Limits      plugins.Limits              `json:"limits"`
	Stats       callSummary                 `json:"stats"`
	// Problem says why the active version could not be loaded for live
	// sessions (they run without it); empty when it loads.
	Problem string `json:"problem,omitempty"`
}

// versionView is one uploaded version.
type versionView struct {
	Version       string    `json:"version"`
	Active        bool      `json:"active"`
	SHA256        string    `json:"sha256"`
	PackageSHA256 string    `json:"package_sha256"`
	Signature     string    `json:"signature"`
	Signer        string    `json:"signer,omitempty"`
	Size          int64     `json:"size"`
	PackageSize   int64     `json:"package_size"`
	UploadedBy    string    `json:"uploaded_by"`
	UploadedAt    time.Time `json:"uploaded_at"`
	Kinds         []string  `json:"kinds"`
}

func signatureText(signer string) string {
	if signer == "" {
		return "unsigned"
	}
	return "verified"
}

func decodeManifest(raw json.RawMessage) (*plugins.Manifest, error) {
	var m plugins.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("stored manifest: %w", err)
	}
	return &m, nil
}

func (s *Server) viewPlugin(p *store.Plugin) (pluginView, error) {
	v := pluginView{Name: p.Name, Owner: p.OwnerName, OwnerID: p.OwnerID, Enabled: p.Enabled, Revision: p.Revision,
		UpdatedAt: p.UpdatedAt, Kinds: []plugins.Kind{}, Exports: []exportView{}, Permissions: []plugins.PermissionRequest{},
		Stats: s.plugins.summary(p.OrgID, p.Name)}
	if p.Active == nil {
		return v, nil
	}
	a := p.Active
	m, err := decodeManifest(a.Manifest)
	if err != nil {
		return v, err
	}
	v.Version, v.Description, v.SHA256, v.Signer, v.Size, v.UploadedAt = a.Version, m.Description, a.SHA256, a.Signer, a.Size, a.UploadedAt
	v.Signature, v.Kinds, v.Exports, v.Limits = signatureText(a.Signer), orEmpty(m.Kinds()), exportsOf(m), m.Limits.WithDefaults()
	v.Permissions, v.Problem = orEmpty(m.Permissions), s.plugins.problem(a.ID)
	return v, nil
}

func viewVersion(pv store.PluginVersion) versionView {
	v := versionView{Version: pv.Version, Active: pv.Active, SHA256: pv.SHA256, PackageSHA256: pv.PackageSHA256,
		Signature: signatureText(pv.Signer), Signer: pv.Signer, Size: pv.Size, PackageSize: pv.PackageSize,
		UploadedBy: pv.UploadedByName, UploadedAt: pv.UploadedAt, Kinds: []string{}}
	if m, err := decodeManifest(pv.Manifest); err == nil {
		for _, k := range m.Kinds() {
			v.Kinds = append(v.Kinds, string(k))
		}
	}
	return v
}

// exportsOf lists what a manifest declares, each with an example input:
// {} for a tool, an event of the hook, the skill's own input.
func exportsOf(m *plugins.Manifest) []exportView {
	out := []exportView{}
	for _, t := range m.Tools {
		out = append(out, exportView{Kind: plugins.KindTool, Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Example: json.RawMessage(`{}`)})
	}
	for _, h := range m.Hooks {
		ex, _ := json.Marshal(plugins.HookInput{Event: h.Event, Text: "Is the serum good for dry skin?", Config: h.Config,
			Viewer: &plugins.Viewer{ID: "viewer-1", Name: "Lin"}})
		out = append(out, exportView{Kind: plugins.KindHook, Name: h.Name, Event: string(h.Event), Example: ex})
	}
	for _, sk := range m.Skills {
		ex, _ := json.Marshal(plugins.SkillInput{Skill: sk.ID})
		out = append(out, exportView{Kind: plugins.KindSkill, Name: sk.ID, Description: sk.Description, Example: ex})
	}
	return out
}

func (s *Server) listPlugins(c *fiber.Ctx) error {
	list, err := s.store.Plugins(c.UserContext(), scopeOf(c))
	if err != nil {
		return err
	}
	out := make([]pluginView, 0, len(list))
	for i := range list {
		v, err := s.viewPlugin(&list[i])
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return c.JSON(out)
}

// pluginName reads and checks the :name route parameter.
func pluginName(c *fiber.Ctx) (string, error) {
	name := c.Params("name")
	if !pluginNameRE.MatchString(name) {
		return "", fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("no such plugin %q", name))
	}
	return name, nil
}

var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}[a-z0-9]$`)

func (s *Server) getPlugin(c *fiber.Ctx) error {
	name, err := pluginName(c)
	if err != nil {
		return err
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	p, err := s.store.Plugin(ctx, sc, name)
	if err != nil {
		return storeError(err, "plugin")
	}
	v, err := s.viewPlugin(p)
	if err != nil {
		return err
	}
	versions, err := s.store.PluginVersions(ctx, sc, name)
	if err != nil {
		return storeError(err, "plugin")
	}
	vs := make([]versionView, len(versions))
	for i, pv := range versions {
		vs[i] = viewVersion(pv)
	}
	var manifest json.RawMessage
	if p.Active != nil {
		manifest = p.Active.Manifest
	}
	return c.JSON(fiber.Map{"plugin": v, "versions": vs, "manifest": manifest, "sandbox": s.sandboxStats(p)})
}

// sandboxView is the sandbox's own counters of the active version while it
// is loaded: every call of every path, and how its instances fared.
type sandboxView struct {
	Calls           uint64 `json:"calls"`
	Failures        uint64 `json:"failures"`
	Instantiations  uint64 `json:"instantiations"`
	Discards        uint64 `json:"discards"`
	Recycles        uint64 `json:"recycles"`
	IdleInstances   int    `json:"idle_instances"`
	PeakMemoryBytes uint64 `json:"peak_memory_bytes"`
}

func (s *Server) sandboxStats(p *store.Plugin) *sandboxView {
	if p.Active == nil {
		return nil
	}
	lp := s.plugins.loadedVersion(p.Active.ID)
	if lp == nil {
		return nil
	}
	st := lp.Stats()
	return &sandboxView{Calls: st.Calls, Failures: st.Failures, Instantiations: st.Instantiations, Discards: st.Discards,
		Recycles: st.Recycles, IdleInstances: st.Idle, PeakMemoryBytes: st.PeakMemoryBytes}
}

func (s *Server) listPluginVersions(c *fiber.Ctx) error {
	name, err := pluginName(c)
	if err != nil {
		return err
	}
	versions, err := s.store.PluginVersions(c.UserContext(), scopeOf(c), name)
	if err != nil {
		return storeError(err, "plugin")
	}
	out := make([]versionView, len(versions))
	for i, pv := range versions {
		out[i] = viewVersion(pv)
	}
	return c.JSON(out)
}

// downloadPlugin sends a version's package exactly as it was uploaded.
func (s *Server) downloadPlugin(c *fiber.Ctx) error {
	name, err := pluginName(c)
	if err != nil {
		return err
	}
	pv, err := s.store.PluginVersion(c.UserContext(), scopeOf(c), name, c.Params("version"))
	if err != nil {
		return storeError(err, "plugin version")
	}
	data, err := s.plugins.files.read(pv.PackageSHA256)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%s%s"`, name, pv.Version, plugins.PackageExt))
	c.Type("zip")
	return c.Send(data)
}

// uploadLimit is the largest package uploadPlugin accepts: the upload
// body limit less room for a multipart envelope.
func (s *Server) uploadLimit() int {
	return min(maxPluginUpload, s.cfg.UploadBodyLimit-min(uploadEnvelope, s.cfg.UploadBodyLimit/8))
}

// uploadPlugin accepts a packed plugin (.lhp), checks it as the sandbox
// will run it, stores the archive and records the version. The first
// version of a name, or a newer one, becomes active from the next turn.
func (s *Server) uploadPlugin(c *fiber.Ctx) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	raw, err := decodeUpload(string(c.Request().Header.ContentType()), c.Body(), s.uploadLimit())
	if err != nil {
		return err
	}
	if err := checkArchive(raw); err != nil {
		return err
	}
	pkg, err := plugins.ReadPackage(raw)
	if err != nil {
		return packageProblem(err)
	}
	name, version := pkg.Manifest.Name, pkg.Manifest.Version
	if _, err := s.store.PluginVersion(ctx, sc, name, version); err == nil {
		return fieldError(fiber.StatusConflict, "version", fmt.Sprintf("%s@%s is already uploaded; a new build needs a new version in its manifest", name, version))
	}
	if err := s.uploadBreaks(c, pkg.Manifest); err != nil {
		return err
	}
	trusted, err := s.trustedKeys(ctx, sc)
	if err != nil {
		return err
	}
	p, pv, err := s.record(ctx, sc, pkg, raw, trusted)
	if errors.Is(err, store.ErrConflict) {
		field := "name"
		if strings.Contains(err.Error(), "already uploaded") {
			field = "version" // a concurrent upload of the same version won
		}
		return fieldError(fiber.StatusConflict, field, strings.TrimSuffix(err.Error(), ": "+store.ErrConflict.Error()))
	}
	if err != nil {
		return err
	}
	s.plugins.changed(sc.OrgID)
	v, err := s.viewPlugin(p)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"plugin": v, "version": viewVersion(*pv)})
}

// trustedKeys are the organisation's plugin signing keys.
func (s *Server) trustedKeys(ctx context.Context, sc store.Scope) (map[string]ed25519.PublicKey, error) {
	keys, err := s.store.PluginKeys(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ed25519.PublicKey, len(keys))
	for _, k := range keys {
		pub, err := hex.DecodeString(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("stored key %q: %w", k.KeyID, err)
		}
		out[k.KeyID] = pub
	}
	return out, nil
}

// revisionRequest is the body of enable, disable and rollback: the
// revision the caller saw (0 or absent skips the check) and, for a
// rollback, the version to activate.
type revisionRequest struct {
	Revision int64  `json:"revision"`
	Version  string `json:"version"`
}

func readRevisionRequest(c *fiber.Ctx) (revisionRequest, error) {
	var req revisionRequest
	if len(bytes.TrimSpace(c.Body())) == 0 {
		return req, nil
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return req, badRequest("body", "want {\"revision\": N, \"version\": \"X.Y.Z\"}: "+err.Error())
	}
	if req.Revision < 0 {
		return req, badRequest("revision", "must not be negative")
	}
	return req, nil
}

func (s *Server) enablePlugin(on bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return s.changePlugin(c, func(ctx context.Context, sc store.Scope, name string, req revisionRequest) (*store.Plugin, error) {
			if req.Version != "" {
				return nil, badRequest("version", "enable and disable act on the plugin, not a version (roll back to choose a version)")
			}
			if !on {
				if err := s.pluginChangeBreaks(c, name, nil); err != nil {
					return nil, err
				}
			}
			// Enabling runs the active version: its memory must fit.
			running := func() (*reservation, error) {
				if !on {
					return nil, nil
				}
				p, err := s.store.Plugin(ctx, sc, name)
				if err != nil || p.Active == nil {
					return nil, storeError(err, "plugin")
				}
				return s.runningReservation(sc, name, p.Active)
			}
			var p *store.Plugin
			err := s.plugins.budget.admit(ctx, sc.OrgID, name, "enabling "+name, running, func() error {
				var err error
				p, err = s.store.SetPluginEnabled(ctx, sc, name, on, req.Revision)
				return storeError(err, "plugin")
			})
			return p, err
		})
	}
}

// runningReservation is what version pv of the plugin reserves once it
// runs, refused when it is over what the caller's role may give a plugin.
func (s *Server) runningReservation(sc store.Scope, name string, pv *store.PluginVersion) (*reservation, error) {
	m, err := decodeManifest(pv.Manifest)
	if err != nil {
		return nil, err
	}
	r := reservationOf(m.Limits)
	if err := s.plugins.budget.allowedFor(sc.Role, name+"@"+pv.Version, r); err != nil {
		return nil, err
	}
	return &r, nil
}

// rollbackPlugin makes an uploaded version the active one.
func (s *Server) rollbackPlugin(c *fiber.Ctx) error {
	return s.changePlugin(c, func(ctx context.Context, sc store.Scope, name string, req revisionRequest) (*store.Plugin, error) {
		if _, err := plugins.ParseSemver(req.Version); err != nil {
			return nil, badRequest("version", "want the version to roll back to: "+err.Error())
		}
		if err := s.rollbackBreaks(c, name, req.Version); err != nil {
			return nil, err
		}
		// An enabled plugin runs the version it rolls back to: its memory
		// must fit in place of the active version's.
		running := func() (*reservation, error) {
			p, err := s.store.Plugin(ctx, sc, name)
			if err != nil || !p.Enabled {
				return nil, nil // the store change below names what is missing
			}
			pv, err := s.store.PluginVersion(ctx, sc, name, req.Version)
			if err != nil {
				return nil, nil
			}
			return s.runningReservation(sc, name, pv)
		}
		var p *store.Plugin
		err := s.plugins.budget.admit(ctx, sc.OrgID, name, "rolling back to "+name+"@"+req.Version, running, func() error {
			var err error
			p, err = s.store.ActivatePluginVersion(ctx, sc, name, req.Version, req.Revision)
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			if _, perr := s.store.Plugin(ctx, sc, name); perr == nil {
				return nil, fieldError(fiber.StatusNotFound, "version", fmt.Sprintf("plugin %s has no version %q", name, req.Version))
			}
		}
		return p, storeError(err, "plugin")
	})
}

// changePlugin reads the plugin name and the revision request, applies
// change, and answers with the changed plugin; the organisation's streams
// pick the change up at their next turn.
func (s *Server) changePlugin(c *fiber.Ctx, change func(context.Context, store.Scope, string, revisionRequest) (*store.Plugin, error)) error {
	name, err := pluginName(c)
	if err != nil {
		return err
	}
	req, err := readRevisionRequest(c)
	if err != nil {
		return err
	}
	sc := scopeOf(c)
	p, err := change(c.UserContext(), sc, name, req)
	if err != nil {
		return err
	}
	s.plugins.changed(sc.OrgID)
	v, err := s.viewPlugin(p)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// tryRequest runs one export of a plugin in the sandbox. Input defaults to
// the export's example; the catalog is a stream's (stream_id), one pasted
// (catalog), or else the demo catalog; version defaults to the active one.
type tryRequest struct {
	Kind     string          `json:"kind"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Version  string          `json:"version"`
	StreamID string          `json:"stream_id"`
	Catalog  json.RawMessage `json:"catalog"`
}

// tryResult is what a trial answers: the output or the plugin's error
// (a failed call is a result, not a failed request) and how long it took.
type tryResult struct {
	Plugin    string          `json:"plugin"`
	Version   string          `json:"version"`
	Kind      plugins.Kind    `json:"kind"`
	Name      string          `json:"name"`
	OK        bool            `json:"ok"`
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Outcome   string          `json:"outcome"`
	LatencyMS float64         `json:"latency_ms"`
	Catalog   string          `json:"catalog"`
}

func (s *Server) tryPlugin(c *fiber.Ctx) error {
	name, err := pluginName(c)
	if err != nil {
		return err
	}
	var req tryRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"kind\", \"name\", \"input\", \"version\", \"stream_id\" or \"catalog\"}: "+err.Error())
	}
	kind, err := plugins.ParseKind(req.Kind)
	if err != nil {
		return badRequest("kind", err.Error())
	}
	if req.StreamID != "" && len(req.Catalog) > 0 {
		return badRequest("catalog", "give stream_id or catalog, not both")
	}
	ctx, sc := c.UserContext(), scopeOf(c)
	p, err := s.store.Plugin(ctx, sc, name)
	if err != nil {
		return storeError(err, "plugin")
	}
	pv := p.Active
	if req.Version != "" {
		if pv, err = s.store.PluginVersion(ctx, sc, name, req.Version); err != nil {
			return fieldError(fiber.StatusNotFound, "version", fmt.Sprintf("plugin %s has no version %q", name, req.Version))
		}
	}
	if pv == nil {
		return fieldError(fiber.StatusConflict, "version", "the plugin has no active version")
	}
	m, err := decodeManifest(pv.Manifest)
	if err != nil {
		return err
	}
	if _, ok := m.Export(kind, req.Name); !ok {
		return fieldError(fiber.StatusUnprocessableEntity, "name", fmt.Sprintf("%s@%s declares no %s named %q", name, pv.Version, kind, req.Name))
	}
	input := []byte(req.Input)
	if len(bytes.TrimSpace(input)) == 0 || string(input) == "null" {
		for _, e := range exportsOf(m) {
			if e.Kind == kind && e.Name == req.Name {
				input = e.Example
			}
		}
	}
	catalog, source, err := s.trialCatalog(ctx, sc, req)
	if err != nil {
		return err
	}
	cat, err := parseCatalog(catalog)
	if err != nil {
		return fieldError(fiber.StatusUnprocessableEntity, "catalog", err.Error())
	}
	what := name + "@" + pv.Version
	mem := reservationOf(m.Limits)
	if err := s.plugins.budget.allowedFor(sc.Role, what, mem); err != nil {
		return err
	}
	plugin, release, err := s.plugins.trial(ctx, sc.OrgID, pv, pv.Active && p.Enabled, what, mem)
	if err != nil {
		return err
	}
	defer release()
	// A trial gets an environment of its own: it sees the catalog but none
	// of a live stream's plugin memory, and leaves none behind.
	env := plugins.NewLocalEnv(cat, s.log, nil)
	res := tryResult{Plugin: name, Version: pv.Version, Kind: kind, Name: req.Name, Catalog: source}
	export, _ := m.Export(kind, req.Name)
	t0 := time.Now()
	var out []byte
	switch kind {
	case plugins.KindTool:
		out, err = plugin.Tool(ctx, env, req.Name, input)
	case plugins.KindHook:
		var d any
		if d, err = plugin.Hook(ctx, env, req.Name, input); err == nil {
			out, err = json.Marshal(d)
		}
	default:
		var text string
		if text, err = plugin.Skill(ctx, env, req.Name, input); err == nil {
			out, err = json.Marshal(map[string]string{"text": text})
		}
	}
	took := time.Since(t0)
	s.plugins.record(sc.OrgID, name, export, took, err)
	res.LatencyMS, res.Outcome, res.OK = float64(took.Microseconds())/1000, outcome(err), err == nil
	if err != nil {
		res.Error = err.Error()
	} else {
		res.Output = out
	}
	return c.JSON(res)
}

// trialCatalog picks the catalog of a trial and says where it came from.
func (s *Server) trialCatalog(ctx context.Context, sc store.Scope, req tryRequest) ([]byte, string, error) {
	switch {
	case req.StreamID != "":
		if sc.Role != store.RoleOperator {
			return nil, "", fieldError(fiber.StatusNotFound, "stream_id", "no such stream")
		}
		st, err := s.store.Stream(ctx, sc, req.StreamID)
		if err != nil {
			return nil, "", fieldError(fiber.StatusNotFound, "stream_id", "no such stream")
		}
		cat, err := storedCatalog(st)
		if err != nil {
			return nil, "", fieldError(fiber.StatusUnprocessableEntity, "stream_id", err.Error())
		}
		doc, err := json.Marshal(cat)
		return doc, "stream " + st.Name, err
	case len(req.Catalog) > 0 && string(req.Catalog) != "null":
		return req.Catalog, "pasted", nil
	}
	return examples.Catalog, "demo catalog", nil
}

func (s *Server) listPluginKeys(c *fiber.Ctx) error {
	keys, err := s.store.PluginKeys(c.UserContext(), scopeOf(c))
	if err != nil {
		return storeError(err, "key")
	}
	return c.JSON(orEmpty(keys))
}

var keyIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// addPluginKey trusts an ed25519 public key (hex, as `livehat plugin
// keygen` writes it) to sign the organisation's plugins.
func (s *Server) addPluginKey(c *fiber.Ctx) error {
	var req struct {
		KeyID     string `json:"key_id"`
		PublicKey string `json:"public_key"`
	}
	if err := decodeStrict(c.Body(), &req); err != nil {
		return badRequest("body", "want {\"key_id\", \"public_key\"}: "+err.Error())
	}
	if !keyIDRE.MatchString(req.KeyID) {
		return badRequest("key_id", "want 1-64 letters, digits, dots, dashes or underscores (the name packages are signed under)")
	}
	pub, err := hex.DecodeString(strings.TrimSpace(req.PublicKey))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return badRequest("public_key", fmt.Sprintf("want a hex ed25519 public key (%d hex digits, the .pub file of `livehat plugin keygen`)", 2*ed25519.PublicKeySize))
	}
	k, err := s.store.AddPluginKey(c.UserContext(), scopeOf(c), req.KeyID, hex.EncodeToString(pub))
	if errors.Is(err, store.ErrConflict) {
		return fieldError(fiber.StatusConflict, "key_id", fmt.Sprintf("key %q is already trusted", req.KeyID))
	}
	if err != nil {
		return err
	}
	k.AddedBy = userOf(c).DisplayName
	return c.Status(fiber.StatusCreated).JSON(k)
}

func (s *Server) deletePluginKey(c *fiber.Ctx) error {
	if err := s.store.DeletePluginKey(c.UserContext(), scopeOf(c), c.Params("id")); err != nil {
		return storeError(err, "key")
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// orgPlugins binds each evaluation item to the organisation's active
// plugin versions in an environment of its own, so a gate or evaluation
// runs what the organisation's streams run (not whichever version was
// loaded last) without sharing plugin memory between items.
func (s *Server) orgPlugins(orgID string) func(ctx context.Context, catalog []byte) (*runtime.PluginSet, error) {
	return func(ctx context.Context, catalog []byte) (*runtime.PluginSet, error) {
		return s.plugins.isolatedSet(ctx, orgID, catalog)
	}
}
