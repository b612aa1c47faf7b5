package examples_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness/catalog"
)

// TestDemoCatalogStatesItsVersion1Facts holds the demo catalog, written
// in version 2, to the version 1 file it replaced: no fact added, none
// lost (the demo test and the bundled model depend on them).
func TestDemoCatalogStatesItsVersion1Facts(t *testing.T) {
	old, err := os.ReadFile("testdata/demo-catalog-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := catalog.Parse(old)
	if err != nil {
		t.Fatalf("the version 1 demo catalog: %v", err)
	}
	got, err := catalog.Parse(examples.Catalog)
	if err != nil {
		t.Fatalf("the demo catalog: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the demo catalog states other facts than its version 1 file:\n got  %+v\n want %+v", got, want)
	}
}

// TestExampleCatalogsParse checks that the example catalogs are valid
// version 2 documents.
func TestExampleCatalogsParse(t *testing.T) {
	for _, path := range []string{"catalogs/every-field.json", "plugins/catalog.json"} {
		t.Run(path, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := catalog.Parse(b); err != nil {
				t.Error(err)
			}
		})
	}
}
