//go:build !(linux || darwin || freebsd || netbsd)

package dl

import (
	"errors"
	"runtime"
)

var errUnsupported = errors.New("run-time library loading is not supported on " + runtime.GOOS)

func dlopen(string) (uintptr, error) { return 0, errUnsupported }

func dlsym(uintptr, string) (uintptr, error) { return 0, errUnsupported }

func syscall(uintptr, ...uintptr) uintptr { panic(errUnsupported) }
