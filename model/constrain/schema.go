package constrain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/livehat/livehat/model/chat"
)

type nodeKind uint8

const (
	kindObject nodeKind = iota
	kindArray
	kindString
	kindNumber
	kindInteger
	kindLiteral // one of a fixed set of JSON texts: enum, const, booleans, null
	kindUnion   // alternatives told apart by their first byte
)

// node is one schema, compiled to what the automaton needs.
type node struct {
	kind nodeKind
	// Objects.
	props    []int32 // value node per declared property, in key-set payload order
	required uint64  // bit i: property i is required
	keys     int32   // literal set of the encoded property names
	free     bool    // any string key, values of node value
	call     bool    // the tool-call object: "name" then "arguments" of the named tool
	// Arrays: items in value; free objects: values in value.
	value              int32
	minItems, maxItems int32 // maxItems < 0: unbounded
	// Strings.
	minLen, maxLen int32 // maxLen < 0: unbounded
	// Literals.
	lits int32
	// Unions.
	alts []int32
}

// literalSet is a sorted set of JSON texts, each with a payload (a property,
// tool or value index) reported when it has been matched.
type literalSet struct {
	texts   []string
	payload []int32
}

// Limits that keep generation finite and the automaton's state small.
const (
	maxProperties = 64 // properties per object: used-property masks are uint64
	maxDepth      = 24 // frames on the stack: bounds nesting of free-form values
	maxNumberLen  = 24 // bytes of a number
	maxIntegerLen = 18 // bytes of an integer: fits an int64
)

// Grammar is the compiled form of a set of tools: the language of tool-call
// JSON objects {"name": <tool name>, "arguments": <object matching that tool's
// parameters>}. It is immutable and may be shared.
//
// Enforced from JSON Schema: type (also as a list), properties, required,
// additionalProperties, items, enum, const, minItems, maxItems, minLength,
// maxLength, anyOf/oneOf whose alternatives begin with different bytes, and
// $ref to a definition inside the schema (as Pydantic writes nested models),
// unless recursive.
// Objects with declared properties take only those properties, whatever
// additionalProperties says (the strict mode of other constrained decoders):
// that is always valid and keeps a compact model to the documented fields.
// Value keywords such as minimum, pattern or format are not enforced; they are
// listed by Unenforced so a caller can validate the finished call.
type Grammar struct {
	nodes      []node
	lits       []literalSet
	toolArgs   []int32 // arguments node per tool
	toolNames  []string
	call       int32
	closeTag   int32
	keyString  int32 // an unconstrained string, for free-form object keys
	any        int32 // lazily built: any JSON value
	unenforced []string
	nesting    int // objects and arrays open while compiling
	// While compiling one tool: its whole schema, the nodes of the $refs
	// compiled so far, and the $refs being compiled (to refuse recursion).
	root      any
	refs      map[string]int32
	resolving map[string]bool
}

// maxNesting bounds the declared nesting of objects and arrays in a schema,
// so that every value it requires fits the automaton's stack (the call
// object, its arguments and a leaf value take the rest of maxDepth).
const maxNesting = maxDepth - 8

