// Package tokenizer is a byte-level BPE tokenizer compatible with Hugging Face
// tokenizer.json files: it loads and saves them, encodes and decodes exactly as
// the Hugging Face tokenizers library does (checked line by line against the
// library for Qwen3), streams decoding for generation, and trains new
// vocabularies with the Qwen2 pipeline.
//
// Supported files: model BPE (merges as "a b" strings or ["a", "b"] pairs,
// unk_token, fuse_unk, byte_fallback, ignore_merges); normalizer NFC, NFD, NFKC,
// NFKD or a Sequence of them; pre-tokenizer ByteLevel, alone (GPT-2 split) or
// after Isolated Split steps, where the Qwen2, Llama-3 and GPT-2 look-ahead
// patterns run on a hand-written scanner and other patterns must be RE2;
// decoder ByteLevel; added tokens with all their flags. Anything else is an
// error naming the field. Truncation, padding and the post-processor are kept
// for Save but do not affect encoding: no ids are added, as with
// add_special_tokens=False.
//
// Text given to Encode that is not valid UTF-8 is first converted the way
// Rust's String::from_utf8_lossy does (each maximal ill-formed subsequence
// becomes U+FFFD), so Encode(s) equals Hugging Face's encoding of that lossy
// string and Decode(Encode(s)) returns it (after normalization).
package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is immutable apart from
// an internal bounded cache, and safe for concurrent use.
type Tokenizer struct {
	model      bpeModel
	normalizer []norm.Form
	stages     []preStage
	rawAdded   *addedMatcher // added tokens matched on the raw text
	normAdded  *addedMatcher // added tokens matched on the normalized text
	added      []AddedToken
	vocab      map[string]int // byte-level token string -> id (model vocabulary)
	addedIDs   map[string]int // added token content -> id
	tokens     []string       // id -> token string; "" where no token has the id
	tokenBytes [][]byte       // id -> raw bytes (nil where no token has the id)
	special    []int          // sorted ids of added tokens marked special
	merges     [][2]string    // in rank order, for Save
	file       fileSections   // the configuration as read, for Save

	cache *wordCache
	pool  sync.Pool
}

// preStage is one step of the pre-tokenizer pipeline: optionally prefix each
// piece with a space (ByteLevel's add_prefix_space), then split it.
type preStage struct {
	prefixSpace bool
	split       splitter // nil: no split
}

// Load reads a tokenizer from a tokenizer.json file, or from the
// tokenizer.json inside a directory.
func Load(path string) (*Tokenizer, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a tokenizer from the bytes of a tokenizer.json file.
func Parse(data []byte) (*Tokenizer, error) {
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

// VocabSize returns one more than the highest token id, added tokens included.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// NumMerges returns the number of BPE merge rules.
func (t *Tokenizer) NumMerges() int { return len(t.merges) }

// TokenID returns the id of a token given in its tokenizer.json form (added
// token content, or a vocabulary entry in byte-level characters such as "Ġthe").
func (t *Tokenizer) TokenID(s string) (int, bool) {
	if id, ok := t.addedIDs[s]; ok {
		return id, true
	}
	id, ok := t.vocab[s]
	return id, ok
}

// Token returns the tokenizer.json string of id ("" and false if unknown).
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.tokens) || t.tokenBytes[id] == nil {
		return "", false
	}
	return t.tokens[id], true
}

// TokenBytes returns the raw bytes that id decodes to (nil if id is unknown).
// Decode(ids) is the lossy UTF-8 reading of the concatenated TokenBytes, so a
// constrained decoder can reason about tokens as byte strings. The returned
// slice must not be modified.
func (t *Tokenizer) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.tokenBytes) {
		return nil
	}
	return t.tokenBytes[id]
}

// SpecialIDs returns the sorted ids of the added tokens marked special.
func (t *Tokenizer) SpecialIDs() []int { return slices.Clone(t.special) }

// AddedTokens returns the added tokens in file order.
func (t *Tokenizer) AddedTokens() []AddedToken { return slices.Clone(t.added) }

