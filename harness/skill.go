package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// skillFrontMatter is the Agent Skills SKILL.md front matter.
type skillFrontMatter struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Metadata    map[string]string `yaml:"metadata"`
}

// ParseSkillMarkdown reads a skill in the Agent Skills SKILL.md layout:
// YAML front matter (name, description, metadata) between "---" lines,
// then Markdown. Metadata "kind" (reply or strategy) and "version" fill
// those fields. Paragraphs before the first list are the instructions;
// list items are the rules; a rule written in bold (**…**) is essential.
func ParseSkillMarkdown(data []byte) (Skill, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, errors.New("SKILL.md: missing front matter (the file must start with a \"---\" line)")
	}
	fm, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return Skill{}, errors.New("SKILL.md: front matter is not closed by a \"---\" line")
	}
	body = strings.TrimPrefix(strings.TrimPrefix(body, "\n"), "\n")
	if i := strings.IndexByte(body, '\n'); i >= 0 && strings.TrimSpace(body[:i]) == "" {
		body = body[i+1:]
	}
	var meta skillFrontMatter
	dec := yaml.NewDecoder(strings.NewReader(fm))
	dec.KnownFields(true)
	if err := dec.Decode(&meta); err != nil {
		return Skill{}, fmt.Errorf("SKILL.md front matter: %w", err)
	}
	if meta.Name == "" {
		return Skill{}, errors.New("SKILL.md front matter: name is empty")
	}
	s := Skill{ID: meta.Name, Description: meta.Description}
	for k, v := range meta.Metadata {
		switch k {
		case "kind":
			s.Kind = SkillKind(v)
		case "version":
			s.Version = v
		default:
			if s.Metadata == nil {
				s.Metadata = map[string]string{}
			}
			s.Metadata[k] = v
		}
	}
	var intro []string
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		item, format, isItem := listItem(trimmed)
		switch {
		case isItem:
			if s.Format == "" {
				s.Format = format
			}
			s.Rules = append(s.Rules, ruleFromMarkdown(item))
		case len(s.Rules) > 0 && trimmed != "" && (strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t")):
			// An indented continuation line belongs to the previous rule.
			last := &s.Rules[len(s.Rules)-1]
			last.Text += " " + trimmed
		case len(s.Rules) == 0:
			intro = append(intro, line)
		case trimmed != "":
			return Skill{}, fmt.Errorf("SKILL.md: text %q after the rules list; put instructions before the list", truncate(trimmed, 40))
		}
	}
	s.Instructions = strings.TrimSpace(strings.Join(intro, "\n"))
	return s, nil
}

func ruleFromMarkdown(item string) Rule {
	if inner, ok := strings.CutPrefix(item, "**"); ok {
		if inner, ok := strings.CutSuffix(inner, "**"); ok && !strings.Contains(inner, "**") {
			return Rule{Text: inner, Essential: true}
		}
	}
	return Rule{Text: item}
}

