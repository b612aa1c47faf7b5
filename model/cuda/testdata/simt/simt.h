// simt.h lets the backend's CUDA kernel sources compile as ordinary C++ and
// run on the CPU, so their results can be checked on machines without a
// GPU. Each CUDA thread of a block is a fiber (ucontext) on one OS thread;
// a scheduler runs the fibers of one block at a time. It supplies what the
// kernels use: the index variables, __shared__ (a function-local static,
// shared by the fibers of the one block that runs), __syncthreads (a block
// barrier), __shfl_xor_sync (an exchange behind a warp barrier) and the
// device math and bit-cast intrinsics. A barrier is real: a fiber waiting
// at one resumes only when every live fiber of its block (or warp) has
// reached it, so warps that take different paths between barriers are
// emulated faithfully. Test tooling only: nothing of the product links it.
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

// simt_block_barrier and simt_warp_barrier suspend the calling fiber until
// its block (warp) has reached the barrier; simt_slots holds one exchange
// slot per thread of the running block.
void simt_block_barrier();
void simt_warp_barrier();
extern uint64_t* simt_slots;

inline unsigned simt_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

inline void __syncthreads() { simt_block_barrier(); }

template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
    static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
    const unsigned tid = simt_tid();
    memcpy(&simt_slots[tid], &v, sizeof(T));
    simt_warp_barrier();
    T r;
    memcpy(&r, &simt_slots[(tid & ~31u) + ((tid & 31u) ^ (unsigned)lane_mask)], sizeof(T));
    simt_warp_barrier();
    return r;
}

inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
// expf, logf, pow, sqrt, fmaxf and sincos (a GNU extension, as in CUDA)
// come from the C library's math.h.
