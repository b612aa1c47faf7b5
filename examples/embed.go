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

// Catalog is the demo stream's product catalog (plugins.Catalog JSON):
// what the storefront plugin's tools answer from.
//
//go:embed plugins/catalog.json
var Catalog []byte
