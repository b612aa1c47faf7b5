package testfixture

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDemoPluginDirs: the folders are found from any test directory.
func TestDemoPluginDirs(t *testing.T) {
	dirs := DemoPluginDirs()
	if len(dirs) == 0 {
		t.Fatal("no demo plugins")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "plugin.json")); err != nil {
				t.Fatalf("%s holds no plugin manifest: %v", dir, err)
			}
		})
	}
}

func TestDemoHarnessLoads(t *testing.T) {
	h := DemoHarness(t)
	if h.Version() == "" || len(h.Tools) == 0 {
		t.Fatalf("demo harness: version %q, %d tools", h.Version(), len(h.Tools))
	}
}
