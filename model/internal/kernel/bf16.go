package kernel

import "math"

// bf16 widens one bf16 value.
func bf16(v uint16) float32 { return math.Float32frombits(uint32(v) << 16) }

// BF16ToF32 widens len(src) bf16 values into dst, which must be at least as
// long. Widening is exact.
func BF16ToF32(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = bf16(v)
	}
}

// F32ToBF16 rounds len(src) fp32 values to bf16 with round-to-nearest-even
// into dst, which must be at least as long. NaNs stay NaNs (quiet) and
// values too large round to ±Inf, as in PyTorch.
func F32ToBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = toBF16(v)
	}
}

func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40 // NaN: keep sign and payload top, force quiet
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}
