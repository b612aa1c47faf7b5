// Element-wise kernels, all grid-stride loops over n elements so that any
// grid size covers any n.

// add_bias adds a bias of width dim to every row: x[i] += bias[i % dim].
extern "C" __global__ void add_bias(float* x, const float* bias, long long n, int dim) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        x[i] += bias[i % dim];
    }
}

// residual_add is the residual connection: dst += src.
extern "C" __global__ void residual_add(float* dst, const float* src, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        dst[i] += src[i];
    }
}

// swiglu sets gate = silu(gate) · up, with silu(g) = g / (1 + e^-g) as the
// CPU backend writes it.
extern "C" __global__ void swiglu(float* gate, const float* up, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

// gather_rows copies rows[r] of src into row r of dst (the rows whose
// logits a step returns). One block per output row.
extern "C" __global__ void gather_rows(float* dst, const float* src, const int* rows, int dim) {
    const int r = blockIdx.x;
    const float* s = src + (long long)rows[r] * dim;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        dst[(long long)r * dim + i] = s[i];
    }
}

// to_bf16 rounds float32 activations to bfloat16 for cuBLAS's bf16 GEMM.
extern "C" __global__ void to_bf16(bf16_t* dst, const float* src, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        dst[i] = f32_to_bf16(src[i]);
    }
}
