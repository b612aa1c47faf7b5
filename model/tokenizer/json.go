package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fileSections is what Save writes back besides the vocabulary: the sections
// of tokenizer.json kept as read (compacted) and the BPE model's options.
type fileSections struct {
	truncation, padding, normalizer, preTokenizer, postProcessor, decoder json.RawMessage
	model                                                                 modelOptions
}

type modelOptions struct {
	Dropout                 json.RawMessage `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
}

type fileJSON struct {
	Version       *string          `json:"version"`
	Truncation    json.RawMessage  `json:"truncation"`
	Padding       json.RawMessage  `json:"padding"`
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         *modelJSON       `json:"model"`
}

type addedTokenJSON struct {
	ID         *int    `json:"id"`
	Content    *string `json:"content"`
	SingleWord bool    `json:"single_word"`
	LStrip     bool    `json:"lstrip"`
	RStrip     bool    `json:"rstrip"`
	Normalized bool    `json:"normalized"`
	Special    bool    `json:"special"`
}

type modelJSON struct {
	Type *string `json:"type"`
	modelOptions
	Vocab  map[string]int `json:"vocab"`
	Merges *mergeList     `json:"merges"`
}

// mergeList decodes both layouts of model.merges: ["a b", …] (older files)
// and [["a", "b"], …].
type mergeList [][2]string

func (ml *mergeList) UnmarshalJSON(data []byte) error {
	body := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimSpace(data), []byte("[")), " \t\r\n")
	if len(body) > 0 && body[0] == '"' {
		var lines []string
		if err := json.Unmarshal(data, &lines); err != nil {
			return err
		}
		out := make(mergeList, 0, len(lines))
		for i, s := range lines {
			parts := strings.Split(s, " ")
			if len(parts) != 2 {
				return fmt.Errorf("model.merges[%d]: %q is not two tokens separated by one space", i, s)
			}
			out = append(out, [2]string{parts[0], parts[1]})
		}
		*ml = out
		return nil
	}
	var pairs [][]string
	if err := json.Unmarshal(data, &pairs); err != nil {
		return fmt.Errorf("model.merges: want [\"a b\", …] or [[\"a\", \"b\"], …]: %w", err)
	}
	out := make(mergeList, 0, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return fmt.Errorf("model.merges[%d]: a pair needs 2 tokens, got %d", i, len(p))
		}
		out = append(out, [2]string{p[0], p[1]})
	}
	*ml = out
	return nil
}

type sectionType struct {
	Type string `json:"type"`
}

// maxIDSlack bounds how sparse the id space may be: ids must stay below
// 2*(number of tokens)+maxIDSlack, so a corrupt id cannot force a huge allocation.
const maxIDSlack = 1 << 16

func parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if f.Version == nil || *f.Version != "1.0" {
		v := "missing"
		if f.Version != nil {
			v = strconv.Quote(*f.Version)
		}
		return nil, fmt.Errorf("version is %s, want \"1.0\"", v)
	}
	if f.Model == nil {
		return nil, errors.New("model: missing")
	}
	m := f.Model
	if m.Merges == nil {
		return nil, errors.New("model.merges: missing")
	}
	added, err := addedFromJSON(f.AddedTokens)
	if err != nil {
		return nil, err
	}
	sections := fileSections{
		truncation: compact(f.Truncation), padding: compact(f.Padding),
		normalizer: compact(f.Normalizer), preTokenizer: compact(f.PreTokenizer),
		postProcessor: compact(f.PostProcessor), decoder: compact(f.Decoder),
		model: m.modelOptions,
	}
	if m.Type != nil && *m.Type != "BPE" {
		return nil, fmt.Errorf("model.type %q is not supported (only BPE)", *m.Type)
	}
	if m.Vocab == nil {
		return nil, errors.New("model.vocab: missing")
	}
	return build(m.Vocab, *m.Merges, added, sections)
}

func addedFromJSON(list []addedTokenJSON) ([]AddedToken, error) {
	added := make([]AddedToken, 0, len(list))
	for i, a := range list {
		if a.ID == nil || a.Content == nil {
			return nil, fmt.Errorf("added_tokens[%d]: missing id or content", i)
		}
		added = append(added, AddedToken{ID: *a.ID, Content: *a.Content, SingleWord: a.SingleWord,
			LStrip: a.LStrip, RStrip: a.RStrip, Normalized: a.Normalized, Special: a.Special})
	}
	return added, nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func compact(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return json.RawMessage("null")
	}
	return b.Bytes()
}

// build validates the parts of a tokenizer and assembles it.
func build(vocab map[string]int, merges [][2]string, added []AddedToken, fs fileSections) (*Tokenizer, error) {
	t := &Tokenizer{vocab: vocab, merges: merges, added: added, file: fs, cache: newWordCache(),
		addedIDs: make(map[string]int, len(added))}
	if err := t.configure(); err != nil {
		return nil, err
	}
	limit := 2*(len(vocab)+len(added)) + maxIDSlack
	maxID := -1
	for tok, id := range vocab {
		if id < 0 || id >= limit {
			return nil, fmt.Errorf("model.vocab: token %q has id %d, outside [0, %d)", tok, id, limit)
		}
		maxID = max(maxID, id)
	}
	for i, a := range added {
		if a.ID < 0 || a.ID >= limit {
			return nil, fmt.Errorf("added_tokens[%d]: id %d is outside [0, %d)", i, a.ID, limit)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("added_tokens[%d]: empty content", i)
		}
		maxID = max(maxID, a.ID)
	}
	t.tokens = make([]string, maxID+1)
	t.tokenBytes = make([][]byte, maxID+1)
	// All token bytes share one array; decoding never grows a token, so the
	// capacity computed here is never exceeded.
	size := 0
	for tok := range vocab {
		size += len(tok)
	}
	for _, a := range added {
		size += len(a.Content)
	}
	data := make([]byte, 0, size)
	tokenBytes := func(tok string) []byte {
		start := len(data)
		data = byteTable.decode(data, tok)
		return data[start:len(data):len(data)]
	}
	owner := make([]bool, maxID+1)
	for tok, id := range vocab {
		if owner[id] {
			return nil, fmt.Errorf("model.vocab: id %d is used by both %q and %q", id, t.tokens[id], tok)
		}
		owner[id] = true
		t.tokens[id] = tok
		t.tokenBytes[id] = tokenBytes(tok)
	}
	maxAdded := -1
	for i, a := range added {
		// Hugging Face ignores the ids in the file and assigns them again: a
		// content already in the vocabulary keeps its id, a new one gets the
		// next id after the vocabulary and the earlier added tokens. A file
		// that disagrees would tokenize differently there, so it is refused.
		want, inVocab := vocab[a.Content]
		if !inVocab {
			want = len(vocab)
			if maxAdded >= len(vocab) || len(vocab) == 0 {
				want = maxAdded + 1
			}
		}
		if a.ID != want {
			how := "the next free id"
			if inVocab {
				how = "its id in model.vocab"
			}
			return nil, fmt.Errorf("added_tokens[%d]: %q has id %d, but Hugging Face assigns it %d (%s)", i, a.Content, a.ID, want, how)
		}
		maxAdded = max(maxAdded, a.ID)
		if prev, dup := t.addedIDs[a.Content]; dup {
			return nil, fmt.Errorf("added_tokens[%d]: %q is already added with id %d", i, a.Content, prev)
		}
		if t.tokenBytes[a.ID] != nil && t.tokens[a.ID] != a.Content {
			return nil, fmt.Errorf("added_tokens[%d]: id %d is already the token %q", i, a.ID, t.tokens[a.ID])
		}
		t.addedIDs[a.Content] = a.ID
		t.tokens[a.ID] = a.Content
		t.tokenBytes[a.ID] = tokenBytes(a.Content)
		if a.Special {
			t.special = append(t.special, a.ID)
		}
	}
	slices.Sort(t.special)
	if err := t.buildModel(); err != nil {
		return nil, err
	}
	t.rawAdded = newAddedMatcher(added, func(a AddedToken) string {
		if a.Normalized {
			return ""
		}
		return a.Content
	})
	t.normAdded = newAddedMatcher(added, func(a AddedToken) string {
		if !a.Normalized {
			return ""
		}
		return t.normalize(a.Content)
	})
	return t, nil
}

// configure reads the normalizer, pre-tokenizer and decoder sections.
func (t *Tokenizer) configure() error {
	fs := &t.file
	var err error
	if t.normalizer, err = parseNormalizer(fs.normalizer, "normalizer"); err != nil {
		return err
	}
	if t.stages, err = parsePreTokenizer(fs.preTokenizer); err != nil {
		return err
	}
	var dec sectionType
	if isNull(fs.decoder) {
		return errors.New("decoder: missing (only ByteLevel is supported)")
	}
	if err := json.Unmarshal(fs.decoder, &dec); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	if dec.Type != "ByteLevel" {
		return fmt.Errorf("decoder: type %q is not supported (only ByteLevel)", dec.Type)
	}
	mo := fs.model
	if !isNull(mo.Dropout) {
		var d float64
		if err := json.Unmarshal(mo.Dropout, &d); err != nil || d != 0 {
			return fmt.Errorf("model.dropout: %s is not supported (only null or 0)", mo.Dropout)
		}
	}
	if mo.ContinuingSubwordPrefix != nil && *mo.ContinuingSubwordPrefix != "" {
		return fmt.Errorf("model.continuing_subword_prefix %q is not supported", *mo.ContinuingSubwordPrefix)
	}
	if mo.EndOfWordSuffix != nil && *mo.EndOfWordSuffix != "" {
		return fmt.Errorf("model.end_of_word_suffix %q is not supported", *mo.EndOfWordSuffix)
	}
	return nil
}

func parseNormalizer(raw json.RawMessage, where string) ([]norm.Form, error) {
	if isNull(raw) {
		return nil, nil
	}
	var n struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	switch n.Type {
	case "NFC":
		return []norm.Form{norm.NFC}, nil
	case "NFD":
		return []norm.Form{norm.NFD}, nil
	case "NFKC":
		return []norm.Form{norm.NFKC}, nil
	case "NFKD":
		return []norm.Form{norm.NFKD}, nil
	case "Sequence":
		var forms []norm.Form
		for i, sub := range n.Normalizers {
			f, err := parseNormalizer(sub, fmt.Sprintf("%s.normalizers[%d]", where, i))
			if err != nil {
				return nil, err
			}
			forms = append(forms, f...)
		}
		return forms, nil
	}
	return nil, fmt.Errorf("%s: type %q is not supported (NFC, NFD, NFKC, NFKD, Sequence)", where, n.Type)
}

type preTokenizerJSON struct {
	Type          string            `json:"type"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
	UseRegex       *bool  `json:"use_regex"`
}

