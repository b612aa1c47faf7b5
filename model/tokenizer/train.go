package tokenizer

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// TrainConfig configures Train.
type TrainConfig struct {
	// VocabSize is the size of the model vocabulary to reach: special tokens,
	// the 256 byte symbols and the learned merges together.
	VocabSize int
	// MinFrequency stops training when the most frequent pair occurs fewer
	// times than this (values below 1 mean 1).
	MinFrequency int
	// SpecialTokens become added tokens marked special with ids 0, 1, …; they
	// are split out of the corpus and never merged with text.
	SpecialTokens []string
	// MaxTokenLength, when positive, forbids merges whose token would be longer
	// than this many bytes.
	MaxTokenLength int
}

// Sections of tokenizer.json written for trained tokenizers: Qwen2's NFC +
// Split + ByteLevel pipeline.
const (
	trainedNormalizer = `{"type":"NFC"}`
	trainedByteLevel  = `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}`
)

func trainedPreTokenizer() json.RawMessage {
	pattern, _ := json.Marshal(qwen2Pattern)
	return json.RawMessage(`{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` +
		string(pattern) + `},"behavior":"Isolated","invert":false},` + trainedByteLevel + `]}`)
}

// Train learns a byte-level BPE vocabulary from corpus with the Qwen2
// pre-tokenizer (NFC, the Qwen2 Split pattern, ByteLevel) and returns a
// tokenizer that Save writes as a tokenizer.json Hugging Face can read.
// Training is deterministic: equal pair counts are broken by the smaller
// (left id, right id) pair, as in Hugging Face's trainer.
func Train(ctx context.Context, corpus iter.Seq[string], cfg TrainConfig) (*Tokenizer, error) {
	base := 256 + len(cfg.SpecialTokens)
	if cfg.VocabSize < base {
		return nil, fmt.Errorf("tokenizer: train: vocab size %d is below the %d special and byte tokens", cfg.VocabSize, base)
	}
	minFreq := int64(max(cfg.MinFrequency, 1))

	// Token strings: special tokens, then the byte alphabet by code point.
	vocab := make(map[string]int, cfg.VocabSize)
	var tokens []string
	var added []AddedToken
	for _, s := range cfg.SpecialTokens {
		if s == "" || !utf8.ValidString(s) {
			return nil, fmt.Errorf("tokenizer: train: special token %q is empty or not UTF-8", s)
		}
		if _, dup := vocab[s]; dup {
			return nil, fmt.Errorf("tokenizer: train: special token %q is listed twice", s)
		}
		vocab[s] = len(tokens)
		added = append(added, AddedToken{ID: len(tokens), Content: s, Special: true})
		tokens = append(tokens, s)
	}
	alphabet := make([]rune, 256)
	copy(alphabet, byteTable.toRune[:])
	slices.Sort(alphabet)
	var byteID [256]int32
	for _, r := range alphabet {
		s := string(r)
		b, _ := byteTable.byteOf(r)
		if id, ok := vocab[s]; ok { // a special token spelled as a byte character
			byteID[b] = int32(id)
			continue
		}
		byteID[b] = int32(len(tokens))
		vocab[s] = len(tokens)
		tokens = append(tokens, s)
	}

	sections := fileSections{
		truncation: json.RawMessage("null"), padding: json.RawMessage("null"),
		normalizer: json.RawMessage(trainedNormalizer), preTokenizer: trainedPreTokenizer(),
		postProcessor: json.RawMessage(trainedByteLevel), decoder: json.RawMessage(trainedByteLevel),
		model: modelOptions{ContinuingSubwordPrefix: new(string), EndOfWordSuffix: new(string)},
	}
	// A tokenizer without merges does the counting: it splits out the special
	// tokens, normalizes and pre-tokenizes exactly as encoding will.
	counter, err := build(vocab, nil, added, sections)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err)
	}
	wordCounts, err := counter.countWords(ctx, corpus)
	if err != nil {
		return nil, err
	}
	tr := newPairTrainer(wordCounts, byteID)
	merges, err := tr.run(ctx, cfg, minFreq, &tokens, vocab)
	if err != nil {
		return nil, err
	}
	final, err := build(vocab, merges, added, sections)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err)
	}
	return final, nil
}

// countWords returns how often each pre-tokenized piece occurs in corpus.
func (t *Tokenizer) countWords(ctx context.Context, corpus iter.Seq[string]) (map[string]int64, error) {
	counts := map[string]int64{}
	s := &bpeScratch{}
	n := 0
	for text := range corpus {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("tokenizer: train: %w", err)
			}
		}
		t.rawAdded.split(validUTF8(text), true, func(seg string, id int) {
			if id >= 0 {
				return
			}
			t.forEachPiece(t.normalize(seg), 0, s, func(piece string) {
				if _, ok := counts[piece]; ok {
					counts[piece]++
					return
				}
				counts[strings.Clone(piece)] = 1 // do not keep the whole text alive
			})
		})
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err)
	}
	return counts, nil
}

