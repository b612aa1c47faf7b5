package catalog

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// schemaDoc decodes an embedded schema.
func schemaDoc(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// objectSchemas returns the schema's object definitions by the Go type
// each describes; "" is the root.
func objectSchemas(t *testing.T, doc map[string]any, types map[string]reflect.Type) map[reflect.Type]map[string]any {
	t.Helper()
	defs, _ := doc["$defs"].(map[string]any)
	out := map[reflect.Type]map[string]any{}
	for name, typ := range types {
		if name == "" {
			out[typ] = doc
			continue
		}
		def, ok := defs[name].(map[string]any)
		if !ok {
			t.Fatalf("schema has no $defs/%s", name)
		}
		out[typ] = def
	}
	return out
}

var v2Types = map[string]reflect.Type{
	"":          reflect.TypeFor[Catalog](),
	"product":   reflect.TypeFor[Product](),
	"variant":   reflect.TypeFor[Variant](),
	"spec":      reflect.TypeFor[Spec](),
	"sizeRow":   reflect.TypeFor[SizeRow](),
	"shipping":  reflect.TypeFor[Shipping](),
	"returns":   reflect.TypeFor[Returns](),
	"coupon":    reflect.TypeFor[Coupon](),
	"promotion": reflect.TypeFor[Promotion](),
}

// TestSchemaMatchesTypes holds schema.json and the Go types to the same
// fields, the same required ones (a required field is the one a Go tag
// never leaves out) and a description on every field.
func TestSchemaMatchesTypes(t *testing.T) {
	doc := schemaDoc(t, Schema())
	for typ, def := range objectSchemas(t, doc, v2Types) {
		t.Run(typ.Name(), func(t *testing.T) {
			if def["additionalProperties"] != false {
				t.Error("additionalProperties is not false: unknown fields would pass")
			}
			props, _ := def["properties"].(map[string]any)
			var inSchema []string
			for name, p := range props {
				inSchema = append(inSchema, name)
				desc, _ := p.(map[string]any)["description"].(string)
				if len(strings.TrimSpace(desc)) < 10 {
					t.Errorf("field %q has no description", name)
				}
			}
			var inGo, requiredInGo []string
			for f := range typ.Fields() {
				name := jsonName(f)
				if name == "" {
					continue
				}
				inGo = append(inGo, name)
				if tag := f.Tag.Get("json"); !strings.Contains(tag, ",omitempty") && !strings.Contains(tag, ",omitzero") {
					requiredInGo = append(requiredInGo, name)
				}
			}
			if typ == reflect.TypeFor[Catalog]() {
				inGo = append(inGo, "schema") // written by Catalog.MarshalJSON
				requiredInGo = append(requiredInGo, "schema")
			}
			sort.Strings(inSchema)
			sort.Strings(inGo)
			if !slices.Equal(inSchema, inGo) {
				t.Errorf("schema fields %v,\nGo fields     %v", inSchema, inGo)
			}
			var required []string
			list, _ := def["required"].([]any)
			for _, r := range list {
				required = append(required, r.(string))
			}
			sort.Strings(required)
			sort.Strings(requiredInGo)
			if !slices.Equal(required, requiredInGo) {
				t.Errorf("schema requires %v; Go always writes %v", required, requiredInGo)
			}
		})
	}
}

// TestSchemaV1MatchesTypes holds the version 1 layout to the types the
// upgrade decodes it into, so that suggestions name real fields.
func TestSchemaV1MatchesTypes(t *testing.T) {
	doc := schemaDoc(t, schemaV1)
	types := map[string]reflect.Type{
		"":          reflect.TypeFor[v1Catalog](),
		"product":   reflect.TypeFor[v1Product](),
		"variant":   reflect.TypeFor[v1Variant](),
		"sizeRow":   reflect.TypeFor[v1SizeRow](),
		"shipping":  reflect.TypeFor[v1Shipping](),
		"coupon":    reflect.TypeFor[v1Coupon](),
		"promotion": reflect.TypeFor[v1Promotion](),
	}
	for typ, def := range objectSchemas(t, doc, types) {
		t.Run(typ.Name(), func(t *testing.T) {
			var inSchema, inGo []string
			for name := range def["properties"].(map[string]any) {
				inSchema = append(inSchema, name)
			}
			for f := range typ.Fields() {
				inGo = append(inGo, jsonName(f))
			}
			if typ == reflect.TypeFor[v1Catalog]() {
				inGo = append(inGo, "schema")
			}
			sort.Strings(inSchema)
			sort.Strings(inGo)
			if !slices.Equal(inSchema, inGo) {
				t.Errorf("schema fields %v,\nGo fields     %v", inSchema, inGo)
			}
		})
	}
}

func TestSchemaIsACopy(t *testing.T) {
	s := Schema()
	s[0] = 'x'
	if Schema()[0] != '{' {
		t.Error("Schema() returned the package's own bytes")
	}
}

// TestEveryFieldExampleUsesEveryField walks the Go types and fails for
// any JSON field that examples/catalogs/every-field.json never sets.
func TestEveryFieldExampleUsesEveryField(t *testing.T) {
	var doc any
	if err := json.Unmarshal(readFile(t, everyFieldPath), &doc); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	markUsed(reflect.TypeFor[Catalog](), doc, used)
	var unused []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		typ = derefType(typ)
		switch typ.Kind() {
		case reflect.Slice:
			walk(typ.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		// Dates and spec values are JSON scalars, not objects with fields.
		if seen[typ] || decodesItself(typ) {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			name := jsonName(f)
			if name == "" {
				continue
			}
			if key := typ.Name() + "." + name; !used[key] {
				unused = append(unused, key)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Catalog]())
	if len(unused) > 0 {
		t.Errorf("every-field.json never sets %v", unused)
	}
	if len(seen) < len(v2Types) {
		t.Errorf("walked %d struct types, want at least %d", len(seen), len(v2Types))
	}
}

// markUsed records "Type.field" for every field v sets, following typ.
func markUsed(typ reflect.Type, v any, used map[string]bool) {
	typ = derefType(typ)
	switch x := v.(type) {
	case []any:
		if typ.Kind() == reflect.Slice {
			for _, e := range x {
				markUsed(typ.Elem(), e, used)
			}
		}
	case map[string]any:
		if typ.Kind() != reflect.Struct {
			return
		}
		for key, val := range x {
			if f, ok := fieldByJSONName(typ, key); ok {
				used[typ.Name()+"."+key] = true
				markUsed(f.Type, val, used)
			}
		}
	}
}

// TestReadmeDocumentsEveryField holds the schema page to the types: every
// JSON field has a row in a table of README.md.
func TestReadmeDocumentsEveryField(t *testing.T) {
	readme := string(readFile(t, "README.md"))
	for _, typ := range v2Types {
		for f := range typ.Fields() {
			if name := jsonName(f); name != "" && !strings.Contains(readme, "| `"+name+"` |") {
				t.Errorf("README.md has no table row for %s.%s (`%s`)", typ.Name(), f.Name, name)
			}
		}
	}
	if !strings.Contains(readme, "| `schema` |") {
		t.Error("README.md has no table row for `schema`")
	}
}

// TestReadmeExamplesParse puts the page's example specs, coupons and
// promotions into the every-field catalog and parses it, so that the
// page shows only what import accepts.
func TestReadmeExamplesParse(t *testing.T) {
	readme := string(readFile(t, "README.md"))
	var specs, coupons, promotions []json.RawMessage
	for _, block := range strings.Split(readme, "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.HasPrefix(block, "{") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(block))
		for dec.More() {
			var obj map[string]json.RawMessage
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("README example: %v in\n%s", err, block)
			}
			raw, _ := json.Marshal(obj)
			switch {
			case obj["key"] != nil:
				specs = append(specs, raw)
			case obj["kind"] != nil:
				promotions = append(promotions, raw)
			default:
				coupons = append(coupons, raw)
			}
		}
	}
	if len(specs) < 3 || len(coupons) < 3 || len(promotions) < 7 {
		t.Fatalf("found %d specs, %d coupons, %d promotions in README.md; want at least 3, 3 and 7", len(specs), len(coupons), len(promotions))
	}
	var doc map[string]any
	if err := json.Unmarshal(readFile(t, everyFieldPath), &doc); err != nil {
		t.Fatal(err)
	}
	doc["coupons"], doc["promotions"] = coupons, promotions
	doc["products"].([]any)[0].(map[string]any)["specs"] = specs
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, data)
	kinds := map[PromotionKind]bool{}
	for _, p := range c.Promotions {
		kinds[p.Kind] = true
	}
	for _, k := range []PromotionKind{PromoPrice, PromoPercent, PromoMultiBuy, PromoBundle, PromoGift} {
		if !kinds[k] {
			t.Errorf("README.md has no example of a %q promotion", k)
		}
	}
}
