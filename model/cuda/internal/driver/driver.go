// Package driver is a thin binding of the CUDA driver API (libcuda.so.1),
// loaded at run time with purego: no cgo, no cuda.h, and a plain error
// rather than a crash where no driver is installed.
//
// The binding covers what an inference engine needs: devices and their
// attributes, the primary context, device memory and copies, streams,
// events, modules and kernel launches, and CUDA Graphs through stream
// capture. Every call returns a Go error naming the driver function and
// the CUresult (by cuGetErrorName). A CUDA context is current per OS
// thread, so callers lock their goroutine to its thread around a sequence
// of calls and make the context current first (see Context.Bind).
package driver

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/livehat/livehat/model/cuda/internal/dl"
)

// LibraryNames are the names the driver library is opened by: the
// versioned soname the driver package installs, then the development link.
func LibraryNames() []string { return []string{"libcuda.so.1", "libcuda.so"} }

// ErrNoDriver is wrapped by Load when the driver library cannot be opened.
var ErrNoDriver = errors.New("cuda: no NVIDIA driver (libcuda.so.1 could not be loaded)")

// Driver is the loaded driver library.
type Driver struct {
	lib   *dl.Library
	addrs []uintptr
}

// Load opens libcuda and resolves the binding's symbols. It does not call
// cuInit; Init does.
func Load() (*Driver, error) {
	lib, err := dl.Open(LibraryNames()...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	addrs, err := lib.Resolve(symbols())
	if err != nil {
		return nil, fmt.Errorf("cuda: driver too old for this binding (CUDA 12.0 or newer is needed): %w", err)
	}
	return &Driver{lib: lib, addrs: addrs}, nil
}

// Path returns the name the library was opened by.
func (d *Driver) Path() string { return d.lib.Path }

// call invokes entry point f and turns a failing CUresult into an *Error.
//
//go:uintptrescapes
func (d *Driver) call(f fn, args ...uintptr) error {
	r := Result(int32(dl.Call(d.addrs[f], args...)))
	if r == Success {
		return nil
	}
	return d.errorOf(symbols()[f].Names[0], r)
}

// errorOf builds the error for code r returned by op, asking the driver
// for its name and description.
func (d *Driver) errorOf(op string, r Result) *Error {
	e := &Error{Op: op, Code: r, Name: r.Name()}
	var s uintptr
	if dl.Call(d.addrs[fnGetErrorName], uintptr(r), uintptr(unsafe.Pointer(&s))) == 0 && s != 0 {
		e.Name = dl.GoString(s, 256)
	}
	s = 0
	if dl.Call(d.addrs[fnGetErrorString], uintptr(r), uintptr(unsafe.Pointer(&s))) == 0 && s != 0 {
		e.Text = dl.GoString(s, 1024)
	}
	return e
}

// Init initialises the driver (cuInit(0)); it is safe to call more than
// once.
func (d *Driver) Init() error { return d.call(fnInit, 0) }

// Version returns the CUDA version the driver supports, e.g. 12040 for
// 12.4.
func (d *Driver) Version() (int, error) {
	var v int32
	err := d.call(fnDriverGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), err
}

// Device is a CUdevice ordinal handle.
type Device int32

// DeviceCount returns the number of CUDA devices.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	err := d.call(fnDeviceGetCount, uintptr(unsafe.Pointer(&n)))
	return int(n), err
}

// Device returns the device with ordinal i.
func (d *Driver) Device(i int) (Device, error) {
	var dev int32
	err := d.call(fnDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(i))
	return Device(dev), err
}

// DeviceName returns the device's marketing name.
func (d *Driver) DeviceName(dev Device) (string, error) {
	buf := make([]byte, 256)
	if err := d.call(fnDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", err
	}
	return dl.GoString(uintptr(unsafe.Pointer(&buf[0])), len(buf)), nil
}

// Attribute is a CUdevice_attribute.
type Attribute int32

