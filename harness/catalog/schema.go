package catalog

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaV2 is the JSON Schema of version 2, the one merchants' tools see.
//
//go:embed schema.json
var schemaV2 []byte

// schemaV1 is the layout of version 1 as Parse accepts it for upgrade.
//
//go:embed schema_v1.json
var schemaV1 []byte

// Schema returns the JSON Schema (draft 2020-12) of version 2 of the
// catalog layout, with a description on every field. The caller owns the
// returned bytes.
func Schema() []byte { return bytes.Clone(schemaV2) }

// compiledV2 and compiledV1 are the schemas compiled once; a compiled
// schema is immutable.
var (
	compiledV2 = sync.OnceValues(func() (*jsonschema.Schema, error) { return compile("schema.json", schemaV2) })
	compiledV1 = sync.OnceValues(func() (*jsonschema.Schema, error) { return compile("schema_v1.json", schemaV1) })
)

// compile compiles an embedded schema with format assertions on, so that
// "date" and "date-time" are checked, not only annotated.
func compile(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("catalog: embedded %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("catalog: embedded %s: %w", name, err)
	}
	s, err := c.Compile(name)
	if err != nil {
		return nil, fmt.Errorf("catalog: embedded %s: %w", name, err)
	}
	return s, nil
}
