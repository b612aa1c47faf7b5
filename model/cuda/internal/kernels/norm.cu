// RMSNorm over rows of width dim: out = x / sqrt(mean(x²) + eps) · w, with
// the sum of squares accumulated in double as the CPU backend does. out may
// alias x. One block per row (per head for Qwen3's q/k norm); blockDim is a
// multiple of 32 and at most 1024.

extern "C" __global__ void rms_norm(float* out, const float* x, const float* w, int dim, float eps) {
    __shared__ double partial[32];
    const long long row = blockIdx.x;
    const float* xr = x + row * dim;
    float* outr = out + row * dim;
    double ss = 0.0;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        const double v = xr[i];
        ss += v * v;
    }
    ss = warp_sum_double(ss);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        partial[warp] = ss;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        ss = lane < warps ? partial[lane] : 0.0;
        ss = warp_sum_double(ss);
        if (lane == 0) {
            partial[0] = ss;
        }
    }
    __syncthreads();
    const float inv = (float)(1.0 / sqrt(partial[0] / (double)dim + (double)eps));
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        outr[i] = w[i] * (xr[i] * inv);
    }
}
