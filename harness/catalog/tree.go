package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds nesting: a catalog is five levels deep, and a bound
// keeps hostile input from recursing without end.
const maxDepth = 32

// node is one JSON value of a document with where it lies in the bytes,
// so that problems can name a line and a column.
type node struct {
	start   int64 // byte offset of the value's first byte
	kind    nodeKind
	members []member // object members in document order
	elems   []*node  // array elements
	text    string   // a string's value
	number  json.Number
	flag    bool
}

type nodeKind uint8

const (
	nodeNull nodeKind = iota
	nodeBool
	nodeNumber
	nodeString
	nodeArray
	nodeObject
)

// member is one key of an object and its value.
type member struct {
	key   string
	value *node
}

// member returns the value of key (the last, if the key repeats).
func (n *node) member(key string) *node {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].value
		}
	}
	return nil
}

// plain returns the value as encoding/json decodes into any, with numbers
// as json.Number: the form the JSON Schema validator reads.
func (n *node) plain() any {
	switch n.kind {
	case nodeBool:
		return n.flag
	case nodeNumber:
		return n.number
	case nodeString:
		return n.text
	case nodeArray:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = e.plain()
		}
		return out
	case nodeObject:
		out := make(map[string]any, len(n.members))
		for _, m := range n.members {
			out[m.key] = m.value.plain()
		}
		return out
	}
	return nil
}

// without returns plain() less the values at the paths in refused (n
// lies at path): members are dropped, elements become null so that the
// indices of the rest stay as the problems name them.
func (n *node) without(refused map[string]bool, path string) any {
	switch n.kind {
	case nodeArray:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			if child := path + "[" + strconv.Itoa(i) + "]"; !refused[child] {
				out[i] = e.without(refused, child)
			}
		}
		return out
	case nodeObject:
		out := make(map[string]any, len(n.members))
		for _, m := range n.members {
			if child := joinKey(path, m.key); !refused[child] {
				out[m.key] = m.value.without(refused, child)
			}
		}
		return out
	}
	return n.plain()
}

// literal returns the value as a short text for messages.
func (n *node) literal() string {
	switch n.kind {
	case nodeNumber:
		return n.number.String()
	case nodeString:
		return strconv.Quote(n.text)
	case nodeBool:
		return strconv.FormatBool(n.flag)
	case nodeArray:
		return "a list"
	case nodeObject:
		return "an object"
	}
	return "null"
}

// document is a parsed catalog file: its bytes, its value tree and the
// offset of every path in it (members at their key, elements at their
// first byte).
type document struct {
	data []byte
	root *node
	at   map[string]int64
}

// treeParser reads a document token by token, keeping offsets.
type treeParser struct {
	doc      *document
	dec      *json.Decoder
	problems []located
}

