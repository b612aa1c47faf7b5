package catalog

import (
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// MaxProblems is the most problems Parse lists; past it a document is
// better fixed from the top and parsed again.
const MaxProblems = 100

// Problem is one thing wrong with a catalog document.
type Problem struct {
	// Path locates the value, as "products[0].size_chart[1].min_height_cm";
	// empty for the document as a whole.
	Path string
	// Line and Column locate it in the document, from 1; 0 when unknown.
	// Columns count characters, not bytes.
	Line, Column int
	// Message says what is wrong, in English; its wording may change.
	Message string
	// Code names the kind of problem and does not change with Message's
	// wording ("required", "id_taken"; README.md lists them), so that a
	// page can say it in its reader's language.
	Code string
	// Params are the values Message names, in the order the code's entry
	// in README.md gives (an id, a number as written, a field name).
	Params []string
}

// String returns the problem as "path (line L, column C): message".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(line %d, column %d)", p.Line, p.Column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is every problem Parse found in a document, in document order;
// it is Parse's error.
type Problems struct {
	// List holds the first MaxProblems problems.
	List []Problem
	// Omitted counts the problems found past MaxProblems.
	Omitted int
}

// Error lists the problems, one a line after the first.
func (ps *Problems) Error() string {
	if len(ps.List) == 1 && ps.Omitted == 0 {
		return "catalog: " + ps.List[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "catalog: %d problems:", len(ps.List)+ps.Omitted)
	for _, p := range ps.List {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	if ps.Omitted > 0 {
		fmt.Fprintf(&b, "\n\tand %d more", ps.Omitted)
	}
	return b.String()
}

// versionV1 is the "schema" a version 1 document may carry; most carry
// none.
const versionV1 = "livehat.catalog/1"

// Parse decodes a catalog document strictly and validates it: against the
// JSON Schema (Schema), then the rules that relate fields (unique ids and
// links, references to products, list price at least the price, stock
// that agrees with its variants, the fields of each promotion kind, …).
// A document of version 1 (without "schema", or "livehat.catalog/1") is
// checked against its own layout and upgraded. The error, when there is
// one, is a *Problems listing every problem found.
func Parse(data []byte) (*Catalog, error) {
	doc, problems := parseDocument(data)
	if doc.root == nil {
		return nil, doc.finish(problems)
	}
	r := newReport(doc, problems)
	c := r.catalog()
	if len(r.list) > 0 {
		return nil, doc.finish(r.list)
	}
	return c, nil
}

// finish sorts problems into document order, caps them and places them.
func (d *document) finish(list []located) *Problems {
	slices.SortStableFunc(list, func(a, b located) int { return cmp.Compare(a.offset, b.offset) })
	omitted := max(len(list)-MaxProblems, 0)
	list = list[:len(list)-omitted]
	d.place(list)
	ps := &Problems{List: make([]Problem, len(list)), Omitted: omitted}
	for i, p := range list {
		ps.List[i] = p.Problem
	}
	return ps
}

// report gathers the problems of one document.
type report struct {
	doc  *document
	list []located
	// at holds the path of every problem; touched holds those paths and
	// every path above them, so that clean is a few map lookups.
	at, touched map[string]bool
}

func newReport(doc *document, problems []located) *report {
	r := &report{doc: doc, at: map[string]bool{}, touched: map[string]bool{}}
	for _, p := range problems {
		r.record(p)
	}
	return r
}

// add records a problem at path, located where the path (or its nearest
// ancestor) lies in the document.
func (r *report) add(path, code, format string, args ...any) {
	params := make([]string, len(args))
	for i, a := range args {
		params[i] = fmt.Sprint(a)
	}
	r.addParams(path, code, params, format, args...)
}

// addParams records a problem whose params are not its message's
// arguments as they stand (an axis the message words as a phrase).
func (r *report) addParams(path, code string, params []string, format string, args ...any) {
	p := Problem{Path: path, Message: fmt.Sprintf(format, args...), Code: code, Params: params}
	r.record(located{p, r.doc.offset(path)})
}

func (r *report) record(p located) {
	r.list = append(r.list, p)
	r.at[p.Path] = true
	for path := p.Path; !r.touched[path]; path = parentPath(path) {
		r.touched[path] = true
		if path == "" {
			break
		}
	}
}

// clean reports whether no problem so far lies at, above or below any of
// paths: checks that read those fields would otherwise read values the
// decoder had to leave zero, and report what is already reported.
func (r *report) clean(paths ...string) bool {
	for _, path := range paths {
		if r.touched[path] {
			return false
		}
		for above := path; above != ""; {
			above = parentPath(above)
			if r.at[above] {
				return false
			}
		}
	}
	return true
}

// catalog reads the document in its version and returns the version 2
// catalog, checked.
func (r *report) catalog() *Catalog {
	root := r.doc.root
	if root.kind != nodeObject {
		r.add("", "not_object", "a catalog is a JSON object, not %s", kindName(root))
		return nil
	}
	v1 := true
	if s := root.member("schema"); s != nil {
		switch {
		case s.kind != nodeString:
			r.add("schema", "schema_type", "is %s; want the string %q", kindName(s), SchemaVersion)
			return nil
		case s.text == SchemaVersion:
			v1 = false
		case s.text != versionV1:
			r.add("schema", "schema_version", "unknown version %q; this host reads %q and upgrades %q", s.text, SchemaVersion, versionV1)
			return nil
		}
	}
	var c *Catalog
	if v1 {
		c = r.version1()
	} else {
		c = r.version2()
	}
	if c != nil {
		r.check(c)
	}
	return c
}

func (r *report) version2() *Catalog {
	schema, err := compiledV2()
	if err != nil {
		r.add("", "internal", "%v", err)
		return nil
	}
	r.validate(schema.Validate(r.doc.root.plain()), reflect.TypeFor[Catalog](), "schema")
	var c Catalog
	r.decode(&c)
	if c.Products == nil {
		c.Products = []Product{}
	}
	return &c
}

// decode unmarshals the document into v. Values the schema refused are
// left out first (array elements become null, keeping indices), so that
// the rest decodes and the relational checks see it; numbers that the
// schema accepts but v's Go types cannot hold are reported here.
func (r *report) decode(v any) {
	r.fit(r.doc.root, reflect.TypeOf(v).Elem(), "")
	b, err := json.Marshal(r.doc.root.without(r.at, ""))
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		r.add("", "undecodable", "cannot decode the catalog: %v", err)
	}
}

// fit reports numbers the Go type at their place cannot hold: whole
// numbers written with a fraction or exponent ("5.0", "1e3") or beyond
// 64 bits, and numbers beyond float64.
func (r *report) fit(n *node, t reflect.Type, path string) {
	t = derefType(t)
	if decodesItself(t) {
		if n.kind == nodeNumber && r.clean(path) {
			r.fitFloat(path, n.number.String())
		}
		return
	}
	switch n.kind {
	case nodeObject:
		for _, m := range n.members {
			child := joinKey(path, m.key)
			switch t.Kind() {
			case reflect.Struct:
				if f, ok := fieldByJSONName(t, m.key); ok {
					r.fit(m.value, f.Type, child)
				}
			case reflect.Map:
				r.fit(m.value, t.Elem(), child)
			}
		}
	case nodeArray:
		if t.Kind() == reflect.Slice {
			for i, e := range n.elems {
				r.fit(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")
			}
		}
	case nodeNumber:
		if !r.clean(path) {
			return
		}
		lit := n.number.String()
		switch t.Kind() {
		case reflect.Int, reflect.Int64:
			if _, err := strconv.ParseInt(lit, 10, t.Bits()); err != nil {
				if f, _ := strconv.ParseFloat(lit, 64); errors.Is(err, strconv.ErrRange) || math.Abs(f) >= math.Ldexp(1, t.Bits()-1) {
					r.add(path, "too_large", "%s is too large a number", lit)
				} else {
					r.add(path, "want_whole", "%s: write a whole number without a decimal point or exponent", lit)
				}
			}
		case reflect.Float64:
			r.fitFloat(path, lit)
		}
	}
}

// fitFloat reports a number float64 cannot hold: too large, or so small
// that it would silently read as 0.
func (r *report) fitFloat(path, lit string) {
	f, err := strconv.ParseFloat(lit, 64)
	mantissa, _, _ := strings.Cut(strings.ToLower(lit), "e")
	switch {
	case err != nil:
		r.add(path, "too_large", "%s is too large a number", lit)
	case f == 0 && strings.ContainsAny(mantissa, "123456789"):
		r.add(path, "too_small", "%s is too small a number", lit)
	}
}

// decodesItself reports whether values of t decode through their own
// method (dates, spec values, times): JSON scalars, not objects to walk.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// kindName names a JSON value's kind with its article.
func kindName(n *node) string {
	switch n.kind {
	case nodeBool:
		return "a boolean"
	case nodeNumber:
		return "a number"
	case nodeString:
		return "a string"
	case nodeArray:
		return "a list"
	case nodeObject:
		return "an object"
	}
	return "null"
}
