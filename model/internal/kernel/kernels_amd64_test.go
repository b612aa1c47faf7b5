//go:build !purego

package kernel

import (
	"strings"
	"testing"
)

// useKernels switches the kernel set for the rest of a test and back at
// its end. Tests that switch must not run in parallel with others.
func useKernels(t *testing.T, name string) {
	t.Helper()
	saved := isa
	isa = levelOf(name)
	t.Cleanup(func() { isa = saved })
}

// eachKernelSet runs f as a sub-benchmark per assembly kernel set of this
// machine ("kernels=avx512", "kernels=avx2"), so that one run compares them.
func eachKernelSet(b *testing.B, f func(b *testing.B)) {
	for _, set := range availableKernelSets() {
		if set == isaNames[isaGo] {
			continue
		}
		b.Run("kernels="+set, func(b *testing.B) {
			saved := isa
			isa = levelOf(set)
			defer func() { isa = saved }()
			f(b)
		})
	}
}

// TestEveryKernelSet runs the numeric tests on every kernel set this
// machine has besides the default one (which every other test runs): the
// AVX2 kernels on an AVX-512 machine, and the portable Go loops behind the
// dispatch, as on an amd64 CPU without AVX2. CI's machines have AVX-512, so
// there all three run; -tags purego builds without any assembly.
func TestEveryKernelSet(t *testing.T) {
	if raceEnabled {
		t.Skip("the other kernel sets are checked without -race; they add no concurrency")
	}
	t.Logf("kernel sets here: %s (default %s)", strings.Join(availableKernelSets(), ", "), Kernels())
	for _, set := range availableKernelSets() {
		if set == Kernels() {
			continue
		}
		t.Run(set, func(t *testing.T) {
			useKernels(t, set)
			for _, tc := range numericTests {
				t.Run(tc.name, tc.test)
			}
		})
	}
}

// numericTests are the tests that compare kernels with the reference.
var numericTests = []struct {
	name string
	test func(*testing.T)
}{
	{"Sgemm", TestSgemm},
	{"MatMul", TestMatMul},
	{"RowKernels", TestRowKernels},
	{"GemvAxpy", TestGemvAxpy},
	{"Dot", TestDot},
	{"Q8Int16", TestQ8Int16},
	{"Q8Exact", TestQ8Exact},
	{"Q8BatchConsistency", TestQ8BatchConsistency},
	{"Exp", TestExp},
	{"Softmax", TestSoftmax},
}

func TestKernelSetNames(t *testing.T) {
	avail := availableKernelSets()
	if avail[len(avail)-1] != "purego" {
		t.Errorf("available sets %v do not end with the portable one", avail)
	}
	for _, set := range avail {
		if got := isaNames[levelOf(set)]; got != set {
			t.Errorf("level of %q names %q", set, got)
		}
	}
	if cpuHas.avx512 && !cpuHas.avx2FMA || cpuHas.vnni && !cpuHas.avx512 {
		t.Errorf("inconsistent CPU features %+v", cpuHas)
	}
}
