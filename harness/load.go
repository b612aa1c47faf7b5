package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem in a harness document, located by line and column
// (when known) and by the field path, e.g. "tools[2].parameters".
type Error struct {
	File string
	Line int
	Col  int
	Path string
	Msg  string
}

// Error formats the problem as "file:line:col: path: message".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one document, in document order.
type ErrorList []*Error

// Error lists every problem, one per line after a count.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(l))
	for _, e := range l {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return b.String()
}

// Format is the syntax of a harness document.
type Format string

// Document formats.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// FormatOf guesses the format of a file from its name, then its content.
func FormatOf(name string, data []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return FormatJSON
	case ".yaml", ".yml":
		return FormatYAML
	}
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return FormatJSON
	}
	return FormatYAML
}

// maxDocumentBytes bounds harness documents; real ones are tens of KiB.
const maxDocumentBytes = 8 << 20

// Load reads, strictly decodes and validates the harness file at path.
// Skills with a "file" field are read from SKILL.md files relative to it;
// such a file must be a regular file inside the harness file's folder,
// reached without symbolic links. Errors name the file, line and field.
func Load(path string) (*Harness, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	// The folder is opened as a root so that no name, whatever links lie
	// on its way, reads outside it.
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	defer root.Close()
	return parse(data, FormatOf(path, data), root.FS(), path)
}

// LoadFS is Load for a file inside fsys, such as an embedded folder.
func LoadFS(fsys fs.FS, name string) (*Harness, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	sub, err := fs.Sub(fsys, path.Dir(name))
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	return parse(data, FormatOf(name, data), sub, name)
}

// Parse strictly decodes and validates a harness document. Skills that
// name a file are rejected, since there is no directory to read them from;
// use Load for those.
func Parse(data []byte, format Format) (*Harness, error) {
	return parse(data, format, nil, "")
}

func parse(data []byte, format Format, dir fs.FS, file string) (*Harness, error) {
	locate := func(err error) error {
		switch e := err.(type) {
		case *Error:
			e.File = file
		case ErrorList:
			for _, x := range e {
				x.File = file
			}
		}
		return err
	}
	if len(data) > maxDocumentBytes {
		return nil, locate(&Error{Msg: fmt.Sprintf("document is %d bytes, more than the %d allowed", len(data), maxDocumentBytes)})
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var root *node
	var err error
	switch format {
	case FormatJSON:
		root, err = parseJSONTree(data)
	case FormatYAML:
		root, err = parseYAMLTree(data)
	default:
		err = &Error{Msg: fmt.Sprintf("unknown format %q (want json or yaml)", format)}
	}
	if err != nil {
		return nil, locate(err)
	}
	pos := map[string][2]int{}
	var errs ErrorList
	checkTree(root, reflect.TypeFor[Harness](), "", pos, &errs)
	if len(errs) > 0 {
		return nil, locate(errs)
	}
	raw, err := json.Marshal(root.toValue())
	if err != nil {
		return nil, locate(&Error{Msg: err.Error()})
	}
	var h Harness
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, locate(&Error{Msg: err.Error()})
	}
	if err := resolveSkillFiles(&h, dir); err != nil {
		return nil, locate(withPositions(err, pos))
	}
	if err := Validate(&h); err != nil {
		return nil, locate(withPositions(err, pos))
	}
	return &h, nil
}

// withPositions fills in the line and column of errors from their path.
func withPositions(err error, pos map[string][2]int) error {
	list, ok := err.(ErrorList)
	if !ok {
		if e, ok := err.(*Error); ok {
			list = ErrorList{e}
		} else {
			return err
		}
	}
	for _, e := range list {
		if e.Line > 0 {
			continue
		}
		// Walk up the path until a position is known: a missing field is
		// reported at the object that lacks it.
		for p := e.Path; ; p = parentPath(p) {
			if lc, ok := pos[p]; ok {
				e.Line, e.Col = lc[0], lc[1]
				break
			}
			if p == "" {
				break
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Line != list[j].Line {
			return list[i].Line < list[j].Line
		}
		return list[i].Col < list[j].Col
	})
	return list
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// Marshal writes h as indented JSON, the canonical file form.
func Marshal(h *Harness) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("harness: marshal %q: %w", h.Name, err)
	}
	return buf.Bytes(), nil
}

// MarshalYAML writes h as YAML with the same field names as the JSON form.
func MarshalYAML(h *Harness) ([]byte, error) {
	raw, err := Marshal(h)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("harness: marshal %q as YAML: %w", h.Name, err)
	}
	clearStyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("harness: marshal %q as YAML: %w", h.Name, err)
	}
	return buf.Bytes(), nil
}

// clearStyle turns the flow style that JSON input leaves into block style,
// keeping quoted scalars quoted so that strings stay strings.
func clearStyle(n *yaml.Node) {
	if n.Kind != yaml.ScalarNode {
		n.Style = 0
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}

// Save writes h to path as JSON or YAML, chosen by the file extension.
// It writes a temporary file and renames it, so a failed save never
// leaves a half-written harness behind.
func Save(path string, h *Harness) error {
	if err := Validate(h); err != nil {
		return fmt.Errorf("harness: refusing to save %s: %w", path, err)
	}
	var data []byte
	var err error
	if FormatOf(path, nil) == FormatYAML && filepath.Ext(path) != "" {
		data, err = MarshalYAML(h)
	} else {
		data, err = Marshal(h)
	}
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".harness-*")
	if err != nil {
		return fmt.Errorf("harness: save %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("harness: save %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("harness: save %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("harness: save %s: %w", path, err)
	}
	return nil
}

// Version returns the content hash that identifies this harness version:
// "sha256:" and the hex digest of its compact JSON encoding. Formatting of
// the file does not matter; anything the model could see (including the
// order of schema properties) does.
func (h *Harness) Version() string {
	raw, err := json.Marshal(h)
	if err != nil {
		// Raw fields that are not JSON cannot be encoded; hash the Go
		// value instead so that the version still follows the content.
		raw = fmt.Appendf(nil, "%#v", *h)
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ShortVersion is the first 12 hex digits of Version, for display.
func (h *Harness) ShortVersion() string {
	return strings.TrimPrefix(h.Version(), "sha256:")[:12]
}
