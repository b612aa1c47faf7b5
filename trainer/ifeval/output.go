package ifeval

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
)

// WriteOfficialResults writes dir/eval_results_strict.jsonl and
// dir/eval_results_loose.jsonl as the official evaluation_main does: one
// line per prompt in input order, the OutputExample fields in alphabetical
// order (follow_all_instructions, follow_instruction_list,
// instruction_id_list, prompt, response), formatted like Python's
// json.dumps (", " and ": " separators, non-ASCII escaped), so the files can
// be compared line by line with the official ones.
func WriteOfficialResults(dir string, rep Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("ifeval: %w", err)
	}
	for _, mode := range []struct {
		file   string
		strict bool
	}{{"eval_results_strict.jsonl", true}, {"eval_results_loose.jsonl", false}} {
		if err := writeResults(filepath.Join(dir, mode.file), rep, mode.strict); err != nil {
			return err
		}
	}
	return nil
}

func writeResults(path string, rep Report, strict bool) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ifeval: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("ifeval: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	for _, p := range rep.Prompts {
		verdicts, all := p.Loose, p.FollowAllLoose()
		if strict {
			verdicts, all = p.Strict, p.FollowAllStrict()
		}
		w.WriteString(officialLine(p, verdicts, all))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("ifeval: write %s: %w", path, err)
	}
	return nil
}

func officialLine(p PromptResult, verdicts []bool, all bool) string {
	var b strings.Builder
	b.WriteString(`{"follow_all_instructions": `)
	b.WriteString(pyBool(all))
	b.WriteString(`, "follow_instruction_list": [`)
	for i, v := range verdicts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyBool(v))
	}
	b.WriteString(`], "instruction_id_list": [`)
	for i, id := range p.InstructionIDs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyJSONString(id))
	}
	b.WriteString(`], "prompt": `)
	b.WriteString(pyJSONString(p.Prompt))
	b.WriteString(`, "response": `)
	b.WriteString(pyJSONString(p.Response))
	b.WriteString("}")
	return b.String()
}

func pyBool(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

// pyJSONString encodes s as Python's json.dumps does with ensure_ascii:
// short escapes for \" \\ \n \r \t \b \f, \u00XX for other controls and
// lowercase \u escapes of four hex digits (surrogate pairs beyond the BMP) for non-ASCII.
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (r > 0x7f && r < 0x10000):
				writeU(&b, r)
			case r >= 0x10000:
				hi, lo := utf16.EncodeRune(r)
				writeU(&b, hi)
				writeU(&b, lo)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func writeU(b *strings.Builder, r rune) {
	h := strconv.FormatInt(int64(r), 16)
	b.WriteString(`\u`)
	b.WriteString(strings.Repeat("0", 4-len(h)))
	b.WriteString(h)
}
