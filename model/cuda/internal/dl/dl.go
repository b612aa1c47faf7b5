// Package dl loads C shared libraries at run time through purego (no cgo, no
// headers) and resolves tables of symbols from them. A missing library is an
// ordinary error, so a binary that links the CUDA backend still runs where
// no driver is installed.
package dl

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Symbol is one C function a binding calls: the exported names that provide
// it, in order of preference (a newer versioned name first, an older one as
// a fallback), and whether the binding can work without it.
type Symbol struct {
	Names    []string
	Optional bool
}

// Library is an opened shared library.
type Library struct {
	// Path is the name the library was opened by.
	Path   string
	handle uintptr
}

// ErrNotFound is wrapped by Open when none of the candidate libraries loads.
var ErrNotFound = errors.New("shared library not found")

// Open opens the first of candidates that loads. The error lists every
// candidate with the loader's reason.
func Open(candidates ...string) (*Library, error) {
	if len(candidates) == 0 {
		return nil, errors.New("dl: no library names given")
	}
	var reasons []string
	for _, name := range candidates {
		h, err := dlopen(name)
		if err == nil {
			return &Library{Path: name, handle: h}, nil
		}
		reasons = append(reasons, fmt.Sprintf("%s: %v", name, err))
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, strings.Join(reasons, "; "))
}

// Resolve looks up every symbol of table and returns their addresses in the
// same order; an optional symbol that is absent resolves to 0. The error
// names every required symbol that is missing.
func (l *Library) Resolve(table []Symbol) ([]uintptr, error) {
	addrs := make([]uintptr, len(table))
	var missing []string
	for i, s := range table {
		for _, name := range s.Names {
			if p, err := dlsym(l.handle, name); err == nil && p != 0 {
				addrs[i] = p
				break
			}
		}
		if addrs[i] == 0 && !s.Optional {
			missing = append(missing, strings.Join(s.Names, " or "))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dl: %s lacks %s", l.Path, strings.Join(missing, ", "))
	}
	return addrs, nil
}

// CString returns s as a NUL-terminated byte slice; pass &b[0] to C and keep
// b alive until the call returns.
func CString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// GoString copies the NUL-terminated C string at p (at most limit bytes).
// A zero p gives "".
func GoString(p uintptr, limit int) string {
	if p == 0 {
		return ""
	}
	base := ptr(p)
	n := 0
	for n < limit && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

// ptr turns a C address into an unsafe.Pointer. C memory is not managed by
// the Go collector, so holding it as a pointer is safe; the indirection
// keeps vet's uintptr-conversion check quiet for this one deliberate case.
func ptr(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// Call calls the C function at fn with integer and pointer arguments and
// returns its integer result. Every CUDA, NVRTC and cuBLAS entry point the
// bindings use takes only integers and pointers (floats go by pointer), which
// is what purego's SyscallN passes correctly. Like SyscallN, Call keeps
// the Go objects whose addresses are converted to uintptr in its argument
// list alive and unmoved until it returns.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	return syscall(fn, args...)
}
