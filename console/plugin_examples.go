package console

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/plugins"
)

// InstallExamples installs the example plugins of Config.PluginDirs that
// the store does not hold at their version: every one on the first run,
// and on a later start an example the store never had (a hook a newer
// demo harness uses) or a newer version of one (the storefront after a
// change of the catalog contract). It builds them (with the plugin build
// cache), packs them as `livehat plugin pack` would, and records them as
// the admin's. A new plugin is enabled; a newer version becomes active only
// where the plugin is enabled, as an upload's does (store.AddPluginVersion),
// so what operators disabled, rolled back or replaced with a newer version
// of their own stays that way. serve calls it once at start; a plugin that
// fails to build is reported and the others are installed.
//
// It then loads every organisation's active plugins into the sandbox, so
// that the first live turn after a start does not wait for compilation.
func (s *Server) InstallExamples(ctx context.Context) error {
	var err error
	if len(s.cfg.PluginDirs) > 0 {
		err = s.installExamples(ctx)
	}
	return errors.Join(err, s.importInstalled(ctx), s.warmPlugins(ctx))
}

// importInstalled records the packages `livehat plugin install --data`
// put into the data folder (DATA/plugins/NAME/VERSION.lhp) that the store
// does not have yet, as the admin's, so that installing from the command
// line and uploading in the console end in the same place. A signed
// package needs its key trusted by the organisation, as an upload does.
func (s *Server) importInstalled(ctx context.Context) error {
	if s.cfg.DataDir == "" {
		return nil
	}
	paths, err := filepath.Glob(filepath.Join(plugins.StoreDir(s.cfg.DataDir), "*", "*"+plugins.PackageExt))
	if err != nil || len(paths) == 0 {
		return err
	}
	admin, err := s.store.UserByUsername(ctx, "admin")
	if err != nil {
		return fmt.Errorf("console: installed plugins: the first-run admin account: %w", err)
	}
	sc := admin.Scope()
	trusted, err := s.trustedKeys(ctx, sc)
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range paths {
		archive, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pkg, err := plugins.ReadPackage(archive)
		if err != nil {
			errs = append(errs, fmt.Errorf("console: installed plugin %s: %w", path, err))
			continue
		}
		if _, err := s.store.PluginVersion(ctx, sc, pkg.Manifest.Name, pkg.Manifest.Version); err == nil {
			continue
		}
		if _, _, err := s.record(ctx, sc, pkg, archive, trusted); err != nil {
			errs = append(errs, fmt.Errorf("console: installed plugin %s: %w", path, err))
			continue
		}
		s.log.Info("installed plugin imported", "name", pkg.Manifest.Name, "version", pkg.Manifest.Version, "from", path)
	}
	s.plugins.changed(sc.OrgID)
	return errors.Join(errs...)
}

// warmPlugins loads the active plugins of every organisation.
func (s *Server) warmPlugins(ctx context.Context) error {
	orgs, err := s.store.Orgs(ctx)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		if _, err := s.plugins.set(ctx, o.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) installExamples(ctx context.Context) error {
	admin, err := s.store.UserByUsername(ctx, "admin")
	if err != nil {
		return fmt.Errorf("console: example plugins: the first-run admin account: %w", err)
	}
	sc := admin.Scope()
	var errs []error
	for _, dir := range s.cfg.PluginDirs {
		m, _, err := plugins.ReadManifestDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("console: example plugin %s: %w", dir, err))
			continue
		}
		if _, err := s.store.PluginVersion(ctx, sc, m.Name, m.Version); err == nil {
			continue // held already: nothing to build
		}
		if err := s.installDir(ctx, sc, dir); err != nil {
			errs = append(errs, fmt.Errorf("console: example plugin %s: %w", dir, err))
		}
	}
	s.plugins.changed(sc.OrgID)
	return errors.Join(errs...)
}

// installDir builds, packs, checks and records one plugin source folder.
func (s *Server) installDir(ctx context.Context, sc store.Scope, dir string) error {
	m, _, err := plugins.ReadManifestDir(dir)
	if err != nil {
		return err
	}
	path, err := plugins.BuildGoCached(ctx, dir, plugins.DefaultCacheDir())
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pkg := &plugins.Package{Manifest: m, Wasm: wasm}
	pkg.Pin()
	archive, err := pkg.Archive()
	if err != nil {
		return err
	}
	if _, _, err := s.record(ctx, sc, pkg, archive, nil); err != nil {
		return err
	}
	s.log.Info("example plugin installed", "name", m.Name, "version", m.Version)
	return nil
}

// record checks a package as an upload is checked (a failed check is a
// 422 naming what is wrong), stores its archive and records the version
// for sc; the store's errors come back unchanged. The package's memory
// must be within what sc's role may give a plugin, its check must fit in
// the plugin memory budget, and so must the version once it runs (the
// first version of a plugin, or a newer one of an enabled plugin).
func (s *Server) record(ctx context.Context, sc store.Scope, pkg *plugins.Package, archive []byte, trusted map[string]ed25519.PublicKey) (*store.Plugin, *store.PluginVersion, error) {
	m := pkg.Manifest
	what := m.Name + "@" + m.Version
	res := reservationOf(m.Limits)
	if err := s.plugins.budget.allowedFor(sc.Role, what, res); err != nil {
		return nil, nil, err
	}
	running := func() (*reservation, error) {
		runs, err := s.willRun(ctx, sc, m)
		if err != nil || !runs {
			return nil, err
		}
		return &res, nil
	}
	// A version that would not fit once it runs is refused before it is
	// checked; the admission below decides, with the record.
	if err := s.plugins.budget.admit(ctx, sc.OrgID, m.Name, "installing "+what, running, func() error { return nil }); err != nil {
		return nil, nil, err
	}
	unhold, err := s.plugins.budget.hold(ctx, sc.OrgID, "checking "+what, res.oneInstance())
	if err != nil {
		return nil, nil, err
	}
	signer, err := s.plugins.check(ctx, pkg, trusted)
	unhold()
	if err != nil {
		return nil, nil, packageProblem(err)
	}
	sum, err := s.plugins.files.write(archive)
	if err != nil {
		return nil, nil, err
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	var p *store.Plugin
	var pv *store.PluginVersion
	err = s.plugins.budget.admit(ctx, sc.OrgID, m.Name, "installing "+what, running, func() error {
		var err error
		p, pv, err = s.store.AddPluginVersion(ctx, sc, store.NewPluginVersion{Name: m.Name, Version: m.Version,
			SHA256: m.Wasm.SHA256, PackageSHA256: sum, Manifest: manifest, Signer: signer,
			Size: int64(len(pkg.Wasm)), PackageSize: int64(len(archive))})
		return err
	})
	return p, pv, err
}

// willRun reports whether recording m makes it run: it is the plugin's
// first version, or the plugin is enabled and m is newer than its active
// version (store.AddPluginVersion's rule for what becomes active).
func (s *Server) willRun(ctx context.Context, sc store.Scope, m *plugins.Manifest) (bool, error) {
	p, err := s.store.Plugin(ctx, sc, m.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	case !p.Enabled:
		return false, nil
	case p.Active == nil:
		return true, nil
	}
	next, err := plugins.ParseSemver(m.Version)
	if err != nil {
		return false, err
	}
	cur, err := plugins.ParseSemver(p.Active.Version)
	return err != nil || next.Compare(cur) > 0, nil
}
