package driver

import (
	"errors"
	"fmt"
)

// Result is a CUresult, the status every driver call returns.
type Result int32

// Success is CUDA_SUCCESS.
const Success Result = 0

// Results the binding tests for by value.
const (
	ErrorInvalidValue       Result = 1
	ErrorOutOfMemory        Result = 2
	ErrorNoDevice           Result = 100
	ErrorInvalidPTX         Result = 218
	ErrorUnsupportedPTX     Result = 222
	ErrorStreamCaptureUnsup Result = 900
)

// resultNames names the CUresult codes as cuda.h does. The driver's own
// cuGetErrorName is preferred; this table names codes when it is not
// loaded or does not know a code, so an error is never a bare number.
func resultNames() map[Result]string {
	return map[Result]string{
		0:   "CUDA_SUCCESS",
		1:   "CUDA_ERROR_INVALID_VALUE",
		2:   "CUDA_ERROR_OUT_OF_MEMORY",
		3:   "CUDA_ERROR_NOT_INITIALIZED",
		4:   "CUDA_ERROR_DEINITIALIZED",
		34:  "CUDA_ERROR_STUB_LIBRARY",
		46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
		100: "CUDA_ERROR_NO_DEVICE",
		101: "CUDA_ERROR_INVALID_DEVICE",
		102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
		200: "CUDA_ERROR_INVALID_IMAGE",
		201: "CUDA_ERROR_INVALID_CONTEXT",
		209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
		218: "CUDA_ERROR_INVALID_PTX",
		221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
		222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		300: "CUDA_ERROR_INVALID_SOURCE",
		301: "CUDA_ERROR_FILE_NOT_FOUND",
		400: "CUDA_ERROR_INVALID_HANDLE",
		500: "CUDA_ERROR_NOT_FOUND",
		600: "CUDA_ERROR_NOT_READY",
		700: "CUDA_ERROR_ILLEGAL_ADDRESS",
		701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
		702: "CUDA_ERROR_LAUNCH_TIMEOUT",
		719: "CUDA_ERROR_LAUNCH_FAILED",
		800: "CUDA_ERROR_NOT_PERMITTED",
		801: "CUDA_ERROR_NOT_SUPPORTED",
		803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
		804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
		900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
		901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
		999: "CUDA_ERROR_UNKNOWN",
	}
}

// Name returns the cuda.h name of r, or "CUresult(n)" for a code the table
// does not know.
func (r Result) Name() string {
	if n, ok := resultNames()[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", int32(r))
}

// Error is a failed driver call.
type Error struct {
	// Op is the driver function that failed, e.g. "cuMemAlloc_v2".
	Op string
	// Code is its CUresult.
	Code Result
	// Name is the code's name (from cuGetErrorName when the driver is
	// loaded) and Text its description (cuGetErrorString), possibly empty.
	Name, Text string
}

func (e *Error) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("cuda: %s: %s (%s)", e.Op, e.Name, e.Text)
	}
	return fmt.Sprintf("cuda: %s: %s", e.Op, e.Name)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &driver.Error{Code: driver.ErrorOutOfMemory}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// IsCode reports whether err wraps a driver error with code c.
func IsCode(err error, c Result) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}