// Device attributes the engine reads.
const (
	AttrMaxThreadsPerBlock       Attribute = 1
	AttrMaxSharedMemoryPerBlock  Attribute = 8
	AttrWarpSize                 Attribute = 10
	AttrMultiprocessorCount      Attribute = 16
	AttrComputeCapabilityMajor   Attribute = 75
	AttrComputeCapabilityMinor   Attribute = 76
	AttrMaxSharedMemoryOptin     Attribute = 97
	AttrMemoryClockRateKHz       Attribute = 36
	AttrGlobalMemoryBusWidthBits Attribute = 37
)

// Attribute returns a device attribute.
func (d *Driver) Attribute(dev Device, a Attribute) (int, error) {
	var v int32
	err := d.call(fnDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(dev))
	return int(v), err
}

// TotalMem returns the device's memory in bytes.
func (d *Driver) TotalMem(dev Device) (int64, error) {
	var n uint64
	err := d.call(fnDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev))
	return int64(n), err
}

// Context is a CUcontext.
type Context uintptr

// RetainPrimaryContext retains the device's primary context, the one the
// CUDA runtime and cuBLAS share; its signature is the same in CUDA 12
// and 13, unlike cuCtxCreate's.
func (d *Driver) RetainPrimaryContext(dev Device) (Context, error) {
	var c uintptr
	err := d.call(fnDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(dev))
	return Context(c), err
}

// ReleasePrimaryContext releases a retained primary context.
func (d *Driver) ReleasePrimaryContext(dev Device) error {
	return d.call(fnDevicePrimaryCtxRelease, uintptr(dev))
}

// SetCurrent makes c the calling OS thread's current context.
func (d *Driver) SetCurrent(c Context) error { return d.call(fnCtxSetCurrent, uintptr(c)) }

// Synchronize waits for all work of the current context.
func (d *Driver) Synchronize() error { return d.call(fnCtxSynchronize) }

// MemInfo returns the free and total device memory of the current context.
func (d *Driver) MemInfo() (free, total int64, err error) {
	var f, t uint64
	err = d.call(fnMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	return int64(f), int64(t), err
}

// Ptr is a CUdeviceptr, an address in device memory.
type Ptr uint64

// Add returns p advanced by n bytes.
func (p Ptr) Add(n int64) Ptr { return p + Ptr(n) }

// Alloc allocates n bytes of device memory.
func (d *Driver) Alloc(n int64) (Ptr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("cuda: cuMemAlloc_v2 of %d bytes", n)
	}
	var p uint64
	if err := d.call(fnMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)); err != nil {
		return 0, fmt.Errorf("%w (allocating %d bytes)", err, n)
	}
	return Ptr(p), nil
}

// Free frees device memory from Alloc.
func (d *Driver) Free(p Ptr) error { return d.call(fnMemFree, uintptr(p)) }

// bytesOf returns the address and byte length of a slice's backing array.
func bytesOf[T any](s []T) (unsafe.Pointer, int64) {
	if len(s) == 0 {
		return nil, 0
	}
	var z T
	return unsafe.Pointer(&s[0]), int64(len(s)) * int64(unsafe.Sizeof(z))
}

// CopyToDevice copies src to device memory at dst, synchronously.
func CopyToDevice[T any](d *Driver, dst Ptr, src []T) error {
	p, n := bytesOf(src)
	if n == 0 {
		return nil
	}
	err := d.call(fnMemcpyHtoD, uintptr(dst), uintptr(p), uintptr(n))
	runtime.KeepAlive(src)
	return err
}

// CopyFromDevice copies device memory at src into dst, synchronously.
func CopyFromDevice[T any](d *Driver, dst []T, src Ptr) error {
	p, n := bytesOf(dst)
	if n == 0 {
		return nil
	}
	err := d.call(fnMemcpyDtoH, uintptr(p), uintptr(src), uintptr(n))
	runtime.KeepAlive(dst)
	return err
}