// parsePreTokenizer accepts a ByteLevel pre-tokenizer, alone or at the end of a
// Sequence of Isolated Split steps.
func parsePreTokenizer(raw json.RawMessage) ([]preStage, error) {
	if isNull(raw) {
		return nil, errors.New("pre_tokenizer: missing (a ByteLevel pre-tokenizer is required)")
	}
	var top preTokenizerJSON
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	steps := []json.RawMessage{raw}
	prefix := "pre_tokenizer"
	if top.Type == "Sequence" {
		steps, prefix = top.PreTokenizers, "pre_tokenizer.pretokenizers"
	}
	var stages []preStage
	for i, step := range steps {
		where := prefix
		if top.Type == "Sequence" {
			where = fmt.Sprintf("%s[%d]", prefix, i)
		}
		var p preTokenizerJSON
		if err := json.Unmarshal(step, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		last := i == len(steps)-1
		switch p.Type {
		case "Split":
			if last {
				return nil, fmt.Errorf("%s: Split must be followed by ByteLevel", where)
			}
			if p.Behavior != "Isolated" || p.Invert {
				return nil, fmt.Errorf("%s: Split behavior %q invert %v is not supported (only Isolated, not inverted)", where, p.Behavior, p.Invert)
			}
			var pattern string
			switch {
			case p.Pattern.Regex != nil:
				pattern = *p.Pattern.Regex
			case p.Pattern.String != nil:
				pattern = regexp.QuoteMeta(*p.Pattern.String)
			default:
				return nil, fmt.Errorf("%s: Split has no Regex or String pattern", where)
			}
			sp, err := newPatternSplitter(pattern)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			stages = append(stages, preStage{split: sp})
		case "ByteLevel":
			if !last {
				return nil, fmt.Errorf("%s: ByteLevel must be the last pre-tokenizer", where)
			}
			if p.AddPrefixSpace == nil {
				return nil, fmt.Errorf("%s: ByteLevel lacks add_prefix_space", where)
			}
			st := preStage{prefixSpace: *p.AddPrefixSpace}
			if p.UseRegex == nil || *p.UseRegex {
				st.split = patternScanner{kind: scanGPT2}
			}
			stages = append(stages, st)
		default:
			return nil, fmt.Errorf("%s: type %q is not supported (Split, ByteLevel, Sequence)", where, p.Type)
		}
	}
	if len(stages) == 0 {
		return nil, errors.New("pre_tokenizer: empty Sequence (a ByteLevel pre-tokenizer is required)")
	}
	return stages, nil
}

// buildModel resolves the merges and the initial symbol of every byte.
func (t *Tokenizer) buildModel() error {
	m := &t.model
	mo := t.file.model
	m.unkID = -1
	if mo.UnkToken != nil {
		id, ok := t.vocab[*mo.UnkToken]
		if !ok {
			return fmt.Errorf("model.unk_token %q is not in model.vocab", *mo.UnkToken)
		}
		m.unkID = int32(id)
	}
	m.fuseUnk = mo.FuseUnk
	m.allDirect = true
	for b := 0; b < 256; b++ {
		ch := string(byteTable.toRune[b])
		m.byteDirect[b] = -1
		if id, ok := t.vocab[ch]; ok {
			m.byteDirect[b] = int32(id)
			continue
		}
		m.allDirect = false
		if mo.ByteFallback {
			var fb []int32
			for _, c := range []byte(ch) {
				id, ok := t.vocab[fmt.Sprintf("<0x%02X>", c)]
				if !ok {
					fb = nil
					break
				}
				fb = append(fb, int32(id))
			}
			m.fallback[b] = fb
		}
	}
	m.merges = newMergeTable(len(t.merges))
	m.bytePairs = make([]uint64, 256*256)
	for i := range m.bytePairs {
		m.bytePairs[i] = noMerge
	}
	for rank, mg := range t.merges {
		a, okA := t.vocab[mg[0]]
		b, okB := t.vocab[mg[1]]
		ab, okAB := t.vocab[mg[0]+mg[1]]
		switch {
		case !okA:
			return fmt.Errorf("model.merges[%d]: %q is not in model.vocab", rank, mg[0])
		case !okB:
			return fmt.Errorf("model.merges[%d]: %q is not in model.vocab", rank, mg[1])
		case !okAB:
			return fmt.Errorf("model.merges[%d]: the merged token %q is not in model.vocab", rank, mg[0]+mg[1])
		}
		v := uint64(rank)<<32 | uint64(uint32(ab))
		m.merges.set(pairKey(int32(a), int32(b)), v)
		if a < 256 && b < 256 {
			m.bytePairs[a<<8|b] = v
		}
	}
	return nil
}

// MarshalJSON writes the tokenizer in Hugging Face's tokenizer.json layout
// (vocabulary ordered by id, merges as pairs), pretty-printed like the library:
// saving a file the library wrote reproduces it byte for byte.
func (t *Tokenizer) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"version":"1.0","truncation":`)
	b.Write(t.file.truncation)
	b.WriteString(`,"padding":`)
	b.Write(t.file.padding)
	b.WriteString(`,"added_tokens":[`)
	for i, a := range t.added {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"content":`, a.ID)
		appendJSONString(&b, a.Content)
		fmt.Fprintf(&b, `,"single_word":%t,"lstrip":%t,"rstrip":%t,"normalized":%t,"special":%t}`,
			a.SingleWord, a.LStrip, a.RStrip, a.Normalized, a.Special)
	}
	b.WriteString(`],"normalizer":`)
	b.Write(t.file.normalizer)
	b.WriteString(`,"pre_tokenizer":`)
	b.Write(t.file.preTokenizer)
	b.WriteString(`,"post_processor":`)
	b.Write(t.file.postProcessor)
	b.WriteString(`,"decoder":`)
	b.Write(t.file.decoder)
	opts, err := json.Marshal(t.file.model)
	if err != nil {
		return nil, err
	}
	b.WriteString(`,"model":{"type":"BPE",`)
	b.Write(opts[1 : len(opts)-1])
	b.WriteString(`,"vocab":{`)
	ids := make([]int, 0, len(t.vocab))
	for _, id := range t.vocab {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		appendJSONString(&b, t.tokens[id])
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(id))
	}
	b.WriteString(`},"merges":[`)
	for i, mg := range t.merges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		appendJSONString(&b, mg[0])
		b.WriteByte(',')
		appendJSONString(&b, mg[1])
		b.WriteByte(']')
	}
	b.WriteString(`]}}`)
	var out bytes.Buffer
	out.Grow(b.Len() * 2)
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("tokenizer: marshal: %w", err)
	}
	return out.Bytes(), nil
}

// Save writes the tokenizer as tokenizer.json to path, or into path when it is
// an existing directory.
func (t *Tokenizer) Save(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = path + string(os.PathSeparator) + "tokenizer.json"
	}
	data, err := t.MarshalJSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	return nil
}

// appendJSONString writes s as a JSON string with serde_json's escapes (only
// quotes, backslashes and control characters), so a saved Hugging Face file
// comes out byte for byte as the library writes it.
func appendJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+w])
			}
			i += w
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
}
