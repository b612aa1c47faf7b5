// An ABI probe for the binding's calling convention: a function with
// cuLaunchKernel's C signature that records every argument it receives,
// including the values its kernelParams array points at, so a test can
// check what purego actually passes (register and stack arguments, 32-bit
// values in 64-bit slots, the pointer array). Built by the test with the
// system C compiler; nothing of the product links it.
#include <stdint.h>
#include <string.h>

static uint64_t seen[16];
static uint64_t params[16];
static int nparams;

void probe_expect_params(int n) { nparams = n; }

int probe_launch(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned shared, void* stream, void** kernel_params, void** extra) {
    seen[0] = (uint64_t)(uintptr_t)f;
    seen[1] = gx; seen[2] = gy; seen[3] = gz;
    seen[4] = bx; seen[5] = by; seen[6] = bz;
    seen[7] = shared;
    seen[8] = (uint64_t)(uintptr_t)stream;
    seen[9] = (uint64_t)(uintptr_t)extra;
    for (int i = 0; i < nparams && i < 16; i++) {
        memcpy(&params[i], kernel_params[i], 8);
    }
    return 0;
}

int probe_fail(void) { return 700; } // CUDA_ERROR_ILLEGAL_ADDRESS

int probe_error_name(int code, const char** name) {
    *name = code == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

int probe_error_string(int code, const char** text) {
    *text = "an illegal memory access was encountered";
    return 0;
}

uint64_t probe_seen(int i) { return seen[i]; }
uint64_t probe_param(int i) { return params[i]; }
