package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// installedPlugin is an organisation's enabled plugin with its active
// version's manifest: what live sessions run.
type installedPlugin struct {
	Name     string
	Version  string
	Manifest *plugins.Manifest
}

// installedPlugins reads the organisation's enabled plugins and their
// active versions' manifests.
func (s *Server) installedPlugins(ctx context.Context, orgID string) ([]installedPlugin, error) {
	list, err := s.store.Plugins(ctx, systemScope(orgID))
	if err != nil {
		return nil, fmt.Errorf("console: plugins of org %s: %w", orgID, err)
	}
	var out []installedPlugin
	for _, p := range list {
		if !p.Enabled || p.Active == nil {
			continue
		}
		m, err := plugins.ParseManifest(p.Active.Manifest)
		if err != nil {
			return nil, fmt.Errorf("console: stored manifest of %s@%s: %w", p.Name, p.Active.Version, err)
		}
		out = append(out, installedPlugin{Name: p.Name, Version: p.Active.Version, Manifest: m})
	}
	return out, nil
}

// pluginExports is what the compatibility check reads of installed plugins.
func pluginExports(list []installedPlugin) map[string]harness.PluginExports {
	out := make(map[string]harness.PluginExports, len(list))
	for _, p := range list {
		e := harness.PluginExports{Label: p.Name + "@" + p.Version, Tools: map[string]json.RawMessage{}}
		for _, t := range p.Manifest.HarnessTools() {
			e.Tools[t.Export] = t.Parameters
		}
		for _, h := range p.Manifest.HarnessHooks() {
			e.Hooks = append(e.Hooks, h.Export)
		}
		for _, sk := range p.Manifest.HarnessSkills() {
			e.Skills = append(e.Skills, sk.Export)
		}
		out[p.Name] = e
	}
	return out
}

// checkPlugins checks h against the organisation's installed plugins; nil
// when every tool, hook and skill resolves and every schema fits.
func (s *Server) checkPlugins(ctx context.Context, orgID string, h *harness.Harness) error {
	list, err := s.installedPlugins(ctx, orgID)
	if err != nil {
		return err
	}
	return harness.CheckPlugins(h, pluginExports(list))
}

// checkWritten checks a harness being written (validated, committed)
// against the installed plugins: what the installed plugins cannot serve
// is an error, while a plugin not installed yet is only a warning, since
// a version may be written before its plugin is uploaded; publishing it
// needs every plugin (checkPlugins).
func (s *Server) checkWritten(ctx context.Context, orgID string, h *harness.Harness) (warnings []string, err error) {
	list, err := s.installedPlugins(ctx, orgID)
	if err != nil {
		return nil, err
	}
	exports := pluginExports(list)
	warnings = []string{}
	for _, name := range harness.MissingPlugins(h, exports) {
		warnings = append(warnings, fmt.Sprintf("plugin %q is not installed and enabled, so what the harness takes from it is unchecked; publishing needs it", name))
	}
	return warnings, harness.CheckInstalledPlugins(h, exports)
}

// incompatible answers a harness the installed plugins cannot serve:
// status with every problem located (line and column when doc, in format,
// is the document it came from).
func incompatible(c *fiber.Ctx, status int, field, what string, err error, doc []byte, format harness.Format) error {
	if doc != nil {
		err = harness.Locate(doc, format, err)
	}
	return c.Status(status).JSON(apiError{Error: what + ": the installed plugins cannot serve it: " + err.Error(),
		Field: field, Problems: problemsOf(err)})
}

// isCompatibility reports whether err is the check's list of problems
// rather than a failure to run it.
func isCompatibility(err error) bool {
	var list harness.ErrorList
	return errors.As(err, &list)
}

// boundVersions are the harness versions the organisation's streams run,
// with the streams on each.
func (s *Server) boundVersions(ctx context.Context, orgID string) (map[string][]store.Stream, error) {
	streams, err := s.store.Streams(ctx, systemScope(orgID))
	if err != nil {
		return nil, err
	}
	out := map[string][]store.Stream{}
	for _, st := range streams {
		if st.HarnessVersion != "" {
			out[st.HarnessVersion] = append(out[st.HarnessVersion], st)
		}
	}
	return out, nil
}

