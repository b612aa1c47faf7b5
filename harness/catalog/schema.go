package catalog

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
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

// validate turns a JSON Schema verdict into problems. root is the Go type
// of the document, whose JSON fields are the candidates when an unknown
// field gets a suggestion; rootExtra are keys of the top level that are
// not Go fields ("schema").
func (r *report) validate(err error, root reflect.Type, rootExtra ...string) {
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		r.add("", "internal", "%v", err)
		return
	}
	r.schemaError(ve, root, rootExtra)
}

func (r *report) schemaError(ve *jsonschema.ValidationError, root reflect.Type, rootExtra []string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			r.schemaError(c, root, rootExtra)
		}
		return
	}
	path, n := r.doc.locate(ve.InstanceLocation)
	got := "the value"
	if n != nil {
		got = n.literal()
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, f := range k.Missing {
			r.add(joinKey(path, f), "required", "required field %q is missing", f)
		}
	case *kind.AdditionalProperties:
		valid := jsonFields(root, ve.InstanceLocation)
		if len(ve.InstanceLocation) == 0 {
			valid = append(valid, rootExtra...)
		}
		for _, f := range k.Properties {
			child := joinKey(path, f)
			if hint := suggest(f, valid); hint != "" {
				r.add(child, "unknown_field_hint", "unknown field %q; did you mean %q?", f, hint)
			} else if hint := renamedInV2(f); hint != "" && slices.Contains(valid, hint) {
				r.add(child, "unknown_field_renamed", "unknown field %q; version 2 calls it %q", f, hint)
			} else {
				r.add(child, "unknown_field", "unknown field %q", f)
			}
		}
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = typeName(w)
		}
		// The params are JSON Schema's type names, the value's first.
		r.addParams(path, "want_type", append([]string{k.Got}, k.Want...), "is %s; want %s", typeName(k.Got), orList(want))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		hint := ""
		if s, ok := k.Got.(string); ok {
			hint = suggest(s, want)
		}
		if hint != "" {
			r.add(path, "not_one_of_hint", "%s is not one of %s; did you mean %q?", got, strings.Join(want, ", "), hint)
		} else {
			r.add(path, "not_one_of", "%s is not one of %s", got, strings.Join(want, ", "))
		}
	case *kind.Format:
		switch k.Want {
		case "date":
			r.add(path, "bad_date", "%s is not a calendar date in the form YYYY-MM-DD", got)
		case "date-time":
			r.add(path, "bad_time", "%s is not an RFC 3339 time such as \"2026-12-01T20:00:00+08:00\"", got)
		default:
			r.add(path, "bad_format", "%s is not a valid %s", got, k.Want)
		}
	case *kind.Pattern:
		switch k.Want {
		case idPattern:
			r.add(path, "bad_id", "%s is not an id: use 1-64 characters of A-Z, a-z, 0-9, '.', '_' and '-'", got)
		case currencyPattern:
			r.add(path, "bad_currency", "%s is not a currency code: use three capital letters (ISO 4217), such as \"CNY\"", got)
		default:
			r.add(path, "bad_pattern", "%s does not match %s", got, k.Want)
		}
	case *kind.MinLength:
		if k.Want == 1 {
			r.add(path, "empty", "is empty")
		} else {
			r.add(path, "too_short", "has %d characters; needs at least %d", k.Got, k.Want)
		}
	case *kind.MinItems:
		if k.Want == 1 {
			r.add(path, "empty_list", "is empty; it needs at least one item")
		} else {
			r.add(path, "too_few", "has %d items; needs at least %d", k.Got, k.Want)
		}
	case *kind.UniqueItems:
		dup, _ := r.doc.locate(append(slices.Clone(ve.InstanceLocation), strconv.Itoa(k.Duplicates[1])))
		r.add(dup, "duplicate_item", "repeats item %d of the list", k.Duplicates[0])
	case *kind.Minimum:
		if k.Want.Sign() == 0 {
			r.add(path, "negative", "is %s; must not be negative", got)
		} else {
			r.add(path, "at_least", "is %s; must be at least %s", got, ratString(k.Want))
		}
	case *kind.ExclusiveMinimum:
		r.add(path, "above", "is %s; must be above %s", got, ratString(k.Want))
	case *kind.Maximum:
		r.add(path, "at_most", "is %s; must be at most %s", got, ratString(k.Want))
	case *kind.ExclusiveMaximum:
		r.add(path, "below", "is %s; must be below %s", got, ratString(k.Want))
	case *kind.Const:
		r.add(path, "want_value", "is %s; want %s", got, fmt.Sprint(k.Want))
	default:
		msg := ve.Error()
		if _, after, ok := strings.Cut(msg, ": "); ok {
			msg = after
		}
		r.add(path, "schema", "%s", msg)
	}
}

// The patterns of schema.json that get a message of their own.
const (
	idPattern       = "^[A-Za-z0-9._-]{1,64}$"
	currencyPattern = "^[A-Z]{3}$"
)

// orList joins alternatives: "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// typeName names a JSON Schema type with its article.
func typeName(t string) string {
	switch t {
	case "array":
		return "a list"
	case "object", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// ratString writes a schema bound as a plain number.
func ratString(x *big.Rat) string {
	if x.IsInt() {
		return x.Num().String()
	}
	f, _ := x.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// renamedInV2 names the version 2 field that took over a field of
// version 1, for a version 1 field found in a version 2 document.
func renamedInV2(field string) string {
	switch field {
	case "attributes":
		return "specs"
	case "days":
		return "dispatch_hours"
	}
	return ""
}

// jsonFields returns the JSON field names of the Go type found by walking
// root along a JSON Schema instance location.
func jsonFields(root reflect.Type, loc []string) []string {
	t := root
	for _, step := range loc {
		t = derefType(t)
		switch t.Kind() {
		case reflect.Slice, reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByJSONName(t, step)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	t = derefType(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if name := jsonName(f); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonName returns the field's key in JSON, or "" when it has none.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// suggest returns the candidate closest to name when it is close enough
// to be what was meant: case, '_' and '-' aside, within a third of the
// name's length in edits (at least one), a swap of neighbours counting one.
func suggest(name string, candidates []string) string {
	norm := func(s string) []rune {
		return []rune(strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s)))
	}
	n := norm(name)
	limit := max(1, len(n)/3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(n, norm(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours.
func editDistance(a, b []rune) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
