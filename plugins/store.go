package plugins

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// StoreDir is where installed packages live inside a data directory:
// DATA/plugins/NAME/VERSION.lhp.
func StoreDir(data string) string { return filepath.Join(data, "plugins") }

// InstallToStore verifies pkg (integrity, and the signature against
// trusted keys when signed) and writes it into the store of a data
// directory, from which LoadStore installs it.
func InstallToStore(data string, pkg *Package, trusted map[string]ed25519.PublicKey) (string, error) {
	if _, err := pkg.Verify(trusted); err != nil {
		return "", err
	}
	archive, err := pkg.Archive()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(StoreDir(data), pkg.Manifest.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, pkg.Manifest.Version+PackageExt)
	if err := os.WriteFile(path, archive, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// LoadStore installs every package of a data directory's store into r
// and activates the highest version of each plugin. Packages that fail
// to load are reported together; the others are installed.
func (r *Registry) LoadStore(ctx context.Context, data string) error {
	paths, err := filepath.Glob(filepath.Join(StoreDir(data), "*", "*"+PackageExt))
	if err != nil {
		return err
	}
	sort.Strings(paths)
	var errs []error
	best := map[string]Semver{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pkg, err := ReadPackage(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		if _, err := r.Install(ctx, pkg); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		v, _ := ParseSemver(pkg.Manifest.Version)
		if cur, ok := best[pkg.Manifest.Name]; !ok || v.Compare(cur) > 0 {
			best[pkg.Manifest.Name] = v
		}
	}
	for name, v := range best {
		if err := r.Activate(name, v.String()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