// Compile builds the grammar of calls to tools. Each tool's Parameters must
// be an object schema (empty means no arguments). It fails, naming the tool
// and the schema path, on invalid JSON, on a schema no call could satisfy, or
// on keywords it cannot enforce structurally (allOf, not, if, recursive or
// remote $ref, ...).
func Compile(tools []chat.Tool) (*Grammar, error) {
	if len(tools) == 0 {
		return nil, fmt.Errorf("constrain: no tools to call")
	}
	g := &Grammar{any: -1}
	g.keyString = g.add(node{kind: kindString, maxLen: -1})
	seen := map[string]bool{}
	var names []string
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("constrain: tool %d has no name", i)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("constrain: tool %q is listed twice", t.Name)
		}
		seen[t.Name] = true
		names = append(names, jsonText(t.Name))
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(`{"type": "object", "properties": {}}`)
		}
		var schema any
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.UseNumber()
		if err := dec.Decode(&schema); err != nil {
			return nil, fmt.Errorf("constrain: tool %q: parameters: %w", t.Name, err)
		}
		g.root, g.refs, g.resolving = schema, map[string]int32{}, map[string]bool{}
		n, err := g.compile(schema, t.Name+":")
		if err != nil {
			return nil, fmt.Errorf("constrain: tool %q: %w", t.Name, err)
		}
		if n == g.any {
			n = g.nodes[n].alts[0] // the free-form object
		}
		if g.nodes[n].kind != kindObject {
			return nil, fmt.Errorf("constrain: tool %q: parameters must be an object schema", t.Name)
		}
		g.toolArgs = append(g.toolArgs, n)
		g.toolNames = append(g.toolNames, t.Name)
	}
	nameSet := g.addLiterals(names, nil)
	g.call = g.add(node{kind: kindObject, call: true, required: 0b11,
		keys:  g.addLiterals([]string{`"name"`, `"arguments"`}, []int32{0, 1}),
		props: []int32{g.add(node{kind: kindLiteral, lits: nameSet}), -1}})
	g.closeTag = g.add(node{kind: kindLiteral, lits: g.addLiterals([]string{chat.ToolCallClose}, nil)})
	return g, nil
}

// Unenforced lists the schema keywords the grammar does not enforce, as
// "tool:path: keyword" entries.
func (g *Grammar) Unenforced() []string { return slices.Clone(g.unenforced) }

func (g *Grammar) add(n node) int32 {
	g.nodes = append(g.nodes, n)
	return int32(len(g.nodes) - 1)
}

// addLiterals adds a literal set; payload nil means each text's own index.
func (g *Grammar) addLiterals(texts []string, payload []int32) int32 {
	if payload == nil {
		payload = make([]int32, len(texts))
		for i := range payload {
			payload[i] = int32(i)
		}
	}
	idx := make([]int, len(texts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return texts[idx[a]] < texts[idx[b]] })
	var ls literalSet
	for _, i := range idx {
		if k := len(ls.texts); k > 0 && ls.texts[k-1] == texts[i] {
			continue // duplicate enum values
		}
		ls.texts = append(ls.texts, texts[i])
		ls.payload = append(ls.payload, payload[i])
	}
	g.lits = append(g.lits, ls)
	return int32(len(g.lits) - 1)
}

// anyValue is the node for an unconstrained JSON value.
func (g *Grammar) anyValue() int32 {
	if g.any >= 0 {
		return g.any
	}
	g.any = g.add(node{kind: kindUnion})
	obj := g.add(node{kind: kindObject, free: true, value: g.any})
	arr := g.add(node{kind: kindArray, value: g.any, maxItems: -1})
	lit := g.add(node{kind: kindLiteral, lits: g.addLiterals([]string{"true", "false", "null"}, nil)})
	g.nodes[g.any].alts = []int32{obj, arr, g.keyString, g.add(node{kind: kindNumber}), lit}
	return g.any
}

var ignoredKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$schema": true, "$id": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "nullable": true,
	"$defs": true, "definitions": true, // referenced through $ref
}

var unsupportedKeywords = []string{"$dynamicRef", "allOf", "not", "if", "then", "else",
	"patternProperties", "dependentSchemas", "dependentRequired", "prefixItems", "contains", "propertyNames"}

func (g *Grammar) compile(schema any, path string) (int32, error) {
	switch s := schema.(type) {
	case bool:
		if !s {
			return 0, fmt.Errorf("%s: schema false admits no value", path)
		}
		return g.anyValue(), nil
	case map[string]any:
		return g.compileObjectSchema(s, path)
	}
	return 0, fmt.Errorf("%s: schema is %T, want an object or a boolean", path, schema)
}