// listItem recognises "- x", "* x" and "1. x" Markdown list items.
func listItem(line string) (string, ListFormat, bool) {
	if rest, ok := strings.CutPrefix(line, "- "); ok {
		return strings.TrimSpace(rest), ListBullets, true
	}
	if rest, ok := strings.CutPrefix(line, "* "); ok {
		return strings.TrimSpace(rest), ListBullets, true
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(line) && line[i] == '.' && line[i+1] == ' ' {
		return strings.TrimSpace(line[i+2:]), ListNumbered, true
	}
	return "", "", false
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// FormatSkillMarkdown writes s in the SKILL.md layout that
// ParseSkillMarkdown reads back. Rules are written as a list even when the
// skill's format is prose, so that they survive the round trip.
func FormatSkillMarkdown(s Skill) []byte {
	meta := map[string]string{}
	for k, v := range s.Metadata {
		meta[k] = v
	}
	if s.Kind != "" {
		meta["kind"] = string(s.Kind)
	}
	if s.Version != "" {
		meta["version"] = s.Version
	}
	fm := skillFrontMatter{Name: s.ID, Description: s.Description, Metadata: meta}
	out, err := yaml.Marshal(fm)
	if err != nil {
		out = fmt.Appendf(nil, "name: %q\ndescription: %q\n", s.ID, s.Description)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(out)
	b.WriteString("---\n\n")
	if s.Instructions != "" {
		b.WriteString(s.Instructions)
		b.WriteString("\n\n")
	}
	format := s.Format
	if format != ListNumbered {
		format = ListBullets
	}
	for i, r := range s.Rules {
		text := r.Text
		if r.Essential {
			text = "**" + text + "**"
		}
		b.WriteString(listPrefix(format, i))
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// resolveSkillFiles fills skills that name a SKILL.md file from it. Fields
// set in the harness file win over the file's; File is cleared.
func resolveSkillFiles(h *Harness, dir fs.FS) error {
	var errs ErrorList
	for i := range h.Skills {
		s := &h.Skills[i]
		if s.File == "" {
			continue
		}
		p := fmt.Sprintf("skills[%d].file", i)
		if dir == nil {
			errs = append(errs, &Error{Path: p, Msg: "skill files can only be read when loading from a file"})
			continue
		}
		name := path.Clean(strings.ReplaceAll(s.File, "\\", "/"))
		if !fs.ValidPath(name) {
			errs = append(errs, &Error{Path: p, Msg: fmt.Sprintf("%q must be a relative path inside the harness folder", s.File)})
			continue
		}
		if err := checkPlainFile(dir, name); err != nil {
			errs = append(errs, &Error{Path: p, Msg: fmt.Sprintf("%s: %v", s.File, err)})
			continue
		}
		data, err := fs.ReadFile(dir, name)
		if err != nil {
			errs = append(errs, &Error{Path: p, Msg: fmt.Sprintf("cannot read %s: %v", s.File, unwrapPathError(err))})
			continue
		}
		fromFile, err := ParseSkillMarkdown(data)
		if err != nil {
			errs = append(errs, &Error{Path: p, Msg: fmt.Sprintf("%s: %v", s.File, err)})
			continue
		}
		mergeSkill(s, fromFile)
		s.File = ""
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkPlainFile refuses a name that is, or passes through, a symbolic
// link, and one that is not a regular file: a harness is shared and
// reviewed as a folder, so what it references must be in that folder
// (a link could point at any file of the machine that loads it), and a
// device or pipe could block the loader.
func checkPlainFile(dir fs.FS, name string) error {
	parts := strings.Split(name, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fi, err := fs.Lstat(dir, sub)
		if err != nil {
			return nil // reading the file reports it, as for any name
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; files a harness references must be regular files inside its folder", sub)
		case i == len(parts)-1 && !fi.Mode().IsRegular():
			return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func mergeSkill(dst *Skill, src Skill) {
	if dst.ID == "" {
		dst.ID = src.ID
	}
	if dst.Kind == "" {
		dst.Kind = src.Kind
	}
	if dst.Description == "" {
		dst.Description = src.Description
	}
	if dst.Version == "" {
		dst.Version = src.Version
	}
	if dst.Instructions == "" {
		dst.Instructions = src.Instructions
	}
	if len(dst.Rules) == 0 {
		dst.Rules = src.Rules
	}
	if dst.Format == "" {
		dst.Format = src.Format
	}
	if len(src.Metadata) > 0 {
		if dst.Metadata == nil {
			dst.Metadata = map[string]string{}
		}
		keys := make([]string, 0, len(src.Metadata))
		for k := range src.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := dst.Metadata[k]; !ok {
				dst.Metadata[k] = src.Metadata[k]
			}
		}
	}
}

// endsSentence reports whether s already ends with sentence punctuation.
func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?。！？…:：;；", r)
}

// isCJK reports whether r is a Han, Hiragana, Katakana or Hangul rune.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
