//go:build !purego

package kernel

import "testing"

// TestPortableDispatch runs the kernel tests with the assembly switched
// off, as on an amd64 CPU without AVX2 or FMA, so the dispatch's fallback
// branches are checked on machines that do have them.
func TestPortableDispatch(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2/FMA here: every other test already runs the portable kernels")
	}
	if raceEnabled {
		t.Skip("the fallback branches are checked without -race; they add no concurrency")
	}
	hasAVX2FMA, q8Int16Kernels = false, false
	defer func() { hasAVX2FMA, q8Int16Kernels = true, true }()
	t.Run("Sgemm", TestSgemm)
	t.Run("MatMul", TestMatMul)
	t.Run("GemvAxpy", TestGemvAxpy)
	t.Run("Dot", TestDot)
	t.Run("Q8Int16", TestQ8Int16)
	t.Run("Q8BatchConsistency", TestQ8BatchConsistency)
	t.Run("Exp", TestExp)
	t.Run("Softmax", TestSoftmax)
}
