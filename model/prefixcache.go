package model

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sync"
)

// PrefixCache keeps the KV entries of prompts already computed, so that a
// new sequence whose prompt starts with a cached prefix (the harness prefix
// of a live room, shared by every viewer question) copies those entries and
// prefills only the rest. It is a radix tree over token ids whose nodes hold
// the keys and values of their edge's tokens, bounded in bytes with
// least-recently-used eviction of leaves. A PrefixCache is safe for
// concurrent use.
type PrefixCache struct {
	model    *Model
	maxBytes int64

	mu    sync.Mutex
	root  *radixNode
	bytes int64
	clock uint64
	stats PrefixCacheStats
}

// PrefixCacheStats counts the cache's work since it was created.
type PrefixCacheStats struct {
	Lookups     int64 // Restore calls
	HitTokens   int64 // tokens restored from the cache
	StoreTokens int64 // tokens added to the cache
	Evictions   int64 // nodes evicted
}

// radixNode is an edge of the tree: tokens and, per layer, their keys and
// values (len(tokens)×kvDim each). Their positions follow from the depth.
type radixNode struct {
	parent   *radixNode
	tokens   []int
	k, v     [][]float32
	children map[int]*radixNode
	lastUse  uint64
}

// NewPrefixCache returns an empty cache for m's KV entries holding at most
// maxBytes of keys and values.
func NewPrefixCache(m *Model, maxBytes int64) *PrefixCache {
	return &PrefixCache{model: m, maxBytes: maxBytes, root: &radixNode{children: map[int]*radixNode{}}}
}

