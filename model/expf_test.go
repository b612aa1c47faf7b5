package model

import (
	"math"
	"math/rand/v2"
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

// swiglu's vector exp gives bit for bit the scalar silu(g)·u the trainer's
// forward pass computes, at widths that leave partial blocks and at the
// edges of exp's range.
func TestSwigluMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	edges := []float32{0, float32(math.Copysign(0, -1)), 88.8, -88.8, 100, -100, 1e-30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for _, dim := range []int{1, 7, 8, 63, 64, 65, 200, 384} {
		const n = 3
		gate, up := make([]float32, n*dim), make([]float32, n*dim)
		for i := range gate {
			gate[i], up[i] = float32(rng.NormFloat64()*4), float32(rng.NormFloat64())
			if i%11 == 0 {
				gate[i] = edges[(i/11)%len(edges)]
			}
		}
		want := make([]float32, len(gate))
		for i, v := range gate {
			want[i] = v / (1 + Exp32(-v)) * up[i]
		}
		swiglu(NewCPU(1), gate, up, n, dim)
		for i := range want {
			if math.Float32bits(gate[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(gate[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("dim %d, element %d: %v, want %v", dim, i, gate[i], want[i])
			}
		}
	}
}
