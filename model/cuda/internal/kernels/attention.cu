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
    const int kvh = head / (heads / kv_heads);
    const long long kv_dim = (long long)kv_heads * head_dim;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int n = positions[row] + 1;
    const int share = (n + splits - 1) / splits;
    const int j0 = split * share, j1 = j0 + share < n ? j0 + share : n;
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
    for (int j = j0 + warp; j < j1; j += ATT_WARPS) {
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
        const float corr = expf(m - m_new);
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
