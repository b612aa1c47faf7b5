package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/plugins"
)

// InstallExamples is the plugins' first-run setup: when the store holds
// no plugin at all, it builds the Go plugins of Config.PluginDirs (with the
// plugin build cache, so a second start costs one `go list` each), packs
// them as `livehat plugin pack` would, and uploads them as the admin's
// plugins, enabled. A store that has plugins is left alone, so what
// operators disabled or rolled back stays that way. serve calls it once at
// start; a plugin that fails to build is reported and the others are
// installed.
//
// It then loads every organisation's active plugins into the sandbox, so
// that the first live turn after a start does not wait for compilation.
func (s *Server) InstallExamples(ctx context.Context) error {
	n, err := s.store.PluginCount(ctx)
	if err != nil {
		return err
	}
	if n == 0 && len(s.cfg.PluginDirs) > 0 {
		err = s.installExamples(ctx)
	}
	return errors.Join(err, s.warmPlugins(ctx))
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
		if err := s.installDir(ctx, sc, dir); err != nil {
			errs = append(errs, fmt.Errorf("console: example plugin %s: %w", dir, err))
			continue
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
	if _, err := s.plugins.check(ctx, pkg, nil); err != nil {
		return err
	}
	archive, err := pkg.Archive()
	if err != nil {
		return err
	}
	sum, err := s.plugins.files.write(archive)
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, _, err = s.store.AddPluginVersion(ctx, sc, store.NewPluginVersion{Name: m.Name, Version: m.Version,
		SHA256: m.Wasm.SHA256, PackageSHA256: sum, Manifest: manifest, Size: int64(len(wasm)), PackageSize: int64(len(archive))})
	if err == nil {
		s.log.Info("example plugin installed", "name", m.Name, "version", m.Version)
	}
	return err
}