// Bytes returns the memory the cached keys and values occupy.
func (c *PrefixCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Stats returns the cache's counters.
func (c *PrefixCache) Stats() PrefixCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

func (c *PrefixCache) nodeBytes(n int) int64 { return int64(n) * c.model.kvBytesPerToken() }

// restoreHeadroom is the tokens past the prompt a restored sequence has room
// for before its key and value slices grow.
const restoreHeadroom = 256

// Restore copies into the empty sequence seq the cached KV entries of the
// longest cached prefix of tokens, leaving at least the last token to be
// computed (its logits are needed), and returns how many tokens it
// restored; seq then holds tokens[:n]. A *Sequence of the cache's model
// gets the entries directly; any other DecoderSequence (a device runner's)
// through its WriteKV.
func (c *PrefixCache) Restore(seq DecoderSequence, tokens []int) (int, error) {
	if s, ok := seq.(*Sequence); ok {
		return c.restoreSequence(s, tokens)
	}
	if n := seq.Len(); n != 0 {
		return 0, fmt.Errorf("model: prefix cache restore into a sequence of %d tokens, want an empty one", n)
	}
	want := tokens[:max(0, len(tokens)-1)]
	kvDim := c.model.kvDim()
	c.mu.Lock()
	path, n := c.match(want)
	k, v := make([][]float32, c.model.Config.NumLayers), make([][]float32, c.model.Config.NumLayers)
	for l := range k {
		k[l] = make([]float32, 0, n*kvDim)
		v[l] = make([]float32, 0, n*kvDim)
		for _, pc := range path {
			k[l] = append(k[l], pc.node.k[l][:pc.take*kvDim]...)
			v[l] = append(v[l], pc.node.v[l][:pc.take*kvDim]...)
		}
	}
	c.mu.Unlock()
	if n == 0 {
		return 0, nil
	}
	if err := seq.WriteKV(want[:n], k, v); err != nil {
		return 0, fmt.Errorf("model: prefix cache restore: %w", err)
	}
	c.mu.Lock()
	c.stats.HitTokens += int64(n)
	c.mu.Unlock()
	return n, nil
}

// restoreSequence is Restore into a sequence of this package, which takes
// the entries straight into its slices.
func (c *PrefixCache) restoreSequence(seq *Sequence, tokens []int) (int, error) {
	if seq.model != c.model {
		return 0, fmt.Errorf("model: prefix cache and sequence belong to different models")
	}
	seq.mu.Lock()
	defer seq.mu.Unlock()
	if len(seq.tokens) != 0 {
		return 0, fmt.Errorf("model: prefix cache restore into a sequence of %d tokens, want an empty one", len(seq.tokens))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	want := tokens[:max(0, len(tokens)-1)]
	kvDim := c.model.kvDim()
	path, n := c.match(want)
	// Room for the whole prompt and a reply, so that neither the copy
	// nor the prefill after it grows the slices piece by piece.
	capacity := (len(tokens) + restoreHeadroom) * kvDim
	for l := range seq.k {
		seq.k[l] = make([]float32, 0, capacity)
		seq.v[l] = make([]float32, 0, capacity)
		for _, pc := range path {
			seq.k[l] = append(seq.k[l], pc.node.k[l][:pc.take*kvDim]...)
			seq.v[l] = append(seq.v[l], pc.node.v[l][:pc.take*kvDim]...)
		}
	}
	seq.tokens = append(seq.tokens, want[:n]...)
	c.stats.HitTokens += int64(n)
	return n, nil
}

// pathPiece is a node on the path of a cached prefix and how many of its
// edge's tokens the prefix takes.
type pathPiece struct {
	node *radixNode
	take int
}

// match finds the longest cached prefix of want, marks its nodes used and
// counts the lookup; c.mu is held.
func (c *PrefixCache) match(want []int) ([]pathPiece, int) {
	c.stats.Lookups++
	c.clock++
	var path []pathPiece
	node, n := c.root, 0
	for n < len(want) {
		child := node.children[want[n]]
		if child == nil {
			break
		}
		take := 0
		for take < len(child.tokens) && n+take < len(want) && child.tokens[take] == want[n+take] {
			take++
		}
		path = append(path, pathPiece{child, take})
		for p := child; p != nil; p = p.parent {
			p.lastUse = c.clock
		}
		n += take
		if take < len(child.tokens) {
			break
		}
		node = child
	}
	return path, n
}

// Store adds the sequence's tokens and KV entries to the cache (the part
// not cached yet), then evicts least-recently-used leaves until the cache
// fits its budget. A sequence longer than the budget stores the prefix that
// fits. A sequence other than a *Sequence is read through its ReadKV, whose
// error Store returns.
func (c *PrefixCache) Store(seq DecoderSequence) error {
	if s, ok := seq.(*Sequence); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		c.mu.Lock()
		defer c.mu.Unlock()
		kvDim := c.model.kvDim()
		return c.insert(s.tokens, func(from, to int) (k, v [][]float32, err error) {
			k, v = make([][]float32, len(s.k)), make([][]float32, len(s.v))
			for l := range s.k {
				k[l] = append([]float32(nil), s.k[l][from*kvDim:to*kvDim]...)
				v[l] = append([]float32(nil), s.v[l][from*kvDim:to*kvDim]...)
			}
			return k, v, nil
		})
	}
	tokens := seq.Tokens()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.insert(tokens, seq.ReadKV)
}

// insert adds tokens to the tree, reading the keys and values of the
// positions not cached yet with read, and evicts; c.mu is held.
func (c *PrefixCache) insert(tokens []int, read func(from, to int) (k, v [][]float32, err error)) error {
	c.clock++
	if fit := c.maxBytes / c.model.kvBytesPerToken(); int64(len(tokens)) > fit {
		tokens = tokens[:fit]
	}
	node, n := c.root, 0
	for n < len(tokens) {
		node.lastUse = c.clock
		child := node.children[tokens[n]]
		if child == nil {
			k, v, err := read(n, len(tokens))
			if err == nil {
				err = c.model.checkKV(len(tokens)-n, k, v)
			}
			if err != nil {
				return fmt.Errorf("model: prefix cache store: %w", err)
			}
			leaf := &radixNode{parent: node, tokens: append([]int(nil), tokens[n:]...), children: map[int]*radixNode{}, lastUse: c.clock, k: k, v: v}
			node.children[tokens[n]] = leaf
			c.bytes += c.nodeBytes(len(leaf.tokens))
			c.stats.StoreTokens += int64(len(leaf.tokens))
			break
		}
		take := 0
		for take < len(child.tokens) && n+take < len(tokens) && child.tokens[take] == tokens[n+take] {
			take++
		}
		if take < len(child.tokens) {
			c.split(child, take)
		}
		n += take
		node = child
	}
	node.lastUse = c.clock
	c.evict()
	return nil
}

// split cuts node's edge after at tokens: node keeps the head, a new child
// takes the tail and node's children.
func (c *PrefixCache) split(node *radixNode, at int) {
	kvDim := c.model.kvDim()
	tail := &radixNode{parent: node, tokens: slices.Clone(node.tokens[at:]), children: node.children, lastUse: node.lastUse}
	tail.k = make([][]float32, len(node.k))
	tail.v = make([][]float32, len(node.v))
	// Both halves get their own arrays so that evicting one frees its memory.
	for l := range node.k {
		tail.k[l] = slices.Clone(node.k[l][at*kvDim:])
		tail.v[l] = slices.Clone(node.v[l][at*kvDim:])
		node.k[l] = slices.Clone(node.k[l][:at*kvDim])
		node.v[l] = slices.Clone(node.v[l][:at*kvDim])
	}
	for _, ch := range tail.children {
		ch.parent = tail
	}
	node.tokens = slices.Clone(node.tokens[:at])
	node.children = map[int]*radixNode{tail.tokens[0]: tail}
}

// evict removes least-recently-used leaves until the cache fits its budget.
// Once over the budget it frees down to fifteen sixteenths of it, so that
// the walk over the tree that finds the leaves happens once per sixteenth
// of the budget stored, not at every Store of a full cache; the path the
// current Store touched is kept even where that stops short of the lower
// mark (it fits the budget by itself).
func (c *PrefixCache) evict() {
	if c.bytes <= c.maxBytes {
		return
	}
	low := c.maxBytes - c.maxBytes/16
	var leaves leafHeap
	var walk func(n *radixNode)
	walk = func(n *radixNode) {
		if len(n.children) == 0 && n != c.root {
			leaves = append(leaves, n)
		}
		for _, ch := range n.children {
			walk(ch)
		}
	}
	walk(c.root)
	heap.Init(&leaves)
	for c.bytes > low && len(leaves) > 0 {
		victim := heap.Pop(&leaves).(*radixNode)
		if victim.lastUse == c.clock {
			return
		}
		parent := victim.parent
		delete(parent.children, victim.tokens[0])
		c.bytes -= c.nodeBytes(len(victim.tokens))
		c.stats.Evictions++
		if len(parent.children) == 0 && parent != c.root {
			heap.Push(&leaves, parent)
		}
	}
}

// leafHeap orders leaves least recently used first.
type leafHeap []*radixNode

func (h leafHeap) Len() int           { return len(h) }
func (h leafHeap) Less(i, j int) bool { return h[i].lastUse < h[j].lastUse }
func (h leafHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *leafHeap) Push(x any)        { *h = append(*h, x.(*radixNode)) }
func (h *leafHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// Prefill runs a prompt into the sequence and returns the logits that
// predict the token after it. With a prefix cache and an empty sequence, the
// longest cached prefix of the prompt is restored instead of recomputed, and
// the whole prompt is stored afterwards for later requests. On error the
// sequence is left as it was.
func (m *Model) Prefill(ctx context.Context, seq *Sequence, tokens []int, cache *PrefixCache) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("model: prefill of an empty prompt")
	}
	if seq == nil || seq.model != m {
		return nil, fmt.Errorf("model: prefill of a sequence that does not belong to this model")
	}
	before := seq.Len()
	if n := before + len(tokens); n > m.maxContext {
		return nil, fmt.Errorf("%w: prompt of %d tokens after %d cached would hold %d, the model accepts %d", ErrContextTooLong, len(tokens), before, n, m.maxContext)
	}
	rest := tokens
	if cache != nil && before == 0 {
		n, err := cache.Restore(seq, tokens)
		if err != nil {
			return nil, err
		}
		rest = tokens[n:]
	}
	// Long prompts run in chunks so that activation memory stays bounded
	// (a 32k-token prompt in one step would need gigabytes for the MLP).
	var out []StepOutput
	for len(rest) > 0 {
		n := min(len(rest), m.prefillChunk)
		var err error
		if out, err = m.step(ctx, []*Sequence{seq}, [][]int{rest[:n]}, nil); err != nil {
			seq.Truncate(before) // the prompt was not consumed
			return nil, err
		}
		rest = rest[n:]
	}
	if cache != nil {
		if err := cache.Store(seq); err != nil {
			return nil, err
		}
	}
	return out[0].Logits, nil
}
