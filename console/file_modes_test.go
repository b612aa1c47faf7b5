package console

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPackageFilesArePrivate: the plugin packages folder and its files,
// created by the console in its data folder, are its user's only (issue
// #21, finding 6; the data folder and database are store.Open's).
func TestPackageFilesArePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	t.Parallel()
	f := packageFiles{dir: filepath.Join(t.TempDir(), "plugin-packages")}
	sum, err := f.write([]byte("package bytes"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{f.dir: 0o700, f.path(sum): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: %v, want %v", filepath.Base(path), got, want)
		}
	}
}
