// Token selection on the device, so a decode step returns one int per
// sequence instead of a vocabulary of logits. One block (SAMPLE_THREADS
// threads) per row of logits.

#define SAMPLE_THREADS 1024

// warp_argmax reduces a warp's (value, index) pairs to the largest value,
// lowest index on ties, in every lane.
__device__ __forceinline__ void warp_argmax(float& v, int& idx) {
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, o);
        const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
        if (ov > v || (ov == v && oi < idx)) {
            v = ov;
            idx = oi;
        }
    }
}

// block_argmax reduces the block's pairs the same way, as the CPU's argmax
// does (NaN never wins), and writes the index to out.
__device__ void block_argmax(float v, int idx, float* s_val, int* s_idx, int* out) {
    warp_argmax(v, idx);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        s_val[warp] = v;
        s_idx[warp] = idx;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        v = lane < warps ? s_val[lane] : neg_inf();
        idx = lane < warps ? s_idx[lane] : 0x7fffffff;
        warp_argmax(v, idx);
        if (lane == 0) {
            *out = idx == 0x7fffffff ? 0 : idx;
        }
    }
}

// argmax picks the most likely token of each row (greedy decoding).
extern "C" __global__ void argmax(int* out, const float* logits, int vocab) {
    __shared__ float s_val[32];
    __shared__ int s_idx[32];
    const float* l = logits + (long long)blockIdx.x * vocab;
    float best = neg_inf();
    int bi = 0x7fffffff;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
        const float v = l[i];
        if (v > best) { // strided scan visits indices in increasing order
            best = v;
            bi = i;
        }
    }
    block_argmax(best, bi, s_val, s_idx, out + blockIdx.x);
}

// splitmix64 is a counter-based hash: the same (seed, counter, token)
// always draws the same noise, so sampling is reproducible per seed.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// sample_gumbel draws a token from softmax(logits / temperature) by the
// Gumbel-max trick: argmax of logit/temperature + G with G = -log(-log U)
// and U uniform in (0, 1). counters[row] (device memory: the sequence's
// length, so each step draws fresh noise) and seed pick the noise.
extern "C" __global__ void sample_gumbel(int* out, const float* logits, int vocab, float inv_temperature,
                                         unsigned long long seed, const unsigned long long* counters) {
    __shared__ float s_val[32];
    __shared__ int s_idx[32];
    const float* l = logits + (long long)blockIdx.x * vocab;
    const unsigned long long base = splitmix64(seed ^ splitmix64(counters[blockIdx.x]));
    float best = neg_inf();
    int bi = 0x7fffffff;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
        const unsigned long long h = splitmix64(base + (unsigned long long)i);
        const float u = ((float)(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
        const float v = l[i] * inv_temperature - logf(-logf(u));
        if (v > best) {
            best = v;
            bi = i;
        }
    }
    block_argmax(best, bi, s_val, s_idx, out + blockIdx.x);
}