// CopyToDeviceAsync enqueues a copy of src to dst on stream s. src must
// stay unchanged until the stream has passed the copy (synchronize before
// reusing it).
func CopyToDeviceAsync[T any](d *Driver, dst Ptr, src []T, s Stream) error {
	p, n := bytesOf(src)
	if n == 0 {
		return nil
	}
	err := d.call(fnMemcpyHtoDAsync, uintptr(dst), uintptr(p), uintptr(n), uintptr(s))
	runtime.KeepAlive(src)
	return err
}

// CopyFromDeviceAsync enqueues a copy of device memory at src into dst on
// stream s; dst holds the data once the stream is synchronized.
func CopyFromDeviceAsync[T any](d *Driver, dst []T, src Ptr, s Stream) error {
	p, n := bytesOf(dst)
	if n == 0 {
		return nil
	}
	err := d.call(fnMemcpyDtoHAsync, uintptr(p), uintptr(src), uintptr(n), uintptr(s))
	runtime.KeepAlive(dst)
	return err
}

// CopyDevice copies n bytes between device buffers, synchronously.
func (d *Driver) CopyDevice(dst, src Ptr, n int64) error {
	return d.call(fnMemcpyDtoD, uintptr(dst), uintptr(src), uintptr(n))
}

// CopyDeviceAsync enqueues a copy of n bytes between device buffers.
func (d *Driver) CopyDeviceAsync(dst, src Ptr, n int64, s Stream) error {
	return d.call(fnMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), uintptr(s))
}

// Memset32 sets n 32-bit words at p to v, synchronously.
func (d *Driver) Memset32(p Ptr, v uint32, n int64) error {
	return d.call(fnMemsetD32, uintptr(p), uintptr(v), uintptr(n))
}

// Memset32Async enqueues setting n 32-bit words at p to v.
func (d *Driver) Memset32Async(p Ptr, v uint32, n int64, s Stream) error {
	return d.call(fnMemsetD32Async, uintptr(p), uintptr(v), uintptr(n), uintptr(s))
}

// Stream is a CUstream; 0 is the legacy default stream.
type Stream uintptr

// streamNonBlocking is CU_STREAM_NON_BLOCKING: the stream does not
// synchronise with the legacy default stream.
const streamNonBlocking = 1

// NewStream creates a non-blocking stream.
func (d *Driver) NewStream() (Stream, error) {
	var s uintptr
	err := d.call(fnStreamCreate, uintptr(unsafe.Pointer(&s)), streamNonBlocking)
	return Stream(s), err
}

// DestroyStream destroys a stream.
func (d *Driver) DestroyStream(s Stream) error { return d.call(fnStreamDestroy, uintptr(s)) }

// SyncStream waits for the stream's work.
func (d *Driver) SyncStream(s Stream) error { return d.call(fnStreamSynchronize, uintptr(s)) }

// Event is a CUevent.
type Event uintptr

// NewEvent creates an event that records time (CU_EVENT_DEFAULT).
func (d *Driver) NewEvent() (Event, error) {
	var e uintptr
	err := d.call(fnEventCreate, uintptr(unsafe.Pointer(&e)), 0)
	return Event(e), err
}

// DestroyEvent destroys an event.
func (d *Driver) DestroyEvent(e Event) error { return d.call(fnEventDestroy, uintptr(e)) }

// Record enqueues the event on s.
func (d *Driver) Record(e Event, s Stream) error {
	return d.call(fnEventRecord, uintptr(e), uintptr(s))
}

// SyncEvent waits for the event.
func (d *Driver) SyncEvent(e Event) error { return d.call(fnEventSynchronize, uintptr(e)) }

// Elapsed returns the milliseconds between two recorded events.
func (d *Driver) Elapsed(start, end Event) (float32, error) {
	var ms float32
	err := d.call(fnEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end))
	return ms, err
}

// Module is a CUmodule.
type Module uintptr

