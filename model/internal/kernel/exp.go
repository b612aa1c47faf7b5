package kernel

import (
	"fmt"
	"math"
)

// Constants of [Exp32], which the AVX2 kernel receives from Go (expTable)
// so that both read the same float32 values.
const (
	expLog2e = 1.44269504088896341
	expLn2hi = 0.693145751953125 // ln 2 split so that n·ln2hi is exact
	expLn2lo = 1.42860682030941723212e-6
	expMin   = -87.33 // below it e^x is under the smallest normal float32
	expMax   = 88.72  // above it e^x overflows
	// Taylor coefficients 1/k! of e^r (1/1! = 1/0! = 1).
	expC7 = 1.0 / 5040
	expC6 = 1.0 / 720
	expC5 = 1.0 / 120
	expC4 = 1.0 / 24
	expC3 = 1.0 / 6
	expC2 = 1.0 / 2
)

// Exp32 is e^x in float32 precision. It reduces x = n·ln2 + r with
// |r| ≤ ln2/2, evaluates a degree-7 Taylor polynomial of e^r (truncation
// error below 1e-8 relative) by Horner's rule, and scales by 2^n through the
// exponent bits. NaN is returned unchanged, x < -87.33 gives 0 and
// x > 88.72 gives +Inf.
//
// Every product is converted to float32 before it is added, which forbids
// the compiler to fuse a multiply-add (Go fuses on arm64, and on amd64 with
// GOAMD64=v3): each step rounds to float32 on every build, as the AVX2
// kernels behind [Exp] and [Softmax] do, so they agree with it bit for bit.
func Exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < expMin:
		return 0 // exactly 0 is close enough to a subnormal result
	case x > expMax:
		return float32(math.Inf(1))
	}
	t := x * expLog2e
	if t < 0 {
		t -= 0.5
	} else {
		t += 0.5
	}
	n := int32(t)
	fn := float32(n)
	r := float32(x-float32(fn*expLn2hi)) - float32(fn*expLn2lo)
	p := float32(expC7)
	p = float32(r*p) + expC6
	p = float32(r*p) + expC5
	p = float32(r*p) + expC4
	p = float32(r*p) + expC3
	p = float32(r*p) + expC2
	p = float32(r*p) + 1
	p = float32(r*p) + 1
	// x ≥ -87.33 keeps n ≥ -126, so 2^n is a normal float32.
	return float32(p * math.Float32frombits(uint32(n+127)<<23))
}

// Exp sets dst[i] = [Exp32](src[i]) for every i, bit for bit. dst may be
// src itself but must not overlap it otherwise. It panics if the lengths
// differ.
func Exp(dst, src []float32) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("kernel: Exp: lengths %d and %d differ", len(dst), len(src)))
	}
	expSlice(dst, src)
}

// Softmax normalises x in place to e^(x[i]-m) / Σ_j e^(x[j]-m), m the
// largest x[i]. Its results are bit for bit those of the scalar loop: the
// maximum, then [Exp32](x[i]-m) summed from left to right in float32, then
// each value times 1/sum. A row holding a NaN, or whose maximum is
// infinite, gives NaNs as that loop does.
func Softmax(x []float32) {
	if len(x) > 0 {
		softmax(x)
	}
}

// softmaxGo is the scalar loop that defines [Softmax].
func softmaxGo(x []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		e := Exp32(v - mx)
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}

// expGo is the portable [Exp].
func expGo(dst, src []float32) {
	for i, v := range src {
		dst[i] = Exp32(v)
	}
}