func (g *Grammar) compileObjectSchema(s map[string]any, path string) (int32, error) {
	if ref, ok := s["$ref"]; ok {
		if !onlyAnnotations(s, "$ref") {
			return 0, fmt.Errorf("%s: $ref next to other keywords is not supported", path)
		}
		r, ok := ref.(string)
		if !ok {
			return 0, fmt.Errorf("%s: $ref is %v, want a string", path, ref)
		}
		return g.compileRef(r, path)
	}
	for _, k := range unsupportedKeywords {
		if _, ok := s[k]; ok {
			return 0, fmt.Errorf("%s: keyword %q cannot be enforced while decoding", path, k)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if v, ok := s[k]; ok {
			if len(s) > 1 && !onlyAnnotations(s, k) {
				return 0, fmt.Errorf("%s: %q next to other keywords is not supported", path, k)
			}
			alts, ok := v.([]any)
			if !ok || len(alts) == 0 {
				return 0, fmt.Errorf("%s: %q must be a non-empty array", path, k)
			}
			var ns []int32
			for i, a := range alts {
				n, err := g.compile(a, fmt.Sprintf("%s/%s/%d", path, k, i))
				if err != nil {
					return 0, err
				}
				ns = append(ns, n)
			}
			return g.union(ns, path)
		}
	}
	if v, ok := s["const"]; ok {
		return g.enum([]any{v}, s, path)
	}
	if v, ok := s["enum"]; ok {
		vals, ok := v.([]any)
		if !ok || len(vals) == 0 {
			return 0, fmt.Errorf("%s: enum must be a non-empty array", path)
		}
		return g.enum(vals, s, path)
	}
	types, err := schemaTypes(s, path)
	if err != nil {
		return 0, err
	}
	for k := range s {
		if !ignoredKeywords[k] && !handledKeyword(k, types) {
			g.unenforced = append(g.unenforced, path+": "+k)
		}
	}
	if len(types) == 0 {
		return g.anyValue(), nil
	}
	var ns []int32
	for _, t := range types {
		n, err := g.compileType(t, s, path)
		if err != nil {
			return 0, err
		}
		ns = append(ns, n)
	}
	if len(ns) == 1 {
		return ns[0], nil
	}
	return g.union(ns, path)
}

// compileRef compiles a local reference such as "#/$defs/Address", as
// Pydantic and other generators write nested models. Each reference is
// compiled once per tool; recursive ones are refused, since a recursive value
// could need more nesting than the automaton's stack holds.
func (g *Grammar) compileRef(ref, path string) (int32, error) {
	if n, ok := g.refs[ref]; ok {
		return n, nil
	}
	if !strings.HasPrefix(ref, "#") {
		return 0, fmt.Errorf("%s: $ref %q: only references inside the schema (#/...) are supported", path, ref)
	}
	if g.resolving[ref] {
		return 0, fmt.Errorf("%s: $ref %q is recursive, which cannot be bounded while decoding", path, ref)
	}
	target := g.root
	if p := strings.TrimPrefix(ref, "#"); p != "" {
		if !strings.HasPrefix(p, "/") {
			return 0, fmt.Errorf("%s: $ref %q: want a JSON pointer such as #/$defs/Name", path, ref)
		}
		for _, tok := range strings.Split(p[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			obj, ok := target.(map[string]any)
			if !ok {
				return 0, fmt.Errorf("%s: $ref %q does not resolve: %q is not inside an object", path, ref, tok)
			}
			if target, ok = obj[tok]; !ok {
				return 0, fmt.Errorf("%s: $ref %q does not resolve: no %q", path, ref, tok)
			}
		}
	}
	g.resolving[ref] = true
	n, err := g.compile(target, path+"→"+ref)
	delete(g.resolving, ref)
	if err != nil {
		return 0, err
	}
	g.refs[ref] = n
	return n, nil
}

func onlyAnnotations(s map[string]any, keep string) bool {
	for k := range s {
		if k != keep && !ignoredKeywords[k] {
			return false
		}
	}
	return true
}

func handledKeyword(k string, types []string) bool {
	switch k {
	case "type", "enum", "const", "anyOf", "oneOf":
		return true
	case "properties", "required", "additionalProperties":
		return slices.Contains(types, "object")
	case "items", "minItems", "maxItems":
		return slices.Contains(types, "array")
	case "minLength", "maxLength":
		return slices.Contains(types, "string")
	}
	return false
}

// schemaTypes reads "type", inferring object or array from their keywords
// when it is absent; number subsumes integer.
func schemaTypes(s map[string]any, path string) ([]string, error) {
	var types []string
	switch t := s["type"].(type) {
	case nil:
		if _, ok := s["properties"]; ok {
			return []string{"object"}, nil
		}
		if _, ok := s["items"]; ok {
			return []string{"array"}, nil
		}
		return nil, nil
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			name, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s: type list holds %v, want strings", path, x)
			}
			types = append(types, name)
		}
	default:
		return nil, fmt.Errorf("%s: type is %v, want a string or a list", path, t)
	}
	if slices.Contains(types, "number") {
		types = slices.DeleteFunc(types, func(t string) bool { return t == "integer" })
	}
	return types, nil
}

