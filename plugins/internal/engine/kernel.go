package engine

import (
	"fmt"
	"sort"
)

// kernel is the host-managed memory of the Extism ABI for one instance:
// an arena of blocks addressed by 64-bit offsets that the guest reaches
// only through the extism:host/env imports. Offset 0 is the null block, so
// the arena starts at offset 8. The arena is reset at the start of every
// call: blocks never outlive the call that made them, which is what Extism
// hosts do too (the kernel's reset).
type kernel struct {
	buf    []byte
	blocks []block // sorted by offset: allocation only bumps
	limit  int

	input block
	// output is a copy of what output_set pointed at: the ABI lets the
	// guest free the block right after setting it.
	output    []byte
	outputSet bool
	errMsg    string
	errSet    bool
	errOffset uint64
}

type block struct{ off, n uint64 }

const arenaBase = 8

func newKernel(limit int) kernel {
	return kernel{buf: make([]byte, arenaBase, 4096), limit: limit}
}

// keepBytes is the most arena and output capacity an idle instance keeps
// between calls: one large call must not pin megabytes per instance.
const keepBytes = 1 << 20

// reset empties the arena and stores input as its first block.
func (k *kernel) reset(input []byte) error {
	if cap(k.buf) > keepBytes {
		k.buf = make([]byte, arenaBase, 4096)
	}
	if cap(k.output) > keepBytes {
		k.output = nil
	}
	k.buf = k.buf[:arenaBase]
	k.blocks = k.blocks[:0]
	k.output, k.outputSet = k.output[:0], false
	k.errMsg, k.errSet, k.errOffset = "", false, 0
	off, err := k.alloc(uint64(len(input)))
	if err != nil {
		return err
	}
	copy(k.buf[off:], input)
	k.input = block{off, uint64(len(input))}
	return nil
}

// alloc returns the offset of a new zeroed block of n bytes, 8-byte aligned.
func (k *kernel) alloc(n uint64) (uint64, error) {
	off := (uint64(len(k.buf)) + 7) &^ 7
	if n > uint64(k.limit) || off+n > uint64(k.limit) {
		return 0, fmt.Errorf("allocating %d bytes would pass the per-call limit of %d bytes", n, k.limit)
	}
	// A zero-length block still takes a byte, so that no two blocks share
	// an offset.
	end := int(off + max(n, 1))
	if end > cap(k.buf) {
		grown := make([]byte, len(k.buf), max(end, 2*cap(k.buf)))
		copy(grown, k.buf)
		k.buf = grown
	}
	old := len(k.buf)
	k.buf = k.buf[:end]
	clear(k.buf[old:end])
	k.blocks = append(k.blocks, block{off, n})
	return off, nil
}

// free releases the block at off when it is the last one; other blocks
// live until the call ends, which keeps free O(1) and the arena simple.
func (k *kernel) free(off uint64) {
	if n := len(k.blocks); n > 0 && k.blocks[n-1].off == off && k.blocks[n-1] != k.input {
		k.blocks = k.blocks[:n-1]
		k.buf = k.buf[:off]
	}
}

// find returns the block starting at off.
func (k *kernel) find(off uint64) (block, bool) {
	i := sort.Search(len(k.blocks), func(i int) bool { return k.blocks[i].off >= off })
	if i < len(k.blocks) && k.blocks[i].off == off {
		return k.blocks[i], true
	}
	return block{}, false
}

// length returns the length of the block starting at off, or 0 when no
// block starts there (Extism's answer for an unknown offset).
func (k *kernel) length(off uint64) uint64 {
	b, _ := k.find(off)
	return b.n
}

// bytes returns the n bytes at off, checked against the arena.
func (k *kernel) bytes(off, n uint64) ([]byte, error) {
	if off < arenaBase || off > uint64(len(k.buf)) || n > uint64(len(k.buf))-off {
		return nil, fmt.Errorf("[%d, +%d) is outside the %d bytes of host memory", off, n, len(k.buf))
	}
	return k.buf[off : off+n : off+n], nil
}

// blockBytes returns the bytes of the block starting at off.
func (k *kernel) blockBytes(off uint64) ([]byte, error) {
	b, ok := k.find(off)
	if !ok {
		return nil, fmt.Errorf("no block starts at offset %d", off)
	}
	return k.bytes(b.off, b.n)
}

// store copies b into the arena as a new block and returns its offset.
func (k *kernel) store(b []byte) (uint64, error) {
	off, err := k.alloc(uint64(len(b)))
	if err != nil {
		return 0, err
	}
	copy(k.buf[off:], b)
	return off, nil
}
