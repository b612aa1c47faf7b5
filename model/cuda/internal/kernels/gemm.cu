// Matrix products. The Linear kernels compute y = x·Wᵀ for n rows of x
// (n × cols, float32) against a weight W (rows × cols, float32 or
// bfloat16, the Hugging Face [out, in] layout), writing y (n × rows); both
// operands are contiguous along cols. All accumulate in float32.

// linear_small serves decode steps (n ≤ LINEAR_SMALL_MAX_N): memory-bound,
// so each warp streams one weight row once, coalesced, and dots it with
// every input row. Where the row width is a multiple of 8 and the operands
// are 16-byte aligned (always, for the backend's own buffers), each lane
// reads 8 consecutive weights per step with 16-byte loads, which keeps more
// bytes in flight per warp than 2- or 4-byte loads do. Grid: ceil(rows /
// warps per block) blocks.
#define LINEAR_SMALL_MAX_N 8

struct alignas(16) vec4u {
    unsigned int x, y, z, w;
};
struct alignas(16) vec4f {
    float x, y, z, w;
};

// load8 widens 8 consecutive weights starting at w[i] (16-byte aligned).
__device__ __forceinline__ void load8(const bf16_t* w, long long i, float* out) {
    const vec4u v = *reinterpret_cast<const vec4u*>(w + i);
    const unsigned int u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        // Little-endian: the lower address is the low half.
        out[2 * k] = __uint_as_float(u[k] << 16);
        out[2 * k + 1] = __uint_as_float(u[k] & 0xffff0000u);
    }
}

__device__ __forceinline__ void load8(const float* w, long long i, float* out) {
    const vec4f a = *reinterpret_cast<const vec4f*>(w + i);
    const vec4f b = *reinterpret_cast<const vec4f*>(w + i + 4);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
    out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
}

template <typename W>
__device__ void linear_small(float* y, const float* x, const W* w, int n, int rows, int cols) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int r = blockIdx.x * (blockDim.x >> 5) + warp;
    if (r >= rows) {
        return; // whole warps leave together, so the shuffles below stay full
    }
    const W* wr = w + (long long)r * cols;
    float acc[LINEAR_SMALL_MAX_N];
#pragma unroll
    for (int b = 0; b < LINEAR_SMALL_MAX_N; b++) {
        acc[b] = 0.0f;
    }
    const bool vector = (cols & 7) == 0 && (((unsigned long long)w | (unsigned long long)x) & 15) == 0;
    if (vector) {
        for (int c = lane * 8; c < cols; c += 32 * 8) {
            float wv[8];
            load8(wr, c, wv);
#pragma unroll
            for (int b = 0; b < LINEAR_SMALL_MAX_N; b++) {
                if (b < n) {
                    float xv[8];
                    load8(x + (long long)b * cols, c, xv);
                    float s = 0.0f;
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        s += wv[k] * xv[k];
                    }
                    acc[b] += s;
                }
            }
        }
    } else {
        for (int c = lane; c < cols; c += 32) {
            const float wv = load_weight(wr, c);
#pragma unroll
            for (int b = 0; b < LINEAR_SMALL_MAX_N; b++) {
                if (b < n) {
                    acc[b] += wv * x[(long long)b * cols + c];
                }
            }
        }
    }
#pragma unroll
    for (int b = 0; b < LINEAR_SMALL_MAX_N; b++) {
        if (b < n) {
            const float s = warp_sum(acc[b]);
            if (lane == 0) {
                y[(long long)b * rows + r] = s;
            }
        }
    }
}

extern "C" __global__ void linear_small_f32(float* y, const float* x, const float* w, int n, int rows, int cols) {
    linear_small(y, x, w, n, rows, cols);
}

extern "C" __global__ void linear_small_bf16(float* y, const float* x, const bf16_t* w, int n, int rows, int cols) {
    linear_small(y, x, w, n, rows, cols);
}

// linear_tiled serves prompt chunks: a 64×64 output tile per block of 256
// threads, each thread a 4×4 sub-tile, staging 16-wide slices of x and W
// in shared memory. Grid: (ceil(rows/64), ceil(n/64)).
#define TILE 64
#define TILE_K 16

template <typename W>
__device__ void linear_tiled(float* y, const float* x, const W* w, int n, int rows, int cols) {
    __shared__ float xs[TILE_K][TILE + 1];
    __shared__ float ws[TILE_K][TILE + 1];
    const int tid = threadIdx.x;
    const int tx = tid & 15, ty = tid >> 4;
    const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < cols; k0 += TILE_K) {
        for (int i = tid; i < TILE * TILE_K; i += 256) {
            const int mm = i / TILE_K, kk = i % TILE_K;
            const int gk = k0 + kk;
            const int gm = m0 + mm, gn = n0 + mm;
            xs[kk][mm] = (gm < n && gk < cols) ? x[(long long)gm * cols + gk] : 0.0f;
            ws[kk][mm] = (gn < rows && gk < cols) ? load_weight(w, (long long)gn * cols + gk) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE_K; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = xs[kk][ty * 4 + i];
                b[i] = ws[kk][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++) {
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int gm = m0 + ty * 4 + i;
        if (gm >= n) {
            continue;
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int gn = n0 + tx * 4 + j;
            if (gn < rows) {
                y[(long long)gm * rows + gn] = acc[i][j];
            }
        }
    }
}

extern "C" __global__ void linear_tiled_f32(float* y, const float* x, const float* w, int n, int rows, int cols) {
    linear_tiled(y, x, w, n, rows, cols);
}

extern "C" __global__ void linear_tiled_bf16(float* y, const float* x, const bf16_t* w, int n, int rows, int cols) {
    linear_tiled(y, x, w, n, rows, cols);
}

// sgemm is BLAS's C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices with leading dimensions, for the Backend interface's Sgemm. As
// in BLAS, C is not read when beta is 0. 16×16 tiles; grid (ceil(n/16),
// ceil(m/16)), block (16, 16).
extern "C" __global__ void sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                                 const float* a, int lda, const float* b, int ldb, float beta,
                                 float* c, int ldc) {
    __shared__ float as[16][17];
    __shared__ float bs[16][17];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += 16) {
        const int ka = k0 + tx, kb = k0 + ty;
        as[ty][tx] = (row < m && ka < k) ? (trans_a ? a[(long long)ka * lda + row] : a[(long long)row * lda + ka]) : 0.0f;
        bs[ty][tx] = (kb < k && col < n) ? (trans_b ? b[(long long)col * ldb + kb] : b[(long long)kb * ldb + col]) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++) {
            acc += as[ty][kk] * bs[kk][tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        float* cp = c + (long long)row * ldc + col;
        *cp = beta == 0.0f ? alpha * acc : alpha * acc + beta * *cp;
    }
}
