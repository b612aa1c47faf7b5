package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// node is a decoded document value that remembers where it was written,
// so that strict-decoding and validation errors can name a line.
type node struct {
	kind   nodeKind
	line   int
	col    int
	keys   []string // object keys in document order
	fields map[string]*node
	items  []*node
	value  any // scalar value: string, float64, bool or nil
}

type nodeKind int

const (
	kindScalar nodeKind = iota
	kindObject
	kindArray
)

func (k nodeKind) String() string {
	switch k {
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "a scalar"
}

// scalarName describes a scalar for error messages.
func (n *node) scalarName() string {
	switch n.value.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// describe names what n is, for "want X, got Y" messages.
func (n *node) describe() string {
	if n.kind == kindScalar {
		return n.scalarName()
	}
	return n.kind.String()
}

// toValue converts the tree to values that encoding/json accepts. Objects
// keep their key order, since the order of a schema's properties is part
// of what the model sees.
func (n *node) toValue() any {
	switch n.kind {
	case kindObject:
		m := orderedObject{keys: n.keys, values: make(map[string]any, len(n.keys))}
		for _, k := range n.keys {
			m.values[k] = n.fields[k].toValue()
		}
		return m
	case kindArray:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = it.toValue()
		}
		return s
	}
	return n.value
}

// orderedObject is a JSON object that marshals its keys in document order.
type orderedObject struct {
	keys   []string
	values map[string]any
}

// MarshalJSON implements json.Marshaler.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		val, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// lineIndex maps byte offsets to 1-based line and column numbers.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range data {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (li lineIndex) position(off int) (line, col int) {
	i := sort.Search(len(li), func(i int) bool { return li[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - li[i] + 1
}

// parseJSONTree decodes JSON into a position-aware tree. Duplicate keys,
// trailing data and syntax errors are reported with their line.
func parseJSONTree(data []byte) (*node, error) {
	li := newLineIndex(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// start returns the offset of the next token, skipping the separators
	// that InputOffset leaves in front of it.
	start := func() int {
		off := int(dec.InputOffset())
		for off < len(data) {
			switch data[off] {
			case ' ', '\t', '\r', '\n', ',', ':':
				off++
				continue
			}
			break
		}
		return off
	}
	syntaxErr := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := li.position(int(se.Offset))
			return &Error{Line: line, Col: col, Msg: "invalid JSON: " + strings.TrimPrefix(se.Error(), "json: ")}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			line, col := li.position(len(data))
			return &Error{Line: line, Col: col, Msg: "invalid JSON: unexpected end of input"}
		}
		return &Error{Msg: "invalid JSON: " + err.Error()}
	}
	var parse func(depth int) (*node, error)
	parse = func(depth int) (*node, error) {
		if depth > maxDepth {
			line, col := li.position(start())
			return nil, &Error{Line: line, Col: col, Msg: fmt.Sprintf("document nested deeper than %d levels", maxDepth)}
		}
		off := start()
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxErr(err)
		}
		line, col := li.position(off)
		n := &node{line: line, col: col}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				n.kind = kindObject
				n.fields = map[string]*node{}
				for dec.More() {
					koff := start()
					kt, err := dec.Token()
					if err != nil {
						return nil, syntaxErr(err)
					}
					key, _ := kt.(string)
					if prev, dup := n.fields[key]; dup {
						kl, kc := li.position(koff)
						return nil, &Error{Line: kl, Col: kc, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", key, prev.line)}
					}
					child, err := parse(depth + 1)
					if err != nil {
						return nil, err
					}
					// Errors about a field point at its key, where readers look.
					child.line, child.col = li.position(koff)
					n.keys = append(n.keys, key)
					n.fields[key] = child
				}
			case '[':
				n.kind = kindArray
				for dec.More() {
					child, err := parse(depth + 1)
					if err != nil {
						return nil, err
					}
					n.items = append(n.items, child)
				}
			}
			if _, err := dec.Token(); err != nil { // closing delimiter
				return nil, syntaxErr(err)
			}
		case json.Number:
			f, err := t.Float64()
			if err != nil {
				return nil, &Error{Line: line, Col: col, Msg: fmt.Sprintf("number %s out of range", t)}
			}
			n.value = f
		default:
			n.value = t
		}
		return n, nil
	}
	root, err := parse(0)
	if err != nil {
		return nil, err
	}
	if off := start(); off < len(data) {
		line, col := li.position(off)
		return nil, &Error{Line: line, Col: col, Msg: "invalid JSON: data after the top-level value"}
	}
	return root, nil
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

// parseYAMLTree decodes YAML into the same tree as parseJSONTree.
func parseYAMLTree(data []byte) (*node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "empty document"}
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{Line: extra.Line, Msg: "more than one YAML document"}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return fromYAML(doc.Content[0], 0)
	}
	return nil, &Error{Msg: "empty document"}
}

