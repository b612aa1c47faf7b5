// Measures the throughput of the 512-bit instructions the kernels could use,
// per CPU-second of this thread, so that the choice between them rests on this
// CPU's numbers: twelve independent accumulators per loop (enough to hide any
// latency), 50 M iterations each, best of three rounds.
//
// Build and run (x86-64 with AVX-512; VDPBF16PS needs AVX512_BF16 and
// VPDPBUSD AVX512_VNNI):
//
//	gcc -O2 -o /tmp/isa_throughput model/internal/kernel/bench/isa_throughput.c && /tmp/isa_throughput
#include <stdio.h>
#include <time.h>

// Lets the inline assembly name ZMM16–31 without -mavx512f on the command
// line; nothing else in this file needs it.
#pragma GCC target("avx512f")

#define N 50000000L

#define ZERO12 \
	"vpxord %%zmm0, %%zmm0, %%zmm0\n vpxord %%zmm1, %%zmm1, %%zmm1\n vpxord %%zmm2, %%zmm2, %%zmm2\n" \
	"vpxord %%zmm3, %%zmm3, %%zmm3\n vpxord %%zmm4, %%zmm4, %%zmm4\n vpxord %%zmm5, %%zmm5, %%zmm5\n" \
	"vpxord %%zmm6, %%zmm6, %%zmm6\n vpxord %%zmm7, %%zmm7, %%zmm7\n vpxord %%zmm8, %%zmm8, %%zmm8\n" \
	"vpxord %%zmm9, %%zmm9, %%zmm9\n vpxord %%zmm10, %%zmm10, %%zmm10\n vpxord %%zmm11, %%zmm11, %%zmm11\n"

// LOOP12 runs op on the twelve accumulators zmm0–zmm11 (sources zmm30,
// zmm31, which stay zero) n times.
#define LOOP12(name, op)                                                                                  \
	static void name(long n) {                                                                        \
		__asm__ volatile(ZERO12 "vpxord %%zmm30, %%zmm30, %%zmm30\n vpxord %%zmm31, %%zmm31, %%zmm31\n" \
				 "1:\n" op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) op(8) op(9) op(10)       \
					 op(11) "dec %0\n jnz 1b\n vzeroupper\n"                                  \
				 : "+r"(n)                                                                        \
				 :                                                                                \
				 : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",      \
				   "xmm8", "xmm9", "xmm10", "xmm11", "xmm30", "xmm31");                            \
	}

#define FMA(i) "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #i "\n"
#define DPBF16(i) "vdpbf16ps %%zmm30, %%zmm31, %%zmm" #i "\n"
#define DPBUSD(i) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #i "\n"
#define MADDWD(i) "vpmaddwd %%zmm30, %%zmm31, %%zmm" #i "\n"
#define PERMPS(i) "vpermps %%zmm30, %%zmm31, %%zmm" #i "\n"
#define SLLD(i) "vpslld $16, %%zmm30, %%zmm" #i "\n"

LOOP12(op_fma, FMA)
LOOP12(op_dpbf16, DPBF16)
LOOP12(op_dpbusd, DPBUSD)
LOOP12(op_maddwd, MADDWD)
LOOP12(op_permps, PERMPS)
LOOP12(op_slld, SLLD)

static double cpu_seconds(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
	struct {
		const char *name, *what;
		void (*run)(long);
		double best;
	} ops[] = {
	    {"vfmadd231ps", "16 fp32 multiply-adds", op_fma, 0},
	    {"vdpbf16ps", "32 bf16 products into 16 fp32 (AVX512_BF16)", op_dpbf16, 0},
	    {"vpdpbusd", "64 u8*s8 products into 16 int32 (AVX512_VNNI)", op_dpbusd, 0},
	    {"vpmaddwd", "32 int16 products, pairs summed into 16 int32", op_maddwd, 0},
	    {"vpermps", "a 16-lane permutation", op_permps, 0},
	    {"vpslld", "a 16-lane shift", op_slld, 0},
	};
	int nops = sizeof ops / sizeof ops[0];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < nops; i++) {
			double t = cpu_seconds();
			ops[i].run(N);
			t = (cpu_seconds() - t) * 1e9 / (12.0 * N);
			if (ops[i].best == 0 || t < ops[i].best)
				ops[i].best = t;
		}
	}
	printf("%-12s %9s %9s  %s\n", "instruction", "ns/instr", "vs FMA", "what one instruction does");
	for (int i = 0; i < nops; i++)
		printf("%-12s %9.3f %8.2fx  %s\n", ops[i].name, ops[i].best, ops[i].best / ops[0].best, ops[i].what);
	return 0;
}
