package kernel

import "fmt"

// Dot returns Σ a[i]·b[i]. It panics if the lengths differ.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("kernel: Dot: lengths %d and %d differ", len(a), len(b)))
	}
	return dotF32(a, b)
}