// parseDocument reads data into a document. A syntax error ends the
// parse and is the only problem returned, with a document without a
// root; repeated keys are problems too but the parse goes on.
func parseDocument(data []byte) (*document, []located) {
	doc := &document{data: data, at: map[string]int64{}}
	p := &treeParser{doc: doc, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value("", 0)
	if err == nil {
		end := p.dec.InputOffset()
		if _, extra := p.dec.Token(); extra != io.EOF {
			err = &syntaxError{at: p.skip(end), msg: "unexpected data after the end of the catalog"}
		}
	}
	if err != nil {
		return doc, []located{p.syntaxProblem(err)}
	}
	doc.root = root
	return doc, p.problems
}

// syntaxError is a problem that ends the parse at a byte offset.
type syntaxError struct {
	at  int64
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func (p *treeParser) syntaxProblem(err error) located {
	at := int64(len(p.doc.data))
	msg, code := err.Error(), "invalid_json"
	var syn *json.SyntaxError
	var own *syntaxError
	switch {
	case errors.As(err, &own):
		at = own.at
	case errors.As(err, &syn):
		// The decoder's offsets lag inside tokens; a whole-input check
		// names the offending byte exactly, its Offset just past it.
		var raw json.RawMessage
		if precise := json.Unmarshal(p.doc.data, &raw); errors.As(precise, &syn) {
			msg = precise.Error()
		}
		at = max(syn.Offset-1, 0)
		msg = "invalid JSON: " + msg
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(p.doc.data)) == 0:
		at, msg, code = 0, "the document is empty", "empty_document"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "invalid JSON: the document ends before its last value is complete"
	}
	return located{Problem{Message: msg, Code: code, Params: []string{msg}}, at}
}

// skip returns the offset of the next token at or after off: the decoder
// reports where the previous token ended, before any space, ',' or ':'.
func (p *treeParser) skip(off int64) int64 {
	for off < int64(len(p.doc.data)) {
		switch p.doc.data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (p *treeParser) value(path string, depth int) (*node, error) {
	before := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{start: p.skip(before)}
	if path == "" {
		p.doc.at[""] = n.start
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, &syntaxError{at: n.start, msg: fmt.Sprintf("values nest deeper than %d levels; a catalog needs far fewer", maxDepth)}
		}
		if t == '{' {
			err = p.object(n, path, depth)
		} else {
			err = p.array(n, path, depth)
		}
		if err != nil {
			return nil, err
		}
	case string:
		n.kind, n.text = nodeString, t
	case json.Number:
		n.kind, n.number = nodeNumber, t
	case bool:
		n.kind, n.flag = nodeBool, t
	case nil:
		n.kind = nodeNull
	}
	return n, nil
}

func (p *treeParser) object(n *node, path string, depth int) error {
	n.kind = nodeObject
	first := map[string]bool{}
	for p.dec.More() {
		before := p.dec.InputOffset()
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // inside an object the decoder yields only string keys
		keyAt := p.skip(before)
		child := joinKey(path, key)
		if first[key] {
			p.problems = append(p.problems, located{Problem{Path: child, Message: fmt.Sprintf("field %q appears twice in this object; keep one", key),
				Code: "duplicate_field", Params: []string{key}}, keyAt})
		} else {
			first[key] = true
			p.doc.at[child] = keyAt
		}
		v, err := p.value(child, depth+1)
		if err != nil {
			return err
		}
		n.members = append(n.members, member{key: key, value: v})
	}
	_, err := p.dec.Token() // the closing brace
	return err
}

func (p *treeParser) array(n *node, path string, depth int) error {
	n.kind = nodeArray
	for i := 0; p.dec.More(); i++ {
		child := path + "[" + strconv.Itoa(i) + "]"
		v, err := p.value(child, depth+1)
		if err != nil {
			return err
		}
		p.doc.at[child] = v.start
		n.elems = append(n.elems, v)
	}
	_, err := p.dec.Token() // the closing bracket
	return err
}

// joinKey returns the path of member key of the object at path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// located is a problem with the byte offset it lies at; lines and
// columns are counted once, for the problems reported (see place).
type located struct {
	Problem
	offset int64
}

// place sets the line and column of problems sorted by offset, in one
// pass over the document. Columns count characters, not bytes, so that
// Chinese text lines up.
func (d *document) place(problems []located) {
	line, lineStart, pos := 1, int64(0), int64(0)
	for i := range problems {
		off := min(max(problems[i].offset, 0), int64(len(d.data)))
		for ; pos < off; pos++ {
			if d.data[pos] == '\n' {
				line, lineStart = line+1, pos+1
			}
		}
		problems[i].Line = line
		problems[i].Column = utf8.RuneCount(d.data[lineStart:off]) + 1
	}
}

// offset returns where path lies in the document, or where its nearest
// ancestor lies when the path itself is absent (a missing field).
func (d *document) offset(path string) int64 {
	for {
		if off, ok := d.at[path]; ok {
			return off
		}
		if path == "" {
			return 0
		}
		path = parentPath(path)
	}
}

// parentPath strips the last step of a path: "a.b[2]" → "a.b" → "a".
func parentPath(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.':
			return path[:i]
		case '[':
			return path[:i]
		}
	}
	return ""
}

// locate walks a JSON Schema instance location (keys and indices) and
// returns its path in display form and its node (nil past a missing one).
func (d *document) locate(loc []string) (string, *node) {
	path, n := "", d.root
	for _, step := range loc {
		if n == nil {
			path = joinKey(path, step)
			continue
		}
		switch n.kind {
		case nodeArray:
			path += "[" + step + "]"
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(n.elems) {
				n = nil
				continue
			}
			n = n.elems[i]
		default:
			path = joinKey(path, step)
			n = n.member(step)
		}
	}
	return path, n
}
