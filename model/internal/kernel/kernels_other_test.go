//go:build !amd64 || purego

package kernel

import "testing"

// eachKernelSet runs f as one sub-benchmark named after the build's only
// kernel set.
func eachKernelSet(b *testing.B, f func(b *testing.B)) {
	b.Run("kernels="+Kernels(), f)
}
