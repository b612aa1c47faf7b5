package engine

import (
	"errors"
	"fmt"
)

// Kinds of call failure. A *CallError wraps exactly one of them, so callers
// test with errors.Is.
var (
	ErrTimeout        = errors.New("deadline exceeded")
	ErrCanceled       = errors.New("call canceled")
	ErrTrap           = errors.New("plugin trapped")
	ErrOutOfMemory    = errors.New("plugin ran out of memory")
	ErrPermission     = errors.New("permission denied")
	ErrOutputTooLarge = errors.New("output too large")
	ErrInputTooLarge  = errors.New("input too large")
	ErrBadPointer     = errors.New("bad pointer")
	ErrHostMemory     = errors.New("host memory limit")
	ErrQuota          = errors.New("key-value quota exceeded")
	ErrGuest          = errors.New("plugin returned an error")
	ErrNoExport       = errors.New("no such export")
	ErrClosed         = errors.New("plugin closed")
	ErrHostEnv        = errors.New("host environment failed")
)

// CallError is the error of one failed plugin call.
type CallError struct {
	// Plugin is "name@version"; Export the function called.
	Plugin, Export string
	// Kind is one of the Err* values of this package.
	Kind error
	// Detail is what happened, in words: the guest's error message, the
	// trap, or the tail of what the guest printed to stderr.
	Detail string
	// Discarded reports that the instance was thrown away and replaced.
	Discarded bool
	// ExitCode is the status the guest passed to WASI proc_exit when that
	// ended the call (Kind ErrTrap); 0 otherwise. An exit with status 0
	// ends a call as if the export returned 0 (as in Extism), and a Go
	// guest's exit after running out of memory is ErrOutOfMemory.
	ExitCode uint32
}

// Error implements error.
func (e *CallError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("plugin %s: %s: %v", e.Plugin, e.Export, e.Kind)
	}
	return fmt.Sprintf("plugin %s: %s: %v: %s", e.Plugin, e.Export, e.Kind, e.Detail)
}

// Unwrap returns the kind, for errors.Is.
func (e *CallError) Unwrap() error { return e.Kind }