// pairTrainer keeps the words of the corpus as symbol sequences together with
// the count of every adjacent pair and the words it occurs in, and updates
// them incrementally after each merge.
type pairTrainer struct {
	words  [][]int32
	counts []int64
	pairs  map[uint64]int64
	where  map[uint64][]int32
	queue  pairQueue
	seen   []int // merge number that last visited each word
}

func newPairTrainer(wordCounts map[string]int64, byteID [256]int32) *pairTrainer {
	keys := make([]string, 0, len(wordCounts))
	for w := range wordCounts {
		keys = append(keys, w)
	}
	slices.Sort(keys) // fixed word order keeps every run identical
	tr := &pairTrainer{pairs: map[uint64]int64{}, where: map[uint64][]int32{}, seen: make([]int, len(keys))}
	for i, w := range keys {
		syms := make([]int32, len(w))
		for j := 0; j < len(w); j++ {
			syms[j] = byteID[w[j]]
		}
		tr.words = append(tr.words, syms)
		tr.counts = append(tr.counts, wordCounts[w])
		for j := 0; j+1 < len(syms); j++ {
			k := pairKey(syms[j], syms[j+1])
			tr.pairs[k] += wordCounts[w]
			tr.where[k] = append(tr.where[k], int32(i))
		}
		tr.seen[i] = -1
	}
	for k, c := range tr.pairs {
		tr.queue = append(tr.queue, pairCount{pair: k, count: c})
	}
	heap.Init(&tr.queue)
	return tr
}

func (tr *pairTrainer) run(ctx context.Context, cfg TrainConfig, minFreq int64, tokens *[]string, vocab map[string]int) ([][2]string, error) {
	var merges [][2]string
	touched := map[uint64]bool{}
	for len(vocab) < cfg.VocabSize && tr.queue.Len() > 0 {
		if len(merges)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("tokenizer: train: %w", err)
			}
		}
		top := heap.Pop(&tr.queue).(pairCount)
		if cur := tr.pairs[top.pair]; cur != top.count {
			if cur > 0 {
				heap.Push(&tr.queue, pairCount{pair: top.pair, count: cur})
			}
			continue
		}
		if top.count < minFreq {
			break
		}
		a, b := int32(top.pair>>32), int32(uint32(top.pair))
		merged := (*tokens)[a] + (*tokens)[b]
		if cfg.MaxTokenLength > 0 && len(byteTable.decode(nil, merged)) > cfg.MaxTokenLength {
			delete(tr.pairs, top.pair)
			continue
		}
		id, ok := vocab[merged]
		if !ok {
			id = len(*tokens)
			vocab[merged] = id
			*tokens = append(*tokens, merged)
		}
		merges = append(merges, [2]string{(*tokens)[a], (*tokens)[b]})
		tr.merge(top.pair, a, b, int32(id), len(merges), touched)
		for k := range touched {
			if c := tr.pairs[k]; c > 0 {
				heap.Push(&tr.queue, pairCount{pair: k, count: c})
			}
			delete(touched, k)
		}
	}
	return merges, nil
}

// merge replaces every occurrence of (a, b) by id and updates the pair counts.
func (tr *pairTrainer) merge(pair uint64, a, b, id int32, stamp int, touched map[uint64]bool) {
	change := func(k uint64, delta int64, w int32) {
		tr.pairs[k] += delta
		if delta > 0 {
			tr.where[k] = append(tr.where[k], w)
			touched[k] = true
		}
	}
	for _, w := range tr.where[pair] {
		if tr.seen[w] == stamp {
			continue
		}
		tr.seen[w] = stamp
		syms, c := tr.words[w], tr.counts[w]
		out := syms[:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
				if len(out) > 0 {
					p := out[len(out)-1]
					change(pairKey(p, a), -c, w)
					change(pairKey(p, id), c, w)
				}
				if i+2 < len(syms) {
					n := syms[i+2]
					change(pairKey(b, n), -c, w)
					change(pairKey(id, n), c, w)
				}
				out = append(out, id)
				i++
				continue
			}
			out = append(out, syms[i])
		}
		tr.words[w] = out
	}
	delete(tr.pairs, pair)
	delete(tr.where, pair)
}

type pairCount struct {
	pair  uint64
	count int64
}

// pairQueue is a max-heap by count; equal counts pop the smaller pair first.
type pairQueue []pairCount

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].count != q[j].count {
		return q[i].count > q[j].count
	}
	return q[i].pair < q[j].pair
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pairCount)) }
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// readCorpusLine returns the text of one corpus line: the "text" field when the
// corpus is JSONL, the line itself otherwise.
func readCorpusLine(line string, jsonl bool) (string, error) {
	if !jsonl {
		return line, nil
	}
	var rec struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return "", err
	}
	if rec.Text == nil {
		return "", errors.New(`no "text" field`)
	}
	return *rec.Text, nil
}

// looksLikeJSONL reports whether a corpus line is a JSON object with "text".
func looksLikeJSONL(line string) bool {
	if !strings.HasPrefix(strings.TrimSpace(line), "{") {
		return false
	}
	_, err := readCorpusLine(line, true)
	return err == nil
}