var yamlLinePrefix = "yaml: line "

// yamlError turns yaml.v3's "yaml: line N: msg" into a located Error.
func yamlError(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, yamlLinePrefix); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, perr := strconv.Atoi(num); perr == nil {
				return &Error{Line: line, Msg: "invalid YAML: " + text}
			}
		}
	}
	return &Error{Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

func fromYAML(y *yaml.Node, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &Error{Line: y.Line, Col: y.Column, Msg: fmt.Sprintf("document nested deeper than %d levels", maxDepth)}
	}
	n := &node{line: y.Line, col: y.Column}
	switch y.Kind {
	case yaml.AliasNode:
		return nil, &Error{Line: y.Line, Col: y.Column, Msg: "YAML aliases are not allowed in harness files"}
	case yaml.MappingNode:
		n.kind = kindObject
		n.fields = map[string]*node{}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &Error{Line: k.Line, Col: k.Column, Msg: "mapping keys must be strings"}
			}
			if k.Tag == "!!merge" {
				return nil, &Error{Line: k.Line, Col: k.Column, Msg: "YAML merge keys are not allowed in harness files"}
			}
			if prev, dup := n.fields[k.Value]; dup {
				return nil, &Error{Line: k.Line, Col: k.Column, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, prev.line)}
			}
			child, err := fromYAML(v, depth+1)
			if err != nil {
				return nil, err
			}
			child.line, child.col = k.Line, k.Column
			n.keys = append(n.keys, k.Value)
			n.fields[k.Value] = child
		}
	case yaml.SequenceNode:
		n.kind = kindArray
		for _, c := range y.Content {
			child, err := fromYAML(c, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, child)
		}
	case yaml.ScalarNode:
		switch y.ShortTag() {
		case "!!null":
			n.value = nil
		case "!!bool":
			var b bool
			if err := y.Decode(&b); err != nil {
				return nil, &Error{Line: y.Line, Col: y.Column, Msg: err.Error()}
			}
			n.value = b
		case "!!int", "!!float":
			var f float64
			if err := y.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, &Error{Line: y.Line, Col: y.Column, Msg: fmt.Sprintf("number %q is not a finite number", y.Value)}
			}
			n.value = f
		default:
			n.value = y.Value
		}
	default:
		return nil, &Error{Line: y.Line, Col: y.Column, Msg: "unsupported YAML node"}
	}
	return n, nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checkTree walks the tree against the Go type t the way encoding/json
// would decode it, but strictly: unknown fields, wrong kinds and keys that
// differ only in case are errors that name the path and line. It records
// the position of every path in pos, for later validation messages.
func checkTree(n *node, t reflect.Type, path string, pos map[string][2]int, errs *ErrorList) {
	pos[path] = [2]int{n.line, n.col}
	if t == rawMessageType {
		return
	}
	if n.kind == kindScalar && n.value == nil {
		return // null leaves the zero value, as encoding/json does
	}
	fail := func(msg string) {
		*errs = append(*errs, &Error{Line: n.line, Col: n.col, Path: path, Msg: msg})
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.kind != kindObject {
			fail("want an object, got " + n.describe())
			return
		}
		fields := jsonFields(t)
		for _, k := range n.keys {
			f, ok := fields[k]
			child := n.fields[k]
			if !ok {
				*errs = append(*errs, &Error{Line: child.line, Col: child.col, Path: join(path, k),
					Msg: fmt.Sprintf("unknown field %q%s", k, suggest(k, fields))})
				continue
			}
			checkTree(child, f, join(path, k), pos, errs)
		}
	case reflect.Slice:
		if n.kind != kindArray {
			fail("want an array, got " + n.describe())
			return
		}
		for i, it := range n.items {
			checkTree(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i), pos, errs)
		}
	case reflect.Map:
		if n.kind != kindObject {
			fail("want an object, got " + n.describe())
			return
		}
		for _, k := range n.keys {
			checkTree(n.fields[k], t.Elem(), join(path, k), pos, errs)
		}
	case reflect.String:
		if _, ok := n.value.(string); !ok || n.kind != kindScalar {
			fail("want a string, got " + n.describe())
		}
	case reflect.Bool:
		if _, ok := n.value.(bool); !ok || n.kind != kindScalar {
			fail("want true or false, got " + n.describe())
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		f, ok := n.value.(float64)
		if !ok || n.kind != kindScalar {
			fail("want an integer, got " + n.describe())
		} else if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			fail(fmt.Sprintf("want an integer, got %v", f))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields maps the JSON names of t's exported fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// suggest proposes the known field closest to an unknown one.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestDist := "", 3
	for name := range fields {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
		if d := editDistance(key, name); d < bestDist || (d == bestDist && best != "" && name < best) {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
