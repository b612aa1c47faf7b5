package engine

import (
	"bytes"
	"testing"
)

func TestKernel(t *testing.T) {
	k := newKernel(64)
	if err := k.reset([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if k.input.off != arenaBase || k.length(k.input.off) != 5 {
		t.Fatalf("input block %+v", k.input)
	}
	a, err := k.alloc(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.alloc(3)
	if err != nil || a == b || b%8 != 0 {
		t.Fatalf("zero-length and next block share or misalign: %d %d %v", a, b, err)
	}
	if k.length(b) != 3 || k.length(b+1) != 0 || k.length(0) != 0 {
		t.Fatal("length of a block start, a middle and null")
	}
	if _, err := k.bytes(a, b-a+3); err != nil {
		t.Fatalf("a range across blocks inside the arena: %v", err)
	}
	for _, c := range []struct{ off, n uint64 }{{0, 1}, {7, 1}, {b, 4}, {b, 1 << 40}, {1<<64 - 4, 8}, {uint64(len(k.buf)), 1}} {
		if _, err := k.bytes(c.off, c.n); err == nil {
			t.Errorf("bytes(%d, %d) was allowed", c.off, c.n)
		}
	}
	if _, err := k.blockBytes(b + 1); err == nil {
		t.Error("blockBytes in the middle of a block was allowed")
	}
	if _, err := k.alloc(64); err == nil {
		t.Error("an allocation past the limit was allowed")
	}
	k.free(b)
	c, err := k.alloc(2)
	if err != nil || c != b {
		t.Fatalf("freeing the last block did not give its space back: %d vs %d, %v", c, b, err)
	}
	k.free(k.input.off) // not the last block: kept
	if err := k.reset([]byte("x")); err != nil || k.length(k.input.off) != 1 || len(k.blocks) != 1 {
		t.Fatalf("reset: %+v %v", k.blocks, err)
	}
	if err := k.reset(bytes.Repeat([]byte{1}, 100)); err == nil {
		t.Fatal("an input over the limit was accepted")
	}
	big := newKernel(8 << 20)
	if err := big.reset(make([]byte, 4<<20)); err != nil {
		t.Fatal(err)
	}
	if err := big.reset(nil); err != nil || cap(big.buf) > keepBytes {
		t.Fatalf("a large call left %d bytes of arena behind (%v)", cap(big.buf), err)
	}
}

// FuzzKernel runs random allocation, free and access sequences: no
// panic, no block overlap, and every accepted range inside the arena.
func FuzzKernel(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 0, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		k := newKernel(1 << 12)
		if err := k.reset(ops); err != nil {
			return
		}
		for i := 0; i+1 < len(ops); i += 2 {
			n := uint64(ops[i+1]) * uint64(ops[i]%7+1)
			switch ops[i] % 4 {
			case 0, 1:
				k.alloc(n)
			case 2:
				if len(k.blocks) > 0 {
					k.free(k.blocks[len(k.blocks)-1].off)
				}
			case 3:
				if b, err := k.bytes(n, uint64(ops[i])); err == nil && len(b) != int(ops[i]) {
					t.Fatalf("bytes(%d, %d) returned %d bytes", n, ops[i], len(b))
				}
			}
		}
		for i := 1; i < len(k.blocks); i++ {
			prev, cur := k.blocks[i-1], k.blocks[i]
			if prev.off+max(prev.n, 1) > cur.off {
				t.Fatalf("blocks overlap: %+v %+v", prev, cur)
			}
		}
		if n := len(k.blocks); n > 0 && k.blocks[n-1].off+k.blocks[n-1].n > uint64(len(k.buf)) {
			t.Fatalf("a block passes the arena: %+v, %d bytes", k.blocks[n-1], len(k.buf))
		}
	})
}
