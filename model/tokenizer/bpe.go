package tokenizer

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
)

// noMerge is the packed value of a pair that has no merge rule.
const noMerge = math.MaxUint64

// heapThreshold is the word length (in symbols) from which merging switches
// from rescanning a rank array (fast for short words) to a priority queue
// (O(n log n), needed for long runs without spaces or punctuation).
const heapThreshold = 96

// bpeModel holds the merge rules of a byte-level BPE model.
type bpeModel struct {
	// merges maps a pair of token ids (left<<32 | right) to rank<<32 | merged id.
	merges mergeTable
	// bytePairs is merges for pairs of ids below 256 (the byte tokens in every
	// byte-level vocabulary we know of), indexed directly: the first round of
	// lookups of every word hits this small table.
	bytePairs []uint64
	// fallback holds, for a byte whose character is not in the vocabulary, its
	// byte-fallback ids (<0xXX> tokens), or nil when it becomes the unknown
	// token or, without one, is dropped as Hugging Face does.
	fallback   [256][]int32
	unkID      int32 // -1 when the model has no unknown token
	fuseUnk    bool
	allDirect  bool       // every byte's character is in the vocabulary
	byteDirect [256]int32 // id of each byte's character, -1 if absent
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (m *bpeModel) lookup(a, b int32) uint64 {
	if uint32(a)|uint32(b) < 256 {
		return m.bytePairs[a<<8|b]
	}
	return m.merges.get(pairKey(a, b))
}

// mergeTable is a read-mostly open-addressing hash table from pair keys to
// packed merge values with linear probing: a hit usually touches a single
// 16-byte slot, which matters because merge lookups dominate encoding.
type mergeTable struct {
	slots []mergeSlot
	shift uint
}

type mergeSlot struct{ key, val uint64 }

// emptyKey marks a free slot; no pair of non-negative int32 ids produces it.
const emptyKey = math.MaxUint64

func newMergeTable(n int) mergeTable {
	size, bits := 8, uint(3)
	for size < 2*n {
		size, bits = size*2, bits+1
	}
	slots := make([]mergeSlot, size)
	for i := range slots {
		slots[i].key = emptyKey
	}
	return mergeTable{slots: slots, shift: 64 - bits}
}

func (mt *mergeTable) index(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> mt.shift }

func (mt *mergeTable) get(key uint64) uint64 {
	mask := uint64(len(mt.slots) - 1)
	for i := mt.index(key); ; i = (i + 1) & mask {
		s := &mt.slots[i]
		if s.key == key {
			return s.val
		}
		if s.key == emptyKey {
			return noMerge
		}
	}
}

// set inserts or overwrites key (a later duplicate merge replaces an earlier
// one, as in Hugging Face).
func (mt *mergeTable) set(key, val uint64) {
	mask := uint64(len(mt.slots) - 1)
	for i := mt.index(key); ; i = (i + 1) & mask {
		s := &mt.slots[i]
		if s.key == key || s.key == emptyKey {
			s.key, s.val = key, val
			return
		}
	}
}

// bpeScratch is per-call working memory, pooled to keep Encode allocation-free.
type bpeScratch struct {
	ids   []int32
	ranks []uint64
	prev  []int32
	next  []int32
	heap  []uint64
	ends  []int
}

// initialSymbols fills s.ids with the starting symbols of word.
func (m *bpeModel) initialSymbols(s *bpeScratch, word string) []int32 {
	ids := s.ids[:0]
	if m.allDirect {
		for i := 0; i < len(word); i++ {
			ids = append(ids, m.byteDirect[word[i]])
		}
		s.ids = ids
		return ids
	}
	// Hugging Face's merge_word: an unknown character stays pending until the
	// next character found in the vocabulary (byte-fallback ids do not flush
	// it), and consecutive unknowns fuse when fuse_unk is set.
	pendingUnk := false
	for i := 0; i < len(word); i++ {
		b := word[i]
		switch {
		case m.byteDirect[b] >= 0:
			if pendingUnk {
				ids = append(ids, m.unkID)
				pendingUnk = false
			}
			ids = append(ids, m.byteDirect[b])
		case m.fallback[b] != nil:
			ids = append(ids, m.fallback[b]...)
		case m.unkID >= 0:
			if pendingUnk && !m.fuseUnk {
				ids = append(ids, m.unkID)
			}
			pendingUnk = true
		}
	}
	if pendingUnk {
		ids = append(ids, m.unkID)
	}
	s.ids = ids
	return ids
}

// mergeWord applies the merges to the symbols of one pre-tokenized piece and
// returns the resulting ids (aliasing s).
func (m *bpeModel) mergeWord(s *bpeScratch, word string) []int32 {
	ids := m.initialSymbols(s, word)
	if len(ids) < 2 {
		return ids
	}
	if len(ids) >= heapThreshold {
		return m.mergeHeap(s, ids)
	}
	return m.mergeArray(s, ids)
}

// mergeArray merges short words: it keeps the packed merge value of every
// adjacent pair in an array and rescans it for the lowest rank, leftmost
// first, after each merge.
func (m *bpeModel) mergeArray(s *bpeScratch, ids []int32) []int32 {
	ranks := s.ranks[:0]
	for i := 0; i+1 < len(ids); i++ {
		ranks = append(ranks, m.lookup(ids[i], ids[i+1]))
	}
	s.ranks = ranks
	for len(ranks) > 0 {
		best, bestVal := -1, uint64(noMerge)
		for i, v := range ranks {
			if v < bestVal {
				best, bestVal = i, v
			}
		}
		if best < 0 {
			break
		}
		ids[best] = int32(uint32(bestVal))
		copy(ids[best+1:], ids[best+2:])
		ids = ids[:len(ids)-1]
		copy(ranks[best:], ranks[best+1:])
		ranks = ranks[:len(ranks)-1]
		if best > 0 {
			ranks[best-1] = m.lookup(ids[best-1], ids[best])
		}
		if best < len(ranks) {
			ranks[best] = m.lookup(ids[best], ids[best+1])
		}
	}
	return ids
}

// mergeHeap is mergeWord for long words: a linked list of symbols and a
// min-heap of candidate merges keyed by (rank, position), with stale entries
// skipped when popped. Equal ranks resolve leftmost first, as in Hugging Face.
func (m *bpeModel) mergeHeap(s *bpeScratch, ids []int32) []int32 {
	n := len(ids)
	prev, next := grow32(s.prev, n), grow32(s.next, n)
	for i := range n {
		prev[i], next[i] = int32(i-1), int32(i+1)
	}
	next[n-1] = -1
	h := s.heap[:0]
	for i := 0; i+1 < n; i++ {
		if v := m.lookup(ids[i], ids[i+1]); v != noMerge {
			h = heapPush(h, v>>32<<32|uint64(i))
		}
	}
	for len(h) > 0 {
		var top uint64
		top, h = heapPop(h)
		rank, pos := top>>32, int32(uint32(top))
		if ids[pos] < 0 || next[pos] < 0 {
			continue
		}
		right := next[pos]
		v := m.lookup(ids[pos], ids[right])
		if v == noMerge || v>>32 != rank {
			continue
		}
		ids[pos] = int32(uint32(v))
		ids[right] = -1
		nr := next[right]
		next[pos] = nr
		if nr >= 0 {
			prev[nr] = pos
			if w := m.lookup(ids[pos], ids[nr]); w != noMerge {
				h = heapPush(h, w>>32<<32|uint64(pos))
			}
		}
		if p := prev[pos]; p >= 0 {
			if w := m.lookup(ids[p], ids[pos]); w != noMerge {
				h = heapPush(h, w>>32<<32|uint64(p))
			}
		}
	}
	s.prev, s.next, s.heap = prev, next, h
	out := ids[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out
}

func grow32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

func heapPush(h []uint64, v uint64) []uint64 {
	h = append(h, v)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func heapPop(h []uint64) (uint64, []uint64) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, small := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] < h[small] {
			small = l
		}
		if r < len(h) && h[r] < h[small] {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	return top, h
}

// Cache sizing: words up to maxCachedWord bytes are cached, at most
// cacheShardEntries entries and cacheShardBytes bytes of keys and ids per
// shard and generation, so the cache never holds more than about
// 2*cacheShards*cacheShardBytes = 32 MiB whatever the input.
const (
	maxCachedWord     = 256
	cacheShards       = 64
	cacheShardEntries = 512
	cacheShardBytes   = 256 << 10
)

// wordCache is a bounded, concurrency-safe map from a pre-tokenized piece to
// its ids. Each shard keeps two generations: a hit in the old generation is
// promoted, and when the current one fills up it becomes the old one. That
// approximates LRU without per-entry bookkeeping.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu       sync.Mutex
	cur, old map[string][]int32
	curBytes int
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed()}
}

func (c *wordCache) shard(word string) *cacheShard {
	return &c.shards[maphash.String(c.seed, word)%cacheShards]
}

func (c *wordCache) get(word string) ([]int32, bool) {
	sh := c.shard(word)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.cur[word]; ok {
		return v, true
	}
	if v, ok := sh.old[word]; ok {
		sh.putLocked(strings.Clone(word), v)
		return v, true
	}
	return nil, false
}

// put stores a copy of word, so that the cache never keeps a caller's whole
// input text alive through a substring.
func (c *wordCache) put(word string, ids []int32) {
	word = strings.Clone(word)
	sh := c.shard(word)
	sh.mu.Lock()
	sh.putLocked(word, ids)
	sh.mu.Unlock()
}

func (sh *cacheShard) putLocked(word string, ids []int32) {
	size := len(word) + 4*len(ids)
	if sh.cur == nil || len(sh.cur) >= cacheShardEntries || sh.curBytes+size > cacheShardBytes {
		sh.old, sh.cur, sh.curBytes = sh.cur, make(map[string][]int32, cacheShardEntries), 0
	}
	sh.cur[word] = ids
	sh.curBytes += size
}
