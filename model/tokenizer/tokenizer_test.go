package tokenizer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// smallCorpus is a zh+en corpus that needs no shared data.
var smallCorpus = []string{
	"这个口红多少钱？适合敏感肌吗",
	"What size should I buy if I'm 170cm and 60kg?",
	"主播好美！今天有什么优惠吗？",
	"Does it ship to Shanghai? 包邮吗",
	"我身高170体重60斤穿什么码",
	"Is this 100% cotton? 这个是纯棉的吗",
	"买二送一是真的吗，有没有赠品",
	"<|im_start|>user\nhow much is the red lipstick?<|im_end|>",
	"保质期多久？能退换吗？七天无理由吗。",
	"You're the best host ever, I've been waiting for 10 minutes!!!",
	"{\"name\": \"lookup\", \"arguments\": {\"id\": 7}}",
	"   indented code\n\tand tabs\r\n",
	"👍🏽 太好看了 😀 안녕하세요 こんにちは",
}

func trainSmall(t testing.TB, vocabSize int) *Tokenizer {
	t.Helper()
	var corpus []string
	for i := range 20 {
		for _, s := range smallCorpus {
			corpus = append(corpus, strings.Repeat(s+" ", 1+i%3))
		}
	}
	tok, err := Train(context.Background(), slices.Values(corpus), TrainConfig{
		VocabSize: vocabSize, MinFrequency: 2,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSpecialTokens(t *testing.T) {
	tok := loadQwen3(t)
	text := "<|im_start|>user\nhi<|im_end|>"
	if got, want := tok.EncodeWithSpecial(text), []int{151644, 872, 198, 6023, 151645}; !slices.Equal(got, want) {
		t.Fatalf("EncodeWithSpecial(%q) = %v, want %v", text, got, want)
	}
	plain := tok.Encode(text)
	for _, id := range plain {
		if slices.Contains(tok.SpecialIDs(), id) {
			t.Fatalf("Encode(%q) = %v contains special id %d", text, plain, id)
		}
	}
	if got := tok.Decode(plain); got != text {
		t.Fatalf("Decode(Encode(%q)) = %q", text, got)
	}
	// <tool_call> is an added token that is not special: both forms match it.
	call := `<tool_call>{"name": "lookup"}</tool_call>`
	for _, ids := range [][]int{tok.Encode(call), tok.EncodeWithSpecial(call)} {
		if ids[0] != 151657 || ids[len(ids)-1] != 151658 {
			t.Fatalf("%q encoded as %v, want <tool_call>=151657 … </tool_call>=151658", call, ids)
		}
	}
	if id, ok := tok.TokenID("<|im_end|>"); !ok || id != 151645 {
		t.Fatalf("TokenID(<|im_end|>) = %d, %v", id, ok)
	}
	if id, ok := tok.TokenID("Ġthe"); !ok || string(tok.TokenBytes(id)) != " the" {
		t.Fatalf("TokenID(Ġthe) = %d, %v; bytes %q", id, ok, tok.TokenBytes(id))
	}
	if got := string(tok.TokenBytes(151644)); got != "<|im_start|>" {
		t.Fatalf("TokenBytes(151644) = %q", got)
	}
	if tok.VocabSize() != 151669 {
		t.Fatalf("VocabSize = %d, want 151669", tok.VocabSize())
	}
	if sp := tok.SpecialIDs(); len(sp) != 14 || sp[0] != 151643 {
		t.Fatalf("SpecialIDs = %v, want the 14 special added tokens from 151643", sp)
	}
}

func TestEmptyAndUnknown(t *testing.T) {
	tok := trainSmall(t, 400)
	if ids := tok.Encode(""); len(ids) != 0 {
		t.Fatalf("Encode(\"\") = %v", ids)
	}
	if s := tok.Decode(nil); s != "" {
		t.Fatalf("Decode(nil) = %q", s)
	}
	// Ids without a token are skipped, as Hugging Face's decode does.
	a := tok.Encode("abc")
	if got := tok.Decode(append([]int{-1, tok.VocabSize(), 1 << 40}, a...)); got != "abc" {
		t.Fatalf("Decode with unknown ids = %q, want abc", got)
	}
	if tok.TokenBytes(-5) != nil || tok.TokenBytes(tok.VocabSize()) != nil {
		t.Fatal("TokenBytes of an unknown id is not nil")
	}
}

// TestInvalidUTF8 documents the behaviour on ill-formed input: it is read the
// way Rust's String::from_utf8_lossy reads it, one U+FFFD per maximal
// ill-formed subsequence.
func TestInvalidUTF8(t *testing.T) {
	tok := trainSmall(t, 400)
	cases := []struct{ in, lossy string }{
		{"a\xffb", "a\uFFFDb"},
		{"\xe4\xb8", "\uFFFD"},                 // truncated 3-byte sequence: one replacement
		{"\xe4\xb8a\xe4", "\uFFFDa\uFFFD"},     // …and at the end
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // a surrogate: each byte
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
	}
	for _, c := range cases {
		if got := validUTF8(c.in); got != c.lossy {
			t.Errorf("validUTF8(%q) = %q, want %q", c.in, got, c.lossy)
		}
		if got, want := tok.Encode(c.in), tok.Encode(c.lossy); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want Encode(%q) = %v", c.in, got, c.lossy, want)
		}
		if got := tok.Decode(tok.Encode(c.in)); got != c.lossy {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", c.in, got, c.lossy)
		}
	}
	// Decoding part of a character gives U+FFFD; TokenBytes keeps the bytes.
	const unicorn = "\U0001F984" // not in the small corpus: several tokens
	ids := tok.Encode(unicorn)
	if len(ids) < 2 {
		t.Fatalf("Encode(%q) = %v, want several byte tokens", unicorn, ids)
	}
	if got := tok.Decode(ids[:len(ids)-1]); got != "\uFFFD" {
		t.Fatalf("Decode(all but the last token of %q) = %q", unicorn, got)
	}
	var raw []byte
	for _, id := range ids {
		raw = append(raw, tok.TokenBytes(id)...)
	}
	if string(raw) != unicorn {
		t.Fatalf("TokenBytes concatenate to %q", raw)
	}
}

// TestLongInputs encodes inputs whose pieces are hundreds of kilobytes (the
// heap merge path). The expected id counts and SHA-256 of the comma-joined ids
// were produced by the Hugging Face library on the same strings.
func TestLongInputs(t *testing.T) {
	tok := loadQwen3(t)
	han := []rune("这个口红多少钱适合敏感肌吗我身高体重斤穿什么码保质期多久")
	var hanText, letters strings.Builder
	for i := range 70000 {
		hanText.WriteRune(han[(i*i+7*i)%len(han)])
	}
	for i := range 200000 {
		letters.WriteByte("abcdefghij"[(i*i*31+i*7)%10])
	}
	cases := []struct {
		text string
		n    int
		sum  string
	}{
		{hanText.String(), 70000, "e15711f51fbc0f6e291c8f2de2411b2929772831a44b35c22b5da63283fd23a4"},
		{strings.Repeat(" ", 100000) + "x" + strings.Repeat("\n", 5000), 940, "3477a96871d5fddee5f521410f062b068e284d8cb842aa4423f75f8ad04ed3a6"},
		{letters.String(), 80000, "ee1aadc83119ca871d549313cf4b4f6833d6de8165e6a37b3e213dbe2a62c1e3"},
	}
	for i, c := range cases {
		ids := tok.EncodeWithSpecial(c.text)
		strs := make([]string, len(ids))
		for k, id := range ids {
			strs[k] = strconv.Itoa(id)
		}
		sum := sha256.Sum256([]byte(strings.Join(strs, ",")))
		if len(ids) != c.n || hex.EncodeToString(sum[:]) != c.sum {
			t.Errorf("long input %d: %d ids (sha256 %x), want %d (%s)", i, len(ids), sum, c.n, c.sum)
		}
		if tok.Decode(ids) != c.text {
			t.Errorf("long input %d does not round-trip", i)
		}
	}
	mixed := strings.Repeat("Hello, 世界! 这个口红多少钱？ I'm here.\n", 20000)
	if tok.Decode(tok.EncodeWithSpecial(mixed)) != mixed {
		t.Error("1 MB mixed text does not round-trip")
	}
}

// TestMergePathsAgree checks the heap merge (long words) against the array
// merge (short words) on the same symbols.
func TestMergePathsAgree(t *testing.T) {
	trained, err := Load("testdata/trained")
	if err != nil {
		t.Fatal(err)
	}
	toks := []*Tokenizer{trained}
	if _, ok := qwen3Dir(); ok {
		toks = append(toks, loadQwen3(t))
	}
	words := []string{"hello", " the", "这个口红多少钱", "ĠĠĠĠĠĠĠ", strings.Repeat(" ", 300),
		strings.Repeat("ab", 200), strings.Repeat("多少钱", 100), "internationalization"}
	s := &bpeScratch{}
	for _, text := range smallCorpus {
		trained.forEachPiece(text, 0, s, func(piece string) { words = append(words, piece) })
	}
	for _, tok := range toks {
		for _, w := range words {
			s1, s2 := &bpeScratch{}, &bpeScratch{}
			ids := tok.model.initialSymbols(s1, w)
			if len(ids) < 2 {
				continue
			}
			orig := slices.Clone(ids)
			a := slices.Clone(tok.model.mergeArray(s1, ids))
			b := tok.model.mergeHeap(s2, orig)
			if !slices.Equal(a, b) {
				t.Fatalf("word %q: array merge %v, heap merge %v", w, a, b)
			}
		}
	}
}

// TestConcurrentEncode runs the trained fixture's Hugging Face references
// from 8 goroutines at once (run with -race); it needs no shared data.
func TestConcurrentEncode(t *testing.T) {
	tok, err := Load("testdata/trained")
	if err != nil {
		t.Fatal(err)
	}
	var lines []referenceLine
	readJSONL(t, "testdata/trained-reference.jsonl", func(line []byte) {
		var r referenceLine
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, r)
	})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for k := range len(lines) {
				r := lines[(k+g*50)%len(lines)]
				if got := tok.EncodeWithSpecial(r.Text); !slices.Equal(got, r.IDs) {
					errs <- r.Text
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent encode of %q differs", e)
	}
}

// TestSaveQwen3 writes the real file back: the bytes must equal the
// original (same layout, vocabulary, merges, sections and formatting), and the
// saved file must reload with identical behaviour.
func TestSaveQwen3(t *testing.T) {
	tok := loadQwen3(t)
	data, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(sharedQwen3(t), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(orig, data) {
		n := 0
		for n < min(len(orig), len(data)) && orig[n] == data[n] {
			n++
		}
		t.Fatalf("saved file differs from the original at byte %d: %q vs %q", n,
			orig[max(0, n-40):min(len(orig), n+40)], data[max(0, n-40):min(len(data), n+40)])
	}
	again, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readReference(t) {
		if got := again.EncodeWithSpecial(r.Text); !slices.Equal(got, r.IDs) {
			t.Fatalf("reloaded tokenizer encodes %q as %v, want %v", r.Text, got, r.IDs)
		}
	}
}

func TestTrainRoundTrip(t *testing.T) {
	tok := trainSmall(t, 500)
	if tok.VocabSize() != 500 {
		t.Fatalf("VocabSize = %d, want 500", tok.VocabSize())
	}
	for i, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		if id, ok := tok.TokenID(s); !ok || id != i {
			t.Fatalf("special %q has id %d, %v; want %d", s, id, ok, i)
		}
	}
	unseen := []string{"完全没见过的句子 with unseen words ẞ ﬁ 🦄", "", " ", "\n\n", "a'S'll"}
	total, tokens := 0, 0
	for _, s := range append(slices.Clone(smallCorpus), unseen...) {
		ids := tok.EncodeWithSpecial(s)
		if got := tok.Decode(ids); got != norm.NFC.String(s) {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		total += len(s)
		tokens += len(ids)
	}
	if ratio := float64(total) / float64(tokens); ratio < 2 {
		t.Fatalf("%.2f bytes per token on the training text: merges not learned", ratio)
	}
	if ids := tok.EncodeWithSpecial("<|im_start|>user"); ids[0] != 1 {
		t.Fatalf("<|im_start|> not recognised: %v", ids)
	}
	// Save, reload: identical file and identical encodings.
	data, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir()
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	re, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	data2, err := re.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, data2) {
		t.Fatal("saved tokenizer does not reload to the same file")
	}
	for _, s := range smallCorpus {
		if a, b := tok.EncodeWithSpecial(s), re.EncodeWithSpecial(s); !slices.Equal(a, b) {
			t.Fatalf("reloaded tokenizer encodes %q as %v, want %v", s, b, a)
		}
	}
	// Deterministic: a second training run writes the same file.
	data3, err := trainSmall(t, 500).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, data3) {
		t.Fatal("two training runs on the same corpus differ")
	}
}

// TestTrainMatchesRecount compares the incremental pair counting with a
// trainer that recounts every pair before each merge.
func TestTrainMatchesRecount(t *testing.T) {
	tok := trainSmall(t, 450)
	var corpus []string
	for i := range 20 {
		for _, s := range smallCorpus {
			corpus = append(corpus, strings.Repeat(s+" ", 1+i%3))
		}
	}
	counts, err := tok.countWords(context.Background(), slices.Values(corpus))
	if err != nil {
		t.Fatal(err)
	}
	type word struct {
		syms  []string
		count int64
	}
	var words []word
	for w, c := range counts {
		var syms []string
		for _, r := range byteLevelString(w) {
			syms = append(syms, string(r))
		}
		words = append(words, word{syms, c})
	}
	var want [][2]string
	for len(want) < len(tok.merges) {
		pairs := map[[2]string]int64{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		var bestN int64
		for p, n := range pairs {
			pid := [2]int{tok.vocabID(p[0]), tok.vocabID(p[1])}
			bid := [2]int{tok.vocabID(best[0]), tok.vocabID(best[1])}
			if n > bestN || (n == bestN && (pid[0] < bid[0] || (pid[0] == bid[0] && pid[1] < bid[1]))) {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break
		}
		want = append(want, best)
		for k, w := range words {
			var out []string
			for i := 0; i < len(w.syms); i++ {
				if i+1 < len(w.syms) && w.syms[i] == best[0] && w.syms[i+1] == best[1] {
					out = append(out, best[0]+best[1])
					i++
					continue
				}
				out = append(out, w.syms[i])
			}
			words[k].syms = out
		}
	}
	if !slices.Equal(want, tok.merges) {
		for i := range min(len(want), len(tok.merges)) {
			if want[i] != tok.merges[i] {
				t.Fatalf("merge %d: incremental %q, recount %q", i, tok.merges[i], want[i])
			}
		}
		t.Fatalf("%d merges, recount gives %d", len(tok.merges), len(want))
	}
}

func (t *Tokenizer) vocabID(s string) int {
	if id, ok := t.vocab[s]; ok {
		return id
	}
	return -1
}

func TestTrainErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Train(ctx, slices.Values(smallCorpus), TrainConfig{VocabSize: 100}); err == nil {
		t.Fatal("vocab size below 256 accepted")
	}
	if _, err := Train(ctx, slices.Values(smallCorpus), TrainConfig{VocabSize: 300, SpecialTokens: []string{"<a>", "<a>"}}); err == nil {
		t.Fatal("duplicate special token accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Train(cancelled, slices.Values(smallCorpus), TrainConfig{VocabSize: 300}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

func TestStreamDecoder(t *testing.T) {
	tok := trainSmall(t, 400)
	rng := rand.New(rand.NewPCG(3, 4))
	texts := append(slices.Clone(smallCorpus), "🦄🦄 a\U0001F984b", "\u4e2d\u6587")
	for round := range 300 {
		var ids []int
		if round < len(texts) {
			ids = tok.EncodeWithSpecial(texts[round])
		} else {
			for range rng.IntN(12) {
				ids = append(ids, rng.IntN(tok.VocabSize()+2)-1)
			}
		}
		d := tok.NewStreamDecoder()
		var sb strings.Builder
		for _, id := range ids {
			sb.WriteString(d.Next(id))
		}
		sb.WriteString(d.Flush())
		if got, want := sb.String(), tok.Decode(ids); got != want {
			t.Fatalf("ids %v: streamed %q, Decode %q", ids, got, want)
		}
	}
	// A character split across tokens appears only when complete.
	d := tok.NewStreamDecoder()
	ids := tok.Encode("\U0001F984")
	for _, id := range ids[:len(ids)-1] {
		if s := d.Next(id); s != "" {
			t.Fatalf("partial character emitted: %q", s)
		}
	}
	if s := d.Next(ids[len(ids)-1]); s != "\U0001F984" {
		t.Fatalf("completed character: %q", s)
	}
}

// TestWordCacheBounded fills the cache far past its size with distinct words:
// results must equal uncached encoding and the cache must stay bounded.
func TestWordCacheBounded(t *testing.T) {
	tok := trainSmall(t, 400)
	plain := trainSmall(t, 400)
	plain.cache = nil
	var sb strings.Builder
	for i := range 100000 { // distinct letter-only words: one piece each
		sb.WriteString(" w")
		for n := i; n > 0; n /= 26 {
			sb.WriteByte(byte('a' + n%26))
		}
	}
	text := sb.String()
	for range 2 { // the second pass hits the cache
		if got, want := tok.Encode(text), plain.Encode(text); !slices.Equal(got, want) {
			t.Fatal("cached and uncached encodings differ")
		}
	}
	entries, bytes := 0, 0
	for i := range tok.cache.shards {
		sh := &tok.cache.shards[i]
		for _, m := range []map[string][]int32{sh.cur, sh.old} {
			entries += len(m)
			for w, ids := range m {
				bytes += len(w) + 4*len(ids)
			}
		}
	}
	if entries > 2*cacheShards*cacheShardEntries || bytes > 2*cacheShards*cacheShardBytes {
		t.Fatalf("cache holds %d entries, %d bytes", entries, bytes)
	}
}
