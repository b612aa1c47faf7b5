// Package cuda is LiveHAT's CUDA backend for NVIDIA GPUs (H20/H200, sm_90,
// and any device of compute capability 7.0 or newer), written without cgo:
// the driver, NVRTC and cuBLAS are loaded at run time through purego, so
// the same binary runs on machines without a GPU and Open reports why it
// cannot, rather than the process exiting.
//
// Two ways to use it:
//
//   - Backend implements model.Backend: the model's matrix products run on
//     the GPU against weights uploaded once, while the rest of the forward
//     pass stays in Go. It plugs into model.Options{Backend: …} unchanged.
//   - Runner runs the whole Qwen2-family forward pass on the GPU: weights
//     uploaded once, each sequence's KV cache in device memory, every step
//     a chain of kernels (captured into a CUDA graph for decode steps), and
//     only the logits or the chosen tokens copied back.
//
// See README.md for the design, what is verified where, and why
// gorgonia.org/cu is not used.
package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/model/cuda/internal/cublas"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
	"github.com/livehat/livehat/model/cuda/internal/nvrtc"
)

// ErrNoDriver is wrapped by Open when no NVIDIA driver can be loaded.
var ErrNoDriver = driver.ErrNoDriver

// Options configure Open.
type Options struct {
	// Ordinal is the device index (0 is the first GPU).
	Ordinal int
	// PTXCacheDir is where NVRTC's PTX is cached; empty means
	// $LIVEHAT_PTX_CACHE or the user cache directory.
	PTXCacheDir string
	// NoCUBLAS keeps cuBLAS unloaded even when it is installed, so every
	// product runs on the backend's own kernels.
	NoCUBLAS bool
}

// Info describes an opened device.
type Info struct {
	Name          string
	Major, Minor  int   // compute capability
	SMs           int   // streaming multiprocessors
	MemoryBytes   int64 // device memory
	DriverVersion int   // CUDA version the driver supports, e.g. 12040
	// Kernels says where the kernels' PTX came from: "embedded PTX",
	// "NVRTC 12.4" or "NVRTC 12.4 (cached)", per module.
	Kernels string
	// CUBLAS is the loaded cuBLAS library, or "" when the backend's own
	// GEMM kernel serves large products.
	CUBLAS string
}

func (i Info) String() string {
	s := fmt.Sprintf("%s (sm_%d%d, %d SMs, %.1f GiB, driver CUDA %d.%d), kernels: %s",
		i.Name, i.Major, i.Minor, i.SMs, float64(i.MemoryBytes)/(1<<30), i.DriverVersion/1000, i.DriverVersion%1000/10, i.Kernels)
	if i.CUBLAS != "" {
		s += ", " + i.CUBLAS
	}
	return s
}

// Device is an opened GPU: its primary context, one stream all work goes
// to, and the loaded kernels. A Device is safe for concurrent use; its
// operations are serialised on the stream.
type Device struct {
	drv     *driver.Driver
	dev     driver.Device
	ctx     driver.Context
	stream  driver.Stream
	modules []driver.Module
	funcs   []driver.Function
	blas    *cublas.Handle
	info    Info

	mu     sync.Mutex
	closed bool
}

// Open opens GPU opts.Ordinal: it loads the driver, retains the device's
// primary context, creates a stream, and loads every kernel (generated PTX
// when it matches the sources, else compiled with NVRTC and cached).
// Without a driver it returns an error wrapping ErrNoDriver.
func Open(opts Options) (*Device, error) {
	drv, err := driver.Load()
	if err != nil {
		return nil, err
	}
	if err := drv.Init(); err != nil {
		return nil, fmt.Errorf("cuda: the driver did not initialise (no usable GPU?): %w", err)
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	if opts.Ordinal < 0 || opts.Ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d requested, %d present", opts.Ordinal, n)
	}
	d := &Device{drv: drv}
	if d.dev, err = drv.Device(opts.Ordinal); err != nil {
		return nil, err
	}
	if err := d.readInfo(); err != nil {
		return nil, err
	}
	arch := nvrtc.Arch{Major: d.info.Major, Minor: d.info.Minor}
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	if d.ctx, err = drv.RetainPrimaryContext(d.dev); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fail := func(err error) (*Device, error) {
		d.release()
		return nil, err
	}
	if err := drv.SetCurrent(d.ctx); err != nil {
		return fail(err)
	}
	if d.stream, err = drv.NewStream(); err != nil {
		return fail(err)
	}
	if err := d.loadKernels(arch, opts.PTXCacheDir); err != nil {
		return fail(err)
	}
	if !opts.NoCUBLAS {
		// cuBLAS is optional: its absence only means the own GEMM kernel.
		if lib, err := cublas.Load(); err == nil {
			if h, err := lib.Create(uintptr(d.stream)); err == nil {
				d.blas = h
				d.info.CUBLAS = lib.Path()
			}
		}
	}
	return d, nil
}

