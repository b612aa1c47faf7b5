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

// AttentionShare is one block's view of one (head, row): the query and the
// layer's keys and values of its KV head.
struct AttentionShare {
    const float* q;
    const float* keys;
    const float* vals;
    long long kv_dim;
    int head_dim;
    float scale;
};

// attend runs the block's warps over keys j0..j1-1 (each warp a strided
// subset, with an online softmax) and leaves each warp's running maximum,
// sum and weighted value sum in shared memory, then waits for the block.
__device__ void attend(const AttentionShare& a, int j0, int j1, float* s_max, float* s_sum,
                       float (*s_acc)[ATT_MAX_HEAD_DIM]) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float qv[ATT_PER_LANE], acc[ATT_PER_LANE];
#pragma unroll
    for (int t = 0; t < ATT_PER_LANE; t++) {
        const int d = lane + 32 * t;
        qv[t] = d < a.head_dim ? a.q[d] : 0.0f;
        acc[t] = 0.0f;
    }
    float m = neg_inf(), l = 0.0f;
    for (int j = j0 + warp; j < j1; j += ATT_WARPS) {
        const float* kj = a.keys + (long long)j * a.kv_dim;
        float s = 0.0f;
#pragma unroll
        for (int t = 0; t < ATT_PER_LANE; t++) {
            const int d = lane + 32 * t;
            if (d < a.head_dim) {
                s += qv[t] * kj[d];
            }
        }
        s = warp_sum(s) * a.scale;
        const float m_new = fmaxf(m, s);
        const float corr = expf(m - m_new); // 0 on a warp's first key (m = -inf)
        const float p = expf(s - m_new);
        l = l * corr + p;
        const float* vj = a.vals + (long long)j * a.kv_dim;
#pragma unroll
        for (int t = 0; t < ATT_PER_LANE; t++) {
            const int d = lane + 32 * t;
            if (d < a.head_dim) {
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
        if (d < a.head_dim) {
            s_acc[warp][d] = acc[t];
        }
    }
    __syncthreads();
}

// share_of builds the AttentionShare of (head, row) for layer.
__device__ AttentionShare share_of(const float* q, const unsigned long long* kcache, const unsigned long long* vcache,
                                   const long long* layer_stride, int layer, int row, int head, int heads,
                                   int kv_heads, int head_dim, float scale) {
    const int kvh = head / (heads / kv_heads);
    const long long off = (long long)layer * layer_stride[row] + (long long)kvh * head_dim;
    AttentionShare a;
    a.q = q + ((long long)row * heads + head) * head_dim;
    a.keys = (const float*)kcache[row] + off;
    a.vals = (const float*)vcache[row] + off;
    a.kv_dim = (long long)kv_heads * head_dim;
    a.head_dim = head_dim;
    a.scale = scale;
    return a;
}

extern "C" __global__ void attention(float* out, const float* q, const int* positions,
                                     const unsigned long long* kcache, const unsigned long long* vcache,
                                     const long long* layer_stride, int layer, int heads, int kv_heads,
                                     int head_dim, float scale) {
    __shared__ float s_max[ATT_WARPS], s_sum[ATT_WARPS];
    __shared__ float s_acc[ATT_WARPS][ATT_MAX_HEAD_DIM];
    const int head = blockIdx.x, row = blockIdx.y;
    const AttentionShare a = share_of(q, kcache, vcache, layer_stride, layer, row, head, heads, kv_heads, head_dim, scale);
    attend(a, 0, positions[row] + 1, s_max, s_sum, s_acc);
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

// Split attention for decode passes. One row per sequence and a handful of
// sequences give attention only heads × rows blocks, too few to fill a GPU
// once the context is long; attention_partial spreads each (head, row)
// over gridDim.z blocks, each taking an equal share of the keys (the share
// is computed on the device from the row's length, so a captured graph
// still serves every step), and attention_combine merges the shares.
//
// partial holds, per (row, head, split), head_dim + 2 floats: the share's
// running maximum, its sum of exponentials, and its unnormalised weighted
// sum of values. A share with no keys writes -inf, 0 and zeros.
extern "C" __global__ void attention_partial(float* partial, const float* q, const int* positions,
                                             const unsigned long long* kcache, const unsigned long long* vcache,
                                             const long long* layer_stride, int layer, int heads, int kv_heads,
                                             int head_dim, float scale) {
    __shared__ float s_max[ATT_WARPS], s_sum[ATT_WARPS];
    __shared__ float s_acc[ATT_WARPS][ATT_MAX_HEAD_DIM];
    const int head = blockIdx.x, row = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
    const int n = positions[row] + 1;
    const int share = (n + splits - 1) / splits;
    const int j0 = split * share, j1 = j0 + share < n ? j0 + share : n;
    const AttentionShare a = share_of(q, kcache, vcache, layer_stride, layer, row, head, heads, kv_heads, head_dim, scale);
    attend(a, j0, j1, s_max, s_sum, s_acc);
    float mx = neg_inf();
    for (int w = 0; w < ATT_WARPS; w++) {
        mx = fmaxf(mx, s_max[w]);
    }
    float* out = partial + (((long long)row * heads + head) * splits + split) * (head_dim + 2);
    const bool empty = j0 >= j1; // mx is -inf, and exp(-inf - -inf) would be NaN
    if (threadIdx.x == 0) {
        float total = 0.0f;
        if (!empty) {
            for (int w = 0; w < ATT_WARPS; w++) {
                total += s_sum[w] * expf(s_max[w] - mx);
            }
        }
        out[0] = mx;
        out[1] = total;
    }
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
        float v = 0.0f;
        if (!empty) {
            for (int w = 0; w < ATT_WARPS; w++) {
                v += s_acc[w][d] * expf(s_max[w] - mx);
            }
        }
        out[2 + d] = v;
    }
}

// attention_combine merges the shares of attention_partial into each
// (row, head)'s output. Share 0 always holds key 0, so the maximum is
// finite. Grid (heads, rows).
extern "C" __global__ void attention_combine(float* out, const float* partial, int heads, int head_dim, int splits) {
    const int head = blockIdx.x, row = blockIdx.y;
    const float* p = partial + ((long long)row * heads + head) * splits * (head_dim + 2);
    float mx = neg_inf();
    for (int s = 0; s < splits; s++) {
        mx = fmaxf(mx, p[s * (head_dim + 2)]);
    }
    float total = 0.0f;
    for (int s = 0; s < splits; s++) {
        total += p[s * (head_dim + 2) + 1] * expf(p[s * (head_dim + 2)] - mx);
    }
    float* o = out + ((long long)row * heads + head) * head_dim;
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
        float v = 0.0f;
        for (int s = 0; s < splits; s++) {
            v += p[s * (head_dim + 2) + 2 + d] * expf(p[s * (head_dim + 2)] - mx);
        }
        o[d] = v / total;
    }
}
