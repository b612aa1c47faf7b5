// Helpers shared by every kernel source. The Go side prepends this file to
// each .cu before compiling it, since NVRTC has no include path and no
// system headers; for the same reason the kernels use only built-in types
// and the device math library NVRTC provides.

typedef unsigned short bf16_t;

// bfloat16 is the upper half of a float32.
__device__ __forceinline__ float bf16_to_f32(bf16_t h) {
    return __uint_as_float(((unsigned int)h) << 16);
}

// f32_to_bf16 rounds to nearest, ties to even, as the CPU backend does;
// a NaN stays a (quiet) NaN.
__device__ __forceinline__ bf16_t f32_to_bf16(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (bf16_t)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16_t)(u >> 16);
}

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ double warp_sum_double(double v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// A weight element widened to float, for the two storage types.
__device__ __forceinline__ float load_weight(const float* w, long long i) { return w[i]; }
__device__ __forceinline__ float load_weight(const bf16_t* w, long long i) { return bf16_to_f32(w[i]); }
