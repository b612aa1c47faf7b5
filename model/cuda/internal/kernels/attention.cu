// Causal grouped-query attention over the KV cache, for every row of a step
// (a prompt chunk's tokens or one decoding token per sequence).
//
// Each row carries, in device memory, its position and the device
// addresses of its sequence's key and value caches (layer 0; layer l starts
// l·layer_stride[row] floats further, and position p of a layer at
// p·kv_dim). A row at position p sees keys 0..p, which gives the causal
// mask for prompt chunks too, since the chunk's own keys are stored before
// attention runs. Because lengths are read on the device, one captured
// decode graph serves every step.
//
// Grid (heads, rows); ATT_WARPS warps per block. Each warp walks a strided
// subset of the keys with an online softmax (running max, running sum and a
// running weighted sum of values, head_dim/32 elements per lane), and the
// warps' partial results are merged through shared memory at the end. The
// cost is independent of the context length in memory and shared memory.

#define ATT_WARPS 4
#define ATT_MAX_HEAD_DIM 256
#define ATT_PER_LANE (ATT_MAX_HEAD_DIM / 32)

extern "C" __global__ void attention(float* out, const float* q, const int* positions,
                                     const unsigned long long* kcache, const unsigned long long* vcache,
                                     const long long* layer_stride, int layer, int heads, int kv_heads,
                                     int head_dim, float scale) {
    __shared__ float s_max[ATT_WARPS], s_sum[ATT_WARPS];
    __shared__ float s_acc[ATT_WARPS][ATT_MAX_HEAD_DIM];

    const int head = blockIdx.x, row = blockIdx.y;
    const int kvh = head / (heads / kv_heads);
    const long long kv_dim = (long long)kv_heads * head_dim;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int n = positions[row] + 1;
    const long long off = (long long)layer * layer_stride[row] + (long long)kvh * head_dim;
    const float* keys = (const float*)kcache[row] + off;
    const float* vals = (const float*)vcache[row] + off;
    const float* qh = q + ((long long)row * heads + head) * head_dim;

    float qv[ATT_PER_LANE], acc[ATT_PER_LANE];
#pragma unroll
    for (int t = 0; t < ATT_PER_LANE; t++) {
        const int d = lane + 32 * t;
        qv[t] = d < head_dim ? qh[d] : 0.0f;
        acc[t] = 0.0f;
    }
    float m = neg_inf(), l = 0.0f;
    for (int j = warp; j < n; j += ATT_WARPS) {
        const float* kj = keys + (long long)j * kv_dim;
        float s = 0.0f;
#pragma unroll
        for (int t = 0; t < ATT_PER_LANE; t++) {
            const int d = lane + 32 * t;
            if (d < head_dim) {
                s += qv[t] * kj[d];
            }
        }
        s = warp_sum(s) * scale;
        const float m_new = fmaxf(m, s);
        const float corr = expf(m - m_new); // 0 on the first key (m = -inf)
        const float p = expf(s - m_new);
        l = l * corr + p;
        const float* vj = vals + (long long)j * kv_dim;
#pragma unroll
        for (int t = 0; t < ATT_PER_LANE; t++) {
            const int d = lane + 32 * t;
            if (d < head_dim) {
                acc[t] = acc[t] * corr + p * vj[d];
            }
        }
        m = m_new;
    }

    if (lane == 0) {
        s_max[warp] = m;
        s_sum[warp] = l;
    }
#pragma unroll
    for (int t = 0; t < ATT_PER_LANE; t++) {
        const int d = lane + 32 * t;
        if (d < head_dim) {
            s_acc[warp][d] = acc[t];
        }
    }
    __syncthreads();
    // Warp 0 always saw key 0, so the overall maximum is finite; a warp
    // that saw no key has max -inf and contributes exp(-inf) = 0.
    float mx = neg_inf();
    for (int w = 0; w < ATT_WARPS; w++) {
        mx = fmaxf(mx, s_max[w]);
    }
    float total = 0.0f;
    for (int w = 0; w < ATT_WARPS; w++) {
        total += s_sum[w] * expf(s_max[w] - mx);
    }
    float* o = out + ((long long)row * heads + head) * head_dim;
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
        float v = 0.0f;
        for (int w = 0; w < ATT_WARPS; w++) {
            v += s_acc[w][d] * expf(s_max[w] - mx);
        }
        o[d] = v / total;
    }
}

// kv_store writes each row's new key and value (rows × kv_dim, after RoPE)
// into its sequence's cache at its position, for one layer. One block per
// row.
extern "C" __global__ void kv_store(const float* k, const float* v, const int* positions,
                                    const unsigned long long* kcache, const unsigned long long* vcache,
                                    const long long* layer_stride, int layer, int kv_dim) {
    const int row = blockIdx.x;
    const long long off = (long long)layer * layer_stride[row] + (long long)positions[row] * kv_dim;
    float* kd = (float*)kcache[row] + off;
    float* vd = (float*)vcache[row] + off;
    for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
        kd[i] = k[(long long)row * kv_dim + i];
        vd[i] = v[(long long)row * kv_dim + i];
    }
}
