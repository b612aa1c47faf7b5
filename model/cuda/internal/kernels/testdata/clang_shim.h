// Declarations that let clang's CUDA front end compile the kernel sources
// without the CUDA toolkit (-nocudainc -nocudalib), so a machine without
// nvcc or NVRTC still catches syntax and type errors in them. NVRTC
// provides all of these built in; the shim only declares them.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
extern "C" {
__device__ void __syncthreads(void) __attribute__((convergent));
__device__ float expf(float);
__device__ float logf(float);
__device__ double pow(double, double);
__device__ void sincos(double, double*, double*);
__device__ double sqrt(double);
__device__ float fmaxf(float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fadd_rn(float, float);
__device__ float __fsub_rn(float, float);
__device__ float __uint_as_float(unsigned int);
__device__ unsigned int __float_as_uint(float);
__device__ float __int_as_float(int);
}
__device__ float __shfl_xor_sync(unsigned int, float, int) __attribute__((convergent));
__device__ double __shfl_xor_sync(unsigned int, double, int) __attribute__((convergent));
__device__ int __shfl_xor_sync(unsigned int, int, int) __attribute__((convergent));
