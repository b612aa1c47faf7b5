// Package nvrtc compiles CUDA C++ kernel sources to PTX at run time with
// NVIDIA's run-time compiler (libnvrtc, loaded through purego), and caches
// the PTX on disk keyed by the source, the options and the compiler
// version, so a process compiles its kernels once per machine rather than
// at every start.
package nvrtc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/livehat/livehat/model/cuda/internal/dl"
)

// LibraryNames are the names libnvrtc is opened by, newest first; the
// environment variable LIVEHAT_NVRTC, when set, is tried before them (a
// full path, e.g. into a pip-installed nvidia-cuda-nvrtc wheel).
func LibraryNames(env string) []string {
	names := []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}
	if env != "" {
		names = append([]string{env}, names...)
	}
	return names
}

// ErrNoCompiler is wrapped by Load when libnvrtc cannot be opened.
var ErrNoCompiler = errors.New("cuda: no NVRTC (libnvrtc.so) to compile kernels")

const (
	fnVersion = iota
	fnCreateProgram
	fnCompileProgram
	fnGetPTXSize
	fnGetPTX
	fnGetProgramLogSize
	fnGetProgramLog
	fnDestroyProgram
	fnGetErrorString
	fnGetCUBINSize
	fnGetCUBIN
	numFns
)

// symbols is the NVRTC symbol table, in fn order; the API has been stable
// since CUDA 7 and has no versioned names.
func symbols() []dl.Symbol {
	one := func(n string) dl.Symbol { return dl.Symbol{Names: []string{n}} }
	return []dl.Symbol{
		fnVersion:           one("nvrtcVersion"),
		fnCreateProgram:     one("nvrtcCreateProgram"),
		fnCompileProgram:    one("nvrtcCompileProgram"),
		fnGetPTXSize:        one("nvrtcGetPTXSize"),
		fnGetPTX:            one("nvrtcGetPTX"),
		fnGetProgramLogSize: one("nvrtcGetProgramLogSize"),
		fnGetProgramLog:     one("nvrtcGetProgramLog"),
		fnDestroyProgram:    one("nvrtcDestroyProgram"),
		fnGetErrorString:    one("nvrtcGetErrorString"),
		// CUDA 11.1+: device code (SASS) for a real architecture.
		fnGetCUBINSize: {Names: []string{"nvrtcGetCUBINSize"}, Optional: true},
		fnGetCUBIN:     {Names: []string{"nvrtcGetCUBIN"}, Optional: true},
	}
}

// Compiler is the loaded NVRTC library.
type Compiler struct {
	lib   *dl.Library
	addrs []uintptr
}

// Load opens libnvrtc (LIVEHAT_NVRTC first when set).
func Load() (*Compiler, error) {
	lib, err := dl.Open(LibraryNames(os.Getenv("LIVEHAT_NVRTC"))...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCompiler, err)
	}
	addrs, err := lib.Resolve(symbols())
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return &Compiler{lib: lib, addrs: addrs}, nil
}

// Error is a failed NVRTC call.
type Error struct {
	Op   string
	Code int32
	Name string // nvrtcGetErrorString, e.g. NVRTC_ERROR_COMPILATION
	// Log is the compiler's log for a failed compilation.
	Log string
}

func (e *Error) Error() string {
	if e.Log != "" {
		return fmt.Sprintf("nvrtc: %s: %s:\n%s", e.Op, e.Name, e.Log)
	}
	return fmt.Sprintf("nvrtc: %s: %s", e.Op, e.Name)
}

//go:uintptrescapes
func (c *Compiler) call(f int, args ...uintptr) error {
	r := int32(dl.Call(c.addrs[f], args...))
	if r == 0 {
		return nil
	}
	name := dl.GoString(dl.Call(c.addrs[fnGetErrorString], uintptr(r)), 256)
	if name == "" {
		name = fmt.Sprintf("nvrtcResult(%d)", r)
	}
	return &Error{Op: symbols()[f].Names[0], Code: r, Name: name}
}

// Version returns NVRTC's version as "major.minor".
func (c *Compiler) Version() (string, error) {
	var major, minor int32
	if err := c.call(fnVersion, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", major, minor), nil
}

// Compile compiles one CUDA C++ source (without #include of system headers:
// NVRTC has none) named name with options, and returns its PTX. A
// compilation error carries the program log.
func (c *Compiler) Compile(name, src string, options []string) ([]byte, error) {
	ptx, err := c.compile(name, src, options, fnGetPTXSize, fnGetPTX)
	if err != nil {
		return nil, err
	}
	// NVRTC counts the terminating NUL in the size.
	for len(ptx) > 0 && ptx[len(ptx)-1] == 0 {
		ptx = ptx[:len(ptx)-1]
	}
	return ptx, nil
}

// CompileCUBIN compiles the source to device code for a real architecture
// (options from CUBINOptions). A driver refuses PTX whose ISA version is
// newer than it knows (NVRTC newer than the driver, as when NVRTC comes
// from a pip wheel), but runs a cubin of its major CUDA version, so this is
// the fallback for CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
func (c *Compiler) CompileCUBIN(name, src string, options []string) ([]byte, error) {
	if c.addrs[fnGetCUBIN] == 0 || c.addrs[fnGetCUBINSize] == 0 {
		return nil, fmt.Errorf("nvrtc: %s has no nvrtcGetCUBIN (CUDA 11.1 or newer is needed)", c.lib.Path)
	}
	return c.compile(name, src, options, fnGetCUBINSize, fnGetCUBIN)
}

// compile runs one compilation and returns the output that the size and
// get entry points read (PTX or cubin).
func (c *Compiler) compile(name, src string, options []string, sizeFn, getFn int) ([]byte, error) {
	csrc, cname := dl.CString(src), dl.CString(name)
	var prog uintptr
	if err := c.call(fnCreateProgram, uintptr(unsafe.Pointer(&prog)), uintptr(unsafe.Pointer(&csrc[0])),
		uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0); err != nil {
		return nil, fmt.Errorf("%w (program %s)", err, name)
	}
	defer c.call(fnDestroyProgram, uintptr(unsafe.Pointer(&prog)))

	// The options array holds C string addresses as integers, so the
	// strings are kept alive explicitly until the call returns.
	copts := make([][]byte, len(options))
	ptrs := make([]uintptr, len(options)+1)
	for i, o := range options {
		copts[i] = dl.CString(o)
		ptrs[i] = uintptr(unsafe.Pointer(&copts[i][0]))
	}
	err := c.call(fnCompileProgram, prog, uintptr(len(options)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(copts)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Log = c.log(prog)
		}
		return nil, fmt.Errorf("%w (program %s)", err, name)
	}
	var size uint64
	if err := c.call(sizeFn, prog, uintptr(unsafe.Pointer(&size))); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("nvrtc: program %s produced no output", name)
	}
	out := make([]byte, size)
	if err := c.call(getFn, prog, uintptr(unsafe.Pointer(&out[0]))); err != nil {
		return nil, err
	}
	return out, nil
}

// log returns the program's compilation log.
func (c *Compiler) log(prog uintptr) string {
	var size uint64
	if c.call(fnGetProgramLogSize, prog, uintptr(unsafe.Pointer(&size))) != nil || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if c.call(fnGetProgramLog, prog, uintptr(unsafe.Pointer(&buf[0]))) != nil {
		return ""
	}
	return dl.GoString(uintptr(unsafe.Pointer(&buf[0])), len(buf))
}