// Encode tokenizes text that may come from a user: added tokens marked special
// (<|im_start|>, <|endoftext|>, …) are encoded as ordinary text, so they cannot
// be injected; other added tokens (Qwen's <tool_call>) are still recognised.
// This is Hugging Face's encoding with split_special_tokens enabled.
func (t *Tokenizer) Encode(text string) []int { return t.encode(text, false) }

// EncodeWithSpecial tokenizes text in which every added token, special or not,
// is recognised: Hugging Face's default encode(text, add_special_tokens=False),
// the form for rendered chat templates.
func (t *Tokenizer) EncodeWithSpecial(text string) []int { return t.encode(text, true) }

// Decode turns ids back into text like Hugging Face's decode(ids,
// skip_special_tokens=False): ids without a token are skipped and incomplete
// UTF-8 becomes U+FFFD.
func (t *Tokenizer) Decode(ids []int) string {
	buf := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		if id >= 0 && id < len(t.tokenBytes) {
			buf = append(buf, t.tokenBytes[id]...)
		}
	}
	return string(appendLossyUTF8(make([]byte, 0, len(buf)), buf))
}

func (t *Tokenizer) encode(text string, withSpecial bool) []int {
	text = validUTF8(text)
	ids := make([]int, 0, len(text)/3+1)
	s := t.getScratch()
	defer t.pool.Put(s)
	t.rawAdded.split(text, withSpecial, func(seg string, id int) {
		if id >= 0 {
			ids = append(ids, id)
			return
		}
		seg = t.normalize(seg)
		if t.normAdded.empty() {
			ids = t.encodeText(ids, seg, s)
			return
		}
		t.normAdded.split(seg, withSpecial, func(seg string, id int) {
			if id >= 0 {
				ids = append(ids, id)
				return
			}
			ids = t.encodeText(ids, seg, s)
		})
	})
	return ids
}

func (t *Tokenizer) getScratch() *bpeScratch {
	if s, ok := t.pool.Get().(*bpeScratch); ok {
		return s
	}
	return &bpeScratch{}
}

func (t *Tokenizer) normalize(s string) string {
	for _, f := range t.normalizer {
		if !f.IsNormalString(s) {
			s = f.String(s)
		}
	}
	return s
}

// encodeText appends the ids of a normalized text segment.
func (t *Tokenizer) encodeText(ids []int, text string, s *bpeScratch) []int {
	t.forEachPiece(text, 0, s, func(piece string) { ids = t.encodeWord(ids, piece, s) })
	return ids
}

// forEachPiece runs the pre-tokenizer stages from stage on and calls fn with
// every resulting piece.
func (t *Tokenizer) forEachPiece(text string, stage int, s *bpeScratch, fn func(string)) {
	if text == "" {
		return
	}
	if stage == len(t.stages) {
		fn(text)
		return
	}
	st := t.stages[stage]
	if st.prefixSpace && text[0] != ' ' {
		text = " " + text
	}
	if st.split == nil {
		t.forEachPiece(text, stage+1, s, fn)
		return
	}
	base := len(s.ends)
	s.ends = st.split.appendEnds(s.ends, text)
	start := 0
	for k := base; k < len(s.ends); k++ {
		end := s.ends[k]
		t.forEachPiece(text[start:end], stage+1, s, fn)
		start = end
	}
	s.ends = s.ends[:base]
}

// encodeWord appends the ids of one pre-tokenized piece.
func (t *Tokenizer) encodeWord(ids []int, word string, s *bpeScratch) []int {
	if len(word) == 1 && t.model.allDirect {
		return append(ids, int(t.model.byteDirect[word[0]]))
	}
	if t.file.model.IgnoreMerges {
		if id, ok := t.vocab[byteLevelString(word)]; ok {
			return append(ids, id)
		}
	}
	cacheable := t.cache != nil && len(word) <= maxCachedWord
	if cacheable {
		if v, ok := t.cache.get(word); ok {
			for _, id := range v {
				ids = append(ids, int(id))
			}
			return ids
		}
	}
	out := t.model.mergeWord(s, word)
	for _, id := range out {
		ids = append(ids, int(id))
	}
	if cacheable {
		t.cache.put(word, slices.Clone(out))
	}
	return ids
}