// pluginChangeBreaks checks a change of one plugin (next is the manifest
// that would be active, nil when the plugin would stop serving) against
// every harness version a stream of the organisation runs. It returns
// nil when the change breaks none, or a 409 that names each stream,
// version, tool, argument and plugin it would break. The plugin handlers
// call it before an upload that activates, a rollback or a disable.
func (s *Server) pluginChangeBreaks(c *fiber.Ctx, name string, next *plugins.Manifest) error {
	ctx, orgID := c.UserContext(), scopeOf(c).OrgID
	list, err := s.installedPlugins(ctx, orgID)
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(p installedPlugin) bool { return p.Name == name })
	if next != nil {
		list = append(list, installedPlugin{Name: name, Version: next.Version, Manifest: next})
	}
	exports := pluginExports(list)
	bound, err := s.boundVersions(ctx, orgID)
	if err != nil {
		return err
	}
	var problems []harnessProblem
	for _, version := range sortedKeys(bound) {
		h, _, err := s.harnessVersion(ctx, orgID, version)
		if err != nil {
			return err
		}
		var errs harness.ErrorList
		if !errors.As(harness.CheckPlugins(h, exports), &errs) {
			continue
		}
		names := make([]string, len(bound[version]))
		for i, st := range bound[version] {
			names[i] = fmt.Sprintf("%q", st.Name)
		}
		for _, e := range errs {
			problems = append(problems, harnessProblem{Path: e.Path, Message: fmt.Sprintf("version %s (streams %s): %s",
				h.ShortVersion(), strings.Join(names, ", "), e.Msg)})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	change := "disabling " + name
	if next != nil {
		change = "making " + name + "@" + next.Version + " active"
	}
	override := strings.TrimSpace(c.Query("override"))
	if override != "" {
		// The operator takes the breakage on purpose (a harness release
		// that fits follows); the reason goes to the log with who said it.
		s.log.Warn("plugin change breaks harness versions streams run", "change", change, "problems", len(problems),
			"by", userOf(c).Username, "override", override)
		return nil
	}
	return c.Status(fiber.StatusConflict).JSON(apiError{Field: "override", Problems: problems,
		Error: fmt.Sprintf("%s would break %d harness version(s) streams run: publish versions that fit it first, or repeat with ?override=REASON (logged)", change, len(problems))})
}

// pluginChangeRefused reports whether pluginChangeBreaks answered the
// request itself (a refusal).
func pluginChangeRefused(c *fiber.Ctx) bool {
	return c.Response().StatusCode() == fiber.StatusConflict && len(c.Response().Body()) > 0
}

// compatRow is one harness version against the installed plugins.
type compatRow struct {
	Version    string           `json:"version"`
	Name       string           `json:"name"`
	Streams    []string         `json:"streams"`
	Compatible bool             `json:"compatible"`
	Problems   []harnessProblem `json:"problems"`
}

// compatStream is one stream of the matrix: the version it runs, the one
// its merchant asked for, and whether the installed plugins serve it.
type compatStream struct {
	ID         string `json:"stream_id"`
	Name       string `json:"name"`
	Version    string `json:"harness_version"`
	Requested  string `json:"requested_version,omitempty"`
	Compatible bool   `json:"compatible"`
}

// pluginMatrix is stream × harness version × installed plugin versions:
// every stored version checked against the plugins live sessions run.
func (s *Server) pluginMatrix(ctx context.Context, sc store.Scope) (fiber.Map, error) {
	list, err := s.installedPlugins(ctx, sc.OrgID)
	if err != nil {
		return nil, err
	}
	exports := pluginExports(list)
	type pluginRef struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	refs := make([]pluginRef, len(list))
	for i, p := range list {
		refs[i] = pluginRef{p.Name, p.Version}
	}
	versions, err := s.store.HarnessVersions(ctx, sc)
	if err != nil {
		return nil, err
	}
	bound, err := s.boundVersions(ctx, sc.OrgID)
	if err != nil {
		return nil, err
	}
	rows := make([]compatRow, 0, len(versions))
	ok := map[string]bool{}
	for _, v := range versions {
		h, _, err := s.harnessVersion(ctx, sc.OrgID, v.Version)
		if err != nil {
			return nil, err
		}
		row := compatRow{Version: v.Version, Name: v.Name, Streams: []string{}, Problems: []harnessProblem{}}
		for _, st := range bound[v.Version] {
			row.Streams = append(row.Streams, st.ID)
		}
		if err := harness.CheckPlugins(h, exports); err != nil {
			row.Problems = problemsOf(err)
		}
		row.Compatible = len(row.Problems) == 0
		ok[v.Version] = row.Compatible
		rows = append(rows, row)
	}
	requested := map[string]string{}
	if reqs, err := s.store.HarnessRequests(ctx, sc); err == nil {
		for i := len(reqs) - 1; i >= 0; i-- { // newest last, so it wins
			if reqs[i].State == store.RequestOpen {
				requested[reqs[i].StreamID] = reqs[i].Version
			}
		}
	}
	streams := []compatStream{}
	for _, v := range sortedKeys(bound) {
		for _, st := range bound[v] {
			streams = append(streams, compatStream{ID: st.ID, Name: st.Name, Version: v, Requested: requested[st.ID], Compatible: ok[v]})
		}
	}
	slices.SortFunc(streams, func(a, b compatStream) int { return strings.Compare(a.Name+a.ID, b.Name+b.ID) })
	return fiber.Map{"plugins": refs, "harnesses": rows, "streams": streams}, nil
}

// unloadedPlugins lists the plugins h names that the organisation's live
// sessions do not have loaded: not installed and enabled, or failed to
// load. A session switches to h only when there are none, so a
// fail_closed hook of a new version never meets a missing plugin.
func (s *Server) unloadedPlugins(ctx context.Context, orgID string, h *harness.Harness) []string {
	names := harness.MissingPlugins(h, nil)
	active, err := s.store.ActivePlugins(ctx, orgID)
	if err != nil {
		s.log.Warn("cannot read the active plugins", "org", orgID, "err", err)
		return names
	}
	loaded := map[string]bool{}
	for _, a := range active {
		loaded[a.Name] = s.plugins.loadedVersion(a.VersionID) != nil
	}
	return slices.DeleteFunc(names, func(n string) bool { return loaded[n] })
}
