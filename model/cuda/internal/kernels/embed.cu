// Embedding gather: row r of out is row tokens[r] of the table, widened to
// float32. One block per row; tokens live in device memory so that a
// captured decode graph reads each step's token.

template <typename W>
__device__ void embed(float* out, const W* table, const int* tokens, int dim) {
    const int r = blockIdx.x;
    const long long base = (long long)tokens[r] * dim;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        out[(long long)r * dim + i] = load_weight(table, base + i);
    }
}

extern "C" __global__ void embed_f32(float* out, const float* table, const int* tokens, int dim) {
    embed(out, table, tokens, dim);
}

extern "C" __global__ void embed_bf16(float* out, const bf16_t* table, const int* tokens, int dim) {
    embed(out, table, tokens, dim);
}