func (d *Device) readInfo() error {
	var err error
	attr := func(a driver.Attribute) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = d.drv.Attribute(d.dev, a)
		return v
	}
	d.info.Major = attr(driver.AttrComputeCapabilityMajor)
	d.info.Minor = attr(driver.AttrComputeCapabilityMinor)
	d.info.SMs = attr(driver.AttrMultiprocessorCount)
	if err != nil {
		return err
	}
	if d.info.Name, err = d.drv.DeviceName(d.dev); err != nil {
		return err
	}
	if d.info.MemoryBytes, err = d.drv.TotalMem(d.dev); err != nil {
		return err
	}
	d.info.DriverVersion, err = d.drv.Version()
	return err
}

// loadKernels loads one module per kernel source and looks up every entry
// point of the kernel table.
func (d *Device) loadKernels(arch nvrtc.Arch, cacheDir string) error {
	var compiler *nvrtc.Compiler
	var compilerVersion string
	if cacheDir == "" {
		cacheDir = nvrtc.DefaultCacheDir()
	}
	cache := nvrtc.Cache{Dir: cacheDir}
	compile := func(file, src string) ([]byte, string, error) {
		if compiler == nil {
			c, err := nvrtc.Load()
			if err != nil {
				return nil, "", fmt.Errorf("cuda: kernel %s has no current generated PTX and NVRTC is unavailable: %w", file, err)
			}
			v, err := c.Version()
			if err != nil {
				return nil, "", err
			}
			compiler, compilerVersion = c, v
		}
		opts := nvrtc.Options(arch)
		key := nvrtc.CacheKey(src, opts, compilerVersion)
		if ptx, ok := cache.Get(key); ok {
			return ptx, "NVRTC " + compilerVersion + " (cached)", nil
		}
		ptx, err := compiler.Compile(file, src, opts)
		if err != nil {
			return nil, "", err
		}
		// A cache that cannot be written costs a recompilation next
		// time, nothing more.
		_ = cache.Put(key, ptx)
		return ptx, "NVRTC " + compilerVersion, nil
	}

	table := kernels.Table()
	d.funcs = make([]driver.Function, len(table))
	sources := map[string]bool{}
	for _, file := range kernels.Files() {
		src, hash, err := kernels.Source(file)
		if err != nil {
			return err
		}
		var mod driver.Module
		loaded := false
		if ptx, target, ok := kernels.GeneratedPTX(file, hash); ok && targetFits(target, arch) {
			m, err := d.drv.LoadModule(ptx)
			switch {
			case err == nil:
				mod, loaded = m, true
				sources["embedded PTX"] = true
			case driver.IsCode(err, driver.ErrorUnsupportedPTX), driver.IsCode(err, driver.ErrorInvalidPTX):
				// PTX from a newer toolkit than the driver: recompile
				// with the NVRTC that matches this machine.
			default:
				return fmt.Errorf("cuda: loading %s: %w", kernels.PTXName(file), err)
			}
		}
		if !loaded {
			ptx, how, err := compile(file, src)
			if err != nil {
				return err
			}
			mod, err = d.drv.LoadModule(ptx)
			if driver.IsCode(err, driver.ErrorUnsupportedPTX) {
				// NVRTC is newer than the driver (a pip wheel's, say): its
				// PTX ISA is unknown to the driver, but a cubin of the
				// same major CUDA version runs.
				cubin, cerr := compiler.CompileCUBIN(file, src, nvrtc.CUBINOptions(arch))
				if cerr != nil {
					return fmt.Errorf("cuda: %s: the driver refuses NVRTC's PTX (%v) and compiling a cubin failed: %w", file, err, cerr)
				}
				mod, err = d.drv.LoadModule(cubin)
				how = "NVRTC " + compilerVersion + " (cubin)"
			}
			if err != nil {
				return fmt.Errorf("cuda: loading the compiled %s: %w", file, err)
			}
			sources[how] = true
		}
		d.modules = append(d.modules, mod)
		for id, s := range table {
			if s.File != file {
				continue
			}
			f, err := d.drv.Function(mod, s.Name)
			if err != nil {
				return err
			}
			d.funcs[id] = f
		}
	}
	var how []string
	for h := range sources {
		how = append(how, h)
	}
	slices.Sort(how)
	d.info.Kernels = strings.Join(how, ", ")
	return nil
}

// targetFits reports whether PTX for target ("sm_90") runs on arch: PTX is
// forward compatible, so its target must not exceed the device.
func targetFits(target string, arch nvrtc.Arch) bool {
	var major, minor int
	t := strings.TrimSuffix(strings.TrimPrefix(target, "sm_"), "a")
	if len(t) < 2 {
		return false
	}
	if _, err := fmt.Sscanf(t[:len(t)-1]+" "+t[len(t)-1:], "%d %d", &major, &minor); err != nil {
		return false
	}
	return major < arch.Major || (major == arch.Major && minor <= arch.Minor)
}

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Close releases the stream, modules, cuBLAS handle and primary context.
// Memory held by Runners and Backends must be released first.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.SetCurrent(d.ctx); err != nil {
		return err
	}
	return d.release()
}

