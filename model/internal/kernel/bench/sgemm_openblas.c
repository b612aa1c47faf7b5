// Times OpenBLAS cblas_sgemm on an n×n×n problem, the mean of reps calls
// (the statistic go test -bench reports), for openblas_ratio.sh, and names
// the kernel OpenBLAS runs: the core it picked for this CPU, or the one
// OPENBLAS_CORETYPE forced. Build: gcc -O2 sgemm_openblas.c -lopenblas.
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t clock) {
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1024;
	int reps = argc > 2 ? atoi(argv[2]) : 20;
	if (n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: sgemm_openblas [n > 0] [reps > 0]\n");
		return 2;
	}
	float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
	if (!a || !b || !c) {
		fprintf(stderr, "sgemm_openblas: out of memory for n=%d\n", n);
		return 1;
	}
	for (long i = 0; i < (long)n * n; i++) {
		a[i] = (float)rand() / RAND_MAX - 0.5f;
		b[i] = (float)rand() / RAND_MAX - 0.5f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n); // warm up
	double t = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
	for (int r = 0; r < reps; r++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
	t = (now(CLOCK_MONOTONIC) - t) / reps;
	cpu = (now(CLOCK_PROCESS_CPUTIME_ID) - cpu) / reps;
	// CPU time counts all threads, including OpenBLAS workers that spin.
	printf("openblas n=%d threads=%d core=%s mean %.3f ms %.1f GFLOP/s %.1f GFLOP/cpu-s (%s)\n", n,
	       openblas_get_num_threads(), openblas_get_corename(), t * 1e3, 2.0 * n * n * n / t / 1e9,
	       2.0 * n * n * n / cpu / 1e9, openblas_get_config());
	return 0;
}
