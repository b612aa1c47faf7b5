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
		Code: codeHarnessIncompatible, Field: field, Problems: problemsOf(err)})
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
// every harness version a stream of the organisation runs. It returns nil
// when the change breaks nothing that works now, or a 409 naming each
// stream, version, tool, argument and plugin it would break; an operator
// may take the breakage on purpose with ?override=REASON, which is logged.
// The plugin handlers call it before an upload that activates, a rollback
// or a disable.
func (s *Server) pluginChangeBreaks(c *fiber.Ctx, name string, next *plugins.Manifest) error {
	ctx, orgID := c.UserContext(), scopeOf(c).OrgID
	list, err := s.installedPlugins(ctx, orgID)
	if err != nil {
		return err
	}
	now := pluginExports(list)
	list = slices.DeleteFunc(list, func(p installedPlugin) bool { return p.Name == name })
	if next != nil {
		list = append(list, installedPlugin{Name: name, Version: next.Version, Manifest: next})
	}
	exports := pluginExports(list)
	bound, err := s.boundVersions(ctx, orgID)
	if err != nil {
		return err
	}
	var problems []string
	for _, version := range sortedKeys(bound) {
		h, _, err := s.harnessVersion(ctx, orgID, version)
		if err != nil {
			return err
		}
		var errs, before harness.ErrorList
		if !errors.As(harness.CheckPlugins(h, exports), &errs) {
			continue
		}
		// What is broken already (a plugin never installed, say) is not
		// this change's doing.
		broken := map[string]bool{}
		if errors.As(harness.CheckPlugins(h, now), &before) {
			for _, e := range before {
				broken[e.Path] = true
			}
		}
		errs = slices.DeleteFunc(errs, func(e *harness.Error) bool { return broken[e.Path] })
		names := make([]string, len(bound[version]))
		for i, st := range bound[version] {
			names[i] = fmt.Sprintf("%q", st.Name)
		}
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("version %s (streams %s): %s", h.ShortVersion(), strings.Join(names, ", "), e.Error()))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	change := "disabling " + name
	if next != nil {
		change = "making " + name + "@" + next.Version + " active"
	}
	if override := strings.TrimSpace(c.Query("override")); override != "" {
		s.log.Warn("plugin change breaks harness versions streams run", "change", change, "problems", len(problems),
			"by", userOf(c).Username, "override", override)
		return nil
	}
	return fieldError(fiber.StatusConflict, "override", fmt.Sprintf("%s would break harness versions streams run: publish versions that fit it first, "+
		"or repeat with ?override=REASON (logged):\n  %s", change, strings.Join(problems, "\n  ")))
}

// uploadBreaks is pluginChangeBreaks for an upload: a new version becomes
// active when it is the plugin's first or newer than the active one
// (store.AddPluginVersion), and only an enabled plugin serves streams.
func (s *Server) uploadBreaks(c *fiber.Ctx, m *plugins.Manifest) error {
	p, err := s.store.Plugin(c.UserContext(), scopeOf(c), m.Name)
	if err != nil || !p.Enabled {
		return nil // a new plugin, or one that serves nothing now
	}
	if p.Active != nil {
		cur, cerr := plugins.ParseSemver(p.Active.Version)
		next, nerr := plugins.ParseSemver(m.Version)
		if cerr == nil && nerr == nil && next.Compare(cur) <= 0 {
			return nil // kept for rollback, not activated
		}
	}
	return s.pluginChangeBreaks(c, m.Name, m)
}

// rollbackBreaks is pluginChangeBreaks for activating an uploaded version
// of an enabled plugin.
func (s *Server) rollbackBreaks(c *fiber.Ctx, name, version string) error {
	ctx, sc := c.UserContext(), scopeOf(c)
	p, err := s.store.Plugin(ctx, sc, name)
	if err != nil || !p.Enabled {
		return nil // the rollback itself answers for a missing plugin
	}
	pv, err := s.store.PluginVersion(ctx, sc, name, version)
	if err != nil {
		return nil // the rollback itself answers for a missing version
	}
	m, err := plugins.ParseManifest(pv.Manifest)
	if err != nil {
		return fmt.Errorf("console: stored manifest of %s@%s: %w", name, version, err)
	}
	return s.pluginChangeBreaks(c, name, m)
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
