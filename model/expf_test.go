package model

import (
	"math"
	"testing"
)

// expf stays within 4e-7 relative error of math.Exp over the range softmax
// and SiLU use, and handles the edges.
func TestExpf(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x < 88; x += 0.001237 {
		want := math.Exp(float64(x))
		got := float64(Exp32(x))
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 4e-7 {
		t.Errorf("worst relative error %.2e > 4e-7", worst)
	}
	if Exp32(0) != 1 || Exp32(-100) != 0 || !math.IsInf(float64(Exp32(100)), 1) || !math.IsNaN(float64(Exp32(float32(math.NaN())))) {
		t.Error("edge cases wrong")
	}
}

func BenchmarkExpf(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(i)/256 - 12
	}
	b.Run("expf", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for _, x := range xs {
				s += Exp32(x)
			}
		}
		_ = s
	})
	b.Run("math.Exp", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for _, x := range xs {
				s += float32(math.Exp(float64(x)))
			}
		}
		_ = s
	})
}
