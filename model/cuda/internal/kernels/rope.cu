// Rotary position embedding in Hugging Face's rotate_half layout (Qwen2):
// within each head of width dim, element i pairs with element i + dim/2.
// The angles are computed as the CPU backend and Hugging Face compute them:
// inverse frequency 1/float(theta^(2i/dim)) in float32, angle =
// float(position) · inverse frequency in float32, then sin and cos of that
// float32 angle in double. x is rows × heads × dim; positions (device
// memory) holds each row's position. Grid (rows, heads), one thread per
// pair.

extern "C" __global__ void rope(float* x, const int* positions, int heads, int dim, double theta) {
    const int row = blockIdx.x, head = blockIdx.y;
    const int half = dim >> 1;
    float* v = x + ((long long)row * heads + head) * dim;
    const float pos = (float)positions[row];
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        const float e = (float)(2 * i) / (float)dim;
        const float inv = 1.0f / (float)pow(theta, (double)e);
        const float angle = __fmul_rn(pos, inv);
        double s, c;
        sincos((double)angle, &s, &c);
        const float cs = (float)c, sn = (float)s;
        const float a = v[i], b = v[i + half];
        v[i] = __fsub_rn(__fmul_rn(a, cs), __fmul_rn(b, sn));
        v[i + half] = __fadd_rn(__fmul_rn(b, cs), __fmul_rn(a, sn));
    }
}