// LoadModule loads a PTX (JIT-compiled by the driver for the current
// device) or cubin image.
func (d *Driver) LoadModule(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, errors.New("cuda: cuModuleLoadData of an empty image")
	}
	// PTX is text that the driver reads up to its NUL; a cubin is an ELF
	// image and goes as it is.
	img := image
	if !bytes.HasPrefix(img, []byte("\x7fELF")) && img[len(img)-1] != 0 {
		img = append(append(make([]byte, 0, len(image)+1), image...), 0)
	}
	var m uintptr
	err := d.call(fnModuleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0])))
	return Module(m), err
}

// UnloadModule unloads a module.
func (d *Driver) UnloadModule(m Module) error { return d.call(fnModuleUnload, uintptr(m)) }

// Function is a CUfunction, a kernel of a loaded module.
type Function uintptr

// Function looks up the kernel name (an extern "C" entry point) in m.
func (d *Driver) Function(m Module, name string) (Function, error) {
	var f uintptr
	cname := dl.CString(name)
	if err := d.call(fnModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return 0, fmt.Errorf("%w (kernel %s)", err, name)
	}
	return Function(f), nil
}

// funcAttrMaxDynamicSharedMemory is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const funcAttrMaxDynamicSharedMemory = 8

// SetMaxDynamicSharedMemory lets f launch with up to n bytes of dynamic
// shared memory (above 48 KiB needs the opt-in).
func (d *Driver) SetMaxDynamicSharedMemory(f Function, n int) error {
	return d.call(fnFuncSetAttribute, uintptr(f), funcAttrMaxDynamicSharedMemory, uintptr(n))
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Launch enqueues kernel f on stream s with the packed arguments p.
func (d *Driver) Launch(f Function, grid, block Dim3, sharedBytes int, s Stream, p *Params) error {
	if grid.X == 0 || grid.Y == 0 || grid.Z == 0 || block.X == 0 || block.Y == 0 || block.Z == 0 {
		return fmt.Errorf("cuda: cuLaunchKernel with an empty grid %v or block %v", grid, block)
	}
	ptrs := p.pointers()
	var pp uintptr
	if len(ptrs) > 0 {
		pp = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	err := d.call(fnLaunchKernel, uintptr(f),
		uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z),
		uintptr(sharedBytes), uintptr(s), pp, 0)
	// The driver copies the argument values during the call; the pointers
	// array points into p.slots, which must live until here.
	p.keepAlive()
	return err
}

// Graph is a CUgraph and GraphExec an instantiated, launchable graph.
type (
	Graph     uintptr
	GraphExec uintptr
)

// captureModeThreadLocal is CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: only this
// thread's unsafe calls (allocations, synchronous copies) invalidate the
// capture, so other goroutines' work is not affected.
const captureModeThreadLocal = 1

// BeginCapture starts recording the work enqueued on s into a graph instead
// of running it.
func (d *Driver) BeginCapture(s Stream) error {
	return d.call(fnStreamBeginCapture, uintptr(s), captureModeThreadLocal)
}

// EndCapture ends the capture on s and returns the recorded graph.
func (d *Driver) EndCapture(s Stream) (Graph, error) {
	var g uintptr
	err := d.call(fnStreamEndCapture, uintptr(s), uintptr(unsafe.Pointer(&g)))
	return Graph(g), err
}

// Instantiate makes a graph launchable.
func (d *Driver) Instantiate(g Graph) (GraphExec, error) {
	var e uintptr
	err := d.call(fnGraphInstantiate, uintptr(unsafe.Pointer(&e)), uintptr(g), 0)
	return GraphExec(e), err
}

// LaunchGraph enqueues an instantiated graph on s.
func (d *Driver) LaunchGraph(e GraphExec, s Stream) error {
	return d.call(fnGraphLaunch, uintptr(e), uintptr(s))
}

// DestroyGraphExec destroys an instantiated graph.
func (d *Driver) DestroyGraphExec(e GraphExec) error {
	return d.call(fnGraphExecDestroy, uintptr(e))
}

// DestroyGraph destroys a graph.
func (d *Driver) DestroyGraph(g Graph) error { return d.call(fnGraphDestroy, uintptr(g)) }