func (g *Grammar) compileType(t string, s map[string]any, path string) (int32, error) {
	switch t {
	case "string":
		minLen, err := intKeyword(s, "minLength", 0, path)
		if err != nil {
			return 0, err
		}
		maxLen, err := intKeyword(s, "maxLength", -1, path)
		if err != nil {
			return 0, err
		}
		if maxLen >= 0 && maxLen < minLen {
			return 0, fmt.Errorf("%s: maxLength %d < minLength %d", path, maxLen, minLen)
		}
		return g.add(node{kind: kindString, minLen: minLen, maxLen: maxLen}), nil
	case "number":
		return g.add(node{kind: kindNumber}), nil
	case "integer":
		return g.add(node{kind: kindInteger}), nil
	case "boolean":
		return g.add(node{kind: kindLiteral, lits: g.addLiterals([]string{"true", "false"}, nil)}), nil
	case "null":
		return g.add(node{kind: kindLiteral, lits: g.addLiterals([]string{"null"}, nil)}), nil
	case "array", "object":
		if g.nesting >= maxNesting {
			return 0, fmt.Errorf("%s: objects and arrays nested deeper than %d levels", path, maxNesting)
		}
		g.nesting++
		defer func() { g.nesting-- }()
		if t == "array" {
			return g.compileArray(s, path)
		}
		return g.compileObject(s, path)
	}
	return 0, fmt.Errorf("%s: unknown type %q", path, t)
}

