// Package examples holds the example harnesses, catalogs and plugins that
// `go run .` starts with. The files are embedded so the binary runs
// anywhere without this folder beside it.
package examples

import "embed"

// Harnesses is the folder of example harness files ("harness/demo.json"
// and the SKILL.md files it references).
//
//go:embed harness
var Harnesses embed.FS

// DemoHarness is the path of the demo stream's harness inside Harnesses.
const DemoHarness = "harness/demo.json"

// DemoPlugins names the example plugins (folders under plugins/) that
// implement the demo harness's tools and hooks, in the order they are
// built and installed.
func DemoPlugins() []string {
	return []string{"storefront", "moderation", "compliance", "grounding", "speech"}
}

// Catalog is the demo stream's product catalog (a harness/catalog document):
// what the storefront plugin's tools answer from.
//
//go:embed plugins/catalog.json
var Catalog []byte
