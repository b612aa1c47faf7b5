package driver

import (
	"math"
	"runtime"
	"unsafe"
)

// Params packs kernel arguments for cuLaunchKernel, whose kernelParams is
// an array of pointers, one per kernel parameter, each pointing at that
// argument's value. Every value sits in its own 8-byte slot, which is
// aligned for any scalar or pointer a kernel takes; a 4-byte argument fills
// the low half of its slot, which is where the driver reads it on the
// little-endian machines CUDA runs on. The driver copies the values during
// the launch call, so a Params may be reused once Launch returns.
type Params struct {
	slots []uint64
}

// Reset empties p for reuse.
func (p *Params) Reset() *Params {
	p.slots = p.slots[:0]
	return p
}

// Ptr appends a device pointer (a T* parameter).
func (p *Params) Ptr(v Ptr) *Params { return p.U64(uint64(v)) }

// I32 appends an int parameter.
func (p *Params) I32(v int32) *Params { return p.U64(uint64(uint32(v))) }

// Int appends a Go int as an int parameter; the caller has checked its
// range (shapes are validated long before a launch).
func (p *Params) Int(v int) *Params { return p.I32(int32(v)) }

// U32 appends an unsigned int parameter.
func (p *Params) U32(v uint32) *Params { return p.U64(uint64(v)) }

// F32 appends a float parameter.
func (p *Params) F32(v float32) *Params { return p.U64(uint64(math.Float32bits(v))) }

// I64 appends a long long parameter.
func (p *Params) I64(v int64) *Params { return p.U64(uint64(v)) }

// U64 appends an unsigned long long parameter.
func (p *Params) U64(v uint64) *Params {
	p.slots = append(p.slots, v)
	return p
}

// Len returns the number of parameters.
func (p *Params) Len() int { return len(p.slots) }

// Slot returns the raw 8-byte slot of parameter i, as the kernel would read
// it (the low 4 bytes for a 4-byte parameter).
func (p *Params) Slot(i int) uint64 { return p.slots[i] }

// pointers returns the kernelParams array: the address of each slot. The
// slots must not be appended to between this call and the launch.
func (p *Params) pointers() []uintptr {
	ptrs := make([]uintptr, len(p.slots))
	for i := range p.slots {
		ptrs[i] = uintptr(unsafe.Pointer(&p.slots[i]))
	}
	return ptrs
}

// keepAlive keeps the slots reachable until the launch call has returned:
// the kernelParams array holds their addresses as integers, which the
// collector does not see.
func (p *Params) keepAlive() { runtime.KeepAlive(p.slots) }