// release frees what Open acquired; the context is current.
func (d *Device) release() error {
	var errs []error
	if d.stream != 0 {
		errs = append(errs, d.drv.SyncStream(d.stream))
	}
	if d.blas != nil {
		errs = append(errs, d.blas.Destroy())
	}
	for _, m := range d.modules {
		errs = append(errs, d.drv.UnloadModule(m))
	}
	if d.stream != 0 {
		errs = append(errs, d.drv.DestroyStream(d.stream))
	}
	errs = append(errs, d.drv.ReleasePrimaryContext(d.dev))
	return errors.Join(errs...)
}

// do runs fn with the device's context current on a locked OS thread and
// the device to itself: a CUDA context is current per thread, and Go
// moves goroutines between threads.
func (d *Device) do(fn func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errors.New("cuda: device is closed")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.SetCurrent(d.ctx); err != nil {
		return err
	}
	return fn()
}

// The executor methods below run inside do.

func (d *Device) alloc(n int64) (driver.Ptr, error) { return d.drv.Alloc(n) }

func (d *Device) free(p driver.Ptr) error {
	// Kernels in flight may still read the memory.
	if err := d.drv.SyncStream(d.stream); err != nil {
		return err
	}
	return d.drv.Free(p)
}

func (d *Device) upload(dst driver.Ptr, src []byte) error {
	return driver.CopyToDeviceAsync(d.drv, dst, src, d.stream)
}

func (d *Device) download(dst []byte, src driver.Ptr) error {
	if err := driver.CopyFromDeviceAsync(d.drv, dst, src, d.stream); err != nil {
		return err
	}
	return d.drv.SyncStream(d.stream)
}

func (d *Device) copyDevice(dst, src driver.Ptr, n int64) error {
	return d.drv.CopyDeviceAsync(dst, src, n, d.stream)
}

func (d *Device) launch(id kernels.ID, g kernels.Geometry, args []arg) error {
	if err := checkArgs(id, args); err != nil {
		return err
	}
	var p driver.Params
	for _, a := range args {
		p.U64(a.bits)
	}
	if err := d.drv.Launch(d.funcs[id], g.Grid, g.Block, 0, d.stream, &p); err != nil {
		return fmt.Errorf("%w (kernel %s, grid %v, block %v)", err, kernels.Table()[id].Name, g.Grid, g.Block)
	}
	return nil
}

func (d *Device) hasGemm() bool { return d.blas != nil }

func (d *Device) gemm(m, n, k int, a, b cublas.Operand, c driver.Ptr, ldc int) error {
	return d.blas.Gemm(m, n, k, 1, a, b, 0, uint64(c), ldc)
}

func (d *Device) capture(fn func() error) (graph, error) {
	if err := d.drv.BeginCapture(d.stream); err != nil {
		return graph{}, err
	}
	ferr := fn()
	g, err := d.drv.EndCapture(d.stream)
	if ferr != nil || err != nil {
		if g != 0 {
			d.drv.DestroyGraph(g)
		}
		return graph{}, errors.Join(ferr, err)
	}
	exec, err := d.drv.Instantiate(g)
	if err != nil {
		d.drv.DestroyGraph(g)
		return graph{}, err
	}
	return graph{g: g, exec: exec}, nil
}

func (d *Device) replay(g graph) error { return d.drv.LaunchGraph(g.exec, d.stream) }

func (d *Device) destroy(g graph) error {
	return errors.Join(d.drv.DestroyGraphExec(g.exec), d.drv.DestroyGraph(g.g))
}

func (d *Device) sync() error { return d.drv.SyncStream(d.stream) }

// Time runs fn, which enqueues work on the device through a Runner or
// Backend, and returns the GPU time between events recorded on the
// device's stream before and after it: the device's share of fn's wall
// time.
func (d *Device) Time(fn func() error) (time.Duration, error) {
	var start, end driver.Event
	err := d.do(func() error {
		var err error
		if start, err = d.drv.NewEvent(); err != nil {
			return err
		}
		if end, err = d.drv.NewEvent(); err != nil {
			return err
		}
		return d.drv.Record(start, d.stream)
	})
	defer d.do(func() error {
		var errs []error
		for _, e := range []driver.Event{start, end} {
			if e != 0 {
				errs = append(errs, d.drv.DestroyEvent(e))
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	var ms float32
	err = d.do(func() error {
		if err := d.drv.Record(end, d.stream); err != nil {
			return err
		}
		if err := d.drv.SyncEvent(end); err != nil {
			return err
		}
		var err error
		ms, err = d.drv.Elapsed(start, end)
		return err
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// MemInfo returns the device's free and total memory.
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.do(func() error {
		free, total, err = d.drv.MemInfo()
		return err
	})
	return free, total, err
}

// envBackend is the environment variable that selects the backend.
const envBackend = "LIVEHAT_BACKEND"

// BackendName returns the backend LIVEHAT_BACKEND selects: "cpu" (also
// when unset) or "cuda"; any other value is an error naming the choices.
func BackendName() (string, error) { return parseBackendName(os.Getenv(envBackend)) }

func parseBackendName(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "", "cpu":
		return "cpu", nil
	case "cuda", "gpu":
		return "cuda", nil
	default:
		return "", fmt.Errorf("cuda: %s=%q: want cpu or cuda", envBackend, v)
	}
}