func intKeyword(s map[string]any, k string, def int32, path string) (int32, error) {
	v, ok := s[k]
	if !ok {
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: %s is %v, want an integer", path, k, v)
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1<<30 {
		return 0, fmt.Errorf("%s: %s is %v, want a non-negative integer", path, k, v)
	}
	return int32(i), nil
}

func (g *Grammar) compileArray(s map[string]any, path string) (int32, error) {
	minItems, err := intKeyword(s, "minItems", 0, path)
	if err != nil {
		return 0, err
	}
	maxItems, err := intKeyword(s, "maxItems", -1, path)
	if err != nil {
		return 0, err
	}
	if maxItems >= 0 && maxItems < minItems {
		return 0, fmt.Errorf("%s: maxItems %d < minItems %d", path, maxItems, minItems)
	}
	items := g.anyValue()
	if it, ok := s["items"]; ok {
		if items, err = g.compile(it, path+"/items"); err != nil {
			return 0, err
		}
	}
	return g.add(node{kind: kindArray, value: items, minItems: minItems, maxItems: maxItems}), nil
}

func (g *Grammar) compileObject(s map[string]any, path string) (int32, error) {
	var required []string
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return 0, fmt.Errorf("%s: required must be an array of names", path)
		}
		for _, x := range list {
			name, ok := x.(string)
			if !ok {
				return 0, fmt.Errorf("%s: required holds %v, want a property name", path, x)
			}
			required = append(required, name)
		}
	}
	props, _ := s["properties"].(map[string]any)
	_, declared := s["properties"]
	if declared && props == nil {
		return 0, fmt.Errorf("%s: properties must be an object", path)
	}
	if !declared {
		additional, hasAdditional := s["additionalProperties"]
		if len(required) > 0 {
			return 0, fmt.Errorf("%s: required %q names no declared property", path, required[0])
		}
		if hasAdditional && additional == false {
			return g.add(node{kind: kindObject, keys: g.addLiterals(nil, nil)}), nil
		}
		value := g.anyValue()
		if hasAdditional && additional != true {
			var err error
			if value, err = g.compile(additional, path+"/additionalProperties"); err != nil {
				return 0, err
			}
		}
		return g.add(node{kind: kindObject, free: true, value: value}), nil
	}
	if len(props) > maxProperties {
		return 0, fmt.Errorf("%s: %d properties, at most %d are supported", path, len(props), maxProperties)
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	n := node{kind: kindObject}
	texts := make([]string, len(names))
	for i, name := range names {
		sub, err := g.compile(props[name], path+"/"+name)
		if err != nil {
			return 0, err
		}
		n.props = append(n.props, sub)
		texts[i] = jsonText(name)
	}
	for _, r := range required {
		i, ok := slices.BinarySearch(names, r)
		if !ok {
			return 0, fmt.Errorf("%s: required property %q is not declared in properties", path, r)
		}
		n.required |= 1 << i
	}
	n.keys = g.addLiterals(texts, nil)
	return g.add(n), nil
}

// enum compiles a fixed set of values, keeping those of an allowed type.
func (g *Grammar) enum(vals []any, s map[string]any, path string) (int32, error) {
	types, err := schemaTypes(s, path)
	if err != nil {
		return 0, err
	}
	var texts []string
	for _, v := range vals {
		if len(types) > 0 && !slices.Contains(types, jsonType(v)) &&
			!(jsonType(v) == "integer" && slices.Contains(types, "number")) {
			continue
		}
		texts = append(texts, jsonText(v))
	}
	if len(texts) == 0 {
		return 0, fmt.Errorf("%s: no enum value has an allowed type", path)
	}
	return g.add(node{kind: kindLiteral, lits: g.addLiterals(texts, nil)}), nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

// union joins alternatives, which must begin with different bytes so that
// the first byte of a value picks one.
func (g *Grammar) union(alts []int32, path string) (int32, error) {
	var owner [256]int32
	for i := range owner {
		owner[i] = -1
	}
	for _, a := range alts {
		for b := range 256 {
			if !g.canStart(a, byte(b)) {
				continue
			}
			if owner[b] >= 0 && owner[b] != a {
				return 0, fmt.Errorf("%s: alternatives overlap on values starting with %q; cannot constrain", path, rune(b))
			}
			owner[b] = a
		}
	}
	return g.add(node{kind: kindUnion, alts: alts}), nil
}

// canStart reports whether a value of node n may begin with b.
func (g *Grammar) canStart(n int32, b byte) bool {
	nd := &g.nodes[n]
	switch nd.kind {
	case kindObject:
		return b == '{'
	case kindArray:
		return b == '['
	case kindString:
		return b == '"'
	case kindNumber, kindInteger:
		return b == '-' || (b >= '0' && b <= '9')
	case kindLiteral:
		for _, t := range g.lits[nd.lits].texts {
			if t[0] == b {
				return true
			}
		}
		return false
	case kindUnion:
		for _, a := range nd.alts {
			if g.canStart(a, b) {
				return true
			}
		}
	}
	return false
}

// jsonText is v as compact JSON text, written as encoding/json writes it
// but without HTML escaping.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // values decoded from JSON always encode
	return strings.TrimSuffix(b.String(), "\n")
}
