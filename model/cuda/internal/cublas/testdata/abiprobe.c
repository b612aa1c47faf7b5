// An ABI probe with cublasGemmEx's and cublasGemmStridedBatchedEx's C
// signatures that records every argument (19 and 23 of them, most on the
// stack), so a test can check what purego passes: enum and int values,
// the alpha and beta pointers, 64-bit strides, and CUBLAS_GEMM_DEFAULT
// (-1). Built by the test with the system C compiler; nothing of the
// product links it.
#include <stdint.h>

static int64_t seen[32];

int probe_gemm(void* h, int ta, int tb, int m, int n, int k, const float* alpha, const void* a, int atype, int lda,
               const void* b, int btype, int ldb, const float* beta, void* c, int ctype, int ldc, int compute, int algo) {
    int64_t v[] = {(int64_t)(uintptr_t)h, ta, tb, m, n, k, (int64_t)(*alpha * 1000), (int64_t)(uintptr_t)a, atype, lda,
                   (int64_t)(uintptr_t)b, btype, ldb, (int64_t)(*beta * 1000), (int64_t)(uintptr_t)c, ctype, ldc, compute, algo};
    for (int i = 0; i < 19; i++) seen[i] = v[i];
    return 0;
}

int probe_gemm_batched(void* h, int ta, int tb, int m, int n, int k, const float* alpha, const void* a, int atype, int lda,
                       long long sa, const void* b, int btype, int ldb, long long sb, const float* beta, void* c, int ctype,
                       int ldc, long long sc, int batch, int compute, int algo) {
    int64_t v[] = {(int64_t)(uintptr_t)h, ta, tb, m, n, k, (int64_t)(*alpha * 1000), (int64_t)(uintptr_t)a, atype, lda, sa,
                   (int64_t)(uintptr_t)b, btype, ldb, sb, (int64_t)(*beta * 1000), (int64_t)(uintptr_t)c, ctype, ldc, sc,
                   batch, compute, algo};
    for (int i = 0; i < 23; i++) seen[i] = v[i];
    return 0;
}

int64_t probe_seen(int i) { return seen[i]; }
