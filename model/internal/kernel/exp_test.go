package kernel

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// expEdgeCases are inputs where Exp32 branches, saturates or rounds
// specially, with the float32 neighbours of each.
func expEdgeCases() []float32 {
	bits := []uint32{
		0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fc12345, // NaNs, quiet and signalling
		0x7f800000, 0xff800000, // ±Inf
		0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, // zeros, subnormals
		0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, // smallest normals, largest finite
	}
	var xs []float32
	for _, b := range bits {
		xs = append(xs, math.Float32frombits(b))
	}
	around := []float32{expMin, expMax, -87.5, 88.7228, 88.5, -126 * math.Ln2, 128 * math.Ln2, 0.5, -0.5, 1, -1}
	// Where t = x·log2e is k ± 1/2, the rounding of n flips.
	for k := -127; k <= 128; k++ {
		around = append(around, (float32(k)+0.5)*math.Ln2, (float32(k)-0.5)*math.Ln2)
	}
	for _, x := range around {
		xs = append(xs, x)
		up, down := x, x
		for range 4 {
			up = math.Nextafter32(up, float32(math.Inf(1)))
			down = math.Nextafter32(down, float32(math.Inf(-1)))
			xs = append(xs, up, down)
		}
	}
	return xs
}

// expSweep is the edge cases, a dense sweep of [-100, 100] and a strided
// walk over all 2³² bit patterns.
func expSweep() []float32 {
	xs := expEdgeCases()
	step := float32(0.0003)
	if raceEnabled {
		step = 0.01
	}
	for x := float32(-100); x <= 100; x += step {
		xs = append(xs, x)
	}
	stride := uint32(4099)
	if raceEnabled {
		stride = 65537
	}
	for b := uint64(0); b < 1<<32; b += uint64(stride) {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	return xs
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

func TestExp(t *testing.T) {
	xs := expSweep()
	got := make([]float32, len(xs))
	Exp(got, xs)
	bad := 0
	for i, x := range xs {
		if want := Exp32(x); !sameBits(got[i], want) {
			if bad++; bad <= 10 {
				t.Errorf("Exp(%g = %#08x) = %#08x, Exp32 gives %#08x", x, math.Float32bits(x), math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d values differ from Exp32", bad, len(xs))
	}

	// Every length to 40 at every alignment, in place and not, so each
	// tail and unaligned load is covered; the slots around dst stay put.
	rng := rand.New(rand.NewPCG(1, 2))
	edges := expEdgeCases()
	for n := range 41 {
		for off := range 8 {
			src := make([]float32, off+n)
			for i := range src {
				if rng.IntN(4) == 0 {
					src[i] = edges[rng.IntN(len(edges))]
				} else {
					src[i] = float32(rng.NormFloat64() * 30)
				}
			}
			buf := make([]float32, off+n+1)
			for i := range buf {
				buf[i] = -7
			}
			dst := buf[off : off+n]
			Exp(dst, src[off:])
			inPlace := append([]float32(nil), src...)
			Exp(inPlace[off:], inPlace[off:])
			for i, x := range src[off:] {
				want := Exp32(x)
				if !sameBits(dst[i], want) || !sameBits(inPlace[off+i], want) {
					t.Fatalf("n=%d off=%d: Exp(%g) = %g (in place %g), want %g", n, off, x, dst[i], inPlace[off+i], want)
				}
			}
			for i, v := range buf {
				if (i < off || i >= off+n) && v != -7 {
					t.Fatalf("n=%d off=%d: Exp wrote outside dst at %d", n, off, i)
				}
			}
		}
	}
}

func TestExpPanicsOnLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Exp with lengths 3 and 4 did not panic")
		}
	}()
	Exp(make([]float32, 3), make([]float32, 4))
}

// checkSoftmax compares Softmax with softmaxGo bit for bit on a copy of x.
func checkSoftmax(t *testing.T, name string, x []float32) {
	t.Helper()
	want := append([]float32(nil), x...)
	softmaxGo(want)
	got := append([]float32(nil), x...)
	Softmax(got)
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s (n=%d): element %d is %g (%#08x), the scalar loop gives %g (%#08x)",
				name, len(x), i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

func TestSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	lengths := []int{2048, 1000, 333}
	for n := range 41 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, scale := range []float64{0.01, 1, 8, 100, 1e30} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * scale)
			}
			checkSoftmax(t, "normal", x)
		}
		if n == 0 {
			continue
		}
		x := make([]float32, n)
		checkSoftmax(t, "zeros", x)
		for i := range x {
			if rng.IntN(2) == 0 {
				x[i] = float32(math.Copysign(0, -1))
			}
		}
		checkSoftmax(t, "signed zeros", x)
		for i := range x {
			x[i] = float32(math.Copysign(0, -1))
		}
		checkSoftmax(t, "negative zeros", x)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			if rng.IntN(3) == 0 {
				x[i] = -inf // masked scores
			}
		}
		checkSoftmax(t, "with -Inf", x)
		for i := range x {
			x[i] = math.Float32frombits(rng.Uint32())
			if x[i] != x[i] {
				x[i] = 1
			}
		}
		checkSoftmax(t, "any finite or infinite bits", x)
		for i := range x {
			x[i] = math.Float32frombits(rng.Uint32N(0x00800000) | rng.Uint32N(2)<<31)
		}
		checkSoftmax(t, "subnormals", x)
		for _, special := range []float32{nan, inf, -inf} {
			y := append([]float32(nil), x...)
			y[rng.IntN(n)] = special
			checkSoftmax(t, "one special value", y)
			for i := range y {
				y[i] = special
			}
			checkSoftmax(t, "all special", y)
		}
	}

	// Unaligned rows inside a larger slice, as attention's score rows are.
	buf := make([]float32, 64)
	for i := range buf {
		buf[i] = float32(rng.NormFloat64() * 4)
	}
	for off := range 8 {
		for n := 8; n+off <= len(buf); n += 5 {
			checkSoftmax(t, "unaligned", buf[off:off+n])
		}
	}
}

// FuzzExp checks Exp and Softmax against Exp32 and the scalar loop on
// arbitrary float32 bits (four little-endian bytes each; the length sets
// the tail the assembly leaves).
func FuzzExp(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint32(nil, 0x7f800001))
	seed := make([]byte, 0, 4*19)
	for i := range 19 {
		seed = binary.LittleEndian.AppendUint32(seed, math.Float32bits(float32(i)*9.75-90))
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		xs := make([]float32, len(data)/4)
		for i := range xs {
			xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		got := make([]float32, len(xs))
		Exp(got, xs)
		for i, x := range xs {
			if want := Exp32(x); !sameBits(got[i], want) {
				t.Fatalf("Exp(%#08x) = %#08x, Exp32 gives %#08x", math.Float32bits(x), math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		checkSoftmax(t, "fuzz", xs)
	})
}

// BenchmarkSoftmax normalises one 2048-score row (an attention row over a
// long prompt) with the scalar loop and with Softmax, and exponentiates
// it with Exp32 in a loop and with Exp.
func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, 2048)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 4)
	}
	x := make([]float32, len(src))
	for _, bc := range []struct {
		name string
		fn   func([]float32)
	}{
		{"softmax/scalar", softmaxGo},
		{"softmax/vector", Softmax},
		{"exp/scalar", func(x []float32) { expGo(x, src) }},
		{"exp/vector", func(x []float32) { Exp(x, src) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				copy(x, src)
				bc.fn(x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/value")
		})
	}
}
