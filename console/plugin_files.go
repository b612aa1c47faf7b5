package console

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// packageFiles keeps uploaded plugin packages (.lhp archives) in the data
// folder, one file per archive named by its sha256.
//
// Packages are files rather than SQLite blobs: a standard-Go plugin is a
// few MiB, and keeping those out of the database keeps its WAL, its
// backups and every row scan small, while the row pins the file by hash.
// Naming files by content makes a write idempotent (the same archive
// uploaded twice, or to two organisations, is one file) and lets every
// read check that the bytes are still the ones that were verified at
// upload, so a file changed on disk is refused rather than run.
type packageFiles struct{ dir string }

var packageSHA = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (f packageFiles) path(sum string) string { return filepath.Join(f.dir, sum+".lhp") }

// write stores data atomically (a temporary file synced and renamed into
// place, then the folder synced) and returns its hex sha256.
func (f packageFiles) write(data []byte) (string, error) {
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	dst := f.path(sum)
	if _, err := os.Stat(dst); err == nil {
		if _, err := f.read(sum); err == nil {
			return sum, nil
		}
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return "", fmt.Errorf("plugin packages folder: %w", err)
	}
	tmp, err := os.CreateTemp(f.dir, ".upload-*")
	if err != nil {
		return "", fmt.Errorf("plugin package: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("plugin package: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("plugin package: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("plugin package: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("plugin package: %w", err)
	}
	if d, err := os.Open(f.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return "", fmt.Errorf("plugin packages folder: %w", err)
		}
	}
	return sum, nil
}

// read returns the archive named sum after checking its hash.
func (f packageFiles) read(sum string) ([]byte, error) {
	if !packageSHA.MatchString(sum) {
		return nil, fmt.Errorf("plugin package %q: not a sha256", sum)
	}
	data, err := os.ReadFile(f.path(sum))
	if err != nil {
		return nil, fmt.Errorf("plugin package %s: %w", sum[:12], err)
	}
	h := sha256.Sum256(data)
	if hex.EncodeToString(h[:]) != sum {
		return nil, errors.New("plugin package " + sum[:12] + ": the file on disk no longer matches its sha256")
	}
	return data, nil
}
